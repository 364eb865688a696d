#!/bin/sh
# Installs what is missing, builds, and runs every test three times: as
# built, under AddressSanitizer and under UndefinedBehaviorSanitizer; the
# store's and serve's tests once more against a throwaway PostgreSQL
# (make test-pg); each fuzz target over its corpus and a few seconds more
# (make fuzz-check); a 3-minute chaos soak (scripts/soak.sh, one test:
# every invariant held); 80 s of three serves on PostgreSQL with the
# leader killed every 20 s (bench/ha_chaos.sh, one test likewise); and
# the checks of the Debian package
# (scripts/test-package.sh); and the worker images built from it, booted
# as the clouds boot them (tests/boot/run.sh). Ends with one line "N
# passed, M failed" over all of it, after the time each part took.
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

# Runs one part: its output shown and logged, its summary line counted,
# its time noted (docs/BUILD.md; CI has 90 minutes for all of it).
times=""
part() {
	name=$1
	shift
	echo "== $name"
	started=$(date +%s)
	# The command's own status is lost in the pipe; the summary line tells.
	"$@" 2>&1 | tee "$log"
	count "$name"
	times="$times
$name: $(($(date +%s) - started)) s"
}

# A chaos run holds or not: one test. holds WHAT COMMAND...
# shellcheck disable=SC2317 # called through part()
holds() {
	what=$1
	shift
	if "$@"; then
		echo "1 passed, 0 failed"
	else
		echo "$what: an invariant did not hold"
		echo "0 passed, 1 failed"
	fi
}

part "tests" make -s -j2 test
part "tests under address sanitizer" make -s -j2 test SANITIZER=address
part "tests under undefined sanitizer" make -s -j2 test SANITIZER=undefined
part "tests against PostgreSQL" make -s -j2 test-pg
part "the fuzz targets over their corpora" make -s -j2 fuzz-check
part "the chaos soak, 3 minutes (docs/RELIABILITY.md)" holds "the chaos soak" ./scripts/soak.sh 180
part "the leader killed every 20 s, 80 s (docs/HA.md)" holds "the chaos run" env CHAOS_SECONDS=80 ./bench/ha_chaos.sh
part "the Debian package" ./scripts/test-package.sh
part "the cloud path, booted (docs/IMAGES.md)" ./tests/boot/run.sh
# docs/DEPLOY.md's sh blocks, in order, in a fresh Debian 12 booted with systemd (docs/BUILD.md).
part "the deployment guide, run as written" ./tests/deploy/run.sh
echo "== times$times"
echo "$passed passed, $failed failed"
exit $status
