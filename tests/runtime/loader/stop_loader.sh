#!/bin/bash
# A rank stopped (SIGSTOP) mid-epoch: the survivors finish their epoch and then reach a
# collective of ingot's that the stopped rank never joins (the node window's MPI_Win_free in
# ingot_loader_destroy). Before the watchdog they spun there forever; now the arrival before it
# names the rank that never came (and its host) past INGOT_TIMEOUT, and the job ends (the
# stopped rank included). No peer cache here: nothing can ping it, so INGOT_TIMEOUT bounds it.
# usage: stop_loader.sh MPIEXEC INGOT_BENCH WORK_DIR
set -u
mpiexec=$1; bench=$2; work=$3/stop-loader
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
"$bench" --generate "$work/data" --samples 4096 --sample-size 16KiB --steps 1 --no-progress \
    > /dev/null || { echo "FAIL: dataset"; exit 1; }
start=$(date +%s.%N)
timeout -k 5 60 "$mpiexec" --oversubscribe -np 4 -x INGOT_TIMEOUT=5s "$bench" --no-progress \
    --manifest "$work/data/manifest.ingot" --batch 64 --epochs 3 --compute-ms 20 \
    > "$work/out" 2>&1 &
job=$!
# the ranks' run takes about 4 s of steps (3 epochs of 64 x 20 ms): stop one 0.5 s after its
# loader's reader threads are seen, whatever the launch and the loader's create took (a fixed
# pause after the process was seen stopped it mid-create on a busy machine, where the others
# wait in the create's collectives and the watchdog, not the destroy, ends the job)
victim=
for _ in $(seq 300); do
    victim=$(pgrep -f "^$bench --no-progress --manifest $work/data" | tail -1) # a rank
    [ -n "$victim" ] && grep -qs '^ingot-read' /proc/"$victim"/task/*/comm && break
    sleep 0.1
done
sleep 0.5
[ -n "$victim" ] && [ -d "/proc/$victim" ] || { echo "FAIL: no rank to stop"; cat "$work/out"; exit 1; }
victim_rank=$(tr '\0' '\n' < "/proc/$victim/environ" | sed -n 's/^OMPI_COMM_WORLD_RANK=//p')
kill -STOP "$victim"
wait $job
rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
cat "$work/out"
[ $rc -ne 124 ] || { echo "FAIL: the job hung (outer timeout)"; exit 1; }
[ $rc -ne 0 ] || { echo "FAIL: the job succeeded with a stopped rank"; exit 1; }
grep -q "loader destroy: manifest window: rank $victim_rank (host $(hostname -s)) never arrived: not there after 5.0 s (INGOT_TIMEOUT" \
    "$work/out" || { echo "FAIL: loader destroy did not name rank $victim_rank"; exit 1; }
[ "$(echo "$took < 20" | bc)" = 1 ] || { echo "FAIL: took $took s (bound 20 s)"; exit 1; }
echo "stopped rank at loader destroy: the job ended in $took s (exit $rc)"
