#!/bin/bash
# The peer cache on 4 ranks, 3 epochs (tests/source/cache/test_cache.c checks exactly-once, bytes and
# where every epoch's bytes came from), on each transport set:
#   cache.sh MPIEXEC TEST_CACHE WORK_DIR node    one node: default UCX_TLS (shared memory),
#                                                tcp,self and posix,cma,self
#   cache.sh MPIEXEC TEST_CACHE WORK_DIR nodes   two emulated nodes x 2 ranks (tests/netns):
#                                                default (shared memory within, tcp between)
#                                                and tcp,self; exit 77 where namespaces fail
# Each set runs "full" (cache above the dataset, stored members scattered into the slot) and
# "small" (a budget below it, zstd members through the staging path), both again with
# INGOT_PEER_PROTOCOL=put (owners write into the slot and the staging buffers) except on shared
# memory between nodes; with the default transports also "pad" (a padded tail: samples read
# twice in the fill epoch).
set -u
mpiexec=$1; exe=$2; where=$4
work=$3/cache-$where
if [ "$where" = nodes ] && [ -z "${NODES_HOSTS:-}" ]; then
    exec "$(dirname "$0")/../../netns/nodes.sh" "$work" 2,2 -- "$0" "$@"
fi
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mkdir -p "$work"
if [ "$where" = nodes ]; then
    launch=($NODES_MPIRUN_ARGS); sets=(default tcp,self)
else
    trap 'rm -rf "$work"' EXIT
    launch=(--oversubscribe); sets=(default tcp,self posix,cma,self)
fi
fail() { echo "FAIL: $*"; exit 1; }
for tls in "${sets[@]}"; do
    runs=("full 0 67108864 auto" "small 3 240000 auto")
    [ "$tls" = default ] && runs+=("pad 0 67108864 auto")
    [ "$tls" = default ] || runs+=("full 0 67108864 put" "small 3 240000 put")
    for run in "${runs[@]}"; do
        read -r mode zstd budget proto <<< "$run"
        env=(-x INGOT_CACHE_BYTES=$budget -x INGOT_TIMEOUT=30s -x INGOT_PEER_TIMEOUT=10s
             -x INGOT_PEER_PROTOCOL=$proto)
        [ "$tls" = default ] || env+=(-x UCX_TLS=$tls)
        rc=0
        timeout 120 "$mpiexec" "${launch[@]}" -np 4 "${env[@]}" "$exe" "$mode" "$work/z$zstd" \
            "$zstd" > "$work/out" 2>&1 || rc=$?
        cat "$work/out"
        mode_of="$mode ($proto) with UCX_TLS=$tls"
        [ $rc = 0 ] || fail "$mode_of: exit $rc (124: it hung)"
        grep -q "cache $mode: ok" "$work/out" || fail "$mode_of: no result line"
        # a clean run: the counters say nothing fell back
        grep -q "hash fallbacks 0, reads sent to storage 0, homes given up 0" "$work/out" ||
            fail "$mode_of: counters missing or not zero"
        # where fetched bytes land, and why (a GPU loader on a GPU node: calibrated)
        grep -Eq "fetched bytes land in (host memory: the loader delivers batches in host memory|host memory, then copied to GPU [0-9]: fetched bytes are hash-checked on the host)" \
            "$work/out" || fail "$mode_of: no fetch destination reported"
        # the path report names what the pair got, and the reads went that way
        case "$proto/$where/$tls" in
          put/*/tcp,self) want="(same|other) node.*put \\(request; .* over tcp" ;;
          put/*) want="same node.*put \\(request; .* over posix/memory\\(am\\) cma" ;;
        esac
        if [ "$proto" = put ]; then
            grep -Eq "$want" "$work/out" || fail "$mode_of: no path '$want' reported"
            grep -Eq "peer reads sent by this rank: get 0 \\(mapped window 0\\), am [0-9]+, put [1-9]" \
                "$work/out" || fail "$mode_of: no reads counted as put"
            echo "--- $mode_of ($where): ok"
            continue
        fi
        case "$where/$tls" in
          node/default|node/posix,cma,self) want="same node.*get \\(its window mapped here" ;;
          node/tcp,self) want="same node.*am \\(request, eager reply\\) over tcp" ;;
          nodes/default) want="other node.*am \\(request, eager reply\\) over tcp" ;;
          nodes/tcp,self) want="other node.*am \\(request, eager reply\\) over tcp" ;;
        esac
        grep -Eq "$want" "$work/out" || fail "$mode_of: no path '$want' reported"
        if [ "$where/$tls" = nodes/default ]; then
            grep -Eq "same node.*get \\(its window mapped here" "$work/out" ||
                fail "two nodes, default transports: no shared-memory get within the node"
        fi
        echo "--- $mode_of ($where): ok"
    done
done
echo "cache on $where: ok"
