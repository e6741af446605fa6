#!/bin/sh
# ingot-train on cuBLAS against CBLAS, 2 ranks (sharing the node's GPU when it has one):
#   - softmax, 2 epochs, the same seed, --blas cpu and --blas cuda: the header and JSON name the
#     BLAS, and every epoch's loss agrees to LOSS_TOL and its test accuracy to ACC_TOL;
#   - the MLP, 1 epoch, --blas auto: it takes cuBLAS, saying so, and learns (test accuracy >= 0.80;
#     85% on CBLAS). The MLP is not compared epoch by epoch: over 234 steps its ReLUs turn the
#     rounding of another summation order into 1e-3 of the loss (OpenBLAS against Debian's
#     reference BLAS), which tests/apps/test_train_gemm.c checks over 20 steps instead.
# Exit 77 with the reason where no CUDA device is usable or dataset-fashion-mnist is absent.
# usage: train_cublas.sh MPIEXEC INGOT_TRAIN INGOT_MANIFEST INGOT_INFO WORK_DIR
set -eu
mpiexec=$1; train=$2; manifest_tool=$3; info=$4; work=$5/train-cublas
src=/usr/share/datasets/fashion-mnist
devices=$("$info" | sed -n 's/^#   CUDA devices: *\([0-9]*\).*/\1/p')
if [ "${devices:-0}" = 0 ]; then
  echo "SKIP: no usable CUDA device: $("$info" | sed -n 's/^#   CUDA devices: *//p')"
  exit 77
fi
[ -r "$src/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist is not installed ($src)"; exit 77; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/out" ] && cat "$work/out"; exit 1; }
run() { timeout -k 5 240 "$mpiexec" --oversubscribe -np 2 "$train" \
    --train "$work/train/manifest.ingot" --test "$work/test/manifest.ingot" "$@"; }
"$manifest_tool" pack --fashion-mnist -o "$work/train" --split train > /dev/null || fail "pack train"
"$manifest_tool" pack --fashion-mnist -o "$work/test" --split test > /dev/null || fail "pack test"

run --model softmax --epochs 2 --blas cpu --json "$work/cpu.json" > "$work/out" 2>&1 ||
    fail "--blas cpu"
grep -qx "# blas: cpu (--blas cpu)" "$work/out" || fail "--blas cpu: no header line"
run --model softmax --epochs 2 --blas cuda --json "$work/cuda.json" > "$work/out" 2>&1 ||
    fail "--blas cuda"
grep -Eq "^# blas: cuda \(--blas cuda: cuBLAS [0-9]+\.[0-9]+\.[0-9]+ on GPU [0-9]+ " "$work/out" ||
    fail "--blas cuda: no header line naming cuBLAS"
grep "^# blas" "$work/out"
# Softmax is convex: OpenBLAS and the reference BLAS gave the same losses and accuracies to the
# JSON's 6 digits, so LOSS_TOL leaves a margin of 100 and ACC_TOL is 20 of the 10,000 samples.
python3 - "$work/cpu.json" "$work/cuda.json" << 'PY' || fail "cuBLAS against CBLAS"
import json, sys
LOSS_TOL, ACC_TOL = 1e-4, 0.002
cpu, cuda = (json.load(open(p)) for p in sys.argv[1:3])
assert (cpu["blas"], cuda["blas"]) == ("cpu", "cuda"), (cpu["blas"], cuda["blas"])
assert cuda["blas_reason"].startswith("--blas cuda: cuBLAS "), cuda["blas_reason"]
assert len(cpu["epochs"]) == len(cuda["epochs"]) == 2
for c, g in zip(cpu["epochs"], cuda["epochs"]):
    dl = abs(g["loss"] - c["loss"]) / c["loss"]
    da = abs(g["test_accuracy"] - c["test_accuracy"])
    print("epoch %d: loss %.6f / %.6f (rel %.2g), test accuracy %.4f / %.4f (cuBLAS / CBLAS)"
          % (c["epoch"], g["loss"], c["loss"], dl, g["test_accuracy"], c["test_accuracy"]))
    assert dl <= LOSS_TOL and da <= ACC_TOL, (dl, da)
PY

run --model mlp --epochs 1 --json "$work/auto.json" > "$work/out" 2>&1 || fail "--blas auto (mlp)"
grep -Eq "^# blas: cuda \(auto: cuBLAS " "$work/out" || fail "--blas auto did not take cuBLAS"
python3 - "$work/auto.json" << 'PY' || fail "the MLP on cuBLAS"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["blas"] == "cuda" and r["epochs"][0]["test_accuracy"] >= 0.80, r
print("mlp: blas %s, test accuracy %.4f" % (r["blas_reason"], r["epochs"][0]["test_accuracy"]))
PY
echo "ingot-train on cuBLAS: checks passed"
