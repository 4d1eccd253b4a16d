"""``fcb threshold`` and ``fcb eval --threshold`` through the real CLI: a threshold chosen on a dev run, written as a
document that holds to its schema, refused when it cannot keep its promise or when its file or detector is wrong,
and held to on an evaluation, whose report and metrics.json say what the run showed beside the promise."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import EMBEDDED, read_jsonl, run_cli

from harness.documents import check

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dev") / "dev"
    proc = run_cli("eval", str(EMBEDDED), "-d", "builtin:heuristic", "--out", str(out), "-q", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    return out


def test_a_threshold_chosen_on_a_dev_run_and_held_to_on_another(dev: Path, tmp_path: Path) -> None:
    target = tmp_path / "t.json"
    proc = run_cli("threshold", str(dev), "--miss-rate", "0.1", "--out", str(target))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(target.read_text())
    assert check("threshold", doc) == []
    # the dev run's own counts, from its journal: the highs scored below the threshold are the ones missed
    journal = read_jsonl(dev / "predictions.jsonl")
    highs = [r["score"] for r in journal if r["expected"] == "high"]
    missed = sum(1 for s in highs if s is None or s < doc["threshold"])
    assert (doc["dev"]["n_false_consensus"], doc["dev"]["missed"]) == (len(highs), missed)
    assert doc["dev"]["escalated"] == sum(
        1 for r in journal if r["score"] is not None and r["score"] >= doc["threshold"]
    )
    assert doc["method"] == "probable" and doc["confidence"] == 0.9 and doc["detector"] == "builtin:heuristic"
    assert doc["promise"] in proc.stdout and f"threshold: {target}" in proc.stdout

    run = tmp_path / "run"
    proc = run_cli("eval", str(EMBEDDED), "-d", "builtin:heuristic", "--threshold", str(target), "--out", str(run),
                   "--bootstrap", "50")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    metrics = json.loads((run / "metrics.json").read_text())
    held = metrics["metrics"]["threshold"]
    assert (held["missed"], held["n_false_consensus"]) == (missed, len(highs))  # the same cases, the same detector
    assert held["within"] is (missed / len(highs) <= 0.1) and held["file"] == str(target)
    assert check("metrics", metrics) == []
    assert json.loads((run / "run.json").read_text())["settings"]["threshold"] == str(target)
    assert f"This run, escalating risk score >= {doc['threshold']:g}: {missed} of {len(highs)}" in proc.stdout
    assert "This run, escalating risk score" in (run / "report.md").read_text()
    assert "class='threshold'" in (run / "report.html").read_text()


def test_refusals_name_the_reason(dev: Path, tmp_path: Path) -> None:
    small = run_cli("threshold", str(dev), "--miss-rate", "0.01", "--out", str(tmp_path / "x.json"))
    assert small.returncode == 2 and "no threshold keeps the miss rate at or under 0.01" in small.stderr
    assert not (tmp_path / "x.json").exists()
    made = run_cli("threshold", str(dev), "--miss-rate", "0.2", "--in-expectation", "--out", str(tmp_path / "t.json"))
    assert made.returncode == 0, made.stderr
    other = run_cli("eval", str(EMBEDDED), "-d", "builtin:agreement", "--threshold", str(tmp_path / "t.json"),
                    "--out", str(tmp_path / "a"))  # fmt: skip
    assert other.returncode == 2
    assert "chosen for builtin:heuristic, not builtin:agreement" in other.stderr and not (tmp_path / "a").exists()
    broken = tmp_path / "broken.json"
    doc = json.loads((tmp_path / "t.json").read_text())
    doc["miss_rate_target"] = "five percent"
    broken.write_text(json.dumps(doc))
    bad = run_cli("eval", str(EMBEDDED), "--threshold", str(broken), "--out", str(tmp_path / "b"))
    assert bad.returncode == 2 and f"--threshold {broken}: miss_rate_target:" in bad.stderr
    missing = run_cli("eval", str(EMBEDDED), "--threshold", str(tmp_path / "none.json"), "--out", str(tmp_path / "c"))
    assert missing.returncode == 2 and "none.json: no such file; fcb threshold DEV_RUN writes one" in missing.stderr


def test_every_run_reports_its_operating_points(dev: Path) -> None:
    metrics = json.loads((dev / "metrics.json").read_text())["metrics"]
    block = metrics["operating_points"]
    journal = read_jsonl(dev / "predictions.jsonl")
    y = np.array([r["expected"] for r in journal])
    p = np.array([r["risk"] for r in journal], dtype=object)
    high = block["policies"]["high"]
    assert high["escalated"] == int((p == "high").sum())
    assert high["false_consensus_caught"] == pytest.approx(((p == "high") & (y == "high")).sum() / (y == "high").sum())
    report = (dev / "report.md").read_text()
    assert "## Operating points" in report and "| verdict medium or high |" in report
    assert '<svg class="review"' in (dev / "report.html").read_text()


def test_the_leaderboard_shows_the_operating_points_and_refuses_an_edited_one(dev: Path, tmp_path: Path) -> None:
    import csv
    import io
    import shutil

    proc = run_cli("leaderboard", str(dev), "--format", "csv", "--bootstrap", "20")
    assert proc.returncode == 0, proc.stderr
    (row,) = list(csv.DictReader(io.StringIO(proc.stdout)))
    block = json.loads((dev / "metrics.json").read_text())["metrics"]["operating_points"]
    assert float(row["escalation_rate_high"]) == pytest.approx(block["policies"]["high"]["escalation_rate"])
    assert float(row["aurc"]) == pytest.approx(block["risk_coverage"]["aurc"])
    edited = tmp_path / "edited"
    shutil.copytree(dev, edited)
    doc = json.loads((edited / "metrics.json").read_text())
    doc["metrics"]["operating_points"]["policies"]["high"]["escalation_rate"] = 0.01
    (edited / "metrics.json").write_text(json.dumps(doc))
    refused = run_cli("leaderboard", str(edited))
    assert refused.returncode == 2 and "metrics.operating_points.policies.high.escalation_rate: 0.01" in refused.stderr
