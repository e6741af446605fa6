#!/bin/sh
# ingot-bench end to end (4 ranks over mpiexec), JSON parsed by $TEST_PYTHON (Debian's python3):
#  e2e      a generated dataset: every sample of the epoch delivered, per-rank and aggregate rows
#  stall    the same run against an emulated store slower than the consumer's demand and
#           unthrottled: the throttled stall share must be at least 10x the unthrottled one
#           (a relative check: both runs are measured side by side, no absolute time asserted)
#  fmnist   the Fashion-MNIST package packed by ingot-manifest, then 4 ranks over it
#  budget   the peer cache's budget per node (INGOT_CACHE_BYTES=SIZE/node) below the dataset:
#           the report says how much it holds and which value would hold it all; that value
#           then holds it all, and epoch 2 reads nothing from storage; a bad value is named
#  epochs   70 epochs of a tiny dataset on 2 ranks: the per-epoch table and JSON report every
#           one (a fixed table of 64 once cut the rest silently), and say none was left out
# usage: ingot_bench.sh MPIEXEC INGOT_BENCH INGOT_MANIFEST MODE
set -eu
mpiexec=$1; bench=$2; manifest_tool=$3; mode=$4
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT
py=${TEST_PYTHON:-/usr/bin/python3}
run() { np=$1; shift; "$mpiexec" --oversubscribe -np "$np" "$bench" --no-progress "$@"; }
field() { $py -c "import json,sys; d=json.load(open('$1')); print(eval('d' + sys.argv[1]))" "$2"; }

bad() { # bad EXPECTED_TEXT ARGS...: ingot-bench must exit 2 naming what was wrong
  want=$1; shift
  if out=$("$bench" "$@" 2>&1); then echo "accepted: $*"; exit 1; fi
  echo "$out" | grep -qF -- "$want" || { echo "no '$want' in: $out"; exit 1; }
}

case "$mode" in
e2e)
  bad "--sample-size '10abc' is not a size" --generate "$dir/x" --sample-size 10abc
  bad "--batch '-3' is not a non-negative integer" --generate "$dir/x" --batch -3
  bad "give exactly one of --manifest or --generate" --generate "$dir/x" --manifest "$dir/m"
  bad "--verify fail|skip|off" --generate "$dir/x" --verify maybe
  # A device this process cannot use (no node here has 100 GPUs): an error naming it, no crash.
  tiny="--generate $dir/tiny --samples 16 --sample-size 1KiB --batch 4 --no-progress"
  bad "loader device 99: this process sees" $tiny --device 99
  (CUDA_VISIBLE_DEVICES=99; export CUDA_VISIBLE_DEVICES
   bad "CUDA_VISIBLE_DEVICES='99': '99' names no GPU" $tiny)
  INGOT_TRACE="$dir/trace.%r.json" "$mpiexec" --oversubscribe -x INGOT_TRACE -np 4 "$bench" \
      --no-progress --generate "$dir/data" --samples 512 --sample-size 16KiB --jitter 0.5 \
      --shard-size 1MiB --batch 32 --compute-ms 1 --json="$dir/r.json"
  # INGOT_TRACE: one Chrome-trace file per rank, with read and stall events of that rank.
  $py - "$dir" <<'PY'
import json, sys
for r in range(4):
    t = json.load(open("%s/trace.%d.json" % (sys.argv[1], r)))
    names = {e["name"] for e in t["traceEvents"]}
    assert {"read", "stall", "plan"} <= names, names
    assert all(e["ph"] == "X" and e["pid"] == r and e["dur"] >= 0 for e in t["traceEvents"])
print("traces ok")
PY
  $py - "$dir/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
a = d["aggregate"]
assert d["ranks"] == 4 and len(d["per_rank"]) == 4, d["ranks"]
assert a["samples"] == 512, a["samples"]            # one epoch: 512 / 32 = 16 steps
assert all(r["steps"] == 16 and r["samples"] == 128 for r in d["per_rank"])
assert 0 < a["au"] <= 1.001 and a["mib_per_s"] > 0 and a["bytes"] > 0.5 * 512 * 16384
assert a["read_requests"] >= 1
print("e2e ok: AU %.3f, %.0f samples/s" % (a["au"], a["samples_per_s"]))
PY
  ;;
stall)
  common="--generate $dir/data --samples 256 --sample-size 16KiB --shard-size 1MiB --batch 8 --compute-ms 2"
  run 1 $common --json="$dir/fast.json"
  INGOT_STORAGE_EMULATE="bw=8MiB/s,lat=1ms" "$mpiexec" --oversubscribe -x INGOT_STORAGE_EMULATE \
      -np 1 "$bench" --no-progress $common --json="$dir/slow.json"
  $py - "$dir/fast.json" "$dir/slow.json" <<'PY'
import json, sys
share = []
for path in sys.argv[1:]:
    a = json.load(open(path))["aggregate"]
    share.append(a["stall_s"] / a["wall_s"])
fast, slow = share
print("stall share: unthrottled %.4f, throttled %.4f" % (fast, slow))
assert slow >= 10 * fast and slow > 0.3, (fast, slow)
PY
  ;;
fmnist)
  src=/usr/share/datasets/fashion-mnist
  [ -d "$src" ] || { echo "SKIP: dataset-fashion-mnist is not installed ($src)"; exit 77; }
  "$manifest_tool" pack --fashion-mnist -o "$dir/fm" >/dev/null
  "$manifest_tool" verify "$dir/fm/manifest.ingot" >/dev/null
  run 4 --manifest "$dir/fm/manifest.ingot" --batch 256 --steps 20 --json="$dir/r.json"
  $py - "$dir/r.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["aggregate"]
assert a["samples"] == 20 * 256 and a["steps"] == 20, a
print("fashion-mnist ok: %.0f samples/s over 4 ranks" % a["samples_per_s"])
PY
  ;;
budget)
  gen="--generate $dir/data --samples 512 --sample-size 16KiB --shard-size 1MiB --batch 32"
  INGOT_CACHE_BYTES=2MiB/node "$mpiexec" --oversubscribe -x INGOT_CACHE_BYTES -np 4 "$bench" \
      --no-progress $gen --epochs 2 > "$dir/small" 2>&1 || { cat "$dir/small"; exit 1; }
  line=$(grep "budget: INGOT_CACHE_BYTES=2MiB/node holds only" "$dir/small") ||
      { echo "no budget line in:"; cat "$dir/small"; exit 1; }
  fix=$(echo "$line" | sed -n 's/.*; \(INGOT_CACHE_BYTES=[0-9]*MiB\/node\) would hold it all$/\1/p')
  [ -n "$fix" ] || { echo "no suggestion in: $line"; exit 1; }
  env "$fix" "$mpiexec" --oversubscribe -x INGOT_CACHE_BYTES -np 4 "$bench" --no-progress $gen \
      --epochs 2 --json="$dir/r.json" > "$dir/big" 2>&1 || { cat "$dir/big"; exit 1; }
  grep -q "budget: $fix holds the whole dataset (512 samples" "$dir/big" ||
      { echo "$fix does not hold the dataset:"; cat "$dir/big"; exit 1; }
  $py - "$dir/r.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))["epochs"]
assert e[1]["bytes_storage"] == 0 and e[1]["bytes_peer"] + e[1]["bytes_local"] > 0, e[1]
PY
  rc=0; INGOT_CACHE_BYTES=2MiB/nodes "$bench" --no-progress $gen > "$dir/bad" 2>&1 || rc=$?
  [ $rc = 1 ] && grep -q "INGOT_CACHE_BYTES='2MiB/nodes': not a size, or a size per node (accepted: a size for the whole job ('96GiB') or per node ('64GiB/node')" "$dir/bad" ||
      { echo "bad value: exit $rc"; cat "$dir/bad"; exit 1; }
  echo "budget ok: $line; $fix holds it all"
  ;;
epochs)
  run 2 --generate "$dir/data" --samples 16 --sample-size 1KiB --batch 8 --epochs 70 \
      --json="$dir/r.json" > "$dir/out"
  grep -q "^    69 " "$dir/out" || { echo "no row of epoch 69 in:"; cat "$dir/out"; exit 1; }
  ! grep -q "left out of this table" "$dir/out" || { echo "epochs left out"; exit 1; }
  $py - "$dir/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
e = d["epochs"]
assert [x["epoch"] for x in e] == list(range(70)), [x["epoch"] for x in e]
assert d["epochs_left_out"] == 0 and all(x["steps"] == 2 for x in e[1:]), e[:3]
assert d["aggregate"]["steps"] == 140, d["aggregate"]["steps"]
print("epochs ok: 70 of 70 reported")
PY
  ;;
*) echo "unknown mode $mode"; exit 2 ;;
esac
