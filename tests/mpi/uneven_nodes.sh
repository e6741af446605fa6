#!/bin/bash
# An uneven launch across two emulated hosts (tests/netns/nodes.sh), 2 ranks on one and 1 on the
# other. Every rank must make the same collective calls whatever its node's rank count: the
# node-shared manifest once made 3 job-wide agreements on a node of several ranks and 1 on a
# node of one, and such a job hung. Here ingot-bench must run to the end, bounded by a timeout,
# and name both hosts.
# usage: uneven_nodes.sh MPIEXEC INGOT_BENCH WORK_DIR    (root and iproute2; else exit 77)
set -u
mpiexec=$1; bench=$2; work=$3/uneven-nodes
if [ -z "${NODES_HOSTS:-}" ]; then
    exec "$(dirname "$0")/../netns/nodes.sh" "$work" 2,1 -- "$0" "$@"
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
echo "uneven nodes: ok"
