"""The figures of a run's ``metrics.json`` that leaderboards, comparisons and history rank by and show, checked
against the run's journal before anyone reads them.

``metrics.json`` is a summary; the journal (``predictions.jsonl``) is the run's source of truth, and every figure
checked here is a pure function of it (`harness.metrics` and `harness.calibration`, the very functions the run
computed them with). A document whose figures do not follow from its journal (edited by hand, faked, or left stale
by a resume killed before it rewrote it) is refused, naming the file and the figure: a leaderboard must never rank
a number the run did not earn. A baseline file is checked the same way against its per-case letters (it keeps no
scores: its ECE is not shown).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from harness.calibration import ece
from harness.cases.labels import REAL_ORIGINS, UNKNOWN_ORIGIN
from harness.errors import RunLoadError
from harness.metrics import confusion, defined, headline_batch, present_classes
from harness.operating import operating_point, operating_points
from harness.types import RISKS
from harness.vocabulary import LOWERING

TOLERANCE = 1e-9
"""Relative tolerance for a rate: the same functions on the same cases give the same float, JSON keeps it exactly."""

_PREDICTED = (*RISKS, "error")

Path = tuple[str, ...]
"""Where a figure sits in the ``metrics`` block, key by key (a category's name may hold a dot: never one string)."""


def journal_figures(
    categories: np.ndarray, y_true: np.ndarray, y_pred: np.ndarray, origins: np.ndarray | None
) -> dict[Path, Any]:
    """The checked figures computed from per-case outcomes, by their path in the ``metrics`` block."""
    cm = confusion(y_true, y_pred)
    figures: dict[Path, Any] = {("n_cases",): len(y_true), ("confusion_matrix", "counts"): cm.tolist()}
    figures |= {(name,): defined(v) for name, v in headline_batch(cm, present_classes(cm)).items()}
    known = origins if origins is not None else np.full(len(y_true), UNKNOWN_ORIGIN)
    for block, subset in (
        ("headline_real", np.isin(known, sorted(REAL_ORIGINS))),
        ("headline_natural", known == "natural"),
    ):
        cm_sub = confusion(y_true[subset], y_pred[subset])
        figures[(block, "n_cases")] = int(subset.sum())
        figures |= {(block, k): defined(v) for k, v in headline_batch(cm_sub, present_classes(cm_sub)).items()}
    for category in sorted(set(categories.tolist())):
        mask = categories == category
        right = int((y_pred[mask] == y_true[mask]).sum())
        n = int(mask.sum())
        spread = np.bincount(y_pred[mask], minlength=len(_PREDICTED))
        figures[("per_category", category, "n")] = n
        figures[("per_category", category, "correct")] = right
        figures[("per_category", category, "accuracy")] = right / n
        figures |= {("per_category", category, "predicted", r): int(c) for r, c in zip(_PREDICTED, spread, strict=True)}
    errors = int((y_pred == len(RISKS)).sum())
    figures |= {("operational", "cases"): len(y_true), ("operational", "errors"): errors}
    return figures


def score_figures(metrics: Mapping[str, Any], y_true: np.ndarray, scores: np.ndarray) -> dict[Path, Any]:
    """``scores.n_scored`` and the ECE (`harness.calibration.ece`, over the bins the document states) from the
    journal's scores (NaN where a case has none), when the document states an ECE: what a leaderboard shows of them.
    A document that states one over a journal without scores is contradicted at ``scores``."""
    found, bins = _lookup(metrics, ("scores", "calibration", "bins"))
    if not found:
        return {}
    scored = ~np.isnan(scores)
    if not scored.any():
        return {("scores",): None}
    y_high = (y_true[scored] == RISKS.index("high")).astype(float)
    return {
        ("scores", "n_scored"): int(scored.sum()),
        ("scores", "calibration", "ece"): ece(y_high, scores[scored], bins),
    }


def item_figures(metrics: Mapping[str, Any], y_true: np.ndarray, plain: np.ndarray,
                 variants: Mapping[str, np.ndarray]) -> dict[Path, Any]:  # fmt: skip
    """The figures of the ``epochs`` and ``probes`` blocks that leaderboards show, from the journal's items, when
    the document has the block: the sd of macro-F1 over epochs, the share of cases whose epochs all agree, and
    each probe's flip rate and, for inject and duplicate, its fall rate (as `harness.repeats` computes them).
    ``plain``: (cases, N) verdict codes, -1 where an epoch has no item (`harness.leaderboard.runs.item_verdicts`);
    ``variants``: the same per probe."""
    figures: dict[Path, Any] = {}
    if _lookup(metrics, ("epochs",))[0] and plain.shape[1] > 1:
        f1 = []
        for e in range(plain.shape[1]):
            asked = plain[:, e] >= 0
            cm = confusion(y_true[asked], plain[asked, e])
            f1.append(defined(headline_batch(cm, present_classes(cm))["macro_f1"]))
        sd = None if any(v is None for v in f1) else float(np.std(np.array(f1, dtype=float), ddof=1))
        figures[("epochs", "spread", "macro_f1", "sd")] = sd
        complete = plain[(plain >= 0).all(axis=1)]
        agree = (complete == complete[:, :1]).all(axis=1)
        figures[("epochs", "self_agreement", "all_agree")] = float(agree.mean()) if len(agree) else None
    for probe, table in variants.items():
        if not _lookup(metrics, ("probes", probe))[0]:
            continue
        answered = (table >= 0) & (table != len(RISKS)) & (plain >= 0) & (plain != len(RISKS))
        pairs, flips = int(answered.sum()), int((answered & (table != plain)).sum())
        figures[("probes", probe, "flip_rate")] = flips / pairs if pairs else None
        if probe in LOWERING:  # the attack success (inject) or fall rate (duplicate) on the labels it counts
            counted = answered & np.isin(y_true, [RISKS.index(r) for r in LOWERING[probe]])[:, None] & (plain > 0)
            n, falls = int(counted.sum()), int((counted & (table < plain)).sum())
            figures[("probes", probe, "falls", "fall_rate")] = falls / n if n else None
    return figures


def operating_figures(
    metrics: Mapping[str, Any], y_true: np.ndarray, y_pred: np.ndarray, scores: np.ndarray | None
) -> dict[Path, Any]:
    """The operating points a leaderboard shows (`harness.operating`), when the document has the block: each
    policy's escalation rate, false consensus caught and right consensus escalated, and, from a run folder's scores
    (``scores`` None for a baseline file, which keeps none), the AURC."""
    if not _lookup(metrics, ("operating_points",))[0]:
        return {}
    figures: dict[Path, Any] = {}
    for name, escalated in (("high", y_pred == 2), ("high_or_medium", (y_pred == 1) | (y_pred == 2))):
        point = operating_point(escalated, y_true, n_boot=0, seed=0)
        for figure in ("escalation_rate", "false_consensus_caught", "right_consensus_escalated"):
            figures[("operating_points", "policies", name, figure)] = point[figure]
    if scores is not None:
        full = operating_points(y_true, y_pred, scores, n_boot=0, seed=0)
        figures[("operating_points", "risk_coverage", "aurc")] = full["risk_coverage"]["aurc"]
    return figures


def latency_figures(latencies: np.ndarray) -> dict[Path, Any]:
    """``operational.latency_s`` as `harness.figures.operational` computes it, from the latencies of the cases that
    asked the detector (replayed answers left out)."""
    if not len(latencies):
        return {("operational", "latency_s"): {}}
    return {("operational", "latency_s", f"p{q}"): float(np.percentile(latencies, q)) for q in (50, 90, 95, 99)}


def _lookup(block: Mapping[str, Any], path: Path) -> tuple[bool, Any]:
    node: Any = block
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return False, None
        node = node[key]
    return True, node


def _same(claimed: Any, actual: Any) -> bool:
    if isinstance(actual, float) and isinstance(claimed, int | float) and not isinstance(claimed, bool):
        return math.isclose(claimed, actual, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    return bool(claimed == actual) and type(claimed) is not bool


def disagreements(metrics: Mapping[str, Any], figures: Mapping[Path, Any]) -> Iterator[tuple[str, Any, Any]]:
    """(dotted path, the document's value, the recomputed one) for each checked figure the ``metrics`` block states
    otherwise. A figure a document of an older version lacks is not asked for (``error_rate``, ``headline_real``,
    ``headline_natural``);
    the categories must be the same ones."""
    if isinstance(metrics.get("per_category"), Mapping):
        stated = set(metrics["per_category"])
        computed = {path[1] for path in figures if path[0] == "per_category"}
        if stated != computed:
            yield "per_category", sorted(stated), sorted(computed)
    for path, actual in figures.items():
        if path[0] in ("headline_real", "headline_natural") and not isinstance(metrics.get(path[0]), Mapping):
            continue  # no such headline (no origin tags, or a document from before it): none of its figures is read
        found, claimed = _lookup(metrics, path)
        if not found and path[0] in ("error_rate", "per_category"):
            continue  # error_rate: absent before it was stored; a category's absence is named above
        if not found or not _same(claimed, actual):
            yield ".".join(path), claimed if found else "(missing)", actual


def check_figures(
    where: str, source: str, metrics: Mapping[str, Any], figures: Mapping[Path, Any], hint: str = ""
) -> None:
    """`RunLoadError` naming ``where`` (the file, and the path to its metrics block) and the first figure of
    ``metrics`` that ``figures`` (computed from ``source``) contradict; ``hint``: how such a file comes about."""
    for path, claimed, actual in disagreements(metrics, figures):
        raise RunLoadError(
            f"{where}.{path}: {claimed!r}, but {source} gives {actual!r}; refusing a run whose figures do not follow "
            f"from its cases{hint}"
        )
