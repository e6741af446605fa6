#!/bin/sh
# mpirun.sh MPIEXEC NP CMD [ARGS...]: run CMD on NP ranks of this machine (oversubscribed).
# The run-as-root variables are set only when running as root, as Open MPI asks.
mpiexec=$1; np=$2; shift 2
if [ "$(id -u)" = 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
exec "$mpiexec" -np "$np" --oversubscribe "$@"
