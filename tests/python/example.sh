#!/bin/sh
# example.sh MPIRUN_SH MPIEXEC PYTHON INGOT_MANIFEST WORKDIR: examples/fashion_mnist_ddp.py
# through the binding: Fashion-MNIST packed per split, one epoch of DDP at 4 ranks with a
# checkpoint (test accuracy above 80%), then --resume at 2 ranks for the second epoch (reported
# as epoch 2, accuracy above 82%). Skips (77) without PyTorch or dataset-fashion-mnist.
set -eu
mpirun_sh=$1 mpiexec=$2 python=$3 tool=$4 work=$5
src=$(cd "$(dirname "$0")/../.." && pwd)
"$python" "$(dirname "$0")/common.py" require || exit $? # PyTorch; a module built for this Python
if [ ! -d /usr/share/datasets/fashion-mnist ]; then
  echo "SKIP: /usr/share/datasets/fashion-mnist is missing (Debian: dataset-fashion-mnist)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
"$tool" pack --fashion-mnist -o "$work/train" --split train >/dev/null
"$tool" pack --fashion-mnist -o "$work/test" --split test >/dev/null
# torch.distributed's rendezvous on a port free now (no fixed port: tests run side by side).
MASTER_PORT=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export MASTER_ADDR=127.0.0.1 MASTER_PORT
run() { # run NP EPOCHS [args...]: the example's JSON rows on stdout
  np=$1 epochs=$2; shift 2
  "$mpirun_sh" "$mpiexec" "$np" -x PYTHONPATH -x MASTER_ADDR -x MASTER_PORT \
    "$python" "$src/examples/fashion_mnist_ddp.py" --train "$work/train/manifest.ingot" \
    --test "$work/test/manifest.ingot" --epochs "$epochs" --checkpoint "$work/ckpt" --json "$@"
}
run 4 1 >"$work/first.json"
run 2 2 --resume >"$work/resumed.json"
"$python" - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
rows = lambda f: [json.loads(l) for l in open(os.path.join(work, f)) if l.startswith("{")]
first, resumed = rows("first.json"), rows("resumed.json")
assert [r["epoch"] for r in first] == [1] and first[0]["world"] == 4, first
assert first[0]["test_acc"] > 0.80, f"epoch 1 at 4 ranks: test accuracy {first[0]['test_acc']}"
assert [r["epoch"] for r in resumed] == [2] and resumed[0]["world"] == 2, resumed
assert resumed[0]["test_acc"] > 0.82, f"epoch 2 resumed at 2 ranks: {resumed[0]['test_acc']}"
print(f"python.example.ddp: OK (epoch 1 at 4 ranks: {first[0]['test_acc']:.2%}; "
      f"epoch 2 resumed at 2 ranks: {resumed[0]['test_acc']:.2%})")
PY
