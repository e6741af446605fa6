#!/usr/bin/env bash
# Collectives benchmarks (run by hand, not in ctest). Every figure is a ratio to a peer measured
# in the same run, median of REPS runs with min and max (these machines are noisy).
#
#   busbw    ingot-allreduce-bench on the MPI backend vs MPI_Allreduce on the same buffers in
#            the same process, 2 and 4 ranks, 1 MiB to 256 MiB, in and out of place, with
#            MALLOC_MMAP_MAX_=0 (the issue's reference) and without it    goal >= 0.95
#   small    8 B to 256 KiB at 2 ranks: latency, one run (no goal: the range buckets avoid)
#   modes    Open MPI's own flavours (blocking, MPI_Iallreduce, persistent MPIX_Allreduce_init)
#            in and out of place at 1 and 64 MiB, 2 and 4 ranks: why the backend runs a ring
#   overlap  4 ranks, ResNet-50's gradients in buckets, compute emulated as long as their
#            all-reduce alone: efficiency = max(compute, T_ar, ingest) / step, with the whole
#            compute making gradients ready (--forward 0) without and with a live loader (and
#            INGOT_INGEST_PACING), and with a forward third (bound 0.75)   goal >= 0.9
# usage: tests/perf/collectives_perf.sh BUILD_DIR [WORK_DIR] [section...]   env: REPS (3)
set -euo pipefail
build=$(realpath "$1"); work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-collperf.XXXXXX")}
shift $(( $# >= 2 ? 2 : 1 )); sections=${*:-"busbw small modes overlap"}
REPS=${REPS:-3}
bench=$build/apps/ingot-allreduce-bench
modes=$build/tests/mpi_allreduce_modes
mkdir -p "$work"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
run() ( # run NP [VAR=VALUE...] -- ARGS...: mpirun with the variables set for every rank only
    np=$1; shift; xs=()
    while [ "$1" != "--" ]; do export "${1?}"; xs+=(-x "${1%%=*}"); shift; done; shift
    mpirun --oversubscribe -np "$np" "${xs[@]}" "$@"
)
median() { python3 -c 'import sys, statistics as s; v=sorted(float(x) for x in sys.argv[1:]); print(f"{s.median(v):.3f} [{v[0]:.3f}-{v[-1]:.3f}]")' "$@"; }

echo "# collectives_perf $(date -u +%F) on $(hostname), $(nproc) cores; REPS=$REPS"
for section in $sections; do case $section in
busbw)
    for np in 2 4; do for mmap in 0 default; do
        env=(); [ $mmap = 0 ] && env=(MALLOC_MMAP_MAX_=0)
        for r in $(seq "$REPS"); do
            run $np "${env[@]}" -- "$bench" --backend mpi -b 1M -e 256M -f 4 -n 10 -w 2 \
                --json "$work/busbw-$np-$mmap-$r.json" > /dev/null
        done
        python3 - "$np" "$mmap" "$work"/busbw-$np-$mmap-*.json << 'PY'
import json, statistics, sys
np_, mmap, files = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = [json.load(open(f))["rows"] for f in files]
print(f"busbw {np_} ranks, MALLOC_MMAP_MAX_={mmap}: median [min-max] over {len(runs)} runs")
print(f"{'bytes':>10} {'ingot oop GB/s':>15} {'MPI oop':>8} {'ratio oop':>20} {'ingot ip':>9} {'MPI ip':>7} {'ratio ip':>20}")
for i, row in enumerate(runs[0]):
    def col(mode, key): return [r[i][mode][key] for r in runs]
    def m(v): return statistics.median(v)
    def mm(v): v = sorted(v); return f"{m(v):.2f} [{v[0]:.2f}-{v[-1]:.2f}]"
    print(f"{row['size']:>10} {m(col('out_of_place','busbw_gbs')):>15.2f} {m(col('out_of_place','mpi_busbw_gbs')):>8.2f} "
          f"{mm(col('out_of_place','ratio')):>20} {m(col('in_place','busbw_gbs')):>9.2f} {m(col('in_place','mpi_busbw_gbs')):>7.2f} "
          f"{mm(col('in_place','ratio')):>20}")
PY
    done; done ;;
small)
    run 2 -- "$bench" --backend mpi -b 8 -e 256K -f 8 -n 200 -w 20 | grep -v '^# [A-Z]' ;;
modes)
    for np in 2 4; do for bytes in 1048576 67108864; do run $np -- "$modes" $bytes 10; done; done ;;
overlap)
    data=$work/data
    [ -f "$data/manifest.ingot" ] || "$build/apps/ingot-bench" --generate "$data" --samples 4096 \
        --sample-size 110KiB --steps 1 --no-progress > /dev/null
    loader=(--manifest "$data/manifest.ingot" --batch 128)
    for cfg in "f0:--forward 0" "f0-loader:--forward 0 ${loader[*]}" \
               "f0-loader-paced:--forward 0 ${loader[*]}" "f33:--forward 0.333"; do
        name=${cfg%%:*}; read -r -a args <<< "${cfg#*:}"; effs=(); exps=(); tars=()
        env=(INGOT_INGEST_PACING=0); [ "$name" = f0-loader-paced ] && env=(INGOT_INGEST_PACING=200us)
        for r in $(seq "$REPS"); do
            run 4 "${env[@]}" -- "$bench" --overlap --steps 20 "${args[@]}" \
                --json "$work/overlap-$name-$r.json" > /dev/null
            read -r e x t b < <(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; print(s["efficiency"], s["exposed_stats_ms"], s["t_ar_ms"], s["efficiency_max"])' "$work/overlap-$name-$r.json")
            effs+=("$e"); exps+=("$x"); tars+=("$t")
        done
        echo "overlap $name (${cfg#*:}, ${env[*]}): efficiency $(median "${effs[@]}"), bound $b; exposed ms $(median "${exps[@]}"); T_ar ms $(median "${tars[@]}")"
    done ;;
*) echo "unknown section $section"; exit 2 ;;
esac; done
