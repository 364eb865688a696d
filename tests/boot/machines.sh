# shellcheck shell=sh
# Machines booted for real, for the boot test (tests/boot/run.sh) and the
# cloud stand-ins of tests/boot/bin/, which source this file: what a
# cloud's API launches is a Debian root file system booted with systemd
# as PID 1 under systemd-nspawn, each in a network namespace of its own.
#
#   BOOT_DIR    the test's state: machines/NAME/ for each machine, the
#               IMDS stand-in's notices in imds/, calls.log
#   BOOT_NET    the /24s the machines get are 198.18.N.0/24 (RFC 2544's
#               benchmark range, routed nowhere), N from 1; the host side
#               is .1, the machine .2
#
# A machine's network: a veth pair, the host's end BOOT_PREFIX-hN, the
# other, eth0, in the namespace BOOT_PREFIX-N. The machine configures
# eth0 itself, as cloud-init reads it from the seed's network-config, as a
# cloud's metadata gives it; its default route is the host's end, so it
# reaches serve and the metadata service on the host's own addresses
# (on lo), as an instance reaches its VPC.
#
# machines/NAME holds: ip; pid (nspawn's); console (what the machine
# printed); exit (nspawn's status, once it ended by itself or was
# stopped); stopping (written before a stop, by the stand-in: a
# terminate, a delete).
# shellcheck disable=SC2034

: "${BOOT_DIR:?BOOT_DIR is the state directory of the boot test}"
BOOT_PREFIX=${BOOT_PREFIX:-ebbt}

# machine_dir NAME
machine_dir() { printf '%s/machines/%s' "$BOOT_DIR" "$1"; }

# machine_alive NAME: is its nspawn running?
machine_alive() {
	m=$(machine_dir "$1")
	[ -f "$m/pid" ] && [ ! -f "$m/exit" ]
}

# machine_boot NAME IMAGE USER_DATA [SPEC]: boots IMAGE (a directory, or
# a disk image whose root partition is mounted for it) as NAME, in the
# background, with a cloud-init NoCloud seed whose user-data is exactly
# USER_DATA. With SPEC, IMAGE is a container's root file system, and SPEC
# a file, a JSON object of what a kubelet runs in it: args, env (an
# object), user (a name) and cwd; a stop is SIGTERM to its first process.
# With BOOT_VM (bios or uefi), a disk image is booted whole instead, in a
# virtual machine (machine_vm). Prints the machine's address.
machine_boot() {
	name=$1 image=$2 user_data=$3 spec=${4:-}
	m=$(machine_dir "$name")
	if [ -n "${BOOT_VM:-}" ] && [ -f "$image" ]; then
		machine_vm "$name" "$image" "$user_data"
		return
	fi
	mkdir -p "$m/seed" "$BOOT_DIR/net"
	# The next /24: a directory made atomically is the lock.
	n=1
	while ! mkdir "$BOOT_DIR/net/$n" 2>/dev/null; do n=$((n + 1)); done
	[ "$n" -le 250 ] || { echo "machines: out of /24s" >&2; return 1; }
	ip=198.18.$n.2
	ns=$BOOT_PREFIX-$n
	host=$BOOT_PREFIX-h$n
	echo "$ip" >"$m/ip"
	echo "$ns $host" >"$m/net"
	ip netns add "$ns"
	ip link add "$host" type veth peer name "$BOOT_PREFIX-c$n"
	ip link set "$BOOT_PREFIX-c$n" netns "$ns"
	ip netns exec "$ns" ip link set "$BOOT_PREFIX-c$n" name eth0
	ip netns exec "$ns" ip link set lo up
	ip addr add "198.18.$n.1/24" dev "$host"
	ip link set "$host" up
	set -- --register=no --keep-unit --quiet --network-namespace-path="/run/netns/$ns" -M "$name"
	if [ -n "$spec" ]; then
		# A pod: the container's own process, its network set from outside
		# as a pod's is.
		ip netns exec "$ns" ip link set eth0 up
		ip netns exec "$ns" ip addr add "$ip/24" dev eth0
		ip netns exec "$ns" ip route add default via "198.18.$n.1"
		eval "set -- \"\$@\" $(jq -r '(.env | to_entries | map("--setenv=\(.key)=\(.value)"))
			+ ["--user=\(.user)", "--chdir=\(.cwd)", "--kill-signal=SIGTERM"] | map(@sh) | join(" ")' "$spec")"
		set -- "$@" --console=pipe -D "$image" --volatile=overlay
		eval "set -- \"\$@\" -- $(jq -r '.args | map(@sh) | join(" ")' "$spec")"
	else
		printf 'instance-id: %s\nlocal-hostname: %s\n' "$name" "$name" >"$m/seed/meta-data"
		cp "$user_data" "$m/seed/user-data"
		cat >"$m/seed/network-config" <<EOF
version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - type: static
        address: $ip/24
        gateway: 198.18.$n.1
EOF
		root=$image
		[ -d "$image" ] || root=$(disk_root "$image")
		# The image stays as it was built: the machine writes to a tmpfs
		# over it, as each instance writes to its own copy of an AMI.
		# CAP_NET_ADMIN, which nspawn gives a container of its own
		# network only with --private-network: the machine's ifupdown
		# sets its address and route.
		set -- "$@" -D "$root" --volatile=overlay -b --bind-ro="$m/seed:/var/lib/cloud/seed/nocloud" \
			--capability=CAP_NET_ADMIN
	fi
	# Its own session: the provider program's process group, which serve
	# kills at its timeout, is not the machine's.
	setsid sh -c '
		m=$1 ns=$2 host=$3 ip=$4
		shift 4
		systemd-nspawn "$@" </dev/null >"$m/console" 2>&1 &
		echo $! >"$m/pid"
		wait $!
		echo $? >"$m/exit.tmp"
		# The machine is gone, its network and any notice for it with it.
		ip netns del "$ns" 2>/dev/null
		ip link del "$host" 2>/dev/null
		rm -f "$BOOT_DIR/imds/notice-$ip"
		mv "$m/exit.tmp" "$m/exit"
	' sh "$m" "$ns" "$host" "$ip" "$@" </dev/null >/dev/null 2>&1 &
	while [ ! -s "$m/pid" ]; do sleep 0.05; done
	echo "$ip"
}

# machine_vm NAME DISK USER_DATA: boots DISK whole, its firmware, GRUB
# and kernel, in a QEMU virtual machine (BOOT_VM: bios, SeaBIOS; uefi,
# OVMF), emulated (TCG: no KVM here), its writes kept apart (-snapshot
# for its disk), with the NoCloud seed on a second disk labelled cidata,
# as cloud-init looks for one, and QEMU's user network: the machine asks
# DHCP for its address, as on a cloud, and reaches the host's loopback at
# 10.0.2.2. It powers itself off, or is stopped as machine_stop stops a
# container: its console is on the first serial port.
machine_vm() {
	name=$1 disk=$2 user_data=$3
	m=$(machine_dir "$name")
	mkdir -p "$m/seed"
	echo 10.0.2.15 >"$m/ip"
	printf 'instance-id: %s\nlocal-hostname: %s\n' "$name" "$name" >"$m/seed/meta-data"
	cp "$user_data" "$m/seed/user-data"
	mkfs.vfat -C -n CIDATA "$m/seed.img" 1024 >/dev/null
	mcopy -i "$m/seed.img" "$m/seed/meta-data" "$m/seed/user-data" ::/
	set -- -m 1024 -smp 1 -display none -monitor none -serial "file:$m/console" \
		-drive "file=$disk,format=raw,if=virtio,snapshot=on" -drive "file=$m/seed.img,format=raw,if=virtio" \
		-nic user,model=virtio-net-pci
	if [ "$BOOT_VM" = uefi ]; then
		cp /usr/share/OVMF/OVMF_VARS_4M.fd "$m/efivars.fd"
		set -- "$@" -drive if=pflash,format=raw,readonly=on,file=/usr/share/OVMF/OVMF_CODE_4M.fd \
			-drive "if=pflash,format=raw,file=$m/efivars.fd"
	fi
	setsid sh -c '
		m=$1
		shift
		qemu-system-x86_64 "$@" </dev/null >"$m/qemu.log" 2>&1 &
		echo $! >"$m/pid"
		wait $!
		echo $? >"$m/exit.tmp"
		mv "$m/exit.tmp" "$m/exit"
	' sh "$m" "$@" </dev/null >/dev/null 2>&1 &
	while [ ! -s "$m/pid" ]; do sleep 0.05; done
	echo 10.0.2.15
}

# machine_stop NAME: asks the machine to stop, as a cloud's terminate or
# delete does: SIGTERM to nspawn powers a booted machine off (systemd
# stops its units: the worker gets SIGTERM and its grace) and stops a
# container's process.
machine_stop() {
	m=$(machine_dir "$1")
	: >"$m/stopping"
	machine_alive "$1" && kill -TERM "$(cat "$m/pid")" 2>/dev/null
	return 0
}

# disk_root DISK: the root partition of the disk image DISK mounted
# read-only (once, shared by every machine of it), its mount point
# printed. The partition is found in the GPT by its name, root, as
# images/disk.sh makes it.
disk_root() {
	mnt=$BOOT_DIR/disk-root
	if ! mountpoint -q "$mnt" 2>/dev/null; then
		mkdir -p "$mnt"
		start=$(sfdisk -d "$1" | sed -n 's/.*start= *\([0-9]*\),.*name="root".*/\1/p')
		[ -n "$start" ] || { echo "machines: no partition named root in $1" >&2; return 1; }
		mount -o ro,loop,offset=$((start * 512)) "$1" "$mnt"
	fi
	printf '%s' "$mnt"
}

# machines_cleanup: every machine stopped (SIGTERM, then SIGKILL after 30
# s), their networks and the disk's mount gone.
machines_cleanup() {
	for m in "$BOOT_DIR"/machines/*; do
		[ -f "$m/pid" ] && [ ! -f "$m/exit" ] && kill -TERM "$(cat "$m/pid")" 2>/dev/null
	done
	i=0
	while [ $i -lt 60 ]; do
		left=
		for m in "$BOOT_DIR"/machines/*; do
			[ -f "$m/pid" ] && [ ! -f "$m/exit" ] && left=1
		done
		[ -n "$left" ] || break
		sleep 0.5
		i=$((i + 1))
	done
	for m in "$BOOT_DIR"/machines/*; do
		[ -f "$m/pid" ] && [ ! -f "$m/exit" ] && kill -KILL "$(cat "$m/pid")" 2>/dev/null
		if [ -f "$m/net" ]; then
			read -r ns host <"$m/net"
			ip netns del "$ns" 2>/dev/null
			ip link del "$host" 2>/dev/null
		fi
	done
	if mountpoint -q "$BOOT_DIR/disk-root" 2>/dev/null; then
		umount "$BOOT_DIR/disk-root" || umount -l "$BOOT_DIR/disk-root"
	fi
	return 0
}
