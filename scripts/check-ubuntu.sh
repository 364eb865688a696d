#!/bin/sh
# Checks that an ebb binary built on Debian 12 runs on Ubuntu 22.04 (jammy)
# and 24.04 (noble), the bases of NVIDIA's CUDA images, carried there as
# docs/DEPLOY.md section 6 says:
#
#   scripts/check-ubuntu.sh BINARY
#
# scripts/test-package.sh runs it on the packaged binary. It prints a line
# per library and exits 1 naming each problem, of three kinds:
#
# 1. A library that one of the releases lacks: every soname the binary
#    needs (its NEEDED entries) and every one it loads with dlopen (those
#    the sources pass to lazy_lib_load(), the only dlopen of src/) must be
#    in the table below.
# 2. A symbol version newer than jammy's library: GLIBC_x.y up to 2.35,
#    GNUTLS_3_x[_y] up to 3.7.3 (GnuTLS names each version after the
#    release that added it), and no other. A version asked of a library
#    that defines none, as Debian 12's jansson 2.14 has and Ubuntu 22.04's
#    2.13.1 lacks, has ld.so print "no version information available" at
#    each start (make deb links ebb against packaging/link-stub.sh's stub
#    of jansson so that it asks none).
# 3. A function newer than jammy's library: each function the binary
#    imports, or whose name it holds for a library it loads with dlopen
#    (dlsym), is looked up in the Debian symbols file of the library it
#    comes from, which gives the first version that has it
#    (dpkg-shlibdeps reads the same files); that version must be jammy's
#    or older. jansson's file is no help (2.14 versioned every symbol, and
#    its file marks them all 2.14): its functions are held to the list
#    that jansson 2.13.1 exports (upstream's src/jansson.def at tag
#    v2.13.1). Noble's libraries are all newer than jammy's, and a library
#    keeps what it exported under the same soname, so jammy's versions are
#    the ones to meet.
#
# Not checked: the behaviour of an older library (say, SQL that SQLite
# 3.37.2 lacks: serve on Ubuntu is not what this is for; the worker and the
# client commands use no SQLite), and the options set at run time
# (curl_easy_setopt's: the newest ebb uses is CURLOPT_XFERINFOFUNCTION,
# 7.32.0).
set -u
cd "$(dirname "$0")/.." || exit 1

if [ $# -ne 1 ] || [ ! -f "$1" ]; then
	echo "usage: $0 BINARY" >&2
	exit 2
fi
bin=$1

# soname, its Debian 12 package (whose symbols file this reads), and the
# package and upstream version in jammy and in noble (main or universe),
# from packages.ubuntu.com: the release pockets, not the updates, which
# only add fixes. Where the names differ, noble's have the t64 suffix of
# the 64-bit time_t transition (same soname). Those of noble that an
# Ubuntu 24.04.3 machine had installed were as here: libc6, libsqlite3-0,
# libevent-2.1-7t64, libgnutls30t64, libjansson4, libcurl4t64.
table='
libc.so.6           libc6           libc6            2.35          libc6               2.39
libm.so.6           libc6           libc6            2.35          libc6               2.39
libsqlite3.so.0     libsqlite3-0    libsqlite3-0     3.37.2        libsqlite3-0        3.45.1
libevent-2.1.so.7   libevent-2.1-7  libevent-2.1-7   2.1.12-stable libevent-2.1-7t64   2.1.12-stable
libmicrohttpd.so.12 libmicrohttpd12 libmicrohttpd12  0.9.75        libmicrohttpd12t64  1.0.0
libgnutls.so.30     libgnutls30     libgnutls30      3.7.3         libgnutls30t64      3.8.3
libjansson.so.4     libjansson4     libjansson4      2.13.1        libjansson4         2.14
libinih.so.1        libinih1        libinih1         53            libinih1            55
libcurl.so.4        libcurl4        libcurl4         7.81.0        libcurl4t64         8.5.0
libpq.so.5          libpq5          libpq5           14            libpq5              16
'
# jansson 2.13.1's functions.
jansson_2_13_1='
jansson_version_cmp jansson_version_str json_array json_array_append_new
json_array_clear json_array_extend json_array_get json_array_insert_new
json_array_remove json_array_set_new json_array_size json_copy
json_deep_copy json_delete json_dump_callback json_dump_file json_dumpb
json_dumpf json_dumpfd json_dumps json_equal json_false
json_get_alloc_funcs json_integer json_integer_set json_integer_value
json_load_callback json_load_file json_loadb json_loadf json_loadfd
json_loads json_null json_number_value json_object json_object_clear
json_object_del json_object_get json_object_iter json_object_iter_at
json_object_iter_key json_object_iter_next json_object_iter_set_new
json_object_iter_value json_object_key_to_iter json_object_seed
json_object_set_new json_object_set_new_nocheck json_object_size
json_object_update json_object_update_existing json_object_update_missing
json_object_update_recursive json_pack json_pack_ex json_real
json_real_set json_real_value json_set_alloc_funcs json_sprintf
json_string json_string_length json_string_nocheck json_string_set
json_string_set_nocheck json_string_setn json_string_setn_nocheck
json_string_value json_stringn json_stringn_nocheck json_true json_unpack
json_unpack_ex json_vpack_ex json_vsprintf json_vunpack_ex
'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
problems=0
problem() {
	echo "FAILED: $*"
	problems=$((problems + 1))
}
row() { printf '%s\n' "$table" | awk -v s="$1" '$1 == s'; }

# 1. The libraries: linked, and loaded with dlopen.
readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' > "$tmp/needed"
[ -s "$tmp/needed" ] || { echo "$bin: no NEEDED entries: not a dynamic ebb" >&2; exit 2; }
grep -rl 'dlopen(' src | grep -v '^src/common/lazy_lib\.c$' > "$tmp/other" &&
	problem "dlopen outside src/common/lazy_lib.c, in $(tr '\n' ' ' < "$tmp/other"): list what it loads here"
grep -rhoE 'lazy_lib_load\("[^"]+"' src | sed 's/.*("//; s/"$//' | sort -u > "$tmp/loaded"
[ -s "$tmp/loaded" ] || problem "no lazy_lib_load(\"SONAME\", ...) found in src/"
while read -r so; do
	grep -qaF "$so" "$bin" || problem "$bin does not hold the name $so, which src/ loads: not built from this tree?"
done < "$tmp/loaded"
sort -u "$tmp/needed" "$tmp/loaded" > "$tmp/libs"
while read -r so; do
	[ -n "$(row "$so")" ] ||
		problem "$so: not in the table of sonames that Ubuntu 22.04 and 24.04 both have; add it with its packages there (packages.ubuntu.com), or do not link it"
done < "$tmp/libs"

# 2. The symbol versions asked for, as FILE VERSION lines.
readelf -V "$bin" | awk '
	/^Version needs section/ { on = 1; next }
	/^Version (definition|symbols) section/ { on = 0 }
	on && / File: / { for (i = 1; i <= NF; i++) if ($i == "File:") file = $(i + 1) }
	on && / Name: / { for (i = 1; i <= NF; i++) if ($i == "Name:") print file, $(i + 1) }' > "$tmp/versions"
nm -D --undefined-only "$bin" | awk '{ print $NF }' > "$tmp/imports"
while read -r file ver; do
	case $file:$ver in
	libc.so.6:GLIBC_2.* | libm.so.6:GLIBC_2.*) have=2.35 want=${ver#GLIBC_} ;;
	libgnutls.so.30:GNUTLS_3_*) have=3.7.3 want=$(echo "${ver#GNUTLS_}" | tr _ .) ;;
	*) have='' want='' ;;
	esac
	if [ -z "$have" ] || ! dpkg --compare-versions "$want" le "$have"; then
		syms=$(grep "@$ver\$" "$tmp/imports" | sed 's/@.*//' | tr '\n' ' ')
		problem "$file: version $ver, which Ubuntu 22.04's library lacks${have:+ (it is $have)}, asked for by: $syms"
	fi
done < "$tmp/versions"

# 3. The functions, per library: imported (name, or name@VERSION), or
# looked up with dlsym (names in the binary's strings that the library
# exports).
strings -a "$bin" | sort -u > "$tmp/strings"
while read -r so; do
	# shellcheck disable=SC2046 # the row's six words
	set -- $(row "$so")
	[ $# -eq 6 ] || continue
	pkg=$2 jammy_pkg=$3 jammy=$4 noble_pkg=$5 noble=$6
	lib=$(dpkg -L "$pkg" 2> /dev/null | grep "/$so\$" | head -n 1)
	if [ -z "$lib" ]; then
		problem "$so: cannot find it in the Debian package $pkg here, to read its symbols"
		continue
	fi
	nm -D --defined-only "$lib" | awk '$2 != "A" { n = $3; sub(/@.*/, "", n); print n }' | sort -u > "$tmp/exports"
	if grep -qxF "$so" "$tmp/loaded"; then
		grep -xF -f "$tmp/exports" "$tmp/strings" > "$tmp/used"
	else
		awk 'NR == FNR { e[$1] = 1; next } { n = $1; sub(/@.*/, "", n) } n in e' "$tmp/exports" "$tmp/imports" > "$tmp/used"
	fi
	used=$(grep -c . "$tmp/used")
	if [ "$so" = libjansson.so.4 ]; then
		# shellcheck disable=SC2086 # a word a function
		printf '%s\n' $jansson_2_13_1 > "$tmp/old"
		newer=$(sed 's/@.*//' "$tmp/used" | grep -vxF -f "$tmp/old" | tr '\n' ' ')
		need="jansson 2.13.1's functions only"
	else
		symbols=$(dpkg-query --control-path "$pkg" symbols 2> /dev/null)
		if [ -z "$symbols" ]; then
			problem "$so: the Debian package $pkg has no symbols file to date its functions by"
			continue
		fi
		# NAME VERSION for each function used: that of name@version for
		# a versioned import, else of name@Base, else of each of the
		# name's versions (dlsym takes one of them).
		awk 'NR == FNR { if ($1 ~ /@/) { v[$1] = $2; n = $1; sub(/@.*/, "", n); all[n] = all[n] " " $2 } next }
			{ k = ($1 ~ /@/) ? $1 : $1 "@Base"; n = $1; sub(/@.*/, "", n)
			  if (k in v) print $1, v[k]
			  else if (n in all) { c = split(all[n], a, " "); for (i = 1; i <= c; i++) print $1, a[i] }
			  else print $1, "?" }' \
			"$symbols" "$tmp/used" > "$tmp/dated"
		newer=
		top=0
		awk '{ print $2 }' "$tmp/dated" | sort -u > "$tmp/dates"
		while read -r v; do
			if [ "$v" = "?" ]; then
				newer="$newer$(awk '$2 == "?" { printf "%s (not in %s) ", $1, f }' f="$symbols" "$tmp/dated")"
				continue
			fi
			if ! dpkg --compare-versions "$v" le "$jammy"; then
				newer="$newer$(awk -v v="$v" '$2 == v { printf "%s (%s) ", $1, v }' "$tmp/dated")"
			elif [ "$top" = 0 ] || dpkg --compare-versions "$v" gt "$top"; then
				top=$v
			fi
		done < "$tmp/dates"
		need="they need $top at most"
	fi
	if [ -n "$newer" ]; then
		problem "$so: newer than Ubuntu 22.04's $jammy_pkg $jammy: $newer"
	else
		echo "ok: $so: 22.04 $jammy_pkg $jammy, 24.04 $noble_pkg $noble; functions used: $used, $need"
	fi
done < "$tmp/libs"

[ "$problems" -eq 0 ] || { echo "$problems problems"; exit 1; }
echo "ok: the newest versions asked for: $(awk '$2 ~ /^GLIBC_/ { print $2 }' "$tmp/versions" | sort -V | tail -n 1) (22.04 has 2.35), $(awk '$2 ~ /^GNUTLS_/ { print $2 }' "$tmp/versions" | sort -V | tail -n 1) (22.04 has 3.7.3)"
