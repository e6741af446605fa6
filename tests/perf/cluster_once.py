#!/usr/bin/env python3
"""Each byte once per cluster (issue 31), measured by hand: a first epoch from a bucket of a local
SeaweedFS (weed mini, loopback; on the bridge of two emulated nodes for the 2 x 2 layout), read by
ingot-bench under the locality order dealt across nodes with one part cache per node, at several
layouts; per layout the bytes that left the store over the dataset's bytes, GETs per sample, and
first-epoch samples/s as a ratio to one rank's, medians of --reps interleaved runs.

  layouts   1x1, 1x2, 1x4 (ranks on this machine), 2x2 (two network namespaces as nodes: run
            the script under tests/netns/nodes.sh WORK 2,2 -- ..., as root; the store then
            listens on the nodes' bridge, which this machine reaches too)
  dataset   --samples of --sample-size in --shard-size shards (default 16,384 x 110 KiB in 32 MiB)
  order     INGOT_ORDER=window:--window (C = the job's node count)

usage: tests/perf/cluster_once.py BUILD [--reps 3] [--layouts 1x1,1x2,1x4] [--json OUT]
       tests/netns/nodes.sh /tmp/nodes 2,2 -- tests/perf/cluster_once.py BUILD --layouts 1x1,1x4,2x2
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client", "objstore"))
import harness  # noqa: E402  (SeaweedFS started and stopped by pid)

KEY, SECRET, BUCKET = "clusteronce", "clusteronce-secret", "once"


def bench_env(store_env, window, extra):
    env = {"INGOT_ORDER": f"window:{window}", "INGOT_WARN_UNKNOWN": "n"}
    env.update(store_env)
    env.update(extra)
    return env


def bridge_ip():
    """The address of the emulated nodes' bridge on this machine (under nodes.sh), or None."""
    args = os.environ.get("NODES_MPIRUN_ARGS", "").split()
    for i, a in enumerate(args):
        if a == "oob_tcp_if_include" and i + 1 < len(args):
            return args[i + 1].split("/")[0].rsplit(".", 1)[0] + ".1"
    return None


def run_local(build, manifest, nodes, ranks, env, out, show=None):
    cmd = ["mpirun", "--oversubscribe", "-np", str(nodes * ranks)]
    if nodes > 1:
        if bridge_ip() is None:
            raise SystemExit(f"{nodes} nodes: run the script under tests/netns/nodes.sh")
        cmd += os.environ["NODES_MPIRUN_ARGS"].split()
    for k, v in env.items():
        cmd += ["-x", f"{k}={v}"]
    cmd += [os.path.join(build, "apps", "ingot-bench"), "--manifest", manifest, "--epochs", "1",
            "--batch", "64", "--no-progress", f"--json={out}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
    if p.returncode != 0:
        raise RuntimeError(f"ingot-bench failed ({ranks} ranks)\n{p.stdout}{p.stderr}")
    for line in (p.stdout + p.stderr).splitlines():
        if show and show in line:
            print(f"  {nodes}x{ranks}: {line}")
    return json.load(open(out))


def figures(j, dataset_bytes, samples):
    e = j["epochs"][0]
    nodes = e.get("nodes", [])
    store = sum(n["store_node_bytes"] for n in nodes) or e["store_bytes"]
    gets = sum(n["store_node_requests"] for n in nodes) or e["store_requests"]
    a = j["aggregate"]
    return {"store_over_dataset": store / dataset_bytes, "gets_per_sample": gets / samples,
            "samples_per_s": a["samples_per_s"], "amplification": e.get("amplification", 0),
            "nodes": nodes}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--layouts", default="1x1,1x2,1x4")
    ap.add_argument("--samples", type=int, default=16384)
    ap.add_argument("--sample-size", default="110KiB")
    ap.add_argument("--shard-size", default="32MiB")
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="more environment for ingot-bench (e.g. INGOT_LOG_LEVEL=info)")
    ap.add_argument("--show", help="print ingot-bench's lines that hold this text")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if os.getuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    work = tempfile.mkdtemp(prefix="ingot-clusteronce.")
    sw = harness.Seaweed(harness.weed_binary(build), work, [("bench", KEY, SECRET)],
                         ip=bridge_ip() or "127.0.0.1")
    try:
        store_env = {"AWS_ENDPOINT_URL": sw.endpoint, "AWS_ACCESS_KEY_ID": KEY,
                     "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1",
                     "HOME": os.path.join(work, "home")}
        data = os.path.join(work, "data")
        subprocess.run([os.path.join(build, "apps", "ingot-bench"), "--generate", data,
                        "--samples", str(a.samples), "--sample-size", a.sample_size,
                        "--shard-size", a.shard_size, "--steps", "1", "--no-progress"],
                       check=True, capture_output=True)
        manifest, dataset = harness.bucket_dataset(build, sw.endpoint, KEY, SECRET, BUCKET, data,
                                                   store_env)
        shutil.rmtree(data)
        layouts = a.layouts.split(",")
        got = {lay: [] for lay in layouts}
        print(f"# cluster_once {time.strftime('%Y-%m-%d')} on {os.uname().nodename}, "
              f"{os.cpu_count()} cores: {a.samples} x {a.sample_size} in {a.shard_size} shards "
              f"({dataset / 2**20:.0f} MiB), INGOT_ORDER=window:{a.window}, batch 64, 1 epoch, "
              f"reps {a.reps}")
        for r in range(a.reps):
            for lay in layouts:
                nodes, ranks = (int(x) for x in lay.split("x"))
                extra = dict(kv.split("=", 1) for kv in a.env)
                j = run_local(build, manifest, nodes, ranks, bench_env(store_env, a.window, extra),
                              os.path.join(work, f"{lay}-{r}.json"), a.show)
                got[lay].append(figures(j, dataset, a.samples))
        base = statistics.median(f["samples_per_s"] for f in got[layouts[0]])
        print(f"{'layout':<7} {'store/dataset':>14} {'GETs/sample':>12} {'samples/s':>10} "
              f"{'vs ' + layouts[0]:>8}  [min - max samples/s]")
        rows = {}
        for lay in layouts:
            v = got[lay]
            med = {k: statistics.median(f[k] for f in v)
                   for k in ("store_over_dataset", "gets_per_sample", "samples_per_s")}
            rate = [f["samples_per_s"] for f in v]
            print(f"{lay:<7} {med['store_over_dataset']:14.3f} {med['gets_per_sample']:12.4f} "
                  f"{med['samples_per_s']:10.0f} {med['samples_per_s'] / base:8.2f}  "
                  f"[{min(rate):.0f} - {max(rate):.0f}]")
            rows[lay] = {"median": med, "runs": v}
        if a.json:
            json.dump(rows, open(a.json, "w"), indent=1)
    finally:
        sw.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
