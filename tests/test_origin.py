"""Metrics by case origin: the second headline on natural + assembled cases, the by-origin breakdown, and where
they show (metrics.json, report.md, the run summary, leaderboards, compare). Expected figures come from the case
files read directly and from scikit-learn, never from the harness's own origin code."""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli
from runkit import ids, make_run
from sklearn.metrics import accuracy_score, f1_score

from harness import figures as fig
from harness.cases.reader import scan
from harness.types import RISKS, Outcome

pytestmark = pytest.mark.slow

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
    result = fig.compute(scan(tagged).labels, outcomes, wall_s=1.0, n_boot=300, seed=2)
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
    groups = fig.compute(scan(tagged).labels, outcomes, wall_s=1.0, n_boot=0)["breakdowns"]["origin"]
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
    result = fig.compute(scan(plain).labels, random_outcomes(cases), wall_s=1.0, n_boot=50)
    assert result["headline_real"] is None
    assert set(result["breakdowns"]["origin"]) == {"unknown"}


def test_only_constructed_cases_give_an_empty_real_headline(tmp_path: Path) -> None:
    path = write_cases(tmp_path / "constructed.jsonl", 24)
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    for c in cases:
        c["tags"].append("origin_constructed")
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    real = fig.compute(scan(path).labels, random_outcomes(cases), wall_s=1.0, n_boot=50)["headline_real"]
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


# --------------------------------------------------------------------------------------------------------------
# leaderboards, compare and baselines


def _board(*args: str) -> list[dict]:
    proc = run_cli("leaderboard", *args, "--format", "json", "--bootstrap", "300")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def two_detectors(tmp_path_factory) -> tuple[Path, Path, Path, Path]:
    """On 240 tagged cases (160 natural or assembled, 80 constructed): ``constructed-ace`` is right on every
    constructed case and on 40 real ones; ``real-ace`` on 90 real ones and no constructed case."""
    root = tmp_path_factory.mktemp("board")
    cases_path = write_cases(root / "tagged.jsonl", 240, origins=True)
    cases = [json.loads(line) for line in cases_path.read_text().splitlines()]
    real_ids = [c["id"] for c in cases if is_real(c)]
    constructed_ids = {c["id"] for c in cases if not is_real(c)}
    assert len(real_ids) == 160 and len(constructed_ids) == 80
    results = root / "results"
    ace = make_run(cases_path, results, constructed_ids | set(real_ids[:40]), "constructed-ace")
    real = make_run(cases_path, results, set(real_ids[-90:]), "real-ace")
    return cases_path, results, ace, real


def _sk_f1_real(cases_path: Path, right: set[str], keep: Callable[[dict], bool] = is_real) -> float:
    """macro-F1 on the real cases (or those ``keep`` takes) of a ChosenRight detector, from the file and sklearn
    alone."""
    truth, pred = [], []
    for c in map(json.loads, cases_path.read_text().splitlines()):
        if keep(c):
            t = RISKS.index(c["expected_risk"])
            truth.append(t)
            pred.append(t if c["id"] in right else (t + 1) % 3)
    return float(f1_score(truth, pred, average="macro", zero_division=0))


def test_leaderboard_shows_the_natural_only_column_beside_the_real_one(two_detectors) -> None:
    cases_path, results, _, _ = two_detectors
    real_ids = [c["id"] for c in map(json.loads, cases_path.read_text().splitlines()) if is_real(c)]
    (board,) = _board(str(results))
    assert board["natural_cases"] == 80 == board["card"]["natural_cases"]
    rows = {r["detector"]: r for r in board["rows"]}
    natural_f1 = _sk_f1_real(cases_path, set(real_ids[-90:]), lambda c: "origin_natural" in c.get("tags", []))
    assert rows["real-ace"]["values"]["macro_f1_natural"] == pytest.approx(natural_f1)
    lo, hi = rows["real-ace"]["ci95_by_metric"]["macro_f1_natural"]
    assert lo <= natural_f1 <= hi
    md = run_cli("leaderboard", str(results), "--bootstrap", "300").stdout
    assert "macro_f1, natural only (80 cases) [95% CI]" in md
    csv_text = run_cli("leaderboard", str(results), "--format", "csv", "--bootstrap", "300").stdout
    records = {r["detector"]: r for r in csv.DictReader(csv_text.splitlines())}
    assert float(records["real-ace"]["natural_value"]) == pytest.approx(natural_f1)
    assert records["real-ace"]["natural_cases"] == "80"


def test_leaderboard_shows_the_real_column_and_can_rank_on_it(two_detectors) -> None:
    cases_path, results, _, _ = two_detectors
    cases = [json.loads(line) for line in cases_path.read_text().splitlines()]
    real_ids = [c["id"] for c in cases if is_real(c)]
    (board,) = _board(str(results), "--metric", "accuracy")
    rows = {r["detector"]: r for r in board["rows"]}
    assert board["real_cases"] == 160
    assert board["card"]["by_origin"] == {"natural": 80, "assembled": 80, "constructed": 80}
    # all cases: 120 of 240 against 90 of 240; real cases: 40 of 160 against 90 of 160
    assert rows["constructed-ace"]["values"]["accuracy"] == pytest.approx(0.5)
    assert rows["constructed-ace"]["values"]["accuracy_real"] == pytest.approx(0.25)
    assert rows["real-ace"]["values"]["accuracy_real"] == pytest.approx(90 / 160)
    assert rows["constructed-ace"]["rank"] == 1 and rows["real-ace"]["rank"] == 2
    lo, hi = rows["real-ace"]["ci95_by_metric"]["accuracy_real"]
    assert lo < 90 / 160 < hi
    (by_real,) = _board(str(results), "--metric", "accuracy_real")
    rows = {r["detector"]: r for r in by_real["rows"]}
    assert rows["real-ace"]["rank"] == 1 and rows["constructed-ace"]["rank"] == 2
    assert rows["real-ace"]["ci95"] == [lo, hi]  # the same paired resamples whichever metric ranks

    md = run_cli("leaderboard", str(results), "--bootstrap", "300").stdout
    header = next(line for line in md.splitlines() if line.startswith("| rank"))
    assert "macro_f1, natural + assembled (160 cases) [95% CI]" in header
    row = next(line for line in md.splitlines() if "| real-ace" in line)
    real_f1 = _sk_f1_real(cases_path, set(real_ids[-90:]))
    assert row.split("|")[4].strip().startswith(f"{real_f1:.3f} [")
    assert "constructed cases cannot carry a ranking on their own" in md

    csv_text = run_cli("leaderboard", str(results), "--format", "csv", "--bootstrap", "300").stdout
    records = {r["detector"]: r for r in csv.DictReader(csv_text.splitlines())}
    assert float(records["real-ace"]["real_value"]) == pytest.approx(real_f1)
    assert records["real-ace"]["real_cases"] == "160"
    html = run_cli("leaderboard", str(results), "--format", "html", "--bootstrap", "50").stdout
    assert "natural + assembled (160 cases)" in html and "<td>constructed</td>" in html


def test_leaderboard_of_untagged_cases_has_no_real_column(tmp_path: Path) -> None:
    plain = write_cases(tmp_path / "plain.jsonl", 40)
    make_run(plain, tmp_path / "results", ids(1, 30), "some")
    md = run_cli("leaderboard", str(tmp_path / "results"), "--bootstrap", "50")
    assert md.returncode == 0 and "natural" not in md.stdout
    csv_rows = run_cli("leaderboard", str(tmp_path / "results"), "--format", "csv", "--bootstrap", "50").stdout
    (row,) = csv.DictReader(io.StringIO(csv_rows))
    assert [row[k] for k in ("real_cases", "real_value", "real_ci_low", "real_ci_high")] == ["", "", "", ""]
    refused = _board(str(tmp_path / "results"), "--metric", "macro_f1_real")
    assert [r["rank"] for r in refused[0]["rows"]] == [None]
    assert "no natural or assembled case" in refused[0]["method"]["note"]


def test_compare_adds_the_real_macro_f1_and_a_baseline_keeps_origins(two_detectors, tmp_path: Path) -> None:
    cases_path, _, ace, real = two_detectors
    cases = [json.loads(line) for line in cases_path.read_text().splitlines()]
    real_ids = [c["id"] for c in cases if is_real(c)]
    proc = run_cli("compare", str(ace), str(real), "--format", "json", "--bootstrap", "300")
    cmp = json.loads(proc.stdout)
    f1 = cmp["metrics"]["macro_f1_real"]
    base_f1 = _sk_f1_real(cases_path, {c["id"] for c in cases if not is_real(c)} | set(real_ids[:40]))
    assert f1["base"] == pytest.approx(base_f1)
    assert f1["new"] == pytest.approx(_sk_f1_real(cases_path, set(real_ids[-90:])))
    assert f1["ci"][0] > 0 and not f1["regression"]
    # the other way round the real subset gets worse: a regression, and the exit code says so
    back = run_cli("compare", str(real), str(ace), "--format", "json", "--bootstrap", "300")
    assert back.returncode == 1 and json.loads(back.stdout)["metrics"]["macro_f1_real"]["regression"]
    saved = tmp_path / "baselines"
    assert run_cli("baseline", "save", str(ace), "--name", "ace", "--dir", str(saved)).returncode == 0
    from_file = json.loads(
        run_cli("compare", str(saved / "ace.json"), str(real), "--format", "json", "--bootstrap", "300").stdout
    )
    assert from_file["metrics"] == cmp["metrics"]
    text = run_cli("compare", str(ace), str(real), "--bootstrap", "300").stdout
    assert any(line.startswith("macro_f1_real") for line in text.splitlines())


def test_stats_counts_cases_by_origin(tmp_path: Path) -> None:
    path = tagged_cases(tmp_path / "cases.jsonl", n=60)
    expected: dict[str, int] = {}
    for line in path.read_text().splitlines():
        tags = set(json.loads(line).get("tags", []))
        # the least real origin a case carries; none at all is "unknown"
        origin = next((o for o in ("constructed", "assembled", "natural") if f"origin_{o}" in tags), "unknown")
        expected[origin] = expected.get(origin, 0) + 1
    proc = run_cli("stats", str(path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["counts"]["origin"] == expected
