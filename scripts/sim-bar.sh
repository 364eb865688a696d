#!/bin/sh
# Issue 25's bar on the shared traces, as docs/SIMULATION.md states it:
# ebb and every baseline tuned on a trace's first half (`ebb tune --to
# HALF --wait-p95 240 --exhaustive`: the cheapest point of each family's
# sweep with a p95 wait within 240 s), all replayed on the second half;
# then `clairvoyant:wait=P` at ebb's p95 P there. At P, ebb's cost must
# close at least half of the gap between the best tuned baseline with a
# p95 no longer than P and that reference; where the reference costs as
# much as that baseline or more, ebb no more than the baseline; where the
# gap is under 4%, ebb within 2% of the baseline.
#
#   scripts/sim-bar.sh [CASE...]    CASE: genai-one genai-mix azure-one
#                                   azure-mix openb-one openb-mix (all)
#
# Prints a Markdown table, one row a case, and a last line "bar: N of M
# held"; the status is 0 when every case holds. EBB_BIN, EBB_TRACES as
# scripts/simulate.sh's.
set -eu
cd "$(dirname "$0")/.."
ebb=${EBB_BIN:-build/ebb}
traces=${EBB_TRACES:-../shared/traces}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

held=0 cases=0

# The baselines' tuned specs: each family's cheapest point within the
# target, the references (the clairvoyant with or without a wait, the
# bound) left out.
tuned_baselines() {
	jq -r '[.points[] | select(.family != "ebb" and (.family | startswith("clairvoyant") | not)
		and .family != "bound" and .wait_p95_s <= 240)] | group_by(.family)
		| map(min_by(.cost_usd)) | .[].policy' "$1"
}

bar() { # name, trace, filter, config, half
	name=$1 trace=$2 filter=$3 config=$4 half=$5
	"$ebb" tune "$trace" ${filter:+--filter "$filter"} --offers "$config" --to "$half" \
		--wait-p95 240 --exhaustive --write "$tmp/tuned.conf" --json >"$tmp/tune.json"
	cat "$config" "$tmp/tuned.conf" >"$tmp/replay.conf"
	set -f # the specs are words, not patterns
	set --
	for spec in $(tuned_baselines "$tmp/tune.json"); do
		set -- "$@" --policy "$spec"
	done
	set +f
	"$ebb" sim "$trace" ${filter:+--filter "$filter"} --offers "$tmp/replay.conf" --from "$half" \
		--policy ebb "$@" --json >"$tmp/replay.json"
	p95=$(jq '.[] | select(.policy == "ebb") | .wait_p95_s | ceil' "$tmp/replay.json")
	"$ebb" sim "$trace" ${filter:+--filter "$filter"} --offers "$tmp/replay.conf" --from "$half" \
		--policy "clairvoyant:wait=$p95" --json >"$tmp/reference.json"
	jq -r -n --arg name "$name" --slurpfile r "$tmp/replay.json" --slurpfile c "$tmp/reference.json" '
		($r[0] | map(select(.policy == "ebb"))[0]) as $e
		| ($r[0] | map(select(.policy != "ebb" and .wait_p95_s <= $e.wait_p95_s)) | min_by(.cost_usd)) as $b
		| $c[0][0] as $k
		| if $b == null then
			"| \($name) | $\($e.cost_usd * 100 | round / 100) at \($e.wait_p95_s) s | none within \($e.wait_p95_s) s | $\($k.cost_usd * 100 | round / 100) | - | **holds** (no baseline waits as little) |"
		  else
			(($b.cost_usd - $e.cost_usd) / ($b.cost_usd - $k.cost_usd)) as $share
			| (($b.cost_usd - $k.cost_usd) / $b.cost_usd) as $gap
			| (if $k.cost_usd >= $b.cost_usd then $e.cost_usd <= $b.cost_usd
			   elif $gap < 0.04 then $e.cost_usd <= 1.02 * $b.cost_usd
			   else $share >= 0.5 end) as $ok
			| "| \($name) | $\($e.cost_usd * 100 | round / 100) at \($e.wait_p95_s) s | `\($b.policy)` $\($b.cost_usd * 100 | round / 100) at \($b.wait_p95_s) s | $\($k.cost_usd * 100 | round / 100) | \(if $k.cost_usd >= $b.cost_usd then "-" else "\($share * 1000 | round / 10)% of \($gap * 1000 | round / 10)%" end) | \(if $ok then "**holds**" else "**misses**" end) |"
		  end' | tee "$tmp/row"
	cases=$((cases + 1))
	if grep -q holds "$tmp/row"; then held=$((held + 1)); fi
}

g=$traces/alibaba_genai_sd_requests_days00-11.csv
a=$traces/azure_llm_requests_min00-29.csv
o=$traces/alibaba_openb_gpu_pods_days00-14.csv
[ $# -gt 0 ] || set -- genai-one genai-mix azure-one azure-mix openb-one openb-mix
echo "| trace, offers | ebb tuned | best tuned baseline within ebb's p95 | clairvoyant:wait at ebb's p95 | gap closed (of the baseline's cost) | bar |"
echo "|---|---|---|---|---|---|"
for c in "$@"; do
	case $c in
	genai-one) bar "genai, one offer" "$g" "" sim/a10g.conf 518400 ;;
	genai-mix) bar "genai, the mix" "$g" "" sim/mix.conf 518400 ;;
	azure-one) bar "azure, one offer" "$a" "" sim/a10g.conf 900 ;;
	azure-mix) bar "azure, the mix" "$a" "" sim/mix.conf 900 ;;
	openb-one) bar "openb, one offer" "$o" ran=1 sim/p4d.conf 648000 ;;
	openb-mix) bar "openb, the mix" "$o" ran=1 sim/mix8.conf 648000 ;;
	*) echo "sim-bar.sh: unknown case $c" >&2; exit 2 ;;
	esac
done
echo
echo "bar: $held of $cases held"
[ "$held" -eq "$cases" ]
