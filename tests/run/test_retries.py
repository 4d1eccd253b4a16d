"""A 200 reply whose body cannot be parsed is retried like a transport fault (issue 15, item 15); a parsed reply of
the wrong shape stays final."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli, short_backoff
from servers.detector_server import fault_for

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

FAULTS = ("notjson", "cutjson")  # an HTML page sent as 200; a JSON body cut short inside a complete HTTP reply


def _views(cases: Path) -> dict[str, dict]:
    return {
        c["id"]: {
            "task": c["question"],
            "answers": [{"agent_id": a["agent_id"], "text": a["text"]} for a in c["answers"]],
        }
        for c in read_jsonl(cases)
    }


def test_unparseable_bodies_are_retried_to_the_fault_free_metrics(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 64)
    clean = detector_server()
    faulty = detector_server("--fault-rate", "0.3", "--faults", ",".join(FAULTS), "--seed", "2")  # first tries only
    common = ["-q", "--retries", "2", "--bootstrap", "100", *short_backoff(tmp_path)]
    assert run_cli("eval", str(cases), "-d", clean.url, "--out", str(tmp_path / "clean"), *common).returncode == 0
    proc = run_cli("eval", str(cases), "-d", faulty.url, "--out", str(tmp_path / "faulty"), *common)
    assert proc.returncode == 0, proc.stderr
    faulted = {cid for cid, view in _views(cases).items() if fault_for(view, 0.3, FAULTS, 2)}
    assert 10 <= len(faulted) <= 30  # about 30% of 64, by the server's own seeded rule
    journal = read_jsonl(tmp_path / "faulty" / "predictions.jsonl")
    assert all(r["error"] is None for r in journal)
    assert {r["id"] for r in journal if r["attempts"] == 2} == faulted
    metrics = [json.loads((tmp_path / run / "metrics.json").read_text())["metrics"] for run in ("clean", "faulty")]
    for m in metrics:
        m.pop("operational")
    assert metrics[0] == metrics[1]


def test_an_unparseable_body_every_time_ends_as_invalid_response_after_the_retries(
    tmp_path: Path, detector_server
) -> None:
    server = detector_server("--fault-rate", "1", "--faults", "notjson", "--fault-every-attempt")
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    proc = run_cli(
        "eval", str(cases), "-d", server.url, "--out", str(out), "-q", "--retries", "2", *short_backoff(tmp_path)
    )
    assert proc.returncode == 1, proc.stderr  # every case errored
    records = read_jsonl(out / "predictions.jsonl")
    assert {(r["error"]["kind"], r["attempts"], r["error"]["raw"]) for r in records} == {
        ("invalid_response", 3, "<html>oops</html>")
    }
    assert server.stats()["count"] == 9  # three tries for each of three cases, no more


def test_a_parsed_reply_of_the_wrong_shape_is_not_retried(tmp_path: Path, detector_server) -> None:
    server = detector_server("--fault-rate", "1", "--faults", "norisk", "--fault-every-attempt")
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    # --no-preflight: a reply without the risk at the first case stops a preflight (item 11 of issue 45)
    flags = ("--out", str(out), "-q", "--retries", "2", "--no-preflight")
    assert run_cli("eval", str(cases), "-d", server.url, *flags).returncode == 1
    assert {r["attempts"] for r in read_jsonl(out / "predictions.jsonl")} == {1}
    assert server.stats()["count"] == 3
