#!/bin/bash
# A stand-in for a trainer, to exercise slurm/ingot-job.sbatch's checkpoint/requeue protocol
# without MPI: it "trains" STEPS steps of 0.2 s each. One process per task; each task (rank
# SLURM_PROCID) keeps its own state file.
#
# usage: fake_trainer.sh STATE_DIR [STEPS]     (STATE_DIR also from FAKE_TRAINER_DIR; STEPS: 50)
#   STATE_DIR/state.RANK      the checkpointed step (0 when the first run starts)
#   STATE_DIR/progress.RANK   the step in progress, rewritten every step (for a test to poll)
# On SIGUSR1 it finishes the step in flight, writes "checkpoint step N" (to stdout and the state
# file; rank r takes 0.3*r s to write it) and exits 85 (INGOT_EXIT_CHECKPOINTED). Started again
# (the state file exists, or SLURM_RESTART_COUNT > 0) it resumes from the checkpointed step and,
# at the end, prints "done after resume from step N"; a run that was never interrupted prints
# "done without restart".
set -u
dir=${1:-${FAKE_TRAINER_DIR:-}}
steps=${2:-50}
[ -n "$dir" ] || { echo "usage: fake_trainer.sh STATE_DIR [STEPS]" >&2; exit 2; }
rank=${SLURM_PROCID:-0}
state=$dir/state.$rank progress=$dir/progress.$rank
mkdir -p "$dir" || exit 1

step=0 resumed=
if [ -f "$state" ] || [ "${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then
    step=$(cat "$state" 2> /dev/null || echo 0)
    resumed=$step
    echo "rank $rank: resuming from step $step (SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-0})"
else
    echo 0 > "$state"
    echo "rank $rank: starting at step 0 of $steps (TMPDIR=${TMPDIR:-})"
fi

# The signal only sets a flag: the step in flight completes first, as a real trainer's would
# (a checkpoint is taken between steps).
checkpoint=
trap 'checkpoint=1' USR1
while [ "$step" -lt "$steps" ]; do
    if [ -n "$checkpoint" ]; then
        # Ranks finish writing at different times (0.3 s more per rank), as real ones do: the
        # first to exit 85 must not have the others killed before they have written theirs.
        sleep "$(awk -v r="$rank" 'BEGIN { print 0.3 * r }')"
        echo "$step" > "$state.tmp" && mv "$state.tmp" "$state"
        echo "rank $rank: checkpoint step $step"
        exit 85
    fi
    echo "$step" > "$progress"
    # In the background: Slurm signals the task's whole process group, and a foreground sleep
    # killed by SIGUSR1 would have bash print "User defined signal 1". The loop waits for the
    # step's end even when the signal interrupts `wait`.
    sleep 0.2 &
    while kill -0 $! 2> /dev/null; do wait $! 2> /dev/null; done
    step=$((step + 1))
done
echo "$step" > "$state"
if [ -n "$resumed" ]; then
    echo "rank $rank: done after resume from step $resumed"
else
    echo "rank $rank: done without restart"
fi
