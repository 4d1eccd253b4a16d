"""``fcb compare`` (harness/leaderboard/compare.py) on figures and runs made by hand: each metric's delta, interval,
one-sided p and regression verdict, with the boundaries of the gate (a drop of exactly max_drop, an interval that
ends exactly at zero, p exactly at alpha) and the direction of each metric, worked out in the comments (issue 46: no
unit test called the comparison)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.errors import IncomparableRuns
from harness.leaderboard.calibration_delta import ece_delta
from harness.leaderboard.compare import (
    aligned_epochs,
    apply_holm,
    can_change,
    category_deltas,
    compare_runs,
    deltas,
    flipped,
    gate_block,
    gated_metrics,
    metric_deltas,
    statement,
)
from harness.leaderboard.noise import POOLED, hierarchical_headline, holm, regression_p
from harness.leaderboard.runs import Run
from harness.metrics import ERROR, HEADLINE_METRICS, finite_interval, paired_headline

NAMES = list(HEADLINE_METRICS)


def figures(
    points: dict[str, tuple[float, float]] | None = None, changes: dict[str, list[float]] | None = None, n: int = 5
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """`Figures` by hand: each metric's point values (base, new), default (0.5, 0.5), and its resampled changes
    (new - base; base 0 in every resample), default n zeros."""
    points, changes = points or {}, changes or {}
    point = {name: np.array(points.get(name, (0.5, 0.5)), dtype=float) for name in NAMES}
    boot = {}
    for name in NAMES:
        change = np.array(changes.get(name, [0.0] * n), dtype=float)
        boot[name] = np.stack([np.zeros_like(change), change])
    return point, boot


# --- deltas: one metric alone -------------------------------------------------------------------------------------


def test_a_drop_whose_interval_excludes_zero_is_a_regression() -> None:
    # accuracy 0.8 -> 0.7: delta -0.1, worse by 0.1 > max_drop 0.01. Resampled changes -0.4 .. 0.0; alpha 0.5: the
    # 25th and 75th percentiles (indices 1 and 3 of 5): [-0.3, -0.1], below zero: significant.
    # p: the share of resamples without a worsening (change >= 0): 1 of 5 = 0.2
    got = deltas(
        figures({"accuracy": (0.8, 0.7)}, {"accuracy": [0.0, -0.1, -0.2, -0.3, -0.4]}), alpha=0.5, max_drop=0.01
    )["accuracy"]
    assert got["base"] == 0.8 and got["new"] == 0.7
    assert got["delta"] == pytest.approx(-0.1)
    assert got["ci"] == pytest.approx([-0.3, -0.1])
    assert got["higher_is_better"] is True
    assert got["p"] == pytest.approx(0.2)
    assert got["p_holm"] is None
    assert got["regression"] is True


def test_an_interval_that_ends_exactly_at_zero_is_not_significant() -> None:
    # changes -0.3 .. 0.1, alpha 0.5: [-0.2, 0.0]: the upper end is 0, not below it: no regression
    change = [-0.3, -0.2, -0.1, 0.0, 0.1]
    got = deltas(figures({"accuracy": (0.8, 0.6)}, {"accuracy": change}), alpha=0.5, max_drop=0.01)["accuracy"]
    assert got["ci"] == pytest.approx([-0.2, 0.0]) and got["regression"] is False
    # one step lower: [-0.2 - 1e-9, -1e-9]: significant
    lower = [c - 1e-9 for c in change]
    got = deltas(figures({"accuracy": (0.8, 0.6)}, {"accuracy": lower}), alpha=0.5, max_drop=0.01)["accuracy"]
    assert got["regression"] is True


def test_a_drop_of_exactly_max_drop_is_allowed() -> None:
    # 0.5 -> 0.25: worse by exactly 0.25 (both exact in binary); significant everywhere (every change -0.25)
    fig = figures({"macro_f1": (0.5, 0.25)}, {"macro_f1": [-0.25] * 5})
    assert deltas(fig, alpha=0.05, max_drop=0.25)["macro_f1"]["regression"] is False
    assert deltas(fig, alpha=0.05, max_drop=0.2499)["macro_f1"]["regression"] is True
    # a significant gain is never a regression, whatever max_drop
    up = figures({"macro_f1": (0.25, 0.5)}, {"macro_f1": [0.25] * 5})
    assert deltas(up, alpha=0.05, max_drop=-1.0)["macro_f1"]["regression"] is False


def test_lower_is_better_metrics_regress_upward() -> None:
    # false_alarm_rate 0.1 -> 0.3: worse by 0.2; changes 0.1 .. 0.5, alpha 0.5: [0.2, 0.4] above zero: significant.
    # p: resamples without a worsening (change <= 0): none -> 0.0
    fig = figures({"false_alarm_rate": (0.1, 0.3)}, {"false_alarm_rate": [0.1, 0.2, 0.3, 0.4, 0.5]})
    got = deltas(fig, alpha=0.5, max_drop=0.01)["false_alarm_rate"]
    assert got["higher_is_better"] is False
    assert got["delta"] == pytest.approx(0.2) and got["ci"] == pytest.approx([0.2, 0.4])
    assert got["p"] == 0.0 and got["regression"] is True
    # the lower end exactly at zero: [0.0, 0.2] is not significant
    fig = figures({"error_rate": (0.1, 0.3)}, {"error_rate": [-0.1, 0.0, 0.1, 0.2, 0.3]})
    got = deltas(fig, alpha=0.5, max_drop=0.01)["error_rate"]
    assert got["ci"] == pytest.approx([0.0, 0.2]) and got["regression"] is False
    assert got["p"] == pytest.approx(2 / 5)  # -0.1 and 0.0: no worsening
    # a fall of a lower-is-better metric is a gain: interval below zero, never a regression; p: all 5 without
    fig = figures({"error_rate": (0.3, 0.1)}, {"error_rate": [-0.1, -0.2, -0.3, -0.2, -0.1]})
    got = deltas(fig, alpha=0.5, max_drop=0.01)["error_rate"]
    assert got["regression"] is False and got["p"] == 1.0


def test_higher_is_better_p_counts_the_resamples_without_a_fall() -> None:
    # kappa: changes [-0.2, -0.1, 0.0, 0.1, 0.2]: without a fall (change >= 0): 3 of 5
    fig = figures({"weighted_kappa": (0.5, 0.4)}, {"weighted_kappa": [-0.2, -0.1, 0.0, 0.1, 0.2]})
    got = deltas(fig, alpha=0.05, max_drop=0.01)["weighted_kappa"]
    assert got["p"] == pytest.approx(3 / 5)
    # alpha 0.05 over 5 values: percentiles 2.5 and 97.5 by linear interpolation: -0.2 + 0.1 * 4 * 0.025 = -0.19,
    # and 0.19
    assert got["ci"] == pytest.approx([-0.19, 0.19])


def test_an_undefined_figure_has_no_delta_no_p_and_no_regression() -> None:
    # high_risk_recall undefined in the new run (no high case answered...): NaN point
    fig = figures({"high_risk_recall": (0.9, float("nan"))}, {"high_risk_recall": [float("nan")] * 5})
    got = deltas(fig, alpha=0.05, max_drop=0.01)["high_risk_recall"]
    assert got["base"] == 0.9 and got["new"] is None and got["delta"] is None
    assert got["ci"] is None and got["p"] is None and got["regression"] is False
    fig = figures({"high_risk_recall": (float("nan"), 0.2)}, {"high_risk_recall": [-0.5] * 5})
    got = deltas(fig, alpha=0.05, max_drop=0.01)["high_risk_recall"]
    assert got["base"] is None and got["new"] == 0.2 and got["delta"] is None
    assert got["p"] is None and got["regression"] is False
    assert got["ci"] == [-0.5, -0.5]  # the interval stands on its own resamples


def test_metric_deltas_is_the_paired_bootstrap_over_cases() -> None:
    # expected [low high high medium]; base all right; new calls c2 low: accuracy 1 -> 3/4
    y, base, new = np.array([0, 2, 2, 1]), np.array([0, 2, 2, 1]), np.array([0, 0, 2, 1])
    got = metric_deltas(y, base, new, alpha=0.1, max_drop=0.01, n_boot=200, seed=3)
    assert (got["accuracy"]["base"], got["accuracy"]["new"]) == (1.0, 0.75)
    _, boots = paired_headline(y, [base, new], n_boot=200, seed=3)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert got["accuracy"]["ci"] == pytest.approx(list(finite_interval(change, 0.1)))  # type: ignore[arg-type]
    assert got["accuracy"]["p"] == pytest.approx(regression_p(-change))


# --- the gate of metrics together ---------------------------------------------------------------------------------


def test_can_change_needs_some_finite_nonzero_change() -> None:
    assert can_change(figures(changes={"accuracy": [0.0, 0.0, 0.0]}), "accuracy") is False
    assert can_change(figures(changes={"accuracy": [0.0, 0.0, 0.1]}), "accuracy") is True
    assert can_change(figures(changes={"accuracy": [-0.1, 0.0, 0.0]}), "accuracy") is True
    assert can_change(figures(changes={"accuracy": [float("nan")] * 3}), "accuracy") is False
    assert can_change(figures(changes={"accuracy": [float("nan"), 0.0]}), "accuracy") is False
    assert can_change(figures(changes={"accuracy": [float("nan"), 0.2]}), "accuracy") is True
    assert can_change(figures(changes={"accuracy": []}), "accuracy") is False


def _metric(p: float | None, delta: float | None, higher_is_better: bool = True) -> dict:
    return {"base": 0.5, "new": None if delta is None else 0.5 + delta, "delta": delta, "ci": None,
            "higher_is_better": higher_is_better, "p": p, "p_holm": None, "regression": True}  # fmt: skip


def test_holm_p_exactly_at_alpha_is_not_a_regression() -> None:
    # one metric in the family: its adjusted p is its own. p .05 at alpha .05: not below: pass; .0499: fail
    for p, regression in ((0.05, False), (0.0499, True), (0.0501, False)):
        metrics = {"accuracy": _metric(p, -0.1)}
        apply_holm(metrics, ["accuracy"], alpha=0.05, max_drop=0.01)
        assert metrics["accuracy"]["p_holm"] == pytest.approx(p)
        assert metrics["accuracy"]["regression"] is regression, p
    # two in the family: .02 -> 2 * .02 = .04 < .05 fails; .03 -> .06 passes although .03 < .05 alone
    metrics = {"accuracy": _metric(0.02, -0.1), "macro_f1": _metric(0.5, -0.1)}
    apply_holm(metrics, ["accuracy", "macro_f1"], alpha=0.05, max_drop=0.01)
    assert metrics["accuracy"]["p_holm"] == pytest.approx(0.04) and metrics["accuracy"]["regression"] is True
    metrics = {"accuracy": _metric(0.03, -0.1), "macro_f1": _metric(0.5, -0.1)}
    apply_holm(metrics, ["accuracy", "macro_f1"], alpha=0.05, max_drop=0.01)
    assert metrics["accuracy"]["p_holm"] == pytest.approx(0.06) and metrics["accuracy"]["regression"] is False
    assert metrics["macro_f1"]["p_holm"] == pytest.approx(0.5)


def test_holm_worse_by_exactly_max_drop_and_the_direction() -> None:
    # accuracy down 0.25 with max_drop 0.25: not more than it
    metrics = {"accuracy": _metric(0.0, -0.25), "error_rate": _metric(0.0, 0.25, higher_is_better=False)}
    apply_holm(metrics, ["accuracy", "error_rate"], alpha=0.05, max_drop=0.25)
    assert [m["regression"] for m in metrics.values()] == [False, False]
    apply_holm(metrics, ["accuracy", "error_rate"], alpha=0.05, max_drop=0.2499)
    assert [m["regression"] for m in metrics.values()] == [True, True]
    # the other way round each is a gain: never a regression, however small its p
    metrics = {"accuracy": _metric(0.0, 0.25), "error_rate": _metric(0.0, -0.25, higher_is_better=False)}
    apply_holm(metrics, ["accuracy", "error_rate"], alpha=0.05, max_drop=0.0)
    assert [m["regression"] for m in metrics.values()] == [False, False]


def test_holm_leaves_out_undefined_p_and_deltas() -> None:
    # macro_f1 has no p (undefined): not in the family Holm counts, so accuracy's .03 stays .03 (m = 1)
    metrics = {"accuracy": _metric(0.03, -0.1), "macro_f1": _metric(None, -0.1), "weighted_kappa": _metric(0.0, None)}
    apply_holm(metrics, ["accuracy", "macro_f1"], alpha=0.05, max_drop=0.01)
    assert metrics["accuracy"]["p_holm"] == pytest.approx(0.03) and metrics["accuracy"]["regression"] is True
    assert metrics["macro_f1"]["p_holm"] is None and metrics["macro_f1"]["regression"] is False
    # outside the family: no adjusted p and no regression (it was True before the gate)
    assert metrics["weighted_kappa"]["p_holm"] is None and metrics["weighted_kappa"]["regression"] is False
    # a delta that is undefined with a p in the family: no regression
    metrics = {"accuracy": _metric(0.0, None)}
    apply_holm(metrics, ["accuracy"], alpha=0.05, max_drop=0.01)
    assert metrics["accuracy"]["p_holm"] == 0.0 and metrics["accuracy"]["regression"] is False


# --- the words of the gate ----------------------------------------------------------------------------------------


class _Side:
    def __init__(self, n_epochs: int, reducer: str = "mode") -> None:
        self.n_epochs, self.reducer = n_epochs, reducer


def test_gate_blocks_of_the_three_methods() -> None:
    paired = gate_block(_Side(1), _Side(3, "first"), "paired", ["accuracy"])  # type: ignore[arg-type]
    assert paired == {
        "method": "paired",
        "figures": "case verdicts",
        "epochs": {"base": 1, "new": 3},
        "reducers": ["mode", "first"],
        "multiple_testing": "none",
        "family": [],
        "noise_separated": False,
        "statement": "",
    }
    hier = gate_block(_Side(2), _Side(2), "hierarchical", ["accuracy", "macro_f1"])  # type: ignore[arg-type]
    assert hier["figures"] == "epoch verdicts" and hier["multiple_testing"] == "holm"
    assert hier["family"] == ["accuracy", "macro_f1"] and hier["noise_separated"] is True
    one = gate_block(_Side(1), _Side(1), "probe-pairs", ["accuracy"])  # type: ignore[arg-type]
    assert one["figures"] == "pairs" and one["multiple_testing"] == "holm" and one["family"] == ["accuracy"]
    assert one["noise_separated"] is False  # one epoch: the probe's pairs cannot separate noise
    two = gate_block(_Side(2), _Side(2), "probe-pairs", [])  # type: ignore[arg-type]
    assert two["noise_separated"] is True


def test_the_statement_of_a_one_epoch_gate() -> None:
    gate = gate_block(_Side(1), _Side(2), "paired", [])  # type: ignore[arg-type]
    assert statement(gate, 0.05, 2000, 0) == (
        "A headline metric counts as a regression when it gets worse by more than max_drop and the paired-bootstrap "
        "95% interval of the change excludes zero (2000 resamples of the cases, seed 0); each metric is tested "
        "alone. The runs asked each case 1 and 2 time(s): with one epoch this comparison cannot tell the detector's "
        "own noise from a change (run both with fcb eval --epochs N, N >= 2, for a gate that can)."
    )
    gate["noise_separated"] = True  # (never so for the paired method; the sentence about epochs goes with it)
    assert statement(gate, 0.1, 50, 7).endswith("(50 resamples of the cases, seed 7); each metric is tested alone.")
    assert "paired-bootstrap 90% interval" in statement(gate, 0.1, 50, 7)


def test_the_statement_of_a_holm_gate() -> None:
    gate = gate_block(_Side(2), _Side(2), "hierarchical", ["accuracy", "macro_f1"])  # type: ignore[arg-type]
    assert statement(gate, 0.05, 300, 2) == (
        "A headline metric counts as a regression when it gets worse by more than max_drop and its Holm-adjusted "
        "one-sided bootstrap p-value is below alpha = 0.05: Holm's step-down over the 2 metrics gated together "
        "(accuracy, macro_f1), so that a pair of runs of identical code fails the gate with a chance of at most alpha "
        "overall. The bootstrap (300 resamples, seed 2): the cases drawn with replacement, then each drawn case's "
        "epochs drawn with replacement in each run, so that the detector's own randomness enters the interval; base "
        "and new are each figure over every (case, epoch) verdict (the confusion matrix summed over the epochs), not "
        "the runs' headlines on reduced verdicts. The interval shown is the 95% percentile interval of the change."
    )
    probe = gate_block(_Side(1), _Side(1), "probe-pairs", [])  # type: ignore[arg-type]
    assert statement(probe, 0.2, 10, 1) == (
        "A headline metric counts as a regression when it gets worse by more than max_drop and its Holm-adjusted "
        "one-sided bootstrap p-value is below alpha = 0.2: Holm's step-down over the 0 metrics gated together "
        "(none), so that a detector the probe does not change fails the gate with a chance of at most alpha overall. "
        "The bootstrap (10 resamples, seed 1): (case, epoch) pairs of one run, the plain verdict against the "
        "variant's, resampled by case with a case's epochs kept together. The interval shown is the 80% percentile "
        "interval of the change."
    )


# --- per category, flipped cases, epochs on the common case list ---------------------------------------------------


def test_category_deltas_by_hand() -> None:
    # a: cases 0, 1, 2 (base right 3 of 3, new 1 of 3): 1 -> 1/3; b: case 3 (base wrong, new right): 0 -> 1
    cats = np.array(["a", "a", "a", "b"], dtype=object)
    y = np.array([0, 1, 2, 2])
    got = category_deltas(cats, y, np.array([0, 1, 2, 0]), np.array([0, 0, 0, 2]))
    assert list(got) == ["a", "b"]
    assert got["a"] == pytest.approx({"n": 3, "base": 1.0, "new": 1 / 3, "delta": -2 / 3})
    assert got["b"] == {"n": 1, "base": 0.0, "new": 1.0, "delta": 1.0}


def test_flipped_lists_both_ways_with_epochs_when_given() -> None:
    ids = np.array(["p", "q", "r", "s"], dtype=object)
    cats = np.array(["a", "b", "a", "b"], dtype=object)
    y = np.array([0, 1, 2, 2])
    base, new = np.array([0, 1, 0, 3]), np.array([1, 1, 2, 3])  # p right->wrong, q right both, r wrong->right, s
    got = flipped(ids, cats, y, base, new)
    assert got == {"right_to_wrong": [{"id": "p", "category": "a"}], "wrong_to_right": [{"id": "r", "category": "a"}]}
    got = flipped(ids, cats, y, base, new, np.array([4, 5, 6, 7]))
    assert got == {
        "right_to_wrong": [{"id": "p", "category": "a", "epoch": 4}],
        "wrong_to_right": [{"id": "r", "category": "a", "epoch": 6}],
    }


def _run(
    ids: list[str],
    y_true: list[int],
    y_pred: list[int],
    *,
    epochs: list[list[int]] | None = None,
    sha: str = "f" * 64,
    name: str = "a",
    origins: list[str] | None = None,
    scores: list[float] | None = None,
    calibration: dict | None = None,
) -> Run:
    doc = {
        "detector": {"spec": f"pkg:{name}", "label": name},
        "dataset": {"name": "toy", "sha256": sha, "cases": len(ids)},
        "created": "2026-12-01T00:00:00Z",
        "complete": True,
        "metrics": {"scores": {"calibration": calibration}} if calibration else {},
    }
    cats = ["x" if i in ("c1", "c2") else "y" for i in ids]
    return Run(
        Path(f"runs/{name}"),
        doc,  # type: ignore[arg-type]
        np.array(ids, dtype=object),
        np.array(cats, dtype=object),
        np.array(y_true),
        np.array(y_pred),
        origins=None if origins is None else np.array(origins, dtype=object),
        scores=None if scores is None else np.array(scores, dtype=float),
        epochs=None if epochs is None else np.array(epochs),
    )


def test_aligned_epochs_puts_a_missing_case_as_an_error_in_every_epoch() -> None:
    r = _run(["c1", "c3"], [0, 2], [0, 2], epochs=[[0, 1], [2, 2]])
    got = aligned_epochs(r, np.array(["c1", "c2", "c3"], dtype=object))
    assert got.tolist() == [[0, 1], [ERROR, ERROR], [2, 2]]
    one = aligned_epochs(_run(["c2"], [1], [1]), np.array(["c1", "c2"], dtype=object))
    assert one.tolist() == [[ERROR], [1]]


# --- the whole comparison -----------------------------------------------------------------------------------------

IDS = ["c1", "c2", "c3", "c4"]
Y = [0, 2, 2, 1]  # low high high medium


def test_runs_on_different_data_sets_are_refused() -> None:
    with pytest.raises(IncomparableRuns) as raised:
        compare_runs(_run(IDS, Y, Y), _run(IDS, Y, Y, sha="0123456789abcdef" + "0" * 48, name="b"))
    assert str(raised.value) == (
        "runs/a and runs/b are on different data sets (sha256 ffffffffffff vs 0123456789ab); "
        "compare runs on the same cases"
    )


def test_one_epoch_comparison_by_hand() -> None:
    # base right everywhere; new calls c2 (high) low: accuracy 1 -> 3/4, high_risk_recall 1 -> 1/2,
    # macro-F1: low P 1/2 R 1 -> 2/3, medium 1, high P 1 R 1/2 -> 2/3: 7/9
    base, new = _run(IDS, Y, Y), _run(IDS, Y, [0, 0, 2, 1], name="b")
    doc = compare_runs(base, new, max_drop=0.01, alpha=0.05, n_boot=200, seed=5)
    m = doc["metrics"]
    assert (m["accuracy"]["base"], m["accuracy"]["new"], m["accuracy"]["delta"]) == (1.0, 0.75, -0.25)
    assert (m["high_risk_recall"]["new"], m["macro_f1"]["new"]) == pytest.approx((0.5, 7 / 9))
    # the interval and p of the paired bootstrap over the 4 cases (seeded), against paired_headline itself
    _, boots = paired_headline(np.array(Y), [np.array(Y), np.array([0, 0, 2, 1])], n_boot=200, seed=5)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert m["accuracy"]["ci"] == pytest.approx(list(finite_interval(change, 0.05)))  # type: ignore[arg-type]
    assert m["accuracy"]["p"] == pytest.approx(regression_p(-change))
    assert all(v["p_holm"] is None for v in m.values())  # one epoch: each metric alone, no Holm
    # some resamples miss c2 (change 0): the 95% interval reaches 0 and no metric regresses
    assert m["accuracy"]["ci"][1] == 0.0 and doc["regression"] is False  # type: ignore[index]
    assert doc["gate"]["method"] == "paired" and doc["gate"]["family"] == []
    assert doc["gate"]["statement"].startswith("A headline metric counts as a regression when it gets worse by")
    assert (
        "paired-bootstrap 95% interval of the change excludes zero (200 resamples of the cases, seed 5)"
        in (doc["gate"]["statement"])
    )
    assert doc["dataset"] == {"name": "toy", "sha256": "f" * 64, "cases": 4}
    assert doc["settings"] == {"max_drop": 0.01, "alpha": 0.05, "bootstrap_resamples": 200, "seed": 5}
    assert doc["base"] == {"path": "runs/a", "detector": "a", "spec": "pkg:a", "created": "2026-12-01T00:00:00Z"}
    assert doc["new"] == {"path": "runs/b", "detector": "b", "spec": "pkg:b", "created": "2026-12-01T00:00:00Z"}
    assert doc["per_category"]["x"] == {"n": 2, "base": 1.0, "new": 0.5, "delta": -0.5}
    assert doc["flipped"] == {"right_to_wrong": [{"id": "c2", "category": "x"}], "wrong_to_right": []}
    assert "ece" not in doc


def test_every_case_wrong_is_a_significant_regression() -> None:
    # new wrong on every case: every resample's accuracy change is -1: interval [-1, -1], significant
    base, new = _run(IDS, Y, Y), _run(IDS, Y, [1, 0, 0, 2], name="b")
    doc = compare_runs(base, new, n_boot=100)
    assert doc["metrics"]["accuracy"]["ci"] == [-1.0, -1.0]
    assert doc["metrics"]["accuracy"]["regression"] is True and doc["regression"] is True
    # the same drop with max_drop 1: accuracy (exactly 1) passes
    assert compare_runs(base, new, max_drop=1.0, n_boot=100)["metrics"]["accuracy"]["regression"] is False
    # and the improvement the other way passes
    assert compare_runs(new, base, n_boot=100)["metrics"]["accuracy"]["regression"] is False


def test_a_case_one_run_did_not_finish_counts_as_its_error() -> None:
    # new has no line for c4: an error there; error_rate 0 -> 1/4, accuracy 1 -> 3/4
    base, new = _run(IDS, Y, Y), _run(IDS[:3], Y[:3], Y[:3], name="b")
    m = compare_runs(base, new, n_boot=50)["metrics"]
    assert (m["error_rate"]["base"], m["error_rate"]["new"]) == (0.0, 0.25)
    assert m["accuracy"]["new"] == 0.75


def test_runs_with_epochs_are_compared_on_every_epoch_verdict_with_holm() -> None:
    # base: c3 answered high then medium: 7 of 8 epoch verdicts right; new: c1 low then medium, c2 high then low:
    # 6 of 8. Pooled over the epochs: accuracy 7/8 -> 6/8, delta -1/8. (Reduced by the mode, a tie going to the
    # first epoch, both runs would be right on every case: 1 -> 1; the gate does not read the reduced verdicts.)
    base = _run(IDS, Y, Y, epochs=[[0, 0], [2, 2], [2, 1], [1, 1]])
    new = _run(IDS, Y, Y, epochs=[[0, 1], [2, 0], [2, 2], [1, 1]], name="b")
    doc = compare_runs(base, new, alpha=0.1, n_boot=200, seed=1)
    acc = doc["metrics"]["accuracy"]
    assert (acc["base"], acc["new"], acc["delta"]) == (7 / 8, 6 / 8, -1 / 8)
    assert doc["gate"]["method"] == "hierarchical" and doc["gate"]["multiple_testing"] == "holm"
    # c1, the one low case, is never called high: false_alarm_rate cannot change, error_rate neither (no errors)
    assert doc["gate"]["family"] == ["accuracy", "macro_f1", "weighted_kappa", "high_risk_recall"]
    assert doc["gate"]["epochs"] == {"base": 2, "new": 2} and doc["gate"]["noise_separated"] is True
    # the interval and p against the hierarchical bootstrap itself, pooled, on the same seed
    epoch_sets = [np.array([[0, 0], [2, 2], [2, 1], [1, 1]]), np.array([[0, 1], [2, 0], [2, 2], [1, 1]])]
    _, boots = hierarchical_headline(np.array(Y), epoch_sets, reducers=[POOLED, POOLED], n_boot=200, seed=1)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert acc["ci"] == pytest.approx(list(finite_interval(change, 0.1)))  # type: ignore[arg-type]
    assert acc["p"] == pytest.approx(regression_p(-change))
    p = {name: m["p"] for name, m in doc["metrics"].items() if name in doc["gate"]["family"]}
    assert acc["p_holm"] == pytest.approx(holm(p)["accuracy"])  # type: ignore[arg-type]
    assert doc["flipped"] == {"right_to_wrong": [], "wrong_to_right": []}  # the runs' own (reduced) verdicts agree
    assert "alpha = 0.1" in doc["gate"]["statement"] and "(200 resamples, seed 1)" in doc["gate"]["statement"]
    # one of the runs with one epoch: the paired one-epoch gate, on the reduced verdicts (accuracy 1 -> 1)
    single = compare_runs(base, _run(IDS, Y, Y, name="b"), n_boot=50)
    assert single["gate"]["method"] == "paired" and single["metrics"]["accuracy"]["delta"] == 0.0
    assert single["gate"]["epochs"] == {"base": 2, "new": 1}
    assert compare_runs(_run(IDS, Y, Y), new, n_boot=50)["gate"]["method"] == "paired"


def test_the_default_settings() -> None:
    doc = compare_runs(_run(IDS, Y, Y), _run(IDS, Y, [0, 0, 2, 1], name="b"))
    assert doc["settings"] == {"max_drop": 0.01, "alpha": 0.05, "bootstrap_resamples": 2000, "seed": 0}
    _, boots = paired_headline(np.array(Y), [np.array(Y), np.array([0, 0, 2, 1])], n_boot=2000, seed=0)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert doc["metrics"]["accuracy"]["ci"] == pytest.approx(list(finite_interval(change, 0.05)))  # type: ignore[arg-type]
    assert "(2000 resamples of the cases, seed 0)" in doc["gate"]["statement"]


def test_every_epoch_wrong_fails_the_holm_gate() -> None:
    # new wrong in every epoch of every case: every resample's change is -1 (p 0), Holm's adjusted p 0 < alpha
    base = _run(IDS, Y, Y, epochs=[[0, 0], [2, 2], [2, 2], [1, 1]])
    new = _run(IDS, Y, [1, 0, 0, 2], epochs=[[1, 1], [0, 0], [0, 0], [2, 2]], name="b")
    doc = compare_runs(base, new, n_boot=100)
    acc = doc["metrics"]["accuracy"]
    assert (acc["delta"], acc["p"], acc["p_holm"], acc["regression"]) == (-1.0, 0.0, 0.0, True)
    assert doc["regression"] is True
    assert compare_runs(base, new, max_drop=1.0, n_boot=100)["metrics"]["accuracy"]["regression"] is False


def test_the_real_cases_gate_beside_all_cases() -> None:
    # c1, c2 natural, c3 synthetic, c4 assembled; new calls c3 (synthetic) low: on the real cases nothing changes
    origins = ["natural", "natural", "synthetic", "assembled"]
    base = _run(IDS, Y, Y, origins=origins)
    new = _run(IDS, Y, [0, 2, 0, 1], name="b", origins=origins)
    doc = compare_runs(base, new, n_boot=100)
    real = doc["metrics"]["macro_f1_real"]
    assert (real["base"], real["new"], real["delta"]) == (1.0, 1.0, 0.0)
    assert doc["metrics"]["macro_f1"]["delta"] < 0
    # with epochs (a Holm gate): the real macro-F1 joins the family only when some resample can change it
    e_base = _run(IDS, Y, Y, origins=origins, epochs=[[0, 0], [2, 2], [2, 2], [1, 1]])
    e_new = _run(IDS, Y, Y, name="b", origins=origins, epochs=[[0, 0], [2, 2], [2, 0], [1, 1]])
    assert "macro_f1_real" not in compare_runs(e_base, e_new, n_boot=50)["gate"]["family"]
    e_new = _run(IDS, Y, Y, name="b", origins=origins, epochs=[[0, 0], [2, 0], [2, 2], [1, 1]])
    assert compare_runs(e_base, e_new, n_boot=50)["gate"]["family"][-1] == "macro_f1_real"


def test_gated_metrics_on_a_subset_without_real_cases() -> None:
    # every case synthetic: no real subset, no macro_f1_real
    calls: list[list[bool]] = []

    def fig(mask: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        calls.append(mask.tolist())
        return figures({"accuracy": (0.5, 0.25)}, {"accuracy": [-0.25] * 5})

    metrics, family = gated_metrics(fig, np.array(["x"] * 3), np.array(["synthetic"] * 3), alpha=0.05, max_drop=0.0)
    assert "macro_f1_real" not in metrics and family == ["accuracy"] and calls == [[True, True, True]]
    calls.clear()
    metrics, family = gated_metrics(fig, np.array(["x"] * 3), np.array(["natural", "synthetic", "assembled"]),
                                    alpha=0.05, max_drop=0.0)  # fmt: skip
    assert calls == [[True, True, True], [True, False, True]]  # all cases, then the real ones
    assert metrics["macro_f1_real"]["delta"] == 0.0 and family == ["accuracy"]  # macro_f1 cannot change
    assert metrics["accuracy"]["regression"] is True  # 0.25 > 0.0, interval [-0.25, -0.25]
    assert gated_metrics(fig, np.array(["x"] * 2), None, alpha=0.05, max_drop=0.0)[1] == ["accuracy"]


def test_the_ece_change_joins_when_both_runs_state_one() -> None:
    # two bins, [0, 0.5] and (0.5, 1]; ECE = the sum over bins of |the sum of (y - s)|, over the cases (y 1 for high).
    # base: lower c1 0.1 (y 0), c4 0.4 (y 0): |-0.5|; upper c2 0.9, c3 0.8 (y 1): 0.1 + 0.2; (0.5 + 0.3) / 4 = 0.2.
    # new: lower c1 0.4, c3 0.5 (y 1), c4 0.3: |-0.4 + 0.5 - 0.3| = 0.2; upper c2 0.6: 0.4; (0.2 + 0.4) / 4 = 0.15
    base = _run(IDS, Y, Y, scores=[0.1, 0.9, 0.8, 0.4], calibration={"ece": 0.2, "bins": 2})
    new = _run(IDS, Y, Y, name="b", scores=[0.4, 0.6, 0.5, 0.3], calibration={"ece": 0.15, "bins": 2})
    doc = compare_runs(base, new, alpha=0.2, n_boot=30, seed=6)
    assert (doc["ece"]["base"], doc["ece"]["new"], doc["ece"]["delta"]) == pytest.approx((0.2, 0.15, -0.05))
    # its interval with the comparison's alpha, resamples and seed
    ids, y = np.array(IDS, dtype=object), np.array(Y)
    want = ece_delta(base, new, ids, y_true=y, alpha=0.2, n_boot=30, seed=6)
    assert want is not None and doc["ece"]["ci"] == want["ci"] and doc["ece"]["ci"] is not None
    for alpha, n_boot, seed in ((0.05, 30, 6), (0.2, 10, 6), (0.2, 30, 7)):
        other = ece_delta(base, new, ids, y_true=y, alpha=alpha, n_boot=n_boot, seed=seed)
        assert other is not None and other["ci"] != want["ci"], (alpha, n_boot, seed)
    assert "ece" not in compare_runs(base, _run(IDS, Y, Y, name="b"), n_boot=20)


def test_the_probes_both_runs_asked_are_gated_on_a_rise() -> None:
    from dataclasses import replace

    # base: the inject variant of c2 (high, plain high) stays high; new: it falls to low, and c3's (high -> low)
    # too: attack success 0/2 -> 2/2 (c4, medium, plain medium, stays medium in both: counted, never falls)
    base = replace(_run(IDS, Y, Y), variants={"inject": np.array([[-1], [2], [2], [1]]),
                                              "tone": np.array([[0], [2], [2], [1]])})  # fmt: skip
    new = replace(_run(IDS, Y, Y, name="b"), variants={"inject": np.array([[-1], [0], [0], [1]]),
                                                       "tone": np.array([[0], [2], [2], [1]])})  # fmt: skip
    doc = compare_runs(base, new, n_boot=200, seed=1)
    inject = doc["metrics"]["inject_attack_success"]
    assert (inject["base"], inject["new"], inject["delta"]) == (0.0, pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert doc["metrics"]["tone_flip_rate"]["delta"] == 0.0 and not doc["metrics"]["tone_flip_rate"]["regression"]
    # some resamples hold c4 alone (no fall possible, change 0): the interval reaches 0, no regression at 0.05
    assert inject["ci"][0] == 0.0 and inject["regression"] is False  # type: ignore[index]
    assert doc["gate"]["family"] == []  # one epoch: each figure tested alone, as the headline metrics are
    assert doc["gate"]["statement"].startswith("A headline metric counts as a regression when it gets worse by")
    from harness.leaderboard.probe_rates import case_counts, probe_delta

    ids, y = np.array(IDS, dtype=object), np.array(Y)
    same_draw = probe_delta(case_counts(base, "inject", ids, y), case_counts(new, "inject", ids, y), alpha=0.05,
                            max_rise=0.01, n_boot=200, seed=1)  # fmt: skip
    assert inject == same_draw  # the comparison's seed and settings reach the probes' bootstrap
    assert doc["gate"]["statement"].endswith(
        " A probe's figure (tone_flip_rate, inject_attack_success) counts as a regression when it rises by more than "
        "0.01 and its paired-bootstrap 95% interval of the change excludes zero (the cases resampled alike for both "
        "runs, a case's epochs together)."
    )
    # runs with epochs: the probes join Holm's family
    two = np.array([[0, 0], [2, 2], [2, 2], [1, 1]])
    base2, new2 = replace(base, epochs=two), replace(new, epochs=two)
    base2.variants["inject"] = np.array([[-1, -1], [2, 2], [2, 2], [1, 1]])
    new2.variants["inject"] = np.array([[-1, -1], [0, 0], [0, 0], [1, 1]])
    held = compare_runs(base2, new2, n_boot=200, seed=1)
    assert "inject_attack_success" in held["gate"]["family"]
    assert held["metrics"]["inject_attack_success"]["p_holm"] is not None
    assert "its Holm-adjusted p, in the family above, is below 0.05" in held["gate"]["statement"]
    # --probe inject: that one alone; a probe only one run asked is not compared
    only = compare_runs(base, new, n_boot=50, probes=["inject"])["metrics"]
    assert "inject_attack_success" in only and "tone_flip_rate" not in only
    lone = replace(new, variants={"inject": new.variants["inject"]})
    assert "tone_flip_rate" not in compare_runs(base, lone, n_boot=50)["metrics"]
    # without probes on either side, nothing of them
    assert not [k for k in compare_runs(_run(IDS, Y, Y), _run(IDS, Y, Y, name="b"), n_boot=10)["metrics"]
                if "flip" in k or "attack" in k]  # fmt: skip


def test_each_metric_states_the_smallest_worsening_it_could_detect() -> None:
    from harness.leaderboard.noise import detectable

    base, new = _run(IDS, Y, Y), _run(IDS, Y, [0, 0, 2, 1], name="b")
    doc = compare_runs(base, new, n_boot=200, seed=5)
    _, boots = paired_headline(np.array(Y), [np.array(Y), np.array([0, 0, 2, 1])], n_boot=200, seed=5)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert doc["metrics"]["accuracy"]["mde"] == pytest.approx(detectable(change, 0.05))
    # gated together (Holm): the first step tests at alpha / m, so the detectable size grows by the z ratio
    metrics = {"a": {"p": 0.01, "delta": -0.1, "higher_is_better": True, "mde": 0.2},
               "b": {"p": 0.2, "delta": 0.0, "higher_is_better": True, "mde": 0.3},
               "c": {"p": None, "delta": None, "higher_is_better": True, "mde": None}}  # fmt: skip
    apply_holm(metrics, ["a", "b", "c"], alpha=0.05, max_drop=0.0)  # type: ignore[arg-type]
    # c has no p: the family tested is a and b, m = 2; z(1 - 0.05 / 2) over z(0.95), each plus z(0.8)
    ratio = (1.9599640 + 0.8416212) / (1.6448536 + 0.8416212)
    assert metrics["a"]["mde"] == pytest.approx(0.2 * ratio) and metrics["b"]["mde"] == pytest.approx(0.3 * ratio)
    assert metrics["c"]["mde"] is None
    # a family of one: Holm's first step is alpha itself, the size unchanged
    alone = {"a": {"p": 0.01, "delta": -0.1, "higher_is_better": True, "mde": 0.2}}
    apply_holm(alone, ["a"], alpha=0.05, max_drop=0.0)  # type: ignore[arg-type]
    assert alone["a"]["mde"] == pytest.approx(0.2)
