"""A run's figures as ``metrics.json`` holds them (its ``metrics`` block, `Metrics`), from the cases' labels and the
outcomes: the headline for all cases and for the real ones, the scores and their calibration, per category, the
breakdowns and the operational figures, built on the array functions of `harness.metrics`, whose policy for
undefined figures (None, never 0 or NaN) holds here too."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import TypedDict

import numpy as np

from harness.calibration import DEFAULT_BINS, calibration
from harness.cases.labels import REAL_ORIGINS, UNKNOWN_ORIGIN, origin_of
from harness.documents import (
    CategoryAccuracy,
    ClassScores,
    Consensus,
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
    ThresholdCheck,
    Tokens,
)
from harness.metrics import (
    CODE,
    accuracy,
    average_precision,
    bootstrap_confusions,
    brier,
    confusion,
    defined,
    encode,
    finite_interval,
    headline_batch,
    macro_f1,
    memory_chunk,
    per_class,
    percentile_interval,
    present_classes,
    resample_indices,
    roc_auc,
    wilson_interval,
)
from harness.operating import operating_points
from harness.types import CATEGORIES, ERROR_KINDS, RISKS, CaseLabels, Outcome, Risk
from harness.vocabulary import ORIGINS, Origin


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


def consensus(
    labels: Sequence[CaseLabels], outcomes: dict[str, Outcome], *, n_boot: int, seed: int
) -> Consensus | None:
    """The `Consensus` block: on the cases with a consensus that have an outcome, the share of wrong consensus
    called high, of right consensus called high, their balanced accuracy and risk_score's ROC-AUC, each with a
    percentile bootstrap interval over those cases (seed ``seed``). None when no such case exists."""
    rows = [(lab.majority_correct is False, out) for lab in labels
            if lab.majority_correct is not None and (out := outcomes.get(lab.case_id)) is not None]  # fmt: skip
    if not rows:
        return None
    wrong = np.array([w for w, _ in rows])
    high = np.array([o.risk == "high" for _, o in rows])
    cleared = np.array([o.risk in ("low", "medium") for _, o in rows])
    caught, alarmed, balanced = (defined(v[0]) for v in _consensus_figures(wrong[None], high[None], cleared[None]))
    intervals = _consensus_intervals(wrong, high, cleared, n_boot=n_boot, seed=seed)
    scored = [(w, o.score) for w, o in rows if o.score is not None]
    y, scores = np.array([w for w, _ in scored]), np.array([s for _, s in scored])
    return {
        "n_wrong": int(wrong.sum()),
        "n_right": len(rows) - int(wrong.sum()),
        "wrong_caught": caught,
        "wrong_caught_ci95": intervals[0],
        "right_alarmed": alarmed,
        "right_alarmed_ci95": intervals[1],
        "balanced_accuracy": balanced,
        "balanced_accuracy_ci95": intervals[2],
        "n_scored": len(scored),
        "roc_auc": roc_auc(y, scores),
        "roc_auc_ci95": _auc_interval(y, scores, n_boot=n_boot, seed=seed),
    }


def _consensus_figures(wrong: np.ndarray, high: np.ndarray, cleared: np.ndarray) -> np.ndarray:
    """(wrong caught, right alarmed, balanced accuracy) of each row of a batch (rows: resamples), NaN where a row
    holds no wrong (or no right) consensus."""
    n_wrong, n_right = wrong.sum(axis=1), (~wrong).sum(axis=1)
    with np.errstate(invalid="ignore"):  # 0/0: a resample without one of the two kinds has no figure
        caught = (wrong & high).sum(axis=1) / n_wrong
        alarmed = (~wrong & high).sum(axis=1) / n_right
        specificity = (~wrong & cleared).sum(axis=1) / n_right
    return np.array([caught, alarmed, (caught + specificity) / 2])


def _consensus_intervals(
    wrong: np.ndarray, high: np.ndarray, cleared: np.ndarray, *, n_boot: int, seed: int
) -> list[list[float] | None]:
    draws = resample_indices(len(wrong), n_boot=n_boot, seed=seed, chunk=memory_chunk(len(wrong)))
    boots = [_consensus_figures(wrong[idx], high[idx], cleared[idx]) for idx in draws]
    return [_interval(np.concatenate([b[k] for b in boots])) if boots else None for k in range(3)]


def _interval(values: np.ndarray) -> list[float] | None:
    found = finite_interval(values)
    return list(found) if found else None


def _auc_interval(y: np.ndarray, scores: np.ndarray, *, n_boot: int, seed: int) -> list[float] | None:
    """ROC-AUC's percentile bootstrap interval over the scored cases; a resample of one class has none."""
    draws = resample_indices(len(y), n_boot=n_boot, seed=seed, chunk=memory_chunk(len(y)))
    aucs = [roc_auc(y[row], scores[row]) for idx in draws for row in idx]
    return _interval(np.array([np.nan if a is None else a for a in aucs]))


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
    """Tokens summed over the cases (None when no detector reported any), how many of them were counted at their
    most (``estimated``, when any: replies without usable usage) and, given prices per million, the cost."""
    prompt, completion = sum(o.prompt_tokens for o in outs), sum(o.completion_tokens for o in outs)
    if not prompt and not completion:
        return None
    usage: Tokens = {"prompt": prompt, "completion": completion, "total": prompt + completion}
    if estimated := sum(o.estimated_tokens for o in outs):
        usage["estimated"] = estimated
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


NATURAL_ONLY: frozenset[Origin] = frozenset({"natural"})
"""The origin of `headline_natural`: answer sets exactly as a source gave them, no text of ours and no combining."""


def headline_real(
    labels: Sequence[CaseLabels], outcomes: dict[str, Outcome], *, n_boot: int, seed: int,
    origins: frozenset[Origin] = REAL_ORIGINS,
) -> HeadlineReal | None:  # fmt: skip
    """The headline on the cases of ``origins`` only (the natural and assembled ones; the natural ones alone for
    `headline_natural`); None when no case carries an origin tag.

    Constructed cases are left out so that text written for the benchmark cannot carry a result on its own.
    With origin tags but no such case in scope, ``n_cases`` is 0 and every figure is None.
    """
    if not has_origins(labels):
        return None
    subset = [lab for lab in labels if origin_of(lab.tags) in origins]
    y_true, y_pred = encode(subset, outcomes)
    cm = confusion(y_true, y_pred)
    return {
        "origins": [o for o in ORIGINS if o in origins],
        "n_cases": len(y_true),
        "n_not_run": sum(1 for lab in subset if lab.case_id not in outcomes),
        **headline(cm, y_true, y_pred, n_boot=n_boot, seed=seed),
    }


def _scores(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome]) -> np.ndarray:
    """risk_score of each case with an outcome, in `encode`'s order; NaN where it has none."""
    return np.array([o.score if (o := outcomes[lab.case_id]).score is not None else np.nan
                     for lab in labels if lab.case_id in outcomes], dtype=float)  # fmt: skip


class _Repeats(TypedDict, total=False):
    epochs: Epochs
    probes: Probes
    threshold: ThresholdCheck


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
        "headline_natural": headline_real(labels, outcomes, n_boot=n_boot, seed=seed, origins=NATURAL_ONLY),
        "consensus": consensus(labels, outcomes, n_boot=n_boot, seed=seed),
        "operating_points": operating_points(y_true, y_pred, _scores(labels, outcomes), n_boot=n_boot, seed=seed),
        "scores": score_metrics(labels, outcomes, n_bins=ece_bins, n_boot=n_boot, seed=seed),
        "per_category": per_category(labels, outcomes),
        "breakdowns": breakdowns(labels, outcomes),
        "operational": operational(
            (outcomes[lab.case_id] for lab in labels if lab.case_id in outcomes), wall_s, prices
        ),
        **_NO_REPEATS,
    }
