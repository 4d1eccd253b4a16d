"""The item stage: what a run asks, one *item* (case, epoch, variant) at a time, between the request builder and the
runner. A run without ``--epochs`` or ``--probe`` asks one item a case, (id, 1, None), and its journal lines are
those of a plain run; with them, each case is asked ``epochs`` times as it is and, in every epoch, once as each
probe's variant (`harness.cases.variants`) where the case allows one.

The runner schedules items, the journal records each with its item fields (`item_fields`), the response cache keys
each epoch apart (`harness.run.cache.EPOCH`), and metrics reduce them (`harness.epochs`, `harness.repeats`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from harness.cases.clusters import DEFAULT_CLUSTER_BY, cluster_key
from harness.cases.reader import Scan
from harness.cases.request import build_request
from harness.cases.rewrites import STYLES, style_of
from harness.cases.variants import derive
from harness.design_effect import keyed
from harness.documents import Metrics, ThresholdCheck, ThresholdDocument
from harness.epochs import reduce_items
from harness.figures import compute, operational
from harness.metrics import CODE
from harness.repeats import epochs_block, probes_block
from harness.run.cache import EPOCH
from harness.run.settings import EvalSettings
from harness.threshold import check
from harness.types import PROBES, RISKS, CaseLabels, ItemKey, Outcome, ProbeName, Reducer, Request
from harness.vocabulary import ASKED_ON

PLAIN: Mapping[str, Any] = {}
"""The item fields of a plain run's line: none (`harness.runfolder.journal.record` writes the line as ever)."""

Todo = list[tuple[CaseLabels, ItemKey]]


def has_items(settings: EvalSettings) -> bool:
    """Whether a run asks more than one item a case."""
    return settings.epochs > 1 or bool(settings.probes)


@dataclass
class ItemPlan:
    """Every item a run asks, in the cases file's order, each with its case's labels; and, per probe, how many
    cases allow no variant (`harness.cases.variants`: they are counted apart, never asked)."""

    items: Todo
    not_possible: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.items)


def plan_items(settings: EvalSettings, labels: list[CaseLabels], scanned: Scan) -> ItemPlan:
    """The items of ``labels``; a probe's variant only for the items where one differs from the request (read from
    ``scanned``'s spool, probed runs only). A case is counted in ``not_possible`` for a probe that has a variant in
    none of its epochs."""
    if not has_items(settings):
        return ItemPlan([(lab, ItemKey(lab.case_id)) for lab in labels])
    not_possible: dict[str, int] = dict.fromkeys(settings.probes, 0)
    items: Todo = []
    for lab in labels:
        per_epoch = _possible(settings, lab, scanned) if settings.probes else [()] * settings.epochs
        for probe in set(settings.probes) - {p for probes in per_epoch for p in probes}:
            not_possible[probe] += 1
        for epoch, probes in enumerate(per_epoch, start=1):
            items.append((lab, ItemKey(lab.case_id, epoch)))
            items.extend((lab, ItemKey(lab.case_id, epoch, probe)) for probe in probes)
    return ItemPlan(items, not_possible)


DRAW_FREE = frozenset({"order", "names", "evidence-order", "format", "restate", "duplicate"})
"""The probes whose variant exists or not whatever the item's generator draws (`harness.cases.variants`,
`harness.cases.rewrites`): asked once a case. The others (tone, length, inject) draw what they add, and an answer
near the 16,000-character limit may take one draw and not another: asked in each epoch."""


def _possible(settings: EvalSettings, lab: CaseLabels, scanned: Scan) -> list[tuple[str, ...]]:
    """Per epoch, the probes that have a variant for this case, among those asked on its label (`ASKED_ON`: the
    harness reads the label to plan; no label reaches the detector)."""
    request = build_request(scanned.case(lab.line), anonymize_agents=settings.anonymize_agents)
    asked = [p for p in PROBES if p in settings.probes and lab.expected_risk in ASKED_ON.get(p, RISKS)]
    free = {p for p in asked if p in DRAW_FREE and derive(request, p, settings.probe_seed, lab.case_id, 1)}
    return [
        tuple(p for p in asked if p in free or (p not in DRAW_FREE and derive(request, p, settings.probe_seed,
                                                                             lab.case_id, epoch)))
        for epoch in range(1, settings.epochs + 1)
    ]  # fmt: skip


def item_fields(
    key: ItemKey, epochs: int, permutation: list[int] | None, rewrite: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The journal fields that say which item a line answers: ``epoch`` only when the run has several."""
    fields: dict[str, Any] = {}
    if epochs > 1:
        fields["epoch"] = key.epoch
    if key.variant is not None:
        fields["variant"] = key.variant
    if permutation is not None:
        fields["permutation"] = permutation
    if rewrite is not None:
        fields["rewrite"] = dict(rewrite)
    return fields


def build_item(settings: EvalSettings, case: dict[str, Any], key: ItemKey) -> tuple[Request, Mapping[str, Any]]:
    """What the detector is sent for an item, and the item's journal fields."""
    request = build_request(case, anonymize_agents=settings.anonymize_agents)
    if not has_items(settings):
        return request, PLAIN
    if key.variant is None:
        return request, item_fields(key, settings.epochs, None)
    variant = derive(request, key.variant, settings.probe_seed, key.case_id, key.epoch)
    if variant is None:  # planned only where one exists (`plan_items`)
        raise AssertionError(f"{key}: no variant")
    return variant.request, item_fields(key, settings.epochs, variant.permutation, variant.rewrite)


def item_source(
    settings: EvalSettings, scanned: Scan, todo: Todo
) -> Iterator[tuple[CaseLabels, ItemKey, Request, Mapping[str, Any]]]:
    """Each pending item with its labels, request and journal fields, read from the spool as the workers pull them
    (never all at once). Shared by the workers: each pull runs in the pulling worker's context, so setting `EPOCH`
    here tells the response cache under that worker which epoch the request is of."""
    if not has_items(settings):
        for lab, key in todo:  # a plain run: as cheap as before items
            yield lab, key, build_request(scanned.case(lab.line), anonymize_agents=settings.anonymize_agents), PLAIN
        return
    for lab, key in todo:
        request, fields = build_item(settings, scanned.case(lab.line), key)
        EPOCH.set(key.epoch)
        yield lab, key, request, fields


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
