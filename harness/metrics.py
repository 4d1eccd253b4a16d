"""Metrics from predictions and labels: pure functions over arrays, in the fixed label order of `RISKS`.

Encoding used throughout: ``y_true`` holds 0, 1, 2 for low, medium, high; ``y_pred`` holds the same codes, or
`ERROR` (3) for a case whose detector failed. An errored case always counts as wrong; it is never dropped.

Undefined values, one policy: a figure that is undefined is None in Python and null in JSON, never 0 and never
NaN. Undefined means its denominator is empty: accuracy, macro-F1 and error rate of no cases; high-risk recall
without high-risk cases; false-alarm rate without low-risk cases; kappa without cases or without variation;
ROC-AUC without both classes; average precision without positives; Brier score, ECE and the whole ``scores``
block without scored cases; a group's accuracy and interval without cases. The array functions, which also take
batches of bootstrap resamples and are named after the figure they compute (`accuracy`, `macro_f1`,
`weighted_kappa`, `high_risk_recall`, `false_alarm_rate`, `error_rate`: the keys of `HEADLINE_METRICS`), give NaN
where a figure is undefined, every one of them alike; `defined` turns that into None for a document. One stated
exception: per-class precision, recall and F1 follow scikit-learn's ``zero_division=0`` (a class never predicted
has precision 0), so that macro-F1 is the figure other tools report.

Each figure has one implementation, here: the shortcut audit's macro-F1 over categories
(`fcb_datasets.audit`) is `macro_f1` of a square confusion matrix, and its intervals `bootstrap_confusions`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence

import numpy as np

from harness.types import RISKS, CaseLabels, Outcome

ERROR = 3
CODE = {r: i for i, r in enumerate(RISKS)}
Z95 = 1.959963984540054  # the 97.5% point of the standard normal


def encode(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome]) -> tuple[np.ndarray, np.ndarray]:
    """Arrays ``(y_true, y_pred)`` of shape (n,) for the labelled cases that have an outcome."""
    pairs = [(CODE[lab.expected_risk], _pred_code(outcomes[lab.case_id])) for lab in labels if lab.case_id in outcomes]
    arr = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
    return arr[:, 0], arr[:, 1]


def _pred_code(outcome: Outcome) -> int:
    return ERROR if outcome.risk is None else CODE[outcome.risk]


def confusion(y_true: np.ndarray, y_pred: np.ndarray, shape: tuple[int, int] = (3, 4)) -> np.ndarray:
    """The confusion matrix: by default 3x4, rows expected low/medium/high, columns predicted low/medium/high/error;
    ``shape`` (k, k) for k classes and no error column (the shortcut audit's categories)."""
    rows, cols = shape
    return np.bincount(y_true * cols + y_pred, minlength=rows * cols).reshape(rows, cols)


def _safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den, two arrays of one shape, with 0 where den is 0 (scikit-learn's ``zero_division=0``)."""
    result: np.ndarray = np.divide(num, den, out=np.zeros(den.shape), where=den != 0)
    return result


def per_class(cm: np.ndarray) -> dict[str, np.ndarray]:
    """Precision, recall, F1 and support per class from a k x (k + 1) matrix, the last column errors (3x4: the risk
    classes), or a k x k one, or a batch of either.

    Recall's denominator includes errored cases (a miss); precision's counts only answered predictions.
    """
    k = cm.shape[-2]
    tp = np.diagonal(cm[..., :k, :k], axis1=-2, axis2=-1)
    support = cm.sum(axis=-1)
    predicted = cm[..., :k, :k].sum(axis=-2)
    precision, recall = _safe_div(tp, predicted), _safe_div(tp, support)
    f1 = _safe_div(2 * precision * recall, precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1, "support": support}


def present_classes(cm: np.ndarray) -> np.ndarray:
    """Boolean mask of the classes that occur as a label or as a prediction (scikit-learn's default labels)."""
    k = cm.shape[-2]
    result: np.ndarray = (cm.sum(axis=1) > 0) | (cm[:, :k].sum(axis=0) > 0)
    return result


def macro_f1(cm: np.ndarray, classes: np.ndarray | None = None) -> np.ndarray:
    """Mean F1 over ``classes`` (default: the present ones); works on one matrix or a batch. NaN where no class
    is present (no cases)."""
    mask = present_classes(cm if cm.ndim == 2 else cm.sum(axis=0)) if classes is None else classes
    if not mask.any():
        return np.full(cm.shape[:-2], np.nan)
    result: np.ndarray = per_class(cm)["f1"][..., mask].mean(axis=-1)
    return result


# The shares below are NaN where undefined because their denominator is then 0 and so is their numerator: 0/0.


def accuracy(cm: np.ndarray) -> np.ndarray:
    """Share of cases whose prediction equals the label (the diagonal); errors are wrong. NaN without cases."""
    with np.errstate(invalid="ignore"):
        result: np.ndarray = np.trace(cm, axis1=-2, axis2=-1) / cm.sum(axis=(-2, -1))
        return result


def weighted_kappa(cm: np.ndarray) -> np.ndarray:
    """Quadratic-weighted Cohen's kappa over the answered cases of one or many matrices; NaN where undefined."""
    observed = cm[..., :3].astype(float)
    n = observed.sum(axis=(-2, -1))
    idx = np.arange(3)
    weights = (idx[:, None] - idx[None, :]) ** 2  # kappa does not change when the weights are scaled
    rows, cols = observed.sum(axis=-1), observed.sum(axis=-2)
    # Undefined without answered cases (n = 0: expected is 0/0) and without variation (the chance disagreement is
    # 0, and then so is the observed one): NaN by 0/0 in both.
    with np.errstate(invalid="ignore"):
        expected = rows[..., :, None] * cols[..., None, :] / n[..., None, None]
        result: np.ndarray = 1.0 - (weights * observed).sum(axis=(-2, -1)) / (weights * expected).sum(axis=(-2, -1))
        return result


def high_risk_recall(cm: np.ndarray) -> np.ndarray:
    """Share of high-risk cases predicted high (errors are misses); NaN without high-risk cases."""
    with np.errstate(invalid="ignore"):
        result: np.ndarray = cm[..., 2, 2] / cm[..., 2, :].sum(axis=-1)
        return result


def false_alarm_rate(cm: np.ndarray) -> np.ndarray:
    """Share of low-risk cases predicted high; NaN without low-risk cases."""
    with np.errstate(invalid="ignore"):
        result: np.ndarray = cm[..., 0, 2] / cm[..., 0, :].sum(axis=-1)
        return result


def error_rate(cm: np.ndarray) -> np.ndarray:
    """Share of cases whose detector failed; NaN without cases."""
    with np.errstate(invalid="ignore"):
        result: np.ndarray = cm[..., :, 3].sum(axis=-1) / cm.sum(axis=(-2, -1))
        return result


def defined(value: np.ndarray | float) -> float | None:
    """A scalar figure for a document: None where it is undefined (NaN), the float otherwise."""
    number = float(value)
    return None if np.isnan(number) else number


HEADLINE_METRICS: dict[str, bool] = {
    "accuracy": True,
    "macro_f1": True,
    "weighted_kappa": True,
    "high_risk_recall": True,
    "false_alarm_rate": False,
    "error_rate": False,
}
"""The headline metrics and whether higher is better."""


def headline_batch(cm: np.ndarray, classes: np.ndarray) -> dict[str, np.ndarray]:
    """Every headline metric of one or many confusion matrices (macro-F1 over the given ``classes``), by name."""
    return {
        "accuracy": accuracy(cm),
        "macro_f1": macro_f1(cm, classes),
        "weighted_kappa": weighted_kappa(cm),
        "high_risk_recall": high_risk_recall(cm),
        "false_alarm_rate": false_alarm_rate(cm),
        "error_rate": error_rate(cm),
    }


def wilson_interval(k: int, n: int, design_effect: float = 1.0) -> tuple[float, float] | None:
    """95% Wilson score interval for k successes in n trials; None when n is 0. With a ``design_effect`` (at least
    1), on Kish's effective sample size n / design_effect at the same share k / n."""
    if n == 0:
        return None
    p, z2, size = k / n, Z95 * Z95, n / design_effect
    centre = (p + z2 / (2 * size)) / (1 + z2 / size)
    half = Z95 * np.sqrt(p * (1 - p) / size + z2 / (4 * size * size)) / (1 + z2 / size)
    # At k = 0 or k = n the bound is exactly 0 or 1; rounding must not leave the observed rate outside
    lower = 0.0 if k == 0 else max(0.0, centre - half)
    upper = 1.0 if k == n else min(1.0, centre + half)
    return float(lower), float(upper)


def bootstrap_confusions(
    y_true: np.ndarray, y_pred: np.ndarray, *, n_boot: int = 1000, seed: int = 0, chunk: int = 100,
    shape: tuple[int, int] = (3, 4), clusters: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Confusion matrices of ``n_boot`` resamples (with replacement) of the cases, or of their ``clusters``: shape
    (n_boot, *shape).

    Seeded, so the same inputs give the same intervals. Built in chunks to keep memory at chunk x clusters.
    """
    result: np.ndarray = paired_bootstrap_confusions(
        y_true, [y_pred], n_boot=n_boot, seed=seed, chunk=chunk, shape=shape, clusters=clusters
    )[0]
    return result


def memory_chunk(n: int, budget: int = 250_000) -> int:
    """Resamples per chunk so that a chunk's index array holds about ``budget`` entries (2 MB) whatever n is."""
    return max(1, min(100, budget // max(n, 1)))


def resample_indices(n: int, *, n_boot: int, seed: int, chunk: int) -> Iterator[np.ndarray]:
    """The bootstrap's draws: ``n_boot`` resamples of n units (with replacement), as index arrays of ``chunk`` rows
    (the last may have fewer). Every interval of a run draws from here, through `resample_counts`: they depend only
    on (n, n_boot, seed, chunk)."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, chunk):
        yield rng.integers(0, n, size=(min(chunk, n_boot - start), n))


def cluster_codes(keys: Iterable[Hashable]) -> np.ndarray:
    """Each case's cluster, numbered 0, 1, ... in order of first appearance. Cases that are each their own cluster
    get 0..n-1, their own positions, so that their cluster draws are the case bootstrap's draws."""
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)


class Joined:
    """Sets of 0..n-1 joined pair by pair (union-find, with path halving): `join` puts two in one set, `root` names
    a set by its smallest member. The benchmark's question families and the clusters two runs put together are both
    built with it."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def root(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(self, i: int, j: int) -> None:
        a, b = self.root(i), self.root(j)
        self.parent[max(a, b)] = min(a, b)


def alone(n: int) -> np.ndarray:
    """The clusters of n independent cases: each case its own."""
    return np.arange(n, dtype=np.int64)


def resample_counts(k: int, *, n_boot: int, seed: int, chunk: int | None = None) -> Iterator[np.ndarray]:
    """The cluster bootstrap's draws: each of ``n_boot`` resamples draws k of the k clusters with replacement
    (`resample_indices`), as arrays of shape (rows, k) counting how often each cluster was drawn. A figure that
    sums over cases sums each drawn cluster's cases as many times: `cluster_totals`, then ``counts @ totals``.

    ``chunk`` defaults to `memory_chunk` (k); a caller whose cases outnumber its clusters passes its own."""
    step = memory_chunk(k) if chunk is None else chunk
    for idx in resample_indices(k, n_boot=n_boot, seed=seed, chunk=step):
        rows = len(idx)
        flat = (idx + k * np.arange(rows)[:, None]).ravel()
        yield np.bincount(flat, minlength=rows * k).reshape(rows, k)


def cluster_totals(clusters: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sums of ``values`` (one row a case: shape (n,) or (n, m)) within each cluster: shape (k,) or (k, m)."""
    k = int(clusters.max()) + 1 if len(clusters) else 0
    out = np.zeros((k, *values.shape[1:]), dtype=np.result_type(values.dtype, np.int64))
    np.add.at(out, clusters, values)
    return out


def case_weights(counts: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """How often each case counts in each resample, (rows, n), from the clusters' counts (rows, k)."""
    result: np.ndarray = counts[:, clusters]
    return result


def paired_bootstrap_confusions(
    y_true: np.ndarray, y_preds: Sequence[np.ndarray], *, n_boot: int = 1000, seed: int = 0, chunk: int = 100,
    shape: tuple[int, int] = (3, 4), clusters: np.ndarray | None = None,
) -> np.ndarray:  # fmt: skip
    """Bootstrap confusion matrices of several prediction arrays on the *same* resamples: shape (k, n_boot, *shape).

    Pairing matters: the difference between two detectors is measured on identical case draws, so case
    difficulty cancels out. ``clusters`` (`cluster_codes`; default: each case alone) are what is drawn: a drawn
    cluster brings all its cases. The draws depend only on (clusters, n_boot, seed, chunk).
    """
    rows, cols = shape
    groups = alone(len(y_true)) if clusters is None else clusters
    k = int(groups.max()) + 1 if len(groups) else 0
    cells = rows * cols
    # one row a cluster: its cases' confusion counts, so that a resample's matrix is its counts times these rows
    tables = [np.bincount(groups * cells + y_true * cols + p, minlength=k * cells).reshape(k, cells) for p in y_preds]
    out = np.empty((len(tables), n_boot, rows, cols), dtype=np.int64)
    start = 0
    for counts in resample_counts(k, n_boot=n_boot, seed=seed, chunk=chunk):
        b = len(counts)
        for k, table in enumerate(tables):
            out[k, start : start + b] = (counts @ table).reshape(b, rows, cols)
        start += b
    return out


def paired_headline(
    y_true: np.ndarray, y_preds: Sequence[np.ndarray], *, n_boot: int, seed: int, clusters: np.ndarray | None = None
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every headline metric of several prediction arrays over the same cases: the point values (one per array)
    and the values on `paired_bootstrap_confusions`' resamples (arrays x resamples).

    Macro-F1 averages over the classes present in any of the arrays, so that all values are over the same classes.
    """
    cms = np.stack([confusion(y_true, y_pred) for y_pred in y_preds])
    classes = present_classes(cms.sum(axis=0))
    boots = paired_bootstrap_confusions(
        y_true, y_preds, n_boot=n_boot, seed=seed, chunk=memory_chunk(len(y_true)), clusters=clusters
    )
    return headline_batch(cms, classes), headline_batch(boots, classes)


def finite_interval(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float] | None:
    """The central (1 - alpha) of the finite bootstrap values; None when no value is finite."""
    finite = values[np.isfinite(values)]
    if not len(finite):
        return None
    lo, hi = np.percentile(finite, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def percentile_interval(values: np.ndarray) -> tuple[float, float]:
    """The central 95% of bootstrap values."""
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of ``values``, ties sharing their average rank (scipy's ``rankdata``, without its import)."""
    order = np.argsort(values)  # any order within ties: a tie group shares one rank
    ordered = values[order]
    new_group = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(new_group)
    ends = np.r_[starts[1:], len(values)]
    ranks = np.empty(len(values))
    ranks[order] = ((starts + ends + 1) / 2)[np.cumsum(new_group) - 1]
    return ranks


def roc_auc(y_binary: np.ndarray, scores: np.ndarray) -> float | None:
    """Area under the ROC curve (Mann-Whitney form, ties count half); None without both classes."""
    pos = y_binary.astype(bool)
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(scores)
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def average_precision(y_binary: np.ndarray, scores: np.ndarray) -> float | None:
    """Average precision: sum over score thresholds of (recall step) x precision; None without positives."""
    n_pos = int(y_binary.sum())
    if n_pos == 0:
        return None
    order = np.argsort(-scores)  # any order within ties: only the counts at each tie's end are read
    s, y = scores[order], y_binary[order]
    last_of_tie = np.r_[np.flatnonzero(np.diff(s)), len(s) - 1]
    tps = np.cumsum(y)[last_of_tie]
    precision = tps / (last_of_tie + 1)
    recall = tps / n_pos
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def brier(y_binary: np.ndarray, scores: np.ndarray) -> float | None:
    """Mean squared difference between the score and the 0/1 outcome; None for no cases."""
    return float(np.mean((scores - y_binary) ** 2)) if len(scores) else None
