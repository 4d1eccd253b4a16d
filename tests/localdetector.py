"""A detector over HTTP on 127.0.0.1, in the test's own process: it answers low to every request, keeps each
request's question, and says when the first one came (`Detector.first`). `serving` starts one on a free port and
stops it when its block ends."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Callable, Iterator


class Detector(http.server.ThreadingHTTPServer):
    """Answers low to every request, keeps each request's question, and says when the first one came; ``on_first``
    runs when the first request has come, before it is answered."""

    def __init__(self, on_first: Callable[[], None] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.questions: list[str] = []
        self.first = threading.Event()
        self.lock = threading.Lock()
        self.on_first = on_first

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1/consensus"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: Detector

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.server.lock:
            self.server.questions.append(body["task"])
            if not self.server.first.is_set() and self.server.on_first is not None:
                self.server.on_first()
            self.server.first.set()
        reply = b'{"false_consensus_risk": "low", "risk_score": 0.1}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@contextlib.contextmanager
def serving(on_first: Callable[[], None] | None = None) -> Iterator[Detector]:
    server = Detector(on_first)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
