"""Fail fast and say why: the preflight, the consecutive-error stop, all-errored runs, error messages, progress."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

DETECTORS = """
import os
from pathlib import Path

FLAG = Path(__file__).with_name("broken.flag")


def raises(request):
    raise ValueError("boom")


def two_messages(request):
    n = len(request["answers"])
    if n == 3:
        raise ValueError("boom " + os.environ.get("MY_API_KEY", ""))
    if n == 5:
        raise KeyError("five")
    return {"false_consensus_risk": "low"}


def broken_while_flagged(request):
    if FLAG.exists():
        raise RuntimeError("down for maintenance")
    return "medium"
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _detectors(tmp_path: Path) -> Path:
    path = tmp_path / "dets.py"
    path.write_text(DETECTORS)
    return path


def test_preflight_stops_an_unreachable_detector_within_seconds(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"http://127.0.0.1:{_free_port()}", "--out", str(out), "-q")
    assert proc.returncode == 2, proc.stderr
    assert "preflight" in proc.stderr and "Cannot connect to host" in proc.stderr
    assert re.search(r"first case \(FCB-00[0-4]\d\)", proc.stderr)  # the first of the (shuffled) sending order
    assert "after 1 attempt(s)" in proc.stderr  # a refused connection is not retried (the default is 3 retries)
    assert not out.exists()  # nothing was written


def test_preflight_stops_on_401_and_on_an_exception(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 10)
    server = detector_server("--status", "401")
    proc = run_cli("eval", str(cases), "-d", server.url, "--results", str(tmp_path / "r"), "-q")
    assert proc.returncode == 2 and "HTTP 401" in proc.stderr
    assert server.stats()["count"] == 1  # only the first case was sent, once (4xx is not retried)
    dets = _detectors(tmp_path)
    proc = run_cli("eval", str(cases), "-d", f"{dets}:raises", "--results", str(tmp_path / "r"), "-q")
    assert proc.returncode == 2 and "detector_exception: ValueError: boom" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_a_passing_preflight_is_the_first_cases_result(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record))
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", server.url, "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    tasks = [r["body"]["task"] for r in read_jsonl(record)]
    assert sorted(tasks) == sorted(c["question"] for c in read_jsonl(cases))  # each case asked exactly once
    journal = read_jsonl(out / "predictions.jsonl")  # the preflight's answer is its case's record, in file order
    assert [r["id"] for r in journal] == [c["id"] for c in read_jsonl(cases)]


def test_consecutive_errors_stop_the_run_resumably(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    dets = _detectors(tmp_path)
    (tmp_path / "broken.flag").write_text("")
    out = tmp_path / "run"
    args = ["--out", str(out), "-q", "--concurrency", "1", "--max-consecutive-errors", "5"]
    proc = run_cli("eval", str(cases), "-d", f"{dets}:broken_while_flagged", "--no-preflight", *args)
    assert proc.returncode == 1, proc.stderr
    assert "5 consecutive detector_exception errors" in proc.stderr and "--resume" in proc.stderr
    assert len(read_jsonl(out / "predictions.jsonl")) == 5  # one worker: stopped at exactly the fifth
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["complete"] is False and "down for maintenance" in doc["stopped"]
    assert doc["metrics"]["n_not_run"] == 35
    assert "INCOMPLETE" in (out / "report.md").read_text()

    (tmp_path / "broken.flag").unlink()  # the detector is back
    resumed = run_cli("eval", "--resume", str(out), "-q")
    assert resumed.returncode == 0, resumed.stderr
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["complete"] and doc["metrics"]["n_cases"] == 40 and doc["metrics"]["operational"]["errors"] == 5


def test_a_run_where_every_case_errored_exits_1(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    dets = _detectors(tmp_path)
    out = tmp_path / "run"
    flags = ["--no-preflight", "--max-consecutive-errors", "0", "--out", str(out), "-q"]
    proc = run_cli("eval", str(cases), "-d", f"{dets}:raises", *flags)
    assert proc.returncode == 1 and "every case errored (30 of 30)" in proc.stderr
    assert json.loads((out / "metrics.json").read_text())["complete"] is True  # finished, yet failed


def test_error_messages_are_listed_and_tracebacks_kept_without_secrets(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 48)
    dets = _detectors(tmp_path)
    out = tmp_path / "run"
    env = {"MY_API_KEY": "sk-very-secret-value"}
    proc = run_cli("eval", str(cases), "-d", f"{dets}:two_messages", "--no-preflight", "--out", str(out), env=env)
    assert proc.returncode == 0, proc.stderr
    by_size: dict[int, list[str]] = {}
    for case in read_jsonl(cases):
        by_size.setdefault(len(case["answers"]), []).append(case["id"])
    three, five = by_size[3], by_size[5]
    assert three and five
    expected = {
        ("detector_exception", "ValueError: boom [REDACTED]", len(three), three[0]),
        ("detector_exception", "KeyError: 'five'", len(five), five[0]),
    }
    doc = json.loads((out / "metrics.json").read_text())
    found = {
        (e["kind"], e["message"], e["count"], e["case_id"]) for e in doc["metrics"]["operational"]["error_messages"]
    }
    assert found == expected
    report = (out / "report.md").read_text()
    message = re.escape(r"ValueError\: boom \[REDACTED\]")  # a detector's message is inert Markdown: escaped
    row = rf"\|\s+{len(three)} \| detector_exception \| {message}\s+\| {three[0]}\s+\|"
    assert re.search(row, report.split("## Errors")[1])
    assert "ValueError: boom [REDACTED]" in proc.stdout and three[0] in proc.stdout  # the summary lists them too
    journal = {r["id"]: r for r in read_jsonl(out / "predictions.jsonl")}
    trace = journal[three[0]]["error"]["traceback"]
    assert trace.startswith("Traceback") and 'dets.py", line' in trace and "ValueError: boom" in trace
    everything = "".join(p.read_text() for p in out.iterdir()) + proc.stdout + proc.stderr
    assert "sk-very-secret-value" not in everything


def test_progress_lines_without_a_terminal_and_quiet(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "--results", str(tmp_path / "r"))
    lines = [line for line in proc.stderr.splitlines() if line.startswith("fcb eval: ")]
    done = [
        int(re.match(r"fcb eval: (\d+)/40 cases \(\d+%\), [\d.]+ cases/s, \d+ error\(s\), ETA ", x)[1]) for x in lines
    ]
    assert done == list(range(2, 41, 2))  # every 5% of 40 cases
    quiet = run_cli("eval", str(cases), "-d", "builtin:agreement", "--results", str(tmp_path / "r"), "-q")
    assert "fcb eval: " not in quiet.stderr and quiet.stdout == ""


def test_the_preflight_reads_an_errors_fields_not_its_message() -> None:
    from harness.run.runner import fatal
    from harness.types import DetectorError

    assert fatal(DetectorError("http_status", "HTTP 401: unauthorised", status=401))
    assert fatal(DetectorError("connection", "refused", connect_failed=True))
    assert fatal(DetectorError("detector_exception", "ValueError: boom"))
    # the same words without the facts behind them: a 503 whose body quotes a 404, a reset worded like a refusal
    assert not fatal(DetectorError("http_status", "HTTP 503: upstream said HTTP 404", status=503))
    assert not fatal(DetectorError("connection", "ClientConnectorError: reset by peer", connect_failed=False))
    assert not fatal(DetectorError("invalid_response", "HTTP 403 in the body of a 200 reply"))
    assert fatal(DetectorError("invalid_response", "missing false_consensus_risk", misread=True))


def test_a_misspelled_risk_field_stops_the_preflight_and_shows_what_came_back(tmp_path: Path, detector_server) -> None:
    """Issue 45, item 11: a detector answering false_concensus_risk passed the preflight, 26 cases went before the
    streak stopped them, and the screen never showed the reply (the journal kept a Python repr of it)."""
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    server = detector_server("--misspell")
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", server.url, "--out", str(out), "-q")
    assert proc.returncode == 2 and server.stats()["count"] == 1, proc.stderr  # the first case alone, once
    assert "missing false_consensus_risk (the reply has: risk_score, note, false_concensus_risk; did you mean " in (
        proc.stderr
    )
    assert 'it answered: {"risk_score":' in proc.stderr and '"false_concensus_risk":' in proc.stderr  # JSON, as sent
    assert not out.exists()

    skipped = run_cli("eval", str(cases), "-d", server.url, "--out", str(out), "-q", "--no-preflight",
                      "--max-consecutive-errors", "3", "--concurrency", "1")  # fmt: skip
    assert skipped.returncode == 1 and "did you mean 'false_concensus_risk'" in skipped.stderr
    raw = read_jsonl(out / "predictions.jsonl")[0]["error"]["raw"]
    assert json.loads(raw)["false_concensus_risk"] in ("low", "medium", "high")  # JSON text, not a Python repr


def test_a_timed_out_run_suggests_more_time_with_its_retry(tmp_path: Path, detector_server) -> None:
    """Issue 45, item 11: a timed-out run suggested --retry-errors, never --timeout."""
    cases = write_cases(tmp_path / "cases.jsonl", 6)
    server = detector_server("--fault-rate", "0.5", "--faults", "slow", "--fault-every-attempt", "--slow-s", "2")
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", server.url, "--out", str(out), "-q", "--timeout", "0.5", "--retries",
                   "0", "--no-preflight", "--bootstrap", "0")  # fmt: skip
    doc = json.loads((out / "metrics.json").read_text())
    timed_out = doc["metrics"]["operational"]["errors_by_kind"]["timeout"]
    assert timed_out and f"--retry-errors --timeout 1 (twice the 0.5 s that {timed_out} ran out of)" in proc.stderr
