"""A threshold with a guarantee (``fcb threshold DEV_RUN --miss-rate A``) and its check on a run (``fcb eval
--threshold FILE``; docs/reports.md, "A threshold with a guarantee"). Pure functions of labels and scores, and the
threshold file read and checked.

Escalating the cases whose score is t or more misses, of the n dev cases labelled high (the false consensus), k(t):
those scored below t, without a score, or errors. k(t) grows with t, so the cases it may pick form a prefix: the
threshold is the largest t (the fewest escalations) whose bound is at most A:

- ``probable`` (the default): the one-sided Clopper-Pearson upper bound of the miss rate at confidence c. On new
  cases from the dev run's population, the miss rate at the chosen threshold is at most A with probability c or more
  over dev sets (a risk-controlling prediction set for a loss that grows with t; Bates et al. 2021);
- ``expected``: (k(t) + 1) / (n + 1), conformal risk control for a loss bounded by 1 (Angelopoulos et al. 2022): the
  miss rate averaged over dev sets and new cases is at most A.

A run without scores is thresholded on its verdict (2 high, 1 medium, 0 low). When no threshold meets the bound, not
even escalating every case with a score, the promise cannot be made from this dev run: refused, never rounded.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from harness.design_effect import proportion_design_effect
from harness.documents import ThresholdCheck, ThresholdDev, ThresholdDocument
from harness.errors import UsageError

HIGH = 2


def upper_bound(missed: int, n: int, confidence: float) -> float:
    """The one-sided Clopper-Pearson upper bound of a rate with ``missed`` events in ``n`` at ``confidence``."""
    if missed >= n:
        return 1.0
    from scipy.stats import beta  # imported on use: only fcb threshold draws bounds

    return float(beta.ppf(confidence, missed + 1, n - missed))


def interval(missed: int, n: int, design_effect: float = 1.0) -> list[float] | None:
    """The two-sided Clopper-Pearson 95% interval of a rate; None for n = 0. With a ``design_effect`` (clustered
    cases: `harness.design_effect.proportion_design_effect`), on Kish's effective counts missed / deff of n / deff."""
    if not n:
        return None
    from scipy.stats import beta

    k, size = missed / design_effect, n / design_effect
    low = 0.0 if missed == 0 else float(beta.ppf(0.025, k, size - k + 1))
    high = 1.0 if missed == n else float(beta.ppf(0.975, k + 1, size - k))
    return [low, high]


def missed_at(scores_high: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """k(t) for each candidate t: the cases labelled high scored below t or without a score (NaN)."""
    finite = np.sort(scores_high[np.isfinite(scores_high)])
    unscored = int((~np.isfinite(scores_high)).sum())
    return np.searchsorted(finite, candidates, side="left") + unscored


def bounds(missed: np.ndarray, n: int, *, method: str, confidence: float | None) -> np.ndarray:
    """Each candidate's bound on the miss rate (see the module)."""
    if method == "expected":
        return np.asarray((missed + 1) / (n + 1), dtype=float)
    assert confidence is not None
    from scipy.stats import beta

    below = missed < n
    out = np.ones(len(missed), dtype=float)
    out[below] = beta.ppf(confidence, missed[below] + 1, n - missed[below])  # `upper_bound`, all at once
    return out


def choose(y_true: np.ndarray, scores: np.ndarray, *, target: float, method: str,
           confidence: float | None) -> tuple[float | None, int, float]:  # fmt: skip
    """(threshold, missed at it, its bound): the largest candidate whose bound is at most ``target``, the
    candidates being every finite score and +inf (escalate none; None). `UsageError` when none is."""
    high = y_true == HIGH
    n = int(high.sum())
    if not n:
        raise UsageError("the dev run has no case labelled high: there is no miss rate to bound")
    candidates = np.append(np.unique(scores[np.isfinite(scores)]), np.inf)
    missed = missed_at(scores[high], candidates)
    bound = bounds(missed, n, method=method, confidence=confidence)
    ok = np.flatnonzero(bound <= target)
    if not len(ok):
        least = int(missed[0])
        raise UsageError(
            f"no threshold keeps the miss rate at or under {target:g} ({_method_text(method, confidence)}): even "
            f"escalating every case with a score misses {least} of the {n} dev cases labelled high, a bound of "
            f"{bound[0]:.3f}; a larger dev run (more cases labelled high) or a larger --miss-rate can"
        )
    pick = int(ok[-1])
    threshold = float(candidates[pick])
    return (None if np.isinf(threshold) else threshold), int(missed[pick]), float(bound[pick])


def _method_text(method: str, confidence: float | None) -> str:
    return f"with {confidence:.0%} confidence" if method == "probable" else "in expectation"


def escalated(scores: np.ndarray, threshold: float | None) -> np.ndarray:
    """The cases escalated at ``threshold``: scored at it or above (never a case without a score)."""
    if threshold is None:
        return np.zeros(len(scores), dtype=bool)
    up: np.ndarray = np.isfinite(scores) & (scores >= threshold)
    return up


def calibrate(
    y_true: np.ndarray, scores: np.ndarray, *, target: float, method: str, confidence: float | None, basis: str,
    run: str, dataset: str, sha256: str, detector: str, fingerprint: str,
) -> ThresholdDocument:  # fmt: skip
    """The threshold document of a dev run (its labels and scores: risk_score, or verdict codes; NaN none)."""
    threshold, missed, bound = choose(y_true, scores, target=target, method=method, confidence=confidence)
    n, up = int((y_true == HIGH).sum()), escalated(scores, threshold)
    dev: ThresholdDev = {
        "run": run, "dataset": dataset, "sha256": sha256, "n_cases": len(y_true), "n_false_consensus": n,
        "missed": missed, "miss_rate": missed / n, "bound": bound, "escalated": int(up.sum()),
        "escalation_rate": float(up.mean()) if len(up) else None,
    }  # fmt: skip
    shown = "no case" if threshold is None else f"the cases with {basis.replace('_', ' ')} {threshold:g} or more"
    promise = (f"Escalating {shown} misses at most {target:.1%} of the false consensus on new cases like the dev "
               f"run's ({_method_text(method, confidence)}; {n} dev cases labelled high, {missed} missed)")  # fmt: skip
    return {
        "fcb_threshold": 1, "basis": basis, "threshold": threshold, "miss_rate_target": target,  # type: ignore[typeddict-item]
        "method": method, "confidence": confidence if method == "probable" else None,  # type: ignore[typeddict-item]
        "detector": detector, "fingerprint": fingerprint, "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "dev": dev, "promise": promise,
    }  # fmt: skip


def check(doc: ThresholdDocument, file: str, y_true: np.ndarray, scores: np.ndarray,
          clusters: Sequence[Hashable] | None = None) -> ThresholdCheck:  # fmt: skip
    """The threshold's figures on a run (its labels and its scores on the threshold's basis); the miss rate's
    interval on the effective number of false consensus that the cases' ``clusters`` leave (default: each alone)."""
    high = y_true == HIGH
    n, up = int(high.sum()), escalated(scores, doc["threshold"])
    missed = int((high & ~up).sum())
    rate = missed / n if n else None
    effect = 1.0
    if clusters is not None and n:
        keys = [key for key, is_high in zip(clusters, high.tolist(), strict=True) if is_high]
        effect = proportion_design_effect((~up[high]).tolist(), keys)
    return {
        "file": file, "promise": doc["promise"], "miss_rate_target": doc["miss_rate_target"], "basis": doc["basis"],
        "threshold": doc["threshold"], "n_cases": len(y_true), "n_false_consensus": n, "missed": missed,
        "miss_rate": rate, "miss_rate_ci95": interval(missed, n, effect), "escalated": int(up.sum()),
        "escalation_rate": float(up.mean()) if len(up) else None,
        "within": None if rate is None else rate <= doc["miss_rate_target"],
    }  # fmt: skip


def read_threshold(path: str | Path) -> ThresholdDocument:
    """A threshold file, checked against its definition (`harness.documents`); `UsageError` naming the file and
    the field otherwise."""
    from harness.errors import RunLoadError
    from harness.runfolder.checked import read_document

    try:
        doc: ThresholdDocument = read_document(Path(path), "threshold", "fcb threshold DEV_RUN writes one")
    except RunLoadError as exc:
        raise UsageError(f"--threshold {exc}") from None
    return doc
