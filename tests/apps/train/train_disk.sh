#!/bin/bash
# ingot-train twice in a row over the node's disk tier (skipped without dataset-fashion-mnist):
# 2 ranks, 1 epoch, a fresh checkpoint folder each time; the first run reads storage and fills
# the folder, the second reads nothing from storage (bytes_storage 0 in its JSON, every epoch).
# usage: train_disk.sh MPIEXEC INGOT_TRAIN INGOT_MANIFEST WORK_DIR
set -u
mpiexec=$1; train=$2; manifest_tool=$3; work=$4/train-disk
src=/usr/share/datasets/fashion-mnist
[ -r "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist is not installed ($src)"; exit 77; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$manifest_tool" pack --fashion-mnist -o "$work/train" --split train > /dev/null || fail "pack train"
"$manifest_tool" pack --fashion-mnist -o "$work/test" --split test > /dev/null || fail "pack test"
export INGOT_DISK_CACHE_BYTES=1GiB INGOT_DISK_CACHE_DIR=$work/cache
for run in 1 2; do
    timeout -k 5 120 "$mpiexec" --oversubscribe -np 2 -x INGOT_DISK_CACHE_BYTES \
        -x INGOT_DISK_CACHE_DIR "$train" --train "$work/train/manifest.ingot" \
        --test "$work/test/manifest.ingot" --model softmax --epochs 1 \
        --checkpoint "$work/ck$run" --json "$work/r$run.json" > "$work/out$run" 2>&1 ||
        { cat "$work/out$run"; fail "run $run"; }
done
python3 - "$work/r1.json" "$work/r2.json" << 'PY' || fail "bytes by tier"
import json, sys
first, second = (json.load(open(p))["epochs"] for p in sys.argv[1:3])
assert len(first) == 1 and len(second) == 1, (first, second)  # --epochs 1: one each, not none
assert first[0]["bytes_storage"] > 0, first
for e in second:
    assert e["bytes_storage"] == 0 and e["bytes_disk"] > 0, e
print("run 1: %d bytes from storage, %d from the disk tier; run 2: %d from storage, %d from the "
      "disk tier" % (first[0]["bytes_storage"], first[0]["bytes_disk"],
                     second[0]["bytes_storage"], second[0]["bytes_disk"]))
PY
echo "train twice over the disk tier: ok"
