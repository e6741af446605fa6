#!/bin/bash
# A fault every rank sees the same way ends a 4-rank job with one message from one rank and a
# non-zero exit, through MPI_Finalize: no "MPI_ABORT was invoked" banner and no ORTE_ERROR_LOG
# line (those follow concurrent MPI_Abort calls: mpirun's show_help receive, orte/util/
# show_help.c, fails to unpack the help messages of ranks it is killing), and ingot's line is the
# first thing printed. Cases: a usage error (ingot-bench, ingot-train, ingot-allreduce-bench),
# an invalid INGOT_* value, a missing manifest (ingot-bench and ingot-train), a checkpoint
# conflict (ingot-train without --resume), a batch the ranks do not divide, and a backend no rank
# can run (ingot-allreduce-bench --backend nccl where no rank has a GPU of its own).
# usage: shared_faults.sh MPIEXEC INGOT_BENCH INGOT_TRAIN INGOT_ALLREDUCE_BENCH INGOT_MANIFEST WORK
set -u
mpiexec=$1; bench=$2; train=$3; arb=$4; manifest_tool=$5; work=$6/shared-faults
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
out=$work/out
fail() { echo "--- output:"; cat "$out"; echo "FAIL ($case): $*"; exit 1; }

# check CASE EXPECTED_RC PATTERN -- COMMAND...: run COMMAND on 4 ranks; PATTERN (grep -E) must
# match exactly one line, the first one, and no abort banner may follow.
check() {
    case=$1; want=$2; pattern=$3; shift 4
    rc=0
    timeout -k 5 60 "$mpiexec" --oversubscribe -np 4 "$@" > "$out" 2>&1 || rc=$?
    [ "$rc" = "$want" ] || fail "exit $rc, expected $want"
    n=$(grep -cE -- "$pattern" "$out")
    [ "$n" = 1 ] || fail "'$pattern' printed $n times, expected once"
    head -1 "$out" | grep -qE -- "$pattern" || fail "ingot's line is not the first printed"
    ! grep -q "MPI_ABORT was invoked" "$out" || fail "an MPI_Abort banner"
    ! grep -q "ORTE_ERROR_LOG" "$out" || fail "ORTE_ERROR_LOG lines"
    ! grep -q "exiting improperly\|without calling .*finalize" "$out" ||
        fail "a rank left without MPI_Finalize"
    echo "ok: $case (exit $rc): $(head -1 "$out" | cut -c1-150)"
}

src=/usr/share/datasets/fashion-mnist
"$bench" --generate "$work/syn" --samples 64 --sample-size 1KiB --batch 8 --no-progress \
    > /dev/null 2>&1 || { case=generate; fail "generating a dataset"; }
syn=$work/syn/manifest.ingot

check bench-usage 2 "ingot-bench: --batch '-3' is not a non-negative integer" -- \
    "$bench" --manifest "$syn" --batch -3
check bench-config 1 "INGOT_TIMEOUT='abc': not a duration .*\(the same on 4 ranks: 0\.\.3\)" -- \
    -x INGOT_TIMEOUT=abc "$bench" --manifest "$syn" --no-progress
check bench-missing 1 "$work/nope/manifest.ingot: open failed: No such file or directory" -- \
    "$bench" --manifest "$work/nope/manifest.ingot" --no-progress
check arb-usage 2 "unrecognized option '--bogus'" -- "$arb" --bogus
check arb-nccl 1 "backend nccl asked for, but rank\(s\) 0,1,2,3 cannot run it" -- \
    "$arb" --backend nccl -b 8 -e 64 -n 1 -w 0

if [ -r "$src/t10k-images-idx3-ubyte.gz" ]; then
    "$manifest_tool" pack --fashion-mnist -o "$work/fm" --split test > /dev/null ||
        { case=pack; fail "packing Fashion-MNIST"; }
    fm=$work/fm/manifest.ingot
    t() { echo "$train" --train "$fm" --test "$fm" --epochs 1 --model softmax "$@"; }
    check train-usage 2 "ingot-train: --epochs '0' is below its minimum 1" -- $(t --epochs 0)
    check train-missing 1 "$work/nope/manifest.ingot: open failed" -- \
        "$train" --train "$work/nope/manifest.ingot" --test "$fm"
    check train-batch 1 "--batch 254 is not a multiple of the 4 ranks" -- $(t --batch 254)
    mkdir -p "$work/ck"; : > "$work/ck/model.ckpt"
    check train-checkpoint 1 "holds a checkpoint: give --resume, or another directory" -- \
        $(t --checkpoint "$work/ck")
else
    echo "ingot-train cases skipped: dataset-fashion-mnist is not installed ($src)"
fi
echo "every shared fault said once, without MPI_Abort"
