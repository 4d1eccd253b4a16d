"""Compare two runs on the same data set case by case: paired-bootstrap deltas, per-category deltas, flipped cases.

Pure functions over aligned arrays (`harness.leaderboard.runs.align`); `compare_runs` is the whole comparison as a dict.
"""

from __future__ import annotations

import numpy as np

from harness.documents import CategoryDelta, CompareDocument, Flipped, FlippedCase, MetricDelta
from harness.errors import IncomparableRuns
from harness.leaderboard.runs import REAL_SUFFIX, Run, align, aligned_origins, real_mask
from harness.metrics import HEADLINE_METRICS, finite_interval, paired_headline

REAL_METRICS = ("macro_f1",)
"""Headline metrics also compared on the natural + assembled cases alone, when the cases carry origin tags."""


def _value(x: np.ndarray) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v


def metric_deltas(
    y_true: np.ndarray, base: np.ndarray, new: np.ndarray, *, alpha: float, max_drop: float, n_boot: int, seed: int
) -> dict[str, MetricDelta]:
    """Each headline metric for both runs, the delta (new - base) and its paired-bootstrap (1 - alpha) interval.

    ``regression`` is true when the metric got worse by more than ``max_drop`` and the interval excludes zero.
    """
    point, boot = paired_headline(y_true, [base, new], n_boot=n_boot, seed=seed)
    out: dict[str, MetricDelta] = {}
    for name, higher_better in HEADLINE_METRICS.items():
        b, n = _value(point[name][0]), _value(point[name][1])
        delta = None if b is None or n is None else n - b
        interval = finite_interval(boot[name][1] - boot[name][0], alpha)
        worse = None if delta is None else (-delta if higher_better else delta)
        significant = interval is not None and (interval[1] < 0 if higher_better else interval[0] > 0)
        out[name] = {
            "base": b,
            "new": n,
            "delta": delta,
            "ci": list(interval) if interval else None,
            "higher_is_better": higher_better,
            "regression": bool(worse is not None and worse > max_drop and significant),
        }
    return out


def category_deltas(
    categories: np.ndarray, y_true: np.ndarray, base: np.ndarray, new: np.ndarray
) -> dict[str, CategoryDelta]:
    """Accuracy per category in both runs and the change."""
    out: dict[str, CategoryDelta] = {}
    for cat in sorted(set(categories)):
        mask = categories == cat
        b, n = float(np.mean(base[mask] == y_true[mask])), float(np.mean(new[mask] == y_true[mask]))
        out[str(cat)] = {"n": int(mask.sum()), "base": b, "new": n, "delta": n - b}
    return out


def flipped(ids: np.ndarray, categories: np.ndarray, y_true: np.ndarray, base: np.ndarray, new: np.ndarray) -> Flipped:
    """Cases right in one run and wrong in the other, with their ids and categories."""
    right_base, right_new = base == y_true, new == y_true

    def listing(mask: np.ndarray) -> list[FlippedCase]:
        return [{"id": str(i), "category": str(c)} for i, c in zip(ids[mask], categories[mask], strict=True)]

    return {"right_to_wrong": listing(right_base & ~right_new), "wrong_to_right": listing(~right_base & right_new)}


def compare_runs(
    base: Run, new: Run, *, max_drop: float = 0.01, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0
) -> CompareDocument:
    """The whole comparison of ``new`` against ``base``. Raises `IncomparableRuns` for different data sets."""
    if base.sha256 != new.sha256:
        raise IncomparableRuns(
            f"{base.path} and {new.path} are on different data sets "
            f"(sha256 {base.sha256[:12]} vs {new.sha256[:12]}); compare runs on the same cases"
        )
    ids, categories, y_true, (b, n) = align([base, new])
    metrics = metric_deltas(y_true, b, n, alpha=alpha, max_drop=max_drop, n_boot=n_boot, seed=seed)
    if (origins := aligned_origins([base, new], ids)) is not None and (real := real_mask(origins)).any():
        # the real subset gates too: a detector must not regress on real answers behind a gain on constructed ones
        on_real = metric_deltas(
            y_true[real], b[real], n[real], alpha=alpha, max_drop=max_drop, n_boot=n_boot, seed=seed
        )
        metrics |= {f"{name}{REAL_SUFFIX}": on_real[name] for name in REAL_METRICS}
    return {
        "base": {"path": str(base.path), "detector": base.label, "spec": base.detector, "created": base.created},
        "new": {"path": str(new.path), "detector": new.label, "spec": new.detector, "created": new.created},
        "dataset": {"name": base.dataset["name"], "sha256": base.sha256, "cases": len(ids)},
        "settings": {"max_drop": max_drop, "alpha": alpha, "bootstrap_resamples": n_boot, "seed": seed},
        "metrics": metrics,
        "per_category": category_deltas(categories, y_true, b, n),
        "flipped": flipped(ids, categories, y_true, b, n),
        "regression": any(m["regression"] for m in metrics.values()),
    }
