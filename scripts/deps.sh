#!/bin/sh
# Installs the Debian packages ebb needs to build, test and benchmark,
# and only those that are missing, so a second run does nothing. lintian,
# systemd, adduser and man-db are for the package checks
# (scripts/test-package.sh): systemd for systemd-analyze; adduser, a
# dependency of the ebb package, for its dpkg -i (libcurl4 comes with
# libcurl4-openssl-dev); man-db (and groff-base, its dependency) for man,
# which formats the packaged manual page with groff's warnings on. prometheus
# gives promtool, which lints every scrape test_metrics.c makes and checks
# contrib/prometheus, and the server test_prometheus.c scrapes serve with;
# chromium, the headless browser test_dashboard.c shows the dashboard in;
# postgresql, whose initdb makes the throwaway server of scripts/pg.sh;
# curl and procps (pgrep), what the chaos soak (scripts/soak.sh) drives
# serve with and finds its workers by.
# redis-server and libhiredis-dev: Redis, and the C client bench/cycle.c
# drives it with, beside ebb in the same run (bench/redis.h starts it);
# beanstalkd, the other queue bench/cycle.c measures ebb beside
# (bench/beanstalk.h starts it and speaks its protocol itself).
# clang and libclang-rt-14-dev (libFuzzer and clang's sanitizer runtimes)
# build the fuzz targets of tests/fuzz/ (make fuzz, make fuzz-check).
# mmdebstrap, e2fsprogs, fdisk, dosfstools, mtools, grub-pc-bin,
# grub-efi-amd64-bin and umoci build the workers' images
# (images/build.sh); systemd-container (systemd-nspawn) and iproute2 boot
# them in the boot test (tests/boot/run.sh), and qemu-system-x86 with ovmf
# (UEFI's firmware) boots the disk image whole in a virtual machine there.
# python3-venv, python3-setuptools and python3-wheel: the Python client's
# install into a venv with no network (pip install --no-build-isolation
# ./clients/python builds its wheel with them), which its tests do; mypy
# checks the client's types (--strict) in those tests (docs/PYTHON.md).
set -eu

PACKAGES="
build-essential
pkg-config
libsqlite3-dev
libpq-dev
libevent-dev
libmicrohttpd-dev
libgnutls28-dev
libjansson-dev
libinih-dev
libcurl4-openssl-dev
libcmocka-dev
openssl
jq
curl
procps
shellcheck
lintian
systemd
adduser
man-db
prometheus
chromium
postgresql
clang
libclang-rt-14-dev
redis-server
libhiredis-dev
beanstalkd
mmdebstrap
e2fsprogs
fdisk
dosfstools
mtools
grub-pc-bin
grub-efi-amd64-bin
umoci
systemd-container
iproute2
qemu-system-x86
ovmf
python3-venv
python3-setuptools
python3-wheel
mypy
"

missing=""
for pkg in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $pkg"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	SUDO=sudo
else
	SUDO=
fi
echo "deps: installing$missing" >&2
$SUDO apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
# The tests start their own Prometheus on loopback, in a temporary
# directory, and stop it. Where systemd runs, the package's maintainer
# scripts start and enable its own server (and, on :9090, keep it
# running): stop it and keep it from starting at boot.
for server in prometheus postgresql redis-server beanstalkd; do
	case " $missing " in
	*" $server "*)
		if [ -d /run/systemd/system ]; then
			$SUDO systemctl disable --now "$server.service" >/dev/null 2>&1 || true
		fi
		;;
	esac
done
