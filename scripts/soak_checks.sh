# shellcheck shell=bash
# Sourced by scripts/soak.sh and bench/ha_chaos.sh: the job the
# submitters send, the submitters, the invariant checks on what serve
# says, and the end of the jobs left running. They use the caller's W (work directory), P (the phase's
# directory), name, and functions: get PATH (a GET to serve), submit_job
# BODY (prints the new job's id once acknowledged), check (counts a
# check) and violation MESSAGE.

# The job every submitter sends: items run 0.2 s each from the last
# checkpoint, under an exclusive lock on its job's lock file, which a
# second run of the same job at once cannot take.
write_job() {
	cat >"$W/job.sh" <<-EOF
	#!/bin/sh
	mode=\$1 n=\$2 fd=\$EBB_CONTROL_FD pos=\${EBB_CHECKPOINT:-0}
	exec 9>"$W/locks/\$EBB_JOB_ID"
	echo \$\$ >>"$W/pgids" # its process group, the worker's kill -9 or not
	if ! flock -n 9; then echo "job \$EBB_JOB_ID runs twice at once" >>"$W/violations.jobs"; exit 1; fi
	case \$mode in
	crash) kill -9 \$\$ ;;
	hang) exec sleep 3600 ;;
	garbage) head -c 300 /dev/urandom 9>&- >&\$fd; printf '\ncheckpoint\nprogress -4\nprogress x\n' >&\$fd ;;
	esac
	trap 'echo "checkpoint \$pos \$pos" >&\$fd; exit 0' TERM
	while [ \$pos -lt \$n ]; do
		sleep 0.2 9>&-
		pos=\$((pos + 1))
		echo "progress \$pos" >&\$fd
		[ \$((pos % 3)) -eq 0 ] && echo "checkpoint \$pos \$pos" >&\$fd
	done
	exit 0
	EOF
	mkdir -p "$W/locks"
}

# At the end: the process groups of this run's jobs that still run (a
# job whose worker was killed may leave a child behind, which would hold
# the caller's output open); a group id the machine has given to another
# process since is left alone.
kill_job_groups() {
	local g
	[ -f "$W/pgids" ] || return 0
	while read -r g; do
		pgrep -g "$g" -f "$W/job.sh|^sleep (3600|0\.2)$" >/dev/null && kill -9 -- "-$g" 2>/dev/null
	done <"$W/pgids"
}

# Submits until $W/stop-submitting exists: each job with its own key,
# sent again with the same key until acknowledged (submit_job BODY, the
# caller's, prints the id); "KEY ID" of each in $1.
submitter() {
	local out=$1 name=$2 n=0 key body id modes=(ok ok ok ok ok ok ok crash hang garbage)
	while [ ! -e "$W/stop-submitting" ]; do
		n=$((n + 1)) key=$name-$n
		mode=${modes[RANDOM % 10]}
		body=$(printf '{"command":["sh","%s","%s","%d"],"items":%d,"timeout_s":%d,"est_s":2,"max_attempts":2,"idempotency_key":"%s"}' \
			"$W/job.sh" "$mode" $((n % 8 + 3)) $((n % 8 + 3)) 5 "$key")
		until id=$(submit_job "$body") && [ -n "$id" ]; do sleep 0.3; done
		echo "$key $id" >>"$out"
		sleep 2
	done
}

# Final jobs stay final (their finished_at never changes), and no job ran
# twice at once (job.sh's lock).
check_final() {
	local f
	for f in succeeded dead; do
		get "/v1/jobs?limit=1000&state=$f" | jq -r '.jobs[] | "\(.id) \(.state) \(.finished_at)"' >>"$P/final-seen"
	done
	sort -u -o "$P/final-seen" "$P/final-seen"
	check
	awk '{n[$1]++} END {for (i in n) if (n[i] > 1) print i}' "$P/final-seen" | while read -r id; do
		echo "job $id changed after it was final" >>"$W/violations.final"
	done
	if [ -s "$W/violations.jobs" ] || [ -s "$W/violations.final" ]; then
		cat "$W/violations.jobs" "$W/violations.final" 2>/dev/null | sort -u | while read -r l; do violation "$l"; done
		: >"$W/violations.jobs"
		: >"$W/violations.final"
	fi
}

# At the end: every job into $P/jobs (a JSON object a line), the
# acknowledged submits of $P/acked.* into $P/acked; one job per key,
# every acknowledged job final, items counted once.
check_acked() {
	local keys
	: >"$P/jobs"
	local after=0 next
	while [ "$after" != null ]; do
		get "/v1/jobs?limit=1000&after=$after" >"$P/page"
		jq -c '.jobs[]' "$P/page" >>"$P/jobs"
		next=$(jq .next_after "$P/page" 2>/dev/null)
		# No page (serve gone): what was read is checked, not waited on.
		[ -n "$next" ] || { violation "$name: the jobs after $after could not be read"; break; }
		after=$next
	done
	cat "$P"/acked.* >"$P/acked"
	check
	keys=$(jq -s '[.[].idempotency_key] | length as $n | unique | length == $n' "$P/jobs")
	[ "$keys" = true ] || violation "$name: an idempotency key has two jobs"
	check
	jq -r -s --rawfile acked "$P/acked" '(map({key: .idempotency_key, value: .}) | from_entries) as $by
		| $acked | split("\n")[] | select(length > 0) | split(" ") as [$k, $id] | $by[$k] as $j
		| select($j == null or ($j.id | tostring) != $id or ($j.state | test("succeeded|dead|failed|cancelled") | not))
		| "job \($id) (\($k)): \($j.state // "lost")"' "$P/jobs" >"$P/unfinished"
	while read -r l; do violation "$name: acknowledged $l, not final"; done <"$P/unfinished"
	check
	jq -s -e '[.[] | select(.state == "succeeded" and .items_done != .items)] | length == 0' "$P/jobs" >/dev/null ||
		violation "$name: a succeeded job counted items other than its own: $(jq -c 'select(.state == "succeeded" and .items_done != .items) | {id, items, items_done}' "$P/jobs" | head -3)"
}
