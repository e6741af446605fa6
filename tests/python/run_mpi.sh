#!/bin/sh
# run_mpi.sh MPIRUN_SH MPIEXEC PYTHON INGOT_MANIFEST WORKDIR [mpi4py]: the binding at 4 ranks
# (two epochs exactly once, a global batch the ranks do not divide), then a state_dict taken at 4
# ranks and resumed at 2, checked exactly once over both runs (tests/python/test_mpi.py). With
# mpi4py: ingot.init(comm=...) on mpi4py sub-communicators instead.
set -eu
mpirun_sh=$1 mpiexec=$2 python=$3 tool=$4 work=$5
here=$(cd "$(dirname "$0")" && pwd)
"$python" "$(dirname "$0")/common.py" require || exit $? # PyTorch; a module built for this Python
rm -rf "$work" && mkdir -p "$work"
"$python" "$here/test_mpi.py" make "$work" "$tool"
if [ "${6:-}" = mpi4py ]; then # ingot on mpi4py sub-communicators (ctest python.binding.mpi4py)
  if ! "$python" -c "import mpi4py" 2>/dev/null; then
    echo "SKIP: mpi4py is not importable by $python (Debian: apt-get install python3-mpi4py)"
    exit 77
  fi
  exec "$mpirun_sh" "$mpiexec" 4 "$python" "$here/test_mpi.py" mpi4py "$work"
fi
"$mpirun_sh" "$mpiexec" 4 "$python" "$here/test_mpi.py" epochs "$work"
"$mpirun_sh" "$mpiexec" 4 "$python" "$here/test_mpi.py" save "$work" 3
"$mpirun_sh" "$mpiexec" 2 "$python" "$here/test_mpi.py" resume "$work"
"$python" "$here/test_mpi.py" check "$work" 4 2
# The locality order (INGOT_ORDER=window:2) resumes exactly once as well, at another world size;
# its cursor given to a loader of the other order is refused, naming both.
export INGOT_ORDER=window:2
"$mpirun_sh" "$mpiexec" 4 "$python" "$here/test_mpi.py" save "$work" 3
"$mpirun_sh" "$mpiexec" 2 "$python" "$here/test_mpi.py" resume "$work"
"$python" "$here/test_mpi.py" check "$work" 4 2
if INGOT_ORDER=full "$mpirun_sh" "$mpiexec" 2 "$python" "$here/test_mpi.py" resume "$work" \
    > "$work/mismatch.out" 2>&1; then
  echo "FAIL: a window:2 cursor resumed under INGOT_ORDER=full"; exit 1
fi
grep -q "cut with INGOT_ORDER=window:2, this loader uses INGOT_ORDER=full" "$work/mismatch.out" || {
  cat "$work/mismatch.out"; echo "FAIL: the order mismatch was not named"; exit 1; }
echo "python.binding.mpi: the locality order resumed exactly once; a mismatched order refused"
