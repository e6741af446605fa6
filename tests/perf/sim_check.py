#!/usr/bin/env python3
"""ingot-sim checked against real runs on this machine (docs/sim.md, "Checked against real runs").

Each configuration runs for real (ingot-bench under mpirun, --reps times) and simulated (ingot-sim
with the costs its --calibrate measured here first, the same dataset and options, the cluster of
this machine: one node of --cores cores). Per epoch it prints the simulated wall time, AU and bytes
of each tier against the median of the real runs, with the error of each, and the real runs' own
spread. A run from a busy machine measures the machine: run it on a quiet one.

With --s3, the object-store configurations too: a SeaweedFS (`weed mini`, loopback, from
BUILD/objstore-venv or OBJSTORE_WEED) holding the dataset, its manifest built over the bucket;
the global order (a ranged GET per sample) and the order dealt over the node (its part cache),
and the global order through tests/client/objstore/fault_proxy.py answering 20% of the ranged
GETs SlowDown. The simulation's store figures are measured against the same endpoint
(`ingot-sim --calibrate --manifest s3://...`).

usage: sim_check.py --build BUILD [--reps 3] [--only NAME,...] [--cores 2] [--json FILE] [--s3]
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request

EMU = "bw=100MiB/s,lat=2ms"
# name, ranks, extra environment, extra ingot-bench/ingot-sim options; the dataset is the issue's
# (2,048 samples of 110 KiB in shards of 32 MiB), 3 epochs, --batch 64.
CONFIGS = [
    ("files-1", 1, {}, []),
    ("files-4", 4, {}, []),
    ("emulated-1", 1, {"INGOT_STORAGE_EMULATE": EMU}, []),
    ("emulated-4", 4, {"INGOT_STORAGE_EMULATE": EMU}, []),
    ("emulated-4-cache", 4, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_CACHE_BYTES": "110MiB"}, []),
    ("emulated-4-dealt", 4, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_ORDER": "window:4,nodes:2"},
     []),
    ("emulated-4-compute", 4, {"INGOT_STORAGE_EMULATE": EMU}, ["--compute-ms", "10"]),
    ("files-4-compute", 4, {}, ["--compute-ms", "5"]),
    # two emulated nodes of 2 ranks (tests/netns: network namespaces, tcp between them; root),
    # the peer cache across them; the two share this machine's cores: 1 each in the simulation
    ("nodes-2x2-cache", 4, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_CACHE_BYTES": "110MiB"}, []),
    ("nodes-2x2-dealt", 4, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_ORDER": "window:4"},
     ["--compute-ms", "10"]),
    # the disk tier, for a second job: each real run on empty disks fills them in a first job
    # (not measured); the simulation is told of that job (--prior-jobs 1). A budget holding
    # the dataset, then one holding about half of it (the clairvoyant policy keeps what pays)
    ("disk-4-second", 4, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_DISK_CACHE_BYTES": "1GiB"}, []),
    ("disk-4-half", 4, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_DISK_CACHE_BYTES": "112MiB"}, []),
    ("disk-1-second", 1, {"INGOT_STORAGE_EMULATE": EMU, "INGOT_DISK_CACHE_BYTES": "1GiB"}, []),
    # two emulated nodes, each its own folder (%h): a piece is read from its home node's disk
    ("nodes-2x2-disk-second", 4,
     {"INGOT_STORAGE_EMULATE": EMU, "INGOT_DISK_CACHE_BYTES": "1GiB"}, []),
]
PRIOR_JOBS = {"disk-4-second": 1, "disk-4-half": 1, "disk-1-second": 1,
              "nodes-2x2-disk-second": 1}
S3_CONFIGS = [
    ("s3-full-1", 1, {}, []),
    ("s3-full-4", 4, {}, []),
    ("s3-dealt-4", 4, {"INGOT_ORDER": "window:4"}, []),
    # the client's first retry waits 25 ms on average (INGOT_S3_BACKOFF_BASE 50ms, full jitter)
    ("s3-slowdown-4", 4, {}, []),
]
# what the simulation is told that the real run is made to do (the proxy's 20% SlowDown)
SIM_ONLY = {"s3-slowdown-4": ["--store-slowdown", "0.2", "--store-retry-ms", "25"]}
KEY, SECRET, BUCKET = "AKIDSIM", "sim-secret-0123456789abcdef", "sim"
NODES_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "netns", "nodes.sh")
FIELDS = ("bytes_storage", "bytes_peer", "bytes_local", "bytes_disk")


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("%s exited %d:\n%s" % (" ".join(cmd), p.returncode, p.stderr[-2000:]))
    return p.stdout


def check(a, apps, work, env, manifest, costs, configs, only, rows):
    """Each configuration of @p configs: --reps real runs, one simulated; a row per epoch."""
    for name, ranks, extra, opts in configs:
        if only and name not in only:
            continue
        cenv = dict(env, **extra)
        prior = PRIOR_JOBS.get(name, 0)
        disk_base = os.path.join(work, "disk-" + name)
        if "INGOT_DISK_CACHE_BYTES" in extra:
            cenv["INGOT_DISK_CACHE_DIR"] = disk_base + "-%h"  # each node its own
        common = ["--manifest", manifest, "--epochs", "3", "--batch", "64"] + opts
        reals = []
        for rep in range(a.reps * (prior + 1)):
            out = os.path.join(work, "%s-%d.json" % (name, rep))
            xs = []
            for k in extra:
                xs += ["-x", k]
            if "INGOT_DISK_CACHE_BYTES" in extra:
                xs += ["-x", "INGOT_DISK_CACHE_DIR"]
                if rep % (prior + 1) == 0:  # each measured job after its own earlier ones
                    for d in glob.glob(disk_base + "-*"):
                        shutil.rmtree(d, ignore_errors=True)
            bench = [os.path.join(apps, "ingot-bench")] + common + ["--no-progress",
                                                                    "--json=" + out]
            if name.startswith("nodes-"):
                # the earlier jobs and the measured one in one set of nodes (nodes.sh names its
                # hosts anew each time, and the disk tier's folders and homes follow the names)
                if rep % (prior + 1) != prior:
                    continue
                once = 'mpirun $NODES_MPIRUN_ARGS -np %d %s "$@"' % (ranks, " ".join(xs))
                run([NODES_SH, os.path.join(work, "netns"), "2,2", "--", "bash", "-c",
                     " && ".join([once] * (prior + 1)), "mpirun"] + bench, cenv)
            else:
                run(["mpirun", "-np", str(ranks), "--oversubscribe"] + xs + bench, cenv)
            if rep % (prior + 1) == prior:
                reals.append(json.load(open(out))["epochs"])
        simf = os.path.join(work, name + "-sim.json")
        cluster = (["--nodes", "2", "--ranks-per-node", "2", "--cores",
                    str(max(1, a.cores // 2))] if name.startswith("nodes-") else
                   ["--ranks-per-node", str(ranks), "--cores", str(a.cores)])
        run([os.path.join(apps, "ingot-sim")] + common + SIM_ONLY.get(name, []) + cluster +
            ["--prior-jobs", str(prior)] +
            ["--costs", costs,
             # Open MPI binds each rank to a core when there are at most 2, none when
             # oversubscribed
             "--bind", "1" if ranks <= 2 or name.startswith("nodes-") else "0",
             "--json=" + simf], cenv)
        sim = json.load(open(simf))["epochs"]
        for e in range(3):
            walls = [r[e]["wall_s"] for r in reals]
            aus = [r[e]["au"] for r in reals]
            med = statistics.median(walls)
            row = {"config": name, "epoch": e, "real_wall": med, "real_lo": min(walls),
                   "real_hi": max(walls), "sim_wall": sim[e]["wall_s"],
                   "wall_err": sim[e]["wall_s"] / med - 1 if med > 0 else 0,
                   "real_au": statistics.median(aus), "sim_au": sim[e]["au"],
                   "bound": sim[e].get("bound", "")}
            exact = all(reals[0][e][f] == sim[e][f] for f in FIELDS)
            same = all(r[e][f] == reals[0][e][f] for r in reals for f in FIELDS)
            row["bytes"] = "exact" if exact else ("differ" if same else "real runs differ")
            row["bytes_storage"] = reals[0][e]["bytes_storage"]
            row["real_gets"] = statistics.median(r[e]["store_requests"] for r in reals)
            row["sim_gets"] = sim[e]["store_requests"]
            row["real_retries"] = statistics.median(r[e]["store_retries"] for r in reals)
            row["sim_retries"] = sim[e]["store_retries"]
            rows.append(row)
            gets = ("%d / %d" % (row["real_gets"], row["sim_gets"])
                    if row["real_gets"] or row["sim_gets"] else "-")
            if row["real_retries"] or row["sim_retries"]:
                gets += " (retries %d / %d)" % (row["real_retries"], row["sim_retries"])
            print("| %-19s | %d | %.3f [%.3f-%.3f] | %.3f | %+.0f%% | %.2f | %.2f | %s | %s | %s |"
                  % (name, e, med, min(walls), max(walls), sim[e]["wall_s"],
                     100 * row["wall_err"], row["real_au"], row["sim_au"], row["bytes"], gets,
                     row["bound"]), flush=True)


def s3_checks(a, apps, work, env, data, only, rows):
    """The object-store configurations, on a SeaweedFS of this check's own."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "client", "objstore"))
    import harness
    weed = harness.weed_binary(a.build)
    if weed is None:
        sys.exit("--s3: no weed binary (BUILD/objstore-venv/bin/weed or OBJSTORE_WEED)")
    sw = harness.Seaweed(weed, work, [("sim", KEY, SECRET)])
    proxy = None
    try:
        senv = dict(harness.isolated_env(os.path.join(work, "home")), INGOT_LOG_LEVEL="warn",
                    OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    AWS_ACCESS_KEY_ID=KEY, AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
        manifest, _ = harness.bucket_dataset(a.build, sw.endpoint, KEY, SECRET, BUCKET, data,
                                             senv)
        senv["AWS_ENDPOINT_URL"] = sw.endpoint
        costs = os.path.join(work, "costs-s3")
        print(run([os.path.join(apps, "ingot-sim"), "--calibrate", costs, "--manifest",
                   manifest], senv).strip())
        proxy, port = harness.start_py_server("proxy", "fault_proxy.py",
                                              ["--upstream", "127.0.0.1:%d" % sw.port,
                                               "--no-log"], work)
        # the SlowDown runs go through the proxy: its store is measured through it (passing)
        penv = dict(senv, AWS_ENDPOINT_URL="http://127.0.0.1:%d" % port)
        costs_proxy = os.path.join(work, "costs-s3-proxy")
        print(run([os.path.join(apps, "ingot-sim"), "--calibrate", costs_proxy, "--manifest",
                   manifest], penv).strip())
        for cfg in S3_CONFIGS:
            if only and cfg[0] not in only:
                continue
            if "slowdown" in cfg[0]:
                urllib.request.urlopen("http://127.0.0.1:%d/__fault__?mode=slowdown&percent=20"
                                       "&ranged=1" % port).read()
                check(a, apps, work, penv, manifest, costs_proxy, [cfg], None, rows)
            else:
                check(a, apps, work, senv, manifest, costs, [cfg], None, rows)
    finally:
        if proxy is not None:
            proxy.stop(5)
        sw.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--only", default="")
    ap.add_argument("--cores", type=int, default=os.cpu_count())
    ap.add_argument("--data", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--s3", action="store_true")
    a = ap.parse_args()
    apps = os.path.join(a.build, "apps")
    work = tempfile.mkdtemp(prefix="sim-check-")
    data = a.data or os.path.join(work, "data")
    env = dict(os.environ, INGOT_LOG_LEVEL="warn", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for k in ("INGOT_STORAGE_EMULATE", "INGOT_CACHE_BYTES", "INGOT_ORDER", "INGOT_DISK_CACHE_BYTES",
              "INGOT_DISK_CACHE_DIR"):
        env.pop(k, None)
    if not os.path.exists(os.path.join(data, "manifest.ingot")):
        run([os.path.join(apps, "ingot-bench"), "--generate", data, "--samples", "2048",
             "--sample-size", "110KiB", "--shard-size", "32MiB", "--epochs", "1",
             "--no-progress"], env)
    manifest = os.path.join(data, "manifest.ingot")
    costs = os.path.join(work, "costs")
    print(run([os.path.join(apps, "ingot-sim"), "--calibrate", costs], env).strip())
    only = set(a.only.split(",")) if a.only else None
    rows = []
    check(a, apps, work, env, manifest, costs, CONFIGS, only, rows)
    if a.s3:
        s3_checks(a, apps, work, env, data, only, rows)
    if a.json:
        json.dump(rows, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
