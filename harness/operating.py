"""Operating points: what a detector costs and catches when its verdicts decide which agreed answers go to a person
before anyone acts on them (``metrics.operating_points``; docs/reports.md, "Operating points"). Pure functions of
per-case label and verdict codes and scores.

A case is *escalated* under a policy: ``high`` escalates the cases called high, ``high_or_medium`` those called
medium or high; along ``risk_score``, a threshold t escalates the cases scored t or more. A case without a verdict
(an error) or, for a threshold, without a score is never escalated: the detector gave nothing to act on, so these
figures hold for a deployment that lets such cases through (one that escalates them does at least as well on
catching). The false consensus is the cases labelled high; the right consensus, those labelled low.

- ``escalation_rate``: escalated / cases, the share of cases a person reviews;
- ``false_consensus_caught``: escalated and labelled high / labelled high;
- ``right_consensus_escalated``: escalated and labelled low / labelled low, the review spent on sound answers.

Risk-coverage (selective prediction): the cases a detector lets through, from the lowest risk up (by risk_score, or by
the verdict when the run has no score; cases without either let through first), and among them the share of false
consensus: the *risk* at each *coverage* (the share let through). Tied cases pass together. AURC = the sum over the
steps of (coverage gained) x (risk after the step): lower is better.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np

from harness.documents import OperatingPoint, OperatingPoints, RiskCoverage, ScoreOperatingPoint
from harness.metrics import ERROR, alone, cluster_totals, finite_interval, resample_counts

HIGH, MEDIUM, LOW = 2, 1, 0
T = TypeVar("T")
CURVE_POINTS = 101
"""At most this many points of a curve are kept in metrics.json (evenly spaced over its steps, both ends kept)."""


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.divide(num, den, out=np.full(np.shape(den), np.nan, dtype=float), where=den > 0)
    return out


def _kinds(escalated: np.ndarray, y_true: np.ndarray) -> np.ndarray:
    """Per case, 0 or 1 in each of the five counts `_rates` divides: case, escalated, labelled high, escalated and
    labelled high, labelled low, escalated and labelled low (six columns)."""
    high, low = y_true == HIGH, y_true == LOW
    columns = [np.ones_like(escalated), escalated, high, escalated & high, low, escalated & low]
    return np.stack(columns, axis=-1).astype(np.int64)


def _rates(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Escalation rate, false consensus caught and right consensus escalated from `_kinds`' six counts summed
    (the last axis), row by row (rows: resamples)."""
    cases, escalated, high, caught, low, alarmed = np.moveaxis(counts.astype(float), -1, 0)
    return _ratio(escalated, cases), _ratio(caught, high), _ratio(alarmed, low)


def _value(x: np.ndarray) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v


def operating_point(escalated: np.ndarray, y_true: np.ndarray, *, n_boot: int, seed: int,
                    clusters: np.ndarray | None = None) -> OperatingPoint:  # fmt: skip
    """One policy's figures, each with a percentile bootstrap interval resampling the cases' ``clusters``
    (`resample_counts`; default: each case alone)."""
    kinds = _kinds(escalated, y_true)
    rate, caught, alarmed = _rates(kinds.sum(axis=0))
    boots: list[list[np.ndarray]] = [[], [], []]
    if n_boot > 0 and len(y_true):
        totals = cluster_totals(alone(len(y_true)) if clusters is None else clusters, kinds)
        for counts in resample_counts(len(totals), n_boot=n_boot, seed=seed):
            for kept, figure in zip(boots, _rates(counts @ totals), strict=True):
                kept.append(figure)
    intervals = [finite_interval(np.concatenate(b)) if b else None for b in boots]
    return {
        "escalated": int(escalated.sum()),
        "escalation_rate": _value(rate),
        "escalation_rate_ci95": list(intervals[0]) if intervals[0] else None,
        "false_consensus_caught": _value(caught),
        "false_consensus_caught_ci95": list(intervals[1]) if intervals[1] else None,
        "right_consensus_escalated": _value(alarmed),
        "right_consensus_escalated_ci95": list(intervals[2]) if intervals[2] else None,
    }


def _thin(rows: list[T]) -> list[T]:
    """At most `CURVE_POINTS` rows, evenly spaced, the first and the last kept."""
    if len(rows) <= CURVE_POINTS:
        return rows
    picks = np.unique(np.linspace(0, len(rows) - 1, CURVE_POINTS).round().astype(int))
    return [rows[i] for i in picks]


def risk_coverage(y_true: np.ndarray, order: np.ndarray) -> RiskCoverage:
    """The risk-coverage curve and its area, ``order`` the cases' risk rank (ascending; NaN: no rank, let through
    first). Each point is (coverage, risk) after a group of tied cases."""
    n = len(y_true)
    if not n:
        return {"by": "risk_score", "aurc": None, "curve": []}
    ranked = np.where(np.isnan(order), -np.inf, order)
    values, counts = np.unique(ranked, return_counts=True)  # ascending, ties grouped
    highs = np.array([int((y_true[ranked == v] == HIGH).sum()) for v in values])
    passed, high_passed = np.cumsum(counts), np.cumsum(highs)
    coverage, risk = passed / n, high_passed / passed
    gained = np.diff(np.concatenate([[0.0], coverage]))
    curve = [[float(c), float(r)] for c, r in zip(coverage, risk, strict=True)]
    return {"by": "risk_score", "aurc": float((gained * risk).sum()), "curve": _thin(curve)}


def score_points(y_true: np.ndarray, scores: np.ndarray) -> list[ScoreOperatingPoint]:
    """Along risk_score: for each distinct score t (descending), the figures of escalating the cases scored t or
    more; thinned to `CURVE_POINTS`."""
    rows: list[ScoreOperatingPoint] = []
    for t in np.unique(scores[np.isfinite(scores)])[::-1]:
        rate, caught, alarmed = _rates(_kinds(np.isfinite(scores) & (scores >= t), y_true).sum(axis=0))
        rows.append({"threshold": float(t), "escalation_rate": float(rate), "false_consensus_caught": _value(caught),
                     "right_consensus_escalated": _value(alarmed)})  # fmt: skip
    return _thin(rows)


def operating_points(y_true: np.ndarray, y_pred: np.ndarray, scores: np.ndarray, *, n_boot: int, seed: int,
                     clusters: np.ndarray | None = None) -> OperatingPoints:  # fmt: skip
    """The ``operating_points`` block. ``y_pred``: verdict codes (3 an error); ``scores``: risk_score, NaN where a
    case has none; ``clusters``: each case's cluster (`harness.metrics.cluster_codes`; default: each case alone), what
    the intervals draw."""
    answered = y_pred != ERROR
    scored = bool(np.isfinite(scores).any())
    rank = scores if scored else np.where(answered, y_pred.astype(float), np.nan)
    curve = risk_coverage(y_true, rank)
    curve["by"] = "risk_score" if scored else "verdict"
    return {
        "n_cases": len(y_true),
        "n_false_consensus": int((y_true == HIGH).sum()),
        "n_right_consensus": int((y_true == LOW).sum()),
        "n_errors": int((~answered).sum()),
        "policies": {
            "high": operating_point(y_pred == HIGH, y_true, n_boot=n_boot, seed=seed, clusters=clusters),
            "high_or_medium": operating_point(
                (y_pred == HIGH) | (y_pred == MEDIUM), y_true, n_boot=n_boot, seed=seed, clusters=clusters
            ),
        },
        "risk_coverage": curve,
        "by_score": score_points(y_true, scores) if scored else [],
    }
