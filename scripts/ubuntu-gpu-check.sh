#!/bin/sh
# The packaged ebb on an Ubuntu machine with a GPU, once by hand (the
# device machines some sessions are lent; docs/DEPLOY.md, "Ubuntu and
# CUDA images"): its libraries as ldd finds them, then serve with the
# local provider on the machine's GPU 0 and one job that asks
# nvidia-smi what it sees. Run from the source tree, with the package's
# binary in build/deb/ebb (make deb) and, where the machine lacks them
# and reaches no mirror, libraries beside it in build/ubuntu-libs.
set -u
echo "== machine"; sed -n 1,2p /etc/os-release; nvidia-smi -L
B=$PWD/build/deb/ebb
# Ubuntu 24.04 packages these two too (libmicrohttpd12t64, libinih1); this
# machine has them not, and reaches no mirror: Debian 12's, beside.
export LD_LIBRARY_PATH="$PWD/build/ubuntu-libs"
echo "== libraries"; ldd "$B" | sed 's/ (0x.*//'
"$B" version || exit 1
D=$(mktemp -d)
cat > "$D/ebb.conf" <<EOF
[server]
listen = 127.0.0.1:17071
data_dir = $D/data
[provider]
kind = local
[local]
gpus = 0
[scaler]
max_instances = 1
idle_timeout = 3s
interval = 500ms
EOF
cd "$D" || exit 1
"$B" serve -c ebb.conf > serve.out 2> serve.log &
S=$!
export EBB_SERVER=http://127.0.0.1:17071
for _ in $(seq 50); do "$B" jobs >/dev/null 2>&1 && break; sleep 0.2; done
"$B" submit --gpus 1 -- sh -c 'echo "GPU seen by the job: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader) CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES"; echo progress 1 >&3'
for _ in $(seq 120); do "$B" job 1 | grep -q "succeeded\|failed" && break; sleep 0.5; done
echo "== job"; "$B" job 1
sleep 5
echo "== fleet"; "$B" fleet --all
kill $S; wait $S
echo "== job output (worker stdout)"; grep -a "GPU seen" serve.out serve.log
tail -5 serve.log
