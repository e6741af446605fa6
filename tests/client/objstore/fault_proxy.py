#!/usr/bin/python3
"""A loopback fault point between the client and a real S3 server (SeaweedFS).

Requests pass through byte for byte (the Host header too, so SigV4 signatures stay valid) over a
keep-alive upstream connection per client connection, unless the current fault picks them:

  slowdown  answer 503 SlowDown (S3's XML) without asking upstream
  error500  answer 500 InternalError
  reset     close the client's connection with a TCP reset before answering
  stall     forward the answer's headers and half its body, then send nothing for --stall-s
  truncate  forward the headers and half the body, then close (a connection cut mid-body)
  short     answer a complete response of half the body (Content-Length rewritten): a server
            that sends fewer bytes than the range
  flip      flip one byte at a random place in the body: damage in transit (a read again gets
            good bytes)
  rot       flip the object's byte at offset `at` (a query parameter) in every answer whose
            range holds it: damage at rest, as a read again sees it (the same wrong bytes)
  slow      trickle the body at --slow-kib-per-ms (a transfer that never stalls, but crawls)

The fault is set with GET /__fault__?mode=M&percent=P&count=N[&ranged=1] (P: share of requests
hit, N: only the first N hit, ranged=1: only requests with a Range header, so a manifest's whole
GET passes; mode=pass clears it) and read back from GET /__fault__/stats. Every
request is logged (JSON lines: path, Range, the fault applied, and t, the time.monotonic() it came
at, which a driver on this machine compares with its own) for the driver's checks.

Usage: fault_proxy.py --port-file F --upstream HOST:PORT --log F [--stall-s S]
                      [--slow-kib-per-ms K]
"""
import argparse
import json
import random
import socket
import socketserver
import struct
import threading
import time
from urllib.parse import parse_qs

import harness  # noqa: E402  (beside this script: the port file's form)

STATE = {"mode": "pass", "percent": 100, "count": -1, "hits": 0, "requests": 0, "ranged": 0,
         "at": 0}
LOCK = threading.Lock()
CFG = None


def read_head(f):
    """Read an HTTP head (request or response) from file @f; None at EOF."""
    lines = []
    while True:
        line = f.readline(65537)
        if not line:
            return None
        lines.append(line)
        if line in (b"\r\n", b"\n"):
            return b"".join(lines)


def header(head, name):
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == name:
            return v.strip().decode()
    return None


def pick_fault(head):
    with LOCK:
        STATE["requests"] += 1
        if STATE["mode"] == "pass" or (0 <= STATE["count"] <= STATE["hits"]):
            return "pass"
        if STATE["ranged"] and header(head, b"range") is None:
            return "pass"
        if random.random() * 100 >= STATE["percent"]:
            return "pass"
        STATE["hits"] += 1
        return STATE["mode"]


def xml_error(code, msg):
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{msg}'
            f"</Message><RequestId>proxy</RequestId></Error>").encode()
    return body


def simple_answer(wfile, status, reason, body):
    wfile.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    wfile.flush()


def relay_body(up, wfile, length, cut=None, slow=False):
    """Relay @length body bytes (or up to @cut of them), at --slow-kib-per-ms when @slow.
    Returns bytes relayed."""
    done, limit = 0, length if cut is None else cut
    piece = int(CFG.slow_kib_per_ms * 1024) if slow else 65536
    while done < limit:
        chunk = up.read(min(piece, limit - done))
        if not chunk:
            break
        wfile.write(chunk)
        done += len(chunk)
        if slow:
            wfile.flush()
            time.sleep(0.001)
    wfile.flush()
    return done


def range_start(head):
    """The first byte of a request's Range (bytes=A-B), or 0."""
    r = header(head, b"range") or ""
    try:
        return int(r.partition("=")[2].partition("-")[0])
    except ValueError:
        return 0


def damage(body, fault, first):
    """@body (the object's bytes from @first on) with the fault's flipped byte."""
    body = bytearray(body)
    if fault == "flip" and body:
        body[random.randrange(len(body))] ^= 0x5A
    elif fault == "rot" and first <= STATE["at"] < first + len(body):
        body[STATE["at"] - first] ^= 0x5A
    return bytes(body)


def relay_chunked(up, wfile):
    while True:
        size_line = up.readline()
        wfile.write(size_line)
        size = int(size_line.split(b";")[0], 16)
        wfile.write(up.read(size + 2))
        if size == 0:
            break
    wfile.flush()


class Handler(socketserver.StreamRequestHandler):
    def control(self, path):
        q = {k: v[0] for k, v in parse_qs(path.partition("?")[2]).items()}
        with LOCK:
            if "mode" in q:
                STATE.update(mode=q["mode"], percent=float(q.get("percent", 100)),
                             count=int(q.get("count", -1)), hits=0, requests=0,
                             ranged=int(q.get("ranged", 0)), at=int(q.get("at", 0)))
            body = json.dumps(STATE).encode()
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.wfile.flush()

    def upstream(self):
        if getattr(self, "_up", None) is None:
            self._sock = socket.create_connection(CFG.upstream)
            self._up = self._sock.makefile("rb")
        return self._sock, self._up

    def drop_upstream(self):
        if getattr(self, "_up", None) is not None:
            self._up.close()
            self._sock.close()
            self._up = None

    def log(self, head, fault):
        line = head.split(b"\r\n", 1)[0].decode(errors="replace")
        if CFG.no_log or CFG.log is None:
            return
        entry = {"request": line, "range": header(head, b"range"), "fault": fault,
                 "if_match": header(head, b"if-match"), "t": time.monotonic()}
        with LOCK, open(CFG.log, "a") as f:
            f.write(json.dumps(entry) + "\n")

    def answer_from_upstream(self, head, fault):
        sock, up = self.upstream()
        sock.sendall(head)
        rhead = read_head(up)
        if rhead is None:
            raise ConnectionError("upstream closed")
        length = header(rhead, b"content-length")
        chunked = (header(rhead, b"transfer-encoding") or "").lower() == "chunked"
        if fault in ("flip", "rot") and length is not None:
            body = up.read(int(length))
            self.wfile.write(rhead + damage(body, fault, range_start(head)))
            self.wfile.flush()
            return True
        if fault == "short" and length is not None and int(length) > 1:
            half = int(length) // 2
            body = up.read(int(length))
            rhead = rhead.replace(f"Content-Length: {length}".encode(),
                                  f"Content-Length: {half}".encode())
            self.wfile.write(rhead + body[:half])
            self.wfile.flush()
            return True
        self.wfile.write(rhead)
        if chunked:
            relay_chunked(up, self.wfile)
        elif length is not None:
            n = int(length)
            if fault in ("stall", "truncate") and n > 1:
                relay_body(up, self.wfile, n, n // 2)
                if fault == "stall":
                    time.sleep(CFG.stall_s)
                self.drop_upstream()
                return False  # close the client's connection
            relay_body(up, self.wfile, n, slow=fault == "slow")
        return True

    def handle(self):
        try:
            while self.serve_one():
                pass
        except (ConnectionError, OSError, ValueError):
            pass
        finally:
            self.drop_upstream()

    def serve_one(self):
        head = read_head(self.rfile)
        if head is None:
            return False
        path = head.split(b" ")[1].decode(errors="replace")
        if path.startswith("/__fault__"):
            self.control(path)
            return True
        fault = pick_fault(head)
        self.log(head, fault)
        if fault == "slowdown":
            simple_answer(self.wfile, 503, "Slow Down",
                          xml_error("SlowDown", "Please reduce your request rate."))
            return True
        if fault == "error500":
            simple_answer(self.wfile, 500, "Internal Server Error",
                          xml_error("InternalError", "We encountered an internal error."))
            return True
        if fault == "reset":
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                       struct.pack("ii", 1, 0))
            return False
        return self.answer_from_upstream(head, fault)


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global CFG
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--log", help="JSON lines of every request (default: none)")
    ap.add_argument("--stall-s", type=float, default=30)
    ap.add_argument("--slow-kib-per-ms", type=float, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-log", action="store_true", help="log nothing (benchmarks)")
    CFG = ap.parse_args()
    host, port = CFG.upstream.rsplit(":", 1)
    CFG.upstream = (host, int(port))
    random.seed(CFG.seed)
    server = Server(("127.0.0.1", 0), Handler)
    harness.serve_announced(server, CFG.port_file)


if __name__ == "__main__":
    main()
