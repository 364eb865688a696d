#!/bin/sh
# images/machine.sh ROOT: what images/build.sh sets in the machine's root
# file system once its packages are in (an mmdebstrap customize hook).
# Everything that makes one machine differ from another is left for its
# first boot: cloud-init sets the hostname, the network, the users' keys
# and ssh's host keys from the cloud's metadata.
set -eu
root=$1

# A fresh machine id at each first boot (systemd makes one when the file
# is empty), and no ssh host keys shared by every instance of the image:
# cloud-init makes them.
: >"$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id" "$root"/etc/ssh/ssh_host_*

# The root file system by its label, as disk.sh makes it.
cat >"$root/etc/fstab" <<'EOF'
# images/build.sh: the root file system, grown to the volume at first boot
LABEL=ebb-root / ext4 defaults,discard,errors=remount-ro 0 1
EOF

# GRUB's menu, read by the core images of disk.sh. /vmlinuz and
# /initrd.img are the kernel package's own links to the newest kernel.
# The serial console is where EC2 and GCE show a machine's boot.
mkdir -p "$root/boot/grub"
cat >"$root/boot/grub/grub.cfg" <<'EOF'
# images/build.sh
serial --unit=0 --speed=115200
terminal_input serial console
terminal_output serial console
set timeout=1
menuentry "Debian GNU/Linux 12, ebb worker" {
	search --no-floppy --label --set=root ebb-root
	linux /vmlinuz root=LABEL=ebb-root ro console=tty0 console=ttyS0,115200n8
	initrd /initrd.img
}
EOF

# cloud-init sets the locale to en_US.UTF-8 unless told otherwise: have
# it made once here rather than at each first boot.
sed -i 's/^# *\(en_US.UTF-8 UTF-8\)/\1/' "$root/etc/locale.gen"
chroot "$root" locale-gen >/dev/null

# ebb-worker.service stays disabled: the user data writes
# /etc/ebb/worker.env and starts it (docs/DEPLOY.md, section 6).
