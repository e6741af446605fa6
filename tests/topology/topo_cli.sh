#!/bin/sh
# topo_cli.sh INGOT_TOPO FIXTURES MPIRUN_SH MPIEXEC: ingot-topo's table, its JSON (parsed by
# Python and checked against the issue's "done when"), its bad input, and `mpirun -np 4
# ingot-topo` on this machine.
set -eu
topo=$1; fx=$2; mpirun_sh=$3; mpiexec=$4
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The DGX-like node, 8 ranks: own GPU, a NIC behind the same switch, CPUs of the GPU's locality.
"$topo" --xml "$fx/dgx-h100.xml" --ranks-per-node 8 --json > "$tmp/dgx.json"
"$py" - "$tmp/dgx.json" <<'PY'
import json, sys
def cpus(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
doc = json.load(open(sys.argv[1]))
node, plan = doc["node"], doc["plan"]
assert plan["mode"] == "gpu" and plan["local_size"] == 8 and len(plan["ranks"]) == 8
gpus = {g["index"]: g for g in node["gpus"]}
assert len({r["gpu"] for r in plan["ranks"]}) == 8
seen = set()
for r in plan["ranks"]:
    g = gpus[r["gpu"]]
    assert r["distance"] == "switch", r
    assert r["pci_busid"] == g["pci_busid"] and r["numa"] == g["numa"]
    c = cpus(r["cpuset"])
    assert c and c <= cpus(g["locality"]) and not (c & seen), r
    seen |= c
    assert cpus(r["ingest_cpuset"]) <= c and cpus(r["trainer_cpuset"]) == c - cpus(r["ingest_cpuset"])
    assert r["ucx_net_devices"] == r["nic"] + ":1" and r["nccl_ib_hca"] == "=" + r["nic"] + ":1"
    assert r["cuda_visible_devices"] == str(r["gpu"]) and r["flags"] == []
print("dgx json ok")
PY

# CPU-only node, 4 ranks: 2 per NUMA node.
"$topo" --xml "$fx/cpu-2s.xml" --ranks-per-node 4 --json > "$tmp/cpu.json"
"$py" -c '
import json, sys
p = json.load(open(sys.argv[1]))["plan"]
assert p["mode"] == "cpu" and [r["numa"] for r in p["ranks"]] == [0, 0, 1, 1], p
assert all(r["gpu"] == -1 and r["nic"] == "eno1" for r in p["ranks"])
print("cpu-only json ok")' "$tmp/cpu.json"

# The table: a header and one row per rank.
"$topo" --xml "$fx/gpu4-nic1.xml" --ranks-per-node 4 > "$tmp/table.txt"
grep -q "^rank  gpu  pci_busid" "$tmp/table.txt" || fail "no table header"
[ "$(grep -c '^[0-3] .*mlx5_0' "$tmp/table.txt")" = 4 ] || fail "table rows: $(cat "$tmp/table.txt")"

# Bad input: exit status and a message naming what was expected and found.
if "$topo" --xml /nonexistent.xml --ranks-per-node 1 2> "$tmp/err"; then fail "missing XML accepted"; fi
grep -q "cannot open" "$tmp/err" || fail "missing XML: $(cat "$tmp/err")"
if INGOT_GPUS=0,9 "$topo" --xml "$fx/dgx-h100.xml" --ranks-per-node 1 2> "$tmp/err"; then fail "GPU 9 accepted"; fi
grep -q "'9' names no GPU" "$tmp/err" || fail "GPU 9: $(cat "$tmp/err")"
if "$topo" --xml "$fx/dgx-h100.xml" --ranks-per-node 9 2> "$tmp/err"; then fail "9 ranks on 8 GPUs accepted"; fi
grep -q "INGOT_GPU_SHARING=share" "$tmp/err" || fail "9 ranks: $(cat "$tmp/err")"
INGOT_GPU_SHARING=share "$topo" --xml "$fx/dgx-h100.xml" --ranks-per-node 9 > /dev/null
rc=0; "$topo" --ranks-per-node 0 2> /dev/null || rc=$?
[ "$rc" = 2 ] || fail "--ranks-per-node 0 exited $rc, expected 2"

# mpirun -np 4 on this machine: a sane CPU-only plan (or GPU plan where there are GPUs).
"$mpirun_sh" "$mpiexec" 4 "$topo" --json > "$tmp/mpi.json"
"$py" -c '
import json, sys
def cpus(s):
    out = set()
    for part in filter(None, s.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out
d = json.load(open(sys.argv[1]))
p, allowed = d["plan"], cpus(d["node"]["allowed_cpuset"])
assert p["local_size"] == 4 and [r["local_rank"] for r in p["ranks"]] == [0, 1, 2, 3]
assert set().union(*(cpus(r["cpuset"]) for r in p["ranks"])) == allowed
assert all(cpus(r["cpuset"]) <= allowed for r in p["ranks"])
if p["mode"] == "cpu":
    assert all(r["gpu"] == -1 for r in p["ranks"])
print("mpirun -np 4 json ok:", p["mode"], [r["cpuset"] for r in p["ranks"]])' "$tmp/mpi.json"
echo "cli ok"
