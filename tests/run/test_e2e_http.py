"""End to end: a real HTTP detector on 127.0.0.1, the real CLI in a subprocess, metrics checked independently."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli
from servers.detector_server import is_flaky, reply_for
from sklearn.metrics import confusion_matrix

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

LABELS = ["low", "medium", "high", "error"]


def detector_view(case: dict) -> dict:
    """What the detector should receive, written out here rather than taken from the harness."""
    view = {
        "task": case["question"],
        "answers": [{"agent_id": a["agent_id"], "text": a["text"]} for a in case["answers"]],
    }
    if "evidence" in case:
        view["evidence"] = case["evidence"]
    return view


def test_cli_against_http_detector_matches_independent_computation(tmp_path: Path, detector_server) -> None:
    cases_path = write_cases(tmp_path / "cases.jsonl", 240)
    record = tmp_path / "requests.jsonl"
    server = detector_server("--garbage-every", "7", "--flaky-every", "5", "--record", str(record))
    run_dir = tmp_path / "run"
    proc = run_cli(
        "eval",
        str(cases_path),
        "--detector",
        server.url,
        "--out",
        str(run_dir),
        "--quiet",
        "--retries",
        "2",
        "--concurrency",
        "8",  # the retried cases spend most of the run in backoff waits: more of them wait side by side
        "--bootstrap",
        "200",
    )
    assert proc.returncode == 0, proc.stderr

    cases = read_jsonl(cases_path)
    truth, predicted = [], []
    flaky = retries = 0
    for case in cases:
        view = detector_view(case)
        reply = reply_for(view, garbage_every=7)
        truth.append(case["expected_risk"])
        predicted.append("error" if reply is None else reply["false_consensus_risk"])
        flaky += is_flaky(view, 5)
        # a 503 first is retried once; an unreadable body is retried like a transport fault; --retries 2 caps both
        retries += min(2, is_flaky(view, 5) + 2 * (reply is None))
    metrics = json.loads((run_dir / "metrics.json").read_text())["metrics"]

    expected_cm = confusion_matrix(truth, predicted, labels=LABELS)[:3]
    assert metrics["confusion_matrix"]["counts"] == expected_cm.tolist()
    assert metrics["accuracy"] == np.mean([t == p for t, p in zip(truth, predicted, strict=True)])
    for category in {c["category"] for c in cases}:
        rows = [(t, p) for c, t, p in zip(cases, truth, predicted, strict=True) if c["category"] == category]
        got = metrics["per_category"][category]
        assert got["n"] == len(rows)
        assert got["accuracy"] == sum(t == p for t, p in rows) / len(rows)
        assert got["predicted"] == {k: Counter(p for _, p in rows)[k] for k in LABELS}
    ops = metrics["operational"]
    assert ops["errors_by_kind"] == {"invalid_response": predicted.count("error")}
    assert ops["retries"] == retries and flaky > 0

    # the server saw each request in the detector's view and nothing else: no label, metadata or id
    seen = [r["body"] for r in read_jsonl(record)]
    assert len(seen) == len(cases) + retries
    assert {json.dumps(b, sort_keys=True) for b in seen} == {
        json.dumps(detector_view(c), sort_keys=True) for c in cases
    }
    assert {r["path"] for r in read_jsonl(record)} == {"/v1/consensus"}

    journal = read_jsonl(run_dir / "predictions.jsonl")
    assert sorted(r["id"] for r in journal) == sorted(c["id"] for c in cases)
    assert all(r["response"] == {"note": "test server"} for r in journal if r["error"] is None)
    assert (run_dir / "report.md").read_text().count("## Per category") == 1
