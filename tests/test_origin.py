"""Metrics by case origin: the second headline on natural + assembled cases, the by-origin breakdown, and where
they show (metrics.json, report.md, the run summary, leaderboards, compare). Expected figures come from the case
files read directly and from scikit-learn, never from the harness's own origin code."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli
from sklearn.metrics import accuracy_score, f1_score

from harness import metrics as m
from harness.cases import scan
from harness.types import RISKS, Outcome

REAL_TAGS = {"origin_natural", "origin_assembled"}


def tagged_cases(path: Path, n: int = 120, seed: int = 5) -> Path:
    """Synthetic cases with origin tags, then: every 10th case loses its tag (origin unknown), and case 6, a
    natural one, also gets origin_constructed (a case with two origins counts as the less real one)."""
    write_cases(path, n, seed=seed, origins=True)
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    for i, case in enumerate(cases):
        if i % 10 == 9:
            case["tags"] = [t for t in case["tags"] if not t.startswith("origin_")]
    assert "origin_natural" in cases[5]["tags"]
    cases[5]["tags"].append("origin_constructed")
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def is_real(case: dict) -> bool:
    tags = set(case["tags"])
    return bool(tags & REAL_TAGS) and "origin_constructed" not in tags


def random_outcomes(cases: list[dict], seed: int = 1) -> dict[str, Outcome]:
    """A seeded random detector: right about half the time, an error on one case in twelve."""
    rng = random.Random(seed)
    out = {}
    for case in cases:
        cid = case["id"]
        if rng.random() < 1 / 12:
            out[cid] = Outcome(cid, "", None, None, "timeout", 1, 0.01)
        else:
            risk = case["expected_risk"] if rng.random() < 0.5 else rng.choice(RISKS)
            out[cid] = Outcome(cid, "", risk, None, None, 1, 0.01)
    return out


@pytest.fixture(scope="module")
def tagged(tmp_path_factory) -> Path:
    return tagged_cases(tmp_path_factory.mktemp("origin") / "tagged.jsonl")


def _codes(cases: list[dict], outcomes: dict[str, Outcome]) -> tuple[list[int], list[int]]:
    truth = [RISKS.index(c["expected_risk"]) for c in cases]
    pred = [3 if (r := outcomes[c["id"]].risk) is None else RISKS.index(r) for c in cases]
    return truth, pred


# --------------------------------------------------------------------------------------------------------------
# metrics.json


def test_real_headline_equals_sklearn_on_the_hand_filtered_subset(tagged: Path) -> None:
    cases = [json.loads(line) for line in tagged.read_text().splitlines()]
    outcomes = random_outcomes(cases)
    result = m.compute(scan(tagged).labels, outcomes, wall_s=1.0, n_boot=300, seed=2)
    real_cases = [c for c in cases if is_real(c)]
    # 120 cases: 40 per origin block of 8 cases x 5 blocks; 12 lose their tag; case 6 becomes constructed
    assert len(real_cases) == 80 - sum(1 for i in range(120) if i % 10 == 9 and (i // 8) % 3 < 2) - 1
    truth, pred = _codes(real_cases, outcomes)
    present = sorted((set(truth) | set(pred)) - {3})
    real = result["headline_real"]
    assert real["n_cases"] == len(real_cases)
    assert real["accuracy"] == pytest.approx(accuracy_score(truth, pred))
    assert real["macro_f1"] == pytest.approx(f1_score(truth, pred, labels=present, average="macro", zero_division=0))
    high = [p for t, p in zip(truth, pred, strict=True) if t == 2]
    low = [p for t, p in zip(truth, pred, strict=True) if t == 0]
    assert real["high_risk_recall"] == pytest.approx(high.count(2) / len(high))
    assert real["false_alarm_rate"] == pytest.approx(low.count(2) / len(low))
    assert real["error_rate"] == pytest.approx(pred.count(3) / len(pred))
    for name in ("accuracy", "macro_f1"):
        lo, hi = real[f"{name}_ci95"]
        assert lo <= real[name] <= hi and hi - lo > 0.05  # a real interval around the point, not a point
    # the all-cases headline is still over every case
    all_truth, all_pred = _codes(cases, outcomes)
    assert result["accuracy"] == pytest.approx(accuracy_score(all_truth, all_pred))
    assert result["n_cases"] == 120


def test_by_origin_counts_each_case_once_under_its_origin(tagged: Path) -> None:
    cases = [json.loads(line) for line in tagged.read_text().splitlines()]
    outcomes = random_outcomes(cases)
    groups = m.compute(scan(tagged).labels, outcomes, wall_s=1.0, n_boot=0)["breakdowns"]["origin"]
    expected: dict[str, list[bool]] = {}
    for c in cases:
        tags = set(c["tags"])
        key = next((o for o in ("constructed", "assembled", "natural") if f"origin_{o}" in tags), "unknown")
        expected.setdefault(key, []).append(outcomes[c["id"]].risk == c["expected_risk"])
    assert set(groups) == {"natural", "assembled", "constructed", "unknown"}
    for key, right in expected.items():
        assert groups[key]["n"] == len(right)
        assert groups[key]["accuracy"] == pytest.approx(sum(right) / len(right))
        assert groups[key]["ci95"][0] <= groups[key]["accuracy"] <= groups[key]["ci95"][1]
    assert sum(g["n"] for g in groups.values()) == len(cases)


def test_no_origin_tags_means_no_real_headline(tmp_path: Path) -> None:
    plain = write_cases(tmp_path / "plain.jsonl", 40)
    cases = [json.loads(line) for line in plain.read_text().splitlines()]
    result = m.compute(scan(plain).labels, random_outcomes(cases), wall_s=1.0, n_boot=50)
    assert result["headline_real"] is None
    assert set(result["breakdowns"]["origin"]) == {"unknown"}


def test_only_constructed_cases_give_an_empty_real_headline(tmp_path: Path) -> None:
    path = write_cases(tmp_path / "constructed.jsonl", 24)
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    for c in cases:
        c["tags"].append("origin_constructed")
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    real = m.compute(scan(path).labels, random_outcomes(cases), wall_s=1.0, n_boot=50)["headline_real"]
    assert real["n_cases"] == 0
    assert real["accuracy"] is None and real["macro_f1"] is None and real["high_risk_recall"] is None
    assert "macro_f1_ci95" not in real


def test_synthetic_origins_option_changes_only_the_tags(tmp_path: Path) -> None:
    plain = [json.loads(x) for x in write_cases(tmp_path / "a.jsonl", 30).read_text().splitlines()]
    tagged = [json.loads(x) for x in write_cases(tmp_path / "b.jsonl", 30, origins=True).read_text().splitlines()]
    assert {c["tags"][-1] for c in tagged[:24]} == {"origin_natural", "origin_assembled", "origin_constructed"}
    for p, t in zip(plain, tagged, strict=True):
        extra = [x for x in t["tags"] if x not in p["tags"]]
        assert len(extra) == 1 and extra[0].startswith("origin_")
        t["tags"] = p["tags"]
        assert p == t


# --------------------------------------------------------------------------------------------------------------
# report.md and the run summary


def _headline_lines(text: str) -> list[str]:
    """The Markdown headline rows ``cases`` and ``accuracy``."""
    return [line for line in text.splitlines() if re.match(r"\| (cases|accuracy) +\|", line)]


def test_report_shows_the_real_column_and_origin_table_only_with_tags(tagged: Path, tmp_path: Path) -> None:
    run = tmp_path / "tagged-run"
    proc = run_cli("eval", str(tagged), "-d", "builtin:agreement", "--out", str(run), "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    cases = {c["id"]: c for c in map(json.loads, tagged.read_text().splitlines())}
    journal = [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]
    real = [r for r in journal if is_real(cases[r["id"]])]
    accuracy = sum(r["risk"] == cases[r["id"]]["expected_risk"] for r in real) / len(real)
    report = (run / "report.md").read_text()
    cases_row, accuracy_row = _headline_lines(report)
    assert "natural + assembled" in report and "## By origin" in report
    assert cases_row.split("|")[4].strip() == str(len(real))
    assert accuracy_row.split("|")[4].strip() == f"{100 * accuracy:.1f}%"
    doc = json.loads((run / "metrics.json").read_text())
    assert doc["metrics_version"] == 2 and doc["metrics"]["headline_real"]["n_cases"] == len(real)
    summary = proc.stdout
    assert "natural + assembled" in summary
    assert any(
        line.split()[:2] == ["cases", "120"] and line.split()[2] == str(len(real)) for line in summary.splitlines()
    )
    origin_n = {w[0]: int(w[1]) for line in summary.splitlines() if len(w := line.split()) > 1 and w[1].isdigit()}
    assert origin_n["natural"] + origin_n["assembled"] == len(real)
    assert origin_n["unknown"] == 12  # every 10th of 120 cases lost its tag

    plain = write_cases(tmp_path / "plain.jsonl", 40)
    run = tmp_path / "plain-run"
    proc = run_cli("eval", str(plain), "-d", "builtin:agreement", "--out", str(run), "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    report = (run / "report.md").read_text()
    for text in (report, proc.stdout):
        assert "natural" not in text and "assembled" not in text and "origin" not in text
    assert json.loads((run / "metrics.json").read_text())["metrics"]["headline_real"] is None
