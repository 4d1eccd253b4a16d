"""A run killed part-way and resumed ends with the same metrics as an uninterrupted one (done for real)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, read_jsonl, run_cli, short_backoff

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _without_timing(doc: dict) -> dict:
    metrics = dict(doc["metrics"])
    metrics.pop("operational")
    return metrics


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_bytes().count(b"\n") >= n:
            return
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} lines")


def test_killed_run_resumes_to_the_same_metrics(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 160)
    server = detector_server("--delay", "0.01", "--garbage-every", "9")
    # the unreadable replies fail on every attempt: one retry keeps a retried case in play when the kill lands;
    # more would only add backoff waits (about 3.5 s a case for the default three)
    common = ["--detector", server.url, "--quiet", "--concurrency", "2", "--bootstrap", "300", "--retries", "1",
              *short_backoff(tmp_path)]  # fmt: skip

    reference = tmp_path / "reference"
    assert run_cli("eval", str(cases), "--out", str(reference), *common).returncode == 0

    run_dir = tmp_path / "interrupted"
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness", "eval", str(cases), "--out", str(run_dir), *common],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for_lines(run_dir / "predictions.jsonl", 40, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (run_dir / "metrics.json").exists()
    done_before = len(read_jsonl(run_dir / "predictions.jsonl"))
    assert done_before < 160
    with open(run_dir / "predictions.jsonl", "ab") as f:  # a write cut short by the crash
        f.write(b'{"id": "FCB-0150", "hash": "trunc')

    resumed = run_cli("eval", "--resume", str(run_dir), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    journal = read_jsonl(run_dir / "predictions.jsonl")
    assert sorted(r["id"] for r in journal) == sorted(c["id"] for c in read_jsonl(cases))  # each case once
    assert server.stats()["count"] >= 160  # every case reached the detector at least once
    doc = json.loads((run_dir / "metrics.json").read_text())
    ref = json.loads((reference / "metrics.json").read_text())
    assert doc["complete"] and _without_timing(doc) == _without_timing(ref)
    assert doc["metrics"]["operational"]["cases"] == 160


def test_resume_refuses_a_changed_data_set(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 16)
    run_dir = tmp_path / "run"
    assert run_cli("eval", str(cases), "--out", str(run_dir), "--quiet", "-d", "builtin:always-low").returncode == 0
    write_cases(cases, 16, seed=99)
    proc = run_cli("eval", "--resume", str(run_dir), "--quiet")
    assert proc.returncode == 2
    assert "dataset_sha256" in proc.stderr and "refusing to resume" in proc.stderr


def test_new_run_will_not_overwrite_a_journal(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    run_dir = tmp_path / "run"
    assert run_cli("eval", str(cases), "--out", str(run_dir), "--quiet").returncode == 0
    journal = (run_dir / "predictions.jsonl").read_bytes()
    proc = run_cli("eval", str(cases), "--out", str(run_dir), "--quiet")
    # a finished run: nothing to resume; the message names what works
    assert proc.returncode == 2 and "--overwrite" in proc.stderr and "another --out" in proc.stderr
    assert (run_dir / "predictions.jsonl").read_bytes() == journal


def test_resume_refuses_a_journal_whose_response_is_not_an_object(tmp_path: Path) -> None:
    # a record whose `response` was a string made --resume fail with a traceback, exit 3 (issue 24, item 10)
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    run_dir = tmp_path / "run"
    assert run_cli("eval", str(cases), "--out", str(run_dir), "-q", "-d", "builtin:agreement").returncode == 0
    journal = run_dir / "predictions.jsonl"
    records = read_jsonl(journal)[:6]
    records[2]["response"] = "a string, not an object"
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))
    proc = run_cli("eval", "--resume", str(run_dir), "-q")
    assert proc.returncode == 2, proc.stderr
    assert f"{journal}:3: response: 'a string, not an object' is not a JSON object" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(read_jsonl(journal)) == 6  # nothing sent, nothing written


def test_a_python_detector_whose_extra_is_not_a_dict_errs_on_that_case_and_the_run_resumes(tmp_path: Path) -> None:
    # Prediction(extra="text") was journaled as a string response: the run itself then ended in a traceback
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    detector = tmp_path / "det.py"
    detector.write_text(
        "from harness.types import Prediction\n"
        "def assess(request):\n"
        "    odd = len(request['task']) % 2\n"
        "    return Prediction('low', extra='just text' if odd else None)\n"
    )
    run_dir = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{detector}:assess", "--out", str(run_dir), "-q", "--no-preflight")
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(run_dir / "predictions.jsonl")
    odd = {c["id"] for c in read_jsonl(cases) if len(c["question"]) % 2}
    assert odd and len(odd) < 12  # both kinds of case occur
    for r in records:
        if r["id"] in odd:
            assert r["error"]["kind"] == "invalid_response"
            assert "Prediction.extra must be a dict" in r["error"]["message"]
        else:
            assert r["risk"] == "low" and r["response"] == {}  # extra=None: nothing else, an empty object
    assert run_cli("eval", "--resume", str(run_dir), "-q").returncode == 0


def test_sigint_stops_cleanly_and_the_run_resumes(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 80)
    server = detector_server("--delay", "0.1")
    run_dir = tmp_path / "run"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness",
            "eval",
            str(cases),
            "-d",
            server.url,
            "--out",
            str(run_dir),
            "-q",
            "--concurrency",
            "2",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_lines(run_dir / "predictions.jsonl", 6, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "--resume" in err and "Traceback" not in err
    doc = json.loads((run_dir / "metrics.json").read_text())
    assert doc["complete"] is False and doc["metrics"]["n_not_run"] > 0
    finished = len(read_jsonl(run_dir / "predictions.jsonl"))
    assert doc["metrics"]["n_cases"] == finished  # what finished is on disk and counted, nothing else

    assert run_cli("eval", "--resume", str(run_dir), "-q").returncode == 0
    doc = json.loads((run_dir / "metrics.json").read_text())
    assert doc["complete"] and doc["metrics"]["n_cases"] == 80


def test_resume_keeps_every_setting_of_the_run(tmp_path: Path, detector_server) -> None:
    """Token variable, strictness and skipped lines come back from run.json, not from defaults."""
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    lines = cases.read_text().splitlines()
    bad = json.loads(lines[5])
    bad["expected_risk"] = "low" if bad["expected_risk"] != "low" else "high"  # a warning; an error with --strict
    lines[5] = json.dumps(bad)
    lines[9] = "{broken"
    cases.write_text("\n".join(lines) + "\n")
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record))
    config = tmp_path / "det.toml"
    config.write_text(f'detector = "{server.url}"\ntoken_env = "MY_TOKEN"\n')
    run_dir = tmp_path / "run"
    args = [
        "eval",
        str(cases),
        "--detector-config",
        str(config),
        "--strict",
        "--skip-invalid",
        "--limit",
        "12",
        "--out",
        str(run_dir),
        "-q",
    ]
    assert run_cli(*args, env={"MY_TOKEN": "t-1"}).returncode == 0
    first = json.loads((run_dir / "metrics.json").read_text())
    journal = run_dir / "predictions.jsonl"
    kept = journal.read_text().splitlines()[:5]
    journal.write_text("\n".join(kept) + "\n")  # as if the run had stopped after five cases
    resumed = run_cli("eval", "--resume", str(run_dir), "-q", env={"MY_TOKEN": "t-1"})
    assert resumed.returncode == 0, resumed.stderr
    second = json.loads((run_dir / "metrics.json").read_text())
    assert second["metrics"]["n_cases"] == first["metrics"]["n_cases"] == 12  # 12 of the 28 valid under --strict
    assert second["settings"] == first["settings"]
    assert {json.loads(line)["headers"].get("Authorization") for line in record.read_text().splitlines()} == {
        "Bearer t-1"
    }


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_killed_at_random_points_resumes_to_each_case_exactly_once(tmp_path: Path, detector_server, seed: int) -> None:
    rng = random.Random(seed)
    cases = write_cases(tmp_path / "cases.jsonl", 120, seed=seed)
    server = detector_server("--delay", "0.005", "--garbage-every", "7")
    # one retry, as above: a retried case can be cut off, without the default three's backoff waits
    common = ["--detector", server.url, "--quiet", "--concurrency", "3", "--bootstrap", "200", "--retries", "1",
              *short_backoff(tmp_path)]  # fmt: skip
    reference = tmp_path / "reference"
    assert run_cli("eval", str(cases), "--out", str(reference), *common).returncode == 0

    run_dir = tmp_path / "run"
    args = [sys.executable, "-m", "harness", "eval", str(cases), "--out", str(run_dir), *common]
    for kill in range(rng.randint(2, 3)):  # kill it several times, each at a random point
        proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = run_dir / "predictions.jsonl"
        done = journal.read_bytes().count(b"\n") if journal.exists() else 0
        try:
            _wait_for_lines(journal, done + rng.randint(1, 25), proc)
        except AssertionError:
            break  # it finished before the chosen point
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if kill == 0:
            args = [sys.executable, "-m", "harness", "eval", "--resume", str(run_dir), "--quiet"]
    final = run_cli("eval", "--resume", str(run_dir), "--quiet")
    assert final.returncode == 0, final.stderr
    ids = [r["id"] for r in read_jsonl(run_dir / "predictions.jsonl")]
    assert sorted(ids) == sorted(c["id"] for c in read_jsonl(cases)) and len(ids) == len(set(ids))
    doc = json.loads((run_dir / "metrics.json").read_text())
    assert doc["complete"] and _without_timing(doc) == _without_timing(
        json.loads((reference / "metrics.json").read_text())
    )


def test_resume_refuses_a_changed_detector(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 16)
    run_dir = tmp_path / "run"
    assert run_cli("eval", str(cases), "--out", str(run_dir), "--quiet", "-d", "builtin:always-low").returncode == 0
    proc = run_cli("eval", "--resume", str(run_dir), "--quiet", "-d", "builtin:agreement")
    assert proc.returncode == 2
    assert "refusing to resume" in proc.stderr and "detector was 'builtin:always-low'" in proc.stderr


def _interrupted_run(tmp_path: Path, detector_server, signals: int) -> tuple[subprocess.Popen, str, Path]:
    """A run sent ``signals`` SIGINTs 20 ms apart once six cases are done; its report takes about a second to
    compute (a million bootstrap resamples), so every signal after the first lands before the report is on disk."""
    cases = write_cases(tmp_path / "cases.jsonl", 80)
    server = detector_server("--delay", "0.1")
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "harness", "eval", str(cases), "-d", server.url, "--out", str(run_dir)]
    proc = subprocess.Popen(
        [*command, "-q", "--concurrency", "2", "--bootstrap", "1000000"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_lines(run_dir / "predictions.jsonl", 6, proc)
    for _ in range(signals):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
    _, err = proc.communicate(timeout=120)
    return proc, err, run_dir


def test_a_second_ctrl_c_still_gets_the_report(tmp_path: Path, detector_server) -> None:
    proc, err, run_dir = _interrupted_run(tmp_path, detector_server, signals=2)
    assert proc.returncode == 130, err
    assert "finishing the report; press Ctrl-C again to abort" in err and "Traceback" not in err
    doc = json.loads((run_dir / "metrics.json").read_text())
    assert doc["complete"] is False and doc["metrics"]["n_cases"] == len(read_jsonl(run_dir / "predictions.jsonl"))
    assert (run_dir / "report.md").exists() and "--resume" in err


def test_a_third_ctrl_c_aborts_without_a_report(tmp_path: Path, detector_server) -> None:
    proc, err, run_dir = _interrupted_run(tmp_path, detector_server, signals=3)
    assert proc.returncode == 130, err
    assert "aborted; the report was not written" in err and "Traceback" not in err
    assert not (run_dir / "metrics.json").exists()
    assert read_jsonl(run_dir / "predictions.jsonl")  # what finished is kept, for --resume
    assert run_cli("eval", "--resume", str(run_dir), "-q", "--bootstrap", "200").returncode == 0
