"""Which cases a run counts: the chosen categories and tags (a subset is its own data set), the shard, --limit."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from harness.cases.reader import Scan
from harness.documents import Subset
from harness.errors import RunError
from harness.run.settings import EvalSettings
from harness.types import CATEGORIES, CaseLabels


def in_shard(case_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether a case belongs to shard K of N: decided by its id alone, so reordering the file changes nothing."""
    if shard is None:
        return True
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % shard[1] == shard[0] - 1


def select(labels: list[CaseLabels], categories: tuple[str, ...], tags: tuple[str, ...]) -> list[CaseLabels]:
    """The cases of any of ``categories`` that carry any of ``tags`` (an empty choice selects everything)."""
    unknown = sorted(set(categories) - set(CATEGORIES))
    if unknown:
        raise RunError(f"--category {unknown[0]!r}: not a category; choose from {', '.join(CATEGORIES)}")
    wanted = set(tags)
    return [
        lab
        for lab in labels
        if (not categories or lab.category in categories) and (not wanted or wanted.intersection(lab.tags))
    ]


def subset_digest(labels: list[CaseLabels]) -> str:
    """A subset's own data-set digest: the hash of its cases' content hashes, whatever filter chose them."""
    return hashlib.sha256("\n".join(sorted(lab.content_hash for lab in labels)).encode()).hexdigest()


def subset_choice(settings: EvalSettings) -> Subset | None:
    if not (settings.categories or settings.tags):
        return None
    return {"categories": sorted(settings.categories), "tags": sorted(settings.tags)}


def in_scope(settings: EvalSettings, scanned: Scan) -> tuple[list[CaseLabels], list[CaseLabels], str]:
    """(the cases of the selected subset and shard, those of them to run (--limit), the data set's digest)."""
    selected = select(scanned.labels, settings.categories, settings.tags)
    digest = subset_digest(selected) if subset_choice(settings) else scanned.sha256
    scope = [lab for lab in selected if in_shard(lab.case_id, settings.shard)]
    labels = scope[: settings.limit] if settings.limit is not None else scope
    return scope, labels, digest


def shard_filter(settings: EvalSettings) -> Callable[[str], bool] | None:
    """A shard validates only its own cases (the digest still covers the whole file, for fcb merge to check); a
    subset of a shard needs every case's content hash for its digest, so it validates them all."""
    if settings.shard is None or subset_choice(settings):
        return None
    shard = settings.shard
    return lambda case_id: in_shard(case_id, shard)
