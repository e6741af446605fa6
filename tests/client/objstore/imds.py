#!/usr/bin/python3
"""A loopback stand-in for the EC2 instance metadata service, IMDSv2 only.

PUT /latest/api/token (with X-aws-ec2-metadata-token-ttl-seconds) gives a session token; the
role's name and credentials need it in X-aws-ec2-metadata-token (401 otherwise, as IMDSv2 does).
Each credentials answer hands out the next session token of --tokens (the last one repeats), so
a test can make the first one expire at the recorder and see the client come back for another.
Requests are logged (JSON lines) without the tokens.

Usage: imds.py --port-file F --log F --key AK --secret SK --tokens T1,T2 [--role R]
"""
import argparse
import json
import secrets
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import harness  # noqa: E402  (beside this script: the port file's form)

ROLE_PATH = "/latest/meta-data/iam/security-credentials/"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, ctype="text/plain"):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        s = self.server
        with s.lock, open(s.cfg.log, "a") as f:
            f.write(json.dumps({"method": self.command, "path": self.path, "status": status}) + "\n")

    def do_PUT(self):
        if self.path != "/latest/api/token":
            return self.answer(404, "not found")
        if self.headers.get("X-aws-ec2-metadata-token-ttl-seconds") is None:
            return self.answer(400, "missing ttl")
        token = secrets.token_hex(16)
        self.server.sessions.add(token)
        self.answer(200, token)

    def do_GET(self):
        s = self.server
        if self.headers.get("X-aws-ec2-metadata-token") not in s.sessions:
            return self.answer(401, "IMDSv2 session token required")
        if self.path == ROLE_PATH:
            return self.answer(200, s.cfg.role)
        if self.path != ROLE_PATH + s.cfg.role:
            return self.answer(404, "not found")
        with s.lock:
            tok = s.tokens[min(s.served, len(s.tokens) - 1)]
            s.served += 1
        expires = (datetime.now(timezone.utc) + timedelta(hours=6)).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.answer(200, json.dumps({
            "Code": "Success", "LastUpdated": "2024-01-01T00:00:00Z", "Type": "AWS-HMAC",
            "AccessKeyId": s.cfg.key, "SecretAccessKey": s.cfg.secret, "Token": tok,
            "Expiration": expires}), "application/json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--secret", required=True)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--role", default="ingot-test-role")
    cfg = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.cfg, server.lock, server.sessions, server.served = cfg, threading.Lock(), set(), 0
    server.tokens = cfg.tokens.split(",")
    harness.serve_announced(server, cfg.port_file)


if __name__ == "__main__":
    main()
