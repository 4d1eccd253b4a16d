"""End to end: a real HTTP detector on 127.0.0.1, the real CLI in a subprocess, metrics checked independently."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli, short_backoff
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
        "8",
        "--bootstrap",
        "200",
        *short_backoff(tmp_path),  # the retries are the point here, not their waits
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


def plain_ece(y: list[float], s: list[float], n_bins: int) -> tuple[float, list[int]]:
    """(ECE, count per bin), written out here: a score's bin is the number of inner edges k/n_bins strictly below
    it; ECE = sum over bins of n_b/N * |share of high - mean score|."""
    groups: list[list[tuple[float, float]]] = [[] for _ in range(n_bins)]
    for yi, si in zip(y, s, strict=True):
        groups[sum(si > k / n_bins for k in range(1, n_bins))].append((yi, si))
    ece = sum(len(g) / len(s) * abs(np.mean([a for a, _ in g]) - np.mean([b for _, b in g])) for g in groups if g)
    return float(ece), [len(g) for g in groups]


def test_the_ece_in_metrics_json_is_the_one_its_journal_gives(tmp_path: Path, detector_server) -> None:
    cases_path = write_cases(tmp_path / "cases.jsonl", 240)
    server = detector_server("--garbage-every", "11")  # some replies are not JSON: errored cases, without a score
    for n_bins in (15, 7):
        run_dir = tmp_path / f"run-{n_bins}"
        bins_flag = () if n_bins == 15 else ("--ece-bins", str(n_bins))  # 15 is the default
        proc = run_cli("eval", str(cases_path), "-d", server.url, "--out", str(run_dir), "-q", "--retries", "0",
                       "--bootstrap", "200", "--seed", "5", *bins_flag)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        journal = read_jsonl(run_dir / "predictions.jsonl")
        scored = [r for r in journal if r["score"] is not None]
        errored = sum(r["error"] is not None for r in journal)
        assert errored and len(scored) == len(journal) - errored  # the server gives every answer a score
        assert {0.0, 1.0, 0.2} & {r["score"] for r in scored}  # scores on the edges of 15 bins happen
        y = [1.0 if r["expected"] == "high" else 0.0 for r in scored]
        s = [r["score"] for r in scored]
        want, counts = plain_ece(y, s, n_bins)

        block = json.loads((run_dir / "metrics.json").read_text())["metrics"]["scores"]
        assert block["n_scored"] == len(scored)
        calibration = block["calibration"]
        assert calibration["bins"] == n_bins and calibration["ece"] == pytest.approx(want, abs=1e-12)
        assert [b["count"] for b in calibration["diagram"]] == counts
        # the interval: 200 resamples of the scored cases (journal order), drawn as harness.metrics documents
        rng = np.random.default_rng(5)
        values = [plain_ece([y[i] for i in idx], [s[i] for i in idx], n_bins)[0]
                  for rows in (100, 100) for idx in rng.integers(0, len(s), size=(rows, len(s)))]  # fmt: skip
        assert calibration["ece_ci95"] == pytest.approx(list(np.percentile(values, [2.5, 97.5])), abs=1e-12)

        assert json.loads((run_dir / "run.json").read_text())["settings"]["ece_bins"] == n_bins
        report = (run_dir / "report.md").read_text()
        assert f"ECE, high vs rest ({n_bins} bins) | {want:.3f} |" in re.sub(" +", " ", report)
        assert f"over {n_bins} equal-width bins" in report
