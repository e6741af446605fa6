#!/bin/bash
# A rank that stops or dies around an all-reduce ends the job in bounded time, never a hang.
# usage: coll_fault.sh MPIEXEC TEST_ALLREDUCE_EXE MODE (test_allreduce's fault modes, 4 ranks,
# INGOT_TIMEOUT=5s; rank 3 stops (SIGSTOP) or kills itself right after its line "rank 3 (pid P):
# ... before the all-reduce", and each time is taken from that line, a point it reached by itself)
#   stop           the survivors' wait fails naming the reduction within [T - 1, T + 4] s, and
#                  they end the job (MPI_Abort)
#   stop-finalize  the same, then the survivors' MPI_Finalize cannot complete: the watchdog names
#                  it within 2T + 6 s, having waited (its own count) from T to T + 4 s
#   kill           the launcher says it ends the job within 10 s
# (T: INGOT_TIMEOUT. The slack covers ranks and the launcher's output forwarding held up on busy
# cores, and each upper bound allows for the time the whole machine stalled (wait.sh: stalled);
# a regression, a wait that never ends or ends at once, still fails.) The job's end is bounded
# only by the outer timeout, as a hang check: the launcher's start and its teardown of a stopped
# rank say nothing of ingot, and take seconds more on busy cores. Open MPI 4.1.4's mpiexec (PMIx
# 4.2.2) at times never returns from its own PMIx_server_finalize once an aborted job's ranks are
# all gone (about 1 job in 10 of stop-finalize under load; gdb: its main thread waits in
# PMIx_server_finalize, its PMIx event thread on a lock): what ingot owes is that every rank ends,
# so a launcher that outlives all its ranks by 10 s is ended here, and said so.
set -u
mpiexec=$1; exe=$2; mode=$3
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# shellcheck source=tests/common/wait.sh
. "$(dirname "$0")/../../common/wait.sh" # now, await_line, seconds_since, stall_watch
out=$(mktemp "${TMPDIR:-/tmp}/ingot-collfault.XXXXXX")
job=
stall_watch "$out.stalls"
trap '[ -z "$job" ] || kill "$job" 2> /dev/null; kill "$stall_watcher"; rm -f "$out" "$out.stalls"' EXIT
timeout_s=5 hang=120
export INGOT_TIMEOUT=${timeout_s}s
fail() { echo "FAIL ($mode): $*"; echo "--- output:"; cat "$out"; exit 1; }
in_range() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }
# await_after ERE: the time of the first line matching ERE, from t0, in $e, and how long the
# machine stalled meanwhile in $st (fails when the line never comes)
await_after() {
    await_line "$out" "$1" 60 "$job" || fail "no line matches '$1'"
    e=$(seconds_since "$t0" "$seen_at")
    st=$(stalled "$t0" "$seen_at")
}
# within WHAT LO HI: $e in [LO, HI + $st], else fail saying WHAT took $e s
within() {
    in_range "$e" "$2" "$(allowing "$t0" "$seen_at" "$3")" ||
        fail "$1 $e s after rank 3's line, not within [$2, $3] s (the machine stalled $st s)"
}

started=$(now)
timeout -k 5 $hang "$mpiexec" --oversubscribe -np 4 "$exe" "$mode" > "$out" 2>&1 &
job=$!
await_line "$out" "^rank 3 \(pid [0-9]+\): (stopping|killing myself) before the all-reduce" 60 \
    "$job" || fail "rank 3 never reached the all-reduce"
t0=$seen_at
case $mode in
stop | stop-finalize)
    await_after "all-reduce \(8388608 x float32 sum, request 0, mpi backend, 4 ranks\) not complete after $timeout_s\.0 s \(INGOT_TIMEOUT\)"
    within "the wait failed" $((timeout_s - 1)) $((timeout_s + 4))
    said="the wait failed after $e s"
    if [ "$mode" = stop-finalize ]; then
        await_after "watchdog: MPI_Finalize \(ingot_finalize\) on rank [0-2] .* has not returned after [0-9]+\.[0-9] s"
        within "the watchdog named MPI_Finalize" 0 $((2 * timeout_s + 6))
        for waited in $(grep -Eo "has not returned after [0-9]+\.[0-9] s" "$out" |
                        grep -Eo "[0-9]+\.[0-9]"); do # each survivor's own count of its wait
            in_range "$waited" $timeout_s "$(allowing "$t0" "$seen_at" $((timeout_s + 4)))" ||
                fail "the watchdog fired after its own $waited s, INGOT_TIMEOUT is $timeout_s s"
        done
        said="$said, the watchdog after $e s (its count: $waited s)"
    fi ;;
kill)
    # Open MPI 4 first says "... the job has been aborted"; its line naming the signal comes at
    # the end of its teardown
    await_after "the job has been aborted|exited on signal 9"
    within "the launcher said it ends the job" 0 10
    said="the launcher's word after $e s" ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
[ "$st" = 0.00 ] || said="$said (the machine stalled $st s)"

# the job's end: its launcher (timeout's child) returns, or outlives every rank by 10 s
ranks_gone() { # no child of the launcher $1 is alive (exited, or a zombie it never reaped)
    local p
    for p in $(pgrep -P "$1"); do
        [ "$(sed 's/.*) //' "/proc/$p/stat" 2> /dev/null | cut -d' ' -f1)" = Z ] || return 1
    done
}
launcher=$(pgrep -P "$job" | head -1) gone_by=
while [ -n "$launcher" ] && kill -0 "$launcher" 2> /dev/null; do
    if ! ranks_gone "$launcher"; then
        gone_by=
    elif [ -z "$gone_by" ]; then
        gone_by=$(in_seconds 10)
    elif ! before "$gone_by"; then
        echo "note: every rank ended, but mpiexec (pid $launcher) had not returned 10 s later" \
            "(Open MPI's own finalize); ended it"
        kill -KILL "$launcher"
        break
    fi
    sleep 0.2
done
rc=0; { wait $job; } 2> /dev/null || rc=$?; job=
[ "$rc" -ne 0 ] || fail "the job succeeded"
# 124, or 137 past the timeout (its -k): a killed rank 3 makes 137 of the job's own exit too
if [ "$rc" -eq 124 ] || [ "$(seconds_since "$started" | cut -d. -f1)" -ge $hang ]; then
    fail "the job hung: ended by the outer timeout after $hang s"
fi
case $mode in
stop) grep -q "ending the job (MPI_Abort)" "$out" || fail "no survivor ended the job" ;;
kill) grep -q "process rank 3 with PID .* exited on signal 9" "$out" ||
    fail "the launcher did not name rank 3's death" ;;
esac
echo "$mode: from rank 3's line, $said; the job ended after $(seconds_since "$t0") s (exit $rc)"
