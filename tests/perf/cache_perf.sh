#!/usr/bin/env bash
# Peer cache benchmarks (run by hand, not in ctest). Every figure is a ratio to a ceiling or a
# peer measured in the same run; medians of REPS runs with min and max.
#
#   fetch   tests/perf/cache_fetch (2 ranks, one node): rank 0 streams rank 1's 1 GiB window in
#           reads of 64 KiB and 1 MiB, into an 8 MiB destination ring (the size of a loader's
#           slots) and a 64 MiB one, per transport set, against the best ucx_perftest primitive
#           on the same transports, taken where it is not cache-hot: ucp_get of 1 GiB (shared
#           memory; ucx_perftest's 1 MiB get reuses one L3-resident buffer) and ucp_am_bw of
#           1 GiB (tcp, where UCX only emulates get)                          goal >= 0.9
#           each with the protocol auto picks and with INGOT_PEER_PROTOCOL=put
#   nodes   the same fetch between two emulated nodes (tests/netns: tcp between network
#           namespaces; a 512 MiB window, as each namespace's /dev/shm holds 1 GiB) against
#           ucp_am_bw of 512 MiB between the same namespaces over tcp
#   epochs  ingot-bench, 4 ranks, 3 epochs of 220 MiB behind the emulated remote store
#           (INGOT_STORAGE_EMULATE=bw=50MiB/s,lat=5ms: each rank's loader has its own link, so
#           200 MiB/s for the job), 30 ms of compute per step, with the cache: epoch 0 is
#           store-bound, later epochs run at the consumer's rate (AU >= 0.99);
#           the same run without the cache beside it
# usage: tests/perf/cache_perf.sh BUILD_DIR [WORK_DIR] [section...]   env: REPS (3)
set -euo pipefail
build=$(realpath "$1"); work=${2:-$(mktemp -d "${TMPDIR:-/tmp}/ingot-cacheperf.XXXXXX")}
shift $(( $# >= 2 ? 2 : 1 )); sections=${*:-"fetch nodes epochs"}
REPS=${REPS:-3}
fetch=$build/tests/cache_fetch
bench=$build/apps/ingot-bench
mkdir -p "$work"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
median() { python3 -c 'import sys, statistics as s; v=sorted(float(x) for x in sys.argv[1:]); print(f"{s.median(v):.2f} [{v[0]:.2f}-{v[-1]:.2f}]")' "$@"; }
# perftest TLS TEST SIZE ITERS: overall bandwidth in GB/s of one loopback run
perftest() {
    local port=$((20000 + RANDOM % 20000)) tls=$1
    [ "$tls" = default ] && tls=all
    UCX_TLS=$tls ucx_perftest -p $port -t "$2" -s "$3" -n "$4" > /dev/null 2>&1 &
    local srv=$!
    sleep 0.5
    UCX_TLS=$tls timeout 120 ucx_perftest -p $port 127.0.0.1 -t "$2" -s "$3" -n "$4" 2>&1 |
        awk '/Final:/ { printf "%.3f\n", $7 / 1000 }'
    wait $srv 2> /dev/null || true
}

echo "# cache_perf $(date -u +%F) on $(hostname), $(nproc) cores, UCX $(ucx_info -v | sed -n 's/^# Version //p'); REPS=$REPS"
for section in $sections; do case $section in
fetch)
    for tls in default posix,cma,self tcp,self; do
        if [ "$tls" = tcp,self ]; then prim=ucp_am_bw; else prim=ucp_get; fi
        ceil=()
        for r in $(seq "$REPS"); do ceil+=("$(perftest $tls $prim 1073741824 8)"); done
        c=$(median "${ceil[@]}"); cm=${c%% *}
        echo "## UCX_TLS=$tls: ceiling $prim 1 GiB = $c GB/s"
        for proto in auto put; do for ring in 8 64; do for piece in 65536 1048576; do
            v=(); path=
            for r in $(seq "$REPS"); do
                x=(-x INGOT_PEER_PROTOCOL=$proto); [ "$tls" = default ] || x+=(-x UCX_TLS=$tls)
                line=$(mpirun --oversubscribe -np 2 "${x[@]}" "$fetch" $piece 1024 16777216 4 $ring |
                    grep '^fetch')
                v+=("$(echo "$line" | awk '{print $3}')"); path=${line#*: }
                first=$(echo "$line" | sed -n 's/.*first pass \([0-9.]*\) s.*/\1/p')
            done
            m=$(median "${v[@]}")
            printf "fetch %-4s %7d B ring %2d MiB: %s GB/s  ratio %.2f  (first pass: %s s; it maps the window where shared memory can)  %s\n" \
                $proto $piece $ring "$m" "$(python3 -c "print(${m%% *} / $cm)")" "$first" "$path"
        done; done; done
    done ;;
nodes)
    if [ -z "${NODES_HOSTS:-}" ]; then
        "$(dirname "$0")/../netns/nodes.sh" "$work/netns" 1,1 -- "$0" "$build" "$work" nodes ||
            echo "## nodes: skipped (no network namespaces)"
        continue
    fi
    read -r h0 h1 <<< "$NODES_HOSTS"
    ip0=$(ip netns exec "$h0" ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)
    ceil=()
    for r in $(seq "$REPS"); do
        port=$((20000 + RANDOM % 20000))
        # tcp,self: plain `ip netns exec` shares IPC and /dev/shm, so UCX would take shared memory
        UCX_TLS=tcp,self ip netns exec "$h0" ucx_perftest -p $port -t ucp_am_bw -s 536870912 -n 8 \
            > /dev/null 2>&1 &
        sleep 0.5
        ceil+=("$(UCX_TLS=tcp,self ip netns exec "$h1" timeout 120 ucx_perftest -p $port "$ip0" -t ucp_am_bw \
            -s 536870912 -n 8 2>&1 | awk '/Final:/ { printf "%.3f\n", $7 / 1000 }')")
        wait
    done
    c=$(median "${ceil[@]}"); cm=${c%% *}
    echo "## two emulated nodes (tcp between namespaces): ceiling ucp_am_bw 512 MiB = $c GB/s"
    for piece in 65536 1048576; do
        v=(); path=
        for r in $(seq "$REPS"); do
            # shellcheck disable=SC2086 # NODES_MPIRUN_ARGS is a list of options
            line=$(mpirun $NODES_MPIRUN_ARGS -np 2 "$fetch" $piece 512 16777216 4 8 | grep '^fetch')
            v+=("$(echo "$line" | awk '{print $3}')"); path=${line#*: }
        done
        m=$(median "${v[@]}")
        printf "fetch %7d B ring  8 MiB: %s GB/s  ratio %.2f  %s\n" $piece "$m" \
            "$(python3 -c "print(${m%% *} / $cm)")" "$path"
    done ;;
epochs)
    data=$work/epochs
    [ -f "$data/manifest.ingot" ] ||
        "$bench" --generate "$data" --samples 2048 --sample-size 110KiB --steps 1 --no-progress > /dev/null
    for cache in 1073741824 0; do
        for r in $(seq "$REPS"); do
            mpirun --oversubscribe -np 4 -x INGOT_CACHE_BYTES=$cache \
                -x INGOT_STORAGE_EMULATE=bw=50MiB/s,lat=5ms "$bench" --manifest "$data/manifest.ingot" \
                --epochs 3 --compute-ms 30 --no-progress --json="$work/epochs-$cache-$r.json" > /dev/null
        done
        python3 - "$cache" "$work"/epochs-$cache-*.json << 'PY'
import json, statistics as s, sys
cache, runs = sys.argv[1], [json.load(open(f)) for f in sys.argv[2:]]
print(f"## INGOT_CACHE_BYTES={cache}, {len(runs)} runs: per epoch AU and record MiB by source (all ranks)")
for e in range(len(runs[0]["epochs"])):
    au = sorted(r["epochs"][e]["au"] for r in runs)
    mib = lambda k: s.median(r["epochs"][e][k] for r in runs) / 2**20
    print(f"epoch {e}: AU {s.median(au):.4f} [{au[0]:.4f}-{au[-1]:.4f}]  storage {mib('bytes_storage'):.1f}"
          f"  peer {mib('bytes_peer'):.1f}  local {mib('bytes_local'):.1f}")
PY
    done ;;
*) echo "unknown section $section"; exit 2 ;;
esac; done
