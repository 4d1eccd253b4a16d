"""A threshold with a guarantee (`harness.threshold`): the Clopper-Pearson bound against its defining equation, the
choice worked out by hand on small dev sets, the refusal when no threshold can keep the promise, the check on a run,
and the guarantee itself by simulation: over many dev sets drawn from a population whose miss rate at every
threshold is known exactly, the promise fails no more often than the method allows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import binom

from harness.errors import UsageError
from harness.threshold import bounds, calibrate, check, choose, escalated, interval, missed_at, upper_bound


@pytest.mark.parametrize(("k", "n"), [(0, 45), (0, 10), (3, 100), (10, 60), (59, 60)])
def test_the_upper_bound_solves_its_binomial_equation(k: int, n: int) -> None:
    u = upper_bound(k, n, 0.9)
    assert binom.cdf(k, n, u) == pytest.approx(0.1)  # P(at most k misses | rate u) = 1 - confidence
    if k == 0:
        assert u == pytest.approx(1 - 0.1 ** (1 / n))  # the closed form for no miss
    assert upper_bound(n, n, 0.9) == 1.0
    assert bounds(np.array([k, n]), n, method="probable", confidence=0.9).tolist() == pytest.approx([u, 1.0])


def test_the_two_sided_interval() -> None:
    low, high = interval(3, 150)  # type: ignore[misc]
    assert binom.sf(2, 150, low) == pytest.approx(0.025) and binom.cdf(3, 150, high) == pytest.approx(0.025)
    assert interval(0, 10) == [0.0, pytest.approx(1 - 0.025 ** (1 / 10))] and interval(0, 0) is None


def test_the_interval_on_clustered_cases_is_the_interval_on_their_effective_counts() -> None:
    assert interval(30, 100, 2.0) == pytest.approx(interval(15, 50))  # type: ignore[arg-type]
    assert interval(0, 10, 2.0) == [0.0, pytest.approx(1 - 0.025 ** (1 / 5))]


def test_a_check_on_clustered_cases_widens_its_interval_by_their_design_effect() -> None:
    doc = calibrate(np.array([2, 2, 0]), np.array([0.9, 0.8, 0.1]), target=0.5, method="expected", confidence=0.9,
                    basis="risk_score", run="r", dataset="d", sha256="f" * 64, detector="builtin:x",
                    fingerprint="ab12")  # fmt: skip
    # six high cases: missed, missed, escalated, escalated, missed, escalated in clusters a a b b c d (the share's
    # design effect by hand in tests/test_design_effect.py: 50/27), and one low case in its own cluster
    y = np.array([2, 2, 2, 2, 2, 2, 0])
    s = np.array([0.1, 0.1, 0.9, 0.9, 0.1, 0.9, 0.9])
    got = check(doc, "t.json", y, s, [*"aabbcd", "e"])
    assert got["miss_rate_ci95"] == pytest.approx(interval(3, 6, 50 / 27))  # type: ignore[arg-type]
    assert check(doc, "t.json", y, s, [*"abcdef", "g"])["miss_rate_ci95"] == interval(3, 6)


def test_misses_at_each_candidate() -> None:
    # four high cases: 0.3, 0.8, 0.9 and one without a score (always missed)
    got = missed_at(np.array([0.9, 0.8, 0.3, np.nan]), np.array([0.1, 0.3, 0.5, 0.8, 0.9, np.inf]))
    assert got.tolist() == [1, 1, 2, 2, 3, 4]  # scored below t, plus the unscored one


def test_the_choice_by_hand_in_expectation() -> None:
    # labels: 4 high (0.9 0.8 0.3 none), 3 others (0.5 0.2 0.1). Bound (k + 1) / 5 <= 0.5: k <= 1
    y = np.array([2, 2, 2, 2, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.3, np.nan, 0.5, 0.2, 0.1])
    threshold, missed, bound = choose(y, s, target=0.5, method="expected", confidence=None)
    # candidates 0.1 0.2 0.3 0.5 0.8 0.9 inf: k = 1 1 1 2 2 3 4; the largest t with k <= 1 is 0.3
    assert (threshold, missed, bound) == (0.3, 1, pytest.approx(0.4))
    assert escalated(s, threshold).tolist() == [True, True, True, False, True, False, False]
    # a target every candidate meets: escalate none (the bound of missing all 4: 5/5 = 1)
    assert choose(y, s, target=1.0, method="expected", confidence=None) == (None, 4, 1.0)


def test_the_choice_by_hand_with_confidence() -> None:
    # 60 high cases scored 0.01 .. 0.60, 40 others scored 0.7: k(t) = the highs below t
    y = np.array([2] * 60 + [0] * 40)
    s = np.concatenate([np.arange(1, 61) / 100, np.full(40, 0.7)])
    threshold, missed, bound = choose(y, s, target=0.1, method="probable", confidence=0.9)
    # the largest k with upper_bound(k, 60) <= 0.1, worked out from the binomial itself
    k = max(k for k in range(61) if binom.cdf(k, 60, 0.1) >= 0.1 or (k == 0 and binom.cdf(0, 60, 0.1) >= 0.1))
    k = max(j for j in range(61) if beta_dist.ppf(0.9, j + 1, 60 - j) <= 0.1)
    assert missed == k and threshold == pytest.approx((k + 1) / 100) and bound <= 0.1
    assert upper_bound(k + 1, 60, 0.9) > 0.1  # one more miss would break it


def test_no_threshold_can_keep_the_promise_is_refused_naming_why() -> None:
    y, s = np.array([2] * 10), np.linspace(0.1, 1.0, 10)
    with pytest.raises(UsageError) as err:
        choose(y, s, target=0.1, method="probable", confidence=0.9)
    assert str(err.value) == (
        "no threshold keeps the miss rate at or under 0.1 (with 90% confidence): even escalating every case with a "
        f"score misses 0 of the 10 dev cases labelled high, a bound of {1 - 0.1**0.1:.3f}; a larger dev run (more "
        "cases labelled high) or a larger --miss-rate can"
    )
    with pytest.raises(UsageError) as err:
        choose(np.array([0, 1]), np.array([0.2, 0.4]), target=0.1, method="expected", confidence=None)
    assert str(err.value) == "the dev run has no case labelled high: there is no miss rate to bound"


def test_the_document_and_its_check() -> None:
    y = np.array([2, 2, 2, 2, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.3, np.nan, 0.5, 0.2, 0.1])
    doc = calibrate(y, s, target=0.5, method="expected", confidence=0.9, basis="risk_score", run="r", dataset="d",
                    sha256="f" * 64, detector="builtin:x", fingerprint="ab12")  # fmt: skip
    assert (doc["threshold"], doc["confidence"], doc["method"]) == (0.3, None, "expected")
    assert doc["dev"] == {"run": "r", "dataset": "d", "sha256": "f" * 64, "n_cases": 7, "n_false_consensus": 4,
                          "missed": 1, "miss_rate": 0.25, "bound": pytest.approx(0.4), "escalated": 4,
                          "escalation_rate": pytest.approx(4 / 7)}  # fmt: skip
    assert doc["promise"].startswith("Escalating the cases with risk score 0.3 or more misses at most 50.0%")
    # on a run: highs scored 0.2 (missed), 0.4, none (missed); two others, one escalated
    got = check(doc, "t.json", np.array([2, 2, 2, 0, 1]), np.array([0.2, 0.4, np.nan, 0.35, 0.1]))
    assert (got["missed"], got["miss_rate"], got["escalated"], got["escalation_rate"]) == (2, 2 / 3, 2, 0.4)
    assert got["within"] is False and got["miss_rate_ci95"] == interval(2, 3)
    none = check(doc, "t.json", np.array([0, 1]), np.array([0.9, 0.1]))
    assert (none["miss_rate"], none["within"], none["miss_rate_ci95"]) == (None, None, None)


def _population(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """A population: 40% false consensus scored Beta(5, 2), the rest Beta(2, 5); 2% of high cases unscored."""
    high = rng.random(n) < 0.4
    scores = np.where(high, rng.beta(5, 2, n), rng.beta(2, 5, n))
    scores[high & (rng.random(n) < 0.02)] = np.nan
    return np.where(high, 2, 0), scores


def _true_miss(threshold: float | None) -> float:
    """The population's miss rate at a threshold: unscored (2%) plus scored below it."""
    return 1.0 if threshold is None else 0.02 + 0.98 * float(beta_dist.cdf(threshold, 5, 2))


def test_the_promise_holds_with_its_confidence_over_many_dev_sets() -> None:
    rng = np.random.default_rng(2026)
    failures, rates, trials = 0, [], 400
    for _ in range(trials):
        y, s = _population(rng, 400)
        threshold, _, _ = choose(y, s, target=0.15, method="probable", confidence=0.9)
        true = _true_miss(threshold)
        failures += true > 0.15
        rates.append(true)
    # at most 10% of dev sets may break the promise: 3 binomial sd (0.015) of Monte Carlo slack above it
    assert failures / trials <= 0.1 + 3 * (0.1 * 0.9 / trials) ** 0.5
    assert 0.08 < np.mean(rates) < 0.15  # and the promise is not kept by escalating everything


def test_the_promise_in_expectation_holds_on_average_and_on_new_cases() -> None:
    rng = np.random.default_rng(7)
    true, observed = [], []
    for _ in range(400):
        y, s = _population(rng, 300)
        threshold, _, _ = choose(y, s, target=0.15, method="expected", confidence=None)
        true.append(_true_miss(threshold))
        y_new, s_new = _population(rng, 400)  # new cases: the observed miss rate, as fcb eval --threshold counts it
        high = y_new == 2
        observed.append((high & ~escalated(s_new, threshold)).sum() / high.sum())
    assert np.mean(true) <= 0.15 + 3 * np.std(true) / 20  # the mean over dev sets, with its Monte Carlo slack
    assert np.mean(observed) <= 0.15 + 3 * np.std(observed) / 20
    assert np.mean(true) > 0.1  # close to the target: not a promise kept by escalating everything


def test_every_field_of_the_document_and_of_its_check() -> None:
    y = np.array([2, 2, 2, 2, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.3, np.nan, 0.5, 0.2, 0.1])
    doc = calibrate(y, s, target=0.5, method="probable", confidence=0.5, basis="risk_score", run="r", dataset="d",
                    sha256="f" * 64, detector="builtin:x", fingerprint="ab12")  # fmt: skip
    # probable at confidence 0.5: the upper bound of k misses in 4 is the median of Beta(k + 1, 4 - k); k = 1 gives
    # 0.3857 <= 0.5, k = 2 gives 0.6143: the largest t with k(t) <= 1 is 0.3, as in expectation above
    created = doc.pop("created")  # type: ignore[misc]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", created)
    assert doc == {
        "fcb_threshold": 1, "basis": "risk_score", "threshold": 0.3, "miss_rate_target": 0.5, "method": "probable",
        "confidence": 0.5, "detector": "builtin:x", "fingerprint": "ab12",
        "dev": {"run": "r", "dataset": "d", "sha256": "f" * 64, "n_cases": 7, "n_false_consensus": 4, "missed": 1,
                "miss_rate": 0.25, "bound": pytest.approx(beta_dist.ppf(0.5, 2, 3)), "escalated": 4,
                "escalation_rate": pytest.approx(4 / 7)},
        "promise": "Escalating the cases with risk score 0.3 or more misses at most 50.0% of the false consensus on "
                   "new cases like the dev run's (with 50% confidence; 4 dev cases labelled high, 1 missed)",
    }  # fmt: skip
    none = calibrate(y, s, target=1.0, method="expected", confidence=0.9, basis="verdict", run="r", dataset="d",
                     sha256="f" * 64, detector="x", fingerprint="")  # fmt: skip
    assert none["threshold"] is None and none["confidence"] is None
    assert (
        none["promise"].startswith("Escalating no case misses at most 100.0%") and "(in expectation;" in none["promise"]
    )
    assert (none["dev"]["escalated"], none["dev"]["escalation_rate"]) == (0, 0.0)
    got = check(doc, "t.json", np.array([2, 2, 0, 0]), np.array([0.3, 0.1, 0.5, np.nan]))
    assert got == {
        "file": "t.json", "promise": doc["promise"], "miss_rate_target": 0.5, "basis": "risk_score", "threshold": 0.3,
        "n_cases": 4, "n_false_consensus": 2, "missed": 1, "miss_rate": 0.5, "miss_rate_ci95": interval(1, 2),
        "escalated": 2, "escalation_rate": 0.5, "within": True,  # 0.5 is at most the target of 0.5: within
    }  # fmt: skip
    assert check(doc, "t.json", np.array([], dtype=int), np.array([]))["escalation_rate"] is None


def test_no_threshold_escalates_nothing_and_an_interval_of_all_missed_reaches_one() -> None:
    nothing = escalated(np.array([0.9, np.nan, 0.1]), None)
    assert nothing.tolist() == [False, False, False] and nothing.dtype == bool
    assert escalated(np.array([]), None).tolist() == []
    low, high = interval(3, 3)  # type: ignore[misc]
    assert high == 1.0 and binom.sf(2, 3, low) == pytest.approx(0.025)


def test_reading_a_threshold_file(tmp_path: Path) -> None:
    from harness.threshold import read_threshold

    y = np.array([2, 2, 0])
    doc = calibrate(y, np.array([0.9, 0.8, 0.1]), target=0.5, method="expected", confidence=None, basis="risk_score",
                    run="r", dataset="d", sha256="f" * 64, detector="x", fingerprint="")  # fmt: skip
    good = tmp_path / "t.json"
    good.write_text(json.dumps(doc))
    assert read_threshold(good) == doc and read_threshold(str(good)) == doc
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**doc, "basis": "vibes"}))
    with pytest.raises(UsageError) as err:
        read_threshold(bad)
    assert str(err.value).startswith(f"--threshold {bad}: basis: ")
    with pytest.raises(UsageError) as err:
        read_threshold(tmp_path / "none.json")
    assert str(err.value) == f"--threshold {tmp_path / 'none.json'}: no such file; fcb threshold DEV_RUN writes one"
