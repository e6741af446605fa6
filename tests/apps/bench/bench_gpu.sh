#!/bin/sh
# ingot-bench --compute-gpu end to end on NP ranks (the ranks share the node's GPUs when there are
# fewer): one epoch of a generated dataset delivered into GPU memory, every sample once, every
# rank on a CUDA device, the busy kernel running for the compute step (AU near 1 with a compute
# step far longer than the supply time). Exit 77 with the reason where no CUDA device is usable.
# usage: bench_gpu.sh MPIEXEC INGOT_BENCH INGOT_INFO NP
set -eu
mpiexec=$1; bench=$2; info=$3; np=$4
py=${TEST_PYTHON:-/usr/bin/python3}
devices=$("$info" | sed -n 's/^#   CUDA devices: *\([0-9]*\).*/\1/p')
if [ "${devices:-0}" = 0 ]; then
  echo "SKIP: no usable CUDA device: $("$info" | sed -n 's/^#   CUDA devices: *//p')"
  exit 77
fi
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-bench-gpu.XXXXXX")
trap 'rm -rf "$dir"' EXIT
samples=1024; batch=32
"$mpiexec" --oversubscribe -np "$np" "$bench" --no-progress --generate "$dir/data" \
    --samples $samples --sample-size 64KiB --shard-size 4MiB --batch $batch --compute-ms 5 \
    --compute-gpu --json="$dir/r.json"
$py - "$dir/r.json" "$np" $samples <<'PY'
import json, sys
d, np, samples = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
a = d["aggregate"]
assert d["ranks"] == np and len(d["per_rank"]) == np, d["ranks"]
assert a["samples"] == samples, a["samples"]
assert all(r["device"].startswith("cuda") for r in d["per_rank"]), [r["device"] for r in d["per_rank"]]
# 5 ms of GPU compute per step against a few hundred KiB of supply: the loader keeps up.
assert 0.5 <= a["au"] <= 1.001, a["au"]
print("compute-gpu ok: %d rank(s), AU %.3f, %.0f samples/s" % (np, a["au"], a["samples_per_s"]))
PY
