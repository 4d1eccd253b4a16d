"""Metric code checked against independent computations: scikit-learn, scipy, or figures worked out by hand."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    brier_score_loss,
    cohen_kappa_score,
    confusion_matrix,
    f1_score,
    precision_recall_fscore_support,
    recall_score,
    roc_auc_score,
)

from harness import figures as fig
from harness import metrics as m
from harness.documents import Headline
from harness.types import CATEGORIES, CATEGORY_RISK, ERROR_KINDS, RISKS, CaseLabels, Outcome

FAST = settings(max_examples=200, deadline=None)
SLOW = settings(max_examples=60, deadline=None)


# --------------------------------------------------------------------------------------------------------------
# strategies


@st.composite
def true_pred(draw: st.DrawFn, min_size: int = 0, max_size: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """y_true in 0..2 and y_pred in 0..3 (3 = error), the encoding of harness.metrics."""
    n = draw(st.integers(min_size, max_size))
    y_true = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    y_pred = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return np.array(y_true, dtype=np.int64), np.array(y_pred, dtype=np.int64)


# A small set of values, so that ties between scores are frequent.
TIED_SCORES = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0])


@st.composite
def binary_scores(draw: st.DrawFn, min_size: int = 1, max_size: int = 40) -> tuple[np.ndarray, np.ndarray]:
    n = draw(st.integers(min_size, max_size))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    s = draw(st.lists(TIED_SCORES, min_size=n, max_size=n))
    return np.array(y, dtype=int), np.array(s, dtype=float)


def headline_of(cm: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, *, n_boot: int, seed: int) -> Headline:
    """`harness.figures.headline` on the case bootstrap's resamples, as `compute` gives it cases that stand alone."""
    return fig.headline(cm, fig.resampled(y_true, y_pred, n_boot=n_boot, seed=seed), n_boot=n_boot, seed=seed)


def sk_confusion(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    """sklearn's 4x4 confusion matrix restricted to the rows of real labels (0..2)."""
    full = confusion_matrix(y_true, y_pred, labels=[0, 1, 2, 3])
    assert full[3].sum() == 0  # y_true never holds the error code
    return full[:3]


# --------------------------------------------------------------------------------------------------------------
# confusion / per_class / macro_f1 / accuracy


@FAST
@given(true_pred(min_size=1))
def test_confusion_equals_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = data
    cm = m.confusion(y_true, y_pred)
    assert cm.shape == (3, 4)
    np.testing.assert_array_equal(cm, sk_confusion(y_true, y_pred))


def test_confusion_of_no_cases_is_zero() -> None:
    empty = np.array([], dtype=np.int64)
    np.testing.assert_array_equal(m.confusion(empty, empty), np.zeros((3, 4), dtype=int))


def test_confusion_small_hand_example() -> None:
    # true: low, low, medium, high, high; pred: low, error, high, high, medium
    # row low: one low, one error -> [1, 0, 0, 1]; row medium: one high -> [0, 0, 1, 0];
    # row high: one high, one medium -> [0, 1, 1, 0]
    cm = m.confusion(np.array([0, 0, 1, 2, 2]), np.array([0, 3, 2, 2, 1]))
    assert cm.tolist() == [[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 1, 0]]


@FAST
@given(true_pred(min_size=1))
def test_per_class_equals_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = data
    pc = m.per_class(m.confusion(y_true, y_pred))
    # labels=[0, 1, 2] with 3 in y_pred: an error is a miss for its true class (recall) and is not a prediction of
    # any class (precision) -- exactly the harness's rule.
    p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=[0, 1, 2], zero_division=0)
    np.testing.assert_allclose(pc["precision"], p, atol=1e-12)
    np.testing.assert_allclose(pc["recall"], r, atol=1e-12)
    np.testing.assert_allclose(pc["f1"], f, atol=1e-12)
    np.testing.assert_array_equal(pc["support"], s)


def test_per_class_error_counts_in_recall_not_precision() -> None:
    # true: high, high, high, low; pred: high, error, error, high
    # high: tp = 1, support 3 (errors included) -> recall 1/3; predicted high = 2 (the error is no prediction)
    # -> precision 1/2; F1 = 2 * (1/2 * 1/3) / (1/2 + 1/3) = (1/3) / (5/6) = 2/5
    pc = m.per_class(m.confusion(np.array([2, 2, 2, 0]), np.array([2, 3, 3, 2])))
    assert pc["recall"][2] == pytest.approx(1 / 3)
    assert pc["precision"][2] == pytest.approx(1 / 2)
    assert pc["f1"][2] == pytest.approx(2 / 5)
    assert pc["support"].tolist() == [1, 0, 3]


def _present_labels(y_true: np.ndarray, y_pred: np.ndarray) -> list[int]:
    return sorted(set(y_true.tolist()) | (set(y_pred.tolist()) - {3}))


@FAST
@given(true_pred(min_size=1))
def test_macro_f1_equals_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = data
    cm = m.confusion(y_true, y_pred)
    labels = _present_labels(y_true, y_pred)
    expected = f1_score(y_true, y_pred, average="macro", labels=labels, zero_division=0)
    assert float(m.macro_f1(cm)) == pytest.approx(expected, abs=1e-12)
    mask = np.isin(np.arange(3), labels)
    np.testing.assert_array_equal(m.present_classes(cm), mask)
    assert float(m.macro_f1(cm, mask)) == pytest.approx(expected, abs=1e-12)


@FAST
@given(true_pred(min_size=1))
def test_accuracy_equals_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = data
    # accuracy_score compares codes: an error (3) never equals a label, so it counts as wrong.
    assert float(m.accuracy(m.confusion(y_true, y_pred))) == pytest.approx(accuracy_score(y_true, y_pred), abs=1e-12)


def test_every_figure_of_an_empty_matrix_is_undefined_alike() -> None:
    # one rule for the array functions: NaN where a figure is undefined (accuracy and macro-F1 gave 0, a claim about
    # nothing, while the others gave NaN), None once it reaches a document
    cm = np.zeros((3, 4), dtype=np.int64)
    for name, value in m.headline_batch(cm, m.present_classes(cm)).items():
        assert np.isnan(value), name
        assert m.defined(value) is None, name
    assert all(headline_of(cm, np.array([], dtype=np.int64), np.array([], dtype=np.int64), n_boot=0, seed=0)[name]
               is None for name in m.HEADLINE_METRICS)  # fmt: skip


def test_each_headline_figure_has_one_function_of_its_own_name() -> None:
    for name in m.HEADLINE_METRICS:
        assert callable(getattr(m, name)), name
    for old in ("kappa_batch", "quadratic_kappa", "high_risk_recall_batch", "false_alarm_batch", "error_rate_batch"):
        assert not hasattr(m, old), old


@SLOW
@given(st.lists(true_pred(min_size=1, max_size=20), min_size=1, max_size=6))
def test_batched_metrics_equal_one_matrix_at_a_time(batch: list[tuple[np.ndarray, np.ndarray]]) -> None:
    # The bootstrap feeds B x 3 x 4 stacks; each slice must get what the single-matrix call (checked above) gives.
    cms = np.stack([m.confusion(t, p) for t, p in batch])
    mask = m.present_classes(cms.sum(axis=0))
    np.testing.assert_allclose(m.accuracy(cms), [float(m.accuracy(c)) for c in cms])
    np.testing.assert_allclose(m.macro_f1(cms, mask), [float(m.macro_f1(c, mask)) for c in cms])
    for key, values in m.per_class(cms).items():
        np.testing.assert_allclose(values, np.stack([m.per_class(c)[key] for c in cms]))


# --------------------------------------------------------------------------------------------------------------
# quadratic kappa


def _sk_kappa(y_true: np.ndarray, y_pred: np.ndarray) -> float | None:
    answered = y_pred != 3
    if not answered.any():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        k = cohen_kappa_score(y_true[answered], y_pred[answered], labels=[0, 1, 2], weights="quadratic")
    return None if math.isnan(k) else float(k)  # sklearn gives nan exactly where kappa is undefined


@FAST
@given(true_pred(min_size=0))
def test_quadratic_kappa_equals_sklearn_on_answered_cases(data: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = data
    got = m.defined(m.weighted_kappa(m.confusion(y_true, y_pred)))
    expected = _sk_kappa(y_true, y_pred)
    if expected is None:
        assert got is None
    else:
        assert got == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(
    ("y_true", "y_pred"),
    [
        ([], []),  # no cases
        ([0, 1, 2], [3, 3, 3]),  # every case errored: nothing answered
        ([1, 1, 1, 2], [1, 1, 1, 3]),  # one label and the same single prediction: chance agreement is perfect
    ],
)
def test_quadratic_kappa_undefined_is_none(y_true: list[int], y_pred: list[int]) -> None:
    cm = m.confusion(np.array(y_true, dtype=np.int64), np.array(y_pred, dtype=np.int64))
    assert m.defined(m.weighted_kappa(cm)) is None


def test_quadratic_kappa_hand_example() -> None:
    # answered cases low->low, low->high, high->high, high->low (plus one error, ignored). Quadratic weights
    # (i-j)^2: the off-diagonal corners weigh 4. Observed weighted disagreement: 2 cases x 4 = 8.
    # Margins: rows (2, 0, 2), cols (2, 0, 2), n = 4 -> expected counts 1 in each corner cell -> weighted 2 x 4 = 8.
    # kappa = 1 - 8/8 = 0.
    cm = m.confusion(np.array([0, 0, 2, 2, 1]), np.array([0, 2, 2, 0, 3]))
    assert m.defined(m.weighted_kappa(cm)) == pytest.approx(0.0, abs=1e-12)


# --------------------------------------------------------------------------------------------------------------
# score metrics


@FAST
@given(binary_scores())
def test_roc_auc_equals_sklearn_with_ties(data: tuple[np.ndarray, np.ndarray]) -> None:
    y, s = data
    got = m.roc_auc(y.astype(float), s)  # score_metrics passes y as floats
    if y.min() == y.max():
        assert got is None
    else:
        assert got == pytest.approx(roc_auc_score(y, s), abs=1e-12)


@FAST
@given(binary_scores())
def test_average_precision_equals_sklearn_with_ties(data: tuple[np.ndarray, np.ndarray]) -> None:
    y, s = data
    got = m.average_precision(y.astype(float), s)
    if y.sum() == 0:
        assert got is None
    else:
        assert got == pytest.approx(average_precision_score(y, s), abs=1e-12)


@FAST
@given(binary_scores())
def test_brier_equals_sklearn(data: tuple[np.ndarray, np.ndarray]) -> None:
    y, s = data
    expected = brier_score_loss(y, s, labels=[0, 1])
    assert m.brier(y.astype(float), s) == pytest.approx(expected, abs=1e-12)


def test_score_metric_edge_cases() -> None:
    none = np.array([], dtype=float)
    assert m.brier(none, none) is None
    assert m.roc_auc(np.array([1.0, 1.0]), np.array([0.2, 0.9])) is None  # no negatives
    assert m.roc_auc(np.array([0.0, 0.0]), np.array([0.2, 0.9])) is None  # no positives
    assert m.average_precision(np.array([0.0, 0.0]), np.array([0.2, 0.9])) is None  # no positives
    # all positives: every threshold has precision 1 -> AP = 1
    assert m.average_precision(np.array([1.0, 1.0]), np.array([0.2, 0.9])) == pytest.approx(1.0)


def test_roc_auc_and_ap_all_tied_scores() -> None:
    # one tie group holding 1 positive and 3 negatives: every pair is a tie -> AUC 1/2;
    # the only threshold has recall 1 and precision 1/4 -> AP 1/4.
    y, s = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.5, 0.5, 0.5, 0.5])
    assert m.roc_auc(y, s) == pytest.approx(0.5)
    assert m.average_precision(y, s) == pytest.approx(0.25)


# --------------------------------------------------------------------------------------------------------------
# Wilson interval


@pytest.mark.parametrize(("k", "n"), [(0, 1), (1, 1), (0, 5), (5, 5), (2, 4), (3, 7), (0, 100), (100, 100), (37, 120)])
def test_wilson_interval_equals_scipy(k: int, n: int) -> None:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = m.wilson_interval(k, n)
    assert lo == pytest.approx(float(ci.low), abs=1e-12)
    assert hi == pytest.approx(float(ci.high), abs=1e-12)
    assert 0.0 <= lo <= hi <= 1.0


@pytest.mark.parametrize("n", [1, 3, 10, 13, 100, 250])
def test_wilson_interval_is_exact_at_zero_and_all(n: int) -> None:
    # With no success the Wilson lower bound is exactly 0 (centre == half-width), with all successes the upper bound
    # is exactly 1; scipy returns exactly 0.0 and 1.0. The interval must contain the observed proportion k/n.
    zero = binomtest(0, n).proportion_ci(method="wilson")
    every = binomtest(n, n).proportion_ci(method="wilson")
    assert (float(zero.low), float(every.high)) == (0.0, 1.0)  # the independent reference
    lo, _ = m.wilson_interval(0, n)
    _, hi = m.wilson_interval(n, n)
    assert lo == 0.0, f"wilson_interval(0, {n}) lower bound {lo!r} excludes the observed 0"
    assert hi == 1.0, f"wilson_interval({n}, {n}) upper bound {hi!r} excludes the observed 1"


def test_wilson_interval_of_no_trials_is_none() -> None:
    assert m.wilson_interval(0, 0) is None


# --------------------------------------------------------------------------------------------------------------
# bootstrap


def _typical(n: int = 60, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """About 70% right, some errors: a typical run."""
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, 3, size=n)
    y_pred = np.where(rng.random(n) < 0.7, y_true, rng.integers(0, 4, size=n))
    return y_true.astype(np.int64), y_pred.astype(np.int64)


def test_bootstrap_reproducible_for_seed_and_differs_for_another() -> None:
    y_true, y_pred = _typical()
    a = m.bootstrap_confusions(y_true, y_pred, n_boot=300, seed=5)
    b = m.bootstrap_confusions(y_true, y_pred, n_boot=300, seed=5)
    c = m.bootstrap_confusions(y_true, y_pred, n_boot=300, seed=6)
    assert a.shape == (300, 3, 4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@SLOW
@given(true_pred(min_size=1, max_size=30), st.integers(1, 250), st.integers(0, 2**32 - 1))
def test_bootstrap_each_resample_sums_to_n(data: tuple[np.ndarray, np.ndarray], n_boot: int, seed: int) -> None:
    y_true, y_pred = data
    boots = m.bootstrap_confusions(y_true, y_pred, n_boot=n_boot, seed=seed)
    assert boots.shape == (n_boot, 3, 4)
    assert (boots.sum(axis=(1, 2)) == len(y_true)).all()
    # no resample can hold a (label, prediction) pair that the data never has
    assert (boots[:, m.confusion(y_true, y_pred) == 0] == 0).all()


@pytest.mark.parametrize(("n_boot", "chunk"), [(250, 100), (7, 3), (100, 100)])
def test_bootstrap_matches_independent_resamples(n_boot: int, chunk: int) -> None:
    # Relies on the exact draw order the code documents ("built in chunks"): one default_rng(seed), and for each
    # chunk of b <= chunk resamples one call integers(0, n, size=(b, n)), row j being the case indices of resample
    # start + j. If the draw order changed, the intervals would still be valid but this test would fail.
    y_true, y_pred = _typical(n=23, seed=3)
    n, seed = len(y_true), 11
    boots = m.bootstrap_confusions(y_true, y_pred, n_boot=n_boot, seed=seed, chunk=chunk)
    rng = np.random.default_rng(seed)
    expected = []
    for start in range(0, n_boot, chunk):
        for idx in rng.integers(0, n, size=(min(chunk, n_boot - start), n)):
            expected.append(sk_confusion(y_true[idx], y_pred[idx]))
    assert len(expected) == n_boot
    np.testing.assert_array_equal(boots, np.stack(expected))


def test_bootstrap_default_chunk_matches_independent_resamples() -> None:
    # Same as above with the default chunk (100, from the signature) and 250 resamples: chunks of 100, 100, 50.
    y_true, y_pred = _typical(n=17, seed=4)
    boots = m.bootstrap_confusions(y_true, y_pred, n_boot=250, seed=2)
    rng = np.random.default_rng(2)
    idx = np.concatenate([rng.integers(0, 17, size=(b, 17)) for b in (100, 100, 50)])
    np.testing.assert_array_equal(boots, np.stack([sk_confusion(y_true[i], y_pred[i]) for i in idx]))


def test_bootstrap_percentile_interval_contains_point_estimate() -> None:
    y_true, y_pred = _typical(n=80, seed=9)
    point = accuracy_score(y_true, y_pred)
    lo, hi = m.percentile_interval(m.accuracy(m.bootstrap_confusions(y_true, y_pred, n_boot=1000, seed=0)))
    assert 0.0 <= lo < point < hi <= 1.0
    # the interval of a proportion over 80 cases is several points wide, but not absurdly so
    assert 0.05 < hi - lo < 0.4


def test_percentile_interval_equals_numpy_percentiles() -> None:
    values = np.arange(1, 201, dtype=float)  # 1..200
    # linear interpolation: 2.5th percentile at position 0.025*199 = 4.975 -> 5 + 0.975 = 5.975;
    # 97.5th at 0.975*199 = 194.025 -> 195.025
    assert m.percentile_interval(values) == pytest.approx((5.975, 195.025))


# --------------------------------------------------------------------------------------------------------------
# compute(): a hand-worked example


def lab(
    case_id: str,
    category: str,
    *,
    expected: str | None = None,
    evidence: bool = False,
    families: tuple[str, ...] = (),
    complete: bool = True,
    n_answers: int = 3,
    tags: tuple[str, ...] = (),
    saw: bool = False,
    shared: bool = False,
) -> CaseLabels:
    return CaseLabels(
        line=int(case_id[-4:]),
        case_id=case_id,
        content_hash=f"h{case_id}",
        category=category,
        expected_risk=expected or CATEGORY_RISK[category],  # type: ignore[arg-type]
        majority_correct=None,
        n_answers=n_answers,
        has_evidence=evidence,
        families=families,
        families_complete=complete,
        any_saw_other_answers=saw,
        any_shared_context=shared,
        tags=tags,
        source_dataset="original",
        source_item=case_id,
    )


def ok(case_id: str, risk: str, score: float | None = None, attempts: int = 1, latency: float = 1.0) -> Outcome:
    return Outcome(case_id, f"h{case_id}", risk, score, None, attempts, latency)  # type: ignore[arg-type]


def err(case_id: str, kind: str, attempts: int = 1, latency: float = 1.0) -> Outcome:
    return Outcome(case_id, f"h{case_id}", None, None, kind, attempts, latency)


# id  category                    expected  outcome                 evidence families        n_ans tags
# 01  majority_wrong_fact         high      high  s=.9   lat 1      yes      a (complete)    3     arith
# 02  majority_wrong_fact         high      low   s=.2   lat 2      no       a,b (complete)  3     arith
# 03  echo_cascade                high      timeout, 3 tries lat 3  no       a (complete)    3
# 04  lone_correct_dissenter      high      medium s=None lat 4     yes      none            3
# 05  genuine_agreement_correct   low       low   s=.1   lat 5      yes      b (complete)    2
# 06  genuine_agreement_correct   low       high  s=.8   lat 6      no       a,b (complete)  3
# 07  genuine_agreement_correct   low       invalid_response lat 7  no       b (partial)     3
# 08  genuine_disagreement        medium    medium s=.5 2 tries l 8 no       a (complete)    10
# 09  correct_but_unsupported     medium    low   s=.3   lat 9      yes      c (complete)    3
# 12  correct_but_unsupported     low (!)   low   s=None lat 10     no       c (complete)    3
# 10  numeric_consensus_error     high      not run                 yes
# 11  genuine_disagreement        medium    not run
# 99  (no label: out of scope)              connection, 5 tries
LABELS = [
    lab("FCB-0001", "majority_wrong_fact", evidence=True, families=("a",), tags=("arith",)),
    lab("FCB-0002", "majority_wrong_fact", families=("a", "b"), tags=("arith",)),
    lab("FCB-0003", "echo_cascade", families=("a",)),
    lab("FCB-0004", "lone_correct_dissenter", evidence=True),
    lab("FCB-0005", "genuine_agreement_correct", evidence=True, families=("b",), n_answers=2),
    lab("FCB-0006", "genuine_agreement_correct", families=("a", "b")),
    lab("FCB-0007", "genuine_agreement_correct", families=("b",), complete=False),
    lab("FCB-0008", "genuine_disagreement", families=("a",), n_answers=10),
    lab("FCB-0009", "correct_but_unsupported", evidence=True, families=("c",)),
    lab("FCB-0010", "numeric_consensus_error", evidence=True, families=("a",)),
    lab("FCB-0011", "genuine_disagreement", families=("a",)),
    lab("FCB-0012", "correct_but_unsupported", expected="low", families=("c",)),
]
OUTCOMES = {
    o.case_id: o
    for o in [
        ok("FCB-0001", "high", 0.9, latency=1.0),
        ok("FCB-0002", "low", 0.2, latency=2.0),
        err("FCB-0003", "timeout", attempts=3, latency=3.0),
        ok("FCB-0004", "medium", None, latency=4.0),
        ok("FCB-0005", "low", 0.1, latency=5.0),
        ok("FCB-0006", "high", 0.8, latency=6.0),
        err("FCB-0007", "invalid_response", latency=7.0),
        ok("FCB-0008", "medium", 0.5, attempts=2, latency=8.0),
        ok("FCB-0009", "low", 0.3, latency=9.0),
        ok("FCB-0012", "low", None, latency=10.0),
        err("FCB-0099", "connection", attempts=5, latency=100.0),
    ]
}


@pytest.fixture
def result() -> dict:
    # function-scoped (a few milliseconds): mutation testing credits each test with the calls it makes itself
    return fig.compute(LABELS, OUTCOMES, wall_s=5.0, n_boot=400, seed=3)


def test_compute_counts_and_confusion(result: dict) -> None:
    # evaluated: 1-9 and 12 -> 10 cases; 10 and 11 have no outcome -> 2 not run; 99 has no label -> ignored
    assert result["n_cases"] == 10
    assert result["n_not_run"] == 2
    # rows low/medium/high, columns low/medium/high/error:
    # low:    05 low, 06 high, 07 error, 12 low  -> [2, 0, 1, 1]
    # medium: 08 medium, 09 low                  -> [1, 1, 0, 0]
    # high:   01 high, 02 low, 03 error, 04 med  -> [1, 1, 1, 1]
    assert result["confusion_matrix"] == {
        "rows": ["low", "medium", "high"],
        "columns": ["low", "medium", "high", "error"],
        "counts": [[2, 0, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]],
    }


def test_compute_headline(result: dict) -> None:
    # right: 01, 05, 08, 12 -> 4 of 10
    assert result["accuracy"] == pytest.approx(0.4)
    # high: 1 right of 4 (the error counts as a miss)
    assert result["high_risk_recall"] == pytest.approx(0.25)
    # low cases predicted high: 06 -> 1 of 4 low cases (error included in the denominator)
    assert result["false_alarm_rate"] == pytest.approx(0.25)
    # per class (precision counts answered predictions in the column, recall the whole row):
    # low:    tp 2, predicted low 2+1+1 = 4 -> P 1/2; support 4 -> R 1/2; F1 1/2
    # medium: tp 1, predicted 0+1+1 = 2     -> P 1/2; support 2 -> R 1/2; F1 1/2
    # high:   tp 1, predicted 1+0+1 = 2     -> P 1/2; support 4 -> R 1/4; F1 = 2(1/8)/(3/4) = 1/3
    pc = result["per_class"]
    assert [pc[r]["precision"] for r in RISKS] == pytest.approx([0.5, 0.5, 0.5])
    assert [pc[r]["recall"] for r in RISKS] == pytest.approx([0.5, 0.5, 0.25])
    assert [pc[r]["f1"] for r in RISKS] == pytest.approx([0.5, 0.5, 1 / 3])
    assert [pc[r]["support"] for r in RISKS] == [4, 2, 4]
    # macro F1 over the three present classes: (1/2 + 1/2 + 1/3) / 3 = 4/9
    assert result["macro_f1"] == pytest.approx(4 / 9)
    assert result["macro_f1_classes"] == ["low", "medium", "high"]
    # kappa on the 8 answered cases: rows low [2,0,1] medium [1,1,0] high [1,1,1]; weights (i-j)^2.
    # observed weighted = low->high 1*4 + medium->low 1*1 + high->low 1*4 + high->medium 1*1 = 10
    # margins rows (3,2,3) cols (4,2,2), n 8; expected weighted =
    #   (3*2*1 + 3*2*4 + 2*4*1 + 2*2*1 + 3*4*4 + 3*2*1) / 8 = (6+24+8+4+48+6)/8 = 12
    # kappa = 1 - 10/12 = 1/6
    assert result["weighted_kappa"] == pytest.approx(1 / 6)


def test_compute_bootstrap_intervals(result: dict) -> None:
    lo, hi = result["accuracy_ci95"]
    assert 0.0 <= lo <= 0.4 <= hi <= 1.0 and hi > lo
    lo, hi = result["macro_f1_ci95"]
    assert 0.0 <= lo <= hi <= 1.0
    assert result["bootstrap"] == {"resamples": 400, "seed": 3, "method": "percentile"}
    assert "accuracy_ci95" not in fig.compute(LABELS, OUTCOMES, wall_s=5.0, n_boot=0)


def test_compute_scores(result: dict) -> None:
    # scored: 01 high .9, 02 high .2, 05 low .1, 06 low .8, 08 medium .5, 09 medium .3 (04, 12: no score; errors none)
    # positives (high) {.9, .2}, negatives {.1, .8, .5, .3}:
    # AUC: .9 beats all 4 negatives, .2 beats only .1 -> 5 of 8 pairs = 0.625
    # AP: ranking .9+ .8- .5- .3- .2+ .1- -> recall .5 at precision 1, then recall 1 at precision 2/5
    #     -> .5*1 + .5*.4 = 0.7
    # Brier: (.01 + .64 + .01 + .64 + .25 + .09) / 6 = 1.64/6
    s = result["scores"]
    assert s["n_scored"] == 6
    assert s["roc_auc"] == pytest.approx(0.625)
    assert s["average_precision"] == pytest.approx(0.7)
    assert s["brier"] == pytest.approx(1.64 / 6)


def test_compute_per_category(result: dict) -> None:
    pc = result["per_category"]
    # numeric_consensus_error (only case not run) and anchoring (no case) are absent
    assert set(pc) == {
        "majority_wrong_fact",
        "echo_cascade",
        "lone_correct_dissenter",
        "genuine_agreement_correct",
        "genuine_disagreement",
        "correct_but_unsupported",
    }

    def spread(low: int = 0, medium: int = 0, high: int = 0, error: int = 0) -> dict[str, int]:
        return {"low": low, "medium": medium, "high": high, "error": error}

    expected = {
        # name: (n, correct, expected_risk, predicted)
        "majority_wrong_fact": (2, 1, "high", spread(low=1, high=1)),
        "echo_cascade": (1, 0, "high", spread(error=1)),
        "lone_correct_dissenter": (1, 0, "high", spread(medium=1)),
        "genuine_agreement_correct": (3, 1, "low", spread(low=1, high=1, error=1)),
        "genuine_disagreement": (1, 1, "medium", spread(medium=1)),  # 11 not run
        "correct_but_unsupported": (2, 1, "mixed", spread(low=2)),  # 09 medium, 12 low -> mixed
    }
    for cat, (n, k, risk, predicted) in expected.items():
        entry = pc[cat]
        assert entry["n"] == n, cat
        assert entry["correct"] == k, cat
        assert entry["accuracy"] == pytest.approx(k / n), cat
        assert entry["expected_risk"] == risk, cat
        assert entry["predicted"] == predicted, cat
        ci = binomtest(k, n).proportion_ci(method="wilson")
        assert entry["ci95"] == pytest.approx([float(ci.low), float(ci.high)], abs=1e-12), cat


def _group(result: dict, breakdown: str, key: str) -> tuple[int, int]:
    g = result["breakdowns"][breakdown][key]
    assert g["accuracy"] == pytest.approx(g["correct"] / g["n"])
    return g["n"], g["correct"]


def test_compute_breakdowns(result: dict) -> None:
    b = result["breakdowns"]
    assert set(b) == {"model_family", "saw_other_answers", "shared_context", "n_answers", "evidence", "tags", "origin"}
    assert set(b["origin"]) == {"unknown"} and result["headline_real"] is None  # no case has an origin tag
    # evidence present: 01 right, 04 wrong, 05 right, 09 wrong -> 2 of 4 (10 not run, excluded)
    # absent: 02 w, 03 w, 06 w, 07 w, 08 r, 12 r -> 2 of 6
    assert set(b["evidence"]) == {"present", "absent"}
    assert _group(result, "evidence", "present") == (4, 2)
    assert _group(result, "evidence", "absent") == (6, 2)
    ci = binomtest(2, 4).proportion_ci(method="wilson")
    assert b["evidence"]["present"]["ci95"] == pytest.approx([float(ci.low), float(ci.high)])
    # model_family: a in 01 r, 02 w, 03 w, 06 w, 08 r -> 2 of 5; b in 02 w, 05 r, 06 w, 07 w -> 1 of 4;
    # c in 09 w, 12 r -> 1 of 2. single-family (complete, one family): 01 r, 03 w, 05 r, 08 r, 09 w, 12 r -> 4 of 6;
    # mixed-family: 02 w, 06 w -> 0 of 2; partly labelled: 07 -> 0 of 1; no family: 04 -> 0 of 1
    assert set(b["model_family"]) == {
        "family:a",
        "family:b",
        "family:c",
        "single-family",
        "mixed-family",
        "partly labelled",
        "(no model_family)",
    }
    assert _group(result, "model_family", "family:a") == (5, 2)
    assert _group(result, "model_family", "family:b") == (4, 1)
    assert _group(result, "model_family", "family:c") == (2, 1)
    assert _group(result, "model_family", "single-family") == (6, 4)
    assert _group(result, "model_family", "mixed-family") == (2, 0)
    assert _group(result, "model_family", "partly labelled") == (1, 0)
    assert _group(result, "model_family", "(no model_family)") == (1, 0)
    # tags: arith 01 r, 02 w -> 1 of 2; the other 8 evaluated cases have none: 05, 08, 12 right -> 3 of 8
    assert _group(result, "tags", "arith") == (2, 1)
    assert _group(result, "tags", "(none)") == (8, 3)
    # n_answers: 2 -> 05 (right); 10 -> 08 (right); 3 -> the other 8, right 01, 12 -> 2 of 8; ordered numerically
    assert list(b["n_answers"]) == ["2", "3", "10"]
    assert _group(result, "n_answers", "2") == (1, 1)
    assert _group(result, "n_answers", "3") == (8, 2)
    assert _group(result, "n_answers", "10") == (1, 1)
    assert _group(result, "saw_other_answers", "false") == (10, 4)


def test_compute_operational(result: dict) -> None:
    op = result["operational"]
    assert op["cases"] == 10  # the out-of-scope outcome 99 is not counted
    assert op["errors"] == 2
    assert op["errors_by_kind"] == {"timeout": 1, "invalid_response": 1}
    # retries: 03 made 3 tries (2 retries), 08 made 2 (1 retry) -> 3
    assert op["retries"] == 3
    assert op["wall_s"] == 5.0
    assert op["cases_per_s"] == pytest.approx(2.0)
    # latencies 1..10, linear interpolation: p50 at position 4.5 -> 5.5; p90 at 8.1 -> 9.1; p95 at 8.55 -> 9.55;
    # p99 at 8.91 -> 9.91
    assert op["latency_s"] == pytest.approx({"p50": 5.5, "p90": 9.1, "p95": 9.55, "p99": 9.91})


def test_compute_result_is_json(result: dict) -> None:
    decoded = orjson.loads(orjson.dumps(result))
    assert decoded["confusion_matrix"]["counts"] == [[2, 0, 1, 1], [1, 1, 0, 0], [1, 1, 1, 1]]


def test_compute_with_no_cases() -> None:
    res = fig.compute([], {}, wall_s=0.0)
    assert res["n_cases"] == 0 and res["n_not_run"] == 0
    # undefined figures are None (the policy in harness/metrics.py), not 0: no cases make no claim
    assert res["accuracy"] is None and res["macro_f1"] is None and res["error_rate"] is None
    assert res["weighted_kappa"] is None
    assert res["high_risk_recall"] is None and res["false_alarm_rate"] is None
    assert res["scores"] is None
    assert res["per_category"] == {}
    assert res["operational"]["cases"] == 0 and res["operational"]["cases_per_s"] is None
    orjson.dumps(res)


# --------------------------------------------------------------------------------------------------------------
# compute(): never raises, always JSON


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[CaseLabels], dict[str, Outcome]]:
    n = draw(st.integers(0, 25))
    labels, outcomes = [], {}
    for i in range(n):
        case_id = f"FCB-{i + 1:04d}"
        cat = draw(st.sampled_from(CATEGORIES))
        families = tuple(sorted(draw(st.sets(st.sampled_from(["a", "b", "c"]), max_size=3))))
        labels.append(
            lab(
                case_id,
                cat,
                expected=draw(st.sampled_from(RISKS)),
                evidence=draw(st.booleans()),
                families=families,
                complete=draw(st.booleans()),
                n_answers=draw(st.integers(2, 16)),
                tags=tuple(draw(st.sets(st.sampled_from(["x", "y", "z_1"]), max_size=2))),
                saw=draw(st.booleans()),
                shared=draw(st.booleans()),
            )
        )
        what = draw(st.sampled_from(["prediction", "error", "missing"]))
        attempts = draw(st.integers(1, 4))
        latency = draw(st.floats(0, 100, allow_nan=False))
        if what == "prediction":
            score = draw(st.none() | st.floats(0, 1))
            outcomes[case_id] = ok(case_id, draw(st.sampled_from(RISKS)), score, attempts, latency)
        elif what == "error":
            outcomes[case_id] = err(case_id, draw(st.sampled_from(ERROR_KINDS)), attempts, latency)
    return labels, outcomes


@SLOW
@given(runs(), st.just(0.0) | st.floats(1e-3, 1e4), st.integers(0, 30), st.integers(0, 2**32 - 1))
def test_compute_never_raises_and_is_json(
    run: tuple[list[CaseLabels], dict[str, Outcome]], wall_s: float, n_boot: int, seed: int
) -> None:
    labels, outcomes = run
    res = fig.compute(labels, outcomes, wall_s=wall_s, n_boot=n_boot, seed=seed)
    orjson.dumps(res)  # raises on numpy scalars and other non-JSON types
    json.dumps(res, allow_nan=False)  # and no NaN or infinity hides in it
    n_run = sum(1 for lab_ in labels if lab_.case_id in outcomes)
    assert res["n_cases"] == n_run
    assert res["n_not_run"] == len(labels) - n_run
    assert sum(map(sum, res["confusion_matrix"]["counts"])) == n_run
    if n_run:
        assert 0.0 <= res["accuracy"] <= 1.0 and 0.0 <= res["macro_f1"] <= 1.0
    else:  # undefined without cases: None, never 0 (the policy in harness/metrics.py)
        assert res["accuracy"] is None and res["macro_f1"] is None and res["error_rate"] is None
    errors = [o.error_kind for lab_ in labels if (o := outcomes.get(lab_.case_id)) and o.error_kind]
    assert res["operational"]["errors"] == len(errors)
    assert res["operational"]["errors_by_kind"] == {k: errors.count(k) for k in set(errors)}
    assert sum(e["n"] for e in res["per_category"].values()) == n_run


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=40))
def test_average_ranks_match_scipy(values: list[int]) -> None:
    from scipy.stats import rankdata

    from harness.metrics import average_ranks

    x = np.array(values, dtype=float)
    assert np.allclose(average_ranks(x), rankdata(x))


@FAST
@given(st.integers(2, 9).flatmap(lambda k: st.tuples(st.just(k), st.lists(st.tuples(st.integers(0, k - 1),
       st.integers(0, k - 1)), min_size=1, max_size=60))))  # fmt: skip
def test_a_square_matrix_of_many_classes_gives_sklearns_macro_f1(data: tuple[int, list[tuple[int, int]]]) -> None:
    # the shortcut audit's macro-F1 over categories is this function (it kept an implementation of its own)
    from fcb_datasets.audit.baselines import macro_f1_interval

    k, pairs = data
    y_true, y_pred = (np.array(side, dtype=np.int64) for side in zip(*pairs, strict=True))
    labels = sorted(set(y_true.tolist()) | set(y_pred.tolist()))
    expected = f1_score(y_true, y_pred, average="macro", labels=labels, zero_division=0)
    assert float(m.macro_f1(m.confusion(y_true, y_pred, (k, k)))) == pytest.approx(expected, abs=1e-12)
    point, (lo, hi) = macro_f1_interval(y_true, y_pred, k, n_boot=50, seed=0)
    assert point == pytest.approx(expected, abs=1e-12) and 0.0 <= lo <= hi <= 1.0


# --------------------------------------------------------------------------------------------------------------
# a matrix whose cells are all distinct, batches of matrices, and a second route to every headline figure

# Every cell distinct (0..11): a fault that reads one cell for another changes the figure.
# rows (expected) low 12, medium 18, high 36 cases; columns (predicted) low 17, medium 19, high 18, error 12
DISTINCT = np.array([[6, 2, 3, 1], [4, 9, 5, 0], [7, 8, 10, 11]], dtype=np.int64)


def cases_of(cm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y_true, y_pred) holding cm[i, j] cases of label i predicted j."""
    rows, cols = np.indices(cm.shape)
    return np.repeat(rows.ravel(), cm.ravel()), np.repeat(cols.ravel(), cm.ravel())


def reference_figures(y_true: np.ndarray, y_pred: np.ndarray, classes: np.ndarray) -> dict[str, float]:
    """Every headline figure of one set of cases counted case by case, not from a confusion matrix; NaN where
    undefined. The second route the matrix functions and their batches are checked against."""
    nan = float("nan")
    n = len(y_true)
    low, high, answered = y_true == 0, y_true == 2, y_pred != 3
    f1 = []
    for c in np.flatnonzero(classes):
        tp = int(np.sum((y_true == c) & (y_pred == c)))
        both = int(np.sum(y_true == c) + np.sum(y_pred == c))
        f1.append(2 * tp / both if both else 0.0)  # F1 = 2PR / (P + R) = 2 tp / (predicted + support)
    t, p = y_true[answered].astype(float), y_pred[answered].astype(float)
    # quadratic-weighted kappa = 1 - mean (t - p)^2 / mean over every pair (t_i - p_j)^2 (the disagreement by chance)
    chance = float(np.mean((t[:, None] - p[None, :]) ** 2)) if len(t) else 0.0
    return {
        "accuracy": float(np.mean(y_true == y_pred)) if n else nan,
        "macro_f1": float(np.mean(f1)) if f1 else nan,
        "weighted_kappa": 1 - float(np.mean((t - p) ** 2)) / chance if chance else nan,
        "high_risk_recall": float(np.mean(y_pred[high] == 2)) if high.any() else nan,
        "false_alarm_rate": float(np.mean(y_pred[low] == 2)) if low.any() else nan,
        "error_rate": float(np.mean(~answered)) if n else nan,
    }


def test_reference_figures_agree_with_sklearn() -> None:
    # the second route itself, checked once against scikit-learn on the distinct matrix
    y_true, y_pred = cases_of(DISTINCT)
    ref = reference_figures(y_true, y_pred, np.array([True, True, True]))
    assert ref["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred))
    assert ref["macro_f1"] == pytest.approx(f1_score(y_true, y_pred, labels=[0, 1, 2], average="macro"))
    assert ref["weighted_kappa"] == pytest.approx(_sk_kappa(y_true, y_pred))
    assert ref["high_risk_recall"] == pytest.approx(recall_score(y_true == 2, y_pred == 2))


def test_headline_figures_of_a_matrix_with_distinct_cells() -> None:
    cm = DISTINCT
    y_true, y_pred = cases_of(cm)
    np.testing.assert_array_equal(m.confusion(y_true, y_pred), cm)
    figures = m.headline_batch(cm, m.present_classes(cm))
    # 66 cases, right 6 + 9 + 10 = 25
    assert float(figures["accuracy"]) == pytest.approx(25 / 66)
    # low row 12 cases: 3 called high (and 1 errored, which is no false alarm)
    assert float(figures["false_alarm_rate"]) == pytest.approx(3 / 12)
    # high row 36 cases: 10 called high
    assert float(figures["high_risk_recall"]) == pytest.approx(10 / 36)
    # errors 1 + 0 + 11 = 12 of 66
    assert float(figures["error_rate"]) == pytest.approx(12 / 66)
    # F1 = 2 tp / (predicted + support): low 12 / (17 + 12), medium 18 / (19 + 18), high 20 / (18 + 36)
    assert float(figures["macro_f1"]) == pytest.approx((12 / 29 + 18 / 37 + 20 / 54) / 3)
    assert float(figures["weighted_kappa"]) == pytest.approx(_sk_kappa(y_true, y_pred))
    # the document's headline gives the same figures
    doc = headline_of(cm, y_true, y_pred, n_boot=0, seed=0)
    assert doc["false_alarm_rate"] == pytest.approx(3 / 12)
    assert doc["high_risk_recall"] == pytest.approx(10 / 36)
    assert doc["error_rate"] == pytest.approx(12 / 66)
    assert "accuracy_ci95" not in doc and "bootstrap" not in doc  # no resamples asked for
    assert [doc["per_class"][r]["support"] for r in RISKS] == [12, 18, 36]
    assert [doc["per_class"][r]["precision"] for r in RISKS] == pytest.approx([6 / 17, 9 / 19, 10 / 18])
    assert [doc["per_class"][r]["recall"] for r in RISKS] == pytest.approx([6 / 12, 9 / 18, 10 / 36])


def test_high_risk_recall_and_false_alarms_of_a_batch_by_hand() -> None:
    # DISTINCT: recall 10/36, false alarms 3/12.
    # no low and no high case: both undefined.
    # low row [1, 4, 2, 0] -> 2 of 7 called high; high row [3, 0, 5, 6] -> 5 of 14 called high
    cms = np.stack([DISTINCT, [[0, 0, 0, 0], [2, 5, 1, 3], [0, 0, 0, 0]], [[1, 4, 2, 0], [0, 0, 0, 0], [3, 0, 5, 6]]])
    np.testing.assert_allclose(m.high_risk_recall(cms), [10 / 36, np.nan, 5 / 14])
    np.testing.assert_allclose(m.false_alarm_rate(cms), [3 / 12, np.nan, 2 / 7])
    # errors 12 of 66; 3 of 11; 6 of 21
    np.testing.assert_allclose(m.error_rate(cms), [12 / 66, 3 / 11, 6 / 21])
    np.testing.assert_allclose(m.accuracy(cms), [25 / 66, 5 / 11, 6 / 21])


@settings(max_examples=40, deadline=None)
@given(st.lists(true_pred(min_size=1, max_size=20), min_size=1, max_size=5))
def test_headline_batch_equals_counting_each_set_of_cases(batch: list[tuple[np.ndarray, np.ndarray]]) -> None:
    cms = np.stack([m.confusion(t, p) for t, p in batch])
    classes = m.present_classes(cms.sum(axis=0))
    got = m.headline_batch(cms, classes)
    assert list(got) == list(m.HEADLINE_METRICS)
    stacked = m.headline_batch(cms[None], classes)  # paired_headline passes arrays x resamples x 3 x 4
    for name in m.HEADLINE_METRICS:
        assert got[name].shape == (len(batch),), name
        expected = [reference_figures(t, p, classes)[name] for t, p in batch]
        np.testing.assert_allclose(got[name], expected, atol=1e-12, err_msg=name)
        one_at_a_time = [float(m.headline_batch(c, classes)[name]) for c in cms]
        np.testing.assert_allclose(got[name], one_at_a_time, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(stacked[name], [expected], atol=1e-12, err_msg=name)


def test_headline_metrics_and_which_way_is_better() -> None:
    # higher is better for agreement with the labels; lower is better for false alarms and errors
    assert m.HEADLINE_METRICS == {
        "accuracy": True,
        "macro_f1": True,
        "weighted_kappa": True,
        "high_risk_recall": True,
        "false_alarm_rate": False,
        "error_rate": False,
    }


# --------------------------------------------------------------------------------------------------------------
# paired bootstrap, leaderboard intervals, chunk size


# Two detectors on 7 cases with no medium label; A predicts medium once, B never.
PAIR_TRUE = np.array([0, 0, 0, 2, 2, 2, 2], dtype=np.int64)
PAIR_A = np.array([0, 0, 1, 2, 2, 3, 0], dtype=np.int64)
PAIR_B = np.array([0, 0, 2, 2, 0, 3, 3], dtype=np.int64)


def test_paired_headline_point_values_by_hand() -> None:
    point, _ = m.paired_headline(PAIR_TRUE, [PAIR_A, PAIR_B], n_boot=5, seed=0)
    # A: low row [2, 1, 0, 0], high row [1, 0, 2, 1]; B: low row [2, 0, 1, 0], high row [1, 0, 1, 2]
    np.testing.assert_allclose(point["accuracy"], [4 / 7, 3 / 7])
    np.testing.assert_allclose(point["false_alarm_rate"], [0 / 3, 1 / 3])
    np.testing.assert_allclose(point["high_risk_recall"], [2 / 4, 1 / 4])
    np.testing.assert_allclose(point["error_rate"], [1 / 7, 2 / 7])
    # macro-F1 over the classes present in either array (low, medium, high), so B's medium counts as an F1 of 0:
    # A: low 2*2/(3+3), medium 0, high 2*2/(2+4) -> (2/3 + 0 + 2/3) / 3 = 4/9
    # B: low 2*2/(3+3), medium 0, high 2*1/(2+4) -> (2/3 + 0 + 1/3) / 3 = 1/3 (B alone, over low and high: 1/2)
    np.testing.assert_allclose(point["macro_f1"], [4 / 9, 1 / 3])
    np.testing.assert_allclose(point["weighted_kappa"], [_sk_kappa(PAIR_TRUE, PAIR_A), _sk_kappa(PAIR_TRUE, PAIR_B)])


def test_paired_headline_resamples_are_shared_and_seeded() -> None:
    # 7 cases: a chunk holds min(100, 250000 // 7) = 100 resamples, so 130 resamples are drawn as 100 then 30
    n_boot, seed = 130, 17
    _, boot = m.paired_headline(PAIR_TRUE, [PAIR_A, PAIR_B], n_boot=n_boot, seed=seed)
    rng = np.random.default_rng(seed)
    draws = np.concatenate([rng.integers(0, 7, size=(b, 7)) for b in (100, 30)])
    everything = np.array([True, True, True])  # the classes present in either array
    for k, pred in enumerate((PAIR_A, PAIR_B)):
        expected = [reference_figures(PAIR_TRUE[i], pred[i], everything) for i in draws]
        for name in m.HEADLINE_METRICS:
            assert boot[name].shape == (2, n_boot), name
            np.testing.assert_allclose(boot[name][k], [e[name] for e in expected], atol=1e-12, err_msg=name)


def test_paired_headline_of_one_array_twice_differs_by_nothing() -> None:
    y_true, y_pred = _typical(n=30, seed=5)
    point, boot = m.paired_headline(y_true, [y_pred, y_pred.copy()], n_boot=60, seed=2)
    for name in m.HEADLINE_METRICS:
        np.testing.assert_array_equal(point[name][0], point[name][1])
        np.testing.assert_array_equal(boot[name][0], boot[name][1])


class RecordingRng:
    """A numpy Generator that notes the size of every integers() draw (the bootstrap's index arrays)."""

    real = staticmethod(np.random.default_rng)

    def __init__(self, made: list[RecordingRng], seed: int | None = None) -> None:
        self.rng = self.real(seed)
        self.sizes: list[tuple[int, int]] = []
        made.append(self)

    def integers(self, *args: int, size: tuple[int, int]) -> np.ndarray:
        self.sizes.append(size)
        return self.rng.integers(*args, size=size)


def record_generators(monkeypatch: pytest.MonkeyPatch) -> list[RecordingRng]:
    """From now on every np.random.default_rng(seed) is a RecordingRng, listed in the returned list."""
    made: list[RecordingRng] = []
    monkeypatch.setattr(np.random, "default_rng", lambda seed=None: RecordingRng(made, seed))
    return made


def test_bootstrap_draws_at_most_a_chunk_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    # memory is bounded by drawing the index arrays chunk by chunk (the draws themselves do not depend on the chunk)
    y_true, y_pred = _typical(n=13, seed=2)
    made = record_generators(monkeypatch)
    m.bootstrap_confusions(y_true, y_pred, n_boot=250)  # default chunk: 100
    m.bootstrap_confusions(y_true, y_pred, n_boot=20, chunk=7)
    m.paired_bootstrap_confusions(y_true, [y_pred, y_true], n_boot=230)
    m.paired_bootstrap_confusions(y_true, [y_pred], n_boot=9, chunk=4)
    assert [r.sizes for r in made] == [
        [(100, 13), (100, 13), (50, 13)],
        [(7, 13), (7, 13), (6, 13)],
        [(100, 13), (100, 13), (30, 13)],
        [(4, 13), (4, 13), (1, 13)],
    ]


def test_headlines_draw_chunks_sized_by_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    # 5000 cases: a chunk holds 250000 // 5000 = 50 resamples, so 120 resamples are drawn as 50, 50, 20
    rng = np.random.default_rng(4)
    y_true = rng.integers(0, 3, size=5000)
    y_pred = np.where(rng.random(5000) < 0.6, y_true, rng.integers(0, 4, size=5000))
    idx = np.random.default_rng(9).integers(0, 5000, size=(120, 5000))
    made = record_generators(monkeypatch)
    _, boot = m.paired_headline(y_true, [y_pred], n_boot=120, seed=9)
    headline_of(m.confusion(y_true, y_pred), y_true, y_pred, n_boot=120, seed=9)
    assert [r.sizes for r in made] == [[(50, 5000), (50, 5000), (20, 5000)]] * 2
    np.testing.assert_allclose(boot["accuracy"][0], (y_true[idx] == y_pred[idx]).mean(axis=1))


def test_headline_intervals_come_from_the_seeded_resamples() -> None:
    y_true, y_pred = _typical(n=40, seed=8)
    out = headline_of(m.confusion(y_true, y_pred), y_true, y_pred, n_boot=150, seed=21)
    # 40 cases: chunks of 100, so 150 resamples are drawn as 100 then 50 from default_rng(21)
    rng = np.random.default_rng(21)
    idx = np.concatenate([rng.integers(0, 40, size=(b, 40)) for b in (100, 50)])
    classes = np.isin(np.arange(3), _present_labels(y_true, y_pred))
    expected = [reference_figures(y_true[i], y_pred[i], classes) for i in idx]
    acc, f1 = [e["accuracy"] for e in expected], [e["macro_f1"] for e in expected]
    assert out["accuracy_ci95"] == pytest.approx(list(np.percentile(acc, [2.5, 97.5])), abs=1e-12)
    assert out["macro_f1_ci95"] == pytest.approx(list(np.percentile(f1, [2.5, 97.5])), abs=1e-12)
    assert out["bootstrap"] == {"resamples": 150, "seed": 21, "method": "percentile"}
    again = headline_of(m.confusion(y_true, y_pred), y_true, y_pred, n_boot=150, seed=21)
    assert again["accuracy_ci95"] == out["accuracy_ci95"] and again["macro_f1_ci95"] == out["macro_f1_ci95"]


def test_finite_interval_by_hand() -> None:
    values = np.arange(101, dtype=float)  # 0..100: the p-th percentile is p itself
    assert m.finite_interval(values) == pytest.approx((2.5, 97.5))
    assert m.finite_interval(values, alpha=0.2) == pytest.approx((10.0, 90.0))
    assert m.finite_interval(values, alpha=0.5) == pytest.approx((25.0, 75.0))
    # NaN and infinities are left out: 1..10, linear interpolation at 0.025 * 9 = 0.225 -> 1.225 and
    # 0.975 * 9 = 8.775 -> 9.775
    mixed = np.array([np.nan, *range(1, 11), np.inf, -np.inf, np.nan])
    assert m.finite_interval(mixed) == pytest.approx((1.225, 9.775))
    assert m.finite_interval(np.array([0.25])) == (0.25, 0.25)
    assert m.finite_interval(np.array([np.nan, np.inf])) is None
    assert m.finite_interval(np.array([], dtype=float)) is None


@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(-10, 10) | st.just(float("nan")), min_size=1, max_size=50),
    st.sampled_from([0.01, 0.05, 0.1, 0.32]),
)
def test_finite_interval_equals_numpy_percentiles(values: list[float], alpha: float) -> None:
    arr = np.array(values)
    finite = arr[~np.isnan(arr)]
    got = m.finite_interval(arr, alpha)
    if not len(finite):
        assert got is None
    else:
        lo, hi = np.percentile(finite, [50 * alpha, 100 - 50 * alpha])
        assert got == pytest.approx((float(lo), float(hi)), abs=1e-12)


@pytest.mark.parametrize(
    ("n", "budget", "chunk"),
    [
        (0, 250_000, 100),  # no cases: at most 100 resamples a chunk
        (1, 250_000, 100),
        (2500, 250_000, 100),  # 250000 / 2500 = 100 exactly
        (2501, 250_000, 99),  # 99 * 2501 = 247599 fits, 100 * 2501 = 250100 does not
        (4717, 250_000, 52),  # 53 * 4717 = 250001: one entry over, so 52
        (10_000, 250_000, 25),
        (300_000, 250_000, 1),  # not even one resample fits: still one
        (0, 150, 100),  # 150 entries for one case: capped at 100
        (2, 150, 75),
        (10, 50, 5),
    ],
)
def test_memory_chunk(n: int, budget: int, chunk: int) -> None:
    assert m.memory_chunk(n, budget) == chunk


def test_memory_chunk_default_budget() -> None:
    assert (m.memory_chunk(4717), m.memory_chunk(2501), m.memory_chunk(0)) == (52, 99, 100)


def test_bootstrap_defaults() -> None:
    # 1000 resamples from seed 0 when not told; paired_bootstrap_confusions draws the same for one array
    y_true, y_pred = _typical(n=12, seed=6)
    boots = m.bootstrap_confusions(y_true, y_pred)
    assert boots.shape == (1000, 3, 4)
    np.testing.assert_array_equal(boots, m.bootstrap_confusions(y_true, y_pred, n_boot=1000, seed=0, chunk=100))
    paired = m.paired_bootstrap_confusions(y_true, [y_pred, y_true])
    assert paired.shape == (2, 1000, 3, 4)
    np.testing.assert_array_equal(paired[0], boots)
    rng = np.random.default_rng(0)
    idx = np.concatenate([rng.integers(0, 12, size=(100, 12)) for _ in range(10)])
    # the second array is the labels themselves: each resample's matrix is diagonal, the label counts of its draws
    counts = (y_true[idx][:, :, None] == np.arange(3)).sum(axis=1)
    expected = np.zeros((1000, 3, 4), dtype=np.int64)
    expected[:, [0, 1, 2], [0, 1, 2]] = counts
    np.testing.assert_array_equal(paired[1], expected)


def test_square_bootstrap_confusions() -> None:
    # the shortcut audit's k x k matrices: no error column
    y_true, y_pred = np.array([0, 1, 2, 3, 4, 4]), np.array([0, 2, 2, 3, 1, 4])
    boots = m.bootstrap_confusions(y_true, y_pred, n_boot=40, seed=3, shape=(5, 5))
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 6, size=(40, 6))
    expected = [confusion_matrix(y_true[i], y_pred[i], labels=range(5)) for i in idx]
    np.testing.assert_array_equal(boots, np.stack(expected))


# --------------------------------------------------------------------------------------------------------------
# the headline on natural and assembled cases


def origin_lab(case_id: str, expected: str, origin: str | None) -> CaseLabels:
    return lab(case_id, "majority_wrong_fact", expected=expected, tags=(f"origin_{origin}",) if origin else ())


# id   origin       expected  outcome
# R01  natural      high      high
# R02  natural      low       low
# R03  natural      medium    high
# R04  natural      high      not run
# R05  assembled    low       high
# R06  assembled    high      error
# R07  assembled    medium    not run
# R08  assembled    medium    medium
# R09  natural      high      high
# R10  natural      low       low
# R11  assembled    low       low
# C01  constructed  high      high
# C02  constructed  low       not run
# C03  constructed  low       high
# U01  (no origin)  low       low
ORIGIN_LABELS = [
    origin_lab("FCB-0101", "high", "natural"),
    origin_lab("FCB-0102", "low", "natural"),
    origin_lab("FCB-0103", "medium", "natural"),
    origin_lab("FCB-0104", "high", "natural"),
    origin_lab("FCB-0105", "low", "assembled"),
    origin_lab("FCB-0106", "high", "assembled"),
    origin_lab("FCB-0107", "medium", "assembled"),
    origin_lab("FCB-0108", "medium", "assembled"),
    origin_lab("FCB-0109", "high", "natural"),
    origin_lab("FCB-0110", "low", "natural"),
    origin_lab("FCB-0111", "low", "assembled"),
    origin_lab("FCB-0201", "high", "constructed"),
    origin_lab("FCB-0202", "low", "constructed"),
    origin_lab("FCB-0203", "low", "constructed"),
    origin_lab("FCB-0301", "low", None),
]
ORIGIN_OUTCOMES = {
    o.case_id: o
    for o in [
        ok("FCB-0101", "high"),
        ok("FCB-0102", "low"),
        ok("FCB-0103", "high"),
        ok("FCB-0105", "high"),
        err("FCB-0106", "timeout"),
        ok("FCB-0108", "medium"),
        ok("FCB-0109", "high"),
        ok("FCB-0110", "low"),
        ok("FCB-0111", "low"),
        ok("FCB-0201", "high"),
        ok("FCB-0203", "high"),
        ok("FCB-0301", "low"),
    ]
}


def test_headline_real_by_hand() -> None:
    block = fig.headline_real(ORIGIN_LABELS, ORIGIN_OUTCOMES, n_boot=0, seed=0)
    assert block is not None
    assert block["origins"] == ["natural", "assembled"]
    # natural and assembled: 11 cases, R04 and R07 not run -> 9 evaluated, 2 not run (constructed C02 is not counted)
    assert (block["n_cases"], block["n_not_run"]) == (9, 2)
    # low:    R02 low, R05 high, R10 low, R11 low -> [3, 0, 1, 0]
    # medium: R03 high, R08 medium                -> [0, 1, 1, 0]
    # high:   R01 high, R06 error, R09 high       -> [0, 0, 2, 1]
    # right 3 + 1 + 2 = 6 of 9; false alarms 1 of 4; high recall 2 of 3; errors 1 of 9
    assert block["accuracy"] == pytest.approx(6 / 9)
    assert block["false_alarm_rate"] == pytest.approx(1 / 4)
    assert block["high_risk_recall"] == pytest.approx(2 / 3)
    assert block["error_rate"] == pytest.approx(1 / 9)
    # F1 = 2 tp / (predicted + support): low 6 / (3 + 4), medium 2 / (1 + 2), high 4 / (4 + 3)
    assert block["macro_f1"] == pytest.approx((6 / 7 + 2 / 3 + 4 / 7) / 3)
    assert [block["per_class"][r]["support"] for r in RISKS] == [4, 2, 3]
    assert "accuracy_ci95" not in block


def test_headline_natural_by_hand() -> None:
    block = fig.compute(ORIGIN_LABELS, ORIGIN_OUTCOMES, wall_s=1.0, n_boot=0)["headline_natural"]
    assert block is not None and block["origins"] == ["natural"]
    # natural: R01, R02, R03, R04 (not run), R09, R10 -> 5 evaluated, 1 not run
    assert (block["n_cases"], block["n_not_run"]) == (5, 1)
    # low: R02 low, R10 low -> [2, 0, 0]; medium: R03 high -> [0, 0, 1]; high: R01 high, R09 high -> [0, 0, 2]
    assert block["accuracy"] == pytest.approx(4 / 5)
    assert (block["false_alarm_rate"], block["high_risk_recall"], block["error_rate"]) == (0.0, 1.0, 0.0)
    # F1: low 4 / (2 + 2), medium 0, high 4 / (3 + 2)
    assert block["macro_f1"] == pytest.approx((1 + 0 + 4 / 5) / 3)
    seeded = fig.compute(ORIGIN_LABELS, ORIGIN_OUTCOMES, wall_s=1.0, n_boot=40, seed=9)["headline_natural"]
    assert seeded is not None and seeded["bootstrap"] == {"resamples": 40, "seed": 9, "method": "percentile"}


def test_headline_real_intervals_are_seeded() -> None:
    block = fig.headline_real(ORIGIN_LABELS, ORIGIN_OUTCOMES, n_boot=80, seed=13)
    assert block is not None
    # the 9 evaluated real cases in label order: R01 R02 R03 R05 R06 R08 R09 R10 R11
    y_true = np.array([2, 0, 1, 0, 2, 1, 2, 0, 0])
    y_pred = np.array([2, 0, 2, 2, 3, 1, 2, 0, 0])
    idx = np.random.default_rng(13).integers(0, 9, size=(80, 9))
    acc = (y_true[idx] == y_pred[idx]).mean(axis=1)
    assert block["accuracy_ci95"] == pytest.approx(list(np.percentile(acc, [2.5, 97.5])))
    assert block["bootstrap"] == {"resamples": 80, "seed": 13, "method": "percentile"}
    # compute passes its resamples and seed on
    res = fig.compute(ORIGIN_LABELS, ORIGIN_OUTCOMES, wall_s=1.0, n_boot=80, seed=13)
    assert res["headline_real"]["accuracy_ci95"] == pytest.approx(list(np.percentile(acc, [2.5, 97.5])))
    assert res["headline_real"]["bootstrap"] == {"resamples": 80, "seed": 13, "method": "percentile"}


def test_headline_real_without_a_real_case() -> None:
    labels = [lab_ for lab_ in ORIGIN_LABELS if "origin_constructed" in lab_.tags]
    block = fig.headline_real(labels, ORIGIN_OUTCOMES, n_boot=10, seed=0)
    assert block is not None
    assert (block["n_cases"], block["n_not_run"]) == (0, 0)
    assert all(block[name] is None for name in m.HEADLINE_METRICS)
    assert "accuracy_ci95" not in block  # no case to resample


def test_headline_real_none_without_origin_tags() -> None:
    labels = [lab_ for lab_ in ORIGIN_LABELS if not lab_.tags]
    assert fig.headline_real(labels, ORIGIN_OUTCOMES, n_boot=10, seed=0) is None
    assert not fig.has_origins(labels)
    assert fig.has_origins(ORIGIN_LABELS)
    assert fig.has_origins([origin_lab("FCB-0401", "low", "constructed")])


def test_compute_carries_headline_real_and_origin_breakdown() -> None:
    res = fig.compute(ORIGIN_LABELS, ORIGIN_OUTCOMES, wall_s=1.0, n_boot=0)
    assert res["n_cases"] == 12 and res["n_not_run"] == 3  # R04, R07, C02
    assert res["headline_real"] == fig.headline_real(ORIGIN_LABELS, ORIGIN_OUTCOMES, n_boot=0, seed=0)
    assert res["headline_real"]["n_cases"] == 9 and res["headline_real"]["n_not_run"] == 2
    assert res["headline_real"]["accuracy"] == pytest.approx(6 / 9)  # see test_headline_real_by_hand
    # origin groups: natural R01 r, R02 r, R03 w, R09 r, R10 r -> 4 of 5; assembled R05 w, R06 w, R08 r, R11 r ->
    # 2 of 4; constructed C01 r, C03 w -> 1 of 2; unknown U01 r -> 1 of 1
    assert list(res["breakdowns"]["origin"]) == ["assembled", "constructed", "natural", "unknown"]
    assert _group(res, "origin", "natural") == (5, 4)
    assert _group(res, "origin", "assembled") == (4, 2)
    assert _group(res, "origin", "constructed") == (2, 1)
    assert _group(res, "origin", "unknown") == (1, 1)


def test_compute_on_a_matrix_with_distinct_cells() -> None:
    y_true, y_pred = cases_of(DISTINCT)
    labels, outcomes = [], {}
    for i, (t, p) in enumerate(zip(y_true.tolist(), y_pred.tolist(), strict=True)):
        case_id = f"FCB-{i + 1:04d}"
        labels.append(lab(case_id, "genuine_disagreement", expected=RISKS[t]))
        outcomes[case_id] = err(case_id, "timeout") if p == 3 else ok(case_id, RISKS[p])
    labels += [lab(f"FCB-9{i:03d}", "echo_cascade") for i in range(5)]  # 5 cases not run
    res = fig.compute(labels, outcomes, wall_s=11.0, n_boot=0)
    assert res["confusion_matrix"]["counts"] == DISTINCT.tolist()
    assert (res["n_cases"], res["n_not_run"]) == (66, 5)
    assert res["false_alarm_rate"] == pytest.approx(3 / 12)  # not the 1 errored low case of 12
    assert res["high_risk_recall"] == pytest.approx(10 / 36)
    assert res["accuracy"] == pytest.approx(25 / 66)
    assert res["operational"]["cases_per_s"] == pytest.approx(66 / 11.0)


def test_compute_default_bootstrap() -> None:
    res = fig.compute(LABELS, OUTCOMES, wall_s=5.0)
    assert res["bootstrap"] == {"resamples": 1000, "seed": 0, "method": "percentile"}
    # drawn from default_rng(0): 10 cases, so 10 chunks of 100 resamples. The evaluated cases in label order
    # (see test_encode_by_hand): right are the 1st, 5th, 8th and 10th
    right = np.array([1, 0, 0, 0, 1, 0, 0, 1, 0, 1])
    rng = np.random.default_rng(0)
    acc = np.concatenate([right[rng.integers(0, 10, size=(100, 10))].mean(axis=1) for _ in range(10)])
    assert res["accuracy_ci95"] == pytest.approx(list(np.percentile(acc, [2.5, 97.5])))
    assert res["operational"]["tokens"] is None  # no detector reported tokens


def test_encode_by_hand() -> None:
    # FCB-0010 and 0011 have no outcome and FCB-0099 no label; FCB-0003 and 0007 errored (3)
    y_true, y_pred = m.encode(LABELS, OUTCOMES)
    assert y_true.tolist() == [2, 2, 2, 2, 0, 0, 0, 1, 1, 0]
    assert y_pred.tolist() == [2, 0, 3, 1, 0, 2, 3, 1, 0, 0]
    assert y_true.dtype == np.int64 and y_pred.dtype == np.int64
    empty_true, empty_pred = m.encode([], {})
    assert empty_true.shape == (0,) and empty_pred.shape == (0,)


# --------------------------------------------------------------------------------------------------------------
# tokens, error messages, operational figures


def used(case_id: str, prompt: int, completion: int, *, cached: bool = False, latency: float = 1.0) -> Outcome:
    return Outcome(case_id, f"h{case_id}", "low", None, None, 1, latency, prompt, completion, cached=cached)


def failed(case_id: str, kind: str, message: str | None, attempts: int = 1) -> Outcome:
    return Outcome(case_id, f"h{case_id}", None, None, kind, attempts, 1.0, error_message=message)


def test_token_usage_and_cost() -> None:
    outs = [used("A", 1000, 30), used("B", 200, 7), used("C", 0, 0)]
    # prompt 1000 + 200 = 1200, completion 30 + 7 = 37, total 1237
    assert fig.token_usage(outs, (None, None)) == {"prompt": 1200, "completion": 37, "total": 1237}
    # prices per million tokens: (1200 * 3 + 37 * 15) / 1e6 = (3600 + 555) / 1e6
    both = fig.token_usage(outs, (3.0, 15.0))
    assert both is not None and both["cost_usd"] == pytest.approx(4155 / 1e6, rel=1e-12)
    prompt_only = fig.token_usage(outs, (3.0, None))
    assert prompt_only is not None and prompt_only["cost_usd"] == pytest.approx(3600 / 1e6, rel=1e-12)
    completion_only = fig.token_usage(outs, (None, 15.0))
    assert completion_only is not None and completion_only["cost_usd"] == pytest.approx(555 / 1e6, rel=1e-12)
    free = fig.token_usage(outs, (0.0, 0.0))
    assert free is not None and free["cost_usd"] == 0.0


def test_token_usage_none_only_without_any_token() -> None:
    assert fig.token_usage([used("A", 0, 0), used("B", 0, 0)], (1.0, 1.0)) is None
    assert fig.token_usage([], (None, None)) is None
    assert fig.token_usage([used("A", 0, 9)], (None, None)) == {"prompt": 0, "completion": 9, "total": 9}
    assert fig.token_usage([used("A", 4, 0)], (None, None)) == {"prompt": 4, "completion": 0, "total": 4}


def test_error_messages_counted_ranked_and_cut() -> None:
    # six distinct (kind, message) pairs with 6, 5, 4, 3, 2 and 1 errors, interleaved with answered cases
    kinds = [
        ("connection", "refused"),  # 6
        ("timeout", "read timed out"),  # 5
        ("invalid_response", None),  # 4: no message reads as ""
        ("timeout", "refused"),  # 3: the same text under another kind is another message
        ("http_status", "HTTP 503"),  # 2
        ("detector_exception", "boom"),  # 1
    ]
    outs: list[Outcome] = []
    for round_ in range(6):
        for j, (kind, message) in enumerate(kinds):
            if round_ < 6 - j:
                outs.append(failed(f"E{j}-{round_}", kind, message))
        outs.append(used(f"OK-{round_}", 1, 1))
    got = fig.error_messages(outs)
    assert got == [
        {"kind": "connection", "message": "refused", "count": 6, "case_id": "E0-0"},
        {"kind": "timeout", "message": "read timed out", "count": 5, "case_id": "E1-0"},
        {"kind": "invalid_response", "message": "", "count": 4, "case_id": "E2-0"},
        {"kind": "timeout", "message": "refused", "count": 3, "case_id": "E3-0"},
        {"kind": "http_status", "message": "HTTP 503", "count": 2, "case_id": "E4-0"},
    ]  # the sixth, seen once, is past the default limit of 5
    assert fig.error_messages(outs, limit=2) == got[:2]
    assert len(fig.error_messages(outs, limit=6)) == 6
    assert fig.error_messages([used("A", 1, 1)]) == []


def test_operational_by_hand() -> None:
    outs = [
        used("A", 1000, 30, latency=2.0),
        used("B", 200, 7, latency=4.0),
        used("C", 5000, 900, cached=True, latency=50.0),  # replayed: counted, but no latency and no tokens
        failed("D", "connection", "refused", attempts=4),  # latency 1.0
        failed("E", "invalid_response", "not JSON", attempts=2),
        failed("F", "connection", "refused", attempts=1),
        Outcome("G", "hG", "high", 0.5, None, 0, 3.0),  # no attempt recorded: no retry either
    ]
    op = fig.operational(outs, 0.5, prices=(3.0, 15.0))
    assert op["cases"] == 7 and op["cached"] == 1
    assert op["errors"] == 3
    assert list(op["errors_by_kind"].items()) == [("invalid_response", 1), ("connection", 2)]  # ERROR_KINDS order
    assert op["error_messages"][0] == {"kind": "connection", "message": "refused", "count": 2, "case_id": "D"}
    # retries: D 3, E 1, the others none
    assert op["retries"] == 4
    assert op["wall_s"] == 0.5 and op["cases_per_s"] == pytest.approx(14.0)
    # latencies of the 6 asked cases: 1, 1, 1, 2, 3, 4 -> numpy's linear percentiles
    asked = [1.0, 1.0, 1.0, 2.0, 3.0, 4.0]
    assert op["latency_s"] == pytest.approx({f"p{q}": float(np.percentile(asked, q)) for q in (50, 90, 95, 99)})
    # p50 at position 2.5 -> 1.5 (by hand)
    assert op["latency_s"]["p50"] == pytest.approx(1.5)
    # tokens of A and B only: (1200 * 3 + 37 * 15) / 1e6
    assert op["tokens"] == {
        "prompt": 1200,
        "completion": 37,
        "total": 1237,
        "cost_usd": pytest.approx(4155 / 1e6, rel=1e-12),
    }


def test_operational_all_cached_and_no_time() -> None:
    op = fig.operational([used("A", 10, 3, cached=True), used("B", 20, 4, cached=True)], 0.0)
    assert op["cases"] == 2 and op["cached"] == 2
    assert op["latency_s"] == {} and op["tokens"] is None
    assert op["cases_per_s"] is None
    assert op["errors"] == 0 and op["errors_by_kind"] == {} and op["error_messages"] == []


def test_compute_passes_prices_to_the_token_cost() -> None:
    labels = [lab("FCB-0001", "echo_cascade"), lab("FCB-0002", "echo_cascade")]
    outcomes = {"FCB-0001": used("FCB-0001", 100, 40), "FCB-0002": used("FCB-0002", 300, 2)}
    res = fig.compute(labels, outcomes, wall_s=1.0, n_boot=0, prices=(2.0, 10.0))
    # prompt 400, completion 42: (400 * 2 + 42 * 10) / 1e6 = 1220 / 1e6
    assert res["operational"]["tokens"] == {
        "prompt": 400,
        "completion": 42,
        "total": 442,
        "cost_usd": pytest.approx(1220 / 1e6, rel=1e-12),
    }


# --------------------------------------------------------------------------------------------------------------
# undefined figures, types, orders


def test_undefined_figures_are_nan_without_a_warning() -> None:
    # no cases at all, and a batch whose second matrix has no low, no high and no answered case
    empty = np.zeros((3, 4), dtype=np.int64)
    batch = np.stack([DISTINCT, [[0, 0, 0, 0], [0, 0, 0, 4], [0, 0, 0, 0]]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning (0/0) would reach the user's terminal
        for name in m.HEADLINE_METRICS:
            assert np.isnan(m.headline_batch(empty, m.present_classes(empty))[name]), name
        figures = m.headline_batch(batch, m.present_classes(batch.sum(axis=0)))
    assert np.isnan(figures["weighted_kappa"][1]) and np.isnan(figures["high_risk_recall"][1])
    assert np.isnan(figures["false_alarm_rate"][1])
    # 4 medium cases, all errored: accuracy 0 of 4, errors 4 of 4
    assert (figures["accuracy"][1], figures["error_rate"][1]) == (0.0, 1.0)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "kappa"),
    [
        # one answered case, low called high: observed disagreement (0 - 2)^2 = 4, by chance also 4 -> 1 - 4/4 = 0
        ([0, 2], [2, 3], 0.0),
        # low->low, high->high: observed 0; chance pairs (0-0)^2, (0-2)^2, (2-0)^2, (2-2)^2 -> mean 2 -> kappa 1
        ([0, 2, 1], [0, 2, 3], 1.0),
    ],
)
def test_quadratic_kappa_small_defined_cases(y_true: list[int], y_pred: list[int], kappa: float) -> None:
    cm = m.confusion(np.array(y_true, dtype=np.int64), np.array(y_pred, dtype=np.int64))
    assert m.defined(m.weighted_kappa(cm)) == pytest.approx(kappa, abs=1e-12)


def test_macro_f1_of_a_batch_without_classes_uses_those_present_anywhere() -> None:
    # the first matrix has every class, the second only low and high: its medium F1 (0) still counts
    first = DISTINCT
    second = np.array([[3, 0, 1, 0], [0, 0, 0, 0], [2, 0, 4, 1]])
    got = m.macro_f1(np.stack([first, second]))
    # second: F1 low 2*3/(5 + 4), medium 0, high 2*4/(5 + 7) -> over three classes
    assert got == pytest.approx([(12 / 29 + 18 / 37 + 20 / 54) / 3, (6 / 9 + 0 + 8 / 12) / 3])
    assert float(m.macro_f1(second)) == pytest.approx((6 / 9 + 8 / 12) / 2)  # alone: over its two classes
    none = m.macro_f1(np.stack([first, second]), np.zeros(3, dtype=bool))
    assert none.shape == (2,) and np.isnan(none).all()


def test_headline_interval_keeps_the_classes_of_all_cases() -> None:
    # 2 cases, low and medium, both right; one resample of 2 draws. When both draws are the same case, that resample
    # has one class only, and macro-F1 must still average over low and medium (1 and 0 -> 1/2), not give 1.
    y_true = y_pred = np.array([0, 1], dtype=np.int64)
    degenerate = 0
    for seed in range(8):
        out = headline_of(m.confusion(y_true, y_pred), y_true, y_pred, n_boot=1, seed=seed)
        idx = np.random.default_rng(seed).integers(0, 2, size=(1, 2))[0]
        expected = reference_figures(y_true[idx], y_pred[idx], np.array([True, True, False]))["macro_f1"]
        assert out["macro_f1_ci95"] == pytest.approx([expected, expected]), seed
        degenerate += idx[0] == idx[1]
    assert degenerate  # the case that matters was drawn


def test_document_types() -> None:
    y_true, y_pred = cases_of(DISTINCT)
    doc = headline_of(DISTINCT, y_true, y_pred, n_boot=3, seed=0)
    for r in RISKS:
        assert type(doc["per_class"][r]["support"]) is int, r  # JSON 12, not 12.0
        assert all(type(doc["per_class"][r][k]) is float for k in ("precision", "recall", "f1")), r
    assert doc["macro_f1_classes"] == ["low", "medium", "high"]
    assert m.bootstrap_confusions(y_true, y_pred, n_boot=3).dtype == np.int64
    assert m.paired_bootstrap_confusions(y_true, [y_pred], n_boot=3).dtype == np.int64
    assert orjson.loads(orjson.dumps(doc))["per_class"]["high"]["support"] == 36


def test_macro_f1_classes_lists_the_present_ones_in_risk_order() -> None:
    # high and low present, medium absent
    y_true, y_pred = np.array([2, 0, 2], dtype=np.int64), np.array([0, 3, 2], dtype=np.int64)
    doc = headline_of(m.confusion(y_true, y_pred), y_true, y_pred, n_boot=0, seed=0)
    assert doc["macro_f1_classes"] == ["low", "high"]


def test_group_accuracy_of_no_cases() -> None:
    assert fig.group_accuracy([]) == {"n": 0, "correct": 0, "accuracy": None, "ci95": None}
    ci = binomtest(2, 3).proportion_ci(method="wilson")
    got = fig.group_accuracy([True, False, True])
    assert got["n"] == 3 and got["correct"] == 2 and got["accuracy"] == pytest.approx(2 / 3)
    assert got["ci95"] == pytest.approx([float(ci.low), float(ci.high)], abs=1e-12)


def test_breakdown_groups_numbers_first_then_names() -> None:
    tags = [("x",), ("10",), ("2",), ("b_1",), ("1500000000",), ("0",)]
    labels = [lab(f"FCB-{i + 1:04d}", "echo_cascade", tags=t) for i, t in enumerate(tags)]
    outcomes = {x.case_id: ok(x.case_id, "high") for x in labels}
    groups = fig.breakdowns(labels, outcomes)["tags"]
    assert list(groups) == ["0", "2", "10", "1500000000", "b_1", "x"]


def test_token_usage_says_how_many_tokens_were_counted_at_their_most() -> None:
    """Issue 45, item 2: replies without usable usage count at their worst; the figures say how many tokens so."""
    from dataclasses import replace

    outs = [replace(used("A", 120, 300), estimated_tokens=420), replace(used("B", 80, 7), estimated_tokens=80),
            used("C", 10, 5)]  # fmt: skip
    # 120 + 80 + 10 = 210 prompt, 300 + 7 + 5 = 312 completion; 420 + 80 = 500 of the 522 estimated
    assert fig.token_usage(outs, (None, None)) == {"prompt": 210, "completion": 312, "total": 522, "estimated": 500}
    assert "estimated" not in (fig.token_usage([used("C", 10, 5)], (None, None)) or {})
