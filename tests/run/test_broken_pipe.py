"""A reader of fcb's output that goes away (``fcb eval ... 2>&1 | head -1``) never stops the run: the progress and
the summary are dropped, every case is run, metrics.json and the reports are written and the exit code is the
run's. The interleaving is forced: the detector holds every case after the first few until the test has closed its
end of the pipe, so every later progress line meets the broken pipe."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, read_jsonl

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 40
FREE = 4  # cases answered before the pipe is closed: two progress lines (one every 5%, 2 cases)


def rule(n_answers: int) -> str:
    return "high" if n_answers >= 4 else "low"


class Gate:
    """A detector over HTTP on 127.0.0.1 that answers by `rule` and holds every request after the first ``FREE``
    until ``opened`` is set."""

    def __init__(self) -> None:
        self.opened = threading.Event()
        self.seen = 0
        self._lock = threading.Lock()
        gate = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with gate._lock:
                    gate.seen += 1
                    held = gate.seen > FREE
                if held:
                    gate.opened.wait(timeout=60)
                reply = json.dumps({"false_consensus_risk": rule(len(body["answers"]))}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate()
    yield g
    g.opened.set()
    g.server.shutdown()
    g.server.server_close()


def test_a_reader_that_goes_away_never_stops_the_run(tmp_path: Path, gate: Gate) -> None:
    # `fcb eval ... 2>&1 | head -1` stopped the run with exit 0, no metrics.json and no report
    cases = write_cases(tmp_path / "cases.jsonl", N)
    run = tmp_path / "run"
    args = ["eval", str(cases), "-d", gate.url, "--out", str(run), "--concurrency", "1", "--no-preflight",
            "--bootstrap", "20"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # the reader goes away, as `head -1` does
    gate.opened.set()
    assert proc.wait(timeout=120) == 0
    assert first.startswith(b"fcb eval: ")
    journal = read_jsonl(run / "predictions.jsonl")
    assert sorted(r["id"] for r in journal) == sorted(c["id"] for c in read_jsonl(cases))
    doc = json.loads((run / "metrics.json").read_text())
    assert doc["complete"] is True and (run / "report.html").is_file() and (run / "report.md").is_file()
    right = sum(rule(len(c["answers"])) == c["expected_risk"] for c in read_jsonl(cases))  # counted by hand
    assert doc["metrics"]["accuracy"] == right / N


PRINTING = """
import time
from pathlib import Path

FLAG = Path(__file__).with_name("reader-gone.flag")
calls = 0


def assess(request):
    global calls
    calls += 1
    if calls > FREE:  # held until the test has closed its end of the pipe
        deadline = time.monotonic() + 60
        while not FLAG.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    print("assessing", request["task"][:30], flush=True)  # a detector that talks on stdout
    n = len(request["answers"])
    return {"false_consensus_risk": "high" if n >= 4 else "low"}
"""


def test_a_detector_that_prints_in_a_worker_process_is_not_failed_by_a_reader_that_went_away(tmp_path: Path) -> None:
    # with --engine processes, a detector's print() after the reader went away raised BrokenPipeError in the
    # worker: 96% of the cases became detector_exception errors and the run exited 1
    cases = write_cases(tmp_path / "cases.jsonl", N)
    detector = tmp_path / "printing.py"
    detector.write_text(f"FREE = {FREE}\n" + PRINTING)
    run = tmp_path / "run"
    args = ["eval", str(cases), "-d", f"{detector}:assess", "--engine", "processes", "--workers", "1",
            "--out", str(run), "--no-preflight", "--no-cache", "--bootstrap", "20"]  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert proc.stdout is not None
    proc.stdout.readline()
    proc.stdout.close()
    (tmp_path / "reader-gone.flag").touch()
    assert proc.wait(timeout=120) == 0
    doc = json.loads((run / "metrics.json").read_text())
    right = sum(rule(len(c["answers"])) == c["expected_risk"] for c in read_jsonl(cases))  # counted by hand
    assert doc["metrics"]["error_rate"] == 0 and doc["metrics"]["accuracy"] == right / N
