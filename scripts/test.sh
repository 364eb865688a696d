#!/bin/sh
# Installs what is missing, builds, and runs every test three times: as
# built, under AddressSanitizer and under UndefinedBehaviorSanitizer.
# Ends with one line "N passed, M failed" over the three runs.
set -u
cd "$(dirname "$0")/.."
./scripts/deps.sh || exit 1

passed=0
failed=0
status=0
for san in "" address undefined; do
	echo "== tests${san:+ under $san sanitizer}"
	log=$(mktemp)
	make -s -j2 test ${san:+SANITIZER=$san} 2>&1 | tee "$log"
	# make's own status is lost in the pipe; the summary line tells.
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
	rm -f "$log"
	if [ -z "$line" ]; then
		echo "tests${san:+ under $san}: did not build or did not finish"
		failed=$((failed + 1))
		status=1
		continue
	fi
	p=${line%% passed*}
	f=${line#*, }
	f=${f%% failed}
	passed=$((passed + p))
	failed=$((failed + f))
	[ "$f" -eq 0 ] || status=1
done
echo "$passed passed, $failed failed"
exit $status
