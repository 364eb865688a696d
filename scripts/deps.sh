#!/bin/sh
# Installs the Debian packages ebb needs to build, test and benchmark,
# and only those that are missing, so a second run does nothing. The last
# three are for the package checks (scripts/test-package.sh): lintian;
# systemd for systemd-analyze; adduser, a dependency of the ebb package,
# for its dpkg -i (libcurl4 comes with libcurl4-openssl-dev).
set -eu

PACKAGES="
build-essential
pkg-config
libsqlite3-dev
libevent-dev
libmicrohttpd-dev
libgnutls28-dev
libjansson-dev
libinih-dev
libcurl4-openssl-dev
libcmocka-dev
openssl
jq
shellcheck
lintian
systemd
adduser
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
