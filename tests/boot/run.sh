#!/bin/sh
# The cloud path, booted for real (docs/IMAGES.md, "How it is tested").
#
# Builds ebb's package (make deb) and the worker images from it
# (images/build.sh), then lets `ebb serve` launch them as a cloud would,
# through [provider] kind = exec and the provider programs of providers/,
# with tests/boot/bin/ first on PATH: stand-ins for the clouds' CLIs that
# boot what they are asked to launch (tests/boot/machines.sh) with
# exactly what the program handed them: the user data in cloud-init's
# NoCloud seed, the pod's environment in the container. serve speaks
# TLS with a private CA on a non-loopback address of the host, which each
# machine reaches from a network namespace of its own; the reclaim notice
# comes from an IMDSv2 stand-in on 169.254.169.254 (tests/boot/imds.c).
#
#   aws    the disk image's root partition, booted by run-instances from
#          providers/aws-ec2's user data: 3 jobs run and the machine
#          powers itself off when idle, with no terminate call (the bar);
#          a reclaim notice stops a job at its checkpoint and it resumes
#          on the next machine
#   gcp    the root file system, booted by instances create from
#          providers/gcp's user-data: a job runs, the VM powers itself
#          off and is listed stopped until ebb deletes it
#   k8s    the container image, run by kubectl create from
#          providers/kubernetes's pod and secret: jobs run, the worker
#          leaves when idle, the pod ends and ebb deletes it
#   vm     the disk image booted whole by run-instances in a QEMU virtual
#          machine (UEFI, GRUB, the kernel, cloud-init from a cidata
#          disk, DHCP): a job runs, the machine powers itself off
#   nvidia the image's package list with --nvidia resolves
#
# One pass or fail line per check; ends with "N passed, M failed".
# BOOT_PHASES (default "aws gcp k8s vm nvidia") picks some. Needs root;
# skipped, saying why, where this machine cannot run a container.
# Everything it starts, mounts or adds is undone on every exit.
# shellcheck disable=SC2317 # the phases and helpers are called through variables
set -u
cd "$(dirname "$0")/../.." || exit 1
src=$PWD
phases=${BOOT_PHASES:-aws gcp k8s vm nvidia}
# shellcheck source=../checks.sh
. "$src/tests/checks.sh"

[ "$(id -u)" -eq 0 ] || skip "booting machines needs root (systemd-nspawn, network namespaces)"
for tool in systemd-nspawn mmdebstrap umoci ip jq openssl; do
	command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/deps.sh installs it)"
done

BOOT_DIR=$(mktemp -d /tmp/ebb-boot.XXXXXX)
BOOT_PREFIX=eb$(($$ % 1000))
export BOOT_DIR BOOT_PREFIX
# shellcheck source=machines.sh
. "$src/tests/boot/machines.sh"
serve_pid=
imds_pid=
host_addrs=
cleanup() {
	[ -z "$serve_pid" ] || { kill -TERM "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null; }
	machines_cleanup
	[ -z "$imds_pid" ] || kill -TERM "$imds_pid" 2>/dev/null
	for a in $host_addrs; do ip addr del "$a" dev lo 2>/dev/null; done
	rm -rf "$BOOT_DIR"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- the package and the images ----

if make -s -j2 build/ebb build/tests/imds >"$BOOT_DIR/make.log" 2>&1 && make -s -j2 deb >>"$BOOT_DIR/make.log" 2>&1
then
	deb=$(tail -n 1 "$BOOT_DIR/make.log")
	pass "make deb built $deb"
else
	cat "$BOOT_DIR/make.log"
	fail "make deb"
	finish
fi
# The images are kept in build/boot-image between runs while the package's
# files and the image scripts are the same: the package's own timestamps
# differ at each make deb, its files do not.
images=$src/build/boot-image
key=$( (dpkg-deb --fsys-tarfile "$deb" | tar -xO; cat images/* packaging/worker-entrypoint) | sha256sum | cut -c1-64)
if [ "$(cat "$images/key" 2>/dev/null)" = "$key" ] && [ -d "$images/rootfs/etc" ] && [ -f "$images/disk.raw" ] &&
	[ -f "$images/oci/index.json" ]; then
	pass "the images of this package are built already ($images)"
else
	rm -rf "$images"
	started=$(date +%s)
	if images/build.sh -o "$images" "$deb" >"$BOOT_DIR/images.log" 2>&1; then
		echo "$key" >"$images/key"
		pass "images/build.sh built the root file system, disk.raw and the OCI image in $(($(date +%s) - started)) s"
	else
		show "images/build.sh" "$BOOT_DIR/images.log"
		fail "images/build.sh"
		finish
	fi
fi
version=$(dpkg-deb -f "$deb" Version)


# This machine can run a container, or there is nothing to boot on.
if ! out=$(systemd-nspawn --quiet --register=no --keep-unit -D "$images/rootfs" --volatile=overlay \
	/usr/bin/ebb version 2>&1); then
	echo "$out"
	skip "systemd-nspawn cannot run a container here"
fi

# ---- the host: serve's address, the metadata service, TLS ----

# serve's address: one of TEST-NET-1 (RFC 5737, routed nowhere) on lo,
# which the machines reach through their default route, as instances
# reach a control plane in their VPC.
addr=192.0.2.$((1 + $$ % 250))
port=$((20000 + $$ % 20000))
for a in "$addr/32" 169.254.169.254/32; do
	ip addr add "$a" dev lo && host_addrs="$host_addrs $a"
done
mkdir -p "$BOOT_DIR/imds"
"$src/build/tests/imds" 169.254.169.254 80 "$BOOT_DIR/imds" 2>"$BOOT_DIR/imds.log" &
imds_pid=$!

# A private CA and serve's certificate for its address: the workers must
# get the CA from the launch message to trust serve.
tls=$BOOT_DIR/tls
mkdir -p "$tls"
if ! { openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj "/CN=ebb boot test CA" -keyout "$tls/ca.key" -out "$tls/ca.pem" &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$addr" \
		-keyout "$tls/key.pem" -out "$tls/req.pem" &&
	printf 'subjectAltName=IP:%s,IP:10.0.2.2\n' "$addr" >"$tls/ext" &&
	openssl x509 -req -in "$tls/req.pem" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 1 \
		-extfile "$tls/ext" -out "$tls/cert.pem"; } 2>"$BOOT_DIR/openssl.log"; then
	show openssl "$BOOT_DIR/openssl.log"
	fail "openssl made no certificate"
	finish
fi

admin=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
EBB_SERVER=https://$addr:$port
EBB_TOKEN=$admin
EBB_CACERT=$tls/ca.pem
export EBB_SERVER EBB_TOKEN EBB_CACERT
ebb=$src/build/ebb

# serve_start NAME PROVIDER_SETTINGS... : serve on a fresh data directory
# with the provider program providers/NAME, the stand-ins first on PATH,
# the settings (NAME=VALUE) in its environment, as /etc/default/ebb would
# give them.
serve_start() {
	program=$1
	shift
	# A data directory a phase: each starts with no jobs and no instances.
	data=$BOOT_DIR/serve-$phase
	mkdir -p "$data"
	cat >"$data/ebb.conf" <<EOF
[server]
listen = ${listen:-$addr}:$port
data_dir = $data
tls_cert = $tls/cert.pem
tls_key = $tls/key.pem

[provider]
kind = exec
server_url = https://${workers_reach:-$addr}:$port
worker_cacert = $tls/ca.pem

[exec]
command = $src/providers/$program
list_interval = 2s

[scaler]
interval = 1s
max_instances = 1
idle_timeout = 8s
boot_timeout = ${boot_timeout:-3m}

[offer.gpu]
machine = ${machine:-g5.xlarge}
gpus = 1
vram_gb = 24
price_ondemand = 1.006
price_spot = 0.45
boot = 20s

[token.admin]
secret = $admin
role = admin
EOF
	if ! "$ebb" config -c "$data/ebb.conf" >/dev/null; then
		fail "ebb config -c refused the $program configuration"
		return 1
	fi
	env PATH="$src/tests/boot/bin:$PATH" "$@" "$ebb" serve -c "$data/ebb.conf" 2>"$data/serve.log" &
	serve_pid=$!
	if ! wait_for 20 "$ebb" status >/dev/null 2>&1; then
		show "serve" "$data/serve.log"
		fail "serve with $program did not answer over TLS"
		return 1
	fi
}

serve_stop() {
	kill -TERM "$serve_pid" 2>/dev/null
	wait "$serve_pid" 2>/dev/null
	serve_pid=
}

# job_field ID JQ: a field of a job.
job_field() { "$ebb" job "$1" --json 2>/dev/null | jq -r "$2"; }
succeeded() { [ "$(job_field "$1" .state)" = succeeded ]; }
# instance_field ID JQ: a field of an instance, from the fleet with the
# terminated ones.
instance_field() { "$ebb" fleet --all --json 2>/dev/null | jq -r --argjson id "$1" ".instances[] | select(.id == \$id) | $2"; }
instance_gone() { [ "$(instance_field "$1" .state)" = terminated ]; }
# the machine ebb's instance ID runs on: its provider_ref
machine_of() { instance_field "$1" .provider_ref; }
machine_ended() { [ -f "$(machine_dir "$1")/exit" ]; }

# A job that reports progress and a checkpoint every 5 of its STEPS
# steps of half a second, resumes from its checkpoint (the token is
# FROM:POS, FROM where this run started), and stops at a checkpoint on
# SIGTERM (docs/SPOT.md).
resumable() {
	printf '%s' 'from=0; [ -z "${EBB_CHECKPOINT:-}" ] || from=${EBB_CHECKPOINT#*:}; pos=$from
trap '"'"'echo "checkpoint $from:$pos $pos" >&3; exit 0'"'"' TERM
while [ "$pos" -lt '"$1"' ]; do sleep 0.5; pos=$((pos + 1)); echo "progress $pos" >&3
[ $((pos % 5)) -ne 0 ] || echo "checkpoint $from:$pos $pos" >&3; done'
}

# ---- AWS: the disk image, user data through cloud-init ----

phase_aws() {
	serve_start aws-ec2 EBB_AWS_CONFIG=/nonexistent EBB_AWS_AMI=ami-0ebb0b00700000001 EBB_AWS_REGION=us-east-1 \
		BOOT_AMI=ami-0ebb0b00700000001 BOOT_IMAGE="$images/disk.raw" || return
	log=$BOOT_DIR/serve-$phase/serve.log

	# The bar: 3 queued jobs, one machine booted from the user data.
	for k in 1 2 3; do
		"$ebb" submit --items 5 -- sh -c "$(resumable 5)" >/dev/null || fail "ebb submit $k"
	done
	if wait_for 240 succeeded 3 && succeeded 1 && succeeded 2; then
		pass "aws: 3 of 3 jobs succeeded on a machine booted from the disk image with aws-ec2's user data"
	else
		"$ebb" jobs
		"$ebb" fleet --all
		show "serve" "$log"
		for m in "$BOOT_DIR"/machines/*; do show "console of ${m##*/}" "$m/console"; done
		fail "aws: the 3 jobs did not succeed"
		serve_stop
		return
	fi
	m1=$(machine_of 1)
	if [ "$(job_field 1 '.items_done')" = 5 ] && [ "$(job_field 3 '.checkpoint // empty')" = "0:5" ] &&
		[ -n "$(instance_field 1 '.registered_at // empty')" ]; then
		pass "aws: the worker registered over TLS with the private CA, reported progress and checkpoints"
	else
		"$ebb" job 1
		"$ebb" job 3
		fail "aws: progress, checkpoint or registration missing"
	fi
	# Idle, the worker leaves and systemd powers the machine off.
	if wait_for 90 machine_ended "$m1" && [ "$(cat "$(machine_dir "$m1")/exit")" = 0 ]; then
		pass "aws: idle, the machine powered itself off"
	else
		show "console of $m1" "$(machine_dir "$m1")/console"
		fail "aws: machine $m1 still up 90 s after the last job"
	fi
	if grep -q terminate-instances "$BOOT_DIR/calls.log"; then
		fail "aws: the cloud was asked to terminate: $(grep terminate-instances "$BOOT_DIR/calls.log")"
	else
		pass "aws: no terminate call: the machine ended itself"
	fi
	if wait_for 20 instance_gone 1 &&
		[ "$(aws_listed "$m1")" = "" ] && [ -n "$(instance_field 1 '.terminated_at // empty')" ]; then
		pass "aws: serve's fleet has instance 1 terminated ($(instance_field 1 .reason)), the list no longer shows it"
	else
		"$ebb" fleet --all
		fail "aws: instance 1 not terminated in serve's fleet, or still listed"
	fi
	# The ledger is closed: no instance time accrues with none up.
	billed=$("$ebb" fleet --json | jq .instance_seconds)
	sleep 2
	if [ "$("$ebb" fleet --json | jq .instance_seconds)" = "$billed" ]; then
		pass "aws: the ledger closed at $billed instance-seconds"
	else
		fail "aws: instance time still accrues with no instance up"
	fi

	# A reclaim: the notice of the metadata service stops the job at a
	# checkpoint, and it resumes on the next machine.
	job=$("$ebb" submit --items 40 -- sh -c "$(resumable 40)")
	if wait_for 120 checkpointed "$job" 10; then
		inst=$(job_field "$job" .lease.instance)
		m2=$(machine_of "$inst")
		ip2=$(cat "$(machine_dir "$m2")/ip")
		printf '{"action": "terminate", "time": "%s"}\n' "$(date -u -d '+2 min' +%Y-%m-%dT%H:%M:%SZ)" \
			>"$BOOT_DIR/imds/notice-$ip2"
		pass "aws: job $job runs on instance $inst (machine $m2), checkpointed; its reclaim notice is served"
	else
		"$ebb" job "$job"
		show "serve" "$log"
		fail "aws: job $job never checkpointed on a second machine"
		serve_stop
		return
	fi
	if wait_for 60 machine_ended "$m2" && [ "$(job_field "$job" .interruptions)" = 1 ] &&
		[ ! -f "$BOOT_DIR/imds/notice-$ip2" ] && grep -q "^$ip2 GET /latest/meta-data/spot/instance-action 200" \
		"$BOOT_DIR/imds/requests" && grep -q "^$ip2 PUT /latest/api/token 200" "$BOOT_DIR/imds/requests"; then
		pass "aws: the worker read the notice with an IMDSv2 token, stopped the job at a checkpoint, and the machine powered off; the notice went with it"
	else
		"$ebb" job "$job"
		tail -n 5 "$BOOT_DIR/imds/requests"
		show "console of $m2" "$(machine_dir "$m2")/console"
		fail "aws: the reclaim did not stop job $job and machine $m2"
	fi
	from='' inst3=''
	if wait_for 120 leased_elsewhere "$job" "$inst"; then
		inst3=$(job_field "$job" .lease.instance)
		wait_for 120 succeeded "$job" && from=$(job_field "$job" '.checkpoint // ""')
		from=${from%%:*}
	fi
	if [ -n "$from" ] && [ "$from" -ge 5 ] && [ "$(job_field "$job" .items_done)" = 40 ]; then
		pass "aws: job $job resumed from its checkpoint at $from of 40 on instance $inst3 and succeeded"
	else
		"$ebb" job "$job"
		"$ebb" fleet --all
		show "serve" "$log"
		fail "aws: job $job did not resume from its checkpoint on another instance"
	fi
	serve_stop
}

# leased_elsewhere JOB INSTANCE: JOB is leased on another instance.
leased_elsewhere() {
	i=$(job_field "$1" '.lease.instance // empty')
	[ -n "$i" ] && [ "$i" != "$2" ]
}

# checkpointed JOB N: JOB is leased and has checkpointed at N or more.
checkpointed() {
	[ "$(job_field "$1" .state)" = leased ] && [ "$(job_field "$1" '.checkpoint // "0:0"' | cut -d: -f2)" -ge "$2" ]
}

# aws_listed REF: REF's state in aws-ec2's list, as serve would read it.
aws_listed() {
	echo '{"version": 1, "call": "list", "tag": "ebb"}' |
		env PATH="$src/tests/boot/bin:$PATH" EBB_AWS_CONFIG=/nonexistent "$src/providers/aws-ec2" list |
		jq -r --arg ref "$1" '.instances[] | select(.ref == $ref) | .state'
}

# ---- GCP: the root file system, user-data through cloud-init ----

phase_gcp() {
	machine=n1-standard-8+nvidia-tesla-t4
	serve_start gcp EBB_GCP_CONFIG=/nonexistent EBB_GCP_ZONE=us-central1-a EBB_GCP_IMAGE_FAMILY=ebb-worker \
		EBB_GCP_PROJECT=p BOOT_FAMILY=ebb-worker BOOT_IMAGE="$images/rootfs" || return
	machine=''

	log=$BOOT_DIR/serve-$phase/serve.log
	job=$("$ebb" submit --items 5 -- sh -c "$(resumable 5)")
	if wait_for 180 succeeded "$job"; then
		pass "gcp: job $job succeeded on a VM booted from the root file system with gcp's user-data"
	else
		"$ebb" job "$job"
		show "serve" "$log"
		fail "gcp: job $job did not succeed"
		serve_stop
		return
	fi
	vm=$(machine_of 1)
	if cmp -s "$(machine_dir "$vm")/startup-script" "$(machine_dir "$vm")/seed/user-data"; then
		pass "gcp: the startup-script metadata is the user-data cloud-init ran"
	else
		fail "gcp: startup-script and user-data differ"
	fi
	# Idle, the VM powers itself off and is kept, stopped (its disk
	# billed), until ebb deletes it: listed stopped, or deleted already
	# by serve's next list, found TERMINATED.
	if wait_for 90 machine_ended "$vm" &&
		{ [ "$(gcp_listed "$vm")" = stopped ] || [ "$(cat "$(machine_dir "$vm")/deleted" 2>/dev/null)" = TERMINATED ]; }; then
		pass "gcp: idle, the VM powered itself off, and was listed stopped until ebb deleted it"
	else
		show "console of $vm" "$(machine_dir "$vm")/console"
		fail "gcp: VM $vm did not power itself off, or is not listed stopped"
	fi
	if wait_for 30 gcp_deleted "$vm" && instance_gone 1 && [ -n "$(instance_field 1 '.terminated_at // empty')" ]; then
		pass "gcp: ebb deleted the stopped VM at its next list; instance 1 terminated ($(instance_field 1 .reason))"
	else
		"$ebb" fleet --all
		"$ebb" decisions
		fail "gcp: the stopped VM $vm was not deleted"
	fi
	serve_stop
}

# gcp_listed NAME: the VM's state in gcp's list, as serve would read it.
gcp_listed() {
	echo '{"version": 1, "call": "list", "tag": "ebb"}' |
		env PATH="$src/tests/boot/bin:$PATH" EBB_GCP_CONFIG=/nonexistent EBB_GCP_PROJECT=p "$src/providers/gcp" list |
		jq -r --arg ref "$1" '.instances[] | select(.ref == $ref) | .state'
}
gcp_deleted() { [ -f "$(machine_dir "$1")/deleted" ]; }

# ---- Kubernetes: the container image, the pod and its secret ----

phase_k8s() {
	serve_start kubernetes EBB_K8S_CONFIG=/nonexistent EBB_K8S_IMAGE="ebb-worker:$version" \
		EBB_K8S_NAMESPACE=gpu BOOT_OCI="$images/oci" BOOT_IMAGE="ebb-worker:$version" || return
	log=$BOOT_DIR/serve-$phase/serve.log
	for k in 1 2; do
		"$ebb" submit --items 5 -- sh -c "$(resumable 5)" >/dev/null || fail "ebb submit $k"
	done
	if wait_for 180 succeeded 2 && succeeded 1; then
		pass "k8s: 2 of 2 jobs succeeded in a pod of the OCI image, its environment from the secret"
	else
		"$ebb" jobs
		show "serve" "$log"
		for m in "$BOOT_DIR"/machines/ebb-*; do show "container ${m##*/}" "$m/console"; done
		fail "k8s: the jobs did not succeed"
		serve_stop
		return
	fi
	# The first launch was on spot, where this cluster has no capacity
	# (no EBB_K8S_SPOT_SELECTOR): the pod is the on-demand one.
	id=$("$ebb" fleet --all --json | jq '[.instances[] | select((.provider_ref // "") != "")][0].id')
	pod=$(machine_of "$id")
	if instance_field 1 .reason | grep -q "no spot capacity: EBB_K8S_SPOT_SELECTOR"; then
		pass "k8s: the spot launch was no capacity (no spot selector), the pod on demand ($pod)"
	else
		"$ebb" fleet --all
		fail "k8s: the first launch was not refused as no spot capacity"
	fi
	if jq -e '.spec.terminationGracePeriodSeconds == 90 and (.spec.tolerations | any(.key == "nvidia.com/gpu"))
		and .spec.containers[0].command == null' "$(machine_dir "$pod")/pod.json" >/dev/null &&
		jq -e '.user == "ebb" and .args == ["/usr/bin/tini", "--", "/usr/lib/ebb/worker-entrypoint"]' \
			"$(machine_dir "$pod")/spec.json" >/dev/null; then
		pass "k8s: the pod runs the image's entrypoint as ebb, with a 90 s grace and the GPU toleration"
	else
		jq .spec "$(machine_dir "$pod")/pod.json"
		fail "k8s: the pod's spec or the container's user is not as built"
	fi
	# Idle, the worker leaves, the container ends, the pod Succeeded: ebb
	# deletes it and its secret.
	if wait_for 90 machine_ended "$pod" && wait_for 30 k8s_deleted "$pod" &&
		[ ! -f "$BOOT_DIR/k8s/secret-gpu-$pod" ] && instance_gone "$id"; then
		pass "k8s: idle, the worker left, the pod ended and ebb deleted it and its secret"
	else
		show "container $pod" "$(machine_dir "$pod")/console"
		"$ebb" fleet --all
		fail "k8s: pod $pod not ended and deleted"
	fi
	serve_stop
}
k8s_deleted() { [ -f "$(machine_dir "$1")/deleted" ]; }


# ---- A virtual machine: the disk image's firmware, GRUB and kernel ----

phase_vm() {
	if ! command -v qemu-system-x86_64 >/dev/null || [ ! -f /usr/share/OVMF/OVMF_CODE_4M.fd ]; then
		fail "vm: qemu-system-x86 and ovmf are not installed (scripts/deps.sh installs them)"
		return
	fi
	# QEMU's user network reaches the host's loopback at 10.0.2.2.
	# Emulated (TCG: the host's KVM does not run a guest here), a boot on
	# two busy cores takes minutes: the launch waits for it, the test too.
	listen=0.0.0.0 workers_reach=10.0.2.2 boot_timeout=15m
	calls=$(wc -l <"$BOOT_DIR/calls.log" 2>/dev/null || echo 0)
	serve_start aws-ec2 EBB_AWS_CONFIG=/nonexistent EBB_AWS_AMI=ami-0ebb0b00700000001 EBB_AWS_REGION=us-east-1 \
		BOOT_AMI=ami-0ebb0b00700000001 BOOT_IMAGE="$images/disk.raw" BOOT_VM=uefi || return
	listen='' workers_reach='' boot_timeout=''
	log=$BOOT_DIR/serve-$phase/serve.log
	job=$("$ebb" submit --items 5 -- sh -c "$(resumable 5)")
	m=
	if wait_for 900 succeeded "$job"; then
		m=$(machine_of 1)
		pass "vm: job $job succeeded on a virtual machine that booted disk.raw by UEFI, with aws-ec2's user data"
	else
		"$ebb" job "$job"
		show "serve" "$log"
		for d in "$BOOT_DIR"/machines/i-*; do show "console of ${d##*/}" "$d/console"; done
		fail "vm: job $job did not succeed on the virtual machine"
		serve_stop
		return
	fi
	console=$(machine_dir "$m")/console
	if grep -aq "GNU GRUB" "$console" && grep -aq "Linux version .*-cloud-amd64" "$console" &&
		grep -aq "Datasource DataSourceNoCloud" "$console"; then
		pass "vm: its console shows OVMF's boot of GRUB, Debian's cloud kernel, and cloud-init's NoCloud seed"
	else
		show "console of $m" "$console"
		fail "vm: the console does not show GRUB, the kernel and cloud-init"
	fi
	if wait_for 120 machine_ended "$m" && [ "$(cat "$(machine_dir "$m")/exit")" = 0 ] &&
		! tail -n +"$((calls + 1))" "$BOOT_DIR/calls.log" | grep -q terminate-instances; then
		pass "vm: idle, the virtual machine powered itself off, with no terminate call"
	else
		show "console of $m" "$console"
		fail "vm: the virtual machine did not power itself off"
	fi
	serve_stop
}

# ---- NVIDIA: the driver's package list resolves ----

phase_nvidia() {
	if images/build.sh --nvidia --dry-run "$deb" >"$BOOT_DIR/nvidia.txt" 2>"$BOOT_DIR/nvidia.log" &&
		grep -q '^machine: nvidia-driver ' "$BOOT_DIR/nvidia.txt" &&
		grep -q '^machine: linux-headers-' "$BOOT_DIR/nvidia.txt"; then
		pass "nvidia: images/build.sh --nvidia resolves with Debian's non-free section: $(grep -c '^machine: ' "$BOOT_DIR/nvidia.txt") packages, $(grep '^machine: nvidia-driver ' "$BOOT_DIR/nvidia.txt" | cut -d' ' -f2-)"
	else
		show "images/build.sh --nvidia --dry-run" "$BOOT_DIR/nvidia.log"
		fail "nvidia: the driver's package list does not resolve"
	fi
}

for phase in $phases; do
	"phase_$phase"
	# Each phase's machines are its own: names repeat across clouds.
	machines_cleanup
	[ ! -d "$BOOT_DIR/machines" ] || mv "$BOOT_DIR/machines" "$BOOT_DIR/machines.$phase"
done
finish
