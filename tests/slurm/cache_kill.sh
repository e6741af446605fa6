#!/bin/bash
# kill -9 of one rank mid-epoch under srun --kill-on-bad-exit=1 (run under cluster.sh): 4 ranks
# of tests/source/cache/test_cache with the peer cache, one killed in epoch 1; Slurm must end every
# survivor, and the step must end within the bound (10 s), with a non-zero status.
# usage: cluster.sh WORK -- cache_kill.sh TEST_CACHE
set -u
exe=${1:?usage: cache_kill.sh TEST_CACHE}
dir=$SLURM_CLUSTER_DIR/cache-kill
mkdir -p "$dir"
out=$dir/out
fail() { echo "--- output:"; cat "$out"; echo "FAIL: $*"; exit 1; }
export INGOT_CACHE_BYTES=67108864 INGOT_TIMEOUT=5s INGOT_PEER_TIMEOUT=2s
# the dataset first, so the timed run starts at once
timeout 120 srun --mpi=pmix -n 4 --overcommit "$exe" full "$dir" 0 > "$out" 2>&1 ||
    fail "making the dataset"
TEST_CACHE_STEP_MS=30 timeout 120 srun --mpi=pmix --kill-on-bad-exit=1 -n 4 --overcommit \
    "$exe" full "$dir" 0 > "$out" 2>&1 &
job=$!
pid=
for _ in $(seq 600); do
    pid=$(sed -n 's/^rank 2 pid \([0-9]*\) epoch 1 step 3$/\1/p' "$out" | head -1)
    [ -n "$pid" ] && break
    kill -0 $job 2> /dev/null || fail "the step ended before rank 2 reached epoch 1"
    sleep 0.05
done
[ -n "$pid" ] || fail "rank 2 never reached epoch 1"
kill -KILL "$pid"
t0=$(date +%s.%N)
rc=0
wait $job || rc=$?
e=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
echo "srun ended $e s after the kill, status $rc"
[ $rc != 0 ] && [ $rc != 124 ] || fail "status $rc: srun should end the step with an error"
awk -v e="$e" 'BEGIN { exit !(e < 10) }' || fail "took $e s"
echo "cache kill under srun --kill-on-bad-exit=1: ok"
