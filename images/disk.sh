#!/bin/sh
# images/disk.sh ROOTFS OUT ARCH EFI_TARGET EFI_NAME ROOT_TYPE [GiB]: a
# raw GPT disk image of ROOTFS, bootable as a cloud boots it (called by
# images/build.sh, which says what the arguments are).
#
# Made without loop devices or mounts, so that it runs in a container:
# the root file system is an ext4 image filled by mkfs.ext4 -d, the EFI
# system partition a FAT image filled by mtools, and GRUB's core images
# are made by grub-mkimage and put in place by grub-bios-setup (BIOS)
# and as the ESP's default loader (UEFI), each with an early config that
# finds the root by its label and reads /boot/grub/grub.cfg there.
#
# The layout: a 1 MiB BIOS boot partition (amd64), a 62 MiB ESP, and the
# root, of the Discoverable Partitions type of its architecture, so that
# systemd-nspawn -i and systemd-gpt-auto find it. The disk is a whole
# number of GiB, as GCE requires, and sparse.
set -eu
rootfs=$1 out=$2 arch=$3 efi=$4 efi_name=$5 root_type=$6 gib=${7:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/ebb-disk.XXXXXX")
trap 'rm -rf "$work"' EXIT

mib=1048576
# le N BYTES: N as BYTES bytes, little-endian.
le() {
	n=$1 i=0
	while [ $i -lt "$2" ]; do
		# shellcheck disable=SC2059 # the format is the byte
		printf "\\$(printf %03o $((n & 255)))"
		n=$((n >> 8)) i=$((i + 1))
	done
}
# at FILE OFFSET: standard input written over FILE from OFFSET.
at() { dd of="$1" bs=1 seek="$2" conv=notrunc status=none; }
# The root's least size: its files and a third more for ext4's own and
# what the first boot writes; the disk, at least 2 GiB.
used=$(du -s --block-size=$mib "$rootfs" | cut -f1)
if [ -z "$gib" ]; then
	gib=$(((used * 4 / 3 + 64 + 1023) / 1024))
	[ "$gib" -ge 2 ] || gib=2
fi
[ $((gib * 1024)) -gt $((used * 4 / 3 + 64)) ] || {
	echo "images/disk.sh: $gib GiB cannot hold a root file system of $used MiB" >&2
	exit 1
}

rm -f "$out"
truncate -s "${gib}G" "$out"
{
	echo "label: gpt"
	[ "$arch" != amd64 ] || echo "start=1MiB, size=1MiB, type=21686148-6449-6E6F-744E-656564454649, name=bios"
	echo "start=2MiB, size=62MiB, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name=esp"
	echo "start=64MiB, type=$root_type, name=root"
} | sfdisk --quiet "$out"
# The root partition's extent, in sectors, as sfdisk laid it.
# shellcheck disable=SC2046 # two numbers
set -- $(sfdisk -d "$out" | sed -n 's/.*start= *\([0-9]*\), size= *\([0-9]*\),.*name="root".*/\1 \2/p')
root_start=$1 root_sectors=$2

mkfs.ext4 -q -L ebb-root -d "$rootfs" "$work/root.img" "$((root_sectors / 2))k"
dd if="$work/root.img" of="$out" bs=$mib seek=64 conv=notrunc,sparse status=none
[ $((root_start * 512)) -eq $((64 * mib)) ] || {
	echo "images/disk.sh: sfdisk put the root at sector $root_start, not at 64 MiB" >&2
	exit 1
}

# GRUB's early config: the root by its label, then the menu.
cat >"$work/early.cfg" <<'EOF'
search --no-floppy --label --set=root ebb-root
set prefix=($root)/boot/grub
configfile ($root)/boot/grub/grub.cfg
EOF
modules="part_gpt ext2 search search_label normal configfile linux echo test serial terminal gzio"

# UEFI: the ESP's default loader, EFI/BOOT/BOOTX64.EFI (BOOTAA64.EFI).
# shellcheck disable=SC2086 # $modules is a list of words
grub-mkimage -O "$efi" -o "$work/$efi_name" -p /boot/grub -c "$work/early.cfg" $modules fat efi_gop all_video
mkfs.vfat -C -n EBB-ESP "$work/esp.img" $((62 * 1024)) >/dev/null
mmd -i "$work/esp.img" ::/EFI ::/EFI/BOOT
mcopy -i "$work/esp.img" "$work/$efi_name" "::/EFI/BOOT/$efi_name"
dd if="$work/esp.img" of="$out" bs=$mib seek=2 conv=notrunc status=none

# BIOS (amd64): core.img in the BIOS boot partition, at 1 MiB, and the
# MBR's boot code pointing at it, patched as grub-bios-setup patches them
# (which will not take a disk image for a disk): boot.img's kernel sector
# (offset 0x5c) is core.img's first sector, its drive check (0x66)
# becomes two NOPs for a hard disk, and the block list at the end of
# core.img's first sector (0x1f4; mkimage set its length) starts at the
# sector after it. The MBR keeps sfdisk's protective partition table
# past its first 440 bytes.
if [ "$arch" = amd64 ]; then
	# shellcheck disable=SC2086
	grub-mkimage -O i386-pc -o "$work/core.img" -p /boot/grub -c "$work/early.cfg" $modules biosdisk
	core=2048
	[ "$(stat -c %s "$work/core.img")" -le $((2048 * 512)) ] || {
		echo "images/disk.sh: core.img does not fit in the 1 MiB BIOS boot partition" >&2
		exit 1
	}
	le $((core + 1)) 8 | at "$work/core.img" $((0x1f4))
	dd if="$work/core.img" of="$out" bs=512 seek=$core conv=notrunc status=none
	cp /usr/lib/grub/i386-pc/boot.img "$work/boot.img"
	le $core 8 | at "$work/boot.img" $((0x5c))
	printf '\220\220' | at "$work/boot.img" $((0x66))
	dd if="$work/boot.img" of="$out" bs=440 count=1 conv=notrunc status=none
fi
