"""Helpers of the object-store integration tests: loopback ports, processes started and stopped
by pid, SeaweedFS (`weed mini`) in a temporary folder, the deterministic object contents the C
tests check, and uploads through botocore.

Every server listens on 127.0.0.1 only. Run with Debian's /usr/bin/python3 (python3-botocore).
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))


def pattern_byte(seed, i):
    """Byte i of a test object (tests/client/objstore/it_util.h has the same formula)."""
    return (((i * 2654435761) >> 13) ^ seed) & 0xFF


def key_seed(key):
    return sum(key.encode()) % 251


def content(key, size):
    seed = key_seed(key)
    return bytes(pattern_byte(seed, i) for i in range(size))


def port_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_port(plus_10000=False):
    """A free loopback port (and, if asked, port+10000 free too: SeaweedFS's gRPC ports)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if not plus_10000:
            return port
        if port + 10000 < 65536 and port_free(port + 10000):
            return port
    raise RuntimeError("no free loopback port")


def _die_with_parent():
    """In the child before exec: a session of its own, and SIGKILL when the driver dies (a
    test killed at its timeout leaves no server behind; PR_SET_PDEATHSIG survives exec)."""
    os.setsid()
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class Proc:
    """A child process, stopped by its pid (SIGTERM, then SIGKILL after a grace)."""

    def __init__(self, name, argv, log_path, env=None):
        self.name = name
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.p = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env,
                                  preexec_fn=_die_with_parent)

    @property
    def pid(self):
        return self.p.pid

    def alive(self):
        return self.p.poll() is None

    def stop(self, grace=5.0):
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(grace)
            except subprocess.TimeoutExpired:
                os.kill(self.p.pid, signal.SIGKILL)
                self.p.wait(5)
        self.log.close()

    def tail(self, n=30):
        with open(self.log_path, "rb") as f:
            return b"\n".join(f.read().splitlines()[-n:]).decode(errors="replace")


def wait_for(what, cond, deadline_s, proc=None):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc is not None and not proc.alive():
            raise RuntimeError(f"{what}: the process exited:\n{proc.tail()}")
        try:
            if cond():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not ready within {deadline_s} s"
                       + (f":\n{proc.tail()}" if proc else ""))


def serve_announced(server, port_file):
    """In one of our servers: say its port in @port_file (whole or not at all, as
    start_py_server reads it), then serve until stopped."""
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, port_file)
    server.serve_forever()


def start_py_server(name, script, args, workdir):
    """Start one of our servers (recorder.py, fault_proxy.py, imds.py); returns (proc, port)."""
    port_file = os.path.join(workdir, f"{name}.port")
    if os.path.exists(port_file):
        os.remove(port_file)
    argv = [sys.executable, os.path.join(HERE, script), "--port-file", port_file] + args
    proc = Proc(name, argv, os.path.join(workdir, f"{name}.log"))
    wait_for(name, lambda: os.path.exists(port_file) and open(port_file).read().strip(), 10, proc)
    return proc, int(open(port_file).read())


def weed_binary(build_dir):
    for cand in (os.environ.get("OBJSTORE_WEED"),
                 os.path.join(build_dir, "objstore-venv", "bin", "weed")):
        if cand and os.access(cand, os.X_OK):
            return cand
    return None


def seaweed_ports():
    """Free ports for weed mini's services, none of them another's port + 10000 (its gRPC port,
    which weed reserves: 'Port allocation failed ... reserved for gRPC calculation')."""
    names = ("s3.port", "master.port", "volume.port", "filer.port", "admin.port")
    for _ in range(100):
        ports = [free_port(True) for _ in names]
        taken = set(ports) | {p + 10000 for p in ports}
        if len(set(ports)) == len(ports) and len(taken) == 2 * len(ports):
            webdav = free_port()
            if webdav not in taken:
                return dict(zip(names, ports), **{"webdav.port": webdav})
    raise RuntimeError("no set of free loopback ports for weed mini")


class Seaweed:
    """`weed mini` on loopback ports of its own (or on @p ip: a benchmark's emulated nodes reach it
    on their bridge), in a temporary folder, stopped by pid."""

    def __init__(self, weed, workdir, identities, anonymous_read=(), ip="127.0.0.1"):
        self.dir = os.path.join(workdir, "seaweed")
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        ids = os.path.join(self.dir, "identities.json")
        entries = [{"name": name, "credentials": [{"accessKey": ak, "secretKey": sk}],
                    "actions": ["Admin", "Read", "Write", "List", "Tagging"]}
                   for name, ak, sk in identities]
        if anonymous_read:  # unsigned GETs of these buckets (http(s):// datasets)
            entries.append({"name": "anonymous",
                            "actions": [f"Read:{b}" for b in anonymous_read]})
        with open(ids, "w") as f:
            json.dump({"identities": entries}, f)
        ports = seaweed_ports()
        self.port = ports["s3.port"]
        argv = [weed, "mini", f"-dir={self.dir}/data", f"-ip={ip}", f"-ip.bind={ip}",
                "-master.telemetry=false", "-admin.ui=false", "-webdav=false",
                f"-s3.config={ids}", "-s3.port.iceberg=0", "-s3.port.lance=0",
                f"-filer.localSocket={self.dir}/filer.sock",
                f"-s3.localSocket={self.dir}/s3.sock"]
        argv += [f"-{k}={v}" for k, v in ports.items()]
        self.proc = Proc("seaweed", argv, os.path.join(workdir, "seaweed.log"))
        self.endpoint = f"http://{ip}:{self.port}"
        wait_for("seaweed", self._ready, 60, self.proc)

    def _ready(self):
        try:
            urllib.request.urlopen(self.endpoint + "/", timeout=1)
        except urllib.error.HTTPError as e:  # 403 without credentials: S3 is answering
            return e.code in (400, 403)
        return True

    def stop(self):
        self.proc.stop(10)


def s3_client(endpoint, ak, sk, region="us-east-1"):
    import botocore.session
    from botocore.config import Config
    session = botocore.session.get_session()
    return session.create_client(
        "s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
        region_name=region, config=Config(s3={"addressing_style": "path"},
                                          retries={"max_attempts": 3}))


def bucket_dataset(build, endpoint, key, secret, bucket, data, env, prefix="ds/"):
    """Upload @data's *.tar into a new @bucket under @prefix and build its manifest there with
    ingot-manifest (under @env); returns the manifest's s3:// URL and the dataset's bytes."""
    s3 = s3_client(endpoint, key, secret)
    s3.create_bucket(Bucket=bucket)
    size = 0
    for n in sorted(os.listdir(data)):
        if n.endswith(".tar"):
            size += os.path.getsize(os.path.join(data, n))
            with open(os.path.join(data, n), "rb") as f:
                s3.put_object(Bucket=bucket, Key=prefix + n, Body=f)
    subprocess.run([os.path.join(build, "apps", "ingot-manifest"), "build",
                    f"s3://{bucket}/{prefix}"], check=True, capture_output=True,
                   env=dict(os.environ, **dict(env, AWS_ENDPOINT_URL=endpoint)))
    return f"s3://{bucket}/{prefix}manifest.ingot", size


def isolated_env(home):
    """The environment of a test process: HOME in the test folder, no AWS_*, no proxies."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("AWS_") and k.lower() not in
           ("http_proxy", "https_proxy", "all_proxy", "no_proxy")}
    env["HOME"] = home
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    return env
