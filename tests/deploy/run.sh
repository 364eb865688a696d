#!/bin/sh
# docs/DEPLOY.md, run as written (docs/BUILD.md, "The deployment guide,
# run as written"): every block of the guide fenced as `sh`, in order, on
# a fresh Debian 12 booted with systemd as PID 1, as its reader types them.
#
# The fresh VM: Debian 12 (mmdebstrap --variant=minbase) with what a
# cloud's Debian 12 image has that the guide may lean on: systemd-sysv,
# dbus, ca-certificates, sudo, curl, procps and less. No compiler, no
# headers, no jq, no certbot: the guide's own apt-get lines must bring
# them. Left out of what a cloud image also has: cloud-init and the ssh
# server (how the reader gets in, not what the guide uses). It boots
# under systemd-nspawn (--register=no --keep-unit) on this machine's
# network: apt inside reaches deb.debian.org, and serve listens on this
# machine's port 7070, as the guide configures it (a port already taken
# here fails the test).
#
# The blocks run as root in one `sh -e` shell that starts in /root, so
# that what a block sets (section 2's $admin, section 8's exported
# EBB_SERVER, section 1's working directory) reaches the later ones; the
# first block that fails ends the run, named by its section and first
# line, its output shown. A block whose first line is `# [cloud] ...` or
# `# [not here] ...` is skipped, its reason printed. Stand-ins, each
# printed where it happens:
#   - the source at /root/ebb, for the block that copies it there from
#     the reader's machine: this tree, as git sees it (tracked files and
#     those not ignored, as they are in the working tree; outside a git
#     checkout, the tree but build/ and build-*/)
#   - 127.0.0.1 ebb.example.com in the VM's /etc/hosts: section 3's DNS
#     name points at the VM
#   - for `certbot certonly` (Let's Encrypt cannot reach the VM): a
#     certificate for ebb.example.com from a private CA made here, put
#     where certbot puts its own and handed to the guide's deploy hook as
#     certbot does (RENEWED_LINEAGE), the CA in the VM's trust store
#     (update-ca-certificates) as Let's Encrypt's root is in it
#   - for `journalctl -u ebb-serve -f`, which never ends: waiting for
#     serve to log msg=listening, which its reader watches the log for
# Checks, at the points of the guide they are about: the VM booted with
# systemd as PID 1; each block that runs succeeds; the package installed
# at the source's version; `ebb config` as the ebb user; ebb-serve enabled
# and active under systemd, as the ebb user; serve answering over TLS at
# the guide's URL; the job of section 8 queued, and its launch failed
# because the VM has no cloud CLI (no cloud is faked); the user data that
# section 6 shows is what aws-ec2 --dry-run prints; section 12 leaves
# ebb-serve stopped and disabled.
#
# One pass or fail line per check; ends with "N passed, M failed". Needs
# root, systemd-nspawn, mmdebstrap, openssl and git; skipped, saying why,
# where this machine cannot boot a container. At most DEPLOY_TIMEOUT
# seconds for the guide (default 480); the VM is powered off and its root
# removed on every exit. Kept in build/deploy-vm/ between runs: the VM's
# root file system as mmdebstrap made it, keyed by its package list, and
# the packages apt downloaded inside (its cache, bind-mounted; apt still
# fetches the indexes and checks each package). One run at a time on a
# machine (a lock): the VM takes the machine's port 7070.
set -u
cd "$(dirname "$0")/../.." || exit 1
src=$PWD
doc=docs/DEPLOY.md
limit=${DEPLOY_TIMEOUT:-480}
started=$(date +%s)
# shellcheck source=../checks.sh
. "$src/tests/checks.sh"

[ "$(id -u)" -eq 0 ] || skip "booting a VM needs root (systemd-nspawn)"
for tool in systemd-nspawn mmdebstrap nsenter openssl git flock pgrep; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done

# ---- the VM's root file system, made once per package list ----

cache=$src/build/deploy-vm
packages=systemd-sysv,dbus,ca-certificates,sudo,curl,procps,less
mirror=http://deb.debian.org/debian
# Its sources.list: what a cloud image's has.
list1="deb $mirror bookworm main"
list2="deb $mirror bookworm-updates main"
list3="deb http://deb.debian.org/debian-security bookworm-security main"
# What a cloud image's cloud-init writes at first boot: a hostname, and
# hosts that name localhost.
hook='echo ebb-vm >"$1/etc/hostname"; printf "127.0.0.1\tlocalhost\n127.0.1.1\tebb-vm\n::1\tlocalhost ip6-localhost ip6-loopback\n" >"$1/etc/hosts"'
key=$(printf '%s\n' "$packages" "$list1" "$list2" "$list3" "$hook" | sha256sum | cut -c1-16)
base=$cache/rootfs-$key

mkdir -p "$cache"
exec 9>"$cache/lock"
flock -w 900 9 || skip "another run of tests/deploy/run.sh holds $cache/lock"

work=$(mktemp -d /tmp/ebb-deploy.XXXXXX)
nspawn_pid=
bg=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	# A second signal (a second Ctrl-C) does not cut the cleaning short.
	trap '' INT TERM HUP
	# A long command still running (the test was interrupted): stopped
	# first, and waited for, so that nothing of it writes after.
	if [ -n "$bg" ]; then
		kill -TERM "$bg" 2>/dev/null
		wait "$bg" 2>/dev/null
	fi
	if [ -n "$nspawn_pid" ] && kill -0 "$nspawn_pid" 2>/dev/null; then
		# SIGTERM to nspawn powers the VM off: its systemd stops its units.
		kill -TERM "$nspawn_pid" 2>/dev/null
		i=0
		while kill -0 "$nspawn_pid" 2>/dev/null && [ "$i" -lt 60 ]; do
			sleep 0.5
			i=$((i + 1))
		done
		kill -KILL "$nspawn_pid" 2>/dev/null
	fi
	rm -rf "$work" "$cache/.rootfs.tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# long COMMAND...: runs COMMAND in the background and waits for it, so
# that a signal to the test runs its trap at once, not after COMMAND.
long() {
	"$@" &
	bg=$!
	wait "$bg"
	st=$?
	bg=
	return "$st"
}

if [ -d "$base/etc" ]; then
	pass "the fresh VM's root file system is made already ($base)"
else
	rm -rf "$cache"/rootfs-* "$cache/.rootfs.tmp"
	t=$(date +%s)
	if long timeout 300 mmdebstrap --variant=minbase --include="$packages" --customize-hook="$hook" \
		bookworm "$cache/.rootfs.tmp" "$list1" "$list2" "$list3" >"$work/mmdebstrap.log" 2>&1; then
		mv "$cache/.rootfs.tmp" "$base"
		pass "mmdebstrap made the fresh VM's root file system in $(($(date +%s) - t)) s: Debian 12 minbase, $packages"
	else
		show mmdebstrap "$work/mmdebstrap.log"
		fail "mmdebstrap made no root file system"
		finish
	fi
fi

# The VM's own copy, which it changes; the source where the guide's
# first block puts it; the test's files in /run/deploy-test.
root=$work/root
share=$work/share
cp -a "$base" "$root"
mkdir -p "$root/root/ebb" "$share/out" "$share/tls" "$cache/apt-archives/partial"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard |
		tar --null --no-recursion --ignore-failed-read -T - -cf - 2>/dev/null | tar -x -C "$root/root/ebb"
else
	# Not a git checkout (an unpacked archive): the tree but its builds.
	tar --exclude=./build --exclude='./build-*' -cf - . | tar -x -C "$root/root/ebb"
fi
printf '127.0.0.1\tebb.example.com\n' >>"$root/etc/hosts"
: >"$share/results"

# The private CA and ebb.example.com's certificate, for certbot's stand-in.
tls=$share/tls
printf 'subjectAltName=DNS:ebb.example.com\nbasicConstraints=CA:FALSE\n' >"$work/ext.cnf"
if ! { openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
	-subj "/CN=ebb deploy test CA" -keyout "$work/ca.key" -out "$tls/ca.pem" &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=ebb.example.com \
		-keyout "$tls/privkey.pem" -out "$work/cert.csr" &&
	openssl x509 -req -in "$work/cert.csr" -CA "$tls/ca.pem" -CAkey "$work/ca.key" -CAcreateserial \
		-days 2 -extfile "$work/ext.cnf" -out "$tls/cert.pem"; } >"$work/openssl.log" 2>&1; then
	show openssl "$work/openssl.log"
	fail "openssl made no certificate for the stand-in of certbot"
	finish
fi

# ---- the guide's blocks, and the script that runs them ----

# Each `sh` block into $work/blocks/N, its indentation (a block in a list
# item) taken off; the index, one line a block: N, its section's number,
# its first line. The block after the comment that names this test is the
# output that the `sh` block before it prints: into $work/expected/N.
mkdir -p "$work/blocks" "$work/expected"
if ! awk -v dir="$work" '
	function strip(line) {
		for (i = 0; i < indent && substr(line, 1, 1) == " "; i++)
			line = substr(line, 2)
		return line
	}
	/^## / { section = $2; sub(/\.$/, "", section); next }
	!in_block && /^ *```sh *$/ {
		in_block = 1; n++; indent = index($0, "`") - 1; first = ""
		file = dir "/blocks/" n
		printf "" >file
		next
	}
	in_block && /^ *``` *$/ {
		in_block = 0; close(file)
		printf "%d\t%s\t%s\n", n, section, first >(dir "/index")
		next
	}
	in_block {
		line = strip($0)
		print line >file
		if (first == "" && line !~ /^[ \t]*$/) first = line
		next
	}
	/<!-- tests\/deploy\/run.sh checks that this is what the block above prints -->/ { want = n; next }
	want && !out_block && /^```$/ { out_block = 1; file = dir "/expected/" want; printf "" >file; next }
	out_block && /^```$/ { out_block = 0; want = 0; close(file); next }
	out_block { print >file }
	END { if (in_block || out_block) exit 1 }' "$doc"; then
	fail "$doc: a block is not closed"
	finish
fi
[ -s "$work/index" ] || { fail "$doc has no sh block"; finish; }

# The script: each block in a { } whose output goes to out/N, so that the
# shell state stays; a line on fd 3 (the test's output) for each block
# ran, skipped or stood in for, and each check.
script=$share/script.sh
cat >"$script" <<'EOF'
# Written by tests/deploy/run.sh from docs/DEPLOY.md: the guide's blocks,
# in one shell, with the test's stand-ins and checks between them.
set -e
T=/run/deploy-test
deploytest_say() { printf '%s\n' "$*" >&3; }
deploytest_begin() { echo "$1" >"$T/current"; deploytest_t=$(date +%s); }
deploytest_ran() {
	deploytest_say "ok: $(cat "$T/label-$1") ($(($(date +%s) - deploytest_t)) s)"
	echo ok >>"$T/results"
}
deploytest_check() { # WHAT COMMAND...: a check, its failure no end of the run
	deploytest_what=$1
	shift
	if "$@" >"$T/out/check" 2>&1; then
		deploytest_say "ok: $deploytest_what"
		echo ok >>"$T/results"
	else
		deploytest_say "FAILED: $deploytest_what"
		echo failed >>"$T/results"
		{ echo "--- $deploytest_what"; cat "$T/out/check"; } >>"$T/out/failed-checks"
	fi
}
deploytest_until() { # SECONDS COMMAND...
	deploytest_end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deploytest_end" ] || return 1
		sleep 1
	done
}
# shellcheck disable=SC2016 # dpkg-query's format
deploytest_installed() { [ "$(dpkg-query -W -f='${Status} ${Version}' ebb)" = "install ok installed $1" ]; }
deploytest_listening() { journalctl -u ebb-serve --no-pager | grep -q 'msg=listening'; }
deploytest_unit() { # UNIT ACTIVE ENABLED USER
	[ "$(systemctl is-active "$1")" = "$2" ] && [ "$(systemctl is-enabled "$1")" = "$3" ] || return 1
	[ -z "$4" ] || [ "$(ps -o user= -p "$(systemctl show -p MainPID --value "$1")")" = "$4" ]
}
deploytest_launch_failed() {
	ebb fleet --all | grep -q 'launch failed: .*aws: not found' &&
		ebb decisions | grep -q 'launch failed: .*aws: not found'
}
deploytest_same() { # EXPECTED ACTUAL: the dry run's temporary directory is random
	sed 's#/tmp/ebb-aws-ec2\.[A-Za-z0-9]*/#/tmp/ebb-aws-ec2.XXXXXX/#' "$2" | diff -u "$1" -
}
cd /root
EOF

# has N TEXT: does block N hold TEXT?
has() { grep -qF -- "$2" "$work/blocks/$1"; }
# The stand-ins and checks each need their block in the guide.
need_blocks="apt-get install -y ./build/ebb_
certbot certonly
runuser -u ebb -- ebb config -c /etc/ebb/ebb.conf
systemctl enable --now ebb-serve
journalctl -u ebb-serve -f
ebb submit
systemctl disable --now ebb-serve"
version=$(dpkg-parsechangelog -l packaging/changelog -S Version 2>/dev/null)
[ -n "$version" ] || version=$(sed -n '1s/^ebb (\([^)]*\)).*/\1/p' packaging/changelog)
nblocks=0
nskipped=0
tab=$(printf '\t')
while IFS=$tab read -r n section first; do
	nblocks=$((nblocks + 1))
	label="DEPLOY.md §$section block $n: $(printf '%s' "$first" | cut -c1-80)"
	printf '%s\n' "$label" >"$share/label-$n"
	case $first in
	'# [cloud]'* | '# [not here]'*)
		nskipped=$((nskipped + 1))
		reason=$(printf '%s' "$first" | sed 's/^# //')
		printf 'skipped: DEPLOY.md §%s block %s: %s\n' "$section" "$n" "$reason" >"$share/skip-$n"
		{
			printf 'deploytest_say "$(cat "$T/skip-%s")"\n' "$n"
			if has "$n" "git archive"; then
				echo "deploytest_say 'stand-in: the source is in /root/ebb already (this tree, as git sees it)'"
			fi
			if has "$n" "certbot certonly"; then
				cat <<'EOF'
deploytest_say "stand-in: certbot's certificate: ebb.example.com's from a private CA, in /etc/letsencrypt/live/ebb.example.com/, handed to the deploy hook; the CA in the trust store"
deploytest_begin standin-certbot
{
mkdir -p /etc/letsencrypt/live/ebb.example.com
install -m 0600 "$T/tls/cert.pem" /etc/letsencrypt/live/ebb.example.com/fullchain.pem
install -m 0600 "$T/tls/privkey.pem" /etc/letsencrypt/live/ebb.example.com/privkey.pem
install -m 0644 "$T/tls/ca.pem" /usr/local/share/ca-certificates/ebb-deploy-test.crt
update-ca-certificates
RENEWED_LINEAGE=/etc/letsencrypt/live/ebb.example.com /etc/ebb/tls/deploy-hook
} >"$T/out/standin-certbot" 2>&1
EOF
			fi
			if has "$n" "journalctl -u ebb-serve -f"; then
				cat <<'EOF'
deploytest_say "stand-in: watching serve's log until it says msg=listening (30 s at most)"
deploytest_begin standin-journal
deploytest_until 30 deploytest_listening
EOF
			fi
		} >>"$script"
		continue
		;;
	esac
	{
		printf 'deploytest_begin %s\n{\n' "$n"
		cat "$work/blocks/$n"
		printf '} >"$T/out/%s" 2>&1\ndeploytest_ran %s\n' "$n" "$n"
		if has "$n" "apt-get install -y ./build/ebb_"; then
			printf "deploytest_check 'the package ebb %s is installed' deploytest_installed '%s'\n" "$version" "$version"
		fi
		if has "$n" "runuser -u ebb -- ebb config -c /etc/ebb/ebb.conf"; then
			echo "deploytest_check 'ebb config -c /etc/ebb/ebb.conf passes as the ebb user: the tokens, TLS files and provider program serve will use' runuser -u ebb -- ebb config -c /etc/ebb/ebb.conf"
		fi
		if has "$n" "systemctl enable --now ebb-serve"; then
			echo "deploytest_check 'ebb-serve.service is enabled and active under systemd, as the ebb user' deploytest_unit ebb-serve active enabled ebb"
		fi
		if has "$n" "ebb submit"; then
			cat <<'EOF'
deploytest_check 'serve answers over TLS at https://ebb.example.com:7070, its certificate checked against the system CAs' curl -fsS https://ebb.example.com:7070/healthz
deploytest_check "the job submitted in section 8 is queued" sh -c 'ebb job 1 | grep -q "^state: *queued$"'
deploytest_check "its launch failed, shown by ebb fleet --all and ebb decisions: aws: not found (no cloud CLI here)" deploytest_until 60 deploytest_launch_failed
EOF
		fi
		if [ -f "$work/expected/$n" ]; then
			cp "$work/expected/$n" "$share/expected-$n"
			printf 'deploytest_check "the output shown after block %s is what it prints (DEPLOY.md section %s)" deploytest_same "$T/expected-%s" "$T/out/%s"\n' \
				"$n" "$section" "$n" "$n"
		fi
		if has "$n" "systemctl disable --now ebb-serve"; then
			echo "deploytest_check 'ebb-serve.service is stopped and disabled' deploytest_unit ebb-serve inactive disabled ''"
		fi
	} >>"$script"
done <"$work/index"
echo 'echo done >"$T/current"' >>"$script"

# Each stand-in and check needs its block: a guide that lost one is a
# failure here, not a check left out.
missing=
while IFS= read -r text; do
	grep -qF -- "$text" "$work"/blocks/* || missing="$missing '$text'"
done <<EOF
$need_blocks
EOF
if [ -n "$missing" ]; then
	fail "$doc has no sh block with$missing: the test's stand-ins and checks stand for them"
fi
pass "$doc: $nblocks sh blocks, $nskipped of them marked [cloud] or [not here]"

# ---- the VM ----

# The guide has serve listen on the port 7070 of the host's network.
if awk '$2 ~ /:1BA2$/ && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
	fail "port 7070 is taken on this machine, which the VM's serve shares"
	finish
fi
# This machine can run a container, or there is nothing to boot.
if ! out=$(systemd-nspawn --quiet --register=no --keep-unit -D "$root" --volatile=overlay /bin/true 2>&1); then
	echo "$out"
	skip "systemd-nspawn cannot run a container here"
fi

# Booted in its own session: the test's Ctrl-C is the test's, whose trap
# powers the VM off.
echo "stand-in: 127.0.0.1 ebb.example.com in the VM's /etc/hosts: the guide's DNS name points at the VM"
setsid sh -c 'systemd-nspawn "$@" </dev/null >"$0/console" 2>&1 & echo $! >"$0/nspawn.pid"; wait' "$work" \
	-D "$root" -b --register=no --keep-unit --quiet -M ebb-vm \
	--bind="$share:/run/deploy-test" --bind="$cache/apt-archives:/var/cache/apt/archives" &
i=0
while [ ! -s "$work/nspawn.pid" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
nspawn_pid=$(cat "$work/nspawn.pid" 2>/dev/null)
# The VM's systemd: nspawn's child, once it is systemd (before, it is
# nspawn's own child setting the container up).
vm_pid=
i=0
while [ -z "$vm_pid" ] && [ $i -lt 200 ] && [ -n "$nspawn_pid" ]; do
	p=$(pgrep -P "$nspawn_pid" | head -n 1)
	[ -z "$p" ] || [ "$(cat "/proc/$p/comm" 2>/dev/null)" != systemd ] || vm_pid=$p
	sleep 0.1
	i=$((i + 1))
done
# vm COMMAND...: a command in the VM, as root, with a login's environment.
vm() {
	nsenter -t "$vm_pid" -a env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash LANG=C.UTF-8 TERM=dumb \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
# Booted: systemd answers on its private socket (made a moment after it
# starts) and has ended its start-up jobs.
state=
i=0
while [ -n "$vm_pid" ] && [ $i -lt 120 ]; do
	state=$(vm timeout 60 systemctl is-system-running --wait 2>&1)
	case $state in
	*"Failed to connect"*) sleep 0.5 ;;
	*) break ;;
	esac
	i=$((i + 1))
done
if [ -n "$vm_pid" ] && [ "$(vm cat /proc/1/comm)" = systemd ] &&
	{ [ "$state" = running ] || [ "$state" = degraded ]; }; then
	pass "the VM booted, systemd as PID 1, $state, in $(($(date +%s) - started)) s since the test started"
else
	show "the VM's console" "$work/console"
	fail "the VM did not boot (systemd: ${state:-not found})"
	finish
fi
[ "$state" = running ] || vm systemctl --failed --no-pager

# ---- the guide ----

left=$((limit - ($(date +%s) - started)))
[ "$left" -gt 60 ] || left=60
t=$(date +%s)
long vm timeout -k 10 "$left" sh /run/deploy-test/script.sh 3>&1 </dev/null >"$work/script.log" 2>&1
status=$?
ran=$(($(date +%s) - t))
passed=$((passed + $(grep -c '^ok$' "$share/results")))
failed=$((failed + $(grep -c '^failed$' "$share/results")))
current=$(cat "$share/current" 2>/dev/null)
if [ "$status" -ne 0 ] || [ "$current" != "done" ]; then
	case $current in
	standin-*) what="the stand-in $current" ;;
	'') what="the script, before its first block" ;;
	*) what=$(cat "$share/label-$current") ;;
	esac
	[ "$status" -ne 124 ] || what="$what: still running after $left s"
	[ ! -f "$share/out/$current" ] || show "its output" "$share/out/$current"
	show "the script's own output" "$work/script.log"
	fail "$what"
fi
[ ! -s "$share/out/failed-checks" ] || show "the failed checks' output" "$share/out/failed-checks"
echo "the guide ran in $ran s; the test took $(($(date +%s) - started)) s"
finish
