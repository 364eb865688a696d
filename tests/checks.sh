# shellcheck shell=sh
# What the test scripts with a line per check share: scripts/test-package.sh,
# tests/boot/run.sh and tests/deploy/run.sh source it. pass and fail
# print a check and count it; finish ends the script with the line
# "N passed, M failed" that scripts/test.sh adds up, and its status;
# skip ends it with the reason nothing was checked; show prints the end
# of a file when a check failed; wait_for waits for a state.
# shellcheck disable=SC2034
passed=0
failed=0

pass() {
	echo "ok: $1"
	passed=$((passed + 1))
}

fail() {
	echo "FAILED: $1"
	failed=$((failed + 1))
}

finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

skip() {
	echo "skipped: $*"
	finish
}

# show WHAT FILE: the file's last 40 lines.
show() { echo "--- $1 (last 40 lines)"; tail -n 40 "$2" 2>/dev/null; echo "---"; }

# wait_for SECONDS COMMAND...: until COMMAND succeeds, looking again every
# half second; 1 if it never did.
wait_for() {
	until_s=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$until_s" ] || return 1
		sleep 0.5
	done
}
