#!/bin/sh
# ingot-allreduce-bench end to end over mpiexec, JSON parsed by $TEST_PYTHON (Debian's python3):
#  sweep    bad options exit 2 naming the option and the value; then 2 ranks, 8 B .. 1 MiB: one
#           row per size (factor 2), each checked ok (every element the exact sum), busbw =
#           algbw * 2(n-1)/n, a positive MPI reference and ratio
#  overlap  4 ranks, ResNet-50's gradients (161 tensors, 25,557,032 parameters), 3 steps: a row
#           per step, every bucket reduction of the steps completed, T_ar and efficiency > 0
# The backend is mpi: the program has host buffers only (nccl would skip with 77).
# usage: allreduce_bench.sh MPIEXEC INGOT_ALLREDUCE_BENCH MODE
set -eu
mpiexec=$1; bench=$2; mode=$3
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-arb.XXXXXX")
trap 'rm -rf "$dir"' EXIT
py=${TEST_PYTHON:-/usr/bin/python3}
run() { np=$1; shift; "$mpiexec" --oversubscribe -np "$np" "$bench" --backend mpi "$@"; }

bad() { # bad EXPECTED_TEXT ARGS...: exit status 2 and a message naming what was wrong
  want=$1; shift
  rc=0
  out=$("$bench" "$@" 2>&1) || rc=$?
  [ "$rc" = 2 ] || { echo "exit status $rc, not 2, for: $*"; exit 1; }
  echo "$out" | grep -qF -- "$want" || { echo "no '$want' in: $out"; exit 1; }
}

case "$mode" in
sweep)
  bad "-b '2' is smaller than one float32" -b 2
  bad "-e '1024' is smaller than -b '2048'" -b 2K -e 1K
  bad "-f '1' is below its minimum 2" -f 1
  bad "--backend 'gpu' is not one of auto, mpi, nccl" --backend gpu
  bad "need --overlap" --steps 3
  run 2 -b 8 -e 1M -n 3 -w 1 --json "$dir/r.json"
  $py - "$dir/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ranks"] == 2 and d["mode"] == "sweep" and d["backend"] == "mpi", d
rows = d["rows"]
assert [r["size"] for r in rows] == [8 << k for k in range(18)], [r["size"] for r in rows]
for r in rows:
    assert r["check"] == "ok" and r["count"] * 4 == r["size"], r
    for m in (r["out_of_place"], r["in_place"]):
        assert m["wrong"] == 0 and m["time_us"] > 0 and m["mpi_time_us"] > 0, r
        assert abs(m["busbw_gbs"] - m["algbw_gbs"] * d["bus_factor"]) <= 1e-6 * m["busbw_gbs"] + 1e-12
        assert m["ratio"] > 0, r
print("sweep ok: %d sizes, avg busbw ingot %.3f GB/s, MPI %.3f GB/s"
      % (len(rows), d["avg_busbw_gbs"], d["avg_mpi_busbw_gbs"]))
PY
  ;;
overlap)
  run 4 --overlap --steps 3 --json "$dir/r.json"
  $py - "$dir/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m, s = d["model"], d["summary"]
assert d["ranks"] == 4 and d["mode"] == "overlap" and d["check"] == "ok", d
assert m["tensors"] == 161 and m["params"] == 25557032 and m["buckets"] >= 1, m
assert len(d["steps"]) == 3 and all(x["step_ms"] > 0 for x in d["steps"]), d["steps"]
assert s["completed"] == 4 * 3 * m["buckets"], s                # every bucket, rank and step
assert s["t_ar_ms"] > 0 and s["compute_ms"] == s["t_ar_ms"] and 0 < s["efficiency"] < 1.5, s
assert len(d["placement"]) == 4, d["placement"]
print("overlap ok: T_ar %.1f ms, median step %.1f ms, efficiency %.3f"
      % (s["t_ar_ms"], s["median_step_ms"], s["efficiency"]))
PY
  ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
