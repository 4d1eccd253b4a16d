"""Calibration of ``risk_score`` as the probability of high risk (high against the rest): the expected calibration
error (ECE) over equal-width bins, its bootstrap values, and the reliability diagram.

The bins are those of scikit-learn's ``calibration_curve(strategy="uniform")``: ``n_bins`` bins of [0, 1] with the
edges ``numpy.linspace(0, 1, n_bins + 1)`` (floats), closed on the right: bin k holds the scores s with
edge[k] < s <= edge[k + 1], and the first bin holds 0 too. So a score of exactly 1 is in the last bin, a score of
exactly 0 in the first, and a score on an inner edge in the bin below it. `bin_ids` is that rule, the very call
``calibration_curve`` makes; the tests hold the diagram to what ``calibration_curve`` gives.

With N scored cases, n_b of them in bin b, o_b the share of high risk among them and m_b their mean score::

    ECE = sum over bins of n_b / N * |o_b - m_b|   (an empty bin adds nothing)

which is also |the sum of (y_i - s_i) over the bin's cases| summed over the bins, divided by N: the form `ece`
computes, on the cases and on each resample alike.
Guo et al., "On Calibration of Modern Neural Networks", ICML 2017, use 15 bins: the default
(`harness.vocabulary.DEFAULT_BINS`).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from harness.documents import Calibration, ReliabilityBin


def bin_edges(n_bins: int) -> np.ndarray:
    """The ``n_bins + 1`` edges of the equal-width bins of [0, 1], as ``calibration_curve`` draws them."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def bin_ids(scores: np.ndarray, n_bins: int) -> np.ndarray:
    """Each score's bin, 0 .. n_bins - 1, by ``calibration_curve``'s own rule (a score on an inner edge goes to the
    bin below it)."""
    return np.searchsorted(bin_edges(n_bins)[1:-1], scores)


def ece(y_high: np.ndarray, scores: np.ndarray, n_bins: int) -> float:
    """The ECE of ``scores`` (at least one) against ``y_high`` (1 for high risk, 0 for the rest)."""
    return float(ece_resamples(y_high, scores, n_bins, [np.ones((1, len(scores)), dtype=np.int64)])[0])


def ece_resamples(
    y_high: np.ndarray, scores: np.ndarray, n_bins: int, draws: Iterable[np.ndarray], clusters: np.ndarray | None = None
) -> np.ndarray:
    """The ECE of each resample: ``draws`` yields at least one array of shape (resamples, k), how often each of the
    k ``clusters`` (each case's, 0..k-1; default: each case its own) was drawn
    (`harness.metrics.resample_counts`). n_b/N * |o_b - m_b| is
    |the sum of (y - s) over the bin| / N, so one weighted count a bin and cluster gives every ECE at once, without
    a loop over resamples."""
    groups = np.arange(len(scores)) if clusters is None else clusters
    k = int(groups.max()) + 1
    keys = groups * n_bins + bin_ids(scores, n_bins)
    gaps = np.bincount(keys, weights=y_high - scores, minlength=k * n_bins).reshape(k, n_bins)
    sizes = np.bincount(groups, minlength=k)
    return np.concatenate([np.abs(counts @ gaps).sum(axis=1) / (counts @ sizes) for counts in draws])


def reliability(y_high: np.ndarray, scores: np.ndarray, n_bins: int) -> list[ReliabilityBin]:
    """The reliability diagram: per bin, its edges, the count of scored cases, their mean score and the observed
    share of high risk among them (both None for an empty bin).

    The same bins and sums as scikit-learn's ``calibration_curve(strategy="uniform")``, which the tests hold it to,
    plus the counts it does not give and the empty bins it leaves out. Not a call to it: importing
    ``sklearn.calibration`` takes 2 to 3 s, which every ``fcb eval`` with scores would pay (and the test suite
    hundreds of times) for three bincounts."""
    ids = bin_ids(scores, n_bins)
    counts = np.bincount(ids, minlength=n_bins)
    seen = np.maximum(counts, 1)  # an empty bin's sums are 0: divided by 1, and shown as None below
    mean_score = np.bincount(ids, weights=scores, minlength=n_bins) / seen
    share_high = np.bincount(ids, weights=y_high, minlength=n_bins) / seen
    edges = bin_edges(n_bins)
    return [
        {"lower": float(edges[k]), "upper": float(edges[k + 1]), "count": int(counts[k]),
         "mean_score": float(mean_score[k]) if counts[k] else None,  # an empty bin has none: never 0 or NaN
         "share_high": float(share_high[k]) if counts[k] else None}
        for k in range(n_bins)
    ]  # fmt: skip


def calibration(
    y_high: np.ndarray, scores: np.ndarray, n_bins: int, draws: Iterable[np.ndarray] | None,
    clusters: np.ndarray | None = None,
) -> Calibration:  # fmt: skip
    """The ``calibration`` block of the score metrics for at least one scored case: the bin count, the ECE, its
    95% percentile interval over the resamples ``draws`` yields (none: no interval; `ece_resamples`) and the
    diagram."""
    error = ece(y_high, scores, n_bins)
    if draws is None:
        return {"bins": n_bins, "ece": error, "diagram": reliability(y_high, scores, n_bins)}
    lo, hi = np.percentile(ece_resamples(y_high, scores, n_bins, draws, clusters), [2.5, 97.5])
    return {"bins": n_bins, "ece": error, "ece_ci95": [float(lo), float(hi)],
            "diagram": reliability(y_high, scores, n_bins)}  # fmt: skip
