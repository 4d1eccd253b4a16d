"""The noise-aware gate's pure parts (harness.leaderboard.noise, compare.apply_holm), each against a computation of
its own: Holm by hand, the reducer against harness.epochs, the hierarchical bootstrap's spread against its variance
formula, the cluster bootstrap against the paired one."""

from __future__ import annotations

import numpy as np
import pytest

from harness.epochs import reduce_case
from harness.leaderboard.compare import apply_holm, can_change
from harness.leaderboard.noise import (
    POOLED,
    cluster_headline,
    hierarchical_headline,
    holm,
    reduce_draws,
    regression_p,
)
from harness.metrics import ERROR, paired_headline
from harness.types import RISKS, Outcome


def test_holm_adjusted_p_values_by_hand() -> None:
    # sorted: d .005, a .01, c .03, b .04 (m = 4)
    # d: 4 * .005 = .02; a: max(.02, 3 * .01 = .03) = .03; c: max(.03, 2 * .03 = .06) = .06; b: max(.06, .04) = .06
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03, "d": 0.005})
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06, "d": 0.02})
    # capped at 1: x 2 * .5 = 1; y max(1, .6) = 1
    assert holm({"x": 0.5, "y": 0.6}) == pytest.approx({"x": 1.0, "y": 1.0})
    assert holm({"only": 0.03}) == pytest.approx({"only": 0.03})
    assert holm({}) == {}


def test_holm_keeps_the_familywise_rate_under_alpha() -> None:
    # five true null hypotheses with uniform p-values: any adjusted p < .05 in at most ~5% of 4,000 families
    rng = np.random.default_rng(7)
    families = rng.random((4000, 5))
    rejected = [min(holm({str(i): float(p) for i, p in enumerate(row)}).values()) < 0.05 for row in families]
    per_test = float(np.mean((families < 0.05).any(axis=1)))  # unadjusted: 1 - .95^5 = .226
    assert np.mean(rejected) <= 0.06 and per_test > 0.2


def _metric(p: float | None, delta: float) -> dict:
    return {"base": 0.5, "new": 0.5 + delta, "delta": delta, "ci": None, "higher_is_better": True, "p": p,
            "p_holm": None, "regression": False}  # fmt: skip


def test_gating_together_takes_away_what_each_test_alone_would_fail() -> None:
    # p .02 and .03 are each under alpha .05; Holm over 3: .02 * 3 = .06, max(.06, .03 * 2) = .06: no regression
    metrics = {"accuracy": _metric(0.02, -0.1), "macro_f1": _metric(0.03, -0.1), "weighted_kappa": _metric(0.9, 0.0)}
    apply_holm(metrics, ["accuracy", "macro_f1", "weighted_kappa"], alpha=0.05, max_drop=0.01)
    assert [m["regression"] for m in metrics.values()] == [False, False, False]
    assert metrics["accuracy"]["p_holm"] == pytest.approx(0.06)
    # sorted accuracy .001, weighted_kappa .001, macro_f1 .03: .001 * 3 = .003, max(.003, .001 * 2) = .003,
    # max(.003, .03 * 1) = .03 < .05 (step-down: Bonferroni's .03 * 3 = .09 would not reject); kappa's drop of .005
    # is under max_drop: never a regression
    metrics = {
        "accuracy": _metric(0.001, -0.1),
        "macro_f1": _metric(0.03, -0.1),
        "weighted_kappa": _metric(0.001, -0.005),
    }
    apply_holm(metrics, list(metrics), alpha=0.05, max_drop=0.01)
    assert [m["regression"] for m in metrics.values()] == [True, True, False]
    assert metrics["macro_f1"]["p_holm"] == pytest.approx(0.03)
    # a metric outside the family is never a regression, and has no adjusted p
    metrics = {"accuracy": _metric(0.001, -0.1), "error_rate": _metric(0.0, -0.1)}
    apply_holm(metrics, ["accuracy"], alpha=0.05, max_drop=0.01)
    assert metrics["error_rate"]["regression"] is False and metrics["error_rate"]["p_holm"] is None
    assert metrics["accuracy"]["p_holm"] == pytest.approx(0.001)


def test_regression_p_counts_the_resamples_without_a_worsening() -> None:
    assert regression_p(np.array([-1.0, 0.0, 1.0, 2.0, np.nan])) == pytest.approx(2 / 4)
    assert regression_p(np.array([0.5, 0.1])) == 0.0
    assert regression_p(np.array([np.nan])) is None


def _outcome(code: int, epoch: int) -> Outcome:
    risk = None if code == ERROR else RISKS[code]
    return Outcome("c", "h", risk, None, "timeout" if risk is None else None, 1, 0.0, epoch=epoch)


@pytest.mark.parametrize("reducer", ["mode", "first"])
def test_reduce_draws_is_the_run_reducer(reducer: str) -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 4, size=(400, 5))  # verdicts 0..2 and errors (3), ties and all-error rows included
    rows[:5] = [[3, 3, 3, 3, 3], [2, 1, 2, 1, 0], [1, 2, 2, 1, 3], [3, 0, 3, 0, 3], [0, 0, 1, 1, 2]]
    got = reduce_draws(rows, reducer)
    for row, reduced in zip(rows, got, strict=True):
        expected = reduce_case([_outcome(int(c), e) for e, c in enumerate(row, start=1)], reducer)
        assert reduced == (ERROR if expected.risk is None else RISKS.index(expected.risk)), row


def _correct(y_true: np.ndarray, epochs: np.ndarray) -> np.ndarray:
    return (epochs == y_true[:, None]).astype(float)


def _analytic_sd(y_true: np.ndarray, base: np.ndarray, new: np.ndarray) -> tuple[float, float]:
    """The two-stage bootstrap's sd of the pooled accuracy change, by its variance formula: with c_i a case's share
    of correct epochs and v_i their variance (ddof 0) over its N epochs, Var = (Var_i(c_new - c_base) + mean_i(
    v_new / N + v_base / N)) / n. Second: the same without the epoch term (cases resampled alone)."""
    cb, cn = _correct(y_true, base), _correct(y_true, new)
    n, n_epochs = cb.shape
    between = np.var(cn.mean(axis=1) - cb.mean(axis=1))
    within = np.mean(cb.var(axis=1) / n_epochs + cn.var(axis=1) / n_epochs)
    return float(np.sqrt((between + within) / n)), float(np.sqrt(between / n))


def test_the_hierarchical_interval_widens_with_epoch_noise_as_its_formula_says() -> None:
    rng = np.random.default_rng(11)
    n, n_epochs = 300, 5
    y_true = rng.integers(0, 3, n)
    rule = np.where(rng.random(n) < 0.6, y_true, (y_true + 1) % 3)

    def run(share: float) -> np.ndarray:
        random = rng.random((n, n_epochs)) < share
        return np.where(random, rng.integers(0, 3, (n, n_epochs)), rule[:, None])

    spreads = {}
    for share in (0.0, 0.4):
        base, new = run(share), run(share)
        point, boot = hierarchical_headline(y_true, [base, new], reducers=[POOLED, POOLED], n_boot=4000, seed=5)
        change = boot["accuracy"][1] - boot["accuracy"][0]
        both, cases_only = _analytic_sd(y_true, base, new)
        assert np.std(change) == pytest.approx(both, rel=0.08)
        # the point value is the accuracy over every (case, epoch) verdict
        assert point["accuracy"][1] == pytest.approx(_correct(y_true, new).mean())
        spreads[share] = (float(np.std(change)), cases_only)
    assert spreads[0.0][0] == 0.0  # epochs that never differ: no noise, no spread
    assert spreads[0.4][0] > 1.2 * spreads[0.4][1]  # the epoch draws widen it beyond the cases' own spread


def test_reduced_statistic_resamples_the_runs_reducer() -> None:
    y_true = np.array([0, 1, 2, 2])
    epochs = np.array([[0, 0, 0], [1, 1, 1], [2, 2, 2], [0, 0, 0]])  # every draw of a case gives the same verdict
    point, boot = hierarchical_headline(y_true, [epochs, epochs], reducers=["mode", "first"], n_boot=50, seed=0)
    assert point["accuracy"][0] == pytest.approx(3 / 4) and point["accuracy"][1] == pytest.approx(3 / 4)
    assert np.array_equal(boot["accuracy"][0], boot["accuracy"][1])  # same case draws, same verdicts


def test_cluster_bootstrap_with_one_pair_a_case_is_the_paired_bootstrap() -> None:
    rng = np.random.default_rng(2)
    y_true, a, b = rng.integers(0, 3, 120), rng.integers(0, 4, 120), rng.integers(0, 3, 120)
    got = cluster_headline(y_true, [a, b], np.arange(120), n_boot=300, seed=9)
    want = paired_headline(y_true, [a, b], n_boot=300, seed=9)
    for name in want[0]:
        np.testing.assert_allclose(got[0][name], want[0][name])
        np.testing.assert_allclose(got[1][name], want[1][name])


def test_cluster_bootstrap_keeps_a_case_pairs_together() -> None:
    # case 0 has two pairs, both right in base and wrong in new; case 1 one pair right in both: a resample holds
    # case 0's pairs together, so the accuracy change is -2/3 (0,0,1), -2/4... only values whole cases give
    y_true = np.array([0, 0, 1])
    base, new, clusters = np.array([0, 0, 1]), np.array([1, 1, 1]), np.array([0, 0, 1])
    _, boot = cluster_headline(y_true, [base, new], clusters, n_boot=200, seed=1)
    change = boot["accuracy"][1] - boot["accuracy"][0]
    # draws: {0,0}: 4 pairs, all flipped: -1; {0,1}: 3 pairs, 2 flipped: -2/3; {1,1}: 0
    assert set(np.round(change, 6)) <= {-1.0, round(-2 / 3, 6), 0.0}
    assert len(set(np.round(change, 6))) == 3


def test_a_metric_no_resample_can_change_is_not_tested() -> None:
    y_true = np.array([0, 1, 2, 0])
    preds = [np.array([0, 1, 1, 0]), np.array([0, 2, 2, 1])]
    figures = paired_headline(y_true, preds, n_boot=100, seed=0)
    assert not can_change(figures, "error_rate")  # neither run errs
    assert can_change(figures, "accuracy")


def test_history_reads_the_leaderboard_s_repeat_figures() -> None:
    from harness.cli.history import REPEATS as HISTORY
    from harness.leaderboard.rank import REPEATS as BOARD

    assert HISTORY == BOARD


def test_holm_caps_an_adjusted_p_at_one() -> None:
    # x: 2 * .6 = 1.2, capped at 1; y: max(1, .7) = 1
    assert holm({"x": 0.6, "y": 0.7}) == {"x": 1.0, "y": 1.0}


def test_each_run_is_resampled_with_its_own_reducer() -> None:
    # one case, truth low (0), epochs low, low, medium in draw order [1, 0, 0] -> mode low (right), first medium
    # (wrong). Three epochs drawn with replacement: first draw low with chance 2/3; mode low when at least two of
    # three draws are low, 3 (2/3)^2 (1/3) + (2/3)^3 = 20/27 (two verdicts and three draws: never a tie)
    y_true = np.zeros(40, dtype=np.int64)
    epochs = np.tile([1, 0, 0], (40, 1))
    point, boot = hierarchical_headline(y_true, [epochs, epochs], reducers=["mode", "first"], n_boot=3000, seed=4)
    assert point["accuracy"].tolist() == [1.0, 0.0]
    assert boot["accuracy"][0].mean() == pytest.approx(20 / 27, abs=0.01)
    assert boot["accuracy"][1].mean() == pytest.approx(2 / 3, abs=0.01)


def test_every_epoch_can_be_drawn() -> None:
    # only epoch 1 of each case is right: every epoch drawn alike gives a mean pooled accuracy of 1/3
    y_true = np.zeros(50, dtype=np.int64)
    epochs = np.tile([0, 1, 2], (50, 1))
    _, boot = hierarchical_headline(y_true, [epochs], reducers=[POOLED], n_boot=2000, seed=1)
    assert boot["accuracy"][0].mean() == pytest.approx(1 / 3, abs=0.01)


def test_macro_f1_is_over_the_classes_of_either_run() -> None:
    from sklearn.metrics import f1_score

    y_true = np.array([0, 0, 1, 1, 2, 0])
    base = np.array([[0, 0], [0, 1], [1, 1], [0, 0], [1, 1], [0, 0]])  # never predicts high
    new = np.array([[0, 2], [0, 0], [1, 1], [1, 1], [2, 2], [2, 0]])
    point, _ = hierarchical_headline(y_true, [base, new], reducers=[POOLED, POOLED], n_boot=10, seed=0)
    labels = [0, 1, 2]  # high is present: as a label and in new's predictions
    truth = np.repeat(y_true, 2)
    assert point["macro_f1"][0] == pytest.approx(f1_score(truth, base.ravel(), labels=labels, average="macro"))
    assert point["macro_f1"][1] == pytest.approx(f1_score(truth, new.ravel(), labels=labels, average="macro"))
    # the same pairs by case: cluster_headline's points are the pooled ones
    clusters = np.repeat(np.arange(6), 2)
    got, _ = cluster_headline(truth, [base.ravel(), new.ravel()], clusters, n_boot=10, seed=0)
    np.testing.assert_allclose(got["macro_f1"], point["macro_f1"])
    y2 = np.array([0, 0, 1, 1])  # high only in new's predictions: base's macro-F1 counts high too (its F1 0)
    one, _ = cluster_headline(y2, [np.array([0, 1, 1, 1]), np.array([0, 0, 1, 2])], np.arange(4), n_boot=5, seed=0)
    want = f1_score(y2, [0, 1, 1, 1], labels=[0, 1, 2], average="macro", zero_division=0)
    assert one["macro_f1"][0] == pytest.approx(want) and want < f1_score(y2, [0, 1, 1, 1], average="macro")


def test_the_resamples_follow_the_seed() -> None:
    rng = np.random.default_rng(0)
    y_true, epochs = rng.integers(0, 3, 30), rng.integers(0, 3, (30, 4))
    runs = [epochs, np.roll(epochs, 1, axis=1)]

    def draw(seed: int) -> np.ndarray:
        return hierarchical_headline(y_true, runs, reducers=[POOLED, "mode"], n_boot=100, seed=seed)[1]["accuracy"]

    np.testing.assert_array_equal(draw(3), draw(3))
    assert not np.array_equal(draw(3), draw(4))


def test_the_minimum_detectable_effect_by_hand() -> None:
    from harness.leaderboard.noise import detectable

    change = np.array([0.0, 0.1, 0.2, 0.3, np.nan, np.inf])  # the finite four: sd (n - 1) = 0.1291
    sd = np.std([0.0, 0.1, 0.2, 0.3], ddof=1)
    assert detectable(change, 0.05) == pytest.approx((1.6448536 + 0.8416212) * sd)
    assert detectable(change, 0.01) == pytest.approx((2.3263479 + 0.8416212) * sd)
    assert detectable(change, 0.05, power=0.5) == pytest.approx(1.6448536 * sd)
    assert detectable(np.array([0.2, np.nan]), 0.05) is None
    assert detectable(np.array([0.1, 0.3]), 0.05) == pytest.approx((1.6448536 + 0.8416212) * np.std([0.1, 0.3], ddof=1))
