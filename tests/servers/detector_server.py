"""A detector server for tests: real HTTP on 127.0.0.1, in its own process, misbehaving on command.

Run ``python detector_server.py [options]``; it prints ``PORT <n>`` once it listens. Its answer to a request is
`reply_for(request)`, a pure function the tests also import to compute the expected results independently.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
                if args.record:
                    with open(args.record, "a") as f:
                        f.write(json.dumps({"path": self.path, "body": request, "headers": dict(self.headers)}) + "\n")
            try:
                self._answer(request, first_time)
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _answer(self, request: dict, first_time: bool) -> None:
            if args.delay:
                time.sleep(args.delay)
            if args.status:  # the body echoes the path, query string included, as careless servers do
                return self._send(args.status, json.dumps({"error": "as configured", "path": self.path}).encode())
            if args.throttle_once and first_time:
                return self._send(429, b'{"error": "slow down"}', {"Retry-After": str(args.throttle_once)})
            if first_time and is_flaky(request, args.flaky_every):
                return self._send(503, b'{"error": "try again"}', {"Retry-After": "0"})
            reply = reply_for(request, args.garbage_every)
            if reply is None:
                return self._send(200, b"this is not json")
            if args.echo_headers:
                reply["headers_seen"] = dict(self.headers)
                auth = self.headers.get("Authorization", "")
                reply["token_seen"] = auth.partition(" ")[2]  # the bare credential, without its scheme
            return self._send(200, json.dumps(reply).encode())

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--garbage-every", type=int, default=0)
    parser.add_argument("--flaky-every", type=int, default=0)
    parser.add_argument("--throttle-once", type=int, default=0, help="first request of each case: 429 + Retry-After")
    parser.add_argument("--status", type=int, default=0, help="answer every request with this status")
    parser.add_argument("--echo-headers", action="store_true")
    parser.add_argument("--record", help="append every request to this file")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(State(args)))
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    finally:
        sys.stdout.flush()


if __name__ == "__main__":
    main()
