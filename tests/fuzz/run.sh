#!/bin/sh
# Runs each fuzz target in DIR (built by `make fuzz-targets
# SANITIZER=fuzzer`) for SECONDS, one after another: first over its seed
# corpus, tests/fuzz/corpus/NAME/ (the regressions: every input that
# once found a bug is there), then on new inputs, with its dictionary
# tests/fuzz/NAME.dict. New inputs are kept in
# build-fuzz/corpus/NAME/ (for the next run, not committed); an input
# that finds a bug goes to build-fuzz/crashes/. Ends with one line
# "N passed, M failed", a target that finds anything counting as failed.
# FUZZ_RUNS=N stops each target after N inputs, if that comes first.
#
#   tests/fuzz/run.sh build-fuzz/fuzz 60 [NAME...]
set -u
cd "$(dirname "$0")/../.." || exit 1
dir=$1
seconds=$2
shift 2
names=${*:-$(find tests/fuzz -maxdepth 1 -name '*.c' | sed 's|.*/||; s|\.c$||' | sort)}
work=build-fuzz
passed=0
failed=0
log=$(mktemp "${TMPDIR:-/tmp}/ebb-fuzz.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
trap 'exit 130' INT TERM

for name in $names; do
	bin=$dir/$name
	mkdir -p "$work/corpus/$name" "$work/crashes" "tests/fuzz/corpus/$name"
	echo "== fuzz $name, ${seconds}s"
	# -timeout: an input that takes a second is a hang; ASan's leak check
	# runs after each input that allocated more than it freed.
	"$bin" -max_total_time="$seconds" -runs="${FUZZ_RUNS:--1}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/crashes/$name-" -dict="tests/fuzz/$name.dict" "$work/corpus/$name" "tests/fuzz/corpus/$name" \
		>"$log" 2>&1
	rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
	units=$(find "$work/corpus/$name" -type f | wc -l)
	seeds=$(find "tests/fuzz/corpus/$name" -type f | wc -l)
	if [ "$rc" -eq 0 ]; then
		echo "$name: ${runs:-?} executions in ${took:-?} s, no finding (corpus: $seeds seeds, $units found)"
		passed=$((passed + 1))
	else
		# The report: from the sanitizer's or the target's first word on.
		first=$(grep -n -m1 -E 'promise broken|^==[0-9]+==|runtime error' "$log" | cut -d: -f1)
		sed -n "${first:-1},\$p" "$log" | head -n 60
		echo "$name: FAILED (exit $rc); the input is in $work/crashes/"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
