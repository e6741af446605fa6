#!/bin/bash
# Faults of the peer cache, 4 ranks on one node (tests/source/cache/test_cache.c; INGOT_TIMEOUT=5s,
# INGOT_PEER_TIMEOUT=2s, but where said). usage: faults.sh MPIEXEC TEST_CACHE WORK_DIR CASE [TLS
# [PROTOCOL]]
# (PROTOCOL: INGOT_PEER_PROTOCOL, auto unless given; put makes owners write into the
# requesters' registered buffers, so a stopped owner's late write must be fenced off)
#   stop-storage TLS   rank 2 stopped (SIGSTOP) in epoch 1, then continued, under
#                      INGOT_PEER_FAILURE=storage: the job completes, every sample once,
#                      byte-identical; over tcp (INGOT_PEER_TIMEOUT=4s, INGOT_TIMEOUT=16s: a
#                      healthy rank's progress thread may miss 2 s on busy cores) each survivor
#                      names rank 2 within INGOT_PEER_TIMEOUT + 4 s of the stop, and no other
#                      rank, and reads its samples from storage (logged, counted); rank 2 is
#                      continued once all three have. Over shared memory it is stopped for 3 s
#                      and no read waits on it
#   stop-abort TLS     rank 2 stopped in epoch 1 and never continued, INGOT_PEER_FAILURE=abort:
#                      over tcp the job ends within the bound with an error naming rank 2; over
#                      shared memory a stopped owner stalls no read, and the job waits only in
#                      its next collective (continued after 4 s: completes)
#   stop-create        rank 2 stopped just before ingot_loader_create: the others end within
#                      INGOT_TIMEOUT plus a step, the watchdog naming the operation
#   stop-destroy       rank 2 stopped just before ingot_loader_destroy: the window free names it
#                      once it is silent for INGOT_PEER_TIMEOUT, and the job ends
#   stop-arrived       rank 2 stopped once it has arrived at the window free (fault site
#                      'arrival'): named as silent (abort), or the wait ends at INGOT_TIMEOUT
#                      naming nobody (storage)
#   kill TLS           rank 2 killed (SIGKILL) in epoch 1: the launcher says it aborts the job
#                      within 10 s of the kill, and ends the others (bounded only by the timeout)
#   corrupt            a damaged byte in every window: caught by the hash, served from storage
#   refused            a read past a window's end (active messages), or with put a write past
#                      the requester's registered buffer: the owner refuses it, the requester
#                      reads the samples from storage
#   bad-key            truncated memory keys: error naming the rank whose key is bad
#   small              a budget below one batch: error at create naming both sizes
#   memavail           windows over MemAvailable: error at create naming both sizes
#   unreachable        UCX_TLS=self: no transport reaches a peer: error naming rank, host, value
#   device             INGOT_CACHE_MEMORY=device: runs from GPU memory where a GPU and a CUDA
#                      UCX are present, else an error at create saying which is missing
#   fetch-device       INGOT_CACHE_FETCH=device: fetched into the GPU batch slot where a GPU
#                      and a CUDA UCX are present, else host memory with a warning saying why
# In stop-storage, stop-abort and kill, rank 2 stops itself mid-epoch (TEST_CACHE_STOP_RANK): the
# times are taken from when it is seen stopped, a point it reached by itself (a stop sent on
# seeing its line came late on busy cores, where it had run on, or even finished).
set -u
mpiexec=$1; exe=$2; case=$4; tls=${5:-default}; proto=${6:-auto}
[ "$case" = refused ] && [ "$proto" = auto ] && proto=am # the owner's check, by default
work=$3/cache-fault-$case-${tls//,/_}-$proto
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
pid=
stall_watcher=
trap '[ -z "$pid" ] || kill -KILL "$pid" 2> /dev/null; [ -z "$stall_watcher" ] || kill "$stall_watcher"
      [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
out=$work/out
fail() { echo "--- output:"; cat "$out"; echo "FAIL ($case $tls): $*"; exit 1; }
env=(-x INGOT_TIMEOUT=5s -x INGOT_PEER_TIMEOUT=2s -x INGOT_CACHE_BYTES=67108864
     -x INGOT_PEER_PROTOCOL=$proto)
[ "$tls" = default ] || env+=(-x UCX_TLS=$tls)
mode=full
# shellcheck source=tests/common/wait.sh
. "$(dirname "$0")/../../common/wait.sh" # now, await_line, seconds_since, stall_watch
stall_watch "$work/stalls" # the timed cases allow for the time the whole machine stalled
# start the job in the background; $job is mpiexec's pid. The output is emptied first, here: the
# background job's own redirection may come after await has read the previous job's lines
start() {
    : > "$out"
    timeout 120 "$mpiexec" --oversubscribe -np 4 "${env[@]}" "$@" "$exe" $mode "$work" 0 \
        > "$out" 2>&1 &
    job=$!
}
# wait until rank 2 prints "$1"; sets $pid to its pid
await() {
    for _ in $(seq 600); do
        pid=$(sed -n "s/^rank 2 pid \([0-9]*\) $1\$/\1/p" "$out" | head -1)
        [ -n "$pid" ] && return 0
        kill -0 $job 2> /dev/null || fail "the job ended before rank 2 reached '$1'"
        sleep 0.05
    done
    fail "rank 2 never reached '$1'"
}
# start the job, rank 2 stopping itself right after "epoch 1 step 3"; returns once it is seen
# stopped, t0 then
start_stopped() {
    env+=(-x TEST_CACHE_STOP_RANK=2)
    start; await "epoch 1 step 3"
    await_stopped "$pid" 60 || fail "rank 2 (pid $pid) did not stop after its 'epoch 1 step 3'"
    t0=$seen_at
}
finish() { rc=0; wait $job || rc=$?; t_end=$(now); }
elapsed() { seconds_since "$1" "$t_end"; }
below() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a < b) }'; }
# run to completion (synchronously): rc
run() { start "$@"; finish; }
# the dataset once (so every case times only itself)
INGOT_CACHE_BYTES=67108864 timeout 60 "$mpiexec" --oversubscribe -np 4 "$exe" full "$work" 0 \
    > "$out" 2>&1 || fail "making the dataset"

case $case in
stop-storage)
    mode=fallback; [ "$tls" = tcp,self ] || mode=full
    env+=(-x INGOT_PEER_FAILURE=storage -x TEST_CACHE_STEP_MS=30)
    peer=2
    if [ "$tls" = tcp,self ]; then
        # continued, rank 2 finds that the homes which gave it up (put: and fenced it off) no
        # longer answer it: each costs it one INGOT_PEER_TIMEOUT before storage, and one step
        # may wait on all three in turn (CI saw a step wait on two, then time out at
        # INGOT_TIMEOUT=10s): INGOT_TIMEOUT is three peer timeouts and 4 s
        peer=4
        env=("${env[@]/#INGOT_PEER_TIMEOUT=2s/INGOT_PEER_TIMEOUT=${peer}s}")
        env=("${env[@]/#INGOT_TIMEOUT=5s/INGOT_TIMEOUT=$((3 * peer + 4))s}")
    fi
    start_stopped
    if [ "$tls" = tcp,self ]; then
        # each survivor reads rank 2's samples in every step left (a quarter of its slice): each
        # names it, once a read has waited INGOT_PEER_TIMEOUT. The last of them is timed
        for r in 0 1 3; do
            await_line "$out" "^\[[^]]*:$r\] .*cache: rank 2 .*did not answer" 60 "$job" ||
                { finish; fail "rank $r did not name rank 2 as silent"; }
        done
        e=$(seconds_since "$t0" "$seen_at") bound=$(allowing "$t0" "$seen_at" $((peer + 4)))
        kill -CONT "$pid"
    else
        sleep 3; kill -CONT "$pid"
    fi
    finish
    [ $rc = 0 ] || fail "exit $rc: the job should complete"
    grep -q "cache $mode: ok" "$out" || fail "no result line"
    if [ "$tls" = tcp,self ]; then
        grep -q "rank 2 .*did not answer within INGOT_PEER_TIMEOUT.*storage" "$out" ||
            fail "no message naming rank 2 and the storage policy"
        # by the survivors (rank 2 continued may name those that gave it up)
        ! grep -E "^\[[^]]*:[013]\] .*did not answer" "$out" | grep -v "rank 2 " ||
            fail "a healthy rank named as silent"
        grep -q "homes given up 1" "$out" || fail "rank 0 did not count rank 2 as given up"
        echo "every survivor named rank 2 within $e s of the stop (INGOT_PEER_TIMEOUT=${peer}s;" \
            "bound $bound s: INGOT_PEER_TIMEOUT + 4 s, plus what the machine stalled)"
        below "$e" "$bound" || fail "named after $e s"
    else
        ! grep -q "did not answer" "$out" || fail "a stopped owner stalled a shared-memory read"
    fi ;;
stop-abort)
    env+=(-x INGOT_PEER_FAILURE=abort -x TEST_CACHE_STEP_MS=30)
    start_stopped
    if [ "$tls" = tcp,self ]; then
        finish
        [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc: the job should end with an error"
        grep -q "rank 2 .*did not answer.*INGOT_PEER_FAILURE=abort" "$out" ||
            fail "no error naming rank 2"
        e=$(elapsed "$t0")
        echo "ended $e s after the stop (INGOT_PEER_TIMEOUT=2s)"
        below "$e" 20 || fail "took $e s"
        kill -KILL "$pid" 2> /dev/null
    else
        sleep 4; kill -CONT "$pid"; finish
        [ $rc = 0 ] || fail "exit $rc: shared-memory reads need no owner; the job should complete"
        ! grep -q "did not answer" "$out" || fail "a stopped owner stalled a shared-memory read"
    fi ;;
stop-create)
    env+=(-x TEST_CACHE_PAUSE_RANK=2)
    start; await "create"; kill -STOP "$pid"; t0=$(now); finish
    kill -KILL "$pid" 2> /dev/null
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc: the survivors should end"
    grep -q "watchdog" "$out" || fail "no watchdog message naming the operation"
    grep "watchdog" "$out" | head -2
    e=$(elapsed "$t0")
    echo "ended $e s after the stop (INGOT_TIMEOUT=5s)"
    below "$e" 20 || fail "took $e s" ;;
stop-destroy)
    # the cache's window free waits for every rank: one silent for INGOT_PEER_TIMEOUT (2 s) is
    # named, with its host, and the job ends (not the watchdog's anonymous INGOT_TIMEOUT)
    # timed from the stop to the line naming rank 2 (the launcher's teardown after it is bounded
    # only by the job's timeout: it says nothing of the cache)
    env+=(-x TEST_CACHE_PAUSE_RANK=2)
    start; await "destroy"; kill -STOP "$pid"; t0=$(now)
    named="cache: window free: rank 2 \(host $(hostname -s)\) never arrived: it did not answer for 2\.0 s \(INGOT_PEER_TIMEOUT\)"
    await_line "$out" "$named" 60 "$job" || { finish; fail "destroy did not name rank 2"; }
    e=$(seconds_since "$t0" "$seen_at")
    finish
    kill -KILL "$pid" 2> /dev/null
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc: the survivors should end"
    grep "never arrived" "$out" | head -1
    echo "named $e s after the stop, the job ended $(elapsed "$t0") s after it (INGOT_PEER_TIMEOUT=2s)"
    below "$e" 6 || fail "named after $e s" ;;
stop-arrived)
    # rank 2 stops (fault site 'arrival') once it has arrived at the window free: every rank
    # arrived, but they cannot leave together without it. Under abort it is named once silent
    # for INGOT_PEER_TIMEOUT; under storage (no liveness check) the wait ends at INGOT_TIMEOUT,
    # saying so and naming nobody (not rank 0, which was there)
    host=$(hostname -s)
    for policy in abort storage; do
        : > "$out"
        each=("${env[@]}" -x INGOT_PEER_FAILURE=$policy "$exe" $mode "$work" 0) # per app context
        timeout 120 "$mpiexec" --oversubscribe -np 2 "${each[@]}" \
            : -np 1 -x INGOT_FAULT=arrival:1:fail "${each[@]}" : -np 1 "${each[@]}" > "$out" 2>&1 &
        job=$!
        await "destroy"; t0=$(now)
        if [ $policy = abort ]; then
            want="cache: window free: rank 2 \(host $host\) arrived, then stalled the ranks leaving together: it did not answer for 2\.0 s \(INGOT_PEER_TIMEOUT\)"
            limit=6
        else
            want="cache: window free: every rank arrived, but the ranks could not leave together within 5\.[0-9] s \(INGOT_TIMEOUT\)"
            limit=9
        fi
        await_line "$out" "$want" 60 "$job" || { finish; fail "$policy: no line '$want'"; }
        e=$(seconds_since "$t0" "$seen_at")
        finish
        kill -KILL "$pid" 2> /dev/null
        [ $rc != 0 ] && [ $rc != 124 ] || fail "$policy: exit $rc: the job should end"
        ! grep -q "rank 0 (host $host) never arrived" "$out" || fail "$policy: rank 0 named"
        echo "$policy: said $e s after rank 2 reached destroy"
        below "$e" $limit || fail "$policy: said after $e s"
    done ;;
kill)
    # killed while stopped: certain to die mid-epoch. Timed from the kill to the launcher's
    # first word of it (Open MPI 4: "... the job has been aborted"; its line naming the rank's
    # signal comes at the end of its teardown, which only the job's timeout bounds)
    env+=(-x TEST_CACHE_STEP_MS=30)
    start_stopped; kill -KILL "$pid"; t0=$(now)
    await_line "$out" "the job has been aborted|exited on signal 9" 60 "$job" ||
        { finish; fail "the launcher did not say it ends the job"; }
    e=$(seconds_since "$t0" "$seen_at") bound=$(allowing "$t0" "$seen_at" 10)
    finish
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc: the launcher should end the job"
    grep -q "process rank 2 with PID .* exited on signal 9" "$out" ||
        fail "the launcher did not name rank 2's death"
    echo "the launcher ended the job $e s after the kill (bound $bound s: 10 s, plus what the" \
        "machine stalled; the job ended $(elapsed "$t0") s after it)"
    below "$e" "$bound" || fail "the launcher took $e s" ;;
corrupt)
    mode=fallback; env+=(-x INGOT_FAULT=cache_fill:1:EIO)
    run
    [ $rc = 0 ] || fail "exit $rc"
    grep -q "cache fallback: ok" "$out" || fail "no result line"
    grep -q "from the window of rank .* failed its content hash; read again from storage" "$out" ||
        fail "no message naming the sample and its home" ;;
refused)
    mode=fallback; env+=(-x INGOT_FAULT=peer_read:1:EIO)
    if [ "$proto" = put ]; then
        want="refused a put for rank [0-9]: .* outside its registered destination"
    else
        want="refused a read from rank .* outside this rank's window"
    fi
    run
    [ $rc = 0 ] || fail "exit $rc"
    grep -q "$want" "$out" || fail "no refusal by the owner"
    grep -q "cache fallback: ok" "$out" || fail "no result line" ;;
bad-key)
    env+=(-x INGOT_FAULT=peer_key:1:EIO)
    run
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc: a bad key must fail"
    grep -q "memory key of rank [0-9].s window .* fails its checksum" "$out" || fail "no error naming the rank" ;;
small)
    env=(-x INGOT_CACHE_BYTES=4096)
    run
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc"
    grep -q "INGOT_CACHE_BYTES=4096 gives each of the 4 ranks of the job a window of 1024 bytes, smaller than one batch" "$out" ||
        fail "no error naming both sizes" ;;
memavail)
    env=(-x INGOT_CACHE_BYTES=$((1 << 50)))
    run
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc"
    grep -q "would hold [0-9]* bytes of cache windows, more than its MemAvailable ([0-9]* bytes)" "$out" ||
        fail "no error naming both sizes" ;;
unreachable)
    env=(-x INGOT_CACHE_BYTES=67108864 -x INGOT_TIMEOUT=5s -x UCX_TLS=self)
    run
    [ $rc != 0 ] && [ $rc != 124 ] || fail "exit $rc"
    grep -q "cannot reach rank [0-9] on host .* with UCX_TLS=self" "$out" ||
        fail "no error naming the rank, its host and UCX_TLS" ;;
device)
    # INGOT_CACHE_MEMORY=device: where the placement has a GPU and UCX has CUDA, the cache
    # works from GPU memory (every check of mode full); otherwise a clear error at create
    env+=(-x INGOT_CACHE_MEMORY=device)
    run
    if [ $rc = 0 ]; then
        grep -q "cache full: ok" "$out" || fail "no result line"
        echo "device windows: ran (a GPU and a CUDA-enabled UCX are here)"
    else
        [ $rc != 124 ] || fail "it hung"
        grep -Eq "INGOT_CACHE_MEMORY=device: rank [0-9] \(host .*\) has no GPU in its placement|INGOT_CACHE_MEMORY=device needs a UCX built with CUDA; UCX [0-9.]* here has no CUDA memory type" "$out" ||
            fail "no error naming why device windows cannot be made"
    fi ;;
fetch-device)
    # INGOT_CACHE_FETCH=device with INGOT_VERIFY=off: where the loader delivers GPU batches and
    # UCX has CUDA, peers' bytes are fetched straight into the GPU batch slot (byte-identical:
    # every check of mode full); elsewhere host memory, warned with the reason
    env+=(-x INGOT_CACHE_FETCH=device -x INGOT_VERIFY=off)
    run
    [ $rc = 0 ] || fail "exit $rc"
    grep -q "cache full: ok" "$out" || fail "no result line"
    if grep -q "fetched bytes land in GPU memory (the batch slot): INGOT_CACHE_FETCH=device" "$out"; then
        grep -Eq "get into GPU memory [1-9]" "$out" || fail "no read went into GPU memory"
        echo "fetched into GPU memory: ran (a GPU and a CUDA-enabled UCX are here)"
    else
        grep -Eq "INGOT_CACHE_FETCH=device cannot be done here; fetched bytes land in host memory(: the loader delivers batches in host memory|, then copied to GPU [0-9]: UCX [0-9.]* here has no CUDA memory type)" "$out" ||
            fail "no warning naming why fetched bytes stay in host memory"
    fi ;;
*) echo "unknown case $case"; exit 2 ;;
esac
echo "cache fault $case ($tls): ok"
