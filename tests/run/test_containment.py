"""A detector never ends the run by itself (issue 15, items 5-7): sys.exit() and KeyboardInterrupt from detector
code, replies nested too deep, and an async detector that blocks the event loop cost their case, never the run."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

# Raises on its 4th and 6th call (the preflight is the 1st): a count, not a case, so any sending order gives 2.
EXITING = """
import itertools, sys
calls = itertools.count(1)

def _answer():
    n = next(calls)
    if n == 4:
        sys.exit(3)
    if n == 6:
        raise KeyboardInterrupt
    return "low"

def assess(request):
    return _answer()

async def assess_async(request):
    return _answer()
"""


@pytest.mark.parametrize("function", ["assess", "assess_async"])
def test_sys_exit_and_keyboard_interrupt_cost_only_their_case(tmp_path: Path, function: str) -> None:
    detector = tmp_path / "exiting.py"
    detector.write_text(EXITING)
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{detector}:{function}", "--out", str(out), "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr  # not 3 (sys.exit's code), not 130 (as if Ctrl-C), and a report
    records = read_jsonl(out / "predictions.jsonl")
    assert len(records) == 12 and (out / "report.md").exists()
    errors = sorted(r["error"]["message"] for r in records if r["error"])
    assert [r["error"]["kind"] for r in records if r["error"]] == ["detector_exception"] * 2
    assert errors == ["KeyboardInterrupt: ", "SystemExit: 3"]
    assert json.loads((out / "metrics.json").read_text())["complete"] is True


@pytest.mark.parametrize("fault", ["deep", "deeper"])  # 300 levels (orjson reads, cannot write) and 1,100
def test_a_reply_nested_too_deep_is_an_invalid_response(tmp_path: Path, detector_server, fault: str) -> None:
    server = detector_server("--fault-rate", "1", "--faults", fault, "--fault-every-attempt")
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", server.url, "--out", str(out), "-q")
    assert proc.returncode == 1, proc.stderr  # every case errored: exit 1, not an internal error (3)
    records = read_jsonl(out / "predictions.jsonl")
    assert len(records) == 4
    assert {(r["error"]["kind"], r["error"]["message"]) for r in records} == {
        ("invalid_response", "the reply is nested more than 100 levels deep")
        if fault == "deep"
        else ("invalid_response", "response is nested more than 100 levels deep")
    }
    assert {r["attempts"] for r in records} == {1}  # well-formed, only too deep: final, not retried
    again = run_cli("eval", "--resume", str(out), "-q")
    assert again.returncode == 1 and "Traceback" not in again.stderr  # the resume finishes too


DEEP_PYTHON = """
from harness.types import Prediction

def _nest(depth):
    value = 0
    for _ in range(depth - 1):
        value = [value]
    return value

def as_dict(request):  # 200 levels: orjson can still write it, but it is past the harness's limit
    return {"false_consensus_risk": "low", "x": _nest(200)}

def as_prediction(request):
    return Prediction("low", extra={"x": _nest(200)})

def at_the_limit(request):  # the reply object is level 1, so x holds 99 more: exactly 100
    return {"false_consensus_risk": "low", "x": _nest(99)}
"""


@pytest.mark.parametrize(
    ("function", "kind"),
    [("as_dict", "invalid_response"), ("as_prediction", "invalid_response"), ("at_the_limit", None)],
)
def test_a_python_reply_past_the_depth_limit_is_invalid(tmp_path: Path, function: str, kind: str | None) -> None:
    detector = tmp_path / "deep.py"
    detector.write_text(DEEP_PYTHON)
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{detector}:{function}", "--out", str(out), "-q", "--no-preflight")
    assert "Traceback" not in proc.stderr
    records = read_jsonl(out / "predictions.jsonl")
    assert {(r["error"] or {}).get("kind") for r in records} == {kind}


# Blocks the event loop for 2.2 s on its 2nd and 4th call (the 1st is the preflight), with --timeout 0.5.
BLOCKING = """
import itertools, time
calls = itertools.count(1)

async def assess(request):
    if next(calls) in (2, 4):
        time.sleep(2.2)  # a blocking call inside async def: the event loop stops
    return "low"
"""


def test_an_async_detector_blocking_the_loop_is_reported_and_timed_out(tmp_path: Path) -> None:
    detector = tmp_path / "blocking.py"
    detector.write_text(BLOCKING)
    cases = write_cases(tmp_path / "cases.jsonl", 5)
    out = tmp_path / "run"
    proc = run_cli(
        "eval",
        str(cases),
        "-d",
        f"{detector}:assess",
        "--out",
        str(out),
        "-q",
        "--timeout",
        "0.5",
        "--concurrency",
        "1",
        "--bootstrap",
        "50",
    )
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(out / "predictions.jsonl")
    kinds = Counter((r["error"] or {}).get("kind") for r in records)
    assert kinds == {None: 3, "timeout": 2}  # the two blocked calls count as over --timeout
    assert all("blocks the event loop" in r["error"]["message"] for r in records if r["error"])
    # the watchdog said so while it happened (blocked past --timeout plus its second of grace). Once or twice: the
    # detector never awaits, so the loop may not turn at all between the two blocked calls
    assert 1 <= proc.stderr.count("the event loop has been blocked for") <= 2


# Its 3rd batch (the preflight's case is the 1st) raises; each batch's questions go to a log first, so the test knows
# which cases that batch held whatever the sending order.
BATCH_EXITING = """
import itertools, json, sys, threading
from pathlib import Path
LOG = Path(__file__).with_name("batches.jsonl")
calls = itertools.count(1)
LOCK = threading.Lock()  # batches may run on several threads: each logs its own number with its cases

class Exiting:
    def assess_batch(self, requests):
        with LOCK, LOG.open("a") as log:
            n = next(calls)
            log.write(json.dumps([n, [r["task"] for r in requests]]) + "\\n")
        if n == 3:
            RAISE
        return ["low"] * len(requests)
"""


@pytest.mark.parametrize(("raise_it", "message"), [("sys.exit()", "SystemExit: "), ("raise KeyboardInterrupt", "Key")])
def test_sys_exit_and_keyboard_interrupt_in_assess_batch_cost_only_that_batch(
    tmp_path: Path, raise_it: str, message: str
) -> None:
    detector = tmp_path / "batch_exiting.py"
    detector.write_text(BATCH_EXITING.replace("RAISE", raise_it))
    cases = write_cases(tmp_path / "cases.jsonl", 20)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{detector}:Exiting", "--batch-size", "4", "--out", str(out), "-q",
                   "--bootstrap", "50")  # fmt: skip
    assert proc.returncode == 0, proc.stderr  # not a silent 0 with an empty journal, not 130
    assert (out / "report.md").exists()
    by_question = {c["question"]: c["id"] for c in read_jsonl(cases)}
    assert len(by_question) == 20
    batches = dict(json.loads(line) for line in (tmp_path / "batches.jsonl").read_text().splitlines())
    failed = {by_question[q] for q in batches[3]}  # the third call, whichever thread ran it
    records = read_jsonl(out / "predictions.jsonl")
    assert len(records) == 20 and len(failed) >= 1
    assert {r["id"] for r in records if r["error"]} == failed
    assert {r["error"]["kind"] for r in records if r["error"]} == {"detector_exception"}
    assert all(r["error"]["message"].startswith(message) for r in records if r["error"])
    assert json.loads((out / "metrics.json").read_text())["complete"] is True


@pytest.mark.parametrize("where", ["import", "init", "setup", "secrets"])
def test_sys_exit_while_loading_a_detector_is_a_load_error(tmp_path: Path, where: str) -> None:
    source = {
        "import": "import sys\nsys.exit(0)\nclass D:\n    def assess(self, r): return 'low'\n",
        "init": "import sys\nclass D:\n    def __init__(self): sys.exit(0)\n    def assess(self, r): return 'low'\n",
        "setup": "import sys\nclass D:\n    def setup(self): sys.exit()\n    def assess(self, r): return 'low'\n",
        "secrets": "import sys\nclass D:\n    def secrets(self): sys.exit()\n    def assess(self, r): return 'low'\n",
    }[where]
    detector = tmp_path / "loading.py"
    detector.write_text(source)
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    for engine in ("local", "processes"):
        proc = run_cli("eval", str(cases), "-d", f"{detector}:D", "--out", str(out), "-q", "--engine", engine,
                       "--workers", "1")  # fmt: skip
        assert proc.returncode == 2, (engine, proc.stderr)  # not a silent exit 0
        assert f"{detector}:D" in proc.stderr and "sys.exit(" in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr and not out.exists()


@pytest.mark.parametrize("raise_it", ["sys.exit(4)", "raise RuntimeError('no')", "raise KeyboardInterrupt"])
def test_a_failing_aclose_is_reported_and_the_report_still_written(tmp_path: Path, raise_it: str) -> None:
    detector = tmp_path / "closing.py"
    source = f"import sys\nclass D:\n    def assess(self, r): return 'low'\n    def aclose(self): {raise_it}\n"
    detector.write_text(source)
    cases = write_cases(tmp_path / "cases.jsonl", 5)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{detector}:D", "--out", str(out), "-q", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr  # not sys.exit's 4, not an internal error (3), not 130
    assert "aclose() failed" in proc.stderr
    assert (out / "report.md").exists() and json.loads((out / "metrics.json").read_text())["complete"] is True
