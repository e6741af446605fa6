#!/bin/bash
# A rank of a 4-rank ingot-bench or ingot-train stopped (SIGSTOP) in epoch 2 with the peer cache
# on and INGOT_PEER_FAILURE=abort: within INGOT_PEER_TIMEOUT plus a few seconds of the stop a
# message names the rank and its host (timed from the stop to that line: the launcher's teardown
# after it is bounded by the job's timeout only), and the job ends: ingot-bench through its own
# loader destroy, ingot-train in its next gradient reduction (which pings the ranks once it has
# waited a second, over the cache's transport).
# usage: peer_stop.sh MPIEXEC INGOT_BENCH INGOT_TRAIN INGOT_MANIFEST WORK_DIR CASE
#   tcp        ingot-bench with UCX_TLS=tcp,self: the next read needs the
#                                                      stopped rank: the cache's verdict (not the
#                                                      generic source timeout, though INGOT_TIMEOUT
#                                                      equals INGOT_PEER_TIMEOUT here) fails the
#                                                      step, and loader destroy names it at once
#   shm        ingot-bench with UCX_TLS=posix,cma,self: reads need nothing
#                                                      of the stopped rank (its window is mapped);
#                                                      the survivors run to the end and wait at
#                                                      destroy, where a rank silent for
#                                                      INGOT_PEER_TIMEOUT is named
#   storage    ingot-bench over tcp under INGOT_PEER_FAILURE=storage, the rank
#                                                      continued after 3 s: the job goes on and
#                                                      ends normally
#   train-tcp, train-shm   ingot-train (Fashion-MNIST; skipped without it) over each transport:
#                          the next step's reads (tcp), its reduction, or the MPI call of ingot's
#                          it waits in (the watchdog asks once it has waited a second) name the
#                          stopped rank
set -u
mpiexec=$1; bench=$2; train=$3; manifest_tool=$4; case=$6; work=$5/peer-stop-$case
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
pid=
trap '[ -z "$pid" ] || kill -KILL "$pid" 2> /dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
out=$work/out
fail() { echo "--- output:"; grep -v " INGOT info " "$out"; echo "FAIL ($case): $*"; exit 1; }
peer=3 # seconds
bound=$((peer + 4))
policy=abort; tls=tcp,self; timeout=$peer
case $case in
shm) tls=posix,cma,self; timeout=60 ;;
storage) policy=storage; timeout=60 ;;
train-tcp) timeout=60 ;;
train-shm) tls=posix,cma,self; timeout=60 ;;
esac
if [ "${case#train}" != "$case" ]; then
    [ -r /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz ] ||
        { echo "SKIP: dataset-fashion-mnist is not installed"; exit 77; }
    "$manifest_tool" pack --fashion-mnist -o "$work/fm" --split test > /dev/null ||
        fail "packing Fashion-MNIST"
    cmd=("$train" --model softmax --epochs 3 --train "$work/fm/manifest.ingot"
         --test "$work/fm/manifest.ingot")
else
    "$bench" --no-progress --generate "$work/data" --samples 1024 --sample-size 16KiB \
        --shard-size 1MiB --batch 64 > /dev/null 2>&1 || fail "generating the dataset"
    cmd=("$bench" --no-progress --manifest "$work/data/manifest.ingot" --batch 64 --epochs 3
         --compute-ms 20)
fi
env=(-x INGOT_CACHE_BYTES=64MiB -x INGOT_PEER_FAILURE=$policy -x INGOT_PEER_TIMEOUT=${peer}s
     -x INGOT_TIMEOUT=${timeout}s -x UCX_TLS=$tls -x INGOT_LOG_LEVEL=info)
# shellcheck source=tests/common/wait.sh
. "$(dirname "$0")/../../common/wait.sh" # now, await_line, seconds_since
timeout -k 5 120 "$mpiexec" --oversubscribe -np 4 "${env[@]}" "${cmd[@]}" > "$out" 2>&1 &
job=$!
# rank 2's pid from its log line once its epoch 2 (epoch 1, counted from 0) begins
epoch2='^\[[^:]*:([0-9]*):2\] INGOT info .*loader: epoch 1 begins'
await_line "$out" "$epoch2" 60 $job || fail "rank 2 never reached epoch 2 (or the job ended)"
pid=$(sed -En "s/$epoch2.*/\1/p" "$out" | head -1)
kill -STOP "$pid"; t0=$(now)
host=$(hostname -s)
if [ "$case" = storage ]; then
    sleep 3; kill -CONT "$pid"
else
    # the verdict: the first line naming rank 2, timed from the stop (the launcher's teardown
    # after it is bounded by the job's timeout only: it says nothing of ingot)
    await_line "$out" "rank 2 \(host $host\) (did not answer|never arrived|arrived, then stalled)" 110 $job ||
        fail "no line names rank 2"
    named=$(seconds_since "$t0" "$seen_at")
fi
rc=0; wait $job || rc=$?
echo "$case: the job ended $(seconds_since "$t0") s after the stop (exit $rc; INGOT_PEER_TIMEOUT ${peer} s)"
[ $rc != 124 ] || fail "the job hung"
if [ "$case" = storage ]; then
    [ $rc = 0 ] || fail "exit $rc: INGOT_PEER_FAILURE=storage should have gone on"
    grep -q "^     2 " "$out" || fail "no third epoch in the table"
    pid=; exit 0
fi
[ $rc != 0 ] || fail "the job succeeded"
echo "$case: rank 2 named $named s after the stop"
awk -v t="$named" -v b="$bound" 'BEGIN { exit !(t < b) }' ||
    fail "rank 2 was named $named s after the stop, over INGOT_PEER_TIMEOUT + 4 s = $bound s"
case $case in
tcp)
    grep -q "cache: rank 2 (host $host) did not answer a read of [0-9]* bytes within INGOT_PEER_TIMEOUT" \
        "$out" || fail "no rank named as silent by a read"
    ! grep -q "timed out (INGOT_TIMEOUT)" "$out" ||
        fail "the generic source timeout fired instead of the peer's verdict"
    ;;
shm)
    grep -q "cache: window free: rank 2 (host $host) never arrived: it did not answer for 3.0 s (INGOT_PEER_TIMEOUT)" \
        "$out" || fail "destroy did not name rank 2"
    ;;
train-*)
    # named by a read of the cache (tcp), by the next reduction, by the watchdog's liveness
    # check of an MPI call of ingot's, or by the window free of a loader's destroy (the test
    # loader made and destroyed for each epoch's evaluation; stopped before it arrived there, or
    # after, as the ranks leave together)
    grep -Eq "(rank 2 \(host $host\) did not answer a read|(a reduction|watchdog: .*) waited [0-9.]+ s, and rank 2 \(host $host\) did not answer for INGOT_PEER_TIMEOUT|window free: rank 2 \(host $host\) (never arrived|arrived, then stalled the ranks leaving together): it did not answer)" \
        "$out" || fail "no rank named"
    ! grep -q "not complete after 60.0 s (INGOT_TIMEOUT)" "$out" ||
        fail "the reduction waited INGOT_TIMEOUT"
    ;;
esac
! grep -q "watchdog: MPI_Barrier" "$out" || fail "the watchdog's wait, not the arrival's"
echo "ok: $(grep -m1 -E "did not answer|never arrived" "$out" | cut -c1-200)"
