"""A run's figures as ``metrics.json`` holds them (its ``metrics`` block, `Metrics`), from the cases' labels and the
outcomes: the headline for all cases and for the real ones, the scores and their calibration, per category, the
breakdowns and the operational figures, built on the array functions of `harness.metrics`, whose policy for
undefined figures (None, never 0 or NaN) holds here too."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypedDict

import numpy as np

from harness.calibration import calibration
from harness.cases.clusters import DEFAULT_CLUSTER_BY, cluster_key
from harness.cases.labels import REAL_ORIGINS, UNKNOWN_ORIGIN, origin_of
from harness.design_effect import clusters_block, clusters_of, keyed, proportion_design_effect
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
    alone,
    average_precision,
    bootstrap_confusions,
    brier,
    case_weights,
    cluster_codes,
    cluster_totals,
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
    resample_counts,
    roc_auc,
    wilson_interval,
)
from harness.operating import operating_points
from harness.types import CATEGORIES, ERROR_KINDS, RISKS, CaseLabels, Outcome, Risk
from harness.vocabulary import DEFAULT_BINS, ORIGINS, Origin


def score_metrics(
    labels: Sequence[CaseLabels], outcomes: dict[str, Outcome], *, n_bins: int, n_boot: int, seed: int,
    cluster_by: str = DEFAULT_CLUSTER_BY,
) -> ScoreMetrics | None:  # fmt: skip
    """ROC-AUC, average precision, Brier score and calibration (ECE over ``n_bins`` equal-width bins, with an
    interval over ``n_boot`` resamples of the scored cases, and the reliability diagram: `harness.calibration`) of
    ``risk_score`` for high risk versus the rest.

    Only cases with a score take part (an errored case has none); None when no detector answer carried one.
    """
    scored = [(lab, out.score) for lab in labels
              if (out := outcomes.get(lab.case_id)) is not None and out.score is not None]  # fmt: skip
    if not scored:
        return None
    y = np.array([lab.expected_risk == "high" for lab, _ in scored], dtype=float)
    s = np.array([score for _, score in scored], dtype=float)
    groups = clusters_of([lab for lab, _ in scored], cluster_by)
    draws = resample_counts(int(groups.max()) + 1, n_boot=n_boot, seed=seed) if n_boot else None
    return {
        "n_scored": len(scored),
        "roc_auc": roc_auc(y, s),
        "average_precision": average_precision(y, s),
        "brier": brier(y, s),
        # harness.calibration builds its block untyped (dict[str, Any]): typed here, where it joins the document
        "calibration": calibration(y, s, n_bins, draws, groups),
    }


def consensus(
    labels: Sequence[CaseLabels], outcomes: dict[str, Outcome], *, n_boot: int, seed: int,
    cluster_by: str = DEFAULT_CLUSTER_BY,
) -> Consensus | None:  # fmt: skip
    """The `Consensus` block: on the cases with a consensus that have an outcome, the share of wrong consensus
    called high, of right consensus called high, their balanced accuracy and risk_score's ROC-AUC, each with a
    percentile bootstrap interval over those cases, or their clusters (seed ``seed``). None when no such case
    exists."""
    found = [(lab, out) for lab in labels
             if lab.majority_correct is not None and (out := outcomes.get(lab.case_id)) is not None]  # fmt: skip
    if not found:
        return None
    groups = clusters_of([lab for lab, _ in found], cluster_by)
    rows = [(lab.majority_correct is False, out) for lab, out in found]
    wrong = np.array([w for w, _ in rows])
    high = np.array([o.risk == "high" for _, o in rows])
    cleared = np.array([o.risk in ("low", "medium") for _, o in rows])
    kinds = np.stack([wrong, ~wrong, wrong & high, ~wrong & high, ~wrong & cleared], axis=1).astype(np.int64)
    caught, alarmed, balanced = (defined(v[0]) for v in _consensus_figures(kinds.sum(axis=0)[None]))
    intervals = _consensus_intervals(cluster_totals(groups, kinds), n_boot=n_boot, seed=seed)
    has_score = np.array([o.score is not None for _, o in rows])
    y = wrong[has_score]
    scores = np.array([o.score for _, o in rows if o.score is not None], dtype=float)
    return {
        "n_wrong": int(wrong.sum()),
        "n_right": len(rows) - int(wrong.sum()),
        "wrong_caught": caught,
        "wrong_caught_ci95": intervals[0],
        "right_alarmed": alarmed,
        "right_alarmed_ci95": intervals[1],
        "balanced_accuracy": balanced,
        "balanced_accuracy_ci95": intervals[2],
        "n_scored": len(scores),
        "roc_auc": roc_auc(y, scores),
        "roc_auc_ci95": _auc_interval(y, scores, cluster_codes(groups[has_score]), n_boot=n_boot, seed=seed),
    }


def _consensus_figures(kinds: np.ndarray) -> np.ndarray:
    """(wrong caught, right alarmed, balanced accuracy) of each row of a batch (rows: resamples, columns: the counts
    of wrong, right, wrong called high, right called high, right called low or medium), NaN where a row holds no
    wrong (or no right) consensus."""
    n_wrong, n_right, caught_n, alarmed_n, cleared_n = kinds.T
    with np.errstate(invalid="ignore", divide="ignore"):  # 0/0: a resample without one of the kinds has no figure
        caught = caught_n / n_wrong
        alarmed = alarmed_n / n_right
        specificity = cleared_n / n_right
    return np.array([caught, alarmed, (caught + specificity) / 2])


def _consensus_intervals(totals: np.ndarray, *, n_boot: int, seed: int) -> list[list[float] | None]:
    """The intervals of `_consensus_figures` from each cluster's counts (`totals`: clusters x the five counts)."""
    boots = [_consensus_figures(counts @ totals) for counts in resample_counts(len(totals), n_boot=n_boot, seed=seed)]
    return [_interval(np.concatenate([b[k] for b in boots])) if boots else None for k in range(3)]


def _interval(values: np.ndarray) -> list[float] | None:
    found = finite_interval(values)
    return list(found) if found else None


def _auc_interval(y: np.ndarray, scores: np.ndarray, groups: np.ndarray, *, n_boot: int,
                  seed: int) -> list[float] | None:  # fmt: skip
    """ROC-AUC's percentile bootstrap interval over the scored cases' clusters (``groups``); a resample of one
    class has none."""
    if not len(y):
        return None
    cases = np.arange(len(y))
    draws = resample_counts(int(groups.max()) + 1, n_boot=n_boot, seed=seed)
    rows = (np.repeat(cases, weights) for counts in draws for weights in case_weights(counts, groups))
    aucs = [roc_auc(y[row], scores[row]) for row in rows]
    return _interval(np.array([np.nan if a is None else a for a in aucs]))


def group_accuracy(correct: Sequence[bool], clusters: Sequence[Hashable] | None = None) -> GroupAccuracy:
    """n, accuracy and its 95% Wilson interval for one group of cases, on the effective sample size that the cases'
    ``clusters`` (their `cluster_key`s) leave (`proportion_design_effect`)."""
    n, k = len(correct), int(sum(correct))
    effect = 1.0 if clusters is None else proportion_design_effect(correct, clusters)
    interval = wilson_interval(k, n, effect)
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


def breakdowns(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome],
               cluster_by: str = DEFAULT_CLUSTER_BY) -> dict[str, dict[str, GroupAccuracy]]:  # fmt: skip
    """Accuracy by group for every breakdown in `BREAKDOWNS`, over cases with an outcome."""
    result: dict[str, dict[str, GroupAccuracy]] = {}
    for name, keys_of in BREAKDOWNS.items():
        groups: dict[str, list[bool]] = defaultdict(list)
        members: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for lab in labels:
            if (out := outcomes.get(lab.case_id)) is not None:
                for key in keys_of(lab):
                    groups[key].append(out.risk == lab.expected_risk)
                    members[key].append(keyed(cluster_key(lab, cluster_by), lab.case_id))
        result[name] = {key: group_accuracy(groups[key], members[key]) for key in sorted(groups, key=_natural)}
    return result


def _natural(key: str) -> tuple[bool, int] | tuple[bool, str]:
    """Numbers first, in numeric order, then the other keys in alphabetical order."""
    return (False, int(key)) if key.isdigit() else (True, key)


def per_category(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome],
                 cluster_by: str = DEFAULT_CLUSTER_BY) -> dict[str, CategoryAccuracy]:  # fmt: skip
    """Accuracy with n and 95% interval per category, and how the detector's predictions were spread."""
    result: dict[str, CategoryAccuracy] = {}
    for cat in CATEGORIES:
        rows = [(lab, outcomes[lab.case_id]) for lab in labels if lab.category == cat and lab.case_id in outcomes]
        if rows:
            result[cat] = _category_accuracy(rows, cluster_by)
    return result


def _category_accuracy(rows: Sequence[tuple[CaseLabels, Outcome]], cluster_by: str) -> CategoryAccuracy:
    """One category's entry of `per_category`, from its cases that have an outcome (at least one)."""
    spread: Counter[str] = Counter(out.risk or "error" for _, out in rows)
    risks = {lab.expected_risk for lab, _ in rows}
    keys = [keyed(cluster_key(lab, cluster_by), lab.case_id) for lab, _ in rows]
    return {
        **group_accuracy([out.risk == lab.expected_risk for lab, out in rows], keys),
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


def resampled(y_true: np.ndarray, y_pred: np.ndarray, *, n_boot: int, seed: int,
              clusters: np.ndarray | None = None) -> np.ndarray | None:  # fmt: skip
    """The headline's bootstrap confusion matrices, resampling ``clusters`` (default: each case alone); None without
    cases or resamples."""
    if not len(y_true) or n_boot <= 0:
        return None
    chunk = memory_chunk(len(y_true))
    return bootstrap_confusions(y_true, y_pred, n_boot=n_boot, seed=seed, chunk=chunk, clusters=clusters)


def headline(cm: np.ndarray, boots: np.ndarray | None, *, n_boot: int, seed: int) -> Headline:
    """Accuracy, macro-F1 (with bootstrap intervals from ``boots``, `resampled`), per-class scores, kappa,
    high-risk recall, false alarms."""
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
    if boots is not None:
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
    origins: frozenset[Origin] = REAL_ORIGINS, cluster_by: str = DEFAULT_CLUSTER_BY,
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
    groups = clusters_of(answered(subset, outcomes), cluster_by)
    boots = resampled(y_true, y_pred, n_boot=n_boot, seed=seed, clusters=groups)
    return {
        "origins": [o for o in ORIGINS if o in origins],
        "n_cases": len(y_true),
        "n_not_run": sum(1 for lab in subset if lab.case_id not in outcomes),
        **headline(confusion(y_true, y_pred), boots, n_boot=n_boot, seed=seed),
    }


def answered(labels: Sequence[CaseLabels], outcomes: dict[str, Outcome]) -> list[CaseLabels]:
    """The cases that have an outcome, in `encode`'s order."""
    return [lab for lab in labels if lab.case_id in outcomes]


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
    cluster_by: str = DEFAULT_CLUSTER_BY,
) -> Metrics:
    """Every metric of a run. ``labels`` are the cases in scope; ``outcomes`` those that finished, by case id;
    every interval resamples the clusters ``cluster_by`` names (`harness.cases.clusters`)."""
    y_true, y_pred = encode(labels, outcomes)
    cm = confusion(y_true, y_pred)
    groups = clusters_of(answered(labels, outcomes), cluster_by)
    boots = resampled(y_true, y_pred, n_boot=n_boot, seed=seed, clusters=groups)
    # the case bootstrap, for the design effect: the very same draws where every case is its own cluster
    independent = not len(groups) or int(groups.max()) + 1 == len(groups)
    plain = boots if independent else resampled(y_true, y_pred, n_boot=n_boot, seed=seed, clusters=alone(len(y_true)))
    return {
        "n_cases": len(y_true),
        "n_not_run": sum(1 for lab in labels if lab.case_id not in outcomes),
        "confusion_matrix": {
            "rows": list(RISKS),
            "columns": [*RISKS, "error"],
            "counts": cm.tolist(),
        },
        **headline(cm, boots, n_boot=n_boot, seed=seed),
        "clusters": clusters_block(cluster_by, groups, cm, boots, plain),
        "headline_real": headline_real(labels, outcomes, n_boot=n_boot, seed=seed, cluster_by=cluster_by),
        "headline_natural": headline_real(
            labels, outcomes, n_boot=n_boot, seed=seed, origins=NATURAL_ONLY, cluster_by=cluster_by
        ),
        "consensus": consensus(labels, outcomes, n_boot=n_boot, seed=seed, cluster_by=cluster_by),
        "operating_points": operating_points(
            y_true, y_pred, _scores(labels, outcomes), n_boot=n_boot, seed=seed, clusters=groups
        ),
        "scores": score_metrics(labels, outcomes, n_bins=ece_bins, n_boot=n_boot, seed=seed, cluster_by=cluster_by),
        "per_category": per_category(labels, outcomes, cluster_by),
        "breakdowns": breakdowns(labels, outcomes, cluster_by),
        "operational": operational(
            (outcomes[lab.case_id] for lab in labels if lab.case_id in outcomes), wall_s, prices
        ),
        **_NO_REPEATS,
    }
