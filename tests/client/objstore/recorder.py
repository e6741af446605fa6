#!/usr/bin/python3
"""A loopback S3 stand-in that is strict where SeaweedFS is lax, and plays what SeaweedFS cannot.

Every signed request is checked as S3 checks it, with botocore's signer: the path must be the
canonical encoding of the key (a raw '=' or space fails), the query sorted and encoded, the
region of the credential scope the server's (else 400 AuthorizationHeaderMalformed naming it),
host, x-amz-date, x-amz-content-sha256 (and x-amz-security-token when sent) signed, and the
signature botocore computes equal to the one sent (else 403 SignatureDoesNotMatch). Each request
is appended to a JSON-lines log (method, path, query, headers, verdict) for the driver to check.

Objects are made up from their keys (content: harness.content):
  /BUCKET/obj/SIZE/NAME        an object of SIZE bytes (ETag: its MD5)
  /BUCKET/public/SIZE/NAME     the same, also served without a signature (http:// tests)
  /BUCKET/script/KIND/SIZE/N   scripted answers: 200 (ignores Range), badrange (Content-Range
                               one byte off), short (a complete 206 of half the bytes), long
                               (more bytes than the range), 301, 307 (another region),
                               slowdown (503 SlowDown, always)
  GET /BUCKET/?list-type=2     a listing of LIST_KEYS under the prefix, paged by max-keys with
                               continuation tokens that need encoding ("tok/+= N")
Session tokens named by --expired are answered 400 ExpiredToken.

Usage: recorder.py --port-file F --log F --region R --creds AK:SK[,AK:SK] [--expired T,T]
"""
import argparse
import hashlib
import json
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import quote, quote_plus, unquote

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import content  # noqa: E402

LIST_KEYS = ["list/a b.tar", "list/a+b.tar", "list/caf\u00e9.tar", "list/k=v/x.tar",
             "list/pct%25.tar", "list/\u65e5\u672c.tar", "list/z.tar"]
AUTH_RE = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request,"
                     r" ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$")
UNRESERVED = "-_.~"


def s3_error(code, message, extra=""):
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
            f"<Message>{message}</Message>{extra}<RequestId>rec</RequestId></Error>").encode()


class Verdict(Exception):
    def __init__(self, status, code, why, extra="", headers=None):
        super().__init__(why)
        self.status, self.code, self.why, self.extra = status, code, why, extra
        self.headers = headers or {}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "recorder"

    def log_message(self, *args):
        pass

    # ------------------------------------------------------------ checks
    def canonical_path(self, raw):
        return quote(unquote(raw), safe="/" + UNRESERVED)

    def check_query(self, raw_query):
        if not raw_query:
            return
        pairs = [p.partition("=") for p in raw_query.split("&")]
        for k, _, v in pairs:
            for part in (k, v):
                if quote(unquote(part), safe=UNRESERVED) != part:
                    raise Verdict(403, "SignatureDoesNotMatch", f"query part {part!r} not encoded")
        keys = [(k, v) for k, _, v in pairs]
        if keys != sorted(keys):
            raise Verdict(403, "SignatureDoesNotMatch", f"query not sorted: {raw_query}")

    def verify(self):
        cfg = self.server.cfg
        auth = self.headers.get("Authorization")
        if auth is None:
            raise Verdict(403, "AccessDenied", "no Authorization header")
        m = AUTH_RE.match(auth)
        if m is None:
            raise Verdict(400, "AuthorizationHeaderMalformed", f"malformed: {auth}")
        ak, _date, region, signed, sig = m.groups()
        if ak not in cfg.creds:
            raise Verdict(403, "InvalidAccessKeyId", f"unknown access key {ak}")
        if region != cfg.region:
            raise Verdict(400, "AuthorizationHeaderMalformed",
                          f"the region '{region}' is wrong; expecting '{cfg.region}'",
                          f"<Region>{cfg.region}</Region>")
        token = self.headers.get("x-amz-security-token")
        names = signed.split(";")
        need = {"host", "x-amz-date", "x-amz-content-sha256"} | ({"x-amz-security-token"}
                                                                  if token else set())
        if not need <= set(names):
            raise Verdict(403, "SignatureDoesNotMatch", f"not signed: {sorted(need - set(names))}")
        if self.headers.get("x-amz-content-sha256") != "UNSIGNED-PAYLOAD":
            raise Verdict(400, "InvalidRequest", "x-amz-content-sha256 is not UNSIGNED-PAYLOAD")
        raw_path, _, raw_query = self.path.partition("?")
        if self.canonical_path(raw_path) != raw_path:
            raise Verdict(403, "SignatureDoesNotMatch", f"path not canonical: {raw_path}")
        self.check_query(raw_query)
        headers = {n: self.headers.get(n, "") for n in names}
        url = f"http://{headers['host']}{raw_path}" + (f"?{raw_query}" if raw_query else "")
        req = AWSRequest(method=self.command, url=url, headers=headers)
        req.context["timestamp"] = self.headers["x-amz-date"]
        signer = S3SigV4Auth(Credentials(ak, cfg.creds[ak], token), "s3", region)
        expect = signer.signature(signer.string_to_sign(req, signer.canonical_request(req)), req)
        if expect != sig:
            raise Verdict(403, "SignatureDoesNotMatch", "botocore computes another signature")
        if token in cfg.expired:
            raise Verdict(400, "ExpiredToken", "The provided token has expired.")

    # ------------------------------------------------------------ answers
    def send(self, status, body, headers=None):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        if "Content-Length" not in (headers or {}):
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def object_answer(self, key, size, kind):
        data = content(key, size)
        etag = '"' + hashlib.md5(data).hexdigest() + '"'
        if_match = self.headers.get("If-Match")
        if if_match is not None and if_match != etag:
            raise Verdict(412, "PreconditionFailed", "If-Match failed")
        rng = self.headers.get("Range")
        if rng is None or kind == "200":
            return self.send(200, data, {"ETag": etag})
        m = re.fullmatch(r"bytes=(\d+)-(\d+)", rng)
        first, last = int(m.group(1)), min(int(m.group(2)), size - 1)
        if first >= size:
            raise Verdict(416, "InvalidRange", "The requested range is not satisfiable")
        body = data[first:last + 1]
        cr = f"bytes {first}-{last}/{size}"
        hdrs = {"ETag": etag, "Content-Range": cr}
        if kind == "badrange":
            hdrs["Content-Range"] = f"bytes {first + 1}-{last + 1}/{size}"
        elif kind == "short":
            body = body[:len(body) // 2]
        elif kind == "long":
            body = body + b"\0" * 10
        elif kind in ("301", "307"):
            where = "eu-central-1"
            hdrs = {"x-amz-bucket-region": where} if kind == "301" else {
                "Location": f"https://b.s3.{where}.amazonaws.com/{key}"}
            code = "PermanentRedirect" if kind == "301" else "TemporaryRedirect"
            return self.send(int(kind), s3_error(code, "elsewhere",
                                                 f"<Endpoint>b.s3.{where}.amazonaws.com</Endpoint>"),
                             hdrs)
        elif kind == "slowdown":
            raise Verdict(503, "SlowDown", "Please reduce your request rate.")
        self.send(206, body, hdrs)

    def list_answer(self, bucket, params):
        prefix = params.get("prefix", "")
        keys = [k for k in LIST_KEYS if k.startswith(prefix)]
        start = int(params["continuation-token"].rsplit(" ", 1)[1]) \
            if "continuation-token" in params else 0
        n = int(params.get("max-keys", "1000"))
        page, nxt = keys[start:start + n], start + n
        url = params.get("encoding-type") == "url"
        enc = (lambda k: quote_plus(k, safe="/")) if url else (lambda k: k)
        items = "".join(
            f"<Contents><Key>{enc(k)}</Key><Size>{10 + i}</Size>"
            f"<ETag>&quot;e{i}&quot;</ETag></Contents>" for i, k in enumerate(page, start))
        more = nxt < len(keys)
        body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>{bucket}</Name>'
                f"<Prefix>{enc(prefix)}</Prefix><KeyCount>{len(page)}</KeyCount>"
                f"<IsTruncated>{'true' if more else 'false'}</IsTruncated>"
                + ("<EncodingType>url</EncodingType>" if url else "")
                + (f"<NextContinuationToken>tok/+= {nxt}</NextContinuationToken>" if more else "")
                + items + "</ListBucketResult>").encode()
        self.send(200, body, {"Content-Type": "application/xml"})

    def route(self):
        raw_path, _, raw_query = self.path.partition("?")
        parts = unquote(raw_path).lstrip("/").split("/", 1)
        bucket, key = parts[0], (parts[1] if len(parts) > 1 else "")
        if not key.startswith("public/"):
            self.verify()
        if key == "":
            params = {unquote(k): unquote(v) for k, _, v in
                      (p.partition("=") for p in raw_query.split("&") if p)}
            return self.list_answer(bucket, params)
        bits = key.split("/")
        if bits[0] in ("obj", "public") and len(bits) >= 3 and bits[1].isdigit():
            return self.object_answer(key, int(bits[1]), "")
        if bits[0] == "script" and len(bits) >= 4 and bits[2].isdigit():
            return self.object_answer(key, int(bits[2]), bits[1])
        raise Verdict(404, "NoSuchKey", "The specified key does not exist.")

    def do_GET(self):
        entry = {"method": self.command, "path": self.path, "peer": self.client_address[1],
                 "headers": {k.lower(): v for k, v in self.headers.items()}}
        try:
            self.route()
            entry["verdict"] = "ok"
        except Verdict as v:
            entry["verdict"], entry["why"], entry["status"] = v.code, v.why, v.status
            self.send(v.status, s3_error(v.code, v.why, v.extra), v.headers)
        with self.server.log_lock, open(self.server.cfg.log, "a") as f:
            f.write(json.dumps(entry) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--region", default="eu-west-1")
    ap.add_argument("--creds", required=True, help="AK:SK[,AK:SK]")
    ap.add_argument("--expired", default="")
    cfg = ap.parse_args()
    cfg.creds = dict(pair.split(":", 1) for pair in cfg.creds.split(","))
    cfg.expired = set(t for t in cfg.expired.split(",") if t)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.cfg, server.log_lock = cfg, threading.Lock()
    harness.serve_announced(server, cfg.port_file)


if __name__ == "__main__":
    main()
