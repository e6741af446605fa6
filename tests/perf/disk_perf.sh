#!/usr/bin/env bash
# The node's disk tier (issue 25), by hand, not in ctest. 4 ranks of ingot-bench on one node over a
# slow remote: the emulated store (INGOT_STORAGE_EMULATE=bw=50MiB/s,lat=5ms for each rank's
# loader, 200 MiB/s for the job, as cache_perf.sh) or the object store (SeaweedFS on loopback,
# disk_objstore.py). Medians of REPS runs with min and max, the runs compared interleaved.
#
#   twice    job 1 fills the disk (a fresh folder), then REPS times, interleaved: job 2 (same node,
#            manifest and world) and the POSIX source reading the same shard files from the same
#            disk, both INGOT_DIRECT_IO=y, no compute, 20 epochs each: bytes from the remote
#            (goal 0) and the ratio of their rates (goal >= 0.9)
#   ranks    after job 1 on 4 ranks, job 2 on 2 ranks: bytes from the remote (goal 0)
# Bytes from the remote are shown as A+B: A the loader's from below every cache (bytes_storage),
# B the disk tier's own reads below (whole pieces for fills, prefetches: disk_bytes_below).
#   nodes    two emulated nodes (tests/netns, a folder per node): job 1 on 2 x 2, then job 2 on
#            2 x 1 and 2 x 2: bytes from the remote (goal 0)
#   budget   (issue 33) a budget smaller than the dataset against no tier: BUDGET_NP (1 and 4)
#            ranks over the emulated remote (INGOT_STORAGE_EMULATE=bw=100MiB/s,lat=2ms per rank),
#            3 epochs, global order, budgets of 25/50/75/100% of the shards (with the entries'
#            headers), the clairvoyant policy and LRU, a fresh folder per run, REPS runs
#            interleaved: per epoch the wall time and the bytes read from below (no tier: the
#            loader's from storage; the tier: its own reads below, disk_bytes_below) as medians,
#            and their ratios to no tier's (goals: every epoch <= 1.05 in time, <= 1 in bytes;
#            from epoch 2 at 50%, time <= 0.6)
#   budget_fill  the same, pieces read whole against pieces assembled from the misses' own bytes
#            (INGOT_DISK_CACHE_FILL=whole, parts), the clairvoyant policy
#   budget_nodes  the same on two emulated nodes of 2 ranks (tests/netns), no tier against
#            cluster budgets of 50% and 100% (each node's folder half of it), clairvoyant, each
#            INGOT_DISK_CACHE_FILL of NODES_FILLS ("whole parts")
#   policy   a budget of half the dataset, 4 epochs (a fresh shuffle each), no prefetch, a fresh
#            folder per run, pieces of POLICY_PIECE (32 KiB: most pieces within one sample, read
#            once an epoch, the issue's simulated trace; with 1 MiB pieces of ~9 samples each a
#            piece is read ~9 times an epoch and even LRU hits), the budget half the pieces with
#            their headers: per-epoch hit rate (bytes_disk / bytes read) of the
#            clairvoyant policy and of LRU on the same trace (goal >= 0.45 against LRU's ~0.15),
#            and the AU
#   prefetch the first epoch (a fresh folder, budget = the dataset) with the prefetcher
#            (INGOT_DISK_PREFETCH=25) and without (0), compute per step: AU
#   scan     tests/disk_scan: the start-up scan of 100,000 entries warm (goal < 1 s) and cold
#            (the page cache dropped: root)
#   objstore twice over SeaweedFS (disk_objstore.py): job 2 reads 0 bytes and makes 0 GETs
#   room     (root) a 60 MiB tmpfs, the dataset twice its size: a fresh folder, then job 1 and
#            job 2 (2 epochs each) under INGOT_DISK_CACHE_BYTES=1GiB and, interleaved, under
#            60MiB (the filesystem's size): job 2's failed fills (goal <= 10) and hit rate
#            (bytes_disk / bytes read; goal: no lower than under 60MiB), the budget in effect;
#            ROOM_BASE=BUILD_DIR adds the same runs of another tree (the one before the change)
# usage: tests/perf/disk_perf.sh BUILD_DIR [WORK_DIR] [section...]   env: REPS (3), SAMPLES
# (1024 of 110 KiB), SCAN_N (100000), POLICY_PIECE (32KiB), POLICY_NP (4), OBJSTORE_WEED (the weed binary when
# BUILD_DIR has no objstore-venv), ROOM_BASE. BUILD_DIR: a Release tree (no fault injection).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "$1"); work=${2:-$(mktemp -d "${TMPDIR:-/var/tmp}/ingot-diskperf.XXXXXX")}
shift $(( $# >= 2 ? 2 : 1 )); sections=${*:-"twice ranks nodes policy prefetch scan objstore"}
REPS=${REPS:-3} SAMPLES=${SAMPLES:-1024} SCAN_N=${SCAN_N:-100000}
POLICY_PIECE=${POLICY_PIECE:-32KiB} POLICY_NP=${POLICY_NP:-4} BUDGET_NP=${BUDGET_NP:-"1 4"}
NODES_FILLS=${NODES_FILLS:-"whole parts"} # budget_nodes: INGOT_DISK_CACHE_FILL of its runs
bench=$build/apps/ingot-bench
emulate=bw=50MiB/s,lat=5ms
# shellcheck source=tests/perf/perf_lib.sh
. "$here/perf_lib.sh"
py=${py:-python3}
mkdir -p "$work"
work=$(realpath "$work")
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
export INGOT_LOG_LEVEL=warn
data=$work/data
[ -f "$data/manifest.ingot" ] ||
    "$bench" --generate "$data" --samples "$SAMPLES" --sample-size 110KiB --shard-size 32MiB \
        --steps 1 --batch 4 --no-progress > /dev/null
dataset=$(du -cb "$data"/*.tar | tail -1 | cut -f1)
launch=(--oversubscribe)
# bench NAME NP [mpirun args...]: ingot-bench over the dataset, its JSON in $work/NAME.json
bench() {
    local name=$1 np=$2; shift 2
    # shellcheck disable=SC2086 # launch holds options
    mpirun "${launch[@]}" -np "$np" -x INGOT_LOG_LEVEL "$@" "$bench" --manifest "$data/manifest.ingot" \
        --batch 32 --no-progress ${BENCH_ARGS:-} --json="$work/$name.json" > "$work/$name.out" 2>&1 ||
        { cat "$work/$name.out"; echo "FAIL: $name"; exit 1; }
}
# remote NAME: bytes the run read from the remote, all epochs: the loader's from below every cache
# (bytes_storage) and the disk tier's own (whole pieces, prefetches: disk_bytes_below), "A+B"
remote() { $py -c "import json,sys; j=json.load(open(sys.argv[1])); print('%d+%d' % (sum(e['bytes_storage'] for e in j['epochs']), j['aggregate'].get('disk_bytes_below', 0)))" "$work/$1.json"; }
rate() { json "$work/$1.json" "['aggregate']['mib_per_s']"; }
disk=(-x INGOT_DISK_CACHE_DIR="$work/cache" -x INGOT_DISK_CACHE_BYTES=1GiB)
remote_store=(-x "INGOT_STORAGE_EMULATE=$emulate")

echo "# disk_perf $(date -u +%F) on $(hostname), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); dataset $SAMPLES x 110 KiB ($dataset bytes of shards); REPS=$REPS"
for section in $sections; do case $section in
twice)
    rm -rf "$work/cache"
    BENCH_ARGS="--epochs 1" bench job1 4 "${disk[@]}" "${remote_store[@]}" -x INGOT_DIRECT_IO=y
    echo "## job 1 (cold): $(remote job1) bytes from the remote, $(rate job1) MiB/s"
    d=() p=() rem=()
    for r in $(seq "$REPS"); do
        # 20 epochs: one of this dataset takes 50 ms, too short to time
        BENCH_ARGS="--epochs 20" bench "job2-$r" 4 "${disk[@]}" "${remote_store[@]}" -x INGOT_DIRECT_IO=y
        BENCH_ARGS="--epochs 20" bench "posix-$r" 4 -x INGOT_DIRECT_IO=y
        d+=("$(rate "job2-$r")"); p+=("$(rate "posix-$r")"); rem+=("$(remote "job2-$r")")
        rem[-1]=$(( ${rem[-1]%+*} + ${rem[-1]#*+} ))
    done
    echo "## job 2 against POSIX on the same disk, both O_DIRECT, load $(cut -d' ' -f1 /proc/loadavg)"
    row "job 2, disk tier (MiB/s)" MiB/s "${d[@]}"
    row "POSIX source, same files (MiB/s)" MiB/s "${p[@]}"
    row "job 2 bytes from the remote (storage + the tier's)" bytes "${rem[@]}"
    printf "ratio of medians: %.3f (goal >= 0.9)\n" "$(ratio "$(stats "${d[@]}" | cut -d' ' -f1)" "$(stats "${p[@]}" | cut -d' ' -f1)")"
    ;;
ranks)
    rm -rf "$work/cache"
    BENCH_ARGS="--epochs 1" bench ranks4 4 "${disk[@]}" "${remote_store[@]}"
    BENCH_ARGS="--epochs 1" bench ranks2 2 "${disk[@]}" "${remote_store[@]}"
    echo "## job 1 on 4 ranks: $(remote ranks4) bytes from the remote; job 2 on 2 ranks: $(remote ranks2) (goal 0)"
    ;;
nodes)
    if [ -z "${NODES_HOSTS:-}" ]; then
        rm -rf "$work"/cache-node-*
        "$here/../netns/nodes.sh" "$work/netns" 2,2 -- "$0" "$build" "$work" nodes ||
            echo "## nodes: skipped (no network namespaces)"
        continue
    fi
    # shellcheck disable=SC2206 # NODES_MPIRUN_ARGS is a list of options
    launch=($NODES_MPIRUN_ARGS)
    nd=(-x INGOT_DISK_CACHE_DIR="$work/cache-node-%h" -x INGOT_DISK_CACHE_BYTES=1GiB)
    BENCH_ARGS="--epochs 1" bench nodes22 4 "${nd[@]}" "${remote_store[@]}"
    BENCH_ARGS="--epochs 1" bench nodes21 2 -npernode 1 "${nd[@]}" "${remote_store[@]}"
    BENCH_ARGS="--epochs 1" bench nodes22b 4 "${nd[@]}" "${remote_store[@]}"
    echo "## two nodes: job 1 on 2 x 2 $(remote nodes22) bytes from the remote; job 2 on 2 x 1 $(remote nodes21), on 2 x 2 $(remote nodes22b) (goal 0)"
    ;;
budget | budget_fill)
    # budget: the two policies; budget_fill: pieces read whole against pieces assembled from the
    # misses' own bytes (INGOT_DISK_CACHE_FILL), both clairvoyant, prefetch at its default
    if [ "$section" = budget ]; then knob=INGOT_DISK_CACHE_POLICY vals="clairvoyant lru"; else
        knob=INGOT_DISK_CACHE_FILL vals="whole parts"; fi
    for np in $BUDGET_NP; do
        for r in $(seq "$REPS"); do
            BENCH_ARGS="--epochs 3 --batch 64" bench "$section-$np-none-$r" "$np" \
                -x INGOT_STORAGE_EMULATE=bw=100MiB/s,lat=2ms
            for pct in 25 50 75 100; do
                for v in $vals; do
                    rm -rf "$work/cache"
                    BENCH_ARGS="--epochs 3 --batch 64" bench "$section-$np-$pct-$v-$r" "$np" \
                        -x INGOT_DISK_CACHE_DIR="$work/cache" \
                        -x INGOT_DISK_CACHE_BYTES=$((dataset * (1048576 + 4096) / 1048576 * pct / 100)) \
                        -x "$knob=$v" -x INGOT_STORAGE_EMULATE=bw=100MiB/s,lat=2ms
                done
            done
        done
    done
    echo "## $section against no tier ($knob): 3 epochs, medians of $REPS (time s, MiB from below; ratio to no tier), load $(cut -d' ' -f1 /proc/loadavg)"
    $py - "$work" "$REPS" "$BUDGET_NP" "$section" "$vals" << 'PY'
import json, statistics as st, sys
work, reps, nps, section, vals = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4], sys.argv[5].split()
def load(name):
    runs = [json.load(open(f"{work}/{section}-{name}-{r}.json")) for r in range(1, reps + 1)]
    epochs = len(runs[0]["epochs"])
    wall = [st.median(x["epochs"][e]["wall_s"] for x in runs) for e in range(epochs)]
    tier = "none" not in name
    below = [st.median((x["epochs"][e]["disk_bytes_below"] if tier else x["epochs"][e]["bytes_storage"]) / 2**20 for x in runs) for e in range(epochs)]
    return wall, below
for np in nps:
    w0, b0 = load(f"{np}-none")
    print(f"| {np} rank(s) | budget | variant | " + " | ".join(f"epoch {e} s (x) | MiB below (x)" for e in range(len(w0))) + " |")
    print("| " + " | ".join(["no tier", "-", "-"] + [f"{w:.2f} | {b:.0f}" for w, b in zip(w0, b0)]) + " |")
    for pct in (25, 50, 75, 100):
        for v in vals:
            w, b = load(f"{np}-{pct}-{v}")
            print("| " + " | ".join([f"{np}", f"{pct}%", v] + [f"{x:.2f} ({x / y:.2f}) | {c:.0f} ({c / d:.2f})" for x, y, c, d in zip(w, w0, b, b0)]) + " |")
PY
    ;;
budget_nodes)
    # budget on two emulated nodes of 2 ranks (tests/netns, a folder per node): each node homes
    # half the pieces, so a node's budget of 25% (50%) of the shards is a cluster's 50% (100%)
    if [ -z "${NODES_HOSTS:-}" ]; then
        "$here/../netns/nodes.sh" "$work/netns" 2,2 -- "$0" "$build" "$work" budget_nodes ||
            echo "## budget_nodes: skipped (no network namespaces)"
        continue
    fi
    # shellcheck disable=SC2206 # NODES_MPIRUN_ARGS is a list of options
    launch=($NODES_MPIRUN_ARGS)
    for r in $(seq "$REPS"); do
        BENCH_ARGS="--epochs 3 --batch 64" bench "budget-nodes-none-$r" 4 \
            -x INGOT_STORAGE_EMULATE=bw=100MiB/s,lat=2ms
        for pct in 50 100; do
            for fill in $NODES_FILLS; do
                rm -rf "$work"/cache-node-*
                BENCH_ARGS="--epochs 3 --batch 64" bench "budget-nodes-$pct-$fill-$r" 4 \
                    -x INGOT_DISK_CACHE_DIR="$work/cache-node-%h" \
                    -x INGOT_DISK_CACHE_BYTES=$((dataset * (1048576 + 4096) / 1048576 * pct / 200)) \
                    -x INGOT_DISK_CACHE_FILL="$fill" -x INGOT_STORAGE_EMULATE=bw=100MiB/s,lat=2ms
            done
        done
    done
    echo "## two nodes of 2 ranks, cluster budgets of 50% and 100% (each node half), 3 epochs, medians of $REPS, load $(cut -d' ' -f1 /proc/loadavg)"
    $py - "$work" "$REPS" "$NODES_FILLS" << 'PY'
import json, statistics as st, sys
work, reps, fills = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def load(name):
    runs = [json.load(open(f"{work}/budget-nodes-{name}-{r}.json")) for r in range(1, reps + 1)]
    tier = name != "none"
    return [(st.median(x["epochs"][e]["wall_s"] for x in runs),
             st.median((x["epochs"][e]["disk_bytes_below"] if tier else x["epochs"][e]["bytes_storage"]) / 2**20 for x in runs))
            for e in range(len(runs[0]["epochs"]))]
base = load("none")
print("| 2 x 2 ranks | fill | " + " | ".join(f"epoch {e} s (x) | MiB below (x)" for e in range(len(base))) + " |")
print("| no tier | | " + " | ".join(f"{w:.2f} | {b:.0f}" for w, b in base) + " |")
for pct in (50, 100):
    for fill in fills:
        print(f"| {pct}% | {fill} | " + " | ".join(f"{w:.2f} ({w / w0:.2f}) | {b:.0f} ({b / b0:.2f})" for (w, b), (w0, b0) in zip(load(f"{pct}-{fill}"), base)) + " |")
PY
    ;;
policy)
    # half the dataset as stored: its pieces with their 4 KiB headers
    pb=$($py -c "import sys; s=sys.argv[1].upper().replace('IB',''); print(int(s[:-1]) << {'K':10,'M':20}[s[-1]])" "$POLICY_PIECE")
    half=$((dataset * (pb + 4096) / pb / 2))
    for r in $(seq "$REPS"); do
        BENCH_ARGS="--epochs 4 --compute-ms 5 --batch 16" bench "policy-none-$r" "$POLICY_NP" \
            "${remote_store[@]}"
        for pol in clairvoyant lru; do
            rm -rf "$work/cache"
            BENCH_ARGS="--epochs 4 --compute-ms 5 --batch 16" bench "policy-$pol-$r" "$POLICY_NP" \
                -x INGOT_DISK_CACHE_DIR="$work/cache" -x INGOT_DISK_CACHE_BYTES=$half \
                -x INGOT_DISK_CACHE_PIECE="$POLICY_PIECE" \
                -x INGOT_DISK_CACHE_POLICY=$pol -x INGOT_DISK_PREFETCH=0 "${remote_store[@]}"
        done
    done
    echo "## $POLICY_NP ranks, budget $half bytes (half the shards), pieces of $POLICY_PIECE, 4 epochs, no prefetch, load $(cut -d' ' -f1 /proc/loadavg)"
    $py - "$work" "$REPS" << 'PY'
import json, statistics as s, sys
work, reps = sys.argv[1], int(sys.argv[2])
load = lambda name: [json.load(open(f"{work}/policy-{name}-{r}.json")) for r in range(1, reps + 1)]
none = load("none")
epochs = len(none[0]["epochs"])
# against no tier: each epoch's wall time, and the bytes from below (no tier: the loader's from
# storage; the tier: its own reads below)
w0 = [s.median(x["epochs"][e]["wall_s"] for x in none) for e in range(epochs)]
b0 = [s.median(x["epochs"][e]["bytes_storage"] for x in none) for e in range(epochs)]
au = sorted(x["aggregate"]["au"] for x in none)
print(f"{'no tier':12s} " + "; ".join(f"e{e} {w0[e]:.2f} s {b0[e] / 2**20:.0f} MiB" for e in range(epochs)) + f"; run AU {s.median(au):.3f}")
for pol in ("clairvoyant", "lru"):
    runs = load(pol)
    cells = []
    for e in range(epochs):
        hit = sorted(x["epochs"][e]["bytes_disk"] / max(1, x["epochs"][e]["bytes_disk"] + x["epochs"][e]["bytes_storage"]) for x in runs)
        au = sorted(x["epochs"][e]["au"] for x in runs)
        w = s.median(x["epochs"][e]["wall_s"] for x in runs)
        b = s.median(x["epochs"][e]["disk_bytes_below"] for x in runs)
        cells.append(f"e{e} hit {s.median(hit):.3f} [{hit[0]:.3f}-{hit[-1]:.3f}] AU {s.median(au):.3f} time x{w / w0[e]:.2f} below x{b / b0[e]:.2f}")
    au = sorted(x["aggregate"]["au"] for x in runs)
    print(f"{pol:12s} " + "; ".join(cells) + f"; run AU {s.median(au):.3f} [{au[0]:.3f}-{au[-1]:.3f}]")
PY
    ;;
prefetch)
    for r in $(seq "$REPS"); do
        BENCH_ARGS="--epochs 1 --compute-ms 20" bench "prefetch-none-$r" 4 "${remote_store[@]}"
        for pf in 25 0; do
            rm -rf "$work/cache"
            BENCH_ARGS="--epochs 1 --compute-ms 20" bench "prefetch-$pf-$r" 4 "${disk[@]}" \
                -x INGOT_DISK_PREFETCH=$pf "${remote_store[@]}"
        done
    done
    a=() b=() c=() ta=() tb=() tc=()
    for r in $(seq "$REPS"); do
        a+=("$(json "$work/prefetch-25-$r.json" "['aggregate']['au']")")
        b+=("$(json "$work/prefetch-0-$r.json" "['aggregate']['au']")")
        c+=("$(json "$work/prefetch-none-$r.json" "['aggregate']['au']")")
        ta+=("$(json "$work/prefetch-25-$r.json" "['epochs'][0]['wall_s']")")
        tb+=("$(json "$work/prefetch-0-$r.json" "['epochs'][0]['wall_s']")")
        tc+=("$(json "$work/prefetch-none-$r.json" "['epochs'][0]['wall_s']")")
    done
    echo "## first epoch, 20 ms of compute per step, load $(cut -d' ' -f1 /proc/loadavg)"
    row "AU with the prefetcher (INGOT_DISK_PREFETCH=25)" AU "${a[@]}"
    row "AU without (0)" AU "${b[@]}"
    row "AU with no tier" AU "${c[@]}"
    row "epoch s with the prefetcher" s "${ta[@]}"
    row "epoch s without" s "${tb[@]}"
    row "epoch s with no tier" s "${tc[@]}"
    printf "ratio of medians: %.3f\n" "$(ratio "$(stats "${a[@]}" | cut -d' ' -f1)" "$(stats "${b[@]}" | cut -d' ' -f1)")"
    ;;
scan)
    rm -rf "$work/scan"
    echo "## the start-up scan, $SCAN_N entries, load $(cut -d' ' -f1 /proc/loadavg)"
    "$build/tests/disk_scan" "$work/scan" "$SCAN_N" "$REPS"
    rm -rf "$work/scan"
    ;;
objstore)
    "$py" "$here/disk_objstore.py" --build "$build" --reps "$REPS" --samples "$SAMPLES"
    ;;
room)
    [ "$(id -u)" = 0 ] || { echo "## room: skipped (mounting a tmpfs needs root)"; continue; }
    fs=$work/room-fs
    mkdir -p "$fs"
    mount -t tmpfs -o size=60m tmpfs "$fs"
    trees=("new=$bench")
    [ -z "${ROOM_BASE:-}" ] || trees+=("base=$(realpath "$ROOM_BASE")/apps/ingot-bench")
    for r in $(seq "$REPS"); do
        for tree in "${trees[@]}"; do
            for budget in 1GiB 60MiB; do
                rm -rf "$fs/cache"
                for j in 1 2; do
                    bench=${tree#*=} BENCH_ARGS="--epochs 2" bench "room-${tree%%=*}-$budget-$j-$r" 4 \
                        -x INGOT_DISK_CACHE_DIR="$fs/cache" -x INGOT_DISK_CACHE_BYTES=$budget \
                        "${remote_store[@]}"
                done
            done
        done
    done
    umount "$fs"
    echo "## a 60 MiB tmpfs, dataset $dataset bytes, 4 ranks, 2 epochs per job, load $(cut -d' ' -f1 /proc/loadavg)"
    $py - "$work" "$REPS" "${trees[@]%%=*}" << 'PY'
import json, re, statistics as s, sys
work, reps, trees = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def cell(v, f):
    v = sorted(v)
    return f"{f % s.median(v)} [{f % v[0]}-{f % v[-1]}]"
for tree in trees:
    for budget in ("1GiB", "60MiB"):
        for j in (1, 2):
            runs = [json.load(open(f"{work}/room-{tree}-{budget}-{j}-{r}.json")) for r in range(1, reps + 1)]
            # fills fail at the keeper alone: its report's count is the node's (the JSON's sum
            # where the tree has it)
            failed = [x["aggregate"].get("disk_fill_errors", int(re.search(r"failed fills (\d+)", x["disk_tier_rank0"]).group(1))) for x in runs]
            hit = [sum(e["bytes_disk"] for e in x["epochs"]) / max(1, sum(e["bytes_disk"] + e["bytes_storage"] for e in x["epochs"])) for x in runs]
            eff = [int(m.group(1)) if (m := re.search(r"in effect (\d+)", x["disk_tier_rank0"])) else 0 for x in runs]
            print(f"{tree:4s} budget {budget:5s} job {j}: failed fills {cell(failed, '%d')}, hit rate {cell(hit, '%.3f')}, budget in effect {cell(eff, '%d')}")
PY
    ;;
*) echo "unknown section $section"; exit 2 ;;
esac; done
