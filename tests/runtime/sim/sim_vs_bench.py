#!/usr/bin/env python3
"""ingot-sim against the job it simulates, for the parts whose real counts do not depend on
timing: the same dataset and options run for real by ingot-bench (4 ranks, peer cache holding
about half the dataset, 3 epochs) and by ingot-sim. Per epoch, the steps counted, the samples and
the bytes from storage, from peers and from the rank's own cache must be equal, byte for byte.
With the locality order dealt over 2 canonical nodes the same holds.

usage: sim_vs_bench.py MPIRUN_SH MPIEXEC BINDIR WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

COMPARED = ("steps", "bytes_storage", "bytes_peer", "bytes_local", "bytes_disk")


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=240)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d\n%s\n%s" % (" ".join(cmd), p.returncode, p.stdout[-3000:],
                                               p.stderr[-3000:]))
    return p


def epochs(path):
    with open(path) as f:
        doc = json.load(f)
    rows = []
    for e in doc["epochs"]:
        rows.append({k: e.get(k) for k in COMPARED})
    return rows


def main():
    mpirun, mpiexec, bindir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(work, "data")
    env = dict(os.environ, INGOT_LOG_LEVEL="warn")
    bench = os.path.join(bindir, "ingot-bench")
    sim = os.path.join(bindir, "ingot-sim")
    run([bench, "--generate", data, "--samples", "3072", "--sample-size", "16KiB", "--jitter",
         "0.5", "--shard-size", "2MiB", "--epochs", "1", "--no-progress"], env)
    manifest = os.path.join(data, "manifest.ingot")
    cases = [("full", {"INGOT_CACHE_BYTES": "24MiB"}),
             ("dealt", {"INGOT_CACHE_BYTES": "8MiB/node", "INGOT_ORDER": "window:4,nodes:2"})]
    for name, extra in cases:
        cenv = dict(env, **extra)
        common = ["--manifest", manifest, "--epochs", "3", "--batch", "128", "--seed", "5"]
        real = os.path.join(work, name + "-bench.json")
        run([mpirun, mpiexec, "4", "-x", "INGOT_CACHE_BYTES", "-x", "INGOT_ORDER", "-x",
             "INGOT_LOG_LEVEL", bench] + common + ["--no-progress", "--json=" + real],
            dict(cenv, INGOT_ORDER=extra.get("INGOT_ORDER", "full")))
        simj = os.path.join(work, name + "-sim.json")
        run([sim] + common + ["--ranks-per-node", "4", "--cores", "2", "--json=" + simj], cenv)
        r, s = epochs(real), epochs(simj)
        if len(r) != 3 or len(s) != 3:
            sys.exit("FAIL %s: %d real epochs, %d simulated" % (name, len(r), len(s)))
        for e in range(3):
            for k in r[e]:
                if r[e][k] != s[e].get(k):
                    sys.exit("FAIL %s: epoch %d %s: real %s, simulated %s\nreal %s\nsim  %s" %
                             (name, e, k, r[e][k], s[e].get(k), r, s))
        if r[1]["bytes_peer"] + r[1]["bytes_local"] == 0 or r[1]["bytes_storage"] == 0:
            sys.exit("FAIL %s: the cache should hold part of the dataset: %s" % (name, r[1]))
        print("%s: 3 epochs equal: %s" % (name, " | ".join(
            "e%d storage %d peer %d local %d" % (e, r[e]["bytes_storage"], r[e]["bytes_peer"],
                                                 r[e]["bytes_local"]) for e in range(3))))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
