#!/bin/sh
# ingot-sim's command line (docs/sim.md): a small described job runs and prints its table,
# ingot-bench's JSON and its plot; each bad input exits 1 (2 for a bad option) naming what is wrong: a cluster
# that cannot be, a cost file of another version or missing a stage, a run estimated too long.
# A node from an hwloc XML (a DGX H100 fixture): its cores and GPUs, its ranks placed as a job's.
# usage: sim_cli.sh INGOT_SIM FIXTURES_TOPOLOGY_DIR
set -u
sim=$1
topo=$2
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# expect CODE WORDS [VAR=VALUE] -- ARGS...: the run (VAR set) exits CODE, its stderr holds WORDS
expect() {
    code=$1; words=$2; shift 2
    var=SIM_CLI_NOTHING=1
    [ "$1" != "--" ] && { var=$1; shift; }
    shift
    env "$var" "$sim" "$@" > "$work/out" 2> "$work/err"; rc=$?
    [ "$rc" = "$code" ] || fail "ingot-sim $* exited $rc, not $code: $(cat "$work/err")"
    grep -qF -- "$words" "$work/err" || fail "ingot-sim $*: no '$words' in: $(cat "$work/err")"
    echo "ok ($rc): $words"
}
# costs by hand (no calibration: quick and the same everywhere)
cat > "$work/costs" << 'C'
version 2
verify_bps 2e10
copy_bps 1e10
decode_bps 2e9
sample_s 2e-6
read_bps 1e10
read_s 1e-6
peer_bps 5e9
peer_s 3e-5
fault_bps 1e11
disk_bps 5e9
get_s 0
get_bps 0
store_bps 0
get_rate 0
C
j="$work/sim.json"
"$sim" --samples 4096 --sample-size 16KiB --nodes 2 --ranks-per-node 4 --epochs 2 \
    --costs "$work/costs" --json="$j" --svg "$work/plot.svg" > "$work/table" ||
    fail "a described job: exit $?"
grep -q "epoch" "$work/table" || fail "no table: $(cat "$work/table")"
"${TEST_PYTHON:-python3}" - "$j" << 'PY' || fail "JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "ingot-sim" and d["ranks"] == 8, d
e = d["epochs"]
assert len(e) == 2 and all(x["bytes_storage"] > 0 and x["wall_s"] > 0 for x in e), e
assert e[1]["steps"] == 8 and e[0]["steps"] == 7, e  # 4096 / 512; the run's first step left out
print("ok: JSON of 2 epochs, 8 ranks")
PY
"${TEST_PYTHON:-python3}" - "$work/plot.svg" << 'PY' || fail "SVG"
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(sys.argv[1])
rects = d.getElementsByTagName("rect")
lines = d.getElementsByTagName("polyline")
assert len(rects) == 1 + 4 + 2 * 4 and len(lines) == 1, (len(rects), len(lines))  # bg, legend, bars
print("ok: SVG of 2 epochs")
PY
expect 1 "--nodes is 0" -- --samples 100 --nodes 0 --costs "$work/costs"
expect 1 "--cores is 0" -- --samples 100 --cores 0 --costs "$work/costs"
expect 1 "--node-ranks: node 1 has no ranks" -- --samples 100 --node-ranks 2,0 --costs "$work/costs"
expect 1 "node 0 has 8 ranks and --gpus 4" INGOT_GPU_SHARING=error -- --samples 1024 \
    --ranks-per-node 8 --gpus 4 --costs "$work/costs"
expect 1 "--bind 4 is more than the node's --cores 2" -- --samples 100 --cores 2 --bind 4 \
    --costs "$work/costs"
sed 's/^version 2/version 7/' "$work/costs" > "$work/v7"
expect 1 "cost file version 7, this ingot-sim reads version 2" -- --samples 100 --costs "$work/v7"
grep -v '^peer_s' "$work/costs" > "$work/nopeer"
expect 1 "stage 'peer_s'" -- --samples 100 --costs "$work/nopeer"
expect 1 "would take about" -- --samples 1000000 --epochs 100000 --costs "$work/costs" --max-s 60
expect 2 "--nodes" -- --samples 100 --nodes many
expect 1 "INGOT_DISK_CACHE_BYTES=65536 holds no entry" INGOT_DISK_CACHE_BYTES=64KiB -- \
    --samples 1024 --costs "$work/costs"
expect 2 "--prior-jobs" -- --samples 100 --prior-jobs -1
# a node of the DGX H100 fixture: 112 cores and 8 GPUs, 8 ranks placed one per GPU
"$sim" --samples 4096 --sample-size 16KiB --nodes 2 --ranks-per-node 8 --topology \
    "$topo/dgx-h100.xml" --costs "$work/costs" --json="$j" > /dev/null || fail "--topology: exit $?"
"${TEST_PYTHON:-python3}" -c '
import json, sys
c = json.load(open(sys.argv[1]))["cluster"]
assert c["cores"] == 112 and c["gpus"] == 8 and c["topology"].endswith("dgx-h100.xml"), c
print("ok: a node of", c["topology"], c["cores"], "cores")' "$j" || fail "--topology JSON"
expect 1 "node 0: its 16 ranks cannot be placed on the node of" INGOT_GPU_SHARING=error -- \
    --samples 1024 --ranks-per-node 16 --topology "$topo/dgx-h100.xml" --costs "$work/costs"
expect 1 "no-such.xml" -- --samples 1024 --topology "$topo/no-such.xml" --costs "$work/costs"
expect 1 "INGOT_CACHE_BYTES) and the part cache (0) take more than --memory" \
    INGOT_CACHE_BYTES=64GiB -- --samples 1024 --ranks-per-node 4 --memory 16GiB \
    --costs "$work/costs"
# the disk tier: a job after one that filled the disks reads everything from them
INGOT_DISK_CACHE_BYTES=1GiB "$sim" --samples 4096 --sample-size 16KiB --nodes 2 \
    --ranks-per-node 4 --epochs 2 --prior-jobs 1 --costs "$work/costs" --json="$j" > /dev/null ||
    fail "the disk tier: exit $?"
"${TEST_PYTHON:-python3}" - "$j" << 'PY' || fail "JSON of the disk tier"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["epochs"]
assert all(x["bytes_disk"] > 0 and x["bytes_storage"] == 0 for x in e), e
assert d["aggregate"]["disk_bytes_needed"] > 0 and d["args"]["prior_jobs"] == 1, d
print("ok: a second job from the disks")
PY
echo "sim_cli: all passed"
