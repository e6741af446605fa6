#!/bin/sh
# pip_install.sh PYTHON SRCDIR VENV [MPIRUN_SH MPIEXEC INGOT_MANIFEST]: the documented install
# (docs/python.md): a venv that sees the system's site-packages (Debian's PyTorch),
# `pip install SRCDIR`, then the module (ingot.abi3.so, from a cp311-abi3 wheel) imports from
# the venv next to torch; with the launcher and the packing tool, the venv's python then trains
# examples/fashion_mnist_ddp.py for one epoch at 4 ranks (the issue's "done when"). Skips (77) when the build backend cannot be
# fetched (no PyPI).
set -eu
python=$1 src=$2 venv=$3
if ! "$python" -m pip download --no-deps -q -d "$venv.dl" "scikit-build-core>=0.8" >/dev/null 2>&1; then
  echo "SKIP: scikit-build-core cannot be fetched from the package index (offline?)"
  exit 77
fi
rm -rf "$venv" "$venv.dl"
"$python" -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q "$src"
"$venv/bin/python" - "$venv" <<'PY'
import os, sys
import ingot
venv = os.path.realpath(sys.argv[1])
assert os.path.realpath(ingot.__file__).startswith(venv), ingot.__file__
assert isinstance(ingot.Error, type) and issubclass(ingot.Error, RuntimeError)
# The stable ABI: one module file and one wheel for CPython 3.11 and later.
assert os.path.basename(ingot.__file__) == "ingot.abi3.so", ingot.__file__
from importlib.metadata import distribution
tags = [l.split(":", 1)[1].strip() for l in distribution("ingot").read_text("WHEEL").splitlines()
        if l.startswith("Tag:")]
assert tags and all(t.startswith("cp311-abi3-") for t in tags), tags
print(f"pip install: wheel tag {tags[0]}")
try:
    import torch
    print(f"pip install: ingot {ingot.__version__} from {ingot.__file__}, torch {torch.__version__}")
except ImportError:
    print(f"pip install: ingot {ingot.__version__} from {ingot.__file__} (no torch here)")
PY
if [ $# -ge 6 ] && [ -d /usr/share/datasets/fashion-mnist ] && "$venv/bin/python" -c "import torch" 2>/dev/null; then
  mpirun_sh=$4 mpiexec=$5 tool=$6
  "$tool" pack --fashion-mnist -o "$venv.fm/train" --split train >/dev/null
  "$tool" pack --fashion-mnist -o "$venv.fm/test" --split test >/dev/null
  MASTER_ADDR=127.0.0.1 MASTER_PORT=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  export MASTER_ADDR MASTER_PORT
  env -u PYTHONPATH "$mpirun_sh" "$mpiexec" 4 -x MASTER_ADDR -x MASTER_PORT "$venv/bin/python" \
    "$src/examples/fashion_mnist_ddp.py" --train "$venv.fm/train/manifest.ingot" \
    --test "$venv.fm/test/manifest.ingot" --epochs 1 --json >"$venv.fm/run.json"
  "$venv/bin/python" - "$venv.fm/run.json" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert len(rows) == 1 and rows[0]["world"] == 4 and rows[0]["test_acc"] > 0.80, rows
print(f"pip install: the example trained 1 epoch at 4 ranks from the venv: {rows[0]['test_acc']:.2%}")
PY
  rm -rf "$venv.fm"
fi
