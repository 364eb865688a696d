#!/bin/sh
# Builds the ebb Debian package from a built binary, with dpkg-deb alone:
#
#   packaging/build-deb.sh BINARY OUTDIR [PROVIDERS]
#
# BINARY is the ebb to package (make deb builds one with Debian's
# hardening flags); PROVIDERS is the folder of provider programs
# (default: providers, which may be missing). Prints the path of the
# package, OUTDIR/ebb_VERSION_ARCH.deb. docs/BUILD.md says why each step.
set -eu

[ $# -ge 2 ] || { echo "usage: $0 BINARY OUTDIR [PROVIDERS]" >&2; exit 2; }
binary=$1
outdir=$2
providers=${3:-providers}
src=$(cd "$(dirname "$0")/.." && pwd)
pkg=$src/packaging

# The upstream version is the one the binary reports; the Debian revision
# is the packaging's own, from the top entry of its changelog, which must
# be about this upstream version.
upstream=$("$binary" version | sed -n 's/^ebb //p')
version=$(dpkg-parsechangelog -l "$pkg/changelog" -S Version)
if [ "${version%-*}" != "$upstream" ]; then
	echo "build-deb: packaging/changelog's top entry is $version, but ebb is $upstream:" \
		"add an entry for $upstream-1 at its top" >&2
	exit 1
fi
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# dpkg-shlibdeps wants a source tree's shape: debian/control (it only
# checks that it is there) and the package under debian/PACKAGE.
mkdir "$work/debian"
: > "$work/debian/control"
root=$work/debian/ebb

install -d "$root/DEBIAN" "$root/usr/bin" "$root/etc/ebb" "$root/lib/systemd/system" \
	"$root/usr/share/doc/ebb/docs" "$root/usr/share/doc/ebb/examples"
# Stripped as dh_strip strips an executable; the debug information stays
# in the build's own binary.
install -m 0755 "$binary" "$root/usr/bin/ebb"
strip --remove-section=.comment --remove-section=.note "$root/usr/bin/ebb"

# Every file of providers/, by glob, so that programs added there are
# packaged without a change here: executables as 0755, the rest (a
# library the programs source) as 0644. Its folders are not packaged.
if [ -d "$providers" ]; then
	for f in "$providers"/*; do
		[ -f "$f" ] || continue
		mode=0644
		[ -x "$f" ] && mode=0755
		install -D -m "$mode" "$f" "$root/usr/lib/ebb/providers/${f##*/}"
	done
fi

# The example with every default, but for the data in the unit's
# StateDirectory. It already listens on loopback only, which serve
# requires with no token: the packaged file starts as it is.
sed 's|^data_dir = \./ebb-data$|data_dir = /var/lib/ebb|' "$src/ebb.conf.example" > "$root/etc/ebb/ebb.conf"
if ! grep -q '^data_dir = /var/lib/ebb$' "$root/etc/ebb/ebb.conf" ||
	! grep -q '^listen = 127\.0\.0\.1:' "$root/etc/ebb/ebb.conf"; then
	echo "build-deb: ebb.conf.example no longer has 'data_dir = ./ebb-data' and a loopback listen;" \
		"update the sed in $0" >&2
	exit 1
fi
chmod 0644 "$root/etc/ebb/ebb.conf"

install -m 0644 "$pkg/ebb-serve.service" "$pkg/ebb-worker.service" "$root/lib/systemd/system/"
# The worker container image's entrypoint (images/build.sh): in the
# package, so that an image built on another base gets it with ebb.
install -D -m 0755 "$pkg/worker-entrypoint" "$root/usr/lib/ebb/worker-entrypoint"

doc=$root/usr/share/doc/ebb
install -m 0644 "$pkg/copyright" "$doc/copyright"
gzip -9n < "$pkg/changelog" > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"
install -m 0644 "$src/README.md" "$doc/README.md"
install -m 0644 "$src"/docs/*.md "$doc/docs/"
install -m 0644 "$pkg/worker.env" "$doc/examples/worker.env"
install -m 0644 "$pkg/README.Debian" "$doc/README.Debian"

# ebb(1), written from the help of the binary packaged (scripts/man.sh),
# so it cannot drift from it, dated by the changelog's top entry, and
# gzipped as dh_installman and dh_compress would.
install -d "$root/usr/share/man/man1"
mandate=$(date -u -d "$(dpkg-parsechangelog -l "$pkg/changelog" -S Date)" +%Y-%m-%d)
"$src/scripts/man.sh" "$root/usr/bin/ebb" "$mandate" > "$work/ebb.1"
gzip -9n < "$work/ebb.1" > "$root/usr/share/man/man1/ebb.1.gz"
chmod 0644 "$root/usr/share/man/man1/ebb.1.gz"

install -m 0644 "$pkg/conffiles" "$root/DEBIAN/conffiles"
# For debsums and dpkg --verify; the conffile's sum dpkg keeps itself.
(cd "$root" && find usr lib -type f -exec md5sum {} + | sort -k 2) > "$root/DEBIAN/md5sums"
install -m 0755 "$pkg/postinst" "$pkg/prerm" "$pkg/postrm" "$root/DEBIAN/"

# ebb asks for jansson's functions by name alone, not by version (make
# deb links it against packaging/link-stub.sh's stub), which dpkg-shlibdeps
# takes for references it cannot resolve and for a library ebb does not
# use: those warnings are left out, the others printed (-v: each one; its
# debug lines go to standard output). Depends keeps libjansson4, with the
# version of its symbols file.
shlibs=$(cd "$work" && dpkg-shlibdeps -v -O debian/ebb/usr/bin/ebb 2> "$work/shlibdeps.log" |
	sed -n 's/^shlibs:Depends=//p')
grep -v -e 'unresolvable reference to symbol json_[a-z0-9_]*:' \
	-e 'could avoid a useless dependency .* against libjansson\.so\.4 ' "$work/shlibdeps.log" >&2 || true
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
grep -v '^#' "$pkg/control" | sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" \
	-e "s|@SHLIBS@|$shlibs|" -e "s|@SIZE@|$size|" > "$root/DEBIAN/control"

mkdir -p "$outdir"
deb=$outdir/ebb_${version}_$arch.deb
dpkg-deb --build --root-owner-group "$root" "$deb" > /dev/null
echo "$deb"
