#!/bin/bash
# ingot_init's launch check on a real (single-node) Slurm: run under cluster.sh. One 2-task
# batch job (--overcommit) runs tests/runtime/context/test_init four ways:
#   batch   in the batch script itself (SLURM_NTASKS=2, no step): refused, naming SLURM_NTASKS=2
#   nopmix  `srun --mpi=none -n 2`: no task may go on as a singleton. Debian's Open MPI 4.1 stops
#           in MPI_Init by itself ("direct launched using srun, but OMPI was not built with
#           SLURM's PMI support"); an MPI that falls back to a singleton instead is refused by
#           ingot, naming SLURM_STEP_NUM_TASKS=2 (launch_check.sh's slurm case, in that
#           environment without Slurm)
#   pmix    `srun --mpi=pmix -n 2`: a world of 2, accepted
#   one     `srun --mpi=pmix -n 1` inside the 2-task allocation (SLURM_STEP_NUM_TASKS=1):
#           accepted
# usage: cluster.sh WORK -- launch.sh TEST_INIT
set -u
exe=${1:?usage: launch.sh TEST_INIT}
[ -n "${SLURM_CONF:-}" ] && [ -n "${SLURM_CLUSTER_DIR:-}" ] || {
    echo "launch.sh: run it under tests/slurm/cluster.sh" >&2
    exit 2
}
dir=$SLURM_CLUSTER_DIR/launch
mkdir -p "$dir" || exit 1
fail() {
    for f in "$dir"/*; do echo "--- $f"; cat "$f"; done
    echo "FAIL: $*"
    exit 1
}
cat > "$dir/job.sbatch" << EOF
#!/bin/bash
#SBATCH -n 2
#SBATCH --overcommit
#SBATCH --cpus-per-task=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
"$exe" expect-launch-refused > "$dir/batch.out" 2>&1; echo "batch exit \$?"
srun --mpi=none -n 2 bash -c '"$exe" expect-launch-refused > "$dir/nopmix.\$SLURM_PROCID.out" 2>&1'
echo "nopmix exit \$?"
srun --mpi=pmix -n 2 "$exe" ok > "$dir/pmix.out" 2>&1; echo "pmix exit \$?"
srun --mpi=pmix -n 1 "$exe" self-mpi > "$dir/one.out" 2>&1; echo "one exit \$?"
EOF
timeout 200 sbatch --wait --parsable -o "$dir/job.out" "$dir/job.sbatch" > /dev/null ||
    fail "the job failed"
for step in batch pmix one; do
    grep -qx "$step exit 0" "$dir/job.out" || fail "$step: exit status (job.out)"
done
grep -q "^nopmix exit [1-9]" "$dir/job.out" || fail "nopmix: the tasks ended with status 0"
hint="start the ranks through MPI: mpirun -np N ..., or srun --mpi=pmix ..."
grep -qF "refused: ingot_init: MPI's world is this process alone, but the launcher says the job has more: SLURM_NTASKS=2 (a Slurm allocation; this process not started by srun). " \
    "$dir/batch.out" || fail "batch: not refused naming SLURM_NTASKS=2"
grep -qF "$hint" "$dir/batch.out" || fail "batch: no launch hint"
for r in 0 1; do
    grep -qF "the job has more: SLURM_STEP_NUM_TASKS=2 (srun without --mpi=pmix?). " \
        "$dir/nopmix.$r.out" || grep -q 'direct launched using "srun"' "$dir/nopmix.$r.out" ||
        fail "nopmix task $r: neither refused by ingot nor stopped by Open MPI"
done
for step in pmix one; do
    ! grep -q "launch.c" "$dir/$step.out" || fail "$step: the launch check spoke"
done
echo "launch check under Slurm: ok"
