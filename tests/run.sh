#!/bin/sh
# Runs cmocka test binaries one after another, shows their output, and ends
# with one line "N passed, M failed" over all their test cases, which is
# what scripts/test.sh and CI read. Exit status 1 if anything failed.
#
#   EBB_BIN=build/ebb EBB_SRC=. tests/run.sh build/tests/test_*
#
# cmocka's own summary gives the counts. A binary that dies before it
# prints one (a crash, a sanitizer abort, the timeout below) counts every
# test it did not pass as failed; one that prints a clean summary but exits
# non-zero (LeakSanitizer reports at exit) counts one more failure.
set -u

timeout_s=${EBB_TEST_TIMEOUT:-180}
limit=$(command -v timeout) # coreutils; without it a hung test hangs the run
passed=0
failed=0
skipped=0
broken=""
out=$(mktemp "${TMPDIR:-/tmp}/ebb-run.XXXXXX") || exit 1
rcfile=$out.rc
trap 'rm -f "$out" "$rcfile"' EXIT INT TERM

# The N of the first line of $out that matches "PREFIX N test(s)", or empty.
count() {
	sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) test(s).*/\1/p" "$out" | head -n 1
}

# Lines of $out that start with the marker (individual test results).
lines() {
	grep -c "^\[$1\] " "$out"
}

for bin in "$@"; do
	name=$(basename "$bin")
	echo "== $name"
	if [ ! -x "$bin" ]; then
		echo "$name: not an executable file"
		failed=$((failed + 1))
		broken="$broken $name"
		continue
	fi
	# Kept in order: stdout and stderr into one stream, shown as it comes.
	{
		if [ -n "$limit" ]; then
			CMOCKA_MESSAGE_OUTPUT=stdout timeout -k 5 "$timeout_s" "$bin" 2>&1
		else
			CMOCKA_MESSAGE_OUTPUT=stdout "$bin" 2>&1
		fi
		echo $? >"$rcfile"
	} | tee "$out"
	rc=$(cat "$rcfile")
	p=$(count PASSED)
	f=$(count FAILED)
	s=$(count SKIPPED)
	if grep -q '^\[==========\] [0-9]* test(s) run\.' "$out" && [ -n "$p" ]; then
		f=${f:-0}
		s=${s:-0}
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			echo "$name: its tests passed but it exited with status $rc (a sanitizer report above?)"
			f=1
		fi
	else
		planned=$(sed -n 's/^\[==========\] Running \([0-9][0-9]*\) test(s)\..*/\1/p' "$out" | head -n 1)
		p=$(lines "       OK ")
		s=$(lines "  SKIPPED ")
		f=$((${planned:-1} - p - s))
		[ "$f" -ge 1 ] || f=1
		if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
			echo "$name: killed after ${timeout_s}s; $f test(s) counted as failed"
		else
			echo "$name: died with status $rc before its summary; $f test(s) counted as failed"
		fi
	fi
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	[ "$f" -eq 0 ] || broken="$broken $name"
done

echo
[ "$skipped" -eq 0 ] || echo "skipped: $skipped"
[ -z "$broken" ] || echo "failing:$broken"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
