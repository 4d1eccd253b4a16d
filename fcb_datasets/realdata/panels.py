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
The category must not hang on an answer that could not be read: read as the gold answer, as any wrong value the
panel holds or as a wrong value of its own, every unreadable answer must leave the category as it is, or the panel
gives no case for that question (a reader who finds "the correct statement is (J)" where the anchors found nothing
would otherwise see another category than the label). An answer that names no value at all, cut off or looping,
is no such doubt (`Reading.silent`). A panel whose answers are more than a quarter unreadable gives no case for
that question: what its agents agree on cannot be read, so no label would be safe.
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
    silent: bool = False  # unreadable and names no value at all (cut off, looping): no reader could read one in


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


def panel_category(readings: Sequence[Reading], numeric: bool) -> str | None:
    """The category a set of independent answers shows (module docstring), or None when it hangs on how an
    unreadable answer would be read."""
    n, unread = len(readings), sum(r.key is None and not r.silent for r in readings)
    correct = sum(r.correct for r in readings)
    top = max(Counter(r.key for r in readings if r.key is not None and not r.correct).values(), default=0)
    category = _category(n, correct, top, numeric)
    # The category rests on two counts: the correct answers and the largest wrong value. With c of the unreadable
    # answers read as right, the others read wrong can leave the largest wrong value as it is (each a value of its
    # own; one at least when there was none), join it, or anything between.
    for c in range(unread + 1):
        rest = unread - c
        low = top if top or not rest else 1
        for t in range(low, top + rest + 1):
            if _category(n, correct + c, t, numeric) != category:
                return None
    return category


def _category(n: int, correct: int, top: int, numeric: bool) -> str:
    """The 60% rule: ``correct`` of ``n`` answers right, ``top`` on the largest wrong value."""
    if meets(correct, n):
        return "genuine_agreement_correct"
    if meets(top, n):
        if correct == 1:
            return "lone_correct_dissenter"
        return "numeric_consensus_error" if numeric else "majority_wrong_fact"
    return "genuine_disagreement"
