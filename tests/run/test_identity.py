"""Which detector ran: --name, the fingerprint in run.json, /v1/info, resume and leaderboard by fingerprint."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import httpx
import pytest
import servicekit
from casegen import write_cases
from conftest import OPENAI_SERVER, ROOT, read_jsonl, run_cli, run_fcb_process
from servicekit import Service

import harness

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

DETECTOR_V1 = 'def assess(request):\n    return "low"\n'
DETECTOR_V2 = 'def assess(request):\n    return "high" if len(request["answers"]) > 3 else "low"\n'


def _identity(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())["identity"]


def test_a_file_detector_is_fingerprinted_and_an_edit_refuses_resume(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 16)
    det = tmp_path / "my_detector.py"
    det.write_text(DETECTOR_V1)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{det}:assess", "--out", str(out), "-q", "--name", "mine")
    assert proc.returncode == 0, proc.stderr
    fp = _identity(out)["fingerprint"]
    assert fp == {
        "kind": "python",
        "source": "my_detector.py",
        "sha256": hashlib.sha256(DETECTOR_V1.encode()).hexdigest(),
    }
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["detector"]["label"] == "mine" and doc["detector"]["fingerprint"] == fp
    assert "detector: mine" in (out / "report.md").read_text()

    det.write_text(DETECTOR_V2)
    refused = run_cli("eval", "--resume", str(out), "-q")
    assert refused.returncode == 2 and "fingerprint changed (my_detector.py: sha256 was" in refused.stderr


def test_module_builtin_and_llm_fingerprints_and_the_llm_run_folder(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    out = tmp_path / "builtin"
    assert run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(out), "-q").returncode == 0
    assert _identity(out)["fingerprint"] == {
        "kind": "builtin",
        "name": "builtin:agreement",
        "harness_version": harness.__version__,
    }
    module = tmp_path / "fp_module_det.py"
    module.write_text(DETECTOR_V2)
    out = tmp_path / "module"
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = run_fcb_process("eval", str(cases), "-d", "fp_module_det:assess", "--out", str(out), "-q", env=env)
    assert proc.returncode == 0, proc.stderr
    assert _identity(out)["fingerprint"]["sha256"] == hashlib.sha256(DETECTOR_V2.encode()).hexdigest()

    server = detector_server(script=OPENAI_SERVER)
    results = tmp_path / "results"
    proc = run_cli("eval", str(cases), "-d", f"llm:qwen-test@{server.url}/v1", "--results", str(results), "-q")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = results.iterdir()
    assert "qwen-test" in run_dir.name  # the model's name survives in the folder name
    fp = _identity(run_dir)["fingerprint"]
    prompt = ROOT / "harness" / "data" / "prompts" / "false-consensus.txt"
    assert fp["kind"] == "llm" and fp["model"] == "qwen-test" and fp["base_url"] == f"{server.url}/v1"
    assert fp["prompt_sha256"] == hashlib.sha256(prompt.read_bytes()).hexdigest()
    assert fp["settings"]["temperature"] == 0.0 and fp["settings"]["samples"] == 1


def test_two_detectors_served_at_one_url_are_two_leaderboard_rows(tmp_path: Path, monkeypatch) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 24)
    results = tmp_path / "results"
    first = Service("--detector", "builtin:agreement")
    port = first.port
    try:
        info = httpx.get(f"{first.url}/v1/info", timeout=5).json()
        assert info["name"] == "builtin:agreement" and info["version"].startswith(harness.__version__ + "+")
        for _ in range(2):
            assert run_cli("eval", str(cases), "-d", first.url, "--results", str(results), "-q").returncode == 0
    finally:
        first.stop()
    monkeypatch.setattr(servicekit, "free_port", lambda: port)  # the same URL, another detector behind it
    second = Service("--detector", "builtin:always-low")
    try:
        assert run_cli("eval", str(cases), "-d", second.url, "--results", str(results), "-q").returncode == 0
    finally:
        second.stop()
    runs = sorted(results.iterdir())
    infos = [_identity(r)["fingerprint"]["info"]["name"] for r in runs]
    assert infos == ["builtin:agreement", "builtin:agreement", "builtin:always-low"]

    board = run_cli("leaderboard", str(results), "--format", "json", "--bootstrap", "100")
    assert board.returncode == 0, board.stderr
    rows = json.loads(board.stdout)[0]["rows"]
    assert len(rows) == 2 and sorted(len(r["runs"]) for r in rows) == [1, 2]  # never one median over both
    accuracy = {len(r["runs"]): r["values"]["accuracy"] for r in rows}
    low_share = sum(c["expected_risk"] == "low" for c in read_jsonl(cases)) / 24
    assert accuracy[1] == low_share  # always-low is right exactly on the low cases
    assert all(r["detector"].startswith(f"http://127.0.0.1:{port} [") for r in rows)
    assert "ran as 2 different detectors" in rows[0]["note"]
    markdown = run_cli("leaderboard", str(results), "--bootstrap", "100").stdout
    assert "ran as 2 different detectors" in markdown


def test_runs_of_an_edited_file_under_one_name_are_not_merged(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 16)
    det = tmp_path / "my_detector.py"
    results = tmp_path / "results"
    for source in (DETECTOR_V1, DETECTOR_V2):
        det.write_text(source)
        args = ["eval", str(cases), "-d", f"{det}:assess", "--results", str(results), "-q", "--name", "mine"]
        assert run_cli(*args).returncode == 0
    board = run_cli("leaderboard", str(results), "--format", "json", "--bootstrap", "100")
    rows = json.loads(board.stdout)[0]["rows"]
    v1 = hashlib.sha256(DETECTOR_V1.encode()).hexdigest()
    assert len(rows) == 2 and all(r["detector"].startswith("mine [") for r in rows)
    assert {len(r["runs"]) for r in rows} == {1}
    assert any(
        json.loads((Path(r["runs"][0]) / "run.json").read_text())["identity"]["fingerprint"]["sha256"] == v1
        for r in rows
    )
