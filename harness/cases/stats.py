"""Counts that show a data set's balance, for ``fcb stats``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.cases.labels import origin_of
from harness.types import CATEGORIES, CaseLabels


def _mc(value: bool | None) -> str:
    return {True: "true", False: "false", None: "null"}[value]


def balance(labels: Sequence[CaseLabels]) -> dict[str, dict[str, int]]:
    """Counts of cases by category, expected_risk, majority_correct, answers, model_family, evidence, source, origin.

    ``model_family`` counts the cases that contain each family (a mixed case counts once for each).
    """
    by_category = Counter(lab.category for lab in labels)
    family = Counter(f for lab in labels for f in lab.families)
    family.update("(none)" for lab in labels if not lab.families)
    others: dict[str, Counter[Any]] = {
        "expected_risk": Counter(lab.expected_risk for lab in labels),
        "majority_correct": Counter(_mc(lab.majority_correct) for lab in labels),
        "answers": Counter(lab.n_answers for lab in labels),
        "model_family": family,
        "evidence": Counter("present" if lab.has_evidence else "absent" for lab in labels),
        "source": Counter(lab.source_dataset for lab in labels),
        "origin": Counter(origin_of(lab.tags) for lab in labels),
    }
    # categories in the label scheme's order
    counts: dict[str, dict[str, int]] = {"category": {c: by_category[c] for c in CATEGORIES if by_category[c]}}
    counts.update({name: {str(k): v for k, v in sorted(c.items(), key=_order)} for name, c in others.items()})
    return counts


def _order(item: tuple[Any, int]) -> tuple[int, Any]:
    key = item[0]
    return (0, key) if isinstance(key, int) else (1, str(key))


def render(path: str, total: int, counts: dict[str, dict[str, int]]) -> str:
    """The text ``fcb stats`` prints: one small table per count."""
    from harness.tables import table

    parts = [f"{path}: {total} valid cases"]
    for name, c in counts.items():
        rows = [[k, v, f"{100 * v / total:.1f}%" if total else ""] for k, v in c.items()]
        parts.append(table(rows, headers=[name, "cases", "share"], tablefmt="simple"))
    return "\n\n".join(parts)
