#!/bin/sh
# ingot_init's launch check (runtime/launch.c): processes started as a launcher other than MPI's
# starts them, each a singleton with the launcher's variables, must be refused, each with one
# error line naming the variable, its value and how to launch; the same variables with a
# consistent world must not be.
#   torchrun    two processes with torchrun's RANK, WORLD_SIZE=2, LOCAL_RANK, MASTER_ADDR/PORT
#   slurm       a program run by a 4-task batch script (SLURM_NTASKS=4, no step), and two tasks
#               of `srun -n 2` without --mpi=pmix (SLURM_STEP_NUM_TASKS=2), as Slurm 22.05 sets
#               them (tests/slurm/launch.sh has the real cluster)
#   ompi        OMPI_COMM_WORLD_SIZE=2 inherited by a process mpirun did not start
#   pmi         PMI_SIZE=2 (hydra, srun --mpi=pmi2) likewise
#   consistent  mpirun -np 2 with WORLD_SIZE=2; WORLD_SIZE=1; mpirun -np 1 inside a 4-task
#               allocation under torchrun's variables; srun -n 1 inside a 4-task allocation;
#               a WORLD_SIZE that is no count; INGOT_CHECK_LAUNCH=n (an info line only); and
#               INGOT_CHECK_LAUNCH=maybe refused as a bad value
# usage: launch_check.sh MPIEXEC TEST_INIT CASE
set -u
mpiexec=$1 exe=$2 case=$3
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/ingot-launch.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { for f in "$dir"/*; do echo "== $f"; cat "$f"; done; echo "FAIL: $*"; exit 1; }
# The hint every refusal ends with.
hint="start the ranks through MPI: mpirun -np N ..., or srun --mpi=pmix ..."

# refused NAME VAR=VALUE... : run the test as a singleton with those variables (in the
# background: the processes of one launch run together); `check NAME NEEDLE...` reads it.
refused() {
    name=$1; shift
    env "$@" timeout 60 "$exe" expect-launch-refused > "$dir/$name.out" 2> "$dir/$name.err" &
}
check() {
    name=$1; shift
    grep -q "^refused: ingot_init: MPI's world is this process alone" "$dir/$name.out" ||
        fail "$name: not refused"
    for needle in "$hint" "$@"; do
        grep -qF "$needle" "$dir/$name.out" || fail "$name: the message lacks '$needle'"
    done
    # One clear line: the error, said once, by the process that found it.
    [ "$(grep -c 'INGOT error' "$dir/$name.err")" = 1 ] || fail "$name: not one error line"
    grep -q "INGOT error launch.c:.*$1" "$dir/$name.err" || fail "$name: the log lacks '$1'"
}
# accepted NAME CMD...: CMD must succeed, with no word from the launch check (test_init's `ok`
# logs errors of its own: the NULL arguments it passes on purpose).
accepted() {
    name=$1; shift
    "$@" > "$dir/$name.out" 2> "$dir/$name.err" || fail "$name: refused (exit $?)"
    ! grep -q "launch.c" "$dir/$name.err" || fail "$name: the launch check spoke"
}

case $case in
torchrun)
    for r in 0 1; do
        refused torchrun.$r RANK=$r LOCAL_RANK=$r WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 \
            MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 TORCHELASTIC_RUN_ID=none
    done
    wait
    for r in 0 1; do check torchrun.$r "WORLD_SIZE=2 (torchrun)"; done
    ;;
slurm)
    refused batch SLURM_JOB_ID=7 SLURM_NTASKS=4 SLURM_NPROCS=4 SLURM_PROCID=0 SLURM_LOCALID=0
    for r in 0 1; do
        refused step.$r SLURM_JOB_ID=7 SLURM_NTASKS=2 SLURM_NPROCS=2 SLURM_STEP_ID=0 \
            SLURM_STEPID=0 SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=$r SLURM_LOCALID=$r
    done
    wait
    check batch "SLURM_NTASKS=4 (a Slurm allocation; this process not started by srun)"
    for r in 0 1; do
        check step.$r "SLURM_STEP_NUM_TASKS=2 (srun without --mpi=pmix?)"
        ! grep -q "SLURM_NTASKS=" "$dir/step.$r.out" || fail "step.$r: SLURM_NTASKS named too"
    done
    ;;
ompi)
    refused ompi OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_SIZE=2
    wait
    check ompi "OMPI_COMM_WORLD_SIZE=2 (Open MPI's launcher, but MPI did not join its job)"
    ;;
pmi)
    refused pmi PMI_SIZE=2 PMI_RANK=1
    wait
    check pmi "PMI_SIZE=2 (a PMI launcher"
    ;;
consistent)
    accepted mpirun2 timeout 60 "$mpiexec" --oversubscribe -np 2 -x WORLD_SIZE=2 "$exe" ok
    accepted one env WORLD_SIZE=1 RANK=0 timeout 60 "$exe" self-mpi
    # mpirun's count of 1 is this process' world, whatever torchrun and Slurm around it say.
    accepted mpirun1 timeout 60 "$mpiexec" --oversubscribe -np 1 \
        env SLURM_NTASKS=4 WORLD_SIZE=2 "$exe" self-mpi
    accepted srun1 env SLURM_NTASKS=4 SLURM_STEP_ID=0 SLURM_STEP_NUM_TASKS=1 \
        timeout 60 "$exe" self-mpi
    accepted notcount env WORLD_SIZE=two timeout 60 "$exe" self-mpi
    env INGOT_CHECK_LAUNCH=n INGOT_LOG_LEVEL=info WORLD_SIZE=2 timeout 60 "$exe" self-mpi \
        > "$dir/override.out" 2> "$dir/override.err" || fail "override: refused"
    grep -q "INGOT info  launch.c:.*INGOT_CHECK_LAUNCH=n: .*WORLD_SIZE=2 (torchrun); it runs alone" \
        "$dir/override.err" || fail "override: no info line naming WORLD_SIZE"
    ! grep -q "INGOT error launch.c" "$dir/override.err" || fail "override: refused in the log"
    env INGOT_CHECK_LAUNCH=maybe WORLD_SIZE=2 timeout 60 "$exe" expect-config-error \
        > "$dir/badvalue.out" 2>&1 || fail "badvalue: not INGOT_ERR_CONFIG"
    grep -q "INGOT_CHECK_LAUNCH='maybe': not a boolean" "$dir/badvalue.out" ||
        fail "badvalue: the message does not name the variable"
    ;;
*)
    echo "usage: launch_check.sh MPIEXEC TEST_INIT torchrun|slurm|ompi|pmi|consistent" >&2
    exit 2
    ;;
esac
echo "launch check ($case): ok"
