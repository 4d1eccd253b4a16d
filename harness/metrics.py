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

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypedDict

import numpy as np

from harness.calibration import DEFAULT_BINS, calibration
from harness.cases.labels import REAL_ORIGINS, UNKNOWN_ORIGIN, origin_of
from harness.documents import (
    CategoryAccuracy,
    ClassScores,
    Epochs,
    ErrorMessage,
    GroupAccuracy,
    Headline,
    HeadlineReal,
    Metrics,
    Operational,
    PerClass,
    Probes,
    ScoreMetrics,
    Tokens,
)
from harness.types import CATEGORIES, ERROR_KINDS, RISKS, CaseLabels, Outcome, Risk
from harness.vocabulary import ORIGINS

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


def wilson_interval(k: int, n: int) -> tuple[float, float] | None:
    """95% Wilson score interval for k successes in n trials; None when n is 0."""
    if n == 0:
        return None
    p, z2 = k / n, Z95 * Z95
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At k = 0 or k = n the bound is exactly 0 or 1; rounding must not leave the observed rate outside
    lower = 0.0 if k == 0 else max(0.0, centre - half)
    upper = 1.0 if k == n else min(1.0, centre + half)
    return float(lower), float(upper)


def bootstrap_confusions(
    y_true: np.ndarray, y_pred: np.ndarray, *, n_boot: int = 1000, seed: int = 0, chunk: int = 100,
    shape: tuple[int, int] = (3, 4),
) -> np.ndarray:  # fmt: skip
    """Confusion matrices of ``n_boot`` resamples (with replacement) of the cases: shape (n_boot, *shape).

    Seeded, so the same inputs give the same intervals. Built in chunks to keep memory at chunk x n.
    """
    result: np.ndarray = paired_bootstrap_confusions(
        y_true, [y_pred], n_boot=n_boot, seed=seed, chunk=chunk, shape=shape
    )[0]
    return result


def memory_chunk(n: int, budget: int = 250_000) -> int:
    """Resamples per chunk so that a chunk's index array holds about ``budget`` entries (2 MB) whatever n is."""
    return max(1, min(100, budget // max(n, 1)))


def resample_indices(n: int, *, n_boot: int, seed: int, chunk: int) -> Iterator[np.ndarray]:
    """The bootstrap's draws: ``n_boot`` resamples of n cases (with replacement), as index arrays of ``chunk`` rows
    (the last may have fewer). Every interval of a run draws from here: they depend only on (n, n_boot, seed,
    chunk)."""
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, chunk):
        yield rng.integers(0, n, size=(min(chunk, n_boot - start), n))


def paired_bootstrap_confusions(
    y_true: np.ndarray, y_preds: Sequence[np.ndarray], *, n_boot: int = 1000, seed: int = 0, chunk: int = 100,
    shape: tuple[int, int] = (3, 4),
) -> np.ndarray:  # fmt: skip
    """Bootstrap confusion matrices of several prediction arrays on the *same* resamples: shape (k, n_boot, *shape).

    Pairing matters: the difference between two detectors is measured on identical case draws, so case
    difficulty cancels out. The draws depend only on (n, n_boot, seed, chunk).
    """
    rows, cols = shape
    cells = rows * cols
    codes = [y_true * cols + y_pred for y_pred in y_preds]
    out = np.empty((len(codes), n_boot, rows, cols), dtype=np.int64)
    start = 0
    for idx in resample_indices(len(y_true), n_boot=n_boot, seed=seed, chunk=chunk):
        b = len(idx)
        offsets = cells * np.arange(b)[:, None]
        for k, c in enumerate(codes):
            out[k, start : start + b] = np.bincount((c[idx] + offsets).ravel(), minlength=cells * b).reshape(
                b, rows, cols
            )
        start += b
    return out


def paired_headline(
    y_true: np.ndarray, y_preds: Sequence[np.ndarray], *, n_boot: int, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Every headline metric of several prediction arrays over the same cases: the point values (one per array)
    and the values on `paired_bootstrap_confusions`' resamples (arrays x resamples).

    Macro-F1 averages over the classes present in any of the arrays, so that all values are over the same classes.
    """
    cms = np.stack([confusion(y_true, y_pred) for y_pred in y_preds])
    classes = present_classes(cms.sum(axis=0))
    boots = paired_bootstrap_confusions(y_true, y_preds, n_boot=n_boot, seed=seed, chunk=memory_chunk(len(y_true)))
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


def score_metrics(
    labels: Sequence[CaseLabels], outcomes: dict[str, Outcome], *, n_bins: int, n_boot: int, seed: int
) -> ScoreMetrics | None:
    """ROC-AUC, average precision, Brier score and calibration (ECE over ``n_bins`` equal-width bins, with an
    interval over ``n_boot`` resamples of the scored cases, and the reliability diagram: `harness.calibration`) of
    ``risk_score`` for high risk versus the rest.

    Only cases with a score take part (an errored case has none); None when no detector answer carried one.
    """
    pairs = [
        (lab.expected_risk == "high", out.score)
        for lab in labels
        if (out := outcomes.get(lab.case_id)) is not None and out.score is not None
    ]
    if not pairs:
        return None
    y = np.array([p[0] for p in pairs], dtype=float)
    s = np.array([p[1] for p in pairs], dtype=float)
    draws = resample_indices(len(s), n_boot=n_boot, seed=seed, chunk=memory_chunk(len(s))) if n_boot else None
    return {
        "n_scored": len(pairs),
        "roc_auc": roc_auc(y, s),
        "average_precision": average_precision(y, s),
        "brier": brier(y, s),
        # harness.calibration builds its block untyped (dict[str, Any]): typed here, where it joins the document
        "calibration": calibration(y, s, n_bins, draws),
    }


def group_accuracy(correct: Sequence[bool]) -> GroupAccuracy:
    """n, accuracy and its 95% Wilson interval for one group of cases."""
    n, k = len(correct), int(sum(correct))
    interval = wilson_interval(k, n)
    return {"n": n, "correct": k, "accuracy": k / n if n else None, "ci95": list(interval) if interval else None}


def _family_keys(lab: CaseLabels) -> list[str]:
    if not lab.families:
        return ["(no model_family)"]
    keys = [f"family:{f}" for f in lab.families]
    if lab.families_complete:
        keys.append("single-family" if len(lab.families) == 1 else "mixed-family")
    else:
        keys.append("partly labelled")
    return keys


BREAKDOWNS: dict[str, Callable[[CaseLabels], Iterable[str]]] = {
    "model_family": _family_keys,
    "saw_other_answers": lambda lab: [str(lab.any_saw_other_answers).lower()],
    "shared_context": lambda lab: [str(lab.any_shared_context).lower()],
    "n_answers": lambda lab: [str(lab.n_answers)],
    "evidence": lambda lab: ["present" if lab.has_evidence else "absent"],
    "tags": lambda lab: lab.tags or ["(none)"],
    "origin": lambda lab: [origin_of(lab.tags)],
}
"""Each breakdown maps a case to the groups it belongs to (a case can be in several, e.g. several tags)."""


def breakdowns(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome]) -> dict[str, dict[str, GroupAccuracy]]:
    """Accuracy by group for every breakdown in `BREAKDOWNS`, over cases with an outcome."""
    result: dict[str, dict[str, GroupAccuracy]] = {}
    for name, keys_of in BREAKDOWNS.items():
        groups: dict[str, list[bool]] = defaultdict(list)
        for lab in labels:
            if (out := outcomes.get(lab.case_id)) is not None:
                for key in keys_of(lab):
                    groups[key].append(out.risk == lab.expected_risk)
        result[name] = {key: group_accuracy(groups[key]) for key in sorted(groups, key=_natural)}
    return result


def _natural(key: str) -> tuple[bool, int] | tuple[bool, str]:
    """Numbers first, in numeric order, then the other keys in alphabetical order."""
    return (False, int(key)) if key.isdigit() else (True, key)


def per_category(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome]) -> dict[str, CategoryAccuracy]:
    """Accuracy with n and 95% interval per category, and how the detector's predictions were spread."""
    result: dict[str, CategoryAccuracy] = {}
    for cat in CATEGORIES:
        rows = [(lab, outcomes[lab.case_id]) for lab in labels if lab.category == cat and lab.case_id in outcomes]
        if rows:
            result[cat] = _category_accuracy(rows)
    return result


def _category_accuracy(rows: Sequence[tuple[CaseLabels, Outcome]]) -> CategoryAccuracy:
    """One category's entry of `per_category`, from its cases that have an outcome (at least one)."""
    spread: Counter[str] = Counter(out.risk or "error" for _, out in rows)
    risks = {lab.expected_risk for lab, _ in rows}
    return {
        **group_accuracy([out.risk == lab.expected_risk for lab, out in rows]),
        "expected_risk": rows[0][0].expected_risk if len(risks) == 1 else "mixed",
        "predicted": {
            "low": spread["low"],
            "medium": spread["medium"],
            "high": spread["high"],
            "error": spread["error"],
        },
    }


def token_usage(outs: Sequence[Outcome], prices: tuple[float | None, float | None]) -> Tokens | None:
    """Tokens summed over the cases (None when no detector reported any) and, given prices per million, the cost."""
    prompt, completion = sum(o.prompt_tokens for o in outs), sum(o.completion_tokens for o in outs)
    if not prompt and not completion:
        return None
    usage: Tokens = {"prompt": prompt, "completion": completion, "total": prompt + completion}
    if prices[0] is not None or prices[1] is not None:
        usage["cost_usd"] = (prompt * (prices[0] or 0.0) + completion * (prices[1] or 0.0)) / 1e6
    return usage


def error_messages(outs: Sequence[Outcome], limit: int = 5) -> list[ErrorMessage]:
    """The most frequent distinct error messages (kind and text), each with its count and its first case's id."""
    counts: Counter[tuple[str, str]] = Counter()
    first: dict[tuple[str, str], str] = {}
    for o in outs:
        if o.error_kind:
            key = (o.error_kind, o.error_message or "")
            counts[key] += 1
            first.setdefault(key, o.case_id)
    return [
        {"kind": kind, "message": message, "count": n, "case_id": first[(kind, message)]}
        for (kind, message), n in counts.most_common(limit)
    ]


def operational(
    outcomes: Iterable[Outcome], wall_s: float, prices: tuple[float | None, float | None] = (None, None)
) -> Operational:
    """Cases, errors by kind, retries, wall time, throughput, latency percentiles and token usage.

    Answers replayed from the response cache (``cached``) are counted, and left out of latency and tokens.
    """
    outs = list(outcomes)
    errors = Counter(o.error_kind for o in outs if o.error_kind)
    asked = [o for o in outs if not o.cached]  # replayed answers cost no time and no tokens: counted apart
    latency = np.array([o.latency_s for o in asked], dtype=float)
    pct = {f"p{q}": float(np.percentile(latency, q)) for q in (50, 90, 95, 99)} if len(latency) else {}
    return {
        "cases": len(outs),
        "errors": sum(errors.values()),
        "errors_by_kind": {k: errors[k] for k in ERROR_KINDS if errors.get(k)},
        "error_messages": error_messages(outs),
        "retries": sum(max(0, o.attempts - 1) for o in outs),
        "wall_s": wall_s,
        "cases_per_s": len(outs) / wall_s if wall_s > 0 else None,
        "latency_s": pct,
        "tokens": token_usage(asked, prices),
        "cached": len(outs) - len(asked),
    }


def headline(cm: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, *, n_boot: int, seed: int) -> Headline:
    """Accuracy, macro-F1 (with bootstrap intervals), per-class scores, kappa, high-risk recall, false alarms."""
    classes = present_classes(cm)
    figures = {name: defined(value) for name, value in headline_batch(cm, classes).items()}
    out: Headline = {
        "accuracy": figures["accuracy"],
        "macro_f1": figures["macro_f1"],
        "weighted_kappa": figures["weighted_kappa"],
        "high_risk_recall": figures["high_risk_recall"],
        "false_alarm_rate": figures["false_alarm_rate"],
        "error_rate": figures["error_rate"],
        "macro_f1_classes": [RISKS[i] for i in np.flatnonzero(classes)],
        "per_class": _per_class_block(per_class(cm)),
    }
    if len(y_true) and n_boot > 0:
        boots = bootstrap_confusions(y_true, y_pred, n_boot=n_boot, seed=seed, chunk=memory_chunk(len(y_true)))
        out["accuracy_ci95"] = list(percentile_interval(accuracy(boots)))
        out["macro_f1_ci95"] = list(percentile_interval(macro_f1(boots, classes)))
        out["bootstrap"] = {"resamples": n_boot, "seed": seed, "method": "percentile"}
    return out


def _per_class_block(pc: dict[str, np.ndarray]) -> PerClass:
    """The headline's ``per_class``: `per_class` of one 3x4 matrix, by risk."""

    def scores(risk: Risk) -> ClassScores:
        i = CODE[risk]
        return {
            "precision": float(pc["precision"][i]),
            "recall": float(pc["recall"][i]),
            "f1": float(pc["f1"][i]),
            "support": int(pc["support"][i]),
        }

    return {"low": scores("low"), "medium": scores("medium"), "high": scores("high")}


def has_origins(labels: Iterable[CaseLabels]) -> bool:
    """True when at least one case carries an ``origin_*`` tag."""
    return any(origin_of(lab.tags) != UNKNOWN_ORIGIN for lab in labels)


def headline_real(
    labels: Sequence[CaseLabels], outcomes: dict[str, Outcome], *, n_boot: int, seed: int
) -> HeadlineReal | None:
    """The headline on the natural and assembled cases only; None when no case carries an origin tag.

    Constructed cases are left out so that text written for the benchmark cannot carry a result on its own.
    With origin tags but no real case in scope, ``n_cases`` is 0 and every figure is None.
    """
    if not has_origins(labels):
        return None
    subset = [lab for lab in labels if origin_of(lab.tags) in REAL_ORIGINS]
    y_true, y_pred = encode(subset, outcomes)
    cm = confusion(y_true, y_pred)
    return {
        "origins": [o for o in ORIGINS if o in REAL_ORIGINS],
        "n_cases": len(y_true),
        "n_not_run": sum(1 for lab in subset if lab.case_id not in outcomes),
        **headline(cm, y_true, y_pred, n_boot=n_boot, seed=seed),
    }


class _Repeats(TypedDict, total=False):
    epochs: Epochs
    probes: Probes


_NO_REPEATS: _Repeats = {}
"""Unpacked last into `compute`'s block, it adds nothing: it says that the block leaves out the epochs and probes
figures (`harness.run.items` adds them), as mypy asks of a document built with ** items (its extra checks)."""


def compute(
    labels: Sequence[CaseLabels],
    outcomes: dict[str, Outcome],
    *,
    wall_s: float,
    n_boot: int = 1000,
    seed: int = 0,
    prices: tuple[float | None, float | None] = (None, None),
    ece_bins: int = DEFAULT_BINS,
) -> Metrics:
    """Every metric of a run. ``labels`` are the cases in scope; ``outcomes`` those that finished, by case id."""
    y_true, y_pred = encode(labels, outcomes)
    cm = confusion(y_true, y_pred)
    return {
        "n_cases": len(y_true),
        "n_not_run": sum(1 for lab in labels if lab.case_id not in outcomes),
        "confusion_matrix": {
            "rows": list(RISKS),
            "columns": [*RISKS, "error"],
            "counts": cm.tolist(),
        },
        **headline(cm, y_true, y_pred, n_boot=n_boot, seed=seed),
        "headline_real": headline_real(labels, outcomes, n_boot=n_boot, seed=seed),
        "scores": score_metrics(labels, outcomes, n_bins=ece_bins, n_boot=n_boot, seed=seed),
        "per_category": per_category(labels, outcomes),
        "breakdowns": breakdowns(labels, outcomes),
        "operational": operational(
            (outcomes[lab.case_id] for lab in labels if lab.case_id in outcomes), wall_s, prices
        ),
        **_NO_REPEATS,
    }
