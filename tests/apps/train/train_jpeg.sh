#!/bin/bash
# ingot-train --decode on a JPEG-encoded Fashion-MNIST (examples/fashion_mnist_jpeg.py: Pillow,
# quality 90, ImageFolder layout, packed with --labels-from-dirs) against the P5 run
# (pack --fashion-mnist), 2 ranks, MLP, 5 epochs, one seed: the JPEG run's test accuracy (mean
# of the last 3 epochs) within one point of the P5 run's. Skipped without dataset-fashion-mnist
# or Pillow.
# usage: train_jpeg.sh MPIEXEC INGOT_TRAIN INGOT_MANIFEST SRC_DIR WORK_DIR
set -u
mpiexec=$1; train=$2; tool=$3; src=$4; work=$5/train-jpeg-test
idx=/usr/share/datasets/fashion-mnist
py=${TEST_PYTHON:-/usr/bin/python3}
[ -r "$idx/train-images-idx3-ubyte.gz" ] || { echo "SKIP: dataset-fashion-mnist is not installed"; exit 77; }
$py -c "import PIL, numpy" 2> /dev/null || { echo "SKIP: python3-pil (Pillow) is not installed"; exit 77; }
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/out" ] && tail -20 "$work/out"; exit 1; }
$py "$src/examples/fashion_mnist_jpeg.py" "$work/jpeg" > /dev/null || fail "making the JPEGs"
for s in train test; do
    "$tool" pack "$work/jpeg/$s" -o "$work/j-$s" --labels-from-dirs > /dev/null || fail "pack $s"
    "$tool" pack --fashion-mnist -o "$work/p-$s" --split $s > /dev/null || fail "pack P5 $s"
done
run() { # run PREFIX [--decode]: the last 3 epochs' mean test accuracy
    local p=$1; shift
    timeout -k 5 240 "$mpiexec" --oversubscribe -np 2 "$train" --train "$work/$p-train/manifest.ingot" \
        --test "$work/$p-test/manifest.ingot" --model mlp --epochs 5 --seed 3 --json "$work/$p.json" \
        "$@" > "$work/out" 2>&1 || fail "ingot-train $p $*"
    $py -c "import json,sys; e=json.load(open(sys.argv[1]))['epochs'][-3:]; print('%.4f' % (sum(x['test_accuracy'] for x in e) / len(e)))" "$work/$p.json"
}
pnm=$(run p) || exit 1
jpg=$(run j --decode) || exit 1
echo "test accuracy, mean of epochs 3-5: P5 $pnm, JPEG (--decode) $jpg"
$py -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 0.01 else 1)" "$pnm" "$jpg" ||
    fail "the JPEG run is more than a point from the P5 run"
echo "train_jpeg: ok"
