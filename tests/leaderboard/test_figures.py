"""The figures a leaderboard checks against a run's journal (harness/leaderboard/figures.py), on outcomes made by
hand: every figure worked out in the comments from the labels and verdicts (issue 46: a wrong figure must fail a
test here, not only disagree with itself)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.errors import RunLoadError
from harness.leaderboard.figures import (
    TOLERANCE,
    check_figures,
    disagreements,
    item_figures,
    journal_figures,
    latency_figures,
    score_figures,
)

# four cases: (category, expected, predicted, origin); codes 0 low, 1 medium, 2 high, 3 an error
CATS = np.array(["a", "a", "b", "b"], dtype=object)
TRUE = np.array([0, 2, 2, 1])
PRED = np.array([0, 2, 0, 3])
ORIGINS = np.array(["natural", "assembled", "synthetic", "natural"], dtype=object)


def _macro_f1(y: list[int], p: list[int]) -> float:
    """F1 of each class 0..2 by counting (an error, 3, is a miss and never a prediction of a class), averaged."""
    f1 = []
    for k in range(3):
        tp = sum(1 for a, b in zip(y, p, strict=True) if a == k and b == k)
        predicted, actual = p.count(k), y.count(k)
        precision = tp / predicted if predicted else 0.0
        recall = tp / actual if actual else 0.0
        f1.append(2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    return sum(f1) / 3


def _quadratic_kappa(y: list[int], p: list[int]) -> float:
    """Cohen's kappa with weights (i - j)^2 over the answered cases: 1 - observed / chance disagreement."""
    pairs = [(a, b) for a, b in zip(y, p, strict=True) if b != 3]
    n = len(pairs)
    observed = sum((a - b) ** 2 for a, b in pairs) / n
    chance = sum((a - b) ** 2 for a, _ in pairs for _, b in pairs) / (n * n)
    return 1 - observed / chance


def test_the_headline_of_four_cases_by_hand() -> None:
    # confusion (rows expected, columns predicted low/medium/high/error):
    #   low    [1 0 0 0]   medium [0 0 0 1]   high [1 0 1 0]
    # accuracy 2/4; F1 low: P 1/2, R 1/1 -> 2/3; medium 0; high: P 1/1, R 1/2 -> 2/3; macro (2/3 + 0 + 2/3) / 3 = 4/9
    # high_risk_recall 1/2; false_alarm_rate 0/1; error_rate 1/4
    # quadratic kappa over the three answered: observed weighted disagreement 4 (high called low, weight 2^2);
    # rows [1 0 2], cols [2 0 1], n 3: expected (0,2) 1*1/3*4 = 4/3, (2,0) 2*2/3*4 = 16/3: 1 - 4 / (20/3) = 0.4
    got = journal_figures(CATS, TRUE, PRED, ORIGINS)
    assert got[("n_cases",)] == 4
    assert got[("confusion_matrix", "counts")] == [[1, 0, 0, 0], [0, 0, 0, 1], [1, 0, 1, 0]]
    assert got[("accuracy",)] == pytest.approx(0.5)
    assert got[("macro_f1",)] == pytest.approx(4 / 9)
    assert got[("high_risk_recall",)] == pytest.approx(0.5)
    assert got[("false_alarm_rate",)] == 0.0
    assert got[("error_rate",)] == pytest.approx(0.25)
    assert got[("weighted_kappa",)] == pytest.approx(0.4)
    # the same two figures again by brute-force loops over the cases (scikit-learn's definitions, without its import)
    assert got[("macro_f1",)] == pytest.approx(_macro_f1(TRUE.tolist(), PRED.tolist()))
    assert got[("weighted_kappa",)] == pytest.approx(_quadratic_kappa(TRUE.tolist(), PRED.tolist()))
    assert got[("operational", "cases")] == 4 and got[("operational", "errors")] == 1


def test_the_real_and_natural_headlines_keep_their_own_cases() -> None:
    # real (natural + assembled): cases 0, 1, 3: expected [0 2 1], predicted [0 2 error]: accuracy 2/3,
    # F1 low 1, medium 0, high 1 -> 2/3; recall of high 1/1; false alarms 0/1; errors 1/3;
    # kappa over (0,0) and (2,2): no weighted disagreement -> 1
    got = journal_figures(CATS, TRUE, PRED, ORIGINS)
    assert got[("headline_real", "n_cases")] == 3
    assert got[("headline_real", "accuracy")] == pytest.approx(2 / 3)
    assert got[("headline_real", "macro_f1")] == pytest.approx(2 / 3)
    assert got[("headline_real", "high_risk_recall")] == 1.0
    assert got[("headline_real", "false_alarm_rate")] == 0.0
    assert got[("headline_real", "error_rate")] == pytest.approx(1 / 3)
    assert got[("headline_real", "weighted_kappa")] == pytest.approx(1.0)
    # natural: cases 0 and 3: expected [0 1], predicted [0 error]: accuracy 1/2; F1 low 1, medium 0 -> 1/2;
    # no high case: recall undefined (None); one answered case: kappa undefined (0/0, None); errors 1/2
    assert got[("headline_natural", "n_cases")] == 2
    assert got[("headline_natural", "accuracy")] == pytest.approx(0.5)
    assert got[("headline_natural", "macro_f1")] == pytest.approx(0.5)
    assert got[("headline_natural", "high_risk_recall")] is None
    assert got[("headline_natural", "weighted_kappa")] is None
    assert got[("headline_natural", "false_alarm_rate")] == 0.0
    assert got[("headline_natural", "error_rate")] == pytest.approx(0.5)


def test_without_origins_the_real_headlines_are_empty() -> None:
    got = journal_figures(CATS, TRUE, PRED, None)
    assert got[("headline_real", "n_cases")] == 0 and got[("headline_natural", "n_cases")] == 0
    assert got[("headline_real", "accuracy")] is None and got[("headline_natural", "macro_f1")] is None
    assert got[("accuracy",)] == pytest.approx(0.5)  # the headline itself unchanged


def test_per_category_counts_and_spread_of_verdicts() -> None:
    # a: expected [low high], predicted [low high]: 2 of 2 right; one low, one high predicted
    # b: expected [high medium], predicted [low error]: 0 of 2; one low, one error
    got = journal_figures(CATS, TRUE, PRED, ORIGINS)
    cat = {path[1:]: v for path, v in got.items() if path[0] == "per_category"}
    assert cat == {
        ("a", "n"): 2, ("a", "correct"): 2, ("a", "accuracy"): 1.0,
        ("a", "predicted", "low"): 1, ("a", "predicted", "medium"): 0, ("a", "predicted", "high"): 1,
        ("a", "predicted", "error"): 0,
        ("b", "n"): 2, ("b", "correct"): 0, ("b", "accuracy"): 0.0,
        ("b", "predicted", "low"): 1, ("b", "predicted", "medium"): 0, ("b", "predicted", "high"): 0,
        ("b", "predicted", "error"): 1,
    }  # fmt: skip
    # one category of three cases, two right: 2/3, not 2/2 or 3/3
    one = journal_figures(np.array(["c"] * 3, dtype=object), np.array([1, 1, 2]), np.array([1, 1, 1]), None)
    assert one[("per_category", "c", "accuracy")] == pytest.approx(2 / 3)
    assert one[("per_category", "c", "correct")] == 2 and one[("per_category", "c", "n")] == 3


def test_a_verdict_code_beyond_error_is_refused_not_dropped() -> None:
    # codes are 0..3 (low, medium, high, error); a 4 would make a fifth column of the category's spread: refused
    # (zip strict) rather than silently leaving it out of the counts
    with pytest.raises(ValueError, match="zip"):
        journal_figures(np.array(["a"], dtype=object), np.array([0]), np.array([4]), None)


def test_score_figures_only_when_the_document_states_an_ece() -> None:
    y = np.array([2, 0, 0, 2])
    scores = np.array([0.9, 0.1, 0.5, np.nan])
    assert score_figures({"scores": {"calibration": {}}}, y, scores) == {}
    assert score_figures({}, y, scores) == {}
    # three scored; two bins [0, 0.5] and (0.5, 1]: upper 0.9 (y 1): 1 - 0.9 = 0.1; lower 0.1 and 0.5 (y 0):
    # |-0.1 - 0.5| = 0.6; ECE (0.1 + 0.6) / 3 = 7/30
    got = score_figures({"scores": {"calibration": {"bins": 2, "ece": 0.0}}}, y, scores)
    assert got[("scores", "n_scored")] == 3
    assert got[("scores", "calibration", "ece")] == pytest.approx(7 / 30)
    # no case scored: the document's scores block is contradicted as a whole
    none = score_figures({"scores": {"calibration": {"bins": 2}}}, y, np.full(4, np.nan))
    assert none == {("scores",): None}


def test_item_figures_spread_over_epochs_and_agreement() -> None:
    # expected [low medium high high]; epochs (columns): -1 = no item for that case and epoch
    y = np.array([0, 1, 2, 2])
    plain = np.array([[0, 0, 0], [1, 1, 0], [2, 2, 2], [2, -1, 2]])
    # epoch 1: all right: macro-F1 1. epoch 2: the three asked all right: 1 (the unasked case left out, not a miss).
    # epoch 3: predicted [0 0 2 2]: F1 low P 1/2 R 1 -> 2/3, medium 0, high 1: 5/9
    # sd (ddof 1) of [1, 1, 5/9]: mean 23/27, deviations 4/27 4/27 -8/27: sqrt((16 + 16 + 64) / 729 / 2) = 4 sqrt 3 / 27
    # all agree: over the cases with every epoch (0, 1, 2): case 0 yes, 1 no, 2 yes: 2/3
    got = item_figures({"epochs": {}}, y, plain, {})
    assert got[("epochs", "spread", "macro_f1", "sd")] == pytest.approx(4 * math.sqrt(3) / 27)
    assert got[("epochs", "self_agreement", "all_agree")] == pytest.approx(2 / 3)
    # without an epochs block, or with one epoch: nothing to check
    assert item_figures({}, y, plain, {}) == {}
    assert item_figures({"epochs": {}}, y, plain[:, :1], {}) == {}


def test_item_figures_undefined_spread_and_agreement() -> None:
    # epoch 2 asked nothing: its macro-F1 is undefined, so is the sd; no case has every epoch: agreement undefined
    y = np.array([0, 2])
    plain = np.array([[0, -1], [2, -1]])
    got = item_figures({"epochs": {}}, y, plain, {})
    assert got[("epochs", "spread", "macro_f1", "sd")] is None
    assert got[("epochs", "self_agreement", "all_agree")] is None
    # two epochs that agree on every case: sd 0 and agreement 1
    same = item_figures({"epochs": {}}, y, np.array([[0, 0], [1, 1]]), {})
    assert same[("epochs", "spread", "macro_f1", "sd")] == 0.0
    assert same[("epochs", "self_agreement", "all_agree")] == 1.0


def test_flip_rate_over_the_pairs_both_answered() -> None:
    # plain vs variant: same (counts, no flip), changed (a flip), no variant (-1, left out), plain errored (3, out),
    # variant errored (out): 1 flip in 2 pairs
    y = np.array([0, 1, 2, 0, 1])
    plain = np.array([[0], [1], [2], [3], [1]])
    table = np.array([[0], [2], [-1], [1], [3]])
    metrics = {"probes": {"order": {}}}
    got = item_figures(metrics, y, plain, {"names": table, "order": table})
    assert got == {("probes", "order", "flip_rate"): 0.5}  # names: not in the document, not checked (order still is)
    # no pair both answered: undefined
    none = item_figures(metrics, y, plain, {"order": np.full((5, 1), -1)})
    assert none == {("probes", "order", "flip_rate"): None}
    # plain missing (-1) on the only changed pair: 0 flips in 1 pair
    got = item_figures(metrics, np.array([0, 0]), np.array([[0], [-1]]), {"order": np.array([[0], [2]])})
    assert got == {("probes", "order", "flip_rate"): 0.0}


def test_the_fall_rates_of_inject_and_duplicate_over_the_labels_each_counts() -> None:
    # expected: low, medium, high, high, medium, high; two epochs (columns). plain and variant codes, -1 no item,
    # 3 an error. A pair counts where both answered and the plain verdict is above low; a fall: variant < plain.
    y = np.array([0, 1, 2, 2, 1, 2])
    plain = np.array([[2, 2], [1, 2], [2, 0], [2, 1], [3, 1], [2, -1]])
    table = np.array([[0, 0], [0, 2], [1, 2], [2, 0], [0, 0], [0, 0]])
    metrics = {"probes": {"inject": {}, "duplicate": {}}}
    got = item_figures(metrics, y, plain, {"inject": table, "duplicate": table})
    # inject (labels medium and high): case 0 is low, never counted. case 1: (1 -> 0) a fall, (2 -> 2) none;
    # case 2: (2 -> 1) a fall, (0 -> 2) plain low, not counted; case 3: (2 -> 2) none, (1 -> 0) a fall;
    # case 4: plain an error, left out; (1 -> 0) a fall; case 5: (2 -> 0) a fall, epoch 2 no plain item
    # counted: 2 + 1 + 2 + 1 + 1 = 7 pairs, falls 1 + 1 + 1 + 1 + 1 = 5
    assert got[("probes", "inject", "falls", "fall_rate")] == pytest.approx(5 / 7)
    # duplicate (label high only): cases 2, 3 and 5: counted 1 + 2 + 1 = 4, falls 1 + 1 + 1 = 3
    assert got[("probes", "duplicate", "falls", "fall_rate")] == pytest.approx(3 / 4)
    # the flip rates beside them, over every answered pair: 2 + 2 + 2 + 2 + 1 + 1 = 10 pairs; flips: case 0 x2,
    # 1 (e1), 2 x2, 3 (e2), 4 (e2), 5 (e1) = 8
    assert got[("probes", "inject", "flip_rate")] == pytest.approx(8 / 10)
    # a probe that may not lower has no fall rate; none counted: undefined
    assert ("probes", "order", "falls", "fall_rate") not in item_figures({"probes": {"order": {}}}, y, plain,
                                                                        {"order": table})  # fmt: skip
    low = item_figures({"probes": {"inject": {}}}, np.array([0]), np.array([[2]]), {"inject": np.array([[0]])})
    assert low[("probes", "inject", "falls", "fall_rate")] is None


def test_latency_percentiles_by_hand() -> None:
    # five latencies 1..5; linear interpolation at q/100 * 4: p50 index 2 -> 3; p90 3.6 -> 4.6; p95 3.8 -> 4.8;
    # p99 3.96 -> 4.96
    got = latency_figures(np.array([5.0, 1.0, 4.0, 2.0, 3.0]))
    assert got == pytest.approx({
        ("operational", "latency_s", "p50"): 3.0,
        ("operational", "latency_s", "p90"): 4.6,
        ("operational", "latency_s", "p95"): 4.8,
        ("operational", "latency_s", "p99"): 4.96,
    })  # fmt: skip
    assert latency_figures(np.array([], dtype=float)) == {("operational", "latency_s"): {}}


def test_a_figure_agrees_within_the_tolerance_and_no_further() -> None:
    assert TOLERANCE == 1e-9
    x = 0.5
    assert list(disagreements({"accuracy": x * (1 + 0.5e-9)}, {("accuracy",): x})) == []
    assert list(disagreements({"accuracy": x * (1 - 0.5e-9)}, {("accuracy",): x})) == []
    assert list(disagreements({"accuracy": x * (1 + 3e-9)}, {("accuracy",): x})) == [("accuracy", x * (1 + 3e-9), x)]
    # near zero the absolute tolerance: 5e-10 agrees with 0.0, 3e-9 does not
    assert list(disagreements({"false_alarm_rate": 5e-10}, {("false_alarm_rate",): 0.0})) == []
    assert list(disagreements({"false_alarm_rate": -5e-10}, {("false_alarm_rate",): 0.0})) == []
    assert len(list(disagreements({"false_alarm_rate": 3e-9}, {("false_alarm_rate",): 0.0}))) == 1
    # an integer claim of a float figure is compared as a number: 1 == 1.0
    assert list(disagreements({"accuracy": 1}, {("accuracy",): 1.0})) == []


def test_a_boolean_is_never_a_figure() -> None:
    # True == 1 and True == 1.0 in Python: a document must not pass a count or a rate off as a boolean
    assert list(disagreements({"accuracy": True}, {("accuracy",): 1.0})) == [("accuracy", True, 1.0)]
    assert list(disagreements({"n_cases": True}, {("n_cases",): 1})) == [("n_cases", True, 1)]
    assert list(disagreements({"n_cases": 1}, {("n_cases",): 1})) == []
    assert list(disagreements({"n_cases": 2}, {("n_cases",): 1})) == [("n_cases", 2, 1)]
    # None against None (an undefined figure) agrees; a number against None does not
    assert list(disagreements({"weighted_kappa": None}, {("weighted_kappa",): None})) == []
    assert list(disagreements({"weighted_kappa": 0.0}, {("weighted_kappa",): None})) == [("weighted_kappa", 0.0, None)]
    assert list(disagreements({"weighted_kappa": None}, {("weighted_kappa",): 0.2})) == [("weighted_kappa", None, 0.2)]


def test_missing_figures_and_optional_blocks() -> None:
    figures = {
        ("n_cases",): 4,
        ("error_rate",): 0.25,
        ("headline_real", "accuracy"): 0.5,
        ("headline_natural", "accuracy"): 0.5,
        ("per_category", "a", "n"): 2,
        ("operational", "latency_s", "p50"): 1.0,
    }
    # error_rate absent (older documents) and no headline_real/natural block: not asked for; a missing n_cases and a
    # missing nested figure are named, dotted
    metrics = {"per_category": {"a": {}}, "operational": {"latency_s": 3}}
    assert list(disagreements(metrics, figures)) == [
        ("n_cases", "(missing)", 4),
        ("operational.latency_s.p50", "(missing)", 1.0),
    ]
    # a headline_real block that is there is read: its figures are checked
    metrics = {"n_cases": 4, "headline_real": {"accuracy": 0.75}, "headline_natural": {},
               "per_category": {"a": {"n": 2}}, "operational": {"latency_s": {"p50": 1.0}}}  # fmt: skip
    assert list(disagreements(metrics, figures)) == [
        ("headline_real.accuracy", 0.75, 0.5),
        ("headline_natural.accuracy", "(missing)", 0.5),
    ]
    # a stated error_rate is checked
    metrics |= {"error_rate": 0.5, "headline_real": {"accuracy": 0.5}, "headline_natural": {"accuracy": 0.5}}
    assert list(disagreements(metrics, figures)) == [("error_rate", 0.5, 0.25)]


def test_the_categories_must_be_the_same_ones() -> None:
    figures = {("per_category", "a", "n"): 2, ("per_category", "b", "n"): 1}
    extra = {"per_category": {"a": {"n": 2}, "b": {"n": 1}, "c": {"n": 0}}}
    assert list(disagreements(extra, figures)) == [("per_category", ["a", "b", "c"], ["a", "b"])]
    # a category the document lacks: named once as a set, its figures not named again one by one
    fewer = {"per_category": {"b": {"n": 1}}}
    assert list(disagreements(fewer, figures)) == [("per_category", ["b"], ["a", "b"])]
    same = {"per_category": {"b": {"n": 1}, "a": {"n": 2}}}
    assert list(disagreements(same, figures)) == []
    # a category name with a dot is one key, never a path
    dotted = {("per_category", "x.y", "n"): 1}
    assert list(disagreements({"per_category": {"x.y": {"n": 1}}}, dotted)) == []
    assert list(disagreements({"per_category": {"x.y": {"n": 2}}}, dotted)) == [("per_category.x.y.n", 2, 1)]


def test_check_figures_names_the_file_the_figure_and_both_values() -> None:
    figures = {("n_cases",): 4, ("accuracy",): 0.5}
    check_figures("r/metrics.json: metrics", "its journal", {"n_cases": 4, "accuracy": 0.5}, figures)  # agrees
    with pytest.raises(RunLoadError) as raised:
        check_figures("r/metrics.json: metrics", "its journal (p.jsonl)", {"n_cases": 5, "accuracy": 0.9}, figures,
                      " (a hint)")  # fmt: skip
    assert str(raised.value) == (
        "r/metrics.json: metrics.n_cases: 5, but its journal (p.jsonl) gives 4; refusing a run whose figures do not "
        "follow from its cases (a hint)"
    )
    with pytest.raises(RunLoadError) as raised:
        check_figures("b.json: doc.metrics", "its cases", {"n_cases": 4}, figures)
    assert str(raised.value) == (
        "b.json: doc.metrics.accuracy: '(missing)', but its cases gives 0.5; refusing a run whose figures do not "
        "follow from its cases"
    )


def test_operating_figures_from_the_verdicts_and_scores() -> None:
    from harness.leaderboard.figures import operating_figures

    y = np.array([2, 2, 0, 1])
    p = np.array([2, 1, 2, 3])  # the error (case 4) is never escalated
    s = np.array([0.9, 0.4, 0.8, np.nan])
    got = operating_figures({"operating_points": {}}, y, p, s)
    # high: cases 1 and 3 escalated (2 of 4); of the highs (1, 2) case 1 caught; of the low (3) escalated
    assert got[("operating_points", "policies", "high", "escalation_rate")] == 0.5
    assert got[("operating_points", "policies", "high", "false_consensus_caught")] == 0.5
    assert got[("operating_points", "policies", "high", "right_consensus_escalated")] == 1.0
    # medium or high: 1, 2, 3 (3 of 4); both highs caught
    assert got[("operating_points", "policies", "high_or_medium", "escalation_rate")] == 0.75
    assert got[("operating_points", "policies", "high_or_medium", "false_consensus_caught")] == 1.0
    # AURC: let through case 4 (unscored, medium: risk 0), 2 (0.4, high: 1/2), 3 (0.8, low: 1/3), 1 (0.9: 2/4)
    assert got[("operating_points", "risk_coverage", "aurc")] == pytest.approx(0.25 * (0 + 1 / 2 + 1 / 3 + 2 / 4))
    # a baseline file (no scores): no AURC; a document without the block: nothing checked
    assert ("operating_points", "risk_coverage", "aurc") not in operating_figures({"operating_points": {}}, y, p, None)
    assert operating_figures({}, y, p, s) == {}
