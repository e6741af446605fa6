#!/bin/sh
# pip_install.sh PYTHON SRCDIR VENV: the documented install (docs/python.md): a venv that sees
# the system's site-packages (Debian's PyTorch), `pip install SRCDIR`, then the module imports
# from the venv next to torch. Skips (77) when the build backend cannot be fetched (no PyPI).
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
try:
    import torch
    print(f"pip install: ingot {ingot.__version__} from {ingot.__file__}, torch {torch.__version__}")
except ImportError:
    print(f"pip install: ingot {ingot.__version__} from {ingot.__file__} (no torch here)")
PY
