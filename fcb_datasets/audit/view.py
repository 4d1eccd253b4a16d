"""The audit's view of a case (`CaseView`), its settings, and how it reads text; the split by source item."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.documents.audit import CaseOrigin, Side

ORIGINS: dict[str, CaseOrigin] = {"origin_natural": "natural", "origin_assembled": "assembled",
                                   "origin_constructed": "constructed"}  # fmt: skip
TOKEN_PATTERN = r"(?u)\b\w+\b"  # single letters and digits count: "A: 7" is a habit too


@dataclass(frozen=True, slots=True)
class CaseView:
    """What the audit needs of one case."""

    file: Side
    line: int
    case_id: str
    category: str
    question: str
    answers: tuple[str, ...]
    source_dataset: str
    source_identity: str
    origin: CaseOrigin
    has_evidence: bool
    answers_correct: tuple[bool, ...] = ()
    answers_saw: tuple[bool, ...] = ()  # metadata.saw_other_answers, False when absent
    majority_correct: bool | None = None


@dataclass(frozen=True, slots=True)
class Settings:
    max_surface_f1: float = 0.45
    seed: int = 0
    n_boot: int = 1000
    max_shape_auc: float = 0.60
    max_structure_auc: float = 0.60  # fcb_datasets/audit/structure.py
    # False: each surface model at one setting, with no grouped cross-validated grid search (`fcb audit-dataset
    # --quick`): a planted shortcut still shows, in a fifth of the time; a verdict to publish searches
    search: bool = True


def normalise(text: str) -> str:
    """Lower case, runs of white space as one space: what "identical" means for questions and answers."""
    return " ".join(text.lower().split())


def case_view(case: dict[str, Any], file: Side, line: int) -> CaseView:
    """The audit's view of one schema-valid case."""
    source = case["source"]
    if isinstance(source, str):  # "original": the question is the only identity there is
        dataset, identity = source, f"{source}:{normalise(case['question'])}"
    else:
        dataset, identity = source["dataset"], f"{source['dataset']}:{source['item']}"
    tags = set(case.get("tags", ()))
    origin: CaseOrigin = next((o for tag, o in ORIGINS.items() if tag in tags), "unknown")
    return CaseView(
        file=file,
        line=line,
        case_id=case["id"],
        category=case["category"],
        question=case["question"],
        answers=tuple(a["text"] for a in case["answers"]),
        source_dataset=dataset,
        source_identity=identity,
        origin=origin,
        has_evidence=bool(case.get("evidence")),
        answers_correct=tuple(bool(a["correct"]) for a in case["answers"]),
        answers_saw=tuple((a.get("metadata") or {}).get("saw_other_answers") is True for a in case["answers"]),
        majority_correct=case["majority_correct"],
    )


def split_by_source_item(items: Sequence[CaseView], seed: int) -> tuple[list[CaseView], list[CaseView]]:
    """Half/half by a seeded hash of each case's source identity, so one source item lands on one side only."""
    train: list[CaseView] = []
    test: list[CaseView] = []
    for it in items:
        digest = hashlib.sha256(f"{seed}:{it.source_identity}".encode()).digest()
        side = test if digest[0] & 1 else train
        side.append(replace(it, file="test" if side is test else "train"))
    return train, test
