"""Questions: each with its ground truth, plausible wrong answers and the phrases agents use for each.

Also the matching rule every later step relies on: an answer "states" a value when it mentions it (as a number or
as a key term) and no rival.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any


@dataclass(frozen=True)
class Question:
    """A question, its ground truth and wrong answers; ``wrongs[0]`` is the most tempting mistake."""

    subject: str
    question: str
    claim: str  # "the capital of Australia is {}": how an agent states any of the candidate answers
    truth: str
    wrongs: tuple[str, ...]
    reasons: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # value -> clauses backing it
    evidence: tuple[str, ...] = ()  # true passages that support the ground truth
    numeric: bool = False  # answers are matched as numbers rather than as key terms
    claims: Mapping[str, str] = field(default_factory=dict)  # per-value overrides of ``claim``
    tags: tuple[str, ...] = ()

    @property
    def values(self) -> tuple[str, ...]:
        return (self.truth, *self.wrongs)

    def say(self, value: str) -> str:
        return self.claims.get(value, self.claim).format(value)


def make_question(subject: str, question: str, claim: str, answers: Sequence[Sequence[str]], **extra: Any) -> Question:
    """Build an Question from ``(value, reason, ...)`` rows, the ground truth first; empty reasons are dropped."""
    reasons = {row[0]: tuple(r for r in row[1:] if r) for row in answers}
    return Question(
        subject=subject,
        question=question,
        claim=claim,
        truth=answers[0][0],
        wrongs=tuple(row[0] for row in answers[1:]),
        reasons=reasons,
        **extra,
    )


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")


def as_decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def mentions(text: str, value: str, numeric: bool) -> bool:
    """True when ``text`` states ``value``: as a number token, or as a whole key term (case-insensitive)."""
    if numeric:
        target = as_decimal(value)
        return any(as_decimal(tok) == target for tok in _NUMBER.findall(text))
    pattern = rf"(?<![a-z0-9]){re.escape(value.lower())}(?![a-z0-9])"
    return re.search(pattern, text.lower()) is not None


def stated(item: Question, text: str) -> list[str]:
    return [v for v in item.values if mentions(text, v, item.numeric)]


def question_problems(item: Question) -> list[str]:
    """Why an item cannot be used: duplicate values, or phrases that mention a rival answer."""
    keys = [as_decimal(v) if item.numeric else v.lower() for v in item.values]
    problems = [] if len(set(keys)) == len(keys) and len(item.wrongs) >= 2 else ["values are not distinct"]
    for value in item.values:
        if stated(item, item.say(value)) != [value]:
            problems.append(f"claim for {value!r} is ambiguous")
        problems += [
            f"reason {r!r} names a rival" for r in item.reasons.get(value, ()) if stated(item, r) not in ([], [value])
        ]
    return problems
