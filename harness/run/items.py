"""The item stage: what a run asks, one *item* (case, epoch, variant) at a time, between the request builder and the
runner. A run without ``--epochs`` or ``--probe`` asks one item a case, (id, 1, None), and its journal lines are
those of a plain run; with them, each case is asked ``epochs`` times as it is and, in every epoch, once as each
probe's variant (`harness.cases.variants`) where the case allows one.

The runner schedules items, the journal records each with its item fields (`item_fields`), the response cache keys
each epoch apart (`harness.run.cache.EPOCH`), and metrics reduce them (`harness.epochs`, `harness.repeats`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.cases.reader import Scan
from harness.cases.request import build_request
from harness.cases.variants import derive
from harness.run.cache import EPOCH
from harness.run.settings import EvalSettings
from harness.types import PROBES, RISKS, CaseLabels, ItemKey, Request
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


Sent = tuple[CaseLabels, ItemKey, Request, Mapping[str, Any]]
"""What the workers pull: an item's labels, key, request and journal fields."""


def item_source(settings: EvalSettings, scanned: Scan, todo: Todo) -> Iterator[Sent]:
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
