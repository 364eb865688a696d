#!/bin/bash
# bench/ha_chaos.sh [MINUTES]: the chaos run of issue 12. A throwaway
# PostgreSQL (scripts/pg.sh), three `ebb serve`s on it on loopback ports,
# all `active = on` (docs/HA.md: every serve answers, the one holding the
# lock leads); HA_MODE=standby makes them `standby = on` instead (one
# runs, two wait without listening). Three submitters (`ebb submit
# --server`) and the exec provider's workers (tests/exec/provider,
# launching real `ebb worker`s) are given all three addresses, each in
# its own order (from its own serve on, round to the first), so that the
# load is spread over the serves. Every 20 s the serve that answers GET
# /healthz as leader is killed with -9 and started again (a follower, or
# a standby); the takeover time is from the kill to a serve answering as
# leader, the scaler's from the kill to the new leader's first call to
# the provider (its first run lists the fleet). After MINUTES (default
# 7: 21 kills) the submitters stop, the queue and the fleet drain, and
# the checks of scripts/soak_checks.sh run, with these: no acknowledged
# complete lost (the job ran again, or did not end succeeded), no stale
# complete accepted (a complete serve took from a run other than the
# job's last lease), no instance launched twice or left running, never
# two leaders, every active serve answering before each kill, no error
# in the serves' logs nor in PostgreSQL's, no 5xx reply. Prints a Markdown section for docs/BENCHMARKS.md
# on stdout (progress on stderr) and exits 0 only if every check held.
# Needs curl, jq, flock, PostgreSQL 15. CHAOS_KEEP=1 keeps the work
# directory; CHAOS_KILL_EVERY=SECONDS (20); CHAOS_SECONDS=N runs N
# seconds instead of MINUTES (a short run).
set -u
mins=${1:-7}
mode=${HA_MODE:-active}
every=${CHAOS_KILL_EVERY:-20}
secs=${CHAOS_SECONDS:-}
if ! [[ "$mins$every$secs" =~ ^[0-9]+$ ]] || [ "$every" -eq 0 ] || [ "${secs:-$((mins * 60))}" -lt "$every" ]; then
	echo "usage: bench/ha_chaos.sh [MINUTES]: whole minutes; CHAOS_SECONDS and CHAOS_KILL_EVERY whole seconds, one kill at least" >&2
	exit 2
fi
[[ "$mode" =~ ^(active|standby)$ ]] || { echo "bench/ha_chaos.sh: HA_MODE is active or standby, not $mode" >&2; exit 2; }
secs=${secs:-$((mins * 60))}
cd "$(dirname "$0")/.." || exit 2
src=$PWD
export EBB_BIN=${EBB_BIN:-$src/build/ebb}
W=$(mktemp -d /tmp/ebb-chaos.XXXXXX)
P=$W name=chaos
: >"$W/violations"
checks=0 lease_timeout=10

# shellcheck source=scripts/soak_checks.sh
. "$src/scripts/soak_checks.sh"

now() { date +%s; }
ms() { echo $(($(date +%s%N) / 1000000)); }
note() { printf 'chaos: %s\n' "$*" >&2; }
violation() { note "VIOLATION: $*"; echo "$*" >>"$W/violations"; }
check() { checks=$((checks + 1)); }

# Is pid $1 an `ebb worker` that runs (not one whose pid went to another
# process since, nor a zombie)?
is_worker() {
	[ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)" != Z ] &&
		tr '\0' ' ' <"/proc/$1/cmdline" | grep -q ' worker '
}

declare -a pids=(0 0 0) ports=()
cleanup() {
	local p
	for p in "${pids[@]}"; do [ "$p" != 0 ] && kill -9 "$p" 2>/dev/null; done
	for p in "$W"/provider/inst/*; do
		[ -f "$p" ] && p=$(cut -d' ' -f2 "$p") && is_worker "$p" && kill -9 "$p"
	done
	jobs -p | xargs -r kill 2>/dev/null
	kill_job_groups
	wait 2>/dev/null
	if [ -n "${pgdir:-}" ]; then
		cp "$pgdir/server.log" "$W/postgres.log" 2>/dev/null
		scripts/pg.sh stop "$pgdir"
	fi
	[ "${CHAOS_KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT

api() { curl -s -m 5 "$@"; }
# The role the serve of index $1 answers GET /healthz with, or nothing.
role() { api "http://127.0.0.1:${ports[$1]}/healthz" | jq -r .role 2>/dev/null; }
# The index of the serve that answers as leader now (its name is s and
# the index), or nothing; two at once is a violation. One curl for the
# three, for a takeover timed closer.
leader() {
	local found urls=("${ports[@]/#/http://127.0.0.1:}")
	found=$(api "${urls[@]/%//healthz}" | jq -r 'select(.role == "leader") | .serve[1:]' 2>/dev/null)
	[ "$(wc -w <<<"$found")" -gt 1 ] && violation "two serves answer as leader at once: s${found//$'\n'/, s}"
	echo "${found%%$'\n'*}"
}
# GETs from whichever serve leads.
get() { local i; i=$(leader) && [ -n "$i" ] && api "http://127.0.0.1:${ports[$i]}$1"; }
# The serves' addresses from the one of index $1 on, round to the first:
# each client its own order, as a client goes to the first that answers.
servers_from() {
	local i list=
	for i in 0 1 2; do list="$list,http://127.0.0.1:${ports[($1 + i) % 3]}"; done
	echo "${list:1}"
}
submit_job() { printf '%s\n' "$1" | "$EBB_BIN" submit --server "$order" --jobs - 2>>"$W/submit.log"; }

free_port() {
	local port=$((RANDOM % 20000 + 30000))
	while grep -qi ":$(printf %04X $port) 00000000:0000 0A" /proc/net/tcp || [[ " ${ports[*]} " == *" $port "* ]]; do
		port=$((RANDOM % 20000 + 30000))
	done
	echo "$port"
}

# Disowned: its kill -9 is the point, not news for the shell to print.
start_serve() {
	"$EBB_BIN" serve -c "$W/s$1/ebb.conf" 2>>"$W/s$1/serve.log" &
	pids[$1]=$!
	disown "${pids[$1]}"
}

bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$bin/initdb" ] || { note "no PostgreSQL 15 (scripts/deps.sh installs it)"; exit 2; }
pgdir=$(scripts/pg.sh start) || exit 2
"$bin/psql" -q "$(scripts/pg.sh url "$pgdir") dbname=postgres" -c "CREATE DATABASE chaos" >/dev/null || exit 2
pgurl="$(scripts/pg.sh url "$pgdir") dbname=chaos"
for i in 0 1 2; do ports[i]=$(free_port); done
export EBB_TEST_PROVIDER_DIR=$W/provider
mkdir -p "$EBB_TEST_PROVIDER_DIR"
# The tests' provider behind a shim: each call logged with the time and
# the serve that made it (its parent), and each worker given the list of
# [provider] server_url from its own place in it (its instance id's).
cat >"$W/provider.sh" <<EOF
#!/bin/sh
echo "\$(date +%s%3N) \$PPID \$1" >>"$W/provider/calls.ms"
jq -c 'if .worker then (.worker.env.EBB_SERVER | split(",")) as \$s | (.instance % (\$s | length)) as \$k
	| .worker.env.EBB_SERVER = (\$s[\$k:] + \$s[:\$k] | join(",")) else . end' | exec "$src/tests/exec/provider" "\$@"
EOF
chmod +x "$W/provider.sh"
for i in 0 1 2; do
	mkdir -p "$W/s$i/data"
	cat >"$W/s$i/ebb.conf" <<-EOF
	[server]
	listen = 127.0.0.1:${ports[$i]}
	name = s$i
	data_dir = $W/s$i/data
	log_level = warn
	[store]
	kind = postgres
	[postgres]
	url = $pgurl
	$mode = on
	[queue]
	lease_timeout = ${lease_timeout}s
	retry_base = 1s
	retry_max = 2s
	[lane.standard]
	wait_target = 1s
	[scaler]
	interval = 200ms
	max_instances = 3
	max_gpus = 3
	idle_timeout = 3s
	[provider]
	kind = exec
	orphan_timeout = 60s
	server_url = $(servers_from 0)
	[exec]
	command = $W/provider.sh
	timeout = 10s
	list_interval = 2s
	[offer.g1]
	price_ondemand = 1.37
	EOF
done

write_job
# Until "$@" holds, 30 s at most.
wait_until() {
	local deadline=$(($(now) + 30))
	until "$@"; do
		[ "$(now)" -lt "$deadline" ] || { note "not within 30 s: $*"; exit 2; }
		sleep 0.1
	done
}
answers() { [ -n "$(role "$1")" ]; }
leads() { [ -n "$(leader)" ]; }
start_serve 0
wait_until leads
start_serve 1
start_serve 2
# Active serves all listen before the clients come, as a client stays
# with the serve that answered it last.
if [ "$mode" = active ]; then
	wait_until answers 1
	wait_until answers 2
fi
note "3 $mode serves on ports ${ports[*]}; killing the leader every ${every}s for ${secs}s"
subs=()
for k in 0 1 2; do
	(order=$(servers_from "$k") && submitter "$W/acked.$k" "chaos-$k") &
	subs+=($!)
done

# "INDEX CODE COUNT" of the requests the serve of index $1 answered since
# it started, into $W/requests: before it is killed, and at the end.
count_requests() {
	api "http://127.0.0.1:${ports[$1]}/metrics" |
		awk -v i="$1" '/^ebb_http_requests_total\{/ {split($1, c, "\""); print i, c[2], $2}' >>"$W/requests"
}
: >"$W/requests"

# The ms from $1 to the first call to the provider by the serve of pid
# $2 (the shim's log), or nothing yet.
scaler_back() { awk -v t0="$1" -v pid="$2" '$1 >= t0 && $2 == pid {print $1 - t0; exit}' "$W/provider/calls.ms"; }

: >"$W/takeovers"
: >"$W/scaler"
# A kill every $every s on the clock, whatever the takeovers took: 7 min
# make 21 kills.
started=$(ms)
for k in $(seq $((secs / every))); do
	wait_ms=$((started + k * every * 1000 - $(ms)))
	[ "$wait_ms" -gt 0 ] && sleep "$((wait_ms / 1000)).$(printf %03d $((wait_ms % 1000)))"
	if [ "$mode" = active ]; then
		for i in 0 1 2; do
			check
			r=$(role "$i")
			[[ "$r" =~ ^(leader|follower)$ ]] || violation "s$i, active, answers GET /healthz with role '${r:-nothing}' before kill $k"
		done
	fi
	lead=$(leader)
	if [ -z "$lead" ]; then
		violation "no serve leads $every s after the last takeover"
		continue
	fi
	count_requests "$lead"
	t0=$(ms)
	kill -9 "${pids[$lead]}"
	next=
	while [ -z "$next" ] && [ $(($(ms) - t0)) -lt 30000 ]; do
		next=$(leader)
		[ -z "$next" ] && sleep 0.02
	done
	check
	if [ -z "$next" ]; then
		violation "no serve took over within 30 s of kill -9 of s$lead"
	else
		echo $(($(ms) - t0)) >>"$W/takeovers"
		note "s$lead killed; s$next leads after $(tail -n 1 "$W/takeovers") ms"
	fi
	start_serve "$lead" # a new follower, or standby
	if [ -n "$next" ]; then
		check
		until back=$(scaler_back "$t0" "${pids[$next]}") && [ -n "$back" ] || [ $(($(ms) - t0)) -ge 30000 ]; do
			sleep 0.05
		done
		if [ -z "$back" ]; then
			violation "s$next leads, but its scaler did not call the provider within 30 s of the kill"
		else
			echo "$back" >>"$W/scaler"
			note "s$next's scaler called the provider $back ms after the kill"
		fi
	fi
	check_final
done
touch "$W/stop-submitting"
wait "${subs[@]}"

# Drain: every job final and every instance terminated.
deadline=$(($(now) + 120))
while :; do
	pending=$(get /v1/stats | jq '.states.queued + .states.delayed + .states.leased')
	live=$(get /v1/fleet | jq '.instances | length')
	[ "$pending" = 0 ] && [ "$live" = 0 ] && break
	if [ "$(now)" -ge "$deadline" ]; then
		violation "at the end, $pending jobs not final and $live instances not terminated"
		break
	fi
	sleep 0.5
done
check_final
check_acked

# Completes, from the workers' logs in time order: per job, at most one
# acknowledged, from its last run started, and never a run after it; the
# job succeeded.
cat "$W"/provider/worker.*.log 2>/dev/null | grep -E 'msg="(job started|report acknowledged)"' | sort -s -k1,1 >"$W/runs"
check
awk '{
	job = ""; tok = ""; call = ""
	for (i = 1; i <= NF; i++) {
		if ($i ~ /^job=/) job = substr($i, 5)
		if ($i ~ /^lease_token=/) tok = substr($i, 13)
		if ($i ~ /^call=/) call = substr($i, 6)
	}
	if ($0 ~ /job started/) {
		if (acked[job]) print "job " job " ran again after an acknowledged complete"
		last[job] = tok
	} else if (call == "complete") {
		if (acked[job]) print "job " job ": a second complete accepted"
		else if (tok != last[job]) print "job " job ": a stale complete accepted (lease " tok ", last run " last[job] ")"
		acked[job] = 1
		print "ACKED " job
	}
}' "$W/runs" >"$W/completes"
grep -v '^ACKED ' "$W/completes" | while read -r l; do violation "$l"; done
completes=$(grep -c '^ACKED ' "$W/completes")
check
grep '^ACKED ' "$W/completes" | cut -d' ' -f2 >"$W/completed"
jq -r -s --rawfile ids "$W/completed" '(map({key: (.id | tostring), value: .state}) | from_entries) as $state
	| $ids | split("\n")[] | select(length > 0) | select($state[.] != "succeeded")
	| "job \(.): complete acknowledged, but \($state[.] // "gone")"' "$W/jobs" |
	while read -r l; do violation "$l"; done

# The fleet: no instance launched twice, none left running.
check
awk '$1 == "launch" {n[$2]++} END {for (i in n) if (n[i] > 1) print "instance " i " launched " n[i] " times"}' \
	"$W/provider/calls" | while read -r l; do violation "$l"; done
check
for f in "$W"/provider/inst/*; do
	[ -f "$f" ] || continue
	read -r inst pid <"$f"
	if is_worker "$pid"; then
		violation "instance $inst: its worker (pid $pid) still runs after the drain"
	fi
done

# The serves' and PostgreSQL's errors (a failed batch, a deadlock) and
# their 5xx replies: none is expected of a kill -9 of another serve.
check
grep -h 'level=error' "$W"/s?/serve.log >"$W/serve-errors"
grep -E '(ERROR|FATAL|PANIC):' "$pgdir/server.log" | sed 's/^/PostgreSQL: /' >>"$W/serve-errors"
while read -r l; do violation "logged: $l"; done <"$W/serve-errors"
check
for i in 0 1 2; do count_requests "$i"; done
awk '$2 ~ /^5/ {n[$1] += $3} END {for (i in n) print "s" i " answered " n[i] " requests with 5xx"}' "$W/requests" |
	while read -r l; do violation "$l"; done
# "N / N / N" requests answered by s0, s1, s2.
spread=$(awk '{n[$1] += $3} END {print n[0] + 0 " / " n[1] + 0 " / " n[2] + 0}' "$W/requests")

kills=$(wc -l <"$W/takeovers")
# "MEDIAN ms, max MAX ms" of the numbers in file $1.
median_max() {
	sort -n "$1" | awk '{v[NR] = $1} END {
		if (!NR) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) " ms, max " v[NR] " ms" }'
}
launches=$(grep -c '^launch ' "$W/provider/calls")
violations=$(sort -u "$W/violations" | wc -l)
count() { sort -u "$W/violations" | grep -cE "$1"; }
note "takeovers: $kills, median $(median_max "$W/takeovers"); the scaler's: median $(median_max "$W/scaler"); checks $checks, violations $violations"
cat <<EOF
## 9. Leader killed every ${every} s (bench/ha_chaos.sh)

Three \`ebb serve\`s on one PostgreSQL 15 (scripts/pg.sh), all \`$mode = on\`
([HA.md](HA.md)). Three submitters (\`ebb submit --server\`, idempotency keys,
retried until acknowledged) and the exec provider's workers run the soak's
jobs (scripts/soak_checks.sh: checkpoints, crashes, hangs, garbage on the
control fd); each is given the three addresses from its own serve on. Every
${every} s the serve answering \`GET /healthz\` as leader is killed with -9
and started again; ${secs} s, then a drain. Takeover: from the kill to a
serve answering as leader; the scaler back: to the new leader's first
call to the provider.

| | |
|---|---|
| kills | $kills |
| takeover, median | $(median_max "$W/takeovers") |
| scaler back, median | $(median_max "$W/scaler") |
| jobs acknowledged | $(wc -l <"$W/acked") |
| completes acknowledged | $completes |
| instances launched | $launches |
| acknowledged submits lost (not final, or gone) | $(wc -l <"$W/unfinished") |
| acknowledged completes lost (ran again, or not succeeded) | $(count 'after an acknowledged complete|complete acknowledged, but') |
| stale completes accepted | $(count 'stale complete|second complete') |
| jobs run twice at once | $(count 'runs twice at once') |
| instances launched twice, or left running | $(count 'launched [0-9]+ times|still runs after the drain|instances not terminated') |
| errors in the serves' and PostgreSQL's logs | $(wc -l <"$W/serve-errors") |
| requests answered by s0 / s1 / s2 | $spread |
| requests answered with 5xx | $(awk '$2 ~ /^5/ {n += $3} END {print n + 0}' "$W/requests") |
| violations of any check ($checks checks) | $violations |

EOF
[ "$violations" = 0 ]
