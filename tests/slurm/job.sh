#!/bin/bash
# slurm/ingot-job.sbatch on a real (single-node) Slurm: run under cluster.sh, which exports
# SLURM_CONF and SLURM_CLUSTER_DIR.
#
# usage: cluster.sh WORK -- job.sh INGOT_JOB_SBATCH INGOT_INFO [INGOT_TRAIN_SBATCH BIN_DIR]
#   (a) a 4-rank Open MPI job: ingot-info launched by the script's `srun --mpi=pmix` on 4 tasks
#       over this machine's CPUs (--overcommit); its rank-0 summary must report the all-reduce
#       on 4 ranks, and the job must end with status 0.
#   (b) the checkpoint/requeue protocol with fake_trainer.sh on 2 tasks: once the job runs and
#       has done a few steps, `scancel --signal=USR1 --batch` asks it to checkpoint (as
#       --signal=B:USR1@120 does before the time limit); both tasks must checkpoint (exit 85,
#       each at its own step: the first to exit must not have the other killed), the job must
#       requeue itself, start again with SLURM_RESTART_COUNT=1, resume each task from its
#       checkpointed step, and complete.
#   (c) with slurm/ingot-train.sbatch and the build's apps: ingot-train (softmax, 16 epochs) on 4
#       tasks, uninterrupted; then the same job signalled (USR1) after its first epoch: it must
#       checkpoint, requeue, resume from the checkpoint and end with exactly the accuracy of the
#       uninterrupted run (the resume continues the same step with the same weights).
# Every wait is bounded; a failure prints the job's output and `scontrol show job`.
set -u
sbatch_script=${1:?usage: job.sh INGOT_JOB_SBATCH INGOT_INFO}
ingot_info=${2:?usage: job.sh INGOT_JOB_SBATCH INGOT_INFO}
here=$(cd "$(dirname "$0")" && pwd)
[ -n "${SLURM_CONF:-}" ] && [ -n "${SLURM_CLUSTER_DIR:-}" ] || {
    echo "job.sh: run it under tests/slurm/cluster.sh" >&2
    exit 2
}
dir=$SLURM_CLUSTER_DIR/jobs
mkdir -p "$dir" || exit 1
t0=$SECONDS
failed=0
note() { echo "[$((SECONDS - t0))s] $*"; }
fail() {
    echo "FAIL: $*"
    failed=1
}
job_field() { # job_field JOBID FIELD: one field of `scontrol show job` (empty once forgotten)
    timeout 10 scontrol -o show job "$1" 2> /dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}
show_job() { # show_job JOBID OUTPUT_FILE
    echo "--- output of job $1 ($2)"
    cat "$2" 2> /dev/null
    echo "--- scontrol show job $1"
    timeout 10 scontrol show job "$1"
}

# Slurm 22.05 refuses --ntasks-per-node above a node's CPUs even with --overcommit ("Requested
# node configuration is not available"), and no command-line option undoes an #SBATCH line: on
# a node with fewer than 4 CPUs the jobs run a copy of the script without its --ntasks-per-node
# line, and give -n instead (with it, -n takes precedence and --ntasks-per-node is a maximum).
script=$sbatch_script
if [ "$(nproc)" -lt 4 ]; then
    script=$dir/ingot-job-ntasks.sbatch
    grep -v '^#SBATCH --ntasks-per-node=' "$sbatch_script" > "$script"
    [ "$(($(wc -l < "$sbatch_script") - $(wc -l < "$script")))" = 1 ] ||
        { fail "expected one '#SBATCH --ntasks-per-node=' line in $sbatch_script"; exit 1; }
fi

# --- (a) ingot-info as 4 MPI ranks under srun --mpi=pmix.
note "(a) sbatch --wait: ingot-info on 4 tasks"
out=$dir/info.out
jid=$(timeout 150 sbatch --wait --parsable --overcommit --nodes=1 -n 4 --cpus-per-task=1 \
    --output="$out" "$script" "$ingot_info")
rc=$?
jid=${jid%%;*}
note "(a) job ${jid:-?} ended: sbatch --wait status $rc"
ok=1
[ $rc = 0 ] || { fail "(a) the job's status is $rc, not 0"; ok=; }
grep -qE 'gradient all-reduce:.* on 4 rank\(s\)' "$out" ||
    { fail "(a) no \"gradient all-reduce: ... on 4 rank(s)\" line: not a 4-rank MPI job"; ok=; }
[ "$(grep -c 'gradient all-reduce:' "$out")" = 1 ] ||
    { fail "(a) the summary is not printed exactly once (rank 0 only)"; ok=; }
grep -q 'SLURM_RESTART_COUNT=0' "$out" || { fail "(a) no SLURM_RESTART_COUNT=0 line"; ok=; }
# The script must not hand the program INGOT_* variables of its own (ingot warns about them).
! grep -q 'unknown environment variable' "$out" ||
    { fail "(a) ingot warned about unknown environment variables"; ok=; }
if [ -n "$ok" ]; then
    note "(a) ok: $(grep -E 'gradient all-reduce:' "$out" | sed 's/^#[[:space:]]*//')"
else
    show_job "${jid:-?}" "$out"
fi

# --- (b) checkpoint on SIGUSR1, requeue, restart, resume, complete: 2 tasks.
steps=40
note "(b) sbatch: fake_trainer.sh on 2 tasks, $steps steps of 0.2 s"
out=$dir/trainer.out
state=$dir/trainer-state
# The job's TMPDIR is this test's own: what the batch script leaves there is this job's alone.
jobtmp=$dir/jobtmp
rm -rf "$jobtmp" && mkdir -p "$jobtmp"
jid=$(TMPDIR=$jobtmp timeout 30 sbatch --parsable --overcommit --nodes=1 -n 2 --cpus-per-task=1 \
    --output="$out" "$script" "$here/fake_trainer.sh" "$state" $steps)
jid=${jid%%;*}
[ -n "$jid" ] || { fail "(b) sbatch failed"; exit 1; }
progress() { # the step rank 1 of fake_trainer.sh is at (0 until it has written a number)
    local p
    p=$(cat "$state/progress.1" 2> /dev/null)
    [[ $p =~ ^[0-9]+$ ]] && echo "$p" || echo 0
}
# Running, and a few steps done (so the batch script's trap and srun are in place).
running=
for ((i = 0; i < 300; i++)); do # 60 s
    if [ "$(job_field "$jid" JobState)" = RUNNING ] && [ "$(progress)" -ge 5 ]; then
        running=1
        break
    fi
    sleep 0.2
done
if [ -z "$running" ]; then
    fail "(b) job $jid not running 5 steps in after 60 s"
    show_job "$jid" "$out"
    timeout 10 scancel "$jid"
    exit 1
fi
note "(b) job $jid running at step $(progress): scancel --signal=USR1 --batch"
timeout 10 scancel --signal=USR1 --batch "$jid" || fail "(b) scancel --signal=USR1 failed"
# Requeued (PENDING, Restarts=1), started again, completed: 120 s at most.
final='' st='' seen_pending=''
for ((i = 0; i < 240; i++)); do
    st=$(job_field "$jid" JobState)
    case $st in
        PENDING | REQUEUED | REQUEUE_FED | REQUEUE_HOLD)
            [ -z "$seen_pending" ] &&
                note "(b) job $jid $st (restarts: $(job_field "$jid" Restarts))"
            seen_pending=1 ;;
        COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
            final=$st
            break ;;
    esac
    sleep 0.5
done
note "(b) job $jid final state: ${final:-none after 120 s}" \
    "(restarts: $(job_field "$jid" Restarts), exit code $(job_field "$jid" ExitCode))"
ok=1
[ "$final" = COMPLETED ] || { fail "(b) job $jid did not complete (state ${final:-$st})"; ok=; }
[ -n "$seen_pending" ] || { fail "(b) job $jid was never seen pending after the signal"; ok=; }
[ "$(job_field "$jid" Restarts)" = 1 ] || { fail "(b) job $jid: Restarts is not 1"; ok=; }
grep -q 'ingot-job: the program checkpointed (exit 85 on 2 rank(s)' "$out" ||
    { fail "(b) the batch script did not see both ranks checkpoint"; ok=; }
grep -q 'SLURM_RESTART_COUNT=0' "$out" && grep -q 'SLURM_RESTART_COUNT=1' "$out" ||
    { fail "(b) not both runs in the output (SLURM_RESTART_COUNT=0 and =1)"; ok=; }
summary=
for r in 0 1; do
    ck=$(sed -n "s/^rank $r: checkpoint step \([0-9]*\)\$/\1/p" "$out")
    rs=$(sed -n "s/^rank $r: done after resume from step \([0-9]*\)\$/\1/p" "$out")
    [ -n "$ck" ] || { fail "(b) no \"rank $r: checkpoint step N\" line"; ok=; }
    [ -n "$rs" ] && [ "$rs" = "$ck" ] ||
        { fail "(b) no \"rank $r: done after resume from step ${ck:-N}\" (got '$rs')"; ok=; }
    [ "$(cat "$state/state.$r" 2> /dev/null)" = $steps ] ||
        { fail "(b) rank $r did not do all $steps steps"; ok=; }
    summary+=" rank $r at step ${ck:-?},"
done
grep -q "^rank 0: starting at step 0 of $steps (TMPDIR=$jobtmp)\$" "$out" ||
    { fail "(b) the job did not run with TMPDIR=$jobtmp: its leftovers cannot be told"; ok=; }
[ -z "$(ls -A "$jobtmp" 2> /dev/null)" ] ||
    { fail "(b) the batch script left $(ls -A "$jobtmp" | tr '\n' ' ')in $jobtmp"; ok=; }
if [ -n "$ok" ]; then
    note "(b) ok: checkpoint of${summary} requeued, SLURM_RESTART_COUNT=1, resumed, completed"
else
    show_job "$jid" "$out"
fi
# --- (c) ingot-train under Slurm: uninterrupted, then signalled, requeued and resumed.
wait_final() { # wait_final JOBID SECONDS: the job's final state (empty if none in time)
    local st
    for ((i = 0; i < $2 * 2; i++)); do
        st=$(job_field "$1" JobState)
        case $st in
            COMPLETED | FAILED | CANCELLED | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY | BOOT_FAIL | DEADLINE)
                echo "$st"
                return ;;
        esac
        sleep 0.5
    done
}
if [ $# -ge 4 ]; then
    train_sbatch=$3
    export TRAIN_BIN=$4 TRAIN_DATA=$dir/fmnist TRAIN_SCRIPTS
    TRAIN_SCRIPTS=$(cd "$(dirname "$sbatch_script")" && pwd)
    tscript=$train_sbatch
    if [ "$(nproc)" -lt 4 ]; then
        tscript=$dir/ingot-train-ntasks.sbatch
        grep -v '^#SBATCH --ntasks-per-node=' "$train_sbatch" > "$tscript"
    fi
    targs=(--model softmax --epochs 16)
    note "(c) sbatch --wait: ingot-train ${targs[*]} on 4 tasks, uninterrupted"
    out1=$dir/train1.out
    jid=$(TRAIN_CKPT=$dir/ck1 timeout 240 sbatch --wait --parsable --overcommit --nodes=1 -n 4 \
        --cpus-per-task=1 --output="$out1" "$tscript" "${targs[@]}")
    rc=$?
    acc1=$(sed -n 's/^final test accuracy \([0-9.]*%\).*/\1/p' "$out1")
    note "(c) job ${jid%%;*} ended: status $rc, final test accuracy ${acc1:-none}"
    [ $rc = 0 ] && [ -n "$acc1" ] || { fail "(c) uninterrupted ingot-train"; show_job "${jid%%;*}" "$out1"; }
    out2=$dir/train2.out
    rm -rf "$jobtmp" && mkdir -p "$jobtmp"
    jid=$(TMPDIR=$jobtmp TRAIN_CKPT=$dir/ck2 timeout 30 sbatch --parsable --overcommit --nodes=1 \
        -n 4 --cpus-per-task=1 --output="$out2" "$tscript" "${targs[@]}")
    jid=${jid%%;*}
    past=
    for ((i = 0; i < 600; i++)); do # 120 s: running, first epoch reported
        grep -q '^    1 ' "$out2" 2> /dev/null && { past=1; break; }
        sleep 0.2
    done
    [ -n "$past" ] || { fail "(c) job $jid did not report its first epoch in 120 s"; show_job "$jid" "$out2"
                        timeout 10 scancel "$jid"; exit 1; }
    note "(c) job $jid past its first epoch: scancel --signal=USR1 --batch"
    timeout 10 scancel --signal=USR1 --batch "$jid" || fail "(c) scancel --signal=USR1 failed"
    final=$(wait_final "$jid" 180)
    acc2=$(sed -n 's/^final test accuracy \([0-9.]*%\).*/\1/p' "$out2")
    note "(c) job $jid final state ${final:-none}, restarts $(job_field "$jid" Restarts)," \
        "final test accuracy ${acc2:-none}"
    ok=1
    [ "$final" = COMPLETED ] || { fail "(c) the signalled job did not complete"; ok=; }
    grep -q 'checkpointed on request at epoch' "$out2" || { fail "(c) no checkpoint on request"; ok=; }
    grep -q 'ingot-train.sbatch: resuming from' "$out2" && grep -q '# resumed from' "$out2" ||
        { fail "(c) the restarted job did not resume"; ok=; }
    [ -z "$(ls -A "$jobtmp" 2> /dev/null)" ] ||
        { fail "(c) the batch script left $(ls -A "$jobtmp" | tr '\n' ' ')in $jobtmp"; ok=; }
    [ -n "$acc2" ] && [ "$acc2" = "$acc1" ] ||
        { fail "(c) resumed run's accuracy '${acc2}' differs from the uninterrupted '${acc1}'"; ok=; }
    [ -n "$ok" ] && note "(c) ok: checkpointed, requeued, resumed, same accuracy ($acc2)" ||
        show_job "$jid" "$out2"
fi
note "total"
exit $failed
