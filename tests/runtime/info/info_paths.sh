#!/bin/sh
# ingot-info -t on 2 ranks of one node: each rank reports its path to the other (shared-memory
# get with the default transports), and itself as a local copy.
# usage: info_paths.sh MPIEXEC INGOT_INFO
set -u
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
out=$(timeout 60 "$1" --oversubscribe -np 2 "$2" -t 2>&1) || { echo "$out"; echo "FAIL: exit"; exit 1; }
echo "$out" | sed -n '/peer cache paths/,$p'
for want in "peer cache paths from rank 1" "^rank 1 (same node, host .*): get .*err mode none" \
            "^rank 0 (same node, host .*): get .*err mode none" "^rank 0 (itself): local copy"; do
    echo "$out" | grep -q "$want" || { echo "FAIL: no line '$want'"; exit 1; }
done
echo "ingot-info -t paths: ok"
