#!/usr/bin/env python3
"""The issue's questions put to ingot-sim (docs/sim.md, "What the simulator says").

Two jobs from a bucket (S3-like: 20 ms to a GET's first byte, 5,500 GET/s per prefix, 16
prefixes, no bandwidth limit of its own; nodes of 64 cores and a 100 Gb/s NIC):
  imagenet: ImageNet-1k (1,281,167 samples of 110 KiB), 1,000 nodes x 8 GPUs, 8 samples per GPU
            (global batch 64,000), ResNet-50 at 3 ms a step on an H100 (about 2,700 img/s), 3 epochs;
  big:      10 TB in samples of 1 MiB (9,536,743), 100 nodes x 8 GPUs, 32 per GPU (25,600), 50 ms
            a step, 2 epochs.
Each under the full order and under the order dealt over the nodes (window:16), with and without
the peer cache that holds the dataset; then the node count swept for the first (8 samples per GPU
whatever the count), under both orders, its second epoch (whose first step counts). Then (disk)
the node disks: the budget that holds every piece homed at the busiest node (its disk_bytes_needed),
the first job with it, a second job (--prior-jobs 1), and a second job on half of it (the
clairvoyant policy keeps what pays); the 10 TB job in 64 MiB pieces (1 MiB ones would need 35 GiB
of keepers' state here).

usage: sim_use.py --build BUILD [--costs FILE] [--only NAME,...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

STORE = ["--store", "remote", "--store-latency-ms", "20", "--store-rate", "5500",
         "--store-prefixes", "16"]
NODE = ["--cores", "64", "--nic-bw", "12.5GB", "--gpus", "8"]
JOBS = {
    "imagenet": ["--samples", "1281167", "--sample-size", "110KiB", "--shard-size", "256MiB",
                 "--batch", "64000", "--compute-ms", "3", "--epochs", "3", "--nodes", "1000",
                 "--ranks-per-node", "8"],
    "big": ["--samples", "9536743", "--sample-size", "1MiB", "--shard-size", "1GiB",
            "--batch", "25600", "--compute-ms", "50", "--epochs", "2", "--nodes", "100",
            "--ranks-per-node", "8"],
}


def sim(app, args, env, costs):
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [app] + args + NODE + STORE + ["--costs", costs, "--json=" + f.name]
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if p.returncode != 0:
            sys.exit("%s: %s" % (" ".join(cmd), p.stderr))
        return json.load(open(f.name))


def row(name, order, cache, doc):
    gib = 1 << 30
    eps = doc["epochs"]
    cells = []
    for e in eps:
        disk = (", disks %.0f GiB" % (e["bytes_disk"] / gib)) if e.get("bytes_disk") else ""
        cells.append("%.1f s, AU %.2f, %.0f GiB from the store (%.2f GETs/sample), node max "
                     "%.1f GiB, peer %.0f GiB (%.0f across nodes), bound by %s" %
                     (e["wall_s"], e["au"], e["bytes_storage"] / gib,
                      e["store_gets_per_sample"], e["store_node_bytes_max"] / gib,
                      e["bytes_peer"] / gib, e["bytes_cross_node"] / gib, e["bound"]) + disk)
    print("| %s | %s | %s | %s | %.0f |" % (name, order, cache, " / ".join(cells),
                                            doc["aggregate"]["sim_s"]))
    sys.stdout.flush()
    return doc


def disks(app, env, costs):
    """The node disks of both jobs under both orders: the budget that holds each node's pieces."""
    for name, args in JOBS.items():
        denv = dict(env, INGOT_DISK_CACHE_PIECE="64MiB") if name == "big" else dict(env)
        for order in ("full", "window:16"):
            oenv = dict(denv, INGOT_ORDER=order, INGOT_DISK_CACHE_BYTES="1000TiB")
            doc = sim(app, args + ["--epochs", "2"], oenv, costs)
            need = doc["aggregate"]["disk_bytes_needed"]
            row(name + ", first job", order, "disk %.1f GiB a node" % (need / (1 << 30)), doc)
            for budget, label in ((need, "all"), (need // 2, "half")):
                benv = dict(oenv, INGOT_DISK_CACHE_BYTES=str(budget))
                row(name + ", second job", order, "disk %.1f GiB a node (%s)" %
                    (budget / (1 << 30), label),
                    sim(app, args + ["--epochs", "2", "--prior-jobs", "1"], benv, costs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--costs", default="")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    app = os.path.join(a.build, "apps", "ingot-sim")
    env = dict(os.environ, INGOT_LOG_LEVEL="warn")
    for k in ("INGOT_CACHE_BYTES", "INGOT_ORDER", "INGOT_DISK_CACHE_BYTES"):
        env.pop(k, None)
    costs = a.costs
    if not costs:
        costs = tempfile.mktemp(prefix="sim-costs-")
        subprocess.run([app, "--calibrate", costs], env=env, check=True)
    only = set(a.only.split(",")) if a.only else None
    for name, args in JOBS.items():
        if only and name not in only:
            continue
        for order in ("full", "window:16"):
            oenv = dict(env, INGOT_ORDER=order)
            doc = row(name, order, "off", sim(app, args, oenv, costs))
            need = doc["aggregate"]["cache_bytes_needed"]
            cenv = dict(oenv, INGOT_CACHE_BYTES=str(need))
            row(name, order, "%.0f GiB (all)" % (need / (1 << 30)), sim(app, args, cenv, costs))
    if not only or "disk" in only:
        disks(app, env, costs)
    if only and "sweep" not in only:
        return
    print()
    for order in ("full", "window:16"):
        for nodes in (125, 250, 500, 1000, 2000):
            args = list(JOBS["imagenet"])
            args[args.index("--nodes") + 1] = str(nodes)
            args[args.index("--batch") + 1] = str(64 * nodes)
            args[args.index("--epochs") + 1] = "2"
            doc = sim(app, args, dict(env, INGOT_ORDER=order), costs)
            doc["epochs"] = doc["epochs"][1:]  # epoch 1: its first step counted
            row("imagenet x %d nodes, epoch 1" % nodes, order, "off", doc)

if __name__ == "__main__":
    main()
