#!/bin/sh
# images/build.sh: ebb's worker images, from Debian's packages and ebb's
# own package only (docs/IMAGES.md).
#
#   images/build.sh [options] DEB
#
#   DEB                ebb's package (make deb: build/ebb_VERSION_ARCH.deb)
#   -o, --out DIR      where the images go (default build/image)
#   --only LIST        what to make, comma-separated: rootfs, disk, oci
#                      (default all three; disk is made from rootfs)
#   --nvidia           NVIDIA's driver from Debian's non-free section, and
#                      the generic kernel with its headers for its module
#   --packages LIST    more Debian packages for the jobs, comma-separated
#                      (python3,python3-numpy), in every image
#   --mirror URL       the Debian mirror (default $EBB_IMAGE_MIRROR, else
#                      http://deb.debian.org/debian)
#   --size GiB         the disk image's size (default: the least whole GiB,
#                      at least 2, that holds the root file system)
#   --dry-run          resolve every package list as the build would, with
#                      apt (mmdebstrap --simulate), print it, make nothing
#
# Makes, in DIR:
#   rootfs/      the machine's root file system: Debian 12, systemd,
#                cloud-init, the cloud kernel, ebb's package
#                (ebb-worker.service, not enabled: the user data starts it)
#   disk.raw     that file system in a GPT disk image, bootable by BIOS and
#                UEFI (amd64; UEFI alone on arm64), for `aws ec2
#                import-image` and `gcloud compute images create`
#   oci/         an OCI image layout, ebb-worker:VERSION: Debian 12 minbase,
#                ebb's package, tini, curl, its entrypoint
#                /usr/lib/ebb/worker-entrypoint run as the ebb user; for
#                RunPod and Kubernetes (skopeo copy oci:DIR/oci:VERSION
#                docker://REGISTRY/ebb-worker:VERSION)
#   packages.txt what each image holds, package and version
#
# Needs root (the files keep their owners), and mmdebstrap, e2fsprogs,
# fdisk, dosfstools, mtools, grub-pc-bin and grub-efi-amd64-bin (or
# grub-efi-arm64-bin), umoci (scripts/deps.sh installs them).
set -eu

usage() {
	sed -n '4,22p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
die() {
	echo "images/build.sh: $*" >&2
	exit 1
}
say() { echo "images/build.sh: $*" >&2; }

out=build/image only=rootfs,disk,oci nvidia='' packages='' size='' dry_run=''
mirror=${EBB_IMAGE_MIRROR:-http://deb.debian.org/debian}
while [ $# -gt 0 ]; do
	case $1 in
	-o | --out) out=${2:?}; shift ;;
	--only) only=${2:?}; shift ;;
	--nvidia) nvidia=1 ;;
	--packages) packages=${2:?}; shift ;;
	--mirror) mirror=${2:?}; shift ;;
	--size) size=${2:?}; shift ;;
	--dry-run) dry_run=1 ;;
	-h | --help) usage ;;
	-*) echo "images/build.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
	shift
done
[ $# -eq 1 ] || usage
deb=$(realpath -e "$1") || die "no package $1: make deb builds it"
case $only in *[!a-z,]*) die "--only takes rootfs, disk and oci" ;; esac
wants() { case ",$only," in *",$1,"*) return 0 ;; esac; return 1; }
[ "$(id -u)" -eq 0 ] || [ -n "$dry_run" ] || die "needs root: the root file systems keep their owners"

version=$(dpkg-deb -f "$deb" Version) || die "$deb is not a Debian package"
arch=$(dpkg-deb -f "$deb" Architecture)
case $arch in
amd64) efi=x86_64-efi efi_boot=BOOTX64.EFI root_type=4f68bce3-e8cd-4db1-96e7-fbcaf984b709 ;;
arm64) efi=arm64-efi efi_boot=BOOTAA64.EFI root_type=b921b045-1df0-41c3-af44-4c6f280d3fae ;;
*) die "a package for $arch: images are built for amd64 and arm64" ;;
esac
[ "$arch" = "$(dpkg --print-architecture)" ] || die "a package for $arch on a $(dpkg --print-architecture) machine"

# What a GPU machine of a cloud needs, beyond ebb's package and what it
# pulls in: systemd as init, cloud-init to run the user data (and set
# the hostname, the network and ssh keys), the network, growroot so the
# root grows to the volume, ssh to look inside, and a kernel. Debian's
# cloud kernel has the drivers of virtual and cloud hardware (ENA, NVMe,
# virtio, gVNIC) and not much else; NVIDIA's module is built against the
# generic one.
machine="systemd-sysv,udev,dbus,cloud-init,cloud-guest-utils,cloud-initramfs-growroot,locales"
machine="$machine,ca-certificates,iproute2,ifupdown,isc-dhcp-client,netbase,openssh-server"
machine="$machine,sudo,procps,less,initramfs-tools"
components=main
if [ -n "$nvidia" ]; then
	machine="$machine,linux-image-$arch,linux-headers-$arch,nvidia-driver,firmware-misc-nonfree"
	components=main,contrib,non-free,non-free-firmware
else
	machine="$machine,linux-image-cloud-$arch"
fi
# The container: what the worker needs and tini, which reaps the jobs'
# orphans as PID 1 and passes the pod's SIGTERM on; curl for RunPod's
# EBB_ON_EXIT.
container="ca-certificates,curl,tini"
if [ -n "$packages" ]; then
	machine="$machine,$packages"
	container="$container,$packages"
fi

# debootstrap cannot resolve virtual packages (cloud-init's
# python3-cryptography needs one): mmdebstrap resolves with apt.
# ebb's package goes in through a hook, as a local file that apt
# installs with what it depends on.
strap() { # TARGET PACKAGES [options...]
	target=$1 include=$2
	shift 2
	mmdebstrap --variant=minbase --components="$components" --include="$include" \
		--customize-hook="upload $deb /tmp/ebb.deb" \
		--customize-hook='chroot "$1" apt-get install -y --no-install-recommends /tmp/ebb.deb' \
		--customize-hook='rm -f "$1/tmp/ebb.deb"' \
		"$@" bookworm "$target" "$mirror"
}

if [ -n "$dry_run" ]; then
	# The package lists, resolved with the same sections and mirror:
	# what --nvidia would install is checked here without a GPU.
	for image in machine container; do
		list=$machine
		[ "$image" = machine ] || list=$container
		say "$image: resolving $list"
		mmdebstrap --simulate --verbose --variant=minbase --components="$components" --include="$list" \
			bookworm /dev/null "$mirror" 2>&1 | sed -n 's/^Inst \([^ ]*\) (\([^ ]*\).*/\1 \2/p' |
			sort >"${TMPDIR:-/tmp}/ebb-image-$image.$$" ||
			die "$image: the package list does not resolve"
		[ -s "${TMPDIR:-/tmp}/ebb-image-$image.$$" ] || die "$image: the package list does not resolve"
		sed "s/^/$image: /" "${TMPDIR:-/tmp}/ebb-image-$image.$$"
		rm -f "${TMPDIR:-/tmp}/ebb-image-$image.$$"
	done
	exit 0
fi

mkdir -p "$out"
out=$(realpath "$out")
work=$(mktemp -d "$out/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 1' INT TERM HUP

if wants rootfs; then
	say "rootfs: Debian 12 with cloud-init and $(basename "$deb")"
	rm -rf "$out/rootfs"
	strap "$work/rootfs" "$machine" \
		--customize-hook='sh -s "$1" < '"$(dirname "$(realpath "$0")")"'/machine.sh'
	mv "$work/rootfs" "$out/rootfs"
fi

if wants disk; then
	[ -d "$out/rootfs/etc" ] || die "disk: no rootfs in $out: build it first (--only rootfs,disk)"
	say "disk: disk.raw"
	"$(dirname "$(realpath "$0")")/disk.sh" "$out/rootfs" "$work/disk.raw" "$arch" "$efi" "$efi_boot" \
		"$root_type" "$size"
	mv "$work/disk.raw" "$out/disk.raw"
fi

if wants oci; then
	say "oci: ebb-worker:$version"
	strap "$work/crootfs" "$container" \
		--customize-hook='chroot "$1" install -d -o ebb -g ebb -m 0750 /var/lib/ebb-worker'
	rm -rf "$out/oci"
	umoci init --layout "$work/oci"
	umoci new --image "$work/oci:$version"
	umoci unpack --image "$work/oci:$version" "$work/bundle" >/dev/null
	rmdir "$work/bundle/rootfs"
	mv "$work/crootfs" "$work/bundle/rootfs"
	umoci repack --image "$work/oci:$version" "$work/bundle"
	umoci config --image "$work/oci:$version" --author="ebb images/build.sh" \
		--config.entrypoint=/usr/bin/tini --config.entrypoint=-- \
		--config.entrypoint=/usr/lib/ebb/worker-entrypoint \
		--config.user=ebb --config.workingdir=/var/lib/ebb-worker \
		--config.env=PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		--config.env=HOME=/var/lib/ebb-worker --config.stopsignal=SIGTERM \
		--config.label=org.opencontainers.image.title=ebb-worker \
		--config.label=org.opencontainers.image.version="$version"
	umoci gc --layout "$work/oci"
	mv "$work/oci" "$out/oci"
	# What the container holds, for packages.txt.
	mv "$work/bundle/rootfs" "$work/crootfs"
fi

{
	if [ -d "$out/rootfs/var/lib/dpkg" ]; then
		dpkg-query --admindir="$out/rootfs/var/lib/dpkg" -W -f='machine: ${Package} ${Version}\n'
	fi
	if [ -d "$work/crootfs/var/lib/dpkg" ]; then
		dpkg-query --admindir="$work/crootfs/var/lib/dpkg" -W -f='container: ${Package} ${Version}\n'
	fi
} >"$out/packages.txt"
say "made in $out"
