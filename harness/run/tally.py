"""A run's tally: its figures from its items' outcomes, computed one way for a run and for a merge of its shards
(`run_figures`): the headline on one verdict a case, the epochs and probes figures, the cost, the threshold's check.
Apart from the item stage (`harness.run.items`), so that what a run needs before its first request imports no
numpy: this module is imported once the answers are in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from harness.cases.clusters import DEFAULT_CLUSTER_BY, cluster_key
from harness.cases.rewrites import STYLES, style_of
from harness.design_effect import keyed
from harness.documents import Metrics, ThresholdCheck, ThresholdDocument
from harness.epochs import reduce_items
from harness.figures import compute, operational
from harness.metrics import CODE
from harness.repeats import epochs_block, probes_block
from harness.run.items import ItemPlan
from harness.run.settings import EvalSettings
from harness.threshold import check
from harness.types import CaseLabels, ItemKey, Outcome, ProbeName, Reducer


def add_item_figures(
    metrics: Metrics,
    labels: list[CaseLabels],
    items: Mapping[ItemKey, Outcome],
    *,
    epochs: int,
    reducer: Reducer,
    probes: Sequence[ProbeName],
    not_possible: Mapping[str, int],
    wall_s: float,
    prices: tuple[float | None, float | None] = (None, None),
    n_boot: int,
    seed: int,
    probe_seed: int = 0,
    cluster_by: str = DEFAULT_CLUSTER_BY,
) -> None:
    """Add a run's epochs and probes figures to ``metrics`` (computed on one reduced outcome a case), and count
    every item in the operational figures (requests, errors, latency, tokens). Nothing for a plain run."""
    if epochs <= 1 and not probes:
        return
    in_scope = {lab.case_id: lab.content_hash for lab in labels}
    asked = [o for k, o in items.items() if in_scope.get(k.case_id) == o.content_hash]
    metrics["operational"] = operational(asked, wall_s, prices)
    if epochs > 1:
        metrics["epochs"] = epochs_block(labels, items, n_epochs=epochs, reducer=reducer, n_boot=n_boot, seed=seed,
                                         cluster_by=cluster_by)  # fmt: skip
    if probes:
        styles = {p: {lab.case_id: style for lab in labels if (style := style_of(probe_seed, p, lab.case_id))}
                  for p in probes if p in STYLES}  # fmt: skip
        metrics["probes"] = probes_block(labels, items, probes, n_epochs=epochs, not_possible=not_possible,
                                         n_boot=n_boot, seed=seed, styles=styles, cluster_by=cluster_by)  # fmt: skip


def run_figures(
    settings: EvalSettings, labels: list[CaseLabels], items: Mapping[ItemKey, Outcome], plan: ItemPlan, wall_s: float
) -> tuple[Metrics, dict[str, Outcome], int]:
    """The figures of a run's items, computed one way for a run and for a merge of its shards: the headline on one
    verdict a case (`harness.epochs.reduce_items`), the epochs and probes figures, and the cost at the settings'
    prices. Returns (the figures, the reduced outcome of each case, the planned items not asked)."""
    prices = (settings.options.price_prompt_per_mtok, settings.options.price_completion_per_mtok)
    reduced = reduce_items(items.values(), settings.epoch_reducer)
    metrics = compute(labels, reduced, wall_s=wall_s, n_boot=settings.n_boot, seed=settings.seed, prices=prices,
                      ece_bins=settings.ece_bins, cluster_by=settings.cluster_by)  # fmt: skip
    add_item_figures(metrics, labels, items, epochs=settings.epochs, reducer=settings.epoch_reducer,
                     probes=settings.probes, not_possible=plan.not_possible, wall_s=wall_s, prices=prices,
                     n_boot=settings.n_boot, seed=settings.seed, probe_seed=settings.probe_seed,
                     cluster_by=settings.cluster_by)  # fmt: skip
    if (held := settings.held_threshold()) is not None:
        metrics["threshold"] = threshold_figures(held, str(settings.threshold), labels, reduced, settings.cluster_by)
    unasked = sum(1 for _, key in plan.items if key not in items)
    return metrics, reduced, unasked


def threshold_figures(
    held: ThresholdDocument, file: str, labels: Sequence[CaseLabels], outcomes: Mapping[str, Outcome],
    cluster_by: str = DEFAULT_CLUSTER_BY,
) -> ThresholdCheck:  # fmt: skip
    """The threshold's figures on the run's cases in scope (`harness.threshold.check`), each case's score on the
    threshold's basis: its risk_score, or its verdict's code; none for a case not run or without one. The miss
    rate's interval knows the cases' clusters (``cluster_by``)."""
    done = [(lab, outcomes.get(lab.case_id)) for lab in labels]
    y_true = np.array([CODE[lab.expected_risk] for lab, _ in done], dtype=np.int64)
    if held["basis"] == "risk_score":
        values = [o.score if o is not None and o.score is not None else np.nan for _, o in done]
    else:
        values = [float(CODE[o.risk]) if o is not None and o.risk is not None else np.nan for _, o in done]
    keys = [keyed(cluster_key(lab, cluster_by), lab.case_id) for lab in labels]
    return check(held, file, y_true, np.array(values, dtype=float), keys)
