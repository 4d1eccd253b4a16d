"""The noise-aware gate of ``fcb compare``: a hierarchical paired bootstrap over cases and their epochs, one-sided
bootstrap p-values of a regression, and Holm's step-down over the metrics gated together. Pure functions.

A run with ``--epochs N`` keeps N verdicts a case. Its headline is computed on one verdict a case, reduced by the
run's reducer (`harness.epochs`). To let the detector's own randomness into the interval, each resample draws cases
with replacement (their clusters, as the runs' journals name them; the same draw for both runs: paired) and, within
each drawn case, draws that run's epochs with replacement, and computes the headline figures on every drawn epoch's
verdict (`POOLED`: the confusion matrix summed over the epochs), or on the drawn epochs reduced as a reducer does
(`reduce_draws`). ``fcb compare`` gates on the pooled figures: their bootstrap is centred on the observed change,
while the mode of epochs drawn with replacement is noisier than the run's own mode, which shifts the resampled
change by an amount that is itself noise (docs/leaderboards.md gives the measurements).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist

import numpy as np

from harness.metrics import (
    ERROR,
    alone,
    case_weights,
    confusion,
    headline_batch,
    memory_chunk,
    paired_bootstrap_confusions,
    present_classes,
    resample_counts,
)

POOLED = "pooled"
"""Not a reducer: every epoch's verdict counts (the confusion matrix summed over the epochs)."""
ANSWERED = 3
"""Verdict codes 0..2 (low, medium, high) vote; 3 (an error) does not."""


def reduce_draws(verdicts: np.ndarray, reducer: str) -> np.ndarray:
    """The reduced verdict of each row of epochs (the last axis, in draw order), by the rules of
    `harness.epochs.reduce_case`: ``first``, the first epoch's verdict as it is (an error included); ``mode``, the
    most frequent answered verdict, a tie to the tied verdict drawn first, an error when no epoch answered."""
    if reducer == "first":
        return verdicts[..., 0]
    n = verdicts.shape[-1]
    hits = verdicts[..., None] == np.arange(ANSWERED)  # (..., N, 3)
    counts = hits.sum(axis=-2)
    first_seen = np.where(hits, np.arange(n)[:, None], n).min(axis=-2)  # (..., 3): n where never drawn
    top = counts.max(axis=-1)
    rank = np.where(counts == top[..., None], first_seen, n + 1)  # only the tied-top verdicts compete
    return np.where(top == 0, ERROR, rank.argmin(axis=-1))


def hierarchical_confusions(
    y_true: np.ndarray, epoch_sets: Sequence[np.ndarray], *, reducers: Sequence[str], n_boot: int, seed: int,
    clusters: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Confusion matrices of several runs on the same resamples: shape (runs, n_boot, 3, 4).

    ``epoch_sets``: one (cases, N_k) array of verdict codes per run, rows aligned with ``y_true``, reduced by that
    run's reducer (``reducers``). The cases' ``clusters`` (default: each case alone) are drawn by
    `harness.metrics.resample_counts` (seed ``seed``), a drawn cluster bringing all its cases; each copy of a drawn
    case draws its run's epochs afresh, by a generator of its own (seed ``[seed, 1]``), so that the cluster draws
    are those of the one-epoch paired bootstrap."""
    n = len(y_true)
    groups = alone(n) if clusters is None else clusters
    epoch_rng = np.random.default_rng([seed, 1])
    out = np.empty((len(epoch_sets), n_boot, 3, 4), dtype=np.int64)
    start = 0
    chunk = max(1, memory_chunk(n * max(e.shape[1] for e in epoch_sets)))
    for counts in resample_counts(int(groups.max()) + 1, n_boot=n_boot, seed=seed, chunk=chunk):
        b = len(counts)
        weights = case_weights(counts, groups)  # (b, n): how often each case was drawn in each resample
        copies = np.repeat(np.tile(np.arange(n), b), weights.ravel())  # every drawn copy of a case, row by row
        base = 12 * np.repeat(np.arange(b), weights.sum(axis=1)) + 4 * y_true[copies]  # its resample and label
        for k, epochs in enumerate(epoch_sets):
            picks = epoch_rng.integers(0, epochs.shape[1], size=(len(copies), epochs.shape[1]))
            drawn = epochs[copies[:, None], picks]  # (copies, N_k)
            # POOLED: every drawn epoch's verdict counts; otherwise the copy's reduced verdict
            codes = base[:, None] + drawn if reducers[k] == POOLED else base + reduce_draws(drawn, reducers[k])
            out[k, start : start + b] = np.bincount(codes.ravel(), minlength=12 * b).reshape(b, 3, 4)
        start += b
    return out


def hierarchical_headline(
    y_true: np.ndarray, epoch_sets: Sequence[np.ndarray], *, reducers: Sequence[str], n_boot: int, seed: int,
    clusters: np.ndarray | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:  # fmt: skip
    """Every headline metric of the runs (the point values, one per run) and on the `hierarchical_confusions`
    resamples (runs x resamples), macro-F1 over the classes present in any run. The point value is the figure on
    every epoch's verdict (`POOLED`) or on the verdicts reduced over all of a case's epochs."""
    cms = np.stack([_point_confusion(y_true, e, r) for e, r in zip(epoch_sets, reducers, strict=True)])
    classes = present_classes(cms.sum(axis=0))
    boots = hierarchical_confusions(y_true, epoch_sets, reducers=reducers, n_boot=n_boot, seed=seed,
                                    clusters=clusters)  # fmt: skip
    return headline_batch(cms, classes), headline_batch(boots, classes)


def _point_confusion(y_true: np.ndarray, epochs: np.ndarray, reducer: str) -> np.ndarray:
    if reducer == POOLED:
        return confusion(np.repeat(y_true, epochs.shape[1]), epochs.ravel())
    return confusion(y_true, reduce_draws(epochs, reducer))


def regression_p(worse: np.ndarray) -> float | None:
    """The one-sided bootstrap p-value of "the metric got worse": the share of the finite resampled changes,
    signed so that positive is worse, that show no worsening (<= 0). None when no resample is finite."""
    finite = worse[np.isfinite(worse)]
    if not len(finite):
        return None
    return float(np.mean(finite <= 0))


POWER = 0.8
"""The power at which `detectable` states the smallest change a comparison could detect."""


def detectable(change: np.ndarray, alpha: float, power: float = POWER) -> float | None:
    """The minimum detectable effect of a paired comparison: (z(1 - alpha) + z(power)) x the bootstrap sd of the
    change, the smallest worsening a one-sided test at ``alpha`` finds with probability ``power`` (the normal
    approximation, the change's spread as its standard error). None with fewer than two finite resamples."""
    finite = change[np.isfinite(change)]
    if len(finite) < 2:
        return None
    z = NormalDist()
    return float((z.inv_cdf(1 - alpha) + z.inv_cdf(power)) * finite.std(ddof=1))


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm's step-down adjusted p-values: sorted ascending p_(1) <= ... <= p_(m), the adjusted p_(i) is
    max over j <= i of min(1, (m - j + 1) p_(j)). Rejecting where the adjusted p < alpha keeps the chance of any
    false rejection among the m hypotheses at alpha or less, whatever their dependence (Holm 1979)."""
    m = len(pvalues)
    out: dict[str, float] = {}
    running = 0.0
    for j, (name, p) in enumerate(sorted(pvalues.items(), key=lambda kv: kv[1])):
        running = max(running, min(1.0, (m - j) * p))
        out[name] = running
    return out


def cluster_headline(
    y_true: np.ndarray, y_preds: Sequence[np.ndarray], clusters: np.ndarray, *, n_boot: int, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every headline metric of several prediction arrays over the same rows (one row a (case, epoch) pair), the
    point values and the values on resamples that draw the rows' ``clusters`` (0..k-1: a case, or the cluster of
    cases it belongs to) with replacement and keep all of a drawn cluster's rows: runs x resamples."""
    cms = np.stack([confusion(y_true, p) for p in y_preds])
    classes = present_classes(cms.sum(axis=0))
    boots = paired_bootstrap_confusions(y_true, y_preds, n_boot=n_boot, seed=seed, chunk=memory_chunk(len(y_true)),
                                        clusters=clusters)  # fmt: skip
    return headline_batch(cms, classes), headline_batch(boots, classes)
