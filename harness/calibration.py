"""Calibration of ``risk_score`` as the probability of high risk (high against the rest): the expected calibration
error (ECE) over equal-width bins, its bootstrap values, and the reliability diagram.

The bins are those of scikit-learn's ``calibration_curve(strategy="uniform")``: ``n_bins`` bins of [0, 1] with the
edges ``numpy.linspace(0, 1, n_bins + 1)`` (floats), closed on the right: bin k holds the scores s with
edge[k] < s <= edge[k + 1], and the first bin holds 0 too. So a score of exactly 1 is in the last bin, a score of
exactly 0 in the first, and a score on an inner edge in the bin below it. `bin_ids` is that rule, the very call
``calibration_curve`` makes, so that the counts taken here (it gives none) belong to the means it gives.

With N scored cases, n_b of them in bin b, o_b the share of high risk among them and m_b their mean score::

    ECE = sum over bins of n_b / N * |o_b - m_b|   (an empty bin adds nothing)

which is also |sum over b of (y_i - s_i)| summed over the bins, divided by N: the form the resamples use (`ece`).
Guo et al., "On Calibration of Modern Neural Networks", ICML 2017, use 15 bins: the default (`DEFAULT_BINS`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

DEFAULT_BINS = 15
AGREEMENT = 1e-9
"""How far the ECE read off scikit-learn's diagram may lie from `ece` on the same cases (float rounding only)."""


def bin_edges(n_bins: int) -> np.ndarray:
    """The ``n_bins + 1`` edges of the equal-width bins of [0, 1], as ``calibration_curve`` draws them."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def bin_ids(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Each score's bin, 0 .. n_bins - 1, by ``calibration_curve``'s own rule (a score on an inner edge goes to the
    bin below it)."""
    return np.searchsorted(bin_edges(n_bins)[1:-1], scores)


def ece(y_high: np.ndarray, scores: np.ndarray, n_bins: int) -> float:
    """The ECE of ``scores`` against ``y_high`` (1 for high risk, 0 for the rest); NaN without cases."""
    draws = np.arange(len(scores))[None, :]
    return float(ece_resamples(y_high, scores, n_bins, [draws])[0]) if len(scores) else float("nan")


def ece_resamples(y_high: np.ndarray, scores: np.ndarray, n_bins: int, draws: Iterable[np.ndarray]) -> np.ndarray:
    """The ECE of each resample: ``draws`` yields index arrays of shape (resamples, n), a resample a row (the cases
    drawn, with replacement). n_b/N * |o_b - m_b| is |the sum of (y - s) over the bin| / N, so one weighted count a
    bin and resample gives every ECE at once, without a loop over resamples."""
    ids, gap = bin_ids(scores, n_bins), y_high - scores
    out = []
    for idx in draws:
        rows = idx.shape[0]
        offsets = n_bins * np.arange(rows)[:, None]
        sums = np.bincount((ids[idx] + offsets).ravel(), weights=gap[idx].ravel(), minlength=n_bins * rows)
        out.append(np.abs(sums.reshape(rows, n_bins)).sum(axis=1) / idx.shape[1])
    return np.concatenate(out) if out else np.empty(0)


def reliability(y_high: np.ndarray, scores: np.ndarray, n_bins: int) -> list[dict[str, Any]]:
    """The reliability diagram: per bin, its edges, the count of scored cases, their mean score and the observed
    share of high risk among them (both None for an empty bin). Means from scikit-learn's ``calibration_curve``
    (which leaves empty bins out and gives no counts), counts from numpy on the same edges."""
    from sklearn.calibration import calibration_curve  # about 2 s to import: only runs with scores pay it

    share_high, mean_score = calibration_curve(y_high, scores, n_bins=n_bins, strategy="uniform", pos_label=1)
    counts = np.bincount(bin_ids(scores, n_bins), minlength=n_bins)
    filled = np.flatnonzero(counts)
    if len(filled) != len(mean_score):  # our bins are not scikit-learn's: no diagram rather than a wrong one
        raise ValueError(f"calibration_curve gave {len(mean_score)} bins with cases, numpy counts {len(filled)}")
    edges = bin_edges(n_bins)
    diagram: list[dict[str, Any]] = [
        {"lower": float(edges[k]), "upper": float(edges[k + 1]), "count": int(counts[k]),
         "mean_score": None, "share_high": None}
        for k in range(n_bins)
    ]  # fmt: skip
    for k, mean, share in zip(filled, mean_score, share_high, strict=True):
        diagram[k]["mean_score"], diagram[k]["share_high"] = float(mean), float(share)
    return diagram


def diagram_ece(diagram: list[dict[str, Any]]) -> float:
    """ECE read off a reliability diagram: the sum over bins of count / N * |share of high - mean score|."""
    n = sum(b["count"] for b in diagram)
    return sum(b["count"] / n * abs(b["share_high"] - b["mean_score"]) for b in diagram if b["count"])


def calibration(
    y_high: np.ndarray, scores: np.ndarray, n_bins: int, draws: Iterable[np.ndarray] | None
) -> dict[str, Any]:
    """The ``calibration`` block of the score metrics for at least one scored case: the bin count, the ECE, its
    95% percentile interval over the resamples ``draws`` yields (none: no interval) and the diagram."""
    diagram = reliability(y_high, scores, n_bins)
    value = diagram_ece(diagram)
    check = ece(y_high, scores, n_bins)
    if abs(value - check) > AGREEMENT:  # two routes to one figure: a disagreement is a bug, never a report
        raise ValueError(f"ECE {value!r} from the reliability diagram, {check!r} from the bin sums")
    block: dict[str, Any] = {"bins": n_bins, "ece": value}
    if draws is not None:
        lo, hi = np.percentile(ece_resamples(y_high, scores, n_bins, draws), [2.5, 97.5])
        block["ece_ci95"] = [float(lo), float(hi)]
    block["diagram"] = diagram
    return block
