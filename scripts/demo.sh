#!/bin/sh
# ebb's main job, end to end on this machine: installs what is missing,
# builds, starts `ebb serve` on the embedded defaults (SQLite in a fresh
# data directory) with the local provider, submits a burst of jobs, and
# shows workers start, drain the queue and switch themselves off.
set -eu
cd "$(dirname "$0")/.."
./scripts/deps.sh
make -s
ebb=$(pwd)/build/ebb

dir=$(mktemp -d)
trap 'kill "$serve" 2>/dev/null || true; rm -rf "$dir"' EXIT
cat > "$dir/ebb.conf" <<'CONF'
# The defaults (SQLite in ./ebb-data, listen 127.0.0.1:7070), plus a local
# fleet of up to 4 one-GPU workers released after 5 idle seconds.
[provider]
kind = local
[local]
gpus = 0,1,2,3
[scaler]
max_instances = 4
idle_timeout = 5s
interval = 500ms
[lane.standard]
wait_target = 5s
CONF
cd "$dir"
"$ebb" serve -c ebb.conf 2> serve.log &
serve=$!
export EBB_SERVER=http://127.0.0.1:7070
for _ in 1 2 3 4 5 6 7 8 9 10; do
	"$ebb" jobs > /dev/null 2>&1 && break
	sleep 0.2
done

echo "== submitting 16 jobs of 1 to 3 seconds"
for i in $(seq 1 16); do
	s=$(( i % 3 + 1 ))
	"$ebb" submit --items 10 --type demo -- sh -c \
		"for n in 1 2 3 4 5 6 7 8 9 10; do sleep 0.$s; echo progress \$n >&\$EBB_CONTROL_FD; done" > /dev/null
done
"$ebb" jobs | head -n 6
echo "..."

echo "== watching the fleet (the queue drains, then the idle workers are released)"
t=0
while [ $t -lt 90 ]; do
	queued=$("$ebb" jobs --state queued --json | grep -c '"id"' || true)
	running=$("$ebb" jobs --state leased --json | grep -c '"id"' || true)
	fleet=$("$ebb" fleet --json | grep -c '"state"' || true)
	printf 't=%2ds  queued=%-2s running=%-2s instances=%s\n' "$t" "$queued" "$running" "$fleet"
	[ "$queued" -eq 0 ] && [ "$running" -eq 0 ] && [ "$fleet" -eq 0 ] && [ $t -gt 0 ] && break
	sleep 1
	t=$((t + 1))
done

echo "== the scaler's decisions"
"$ebb" decisions --limit 8
echo "== the fleet"
"$ebb" fleet --all
