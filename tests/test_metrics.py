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
    roc_auc_score,
)

from harness import metrics as m
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
    assert all(m.headline(cm, np.array([], dtype=np.int64), np.array([], dtype=np.int64), n_boot=0, seed=0)[name]
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


@pytest.fixture(scope="module")
def result() -> dict:
    return m.compute(LABELS, OUTCOMES, wall_s=5.0, n_boot=400, seed=3)


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
    assert "accuracy_ci95" not in m.compute(LABELS, OUTCOMES, wall_s=5.0, n_boot=0)


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
    res = m.compute([], {}, wall_s=0.0)
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
    res = m.compute(labels, outcomes, wall_s=wall_s, n_boot=n_boot, seed=seed)
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
    from harness.datasets.audit.baselines import macro_f1_interval

    k, pairs = data
    y_true, y_pred = (np.array(side, dtype=np.int64) for side in zip(*pairs, strict=True))
    labels = sorted(set(y_true.tolist()) | set(y_pred.tolist()))
    expected = f1_score(y_true, y_pred, average="macro", labels=labels, zero_division=0)
    assert float(m.macro_f1(m.confusion(y_true, y_pred, (k, k)))) == pytest.approx(expected, abs=1e-12)
    point, (lo, hi) = macro_f1_interval(y_true, y_pred, k, n_boot=50, seed=0)
    assert point == pytest.approx(expected, abs=1e-12) and 0.0 <= lo <= hi <= 1.0
