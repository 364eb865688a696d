#!/bin/bash
# scripts/soak.sh SECONDS: the chaos soak of docs/RELIABILITY.md. A real
# `ebb serve` runs real `ebb worker`s, a third of the time each: with the
# local provider, then the exec provider (tests/exec/provider), both on
# the SQLite store, whose data directory is a small tmpfs the script
# mounts (as root; without it, no full disk, and the report says so); then
# the exec provider on the PostgreSQL store, a throwaway server of
# scripts/pg.sh (without PostgreSQL 15 installed, that third is skipped
# and the report says so). Submitters send jobs with
# idempotency keys, retrying each until it is acknowledged; the jobs
# checkpoint, and some crash, hang past their timeout or write garbage to
# the control fd. Faults come at random: serve killed -9 and restarted,
# serve gone past orphan_timeout, spot reclaims (local provider), workers
# killed -9, a full disk (SQLite), the database server crashed and
# restarted (PostgreSQL), serve's clock jumped forward. Invariants are
# checked every round and at the end of each half; the run ends within
# SECONDS and exits 0 only if every one held. Needs curl, jq, flock.
# SOAK_KEEP=1 keeps the work directory (logs) to look at.
set -u
secs=${1:?usage: scripts/soak.sh SECONDS}
cd "$(dirname "$0")/.." || exit 2
src=$PWD
export EBB_BIN=${EBB_BIN:-$src/build/ebb}
W=$(mktemp -d /tmp/ebb-soak.XXXXXX)
: >"$W/violations"
start=$(date +%s)
declare -A faults=()
checks=0 acked_total=0 final_total=0 full_replies=0
orphan_timeout=4 lease_timeout=6

# shellcheck source=scripts/soak_checks.sh
. "$src/scripts/soak_checks.sh"

now() { date +%s; }
note() { printf 'soak: %s\n' "$*"; }
# Kept in a file: a violation found in a pipe's subshell counts too.
violation() { note "VIOLATION: $*"; echo "$*" >>"$W/violations"; }
check() { checks=$((checks + 1)); }
fault() { faults[$1]=$((${faults[$1]:-0} + 1)); }

cleanup() {
	[ -n "${spid:-}" ] && kill -9 "$spid" 2>/dev/null
	for p in $(workers); do kill -9 "$p" 2>/dev/null; done
	jobs -p | xargs -r kill 2>/dev/null
	kill_job_groups
	wait 2>/dev/null
	umount -l "$W"/*/data 2>/dev/null
	[ -n "${pgdir:-}" ] && scripts/pg.sh stop "$pgdir"
	[ "${SOAK_KEEP:-0}" = 1 ] || rm -rf "$W"
}
trap cleanup EXIT

# The live `ebb worker` processes of this serve (not zombies).
workers() {
	local p
	for p in $(pgrep -f "ebb worker --server ${url:-none}( |$)"); do
		case $(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -c1) in
		R | S | D) echo "$p" ;;
		esac
	done
}

api() { curl -s -m 5 "$@"; }
# Does serve keep a child longer than a call may last? A provider call
# under way (a list every 2 s) is no leak: each child now must be gone, or
# no longer serve's, within [exec] timeout (10 s) and a margin. Status 0:
# one stayed.
leaks_children() {
	local pid
	for pid in $(ps -o pid= --ppid "$1"); do
		for _ in $(seq 24); do
			[ "$(ps -o ppid= -p "$pid" | tr -d ' ')" = "$1" ] || continue 2
			sleep 0.5
		done
		return 0
	done
	return 1
}

fd_count() {
	local f=("/proc/$1/fd/"*)
	echo ${#f[@]}
}
get() { api "$url$1"; }
# Every instance, the terminated ones too, as one reply: the pages of
# GET /v1/fleet?all=1 followed to the last.
fleet_all() {
	local after=0 page
	while [ "$after" != null ]; do
		page=$(get "/v1/fleet?all=1&limit=1000&after=$after") || return
		printf '%s\n' "$page"
		after=$(jq '.next_after' <<<"$page")
	done | jq -s '{instances: [.[].instances[]]}'
}

submit_job() {
	local reply code
	reply=$(api -w '\n%{http_code}' -X POST "$url/v1/jobs" -d "$1")
	code=${reply##*$'\n'}
	case $code in
	200 | 201) printf '%s' "${reply%$'\n'*}" | jq .id ;;
	507) echo 507 >>"$W/full-replies"; return 1 ;;
	*) return 1 ;;
	esac
}

start_serve() {
	"$EBB_BIN" serve -c "$P/ebb.conf" --test-clock 2>>"$P/serve.log" &
	spid=$!
	# 30 s: the machine may be busy with anything else (docs/BUILD.md).
	for _ in $(seq 300); do
		api "$url/healthz" >/dev/null && fds0=$(fd_count "$spid") && return 0
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	violation "serve did not come back within 30 s: $(tail -n 1 "$P/serve.log")"
	return 1
}

# Every round: the fleet within its limits, final jobs final for good, no
# job run twice at once.
check_round() {
	local f n g
	f=$(get /v1/fleet) || return
	n=$(jq '[.instances[]] | length' <<<"$f") g=$(jq '[.instances[].gpus] | add // 0' <<<"$f")
	check
	if [ "$n" -gt 3 ] || [ "$g" -gt 3 ]; then violation "fleet over its limits: $n instances, $g GPUs"; fi
	check
	[ "$(workers | wc -l)" -le 4 ] || violation "$(workers | wc -l) worker processes for 3 instances at most"
	check_final
}

# kill -9 serve and wait past orphan_timeout: every worker must be gone.
serve_gone() {
	local t0
	t0=$(now)
	kill -9 "$spid"
	wait "$spid" 2>/dev/null
	while [ -n "$(workers)" ] && [ $(($(now) - t0)) -le $((orphan_timeout + 12)) ]; do sleep 0.5; done
	check
	[ -z "$(workers)" ] || violation "workers $(workers | tr '\n' ' ')outlived orphan_timeout ${orphan_timeout}s by 12 s"
}

inject() {
	local f
	case $((RANDOM % 6)) in
	0) fault "serve killed -9 and restarted"; kill -9 "$spid"; wait "$spid" 2>/dev/null; start_serve ;;
	1) fault "serve gone past orphan_timeout"; serve_gone; start_serve ;;
	2) if [ "$kind" = local ] && f=$(get /v1/fleet | jq -r '[.instances[] | select(.state == "busy") | .id] | .[0] // empty') && [ -n "$f" ]; then
		fault "spot reclaim"; api -X POST "$url/v1/fleet/$f/reclaim" >/dev/null
	   fi ;;
	3) f=$(workers | shuf -n 1); [ -n "$f" ] && { fault "worker killed -9"; kill -9 "$f"; } ;;
	4) if [ "$store" = postgres ]; then
		# immediate: no shutdown checkpoint, recovery at start, as after a crash
		fault "database server crashed and restarted"; scripts/pg.sh restart "$pgdir"
	   elif [ "$tmpfs" = 1 ]; then
		fault "data directory full"
		dd if=/dev/zero of="$P/data/filler" bs=64k 2>/dev/null
		sleep $((RANDOM % 3 + 1))
		rm -f "$P/data/filler"
	   fi ;;
	5) fault "serve's clock jumped forward"; api -X POST "$url/v1/admin/clock" -d "{\"advance_ms\": $((RANDOM % 2000 + 500))}" >/dev/null ;;
	esac
}

# After the faults: every acknowledged job final, once; items counted
# once; the ledger to the cent; serve's processes and fds.
check_end() {
	local deadline=$1 pending live fds
	while :; do
		pending=$(get /v1/stats | jq '.states.queued + .states.delayed + .states.leased')
		live=$(get /v1/fleet | jq '.instances | length')
		[ "$pending" = 0 ] && [ "$live" = 0 ] && break
		if [ "$(now)" -ge "$deadline" ]; then
			violation "$name: at the end, $pending jobs not final and $live instances not terminated"
			break
		fi
		sleep 0.5
	done
	check_acked
	acked_total=$((acked_total + $(wc -l <"$P/acked")))
	final_total=$((final_total + $(jq -s '[.[] | select(.state | test("succeeded|dead|failed|cancelled"))] | length' "$P/jobs")))
	check
	fleet_all >"$P/fleet"
	get "/v1/report" >"$P/report"
	jq -e --slurpfile f "$P/fleet" -n '
		def rule(o): {g1: [1000, 5000], m1: [60000, 0]}[o];
		[$f[0].instances[] | select(.terminated_at != null) | (((.terminated_at - .launched_at) * 1000 | round) as $life
			| rule(.offer) as $r
			| (if (.reason | startswith("launch failed")) then $life
			   else ((($life + $r[0] - 1) / $r[0] | floor) * $r[0]) | if . < $r[1] then $r[1] else . end end) as $billed
			| select(($billed - (.billed_s * 1000 | round) | fabs) > 1) | .id)] | length == 0' >/dev/null ||
		violation "$name: an instance billed other than its lifetime under its offer's rule"
	check
	# (with instances still up, the report counts to its own now: moot)
	if [ "$live" = 0 ] && ! jq -e --slurpfile f "$P/fleet" -n --slurpfile r "$P/report" '
		([$f[0].instances[] | (.billed_s / 3600 * (if .offer == "g1" then (if .market == "spot" then 0.41 else 1.37 end) else 2.11 end))] | add // 0) as $want
		| (($r[0].total.cost_usd - $want) | fabs) < 0.005' >/dev/null; then
		violation "$name: the ledger's total is not the sum of the instances' billed lifetimes to the cent"
	fi
	check
	fds=$(fd_count "$spid")
	[ "$fds" -le $((fds0 + 4)) ] || violation "$name: serve holds $fds fds, $fds0 when it started"
	check
	if leaks_children "$spid"; then
		violation "$name: serve has children left: $(ps -o pid=,stat=,args= --ppid "$spid" | head -3)"
	fi
	note "$name: $(wc -l <"$P/acked") jobs acknowledged, $(jq -s 'group_by(.state) | map("\(.[0].state) \(length)") | join(", ")' "$P/jobs"), $(jq '.instances | length' "$P/fleet") instances, \$$(jq .total.cost_usd "$P/report")"
}

# phase NAME PROVIDER STORE UNTIL DRAIN_BY
phase() {
	name=$1 kind=$2 store=$3
	local until=$4 drain_by=$5 storeconf=
	P=$W/$1
	mkdir -p "$P/data" "$P/provider"
	tmpfs=0
	mount -t tmpfs -o size=24m ebb-soak "$P/data" 2>/dev/null && tmpfs=1
	# a port no socket listens on (/proc/net/tcp lists them in hex)
	port=$((RANDOM % 20000 + 30000))
	while grep -qi ":$(printf %04X $port) 00000000:0000 0A" /proc/net/tcp; do port=$((RANDOM % 20000 + 30000)); done
	url=http://127.0.0.1:$port
	local provider="[local]
gpus = 0,1,2,3
reclaim_notice = 2s"
	[ "$store" = postgres ] && storeconf="[store]
kind = postgres
[postgres]
url = $pgurl"
	[ "$kind" = exec ] && provider="[exec]
command = $src/tests/exec/provider
timeout = 10s
list_interval = 2s"
	cat >"$P/ebb.conf" <<-EOF
	[server]
	listen = 127.0.0.1:$port
	data_dir = $P/data
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
	idle_timeout = 2s
	[provider]
	kind = $kind
	orphan_timeout = ${orphan_timeout}s
	reclaim_grace = 2s
	$provider
	[offer.g1]
	price_ondemand = 1.37
	price_spot = 0.41
	billing_minimum = 5s
	[offer.m1]
	price_ondemand = 2.11
	billing = per-minute
	billing_minimum = 0s
	$storeconf
	EOF
	export EBB_TEST_PROVIDER_DIR=$P/provider
	start_serve || return
	[ "$tmpfs" = 1 ] || note "$name: cannot mount a tmpfs (not root?): no full-disk faults"
	rm -f "$W/stop-submitting"
	submitter "$P/acked.a" "$name-a" &
	subs=($!)
	submitter "$P/acked.b" "$name-b" &
	subs+=($!)
	while [ "$(now)" -lt "$until" ]; do
		sleep $((RANDOM % 3 + 2))
		check_round
		[ "$(now)" -lt "$until" ] && inject
		kill -0 "$spid" 2>/dev/null || start_serve
	done
	touch "$W/stop-submitting"
	wait "${subs[@]}"
	check_round
	check_end "$drain_by"
	kill "$spid"
	wait "$spid" 2>/dev/null
	spid=
	[ -f "$W/full-replies" ] && full_replies=$(wc -l <"$W/full-replies")
}

# A database of its own on a throwaway server; pgurl, or 1 if none.
start_postgres() {
	local bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
	[ -x "$bin/initdb" ] || return 1
	pgdir=$(scripts/pg.sh start) || return 1
	pgurl="$(scripts/pg.sh url "$pgdir") dbname=soak"
	"$bin/psql" -q "$(scripts/pg.sh url "$pgdir") dbname=postgres" -c "CREATE DATABASE soak" >/dev/null
}

write_job
third=$((secs / 3))
drain=$((third * 3 / 5 < 45 ? third * 3 / 5 : 45))
phase local local sqlite $((start + third - drain)) $((start + third))
phase exec exec sqlite $((start + 2 * third - drain)) $((start + 2 * third))
if start_postgres; then
	phase postgres exec postgres $((start + secs - drain)) $((start + secs))
else
	note "postgres: no PostgreSQL 15 to start (scripts/deps.sh installs it): that third skipped"
fi
violations=$(sort -u "$W/violations" | wc -l)
note "ran $(($(now) - start)) s of $secs"
for f in "${!faults[@]}"; do note "fault: $f: ${faults[$f]}"; done
note "jobs acknowledged: $acked_total, final: $final_total; 507 replies to submits: $full_replies"
note "invariant checks: $checks, violations: $violations"
[ "$violations" = 0 ]
