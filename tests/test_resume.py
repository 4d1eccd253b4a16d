"""A run killed part-way and resumed ends with the same metrics as an uninterrupted one (done for real)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from casegen import write_cases
from conftest import ROOT, read_jsonl, run_cli


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
    common = ["--detector", server.url, "--quiet", "--concurrency", "2", "--bootstrap", "300"]

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
    assert json.loads(server_stats(server))["count"] >= 160
    doc = json.loads((run_dir / "metrics.json").read_text())
    ref = json.loads((reference / "metrics.json").read_text())
    assert doc["complete"] and _without_timing(doc) == _without_timing(ref)
    assert doc["metrics"]["operational"]["cases"] == 160


def server_stats(server) -> str:
    return json.dumps(server.stats())


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
    proc = run_cli("eval", str(cases), "--out", str(run_dir), "--quiet")
    assert proc.returncode == 2 and "--resume" in proc.stderr
