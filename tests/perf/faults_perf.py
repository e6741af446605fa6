#!/usr/bin/env python3
"""Faults at the object store's edge (issue 32), measured by hand: 4 ranks read an s3:// manifest
(2,048 samples of 110 KiB, SeaweedFS on loopback) through the fault proxy, which spoils 5% of the
ranged GETs one way or another; per fault and order, the epoch time (ingot-bench's JSON, the wall
of the run), its ratio to the clean run of the same order, the GETs, hedges, stall retries and
re-reads, medians of --reps interleaved runs. Every run must deliver every sample.

  faults    none, stall (half the body, --stall-s of silence, the rest dropped), reset (a TCP
            reset before the answer), short (Content-Length larger than the body sent: half of
            it, then the connection closed; the proxy's 'truncate'), flip (one byte flipped),
            slow (the body at 4 KiB per ms)
  orders    global (INGOT_ORDER=full) and window:2
  configs   hedged (the defaults: INGOT_S3_HEDGE=3), and for stall and slow the baseline without
            hedging (INGOT_S3_HEDGE=0) at the default INGOT_S3_STALL_TIMEOUT (5 s) and tuned by
            hand (--tuned-stall, 1 s)

usage: tests/perf/faults_perf.py BUILD [--reps 3] [--faults none,stall,...] [--json OUT]
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
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client", "objstore"))
import harness  # noqa: E402  (servers started and stopped by pid)

KEY, SECRET, BUCKET = "faultsperf", "faultsperf-secret", "faults"
ORDERS = {"global": "full", "window:2": "window:2"}
PROXY_MODE = {"none": "pass", "short": "truncate"}  # the others by their own names


def fault(port, mode, percent):
    url = f"http://127.0.0.1:{port}/__fault__?mode={mode}&percent={percent}&ranged=1"
    return json.load(urllib.request.urlopen(url, timeout=5))


def run(build, manifest, env, out, ranks):
    cmd = ["mpirun", "--oversubscribe", "-np", str(ranks)]
    for k, v in env.items():
        cmd += ["-x", f"{k}={v}"]
    cmd += [os.path.join(build, "apps", "ingot-bench"), "--manifest", manifest, "--epochs", "1",
            "--batch", "64", "--no-progress", f"--json={out}"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **env),
                       timeout=600)
    took = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"ingot-bench failed\n{p.stdout}{p.stderr}")
    j = json.load(open(out))
    a = j["aggregate"]
    return {"wall_s": j["epochs"][0]["wall_s"],
            "run_s": took, "samples": a["samples"], "gets": a["store_requests"],
            "attempts": a.get("store_attempts", 0), "hedges": a["store_hedges"],
            "hedge_wins": a["store_hedge_wins"], "stall_retries": a["store_retries_stall"],
            "rereads": a["reread_storage"], "at_rest": a["reread_at_rest"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--samples", type=int, default=2048)
    ap.add_argument("--percent", type=float, default=5)
    ap.add_argument("--stall-s", type=float, default=8)
    ap.add_argument("--tuned-stall", default="1s")
    ap.add_argument("--faults", default="none,stall,reset,short,flip,slow")
    ap.add_argument("--orders", default="global,window:2")
    ap.add_argument("--json")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="more environment for every run (e.g. INGOT_S3_HEDGE_FLOOR=25ms)")
    ap.add_argument("--no-baselines", action="store_true", help="the hedged runs alone")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    if os.getuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    work = tempfile.mkdtemp(prefix="ingot-faultsperf.")
    sw = harness.Seaweed(harness.weed_binary(build), work, [("bench", KEY, SECRET)])
    proxy = None
    try:
        proxy, port = harness.start_py_server(
            "proxy", "fault_proxy.py",
            ["--upstream", f"127.0.0.1:{sw.port}", "--no-log", "--stall-s", str(a.stall_s)],
            work)
        home = os.path.join(work, "home")
        os.makedirs(home)
        store_env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": KEY,
                     "AWS_SECRET_ACCESS_KEY": SECRET, "AWS_REGION": "us-east-1", "HOME": home,
                     "INGOT_WARN_UNKNOWN": "n", "INGOT_LOG_LEVEL": "error"}
        store_env.update(kv.split("=", 1) for kv in a.env)
        data = os.path.join(work, "data")
        subprocess.run([os.path.join(build, "apps", "ingot-bench"), "--generate", data,
                        "--samples", str(a.samples), "--sample-size", "110KiB", "--shard-size",
                        "8MiB", "--steps", "1", "--no-progress"], check=True, capture_output=True)
        # built straight against the store, not through the proxy
        manifest, _ = harness.bucket_dataset(build, f"http://127.0.0.1:{sw.port}", KEY, SECRET,
                                             BUCKET, data, store_env)
        shutil.rmtree(data)
        print("# dataset uploaded, manifest built", file=sys.stderr, flush=True)
        configs = [("hedged", {})]
        baselines = [("no hedge, stall 5s", {"INGOT_S3_HEDGE": "0"}),
                     (f"no hedge, stall {a.tuned_stall}",
                      {"INGOT_S3_HEDGE": "0", "INGOT_S3_STALL_TIMEOUT": a.tuned_stall})]
        cases = []
        for f in a.faults.split(","):
            for o in a.orders.split(","):
                more = baselines if f in ("stall", "slow") and not a.no_baselines else []
                for name, extra in configs + more:
                    cases.append((f, o, name, extra))
        got = {c[:3]: [] for c in cases}
        print(f"# faults_perf {time.strftime('%Y-%m-%d')} on {os.uname().nodename}, "
              f"{os.cpu_count()} cores: {a.ranks} ranks, {a.samples} x 110 KiB, {a.percent}% of "
              f"ranged GETs spoilt, stall {a.stall_s} s, reps {a.reps}", flush=True)
        for r in range(a.reps):
            for f, o, name, extra in cases:
                fault(port, PROXY_MODE.get(f, f), a.percent)
                env = dict(store_env, INGOT_ORDER=ORDERS[o], **extra)
                res = run(build, manifest, env, os.path.join(work, "b.json"), a.ranks)
                print(f"#   {f} {o} {name}: {res['wall_s']:.2f} s", file=sys.stderr, flush=True)
                if res["samples"] != a.samples:
                    raise SystemExit(f"{f} {o} {name}: {res['samples']} of {a.samples} samples")
                got[(f, o, name)].append(res)
        fault(port, "pass", 0)
        clean = {o: statistics.median(x["wall_s"] for x in got[("none", o, "hedged")])
                 for o in a.orders.split(",")} if "none" in a.faults.split(",") else {}
        print(f"{'fault':<7} {'order':<9} {'config':<20} {'epoch s':>8} {'x clean':>8} "
              f"{'GETs':>6} {'hedges':>7} {'wins':>5} {'stalls':>7} {'re-reads':>9}  "
              "[min - max s]")
        rows = {}
        for (f, o, name), v in got.items():
            med = {k: statistics.median(x[k] for x in v) for k in v[0]}
            ratio = med["wall_s"] / clean[o] if o in clean else float("nan")
            walls = [x["wall_s"] for x in v]
            print(f"{f:<7} {o:<9} {name:<20} {med['wall_s']:8.2f} {ratio:8.2f} "
                  f"{med['gets']:6.0f} {med['hedges']:7.0f} {med['hedge_wins']:5.0f} "
                  f"{med['stall_retries']:7.0f} {med['rereads']:9.0f}  "
                  f"[{min(walls):.2f} - {max(walls):.2f}]")
            rows[f"{f} {o} {name}"] = {"median": med, "ratio": ratio, "runs": v}
        if a.json:
            json.dump(rows, open(a.json, "w"), indent=1)
    finally:
        if proxy is not None:
            proxy.stop()
        sw.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
