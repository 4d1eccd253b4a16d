"""The case-level analysis's pure parts (`harness.leaderboard.case_analysis`) on hand-built arrays and in-memory runs,
each figure against arithmetic in a comment or a formula written here."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from harness import documents
from harness.errors import IncomparableRuns, RunLoadError, UsageError
from harness.leaderboard.case_analysis import (
    case_analysis,
    check_runs,
    correct,
    difficulty,
    discrimination,
    strongest,
    summary,
    suspect_cases,
    suspect_order,
)
from harness.leaderboard.case_analysis_render import least_discriminating, to_markdown
from harness.leaderboard.runs import Run

E = 3  # an errored prediction (harness.metrics.ERROR)


def point_biserial(right: list[int], scores: list[float]) -> float:
    """r = (M1 - M0) / s * sqrt(p * q), s the population standard deviation of the scores."""
    n, n1 = len(right), sum(right)
    m1 = sum(s for s, r in zip(scores, right, strict=True) if r) / n1
    m0 = sum(s for s, r in zip(scores, right, strict=True) if not r) / (n - n1)
    mean = sum(scores) / n
    s = math.sqrt(sum((x - mean) ** 2 for x in scores) / n)
    return (m1 - m0) / s * math.sqrt(n1 / n * (n - n1) / n)


def test_correct_counts_an_error_as_wrong_and_difficulty_is_the_share_right() -> None:
    y_true = np.array([0, 1, 2, 2])
    preds = [np.array([0, 1, E, 1]), np.array([0, 2, 2, E]), np.array([1, 1, 2, 0])]
    right = correct(y_true, preds)
    assert right.tolist() == [[True, True, False, False], [True, False, True, False], [False, True, True, False]]
    # case 0: 2 of 3 right; case 1: 2 of 3; case 2: 2 of 3 (one error); case 3: none
    assert difficulty(right).tolist() == pytest.approx([2 / 3, 2 / 3, 2 / 3, 0.0])


def test_discrimination_is_the_point_biserial_and_none_where_undefined() -> None:
    scores = np.array([0.81, 0.64, 0.52, 0.33, 0.20])
    right = np.array(
        [
            [1, 1, 1, 0, 1],
            [1, 0, 1, 0, 0],
            [0, 1, 1, 0, 1],
            [1, 0, 1, 0, 0],
            [0, 0, 1, 1, 0],
        ],
        dtype=bool,
    )  # detectors x cases: case 2 all right, case 3 right by the weakest alone
    got = discrimination(right, scores)
    assert got[2] is None  # every detector right
    for case in (0, 1, 3, 4):
        assert got[case] == pytest.approx(point_biserial(right[:, case].astype(int).tolist(), scores.tolist()))
    # case 0: right = 1,1,0,1,0: M1 = (0.81+0.64+0.33)/3 = 0.5933, M0 = (0.52+0.20)/2 = 0.36; positive
    assert got[0] > 0
    assert got[3] < 0  # case 3: right only by the weakest detector
    assert discrimination(np.zeros((5, 3), dtype=bool), scores) == [None] * 3  # every detector wrong
    assert discrimination(right, np.full(5, 0.5)) == [None] * 5  # equal scores: no correlation to speak of
    # two detectors: right by the better one alone is a correlation of exactly 1, by the worse one alone of -1
    assert discrimination(np.array([[True, False], [False, True]]), np.array([0.8, 0.3])) == pytest.approx([1, -1])


def test_discrimination_equals_scipys_pointbiserialr_case_by_case() -> None:
    from scipy.stats import pointbiserialr

    rng = np.random.default_rng(3)
    right = rng.random((7, 400)) < 0.45
    scores = rng.random(7)
    got = discrimination(right, scores)
    for case in range(400):
        column = right[:, case]
        if column.all() or not column.any():
            assert got[case] is None
        else:
            assert got[case] == pytest.approx(pointbiserialr(column.astype(int), scores).statistic, abs=1e-12)
    assert sum(g is None for g in got) < 40  # most cases are defined: the comparison is not vacuous


def test_discrimination_of_a_case_right_by_the_best_two_by_hand() -> None:
    # scores 4, 3, 2, 1 (mean 2.5, population sd sqrt(1.25)); right 1, 1, 0, 0: M1 = 3.5, M0 = 1.5,
    # r = (3.5 - 1.5) / sqrt(1.25) * sqrt(0.5 * 0.5) = 2 / 1.1180 * 0.5 = 0.894427
    right = np.array([[1], [1], [0], [0]], dtype=bool)
    assert discrimination(right, np.array([4.0, 3.0, 2.0, 1.0]))[0] == pytest.approx(0.894427, abs=1e-6)


def test_a_correlation_of_exactly_zero_is_zero_not_a_negative_zero() -> None:
    # scores 0.2, 0.4, 0.6, 0.8, right by the middle two: M1 = M0 = 0.5, r = 0 exactly, which pearsonr gives as
    # -5.6e-17; rounded, -0.0, which JSON writes as -0.0 and a sort reads as negative: it must be 0.0
    (got,) = discrimination(np.array([[0], [1], [1], [0]], dtype=bool), np.array([0.2, 0.4, 0.6, 0.8]))
    assert got == 0 and math.copysign(1.0, got) == 1.0


def test_strongest_takes_the_k_best_and_everyone_tied_with_the_kth() -> None:
    assert sorted(strongest(np.array([0.5, 0.9, 0.7, 0.6, 0.8]), 3).tolist()) == [1, 2, 4]
    assert sorted(strongest(np.array([0.5, 0.7, 0.7, 0.6, 0.7]), 2).tolist()) == [1, 2, 4]  # three tie for 2nd
    assert sorted(strongest(np.array([0.9, 0.8, 0.7, 0.7]), 3).tolist()) == [0, 1, 2, 3]
    assert strongest(np.array([0.2, 0.1]), 2).tolist() == [0, 1]
    assert strongest(np.array([0.2, 0.9, 0.4]), 1).tolist() == [1]
    with pytest.raises(ValueError, match="k=3 for 2 detectors"):
        strongest(np.array([0.2, 0.1]), 3)
    with pytest.raises(ValueError, match="k=0 for 2 detectors"):
        strongest(np.array([0.2, 0.1]), 0)


def test_suspect_cases_need_the_same_wrong_prediction_from_every_strongest_and_no_error() -> None:
    y_true = np.array([2, 2, 2, 0, 1, 1])
    preds = [
        np.array([0, 0, E, 0, 0, 2]),
        np.array([0, 1, E, 0, 0, 2]),
        np.array([0, 0, E, 0, 2, 2]),
        np.array([1, 2, 2, 2, 0, 0]),  # not among the strongest: its answers change nothing
    ]
    best = np.array([0, 1, 2])
    # case 0: all say low for high -> 0; case 1: split; case 2: all errored (never "the same prediction");
    # case 3: all right; case 4: split; case 5: all say high for medium -> 2
    assert suspect_cases(y_true, preds, best).tolist() == [0, -1, -1, -1, -1, 2]
    preds[1][0] = E
    assert suspect_cases(y_true, preds, best).tolist()[0] == -1  # one error among them is enough to clear it


def test_suspect_order_more_agreeing_then_farther_then_by_id() -> None:
    ids = np.array(["FCB-0004", "FCB-0001", "FCB-0003", "FCB-0002", "FCB-0005"], dtype=object)
    shared = np.array([0, 1, 0, 2, -1])
    agreeing = np.array([3, 3, 4, 3, 5])
    distance = np.array([2, 1, 1, 2, 0])
    # FCB-0003 (4 agreeing) first; then 3 agreeing at distance 2: FCB-0002, FCB-0004; then FCB-0001; not FCB-0005
    assert [ids[i] for i in suspect_order(ids, shared, agreeing, distance)] == ["FCB-0003", "FCB-0002", "FCB-0004",
                                                                                 "FCB-0001"]  # fmt: skip


def fake_run(name: str, preds: list[int], *, sha: str = "a" * 64, f1: float | None = 0.5, complete: bool = True,
             truth: tuple[int, ...] = (2, 2, 0, 1), path: Path | None = None,
             categories: tuple[str, ...] = ("echo_cascade", "majority_wrong_fact", "genuine_agreement_correct", "x"),
             origins: tuple[str, ...] | None = ("natural", "constructed", "unknown", "assembled")) -> Run:  # fmt: skip
    """A run in memory: only what the analysis reads."""
    doc = {
        "complete": complete,
        "dataset": {"name": f"{sha[0]}.jsonl", "sha256": sha, "cases": len(truth)},
        "detector": {"spec": f"x:{name}", "label": name},
        "metrics": {"macro_f1": f1},
    }
    n = len(preds)
    return Run(
        path=path or Path(f"/runs/{name}"),
        doc=doc,  # type: ignore[arg-type]
        ids=np.array([f"FCB-{i + 1:04d}" for i in range(n)], dtype=object),
        categories=np.array(categories[:n], dtype=object),
        y_true=np.array(truth[:n]),
        y_pred=np.array(preds),
        origins=None if origins is None else np.array(origins[:n], dtype=object),
    )


def test_the_document_of_five_detectors_on_six_untagged_cases() -> None:
    truth = (2, 2, 1, 0, 0, 1)
    cats = ("c-one", "c-two", "c-three", "c-four", "c-five", "c-six")
    table = {  # detector: (macro-F1, predictions of cases 1..6)
        "A": (1.0, [1, 0, 1, 0, 0, 2]),
        "B": (0.75, [1, 0, E, 0, 0, 2]),
        "C": (0.5, [1, 0, 1, 0, 2, 2]),
        "D": (0.25, [1, 2, E, 0, 2, 0]),
        "E": (0.0, [2, 0, 1, 0, 2, 0]),
    }
    runs = [fake_run(n, p, f1=f, truth=truth, categories=cats, origins=None) for n, (f, p) in table.items()]
    doc = case_analysis(runs, k=3)
    assert documents.check("case-analysis", doc) == []
    assert doc["detectors"] == [
        {"detector": n, "spec": f"x:{n}", "run": f"/runs/{n}", "macro_f1": f, "errors": int(n in "BD"),
         "strongest": n in "ABC", "complete": True}
        for n, (f, _) in table.items()
    ]  # fmt: skip
    cases = doc["cases"]
    assert [c["category"] for c in cases] == list(cats) and not any("origin" in c for c in cases)
    assert [c["predicted"] for c in cases] == ["mmmmh", "lllhl", "memem", "lllll", "llhhh", "hhhll"]
    assert [c["right"] for c in cases] == [1, 1, 3, 5, 2, 0]
    assert [c["errored"] for c in cases] == [0, 0, 2, 0, 0, 0]  # B and D both failed on case 3
    assert [c["difficulty"] for c in cases] == pytest.approx([0.2, 0.2, 0.6, 1.0, 0.4, 0.0])
    scores = [f for f, _ in table.values()]
    for i, right in ((0, [0, 0, 0, 0, 1]), (1, [0, 0, 0, 1, 0]), (2, [1, 0, 1, 0, 1]), (4, [1, 1, 0, 0, 0])):
        assert cases[i]["discrimination"] == pytest.approx(point_biserial(right, scores), abs=1e-12)
    assert cases[3]["discrimination"] is None and cases[5]["discrimination"] is None
    # suspects: case 2 (4 say low for high, 2 off), case 1 (4 say medium for high, 1 off), case 6 (3 say high for
    # medium); case 3 is not one: B errored there (and D, not among the strongest)
    assert [(s["id"], s["predicted"], s["agreeing"], s["distance"]) for s in doc["suspects"]] == [
        ("FCB-0002", "low", 4, 2), ("FCB-0001", "medium", 4, 1), ("FCB-0006", "high", 3, 1)
    ]  # fmt: skip
    assert [c["suspect"] for c in cases] == [True, True, False, False, False, True]
    assert doc["method"]["strongest_requested"] == 3 and doc["method"]["score"] == "macro_f1"
    # negative discrimination: case 1, right by the weakest alone, and case 2, by the second weakest alone
    assert doc["summary"] == {
        "cases": 6,
        "detectors": 5,
        "strongest": 3,
        "errored_predictions": 2,
        "cases_with_errors": 1,
        "all_right": 1,
        "all_wrong": 1,
        "discrimination_undefined": 2,
        "negative_discrimination": 2,
        "suspects": 3,
        "mean_difficulty": pytest.approx(12 / 30),
    }
    # case 3: right by A (1.0), C (0.5) and E (0.0), M1 = 0.5 = M0 = (0.75 + 0.25) / 2: a correlation of exactly 0,
    # not a negative one by float rounding
    assert cases[2]["discrimination"] == 0.0 and math.copysign(1.0, cases[2]["discrimination"]) == 1.0  # not -0.0


def test_summary_counts_a_zero_correlation_as_not_negative_and_has_no_mean_without_cases() -> None:
    right = np.array([[True, False, True, False], [False, False, True, False], [True, False, True, True]])
    errored = np.array([[False, True, False, True], [True, True, False, True], [False, False, False, False]])
    got = summary(right, errored, [0.0, None, None, -0.5], 2, 0)
    assert got["negative_discrimination"] == 1 and got["discrimination_undefined"] == 2
    # errors: 5 predictions, on cases 1, 2 and 4 (3 cases), by 2 of the 3 detectors
    assert got["errored_predictions"] == 5 and got["cases_with_errors"] == 3
    assert got["all_right"] == 1 and got["all_wrong"] == 1  # case 3 right by all, case 2 by none
    assert got["mean_difficulty"] == pytest.approx(6 / 12)
    empty = summary(np.zeros((3, 0), dtype=bool), np.zeros((3, 0), dtype=bool), [], 3, 0)
    assert empty["mean_difficulty"] is None and empty["cases"] == 0 and empty["detectors"] == 3


def test_the_document_from_runs_in_memory() -> None:
    runs = [
        fake_run("a", [0, 2, 0, 1], f1=0.9),
        fake_run("b", [0, E, 0, 2], f1=0.7),
        fake_run("c", [0, 0, 1, 1], f1=0.6),
        fake_run("d", [1, 0, 0, 0], f1=0.25),
    ]
    doc = case_analysis(runs, k=3)
    assert [d["strongest"] for d in doc["detectors"]] == [True, True, True, False]
    assert [d["errors"] for d in doc["detectors"]] == [0, 1, 0, 0]
    cases = doc["cases"]
    assert [c["predicted"] for c in cases] == ["lllm", "hell", "llml", "mhml"]
    assert [c["right"] for c in cases] == [0, 1, 3, 2]  # case 1: only a says high; case 3 (medium): a and c
    assert [c["errored"] for c in cases] == [0, 1, 0, 0]
    assert [c["difficulty"] for c in cases] == pytest.approx([0, 0.25, 0.75, 0.5])
    assert "origin" not in cases[2] and cases[0]["origin"] == "natural" and cases[3]["origin"] == "assembled"
    # case 0: a, b, c all say low for high, d says medium: a suspect with 3 agreeing, distance 2
    assert doc["suspects"] == [
        {"id": "FCB-0001", "category": "echo_cascade", "origin": "natural", "expected": "high", "predicted": "low",
         "distance": 2, "agreeing": 3, "difficulty": 0.0, "discrimination": None}
    ]  # fmt: skip
    assert cases[0]["suspect"] and not any(c["suspect"] for c in cases[1:])
    assert cases[1]["discrimination"] == pytest.approx(point_biserial([1, 0, 0, 0], [0.9, 0.7, 0.6, 0.25]))
    assert cases[2]["discrimination"] == pytest.approx(point_biserial([1, 1, 0, 1], [0.9, 0.7, 0.6, 0.25]))
    s = doc["summary"]
    assert (s["cases"], s["detectors"], s["strongest"], s["suspects"]) == (4, 4, 3, 1)
    assert (s["errored_predictions"], s["cases_with_errors"], s["all_right"], s["all_wrong"]) == (1, 1, 0, 1)
    assert s["discrimination_undefined"] == 1 and s["mean_difficulty"] == pytest.approx(6 / 16)
    # case 2: M1 (0.9+0.7+0.25)/3 = 0.617 > M0 0.6; case 3: right by a and c, M1 0.75 > M0 (0.7+0.25)/2 = 0.475
    assert s["negative_discrimination"] == 0
    assert doc["dataset"] == {"name": "a.jsonl", "sha256": "a" * 64, "cases": 4}
    assert all(d["complete"] for d in doc["detectors"])


def test_markdown_lists_suspects_and_negative_discrimination() -> None:
    runs = [
        fake_run("a", [0, 2, 0, 0], f1=0.9),
        fake_run("b", [0, 1, 0, 1], f1=0.7),
        fake_run("c", [0, 0, 1, 0], f1=0.6),
        fake_run("d", [1, 0, 0, 1], f1=0.25),
    ]
    doc = case_analysis(runs, k=3)
    # case 3 (medium): right by b (0.7) and d (0.25), wrong by a (0.9) and c (0.6): M1 0.475 < M0 0.75, negative;
    # case 2 (low): right by a, b, d: M1 (0.9+0.7+0.25)/3 = 0.617 > M0 0.6, positive
    negative = least_discriminating(doc, 10)
    assert [c["id"] for c in negative] == ["FCB-0004"]
    text = to_markdown(doc)
    assert "### Suspect labels: 1 case(s)" in text and "| FCB-0001 |" in text
    assert "### Negative discrimination: 1 case(s)" in text and "| FCB-0004 |" in text
    assert "(none)" not in text
    assert "... and" not in to_markdown(doc, top=1) and "... and" in to_markdown(doc, top=0)


def test_runs_that_cannot_be_analysed_together_are_refused(tmp_path: Path) -> None:
    good = [fake_run(n, [0, 0, 0, 0]) for n in "abc"]
    check_runs(good, 3)
    check_runs(good[:2], 2)  # two detectors are enough for --strongest 2
    other = fake_run("b", [0, 0, 0, 0], sha="b" * 64)
    with pytest.raises(IncomparableRuns) as refused:
        check_runs([good[0], other, good[2]], 3)
    assert str(refused.value) == (
        "the runs are on 2 different data sets (/runs/a: a.jsonl (sha256 aaaaaaaaaaaa); /runs/b: b.jsonl (sha256 "
        "bbbbbbbbbbbb)); case-level analysis compares detectors on the same cases: give runs of one data set"
    )
    short = fake_run("x", [0, 0, 0], complete=False)
    with pytest.raises(RunLoadError) as refused_run:
        check_runs([good[0], short, good[1], good[2]], 3)  # named: the run that differs from the first
    assert str(refused_run.value) == (
        "/runs/x: 3 of the data set's 4 cases, and 1 case(s) are in one of it and /runs/a (4 cases) alone; every run "
        "must hold the same cases, or a missing case would count as wrong (an interrupted run: fcb eval --resume "
        "/runs/x)"
    )
    limited = [fake_run(n, [0, 0, 0], complete=False) for n in "xyz"]
    check_runs(limited, 3)  # three runs stopped at the same cases: analysed on those
    assert case_analysis(limited)["summary"]["cases"] == 3
    with pytest.raises(UsageError) as twice:
        check_runs([*good, fake_run("a", [1, 1, 1, 1], path=Path("/runs/a2"))], 3)
    assert str(twice.value) == (
        "two runs of detector 'a' (/runs/a and /runs/a2); each run counts as one detector here: give one run per "
        "detector, or tell them apart with fcb eval --name"
    )
    with pytest.raises(RunLoadError, match=r"/runs/z: metrics\.json has no macro_f1: nothing to rank its detector by"):
        check_runs([*good, fake_run("z", [1, 1, 1, 1], f1=None)], 3)
    baseline = tmp_path / "main.json"
    baseline.write_text("{}")
    with pytest.raises(RunLoadError, match=r"main\.json: a baseline file; fcb cases reads run folders"):
        check_runs([*good, fake_run("q", [1, 1, 1, 1], path=baseline)], 3)
    with pytest.raises(
        UsageError, match=r"^2 run\(s\) given; case-level analysis needs at least --strongest \(3\) runs$"
    ):
        check_runs(good[:2], 3)
    with pytest.raises(UsageError, match=r"^--strongest 1: at least 2 \(one detector alone cannot make a suspect\)$"):
        check_runs(good, 1)
