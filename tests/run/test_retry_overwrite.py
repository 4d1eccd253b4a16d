"""After an outage, a resumed run asks its errored cases again (--retry-errors) and ends where an uninterrupted run
ends; --overwrite replaces a run in --out, and only once the new one can start; a run stopped on errors says what
will work next."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

RISKS = ("low", "medium", "high")


class Switchable:
    """A detector service on 127.0.0.1 whose outage the test switches on and off: while ``down`` every request gets
    a 503; otherwise a risk that is a fixed function of the question."""

    def __init__(self) -> None:
        self.down = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                if owner.down.is_set():
                    return self._send(503, {"error": "down for maintenance"})
                digest = hashlib.sha256(request["task"].encode()).digest()
                return self._send(200, {"false_consensus_risk": RISKS[digest[0] % 3]})

            def _send(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service() -> Iterator[Switchable]:
    s = Switchable()
    yield s
    s.close()


def _figures(run_dir: Path) -> dict:
    metrics = dict(json.loads((run_dir / "metrics.json").read_text())["metrics"])
    metrics.pop("operational")  # timing and attempts differ; every figure of the cases must not
    return metrics


COMMON = ["--quiet", "--retries", "0", "--bootstrap", "200", "--concurrency", "2"]


def test_a_resumed_run_asks_its_errored_cases_again_and_ends_as_an_uninterrupted_one(
    tmp_path: Path, service: Switchable
) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 24)
    reference = tmp_path / "reference"
    assert run_cli("eval", str(cases), "-d", service.url, "--out", str(reference), *COMMON).returncode == 0

    run_dir = tmp_path / "outage"
    service.down.set()  # the whole run meets the outage: every case is an error, and the run stops on the streak
    stopped = run_cli("eval", str(cases), "-d", service.url, "--out", str(run_dir), *COMMON,
                      "--max-consecutive-errors", "5")  # fmt: skip
    assert stopped.returncode == 1  # stopped on a streak of errors: resumable, not a usage error
    # an HTTP service fixed behind the same URL keeps its fingerprint: the message names the command that works
    assert f"fcb eval --resume {run_dir} --retry-errors" in stopped.stderr, stopped.stderr
    errored = {r["id"] for r in read_jsonl(run_dir / "predictions.jsonl") if r["error"]}
    assert errored

    service.down.clear()
    plain = run_cli("eval", "--resume", str(run_dir), "--quiet")  # the errors stay: they are finished cases
    assert plain.returncode == 0, plain.stderr
    assert json.loads((run_dir / "metrics.json").read_text())["metrics"]["operational"]["errors"] == len(errored)
    assert "--retry-errors" in plain.stderr  # and the run says how to ask them again

    retried = run_cli("eval", "--resume", str(run_dir), "--retry-errors", "--quiet")
    assert retried.returncode == 0, retried.stderr
    journal = read_jsonl(run_dir / "predictions.jsonl")
    assert sorted(r["id"] for r in journal) == sorted(c["id"] for c in read_jsonl(cases))  # each case once
    assert not any(r["error"] for r in journal)
    assert _figures(run_dir) == _figures(reference)


def test_retry_errors_and_overwrite_are_refused_where_they_mean_nothing(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    alone = run_cli("eval", str(cases), "-d", "builtin:always-low", "--retry-errors", "--quiet")
    assert alone.returncode == 2 and "use it with --resume" in alone.stderr
    run_dir = tmp_path / "run"
    assert run_cli("eval", str(cases), "-d", "builtin:always-low", "--out", str(run_dir), "--quiet").returncode == 0
    both = run_cli("eval", "--resume", str(run_dir), "--overwrite", "--quiet")
    assert both.returncode == 2 and "--overwrite" in both.stderr


def test_overwrite_replaces_a_finished_run_with_the_new_one(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 20)
    run_dir, fresh = tmp_path / "run", tmp_path / "fresh"
    assert run_cli("eval", str(cases), "-d", "builtin:always-low", "--out", str(run_dir), "--quiet").returncode == 0
    again = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(run_dir), "--quiet")
    assert again.returncode == 2
    # a finished run cannot be resumed into another detector's: the message says what works
    assert "finished run" in again.stderr and "--overwrite" in again.stderr and "--resume" not in again.stderr

    replaced = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(run_dir), "--overwrite", "--quiet")
    assert replaced.returncode == 0, replaced.stderr
    assert run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(fresh), "--quiet").returncode == 0
    assert _figures(run_dir) == _figures(fresh)
    assert len(read_jsonl(run_dir / "predictions.jsonl")) == 20  # nothing of the old journal is left
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["identity"]["detector"] == "builtin:agreement" and len(manifest["sessions"]) == 1


def test_overwrite_keeps_the_old_run_when_the_new_one_cannot_start(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    run_dir = tmp_path / "run"
    assert run_cli("eval", str(cases), "-d", "builtin:always-low", "--out", str(run_dir), "--quiet").returncode == 0
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
    # nothing listens on port 9 of 127.0.0.1 (discard, never served here): the preflight fails at once
    failed = run_cli("eval", str(cases), "-d", "http://127.0.0.1:9", "--out", str(run_dir), "--overwrite", "--quiet")
    assert failed.returncode != 0 and "preflight" in failed.stderr
    assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file() and p.name != ".lock"} == {
        k: v for k, v in before.items() if k != ".lock"
    }


def test_a_python_detector_stopped_on_errors_is_told_to_run_again_not_to_resume(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    detector = tmp_path / "broken.py"
    detector.write_text("def detect(request):\n    return {'false_consensus_risk': 'bogus'}\n")
    run_dir = tmp_path / "run"
    stopped = run_cli("eval", str(cases), "-d", f"{detector}:detect", "--out", str(run_dir), "--quiet",
                      "--max-consecutive-errors", "3")  # fmt: skip
    assert stopped.returncode == 1  # stopped on a streak of errors: resumable, not a usage error
    # an edited file changes the detector's fingerprint, and resume refuses it: the message says what will work
    assert "--overwrite" in stopped.stderr and "cannot resume" in stopped.stderr, stopped.stderr
    detector.write_text("def detect(request):\n    return {'false_consensus_risk': 'low'}\n")
    edited = run_cli("eval", "--resume", str(run_dir), "--quiet")
    assert edited.returncode == 2 and "fingerprint" in edited.stderr
    rerun = run_cli("eval", str(cases), "-d", f"{detector}:detect", "--out", str(run_dir), "--overwrite", "--quiet")
    assert rerun.returncode == 0, rerun.stderr
