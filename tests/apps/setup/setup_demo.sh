#!/bin/bash
# The README's main job (./setup.sh demo), reduced in size but through the same script, as a
# user would run it again and again: twice in one clone (the second trains afresh and says so),
# then a second clone while the first runs, then the first clone twice at once (the second run
# waits for the first). Each run must succeed; each clone's state stays in that clone.
# The clones are copies of the source tree (what git tracks, and untracked files it does not
# ignore); DEMO_BIN points them at the apps of this build, so nothing is compiled again.
# usage: setup_demo.sh SOURCE_DIR APPS_DIR WORK_DIR
set -u
src=$1; bin=$2; work=$3/setup-demo
[ -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ] ||
    { echo "SKIP: dataset-fashion-mnist is not installed"; exit 77; }
rm -rf "$work"; mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
fail() { for f in "$work"/*.out; do echo "=== $f"; tail -40 "$f"; done; echo "FAIL: $*"; exit 1; }

clone() { # clone NAME: a copy of the source tree's files: git's list in a checkout, every file
    # in a tree git does not know (the GPU bundle's, itself copied from that list)
    mkdir -p "$work/$1"
    if git -C "$src" rev-parse --git-dir > /dev/null 2>&1; then
        (cd "$src" && git ls-files --cached --others --exclude-standard -z |
            tar --null -T - -cf -) | tar -xf - -C "$work/$1" || fail "copying the tree into $1"
    else
        tar -C "$src" -cf - . | tar -xf - -C "$work/$1" || fail "copying the tree into $1"
    fi
}
demo() { # demo CLONE OUT: the README's command, reduced
    (cd "$work/$1" && DEMO_BIN=$bin DEMO_EPOCHS=1 DEMO_SAMPLES=256 timeout -k 5 300 \
        ./setup.sh demo) > "$work/$2.out" 2>&1
}
ok() { # ok OUT: the run succeeded and trained
    grep -q "final test accuracy" "$work/$1.out" && grep -q "^=== phase times" "$work/$1.out" &&
        ! grep -q "FAILED" "$work/$1.out" || fail "$1: the demo did not run to its end"
}

clone a
clone b
demo a first || fail "first run in clone a"
ok first
! grep -q "trains afresh" "$work/first.out" || fail "the first run found a checkpoint"
demo a second || fail "second run in clone a"
ok second
grep -q "the demo trains afresh: the previous demo's checkpoint in build/demo/fmnist-ckpt is removed" \
    "$work/second.out" || fail "the second run did not say it trains afresh"

# a second clone while the first runs: neither sees the other's state
demo a third & pa=$!
demo b other || fail "clone b while clone a runs"
wait $pa || fail "clone a while clone b runs"
ok third
ok other
! grep -q "trains afresh" "$work/other.out" || fail "clone b found clone a's checkpoint"
[ -f "$work/a/build/demo/fmnist-ckpt/model.ckpt" ] && [ -f "$work/b/build/demo/fmnist-ckpt/model.ckpt" ] ||
    fail "each clone's checkpoint is not in that clone"

# one clone twice at the same time: the second waits for the first
demo a fourth & pa=$!
sleep 1
demo a fifth || fail "a second run in clone a at the same time"
wait $pa || fail "the first of two runs in clone a at the same time"
ok fourth
ok fifth
cat "$work"/fourth.out "$work"/fifth.out | grep -q "another ./setup.sh demo runs in this clone: waiting" ||
    fail "neither run of clone a waited for the other"
echo "the demo ran 6 times in 2 clones, one after the other and at the same time"
