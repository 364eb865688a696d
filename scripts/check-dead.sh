#!/bin/sh
# Lists the external functions of src/ that no other C file names: each is
# dead, or belongs to its own file and should be static. Exits 1 when there
# is one that scripts/check-dead.allow does not list, 0 otherwise; 2 when
# an object is missing. tests/unit/test_dead_code.c runs it, so that
# `make test` fails on one.
#
#   scripts/check-dead.sh [BUILD]     (BUILD: the build folder, default build)
#
# Run it in a source tree whose objects BUILD holds (make builds
# BUILD/src/FOLDER/NAME.o for each src/FOLDER/NAME.c). The functions a
# file defines are read from its object (nm: what the compiler made
# external, whatever macros or attributes say); the names a file uses
# are read from its text, every .c file under src/, tests/ and bench/,
# its comments, strings and character constants blanked first, so that a
# name in a comment or a message is no use. A function used only through
# a table or a pointer in another file is named there, and counts; so is
# one that a macro of a header calls (log_warn() calls log_event()): the
# headers' #define lines count as the files that use the macro.
set -u
build=${1:-build}
allow=scripts/check-dead.allow
defs=$(mktemp "${TMPDIR:-/tmp}/ebb-dead.XXXXXX") || exit 2
trap 'rm -f "$defs" "$defs.c" "$defs.found"' EXIT

for c in src/*/*.c; do
	o=$build/${c%.c}.o
	if [ ! -f "$o" ]; then
		echo "check-dead: $o is missing: build first (make)" >&2
		exit 2
	fi
	# -P: "NAME TYPE VALUE SIZE"; T: a function in the text section.
	nm -P -g --defined-only "$o" | awk -v file="$c" '$2 == "T" { print $1, file }' >>"$defs" || exit 2
done

find src tests bench -name '*.[ch]' | sort >"$defs.c" || exit 2
# One awk over all the files: a name counts whichever file names it.
awk -v defs="$defs" -v files="$defs.c" -v allow="$allow" '
BEGIN {
	while ((getline line < files) > 0)
		ARGV[ARGC++] = line
	while ((getline line < defs) > 0) {
		split(line, w, " ")
		def[w[1]] = w[2]
	}
	# NAME, then "# why" on the same line; blank and comment lines skipped.
	while ((getline line < allow) > 0) {
		sub(/#.*/, "", line)
		if (split(line, w, " ") >= 1)
			allowed[w[1]] = 1
	}
}
FNR == 1 { incomment = 0; indefine = 0 }
{
	# Of a header, only a #define and its continued lines.
	header = FILENAME ~ /\.h$/
	if (header && $0 ~ /^[ \t]*#[ \t]*define[ \t]/)
		indefine = 1
	scan = !header || indefine
	if (header)
		indefine = indefine && $0 ~ /\\$/

	# The line without its comments, strings and character constants.
	s = $0
	out = ""
	while (s != "") {
		if (incomment) {
			i = index(s, "*/")
			if (!i)
				break
			s = substr(s, i + 2)
			incomment = 0
			out = out " "
			continue
		}
		if (!match(s, /\/\*|\/\/|"|\047/)) {
			out = out s
			break
		}
		out = out substr(s, 1, RSTART - 1)
		tok = substr(s, RSTART, RLENGTH)
		s = substr(s, RSTART + RLENGTH)
		if (tok == "/*") {
			incomment = 1
		} else if (tok == "//") {
			break
		} else {
			# To the closing quote, past escaped ones.
			if (tok == "\"" ? match(s, /^([^"\\]|\\.)*"/) : match(s, /^([^\047\\]|\\.)*\047/))
				s = substr(s, RLENGTH + 1)
			else
				s = ""
			out = out " "
		}
	}
	while (scan && match(out, /[A-Za-z_][A-Za-z0-9_]*/)) {
		name = substr(out, RSTART, RLENGTH)
		out = substr(out, RSTART + RLENGTH)
		if ((name in def) && def[name] != FILENAME)
			used[name] = 1
	}
}
END {
	for (name in def) {
		if (!(name in used) && !(name in allowed))
			print def[name] ": " name
	}
}' >"$defs.found" || exit 2
found=$(sort "$defs.found")
if [ -n "$found" ]; then
	echo "check-dead: external functions that no other file names (delete them, or make them static;"
	echo "one that must stay goes in $allow, with why):"
	echo "$found"
	exit 1
fi
echo "check-dead: every external function of src/ is named by another file"
