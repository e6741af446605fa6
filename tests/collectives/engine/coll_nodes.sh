#!/bin/bash
# The all-reduce across two emulated nodes (tests/netns/nodes.sh), 2 ranks each: shared memory
# within a node and tcp between, by Open MPI's own selection. Exact sums and buckets identical to
# one all-reduce, as on one node.
# usage: coll_nodes.sh MPIEXEC TEST_ALLREDUCE WORK_DIR    (root and iproute2; else exit 77)
set -u
mpiexec=$1; exe=$2; work=$3/coll-nodes
if [ -z "${NODES_HOSTS:-}" ]; then
    exec "$(dirname "$0")/../../netns/nodes.sh" "$work" 2,2 -- "$0" "$@"
fi
for mode in exact buckets; do
    rc=0
    # shellcheck disable=SC2086 # NODES_MPIRUN_ARGS is a list of options
    timeout 120 "$mpiexec" $NODES_MPIRUN_ARGS -np 4 -x INGOT_TIMEOUT=20s "$exe" $mode \
        > "$work/out" 2>&1 || rc=$?
    cat "$work/out"
    [ $rc = 0 ] || { echo "FAIL: $mode across two nodes: exit $rc (124: it hung)"; exit 1; }
    [ $mode != exact ] || grep -q "4 ranks on 2 node(s)" "$work/out" ||
        { echo "FAIL: the ranks were not on two nodes"; exit 1; }
done
echo "all-reduce across two nodes: ok"
