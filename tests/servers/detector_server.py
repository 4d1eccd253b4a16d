"""A detector server for tests: real HTTP on 127.0.0.1, in its own process, misbehaving on command.

Run ``python detector_server.py [options]``; it prints ``PORT <n>`` once it listens. Its answer to a request is
`reply_for(request)`, a pure function the tests also import to compute the expected results independently.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

RISKS = ("low", "medium", "high")


def digest(request: dict) -> int:
    """A stable number for a request, from its task and answer texts."""
    text = request["task"] + "\x00".join(a["text"] for a in request["answers"])
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def reply_for(request: dict, garbage_every: int = 0) -> dict | None:
    """The server's answer; None means it sends a body that is not JSON."""
    d = digest(request)
    if garbage_every and d % garbage_every == 0:
        return None
    return {"false_consensus_risk": RISKS[d % 3], "risk_score": (d % 101) / 100, "note": "test server"}


TRANSIENT_FAULTS = ("500", "502", "503", "429", "slow", "reset", "hang", "truncated", "notjson", "cutjson")
PERMANENT_FAULTS = ("norisk", "badrisk", "wrongtype", "huge", "redirect", "deep", "deeper")


def fault_for(request: dict, rate: float, kinds: tuple[str, ...], seed: int) -> str | None:
    """The fault a request meets (the same on every attempt), or None: a seeded function of its content."""
    if not kinds or rate <= 0:
        return None
    h = int(hashlib.sha256(f"{seed}:{digest(request)}".encode()).hexdigest()[:12], 16)
    if (h % 10_000) >= rate * 10_000:
        return None
    return kinds[(h // 10_000) % len(kinds)]


def is_flaky(request: dict, flaky_every: int) -> bool:
    """Requests whose first attempt gets a transient 503."""
    return bool(flaky_every) and digest(request) % flaky_every == 1


class State:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.lock = threading.Lock()
        self.count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.seen: set[int] = set()
        self.attempts: dict[int, int] = {}


def make_handler(state: State) -> type[BaseHTTPRequestHandler]:
    args = state.args

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            with state.lock:
                body = json.dumps({"count": state.count, "max_in_flight": state.max_in_flight}).encode()
            self._send(200, body)

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            request = json.loads(raw)
            with state.lock:
                state.count += 1
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
                first_time = (d := digest(request)) not in state.seen
                state.seen.add(d)
                state.attempts[d] = state.attempts.get(d, 0) + 1
                attempt = state.attempts[d]
                if args.record:
                    with open(args.record, "a") as f:
                        f.write(json.dumps({"path": self.path, "body": request, "headers": dict(self.headers)}) + "\n")
            try:
                fault = fault_for(request, args.fault_rate, tuple(filter(None, args.faults.split(","))), args.seed)
                if fault and (args.fault_every_attempt or attempt == 1):
                    self._fault(fault)
                else:
                    self._answer(request, first_time)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _fault(self, kind: str) -> None:
            """Misbehave as asked: statuses, slowness, broken connections, bad bodies, redirect loops."""
            if kind in ("500", "502", "503"):
                return self._send(int(kind), b'{"error": "injected"}')
            if kind == "429":
                return self._send(429, b'{"error": "slow down"}', {"Retry-After": "0"})
            if kind in ("slow", "hang"):
                time.sleep(args.slow_s if kind == "slow" else 3600)
                return self._send(200, json.dumps({"false_consensus_risk": "low"}).encode())
            if kind == "reset":  # headers, part of a body, then an abrupt close (RST)
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{")
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return None
            if kind == "truncated":  # promises more than it sends, then closes
                self.wfile.write(b'HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{"false_consensus_risk": "lo')
                self.close_connection = True
                return None
            if kind == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"x" * (1 << 20)
                try:
                    for _ in range(50):  # 50 MB, which the client must refuse to hold
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.write(b"0\r\n\r\n")
                except OSError:
                    pass  # the client hung up, as it should
                self.close_connection = True
                return None
            if kind == "endless":  # a chunked reply that never ends: a client must stop reading and hang up
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                chunk = b"x" * (1 << 16)
                try:
                    while True:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                except OSError:
                    pass
                self.close_connection = True
                return None
            if kind == "redirect":
                return self._send(307, b"", {"Location": self.path})
            bodies = {
                "notjson": b"<html>oops</html>",  # an error page from a proxy, sent as 200
                "cutjson": b'{"false_consensus_risk": "lo',  # a complete HTTP reply whose JSON is cut short
                "deep": b'{"false_consensus_risk": "low", "x": ' + b"[" * 300 + b"]" * 300 + b"}",
                "deeper": b'{"false_consensus_risk": "low", "x": ' + b"[" * 1100 + b"]" * 1100 + b"}",
                "norisk": b'{"verdict": "high"}',
                "badrisk": b'{"false_consensus_risk": "critical"}',
                "wrongtype": b'{"false_consensus_risk": 3}',
            }
            return self._send(200, bodies[kind])

        def _answer(self, request: dict, first_time: bool) -> None:
            if args.delay:
                time.sleep(args.delay)
            if args.status:  # the body echoes the path, query string included, as careless servers do
                return self._send(args.status, json.dumps({"error": "as configured", "path": self.path}).encode())
            if args.throttle_once and first_time:
                return self._send(429, b'{"error": "slow down"}', {"Retry-After": str(args.throttle_once)})
            if first_time and is_flaky(request, args.flaky_every):
                return self._send(503, b'{"error": "try again"}', {"Retry-After": "0"})
            if args.answers:  # a table of chosen replies by task; null: a reply without a risk (invalid_response)
                with open(args.answers) as f:
                    risk = json.load(f)[request["task"]]
                reply = {"false_consensus_risk": risk} if risk else {"verdict": "none"}
                return self._send(200, json.dumps(reply).encode())
            reply = reply_for(request, args.garbage_every)
            if reply is None:
                return self._send(200, b"this is not json")
            if args.misspell:  # a detector of another spelling: the risk under a key the harness does not read
                reply["false_concensus_risk"] = reply.pop("false_consensus_risk")
            if args.echo_headers:
                reply["headers_seen"] = dict(self.headers)
                auth = self.headers.get("Authorization", "")
                reply["token_seen"] = auth.partition(" ")[2]  # the bare credential, without its scheme
            return self._send(200, json.dumps(reply).encode())

    return Handler


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """Clients that hang up on a faulty reply are expected here; say nothing."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--garbage-every", type=int, default=0)
    parser.add_argument("--flaky-every", type=int, default=0)
    parser.add_argument("--throttle-once", type=int, default=0, help="first request of each case: 429 + Retry-After")
    parser.add_argument("--status", type=int, default=0, help="answer every request with this status")
    parser.add_argument("--echo-headers", action="store_true")
    parser.add_argument("--misspell", action="store_true", help="answer the risk as false_concensus_risk")
    parser.add_argument("--record", help="append every request to this file")
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of requests that meet a fault")
    parser.add_argument("--faults", default="", help="comma-separated fault kinds to draw from (and: endless)")
    parser.add_argument("--fault-every-attempt", action="store_true", help="permanent faults (default: first try)")
    parser.add_argument("--slow-s", type=float, default=3.0, help="how long a 'slow' fault waits")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--answers", help="a JSON object of task -> risk (null: a reply without one) to answer from")
    args = parser.parse_args()
    server = QuietServer(("127.0.0.1", 0), make_handler(State(args)))
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        sys.stdout.flush()


if __name__ == "__main__":
    main()
