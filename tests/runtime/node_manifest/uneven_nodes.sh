#!/bin/bash
# An uneven launch across two emulated hosts (tests/netns/nodes.sh), 2 ranks on one and 1 on the
# other. Every rank must make the same collective calls whatever its node's rank count: the
# node-shared manifest once made 3 job-wide agreements on a node of several ranks and 1 on a
# node of one, and such a job hung. Here ingot-bench must run to the end, bounded by a timeout,
# and name both hosts. Then the peer cache with a budget per node (INGOT_CACHE_BYTES=24MiB/node):
# the node of two ranks gives each a window of 12 MiB, the node of one rank a window of 24 MiB,
# every rank learns every window, and the second epoch reads nothing from storage.
# usage: uneven_nodes.sh MPIEXEC INGOT_BENCH WORK_DIR    (root and iproute2; else exit 77)
set -u
mpiexec=$1; bench=$2; work=$3/uneven-nodes
if [ -z "${NODES_HOSTS:-}" ]; then
    exec "$(dirname "$0")/../../netns/nodes.sh" "$work" 2,1 -- "$0" "$@"
fi
read -r n1 n2 <<< "$NODES_HOSTS"
rc=0
# shellcheck disable=SC2086 # NODES_MPIRUN_ARGS is a list of options
timeout 120 "$mpiexec" $NODES_MPIRUN_ARGS -np 3 -x INGOT_TIMEOUT=20s \
    "$bench" --no-progress --generate "$work/data" --samples 960 --sample-size 16KiB \
    --batch 48 --epochs 1 > "$work/out" 2>&1 || rc=$?
cat "$work/out"
[ $rc = 0 ] || { echo "FAIL: ingot-bench across uneven nodes: exit $rc (124: it hung)"; exit 1; }
grep -q "0->$n1:host 1->$n1:host 2->$n2:host" "$work/out" ||
    { echo "FAIL: ranks not placed 2 + 1 on the two hosts"; exit 1; }
rc=0
# shellcheck disable=SC2086
timeout 120 "$mpiexec" $NODES_MPIRUN_ARGS -np 3 -x INGOT_TIMEOUT=20s -x INGOT_LOG_LEVEL=info \
    -x INGOT_CACHE_BYTES=24MiB/node "$bench" --no-progress --manifest "$work/data/manifest.ingot" \
    --batch 48 --epochs 2 --json="$work/r.json" > "$work/out" 2>&1 || rc=$?
grep -E "cache: window|budget|^ +[01] " "$work/out"
[ $rc = 0 ] || { echo "FAIL: a budget per node across uneven nodes: exit $rc"; exit 1; }
for r in 0 1; do
    grep -Eq ":$r\] INGOT info .*cache: this rank.s window of 12582912 bytes" "$work/out" ||
        { echo "FAIL: rank $r (2 ranks on its node) has no window of 12 MiB"; exit 1; }
done
grep -Eq ":2\] INGOT info .*cache: this rank.s window of 25165824 bytes" "$work/out" ||
    { echo "FAIL: rank 2 (alone on its node) has no window of 24 MiB"; exit 1; }
grep -q "budget: INGOT_CACHE_BYTES=24MiB/node holds the whole dataset (960 samples" "$work/out" ||
    { echo "FAIL: no budget line"; exit 1; }
"${TEST_PYTHON:-/usr/bin/python3}" - "$work/r.json" <<'PY' || { echo "FAIL: epoch 2 read from storage"; exit 1; }
import json, sys
e = json.load(open(sys.argv[1]))["epochs"]
assert e[1]["bytes_storage"] == 0 and e[1]["bytes_peer"] > 0, e[1]
PY
echo "uneven nodes: ok"
