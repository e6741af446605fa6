#!/usr/bin/python3
"""The object-store client's ranged-GET rate against SeaweedFS on loopback, by part size.

Starts `weed mini` (tests/client/objstore/harness.py), uploads one object (256 MiB by default),
reads it once to warm the page cache and once with objstore_get --verify (every byte checked),
then measures side by side:
  - curl(1), one signed GET of the whole object (the ceiling of one connection);
  - objstore_get (tests/perf/objstore_get.c: our libcurl-multi client) at part sizes of
    1, 4, 8 and 16 MiB, with 1 and 4 requests in flight (as many connections);
  - small GETs: 64 KiB ranges with 1, 8 and 32 in flight (BENCHMARKS.md's requests/s row);
reporting MiB/s, the client's CPU-seconds per GiB and SeaweedFS's (from /proc/PID/stat), the
median of --reps runs. Prints a table and writes --json. Stops the server by pid.

Usage: tests/perf/objstore_perf.py [--build build] [--size-mib 256] [--bytes-mib 512] [--reps 3]
                                   [--json FILE]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client", "objstore"))
import harness  # noqa: E402

KEY, SECRET, BUCKET, OBJ = "AKIDPERF", "perf-secret-0123456789", "perf", "perf/object.bin"
TICK = os.sysconf("SC_CLK_TCK")


def object_bytes(n):
    try:
        import numpy as np
        i = np.arange(n, dtype=np.uint64)
        seed = harness.key_seed(OBJ)
        return (((i * np.uint64(2654435761)) >> np.uint64(13)) ^ np.uint64(seed)).astype(
            np.uint8).tobytes()
    except ImportError:  # the contents are then not checked
        return os.urandom(n)


def cpu_of(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_curl(sw, size):
    url = f"{sw.endpoint}/{BUCKET}/{OBJ}"
    c0, s0, t0 = children_cpu(), cpu_of(sw.proc.pid), time.monotonic()
    subprocess.run(["curl", "-sf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user",
                    f"{KEY}:{SECRET}", "-H", "x-amz-content-sha256: UNSIGNED-PAYLOAD", "-o",
                    "/dev/null", url], check=True)
    secs = time.monotonic() - t0
    gib = size / 2**30
    return {"mib_s": size / 2**20 / secs, "cpu_s_per_gib": (children_cpu() - c0) / gib,
            "server_cpu_s_per_gib": (cpu_of(sw.proc.pid) - s0) / gib}


def run_tool(tool, sw, env, size, part_kib, inflight, total):
    s0 = cpu_of(sw.proc.pid)
    out = subprocess.run([tool, "--url", f"s3://{BUCKET}/{OBJ}", "--size", str(size),
                          "--part", f"{part_kib}KiB", "--inflight", str(inflight),
                          "--connections", str(inflight), "--bytes", str(total)],
                         env=env, capture_output=True, text=True, check=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    r["server_cpu_s_per_gib"] = (cpu_of(sw.proc.pid) - s0) / (r["bytes"] / 2**30)
    r["req_s"] = r["requests"] / r["seconds"]
    return r


def median_of(runs):
    keys = ("mib_s", "cpu_s_per_gib", "server_cpu_s_per_gib")
    out = {k: statistics.median(r[k] for r in runs) for k in keys}
    for k in ("p50_ms", "p99_ms", "req_s"):
        if k in runs[0]:
            out[k] = statistics.median(r[k] for r in runs)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(HERE, "..", "..", "build"))
    ap.add_argument("--size-mib", type=int, default=256)
    ap.add_argument("--bytes-mib", type=int, default=512)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    tool = os.path.join(build, "tests", "objstore_get")
    weed = harness.weed_binary(build)
    if weed is None or not os.access(tool, os.X_OK):
        print("SKIP: needs BUILD/tests/objstore_get (cmake --build BUILD --target objstore_get) "
              "and weed (tests/source/objstore/run.sh installs it)")
        return 77
    work = tempfile.mkdtemp(prefix="ingot-objstore-perf.")
    sw = harness.Seaweed(weed, work, [("perf", KEY, SECRET)])
    try:
        size = args.size_mib << 20
        s3 = harness.s3_client(sw.endpoint, KEY, SECRET)
        s3.create_bucket(Bucket=BUCKET)
        s3.put_object(Bucket=BUCKET, Key=OBJ, Body=object_bytes(size))
        env = harness.isolated_env(os.path.join(work, "home"))
        env.update(AWS_ENDPOINT_URL=sw.endpoint, AWS_ACCESS_KEY_ID=KEY,
                   AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1")
        run_curl(sw, size)  # warm the server's caches
        subprocess.run([tool, "--url", f"s3://{BUCKET}/{OBJ}", "--size", str(size), "--verify",
                        "--bytes", str(size)], env=env, check=True, capture_output=True)
        total = args.bytes_mib << 20
        configs = [("curl, 1 GET", lambda: run_curl(sw, size))]
        for inflight in (1, 4):
            for part in (1, 4, 8, 16):
                configs.append((f"objstore {part:>2} MiB x{inflight}",
                                lambda p=part, n=inflight: run_tool(tool, sw, env, size, p << 10,
                                                                    n, total)))
        for inflight in (1, 8, 32):
            configs.append((f"objstore 64 KiB x{inflight}",
                            lambda n=inflight: run_tool(tool, sw, env, size, 64, n, 64000 << 10)))
        load0 = os.getloadavg()[0]
        runs = {name: [] for name, _ in configs}
        for _ in range(args.reps):  # round robin: a busy moment hits every row alike
            for name, fn in configs:
                runs[name].append(fn())
        load1 = os.getloadavg()[0]
        rows = [(name, median_of(runs[name])) for name, _ in configs]
    finally:
        sw.stop()
        subprocess.run(["rm", "-rf", work])
    print(f"# objstore_perf: SeaweedFS on loopback, {args.size_mib} MiB object, page cache warm, "
          f"median of {args.reps}; {os.cpu_count()} CPUs, load average {load0:.1f} at the start, "
          f"{load1:.1f} at the end; {time.strftime('%Y-%m-%d')}")
    print(f"{'client':<22} {'MiB/s':>8} {'GET/s':>8} {'client':>9} {'server':>9} {'p50':>7} "
          f"{'p99':>7}")
    print(f"{'':<22} {'':>8} {'':>8} {'CPU-s/GiB':>9} {'CPU-s/GiB':>9} {'ms':>7} {'ms':>7}")
    nan = float("nan")
    for name, r in rows:
        print(f"{name:<22} {r['mib_s']:8.0f} {r.get('req_s', nan):8.0f} "
              f"{r['cpu_s_per_gib']:9.2f} {r['server_cpu_s_per_gib']:9.2f} "
              f"{r.get('p50_ms', nan):7.2f} {r.get('p99_ms', nan):7.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "load": [load0, load1],
                       "rows": [{"client": n, **r} for n, r in rows]}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
