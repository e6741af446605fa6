#!/usr/bin/python3
"""Checks of ingot-topo --json output: topo_json_check.py {dgx|cpu|mpi} FILE (exit 1 on failure)."""
import json
import sys


def cpus(text):
    """CPUs of an hwloc list string ("0-13,112-125")."""
    out = set()
    for part in filter(None, text.split(",")):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return out


def check_dgx(doc):
    """8 ranks on the DGX-like node: own GPU, NIC behind the same switch, CPUs near the GPU."""
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
        ingest = cpus(r["ingest_cpuset"])
        assert ingest <= c and cpus(r["trainer_cpuset"]) == c - ingest
        assert r["ucx_net_devices"] == r["nic"] + ":1" and r["nccl_ib_hca"] == "=" + r["nic"] + ":1"
        assert r["cuda_visible_devices"] == str(r["gpu"]) and r["flags"] == []


def check_cpu(doc):
    """4 ranks on the CPU-only 2-socket node: 2 per NUMA node, the one NIC."""
    p = doc["plan"]
    assert p["mode"] == "cpu" and [r["numa"] for r in p["ranks"]] == [0, 0, 1, 1], p
    assert all(r["gpu"] == -1 and r["nic"] == "eno1" for r in p["ranks"])


def check_mpi(doc):
    """mpirun -np 4 on this machine: 4 local ranks within the allowed CPUs; a CPU-only plan
    covers them all, a GPU plan gives every rank a GPU (shared where the node has fewer)."""
    p, allowed = doc["plan"], cpus(doc["node"]["allowed_cpuset"])
    assert p["local_size"] == 4 and [r["local_rank"] for r in p["ranks"]] == [0, 1, 2, 3]
    assert all(cpus(r["cpuset"]) and cpus(r["cpuset"]) <= allowed for r in p["ranks"])
    if p["mode"] == "cpu":
        assert all(r["gpu"] == -1 for r in p["ranks"])
        assert set().union(*(cpus(r["cpuset"]) for r in p["ranks"])) == allowed
    else:
        assert all(r["gpu"] >= 0 for r in p["ranks"]), p["ranks"]
    print("plan:", p["mode"], [r["cpuset"] for r in p["ranks"]])


if __name__ == "__main__":
    what, path = sys.argv[1], sys.argv[2]
    {"dgx": check_dgx, "cpu": check_cpu, "mpi": check_mpi}[what](json.load(open(path)))
    print(what, "json ok")
