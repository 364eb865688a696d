#!/bin/sh
# Runs ./scripts/test.sh while BUSY processes (default 2: one per core of
# the project's machines) keep the cores busy. The tests wait on state,
# never on the machine being idle, and this is how to see that they do.
# Passes test.sh's exit status through and ends with its
# "N passed, M failed" line, after one line with the time the run took.
#
#   ./scripts/test-busy.sh
#   BUSY=4 ./scripts/test-busy.sh
set -u
cd "$(dirname "$0")/.."

busy=${BUSY:-2}
case $busy in
'' | *[!0-9]*)
	echo "test-busy: BUSY must be a number of processes, not '$busy'" >&2
	exit 2
	;;
esac

log=$(mktemp "${TMPDIR:-/tmp}/ebb-busy.XXXXXX") || exit 1
pids=""
run=""
stop() {
	# The run is in a session of its own (below): pkill -s reaches every
	# process of it, timeout's process groups and the servers included.
	# Without procps, its process group at least.
	[ -z "$run" ] || pkill -TERM -s "$run" 2>/dev/null || kill -TERM "-$run" 2>/dev/null
	run=""
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill $pids 2>/dev/null
	pids=""
	rm -f "$log" "$log.rc"
}
trap stop EXIT
# A trapped signal exits, and the exit runs stop. The script waits with
# `wait`, which a trapped signal interrupts, so this happens at once.
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# Each loop also ends when this script is gone, so that not even a
# kill -9 of it leaves them spinning. kill is a shell builtin: no fork.
parent=$$
i=0
while [ "$i" -lt "$busy" ]; do
	sh -c 'while kill -0 "$1" 2>/dev/null; do :; done' busy "$parent" &
	pids="$pids $!"
	i=$((i + 1))
done
echo "test-busy: $busy busy processes:$pids"

start=$(date +%s)
# In the background, in a session of its own, so that a signal to this
# script stops the whole run at once (a foreground command would delay the
# trap until it ended). test.sh's status is lost in the pipe: it is kept
# in a file.
setsid sh -c '{ ./scripts/test.sh; echo $? >"$1.rc"; } 2>&1 | tee "$1"' run "$log" &
run=$!
wait "$run"
run=""
status=$(cat "$log.rc" 2>/dev/null || echo 1)
echo "test-busy: the run took $(($(date +%s) - start)) s with $busy busy processes"
# Again, as the last line, for whoever reads only that.
grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1
exit "$status"
