"""Panels: models chosen once, every question asked of every panel, and the category the panel's answers show.

A panel is fixed before any answer is looked at (the lists live in each source's module and in the card), so a
case holds an answer set exactly as the source gave it for that panel: ``origin_natural``. Which questions enter
the benchmark is then chosen by the category their panel answers show, by question, never by agent.

The category, by the label scheme's 60% rule over the panel's answers (an unreadable answer counts as an answer,
never as correct and never towards a consensus):
- >= 60% correct: ``genuine_agreement_correct``;
- one wrong value held by >= 60%: ``lone_correct_dissenter`` when exactly one answer is correct, otherwise
  ``numeric_consensus_error`` for a numeric gold answer and ``majority_wrong_fact`` for any other;
- no value at 60%: ``genuine_disagreement``.
A panel whose answers are more than a quarter unreadable gives no case for that question: what its agents agree on
cannot be read, so no label would be safe.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Reading:
    """One model's answer to one question, graded: the text a detector sees, the value key (None: unreadable)."""

    model: str  # the source file stem
    text: str
    key: str | None
    correct: bool


@dataclass(frozen=True)
class Panel:
    name: str
    models: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.models)


def meets(count: int, total: int) -> bool:
    """count/total >= 60%, in whole numbers (3 of 5 is exactly 60%)."""
    return 5 * count >= 3 * total


def too_unreadable(readings: Sequence[Reading]) -> bool:
    return 4 * sum(r.key is None for r in readings) > len(readings)


def panel_category(readings: Sequence[Reading], numeric: bool) -> str:
    """The category a set of independent answers shows (module docstring)."""
    n = len(readings)
    correct = sum(r.correct for r in readings)
    wrong = Counter(r.key for r in readings if r.key is not None and not r.correct)
    top = max(wrong.values(), default=0)
    if meets(correct, n):
        return "genuine_agreement_correct"
    if meets(top, n):
        if correct == 1:
            return "lone_correct_dissenter"
        return "numeric_consensus_error" if numeric else "majority_wrong_fact"
    return "genuine_disagreement"
