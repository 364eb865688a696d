#!/bin/sh
# Installs what is missing, builds, and runs every test three times: as
# built, under AddressSanitizer and under UndefinedBehaviorSanitizer; then
# runs each fuzz target over its corpus and a few seconds more (make
# fuzz-check, tests/fuzz/run.sh), and checks the Debian package
# (scripts/test-package.sh). Ends with one line "N passed, M failed" over
# all of it.
set -u
cd "$(dirname "$0")/.." || exit 1
./scripts/deps.sh || exit 1

passed=0
failed=0
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Adds the "N passed, M failed" line of the run logged in $log to the
# totals; a run without one did not build or did not finish: one failure.
count() {
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "$1: did not build or did not finish"
		failed=$((failed + 1))
		status=1
		return
	fi
	p=${line%% passed*}
	f=${line#*, }
	f=${f%% failed}
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -eq 0 ] || status=1
}

for san in "" address undefined; do
	echo "== tests${san:+ under $san sanitizer}"
	# make's own status is lost in the pipe; the summary line tells.
	make -s -j2 test ${san:+SANITIZER=$san} 2>&1 | tee "$log"
	count "tests${san:+ under $san}"
done
echo "== the fuzz targets over their corpora"
make -s -j2 fuzz-check 2>&1 | tee "$log"
count "the fuzz targets"
echo "== the Debian package"
./scripts/test-package.sh 2>&1 | tee "$log"
count "the package checks"
echo "$passed passed, $failed failed"
exit $status
