#!/usr/bin/env bash
# Before/after benchmark of a structural change (run by hand, not in ctest): two builds of the
# same configuration side by side, their runs interleaved (before, after, before, after...) so
# the machine's noise falls on both alike. Medians of REPS runs with min and max, and the ratio
# after/before of the medians (1.00: no change; issue 23 asks for no loss).
#
#   bench       ingot-bench, 4 ranks, 4096 samples of 110 KiB (440 MiB), 3 epochs, no compute:
#               samples/s summed over ranks, the peer cache off, and on (INGOT_CACHE_BYTES=
#               1GiB/node: epochs 1 and 2 read the ranks' windows)
#   allreduce   ingot-allreduce-bench on the MPI backend, 4 ranks, 1 MiB to 64 MiB (x8): the
#               average bus bandwidth, out of place and in place
# usage: tests/perf/layers_perf.sh BEFORE_BUILD AFTER_BUILD [WORK_DIR] [section...]
#        env: REPS (5)
set -euo pipefail
before=$(realpath "$1"); after=$(realpath "$2")
work=${3:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-layersperf.XXXXXX")}
shift $(( $# >= 3 ? 3 : 2 )); sections=${*:-"bench allreduce"}
REPS=${REPS:-5}
mkdir -p "$work"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# compare LABEL: the figures in $work/LABEL-{before,after}-*.txt, one number per file
compare() {
    python3 - "$1" "$work" << 'PY'
import glob, statistics as s, sys
label, work = sys.argv[1], sys.argv[2]
med = {}
for side in ("before", "after"):
    v = sorted(float(open(f).read()) for f in glob.glob(f"{work}/{label}-{side}-*.txt"))
    med[side] = s.median(v)
    print(f"  {label:<22} {side:<6} {s.median(v):10.2f} [{v[0]:.2f}-{v[-1]:.2f}] (n={len(v)})")
print(f"  {label:<22} after/before {med['after'] / med['before']:.3f}")
PY
}

echo "# layers_perf $(date -u +%F) on $(hostname), $(nproc) cores; REPS=$REPS"
echo "# before: $before"
echo "# after:  $after"
for section in $sections; do case $section in
bench)
    data=$work/data
    "$after/apps/ingot-bench" --generate "$data" --samples 4096 --steps 1 --no-progress > /dev/null
    for cache in off on; do
        env=(-x INGOT_CACHE_BYTES=0); [ $cache = on ] && env=(-x INGOT_CACHE_BYTES=1GiB/node)
        for r in $(seq "$REPS"); do for side in before after; do
            b=$before; [ $side = after ] && b=$after
            mpirun --oversubscribe -np 4 "${env[@]}" "$b/apps/ingot-bench" \
                --manifest "$data/manifest.ingot" --epochs 3 --no-progress \
                --json="$work/bench-$cache-$side-$r.json" > /dev/null
            python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["aggregate"]["samples_per_s"])' \
                "$work/bench-$cache-$side-$r.json" > "$work/bench_cache_$cache-$side-$r.txt"
        done; done
        compare "bench_cache_$cache"
    done ;;
allreduce)
    for r in $(seq "$REPS"); do for side in before after; do
        b=$before; [ $side = after ] && b=$after
        mpirun --oversubscribe -np 4 "$b/apps/ingot-allreduce-bench" --backend mpi \
            -b 1M -e 64M -f 8 -n 10 -w 2 --json "$work/ar-$side-$r.json" > /dev/null
        python3 - "$work/ar-$side-$r.json" "$work" "$side" "$r" << 'PY'
import json, statistics as s, sys
d = json.load(open(sys.argv[1]))
for mode in ("out_of_place", "in_place"):
    v = s.mean(row[mode]["busbw_gbs"] for row in d["rows"])
    open(f"{sys.argv[2]}/allreduce_{mode}-{sys.argv[3]}-{sys.argv[4]}.txt", "w").write(f"{v}\n")
PY
    done; done
    compare allreduce_out_of_place
    compare allreduce_in_place ;;
*) echo "unknown section '$section' (bench, allreduce)" >&2; exit 2 ;;
esac; done
