"""Figures of a run's items (``fcb eval --epochs N``, ``--probe``): pure functions over outcomes and labels.

- Epochs: each epoch's headline figures on that epoch's verdicts, their mean and sample sd over epochs, and the
  self-agreement of the N verdicts of a case: the share of cases whose N verdicts all agree, the mean pairwise
  agreement, and Fleiss' kappa (the epochs as raters). An error counts as a verdict of its own here.
- Probes: a probe's flip rate is the share of pairs (a case's answer to the request as it is and to the probe's
  variant, in one epoch) whose verdicts differ; a pair with an error on either side is left out (``not_compared``).
  Beside it the same rate per category, split by whether order carries information in the case (an answer with
  ``metadata.saw_other_answers`` true), the mean change of risk_score, and, with epochs, the detector's own
  disagreement between two epochs of the unchanged request on the same terms (pairs of answered epochs).

Intervals are percentile bootstraps that resample the cases' clusters (`harness.cases.clusters`), a case's epochs (and
pairs) kept together, drawn by `harness.metrics.resample_counts` with the run's seed. docs/reports.md gives each
formula.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Final, cast

import numpy as np

from harness.cases.clusters import DEFAULT_CLUSTER_BY
from harness.cases.rewrites import STYLES
from harness.design_effect import clusters_of
from harness.documents import (
    EpochHeadline,
    Epochs,
    EpochSpread,
    FallRate,
    Falls,
    FlipRate,
    Probe,
    Probes,
    SelfAgreement,
)
from harness.metrics import (
    CODE,
    ERROR,
    alone,
    cluster_codes,
    cluster_totals,
    confusion,
    defined,
    encode,
    finite_interval,
    headline_batch,
    present_classes,
    resample_counts,
)
from harness.types import RISKS, CaseLabels, ItemKey, Outcome, ProbeName, Reducer, Risk
from harness.vocabulary import LOWERING

EPOCH_FIGURES = ("accuracy", "macro_f1", "high_risk_recall", "false_alarm_rate", "error_rate")
"""The headline figures computed for each epoch (`EpochHeadline`)."""

INFORMATIVE: Final = "saw_other_answers"
INDEPENDENT: Final = "independent"


def _code(outcome: Outcome) -> int:
    return ERROR if outcome.risk is None else CODE[outcome.risk]


def epoch_headline(labels: Sequence[CaseLabels], items: Mapping[ItemKey, Outcome], epoch: int) -> EpochHeadline:
    """One epoch's headline figures, on its plain items."""
    outcomes = {lab.case_id: o for lab in labels if (o := items.get(ItemKey(lab.case_id, epoch))) is not None}
    y_true, y_pred = encode(labels, outcomes)
    cm = confusion(y_true, y_pred)
    figures = headline_batch(cm, present_classes(cm))
    return {
        "epoch": epoch,
        "n_cases": len(y_true),
        "accuracy": defined(figures["accuracy"]),
        "macro_f1": defined(figures["macro_f1"]),
        "high_risk_recall": defined(figures["high_risk_recall"]),
        "false_alarm_rate": defined(figures["false_alarm_rate"]),
        "error_rate": defined(figures["error_rate"]),
    }


def spread(values: Sequence[float | None]) -> EpochSpread:
    """Mean and sample sd (n - 1) of a figure over epochs; None where any epoch's figure is undefined (sd: or for
    one epoch)."""
    if not values or any(v is None for v in values):
        return {"mean": None, "sd": None}
    arr = np.array(values, dtype=float)
    return {"mean": float(arr.mean()), "sd": float(arr.std(ddof=1)) if len(arr) > 1 else None}


def verdict_matrix(case_ids: Sequence[str], items: Mapping[ItemKey, Outcome], n_epochs: int) -> np.ndarray:
    """Verdict codes (0-2 low..high, 3 error), one row a case with an outcome in every epoch: (cases, n_epochs)."""
    rows = []
    for case_id in case_ids:
        outs = [items.get(ItemKey(case_id, e)) for e in range(1, n_epochs + 1)]
        if all(o is not None for o in outs):
            rows.append([_code(cast(Outcome, o)) for o in outs])
    return np.array(rows, dtype=np.int64).reshape(len(rows), n_epochs)


def category_counts(verdicts: np.ndarray, n_categories: int = ERROR + 1) -> np.ndarray:
    """(cases, categories): how many epochs gave each case each verdict."""
    counts = np.zeros((len(verdicts), n_categories), dtype=np.int64)
    for j in range(n_categories):
        counts[:, j] = (verdicts == j).sum(axis=1)
    return counts


def pairwise_agreement(counts: np.ndarray) -> np.ndarray:
    """Per case, the share of its C(N, 2) pairs of epochs that agree: sum_j c_j (c_j - 1) / (N (N - 1))."""
    n = counts.sum(axis=1)
    result: np.ndarray = (counts * (counts - 1)).sum(axis=1) / (n * (n - 1))
    return result


def fleiss_kappa(counts: np.ndarray) -> float | None:
    """Fleiss' kappa of (cases, categories) counts, every case rated by the same number (>= 2) of raters:
    (P - Pe) / (1 - Pe), P the mean pairwise agreement, Pe the sum of squared overall category shares. None without
    cases or when every rating is one category (Pe = 1)."""
    if not len(counts):
        return None
    p_bar = float(pairwise_agreement(counts).mean())
    shares = counts.sum(axis=0) / counts.sum()
    p_e = float((shares**2).sum())
    return None if p_e >= 1 - 1e-12 else (p_bar - p_e) / (1 - p_e)


def self_agreement(verdicts: np.ndarray, *, n_boot: int, seed: int,
                   clusters: np.ndarray | None = None) -> SelfAgreement:  # fmt: skip
    """How far a case's N verdicts agree (`verdict_matrix` rows)."""
    n = len(verdicts)
    if not n:
        return {"n_cases": 0, "all_agree": None, "all_agree_ci95": None, "pairwise": None, "fleiss_kappa": None}
    counts = category_counts(verdicts)
    agree = (verdicts == verdicts[:, :1]).all(axis=1).astype(float)
    interval = None
    if n_boot > 0:
        totals = cluster_totals(alone(n) if clusters is None else clusters, np.stack([agree, np.ones(n)], axis=1))
        boots = np.concatenate([_share(counts @ totals) for counts in resample_counts(len(totals), n_boot=n_boot,
                                                                                       seed=seed)])  # fmt: skip
        interval = finite_interval(boots)
    return {
        "n_cases": n,
        "all_agree": float(agree.mean()),
        "all_agree_ci95": list(interval) if interval else None,
        "pairwise": float(pairwise_agreement(counts).mean()),
        "fleiss_kappa": fleiss_kappa(counts),
    }


def epochs_block(
    labels: Sequence[CaseLabels], items: Mapping[ItemKey, Outcome], *, n_epochs: int, reducer: Reducer, n_boot: int,
    seed: int, cluster_by: str = DEFAULT_CLUSTER_BY,
) -> Epochs:  # fmt: skip
    """The ``epochs`` block of metrics.json."""
    per_epoch = [epoch_headline(labels, items, e) for e in range(1, n_epochs + 1)]
    every = [lab for lab in labels if all(ItemKey(lab.case_id, e) in items for e in range(1, n_epochs + 1))]
    return {
        "n": n_epochs,
        "reducer": reducer,
        "per_epoch": per_epoch,
        "spread": {name: spread([e[name] for e in per_epoch]) for name in EPOCH_FIGURES},  # type: ignore[literal-required]
        "self_agreement": self_agreement(
            verdict_matrix([lab.case_id for lab in every], items, n_epochs),
            n_boot=n_boot,
            seed=seed,
            clusters=clusters_of(every, cluster_by),
        ),
    }


def _share(totals: np.ndarray) -> np.ndarray:
    """Each row's first column over its second (rows: resamples), NaN where the second is 0."""
    num, den = totals[:, 0], totals[:, 1]
    result: np.ndarray = np.divide(num, den, out=np.full(den.shape, np.nan), where=den > 0)
    return result


def flip_rate(pairs: np.ndarray, flips: np.ndarray, *, n_boot: int, seed: int,
              clusters: np.ndarray | None = None) -> FlipRate:  # fmt: skip
    """Flips over pairs, pooled, with a bootstrap interval resampling the cases' ``clusters`` (one entry a case in
    the three arrays; any codes, numbered afresh here; default: each case alone)."""
    n, k = int(pairs.sum()), int(flips.sum())
    interval = None
    if n and n_boot > 0:
        groups = alone(len(pairs)) if clusters is None else cluster_codes(clusters.tolist())
        totals = cluster_totals(groups, np.stack([flips, pairs], axis=1))
        draws = resample_counts(len(totals), n_boot=n_boot, seed=seed)
        interval = finite_interval(np.concatenate([_share(counts @ totals) for counts in draws]))
    return {"n": n, "flips": k, "flip_rate": k / n if n else None, "ci95": list(interval) if interval else None}


Pair = tuple[int, int, int, float | None]
"""A pair compared: (epoch, the request's verdict code, the variant's, the variant's risk_score - the request's)."""


def case_pairs(
    case_id: str, items: Mapping[ItemKey, Outcome], probe: str, n_epochs: int
) -> tuple[list[Pair], int, bool]:
    """One case's pairs compared, the pairs left out (an error or no answer to the request), and whether the case
    got any variant."""
    pairs: list[Pair] = []
    left_out = 0
    asked = False
    for epoch in range(1, n_epochs + 1):
        variant = items.get(ItemKey(case_id, epoch, probe))
        if variant is None:
            continue
        asked = True
        plain = items.get(ItemKey(case_id, epoch))
        if plain is None or plain.risk is None or variant.risk is None:
            left_out += 1
            continue
        change = variant.score - plain.score if plain.score is not None and variant.score is not None else None
        pairs.append((epoch, CODE[plain.risk], CODE[variant.risk], change))
    return pairs, left_out, asked


def _counts(
    rows: Sequence[list[Pair]], event: Callable[[Pair], bool], kept: Callable[[Pair], bool]
) -> tuple[np.ndarray, np.ndarray]:
    """Per case, the pairs ``kept`` and among them those with ``event``."""
    n = np.array([sum(1 for p in r if kept(p)) for r in rows], dtype=float)
    k = np.array([sum(1 for p in r if kept(p) and event(p)) for r in rows], dtype=float)
    return n, k


def fall_rate(pairs: np.ndarray, falls: np.ndarray, *, n_boot: int, seed: int,
              clusters: np.ndarray | None = None) -> FallRate:  # fmt: skip
    """`flip_rate`'s figure under the names of a fall rate."""
    rate = flip_rate(pairs, falls, n_boot=n_boot, seed=seed, clusters=clusters)
    return {"n": rate["n"], "falls": rate["flips"], "fall_rate": rate["flip_rate"], "ci95": rate["ci95"]}


def _flipped(p: Pair) -> bool:
    return p[1] != p[2]


def _fell(p: Pair) -> bool:
    return p[2] < p[1]


def _anything(p: Pair) -> bool:
    return True


def _above_low(p: Pair) -> bool:
    return p[1] > CODE["low"]


def transitions(rows: Sequence[list[Pair]]) -> dict[Risk, dict[Risk, int]]:
    """Pairs compared, by the request's verdict then the variant's."""
    table: dict[Risk, dict[Risk, int]] = {a: dict.fromkeys(RISKS, 0) for a in RISKS}
    for pair in (p for r in rows for p in r):
        table[RISKS[pair[1]]][RISKS[pair[2]]] += 1
    return table


def falls_block(
    labels: Sequence[CaseLabels], rows: Sequence[list[Pair]], probe: ProbeName, styles: Sequence[str | None], *,
    n_boot: int, seed: int, clusters: np.ndarray | None = None,
) -> Falls:  # fmt: skip
    """How often a probe that should never lower the verdict lowers it (`LOWERING`): pairs on the cases it counts
    whose plain verdict is above low."""
    counted = np.array([lab.expected_risk in LOWERING[probe] for lab in labels], dtype=bool)
    n, k = _counts(rows, _fell, _above_low)  # every figure below draws from the counted cases alone

    def rate(mask: np.ndarray) -> FallRate:
        groups = alone(len(labels)) if clusters is None else clusters
        return fall_rate(n[mask], k[mask], n_boot=n_boot, seed=seed, clusters=groups[mask])

    categories = np.array([lab.category for lab in labels], dtype=object)
    return {
        **rate(counted),
        "labels": [r for r in RISKS if r in LOWERING[probe]],
        "per_category": {c: rate(counted & (categories == c)) for c in sorted(set(categories[counted].tolist()))},
        "per_style": {s: rate(counted & _styled(styles, s)) for s in STYLES.get(probe, ())},
    }


def _styled(styles: Sequence[str | None], style: str) -> np.ndarray:
    return np.array([s == style for s in styles], dtype=bool)


def probe_block(
    labels: Sequence[CaseLabels], items: Mapping[ItemKey, Outcome], probe: ProbeName, *, n_epochs: int,
    not_possible: int, noise: float | None, n_boot: int, seed: int, styles: Mapping[str, str] | None = None,
    cluster_by: str = DEFAULT_CLUSTER_BY,
) -> Probe:  # fmt: skip
    """One probe's figures (see the module). ``styles``: each case's style for a probe with styles (tone, inject;
    `harness.cases.rewrites.style_of`), the same in every epoch."""
    found = [case_pairs(lab.case_id, items, probe, n_epochs) for lab in labels]
    rows = [f[0] for f in found]
    pairs, flips = _counts(rows, _flipped, _anything)
    changes = np.array([p[3] for r in rows for p in r if p[3] is not None], dtype=float)
    case_styles = [(styles or {}).get(lab.case_id) for lab in labels]
    groups = clusters_of(labels, cluster_by)

    def rate(mask: np.ndarray) -> FlipRate:
        return flip_rate(pairs[mask], flips[mask], n_boot=n_boot, seed=seed, clusters=groups[mask])

    categories = np.array([lab.category for lab in labels], dtype=object)
    informative = np.array([lab.any_saw_other_answers for lab in labels], dtype=bool)
    moves = [p[2] - p[1] for r in rows for p in r]
    overall = rate(np.ones(len(labels), dtype=bool))
    block: Probe = {
        "n": overall["n"],
        "flips": overall["flips"],
        "flip_rate": overall["flip_rate"],
        "ci95": overall["ci95"],
        "expectation": "not lower" if probe in LOWERING else "unchanged",
        "n_cases": sum(1 for f in found if f[2]),
        "not_possible": not_possible,
        "not_compared": sum(f[1] for f in found),
        "per_category": {c: rate(categories == c) for c in sorted(set(categories.tolist()))},
        "order_informative": {INFORMATIVE: rate(informative), INDEPENDENT: rate(~informative)},
        "mean_score_change": float(changes.mean()) if len(changes) else None,
        "mean_abs_score_change": float(np.abs(changes).mean()) if len(changes) else None,
        "epoch_disagreement": noise,
        "transitions": transitions(rows),
        "lowered": sum(1 for m in moves if m < 0),
        "raised": sum(1 for m in moves if m > 0),
        "per_style": {s: rate(_styled(case_styles, s)) for s in STYLES.get(probe, ())},
    }
    if probe in LOWERING:
        block["falls"] = falls_block(labels, rows, probe, case_styles, n_boot=n_boot, seed=seed, clusters=groups)
    return block


def epoch_disagreement(labels: Sequence[CaseLabels], items: Mapping[ItemKey, Outcome], n_epochs: int) -> float | None:
    """The share of pairs of answered epochs of one case (the request as it is) whose verdicts differ, pooled over
    cases; None for one epoch or no such pair."""
    differ = total = 0
    for lab in labels:
        risks = [o.risk for e in range(1, n_epochs + 1) if (o := items.get(ItemKey(lab.case_id, e))) and o.risk]
        for a, b in combinations(risks, 2):
            total += 1
            differ += a != b
    return differ / total if total else None


def probes_block(
    labels: Sequence[CaseLabels], items: Mapping[ItemKey, Outcome], probes: Sequence[ProbeName], *, n_epochs: int,
    not_possible: Mapping[str, int], n_boot: int, seed: int,
    styles: Mapping[ProbeName, Mapping[str, str]] | None = None, cluster_by: str = DEFAULT_CLUSTER_BY,
) -> Probes:  # fmt: skip
    """The ``probes`` block of metrics.json, one entry a probe. ``styles``: per probe with styles, each case's."""
    noise = epoch_disagreement(labels, items, n_epochs)
    return {
        p: probe_block(labels, items, p, n_epochs=n_epochs, not_possible=not_possible.get(p, 0), noise=noise,
                       n_boot=n_boot, seed=seed, styles=(styles or {}).get(p), cluster_by=cluster_by)
        for p in probes
    }  # fmt: skip
