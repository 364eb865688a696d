#!/bin/sh
# Writes an import stub of a shared library: the same soname and function
# names, empty bodies, no symbol versions. make deb links the package's
# ebb against it (its folder first in the linker's path), so that ebb
# asks for the library by soname and its functions by name alone, and
# runs with the real library, versioned or not.
#
#   packaging/link-stub.sh LIBRARY OUTDIR
#
# LIBRARY is the .so the linker would take (.../libjansson.so); the stub
# is OUTDIR/ that name. Why: jansson versions its symbols since 2.14
# (Debian 12's), and 2.13.1, Ubuntu 22.04's, has no versions. ebb linked
# against 2.14 asks for version libjansson.so.4 of each json_ function,
# and with 2.13.1 ld.so prints "libjansson.so.4: no version information
# available (required by ebb)" at each start of every command (it runs
# on). Linked against the stub, it asks for no version; glibc binds such a reference to the library's first version,
# as for a program linked before the library had versions, so Debian 12's
# jansson serves it as before. The package
# checks hold the result (scripts/check-ubuntu.sh), and docs/BUILD.md
# says more. A library that exports anything but functions is refused:
# a stub of functions cannot stand in for its data.
set -eu

[ $# -eq 2 ] || { echo "usage: $0 LIBRARY OUTDIR" >&2; exit 2; }
lib=$1
out=$2

soname=$(objdump -p "$lib" | awk '$1 == "SONAME" { print $2 }')
[ -n "$soname" ] || { echo "link-stub: $lib has no soname" >&2; exit 1; }
mkdir -p "$out"
# nm's types: T a function, A a version's own symbol; anything else (data,
# a weak or an indirect function) is refused.
nm -D --defined-only "$lib" | awk -v lib="$lib" '
	$2 == "A" { next }
	$2 != "T" { print "link-stub: " lib " exports " $3 ", not a plain function" > "/dev/stderr"; bad = 1; next }
	{ sub(/@.*/, "", $3); print "void " $3 "(void);"; print "void " $3 "(void) {}" }
	END { exit bad }' > "$out/stub.c"
${CC:-cc} -shared -fPIC -Wl,-soname,"$soname" -o "$out/${lib##*/}" "$out/stub.c"
