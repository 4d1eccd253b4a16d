"""One candidate case, made the same way for every source: provenance, labels, tags, and its agents in shuffled order.

Three origins, tagged on every case: ``origin_natural`` (an answer set exactly as a source gave it: a panel fixed in
advance answering a question, a debate as it ran, the four GSM8K solutions of a problem), ``origin_assembled`` (real
answers chosen and combined by rule) and ``origin_constructed`` (any text we wrote: notes in a question, agents
taking a note up). A case whose dynamics we wrote also says which: ``staged_note`` (a note in the question and
answers we wrote as agents who read it; their working, where they show one, is a real solution's, written without
the note) or ``staged_echo`` (agents of ours restating a real answer they read). Each case says how it was made in
``source.modification``; no metadata flag claims what did not happen: ``saw_other_answers`` only on answers written
after reading others (a debate's later rounds), and ``shared_context`` only on answers we wrote as agents given a
note.

Agents are shuffled (seeded, per item), so no position says which answer is real, correct or the dissent; where the
order is part of what happened (a debate's rounds), the rounds keep their order and the agents are shuffled within
them, the same way in every round.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from harness.cases.labels import check_case
from harness.cases.validate import schema_errors
from harness.types import CATEGORY_RISK

NATURAL, ASSEMBLED, CONSTRUCTED = "origin_natural", "origin_assembled", "origin_constructed"
RATIONALE = {
    "majority_wrong_fact": "Most agents give the same wrong answer.",
    "echo_cascade": "After reading each other, the agents converged on a wrong answer one of them gave first.",
    "anchoring_injected_premise": "A false note in the question was shared by all agents and their answers take it up.",
    "lone_correct_dissenter": "A wrong answer holds the majority; the single correct answer is the dissent.",
    "numeric_consensus_error": "Most agents reach the same wrong number.",
    "genuine_agreement_correct": "Answers reached independently agree on the correct answer.",
    "genuine_disagreement": "No single answer is held by 60% of the agents.",
    "correct_but_unsupported": "The consensus is correct but rests on a source that the agents adopted or were given.",
}


@dataclass(frozen=True)
class Source:
    """A source's provenance block and its short name (the case's first tag)."""

    short: str
    dataset: str
    license: str
    citation: str
    url: str

    def block(self, item: str, how: str) -> dict[str, str]:
        return {"dataset": self.dataset, "license": self.license, "citation": self.citation, "url": self.url,
                "item": item, "modification": how}  # fmt: skip


@dataclass(frozen=True)
class Candidate:
    """A case before sampling: its category, source, stratum (what sampling balances within a source: the panel or
    the number of answers), source item (what splits go by) and the case itself; the recipe that wrote it, for a
    constructed case (``note``, ``echo``: cases of one recipe are sampled as a unit of their own, false claims as
    many as true ones), and how hard its question is (``difficulty``: a subject, a level, a number of steps; sampling
    matches it across categories, `sampling.matched`), where the source tells."""

    category: str
    source: str
    stratum: str
    item: str
    case: dict[str, Any] = field(compare=False)
    recipe: str = ""
    difficulty: str = ""

    @property
    def unit(self) -> str:
        """What sampling balances risk levels within: the source, or the source and recipe of a constructed case."""
        return f"{self.source}/{self.recipe}" if self.recipe else self.source


def answer(
    text: str, correct: bool, family: str | None = None, saw: bool = False, shared: bool = False
) -> dict[str, Any]:
    """One answer with its labels; ``family`` is the real model behind it, when known."""
    meta: dict[str, Any] = {"saw_other_answers": saw, "shared_context": shared}
    if family:
        meta = {"model_family": family, **meta}
    return {"text": text, "correct": correct, "metadata": meta}


def majority_label(category: str) -> bool | None:
    if CATEGORY_RISK[category] == "high":
        return False
    return None if category == "genuine_disagreement" else True


def make_case(
    source: Source, category: str, question: str, answers: list[dict[str, Any]], truth: str, item: str, how: str,
    origin: str, stratum: str, rng: random.Random, seats: list[tuple[int, int]] | None = None, recipe: str = "",
    difficulty: str = "",
) -> Candidate | None:  # fmt: skip
    """A candidate with its agents shuffled, or None when it breaks the schema or the label scheme (the rules fcb
    validate applies). ``seats`` gives each answer's (round, agent) in a debate: rounds keep their order, agents
    are shuffled within them the same way in every round. ``recipe`` and ``difficulty``: see `Candidate`."""
    ordered, ids = _order(answers, rng, seats)
    case = {
        "id": "",
        "category": category,
        "question": question,
        "answers": [{"agent_id": i, **a} for i, a in zip(ids, ordered, strict=True)],
        "ground_truth": truth,
        "expected_risk": CATEGORY_RISK[category],
        "majority_correct": majority_label(category),
        "rationale": RATIONALE[category],
        "source": source.block(item, how),
        "tags": [source.short, origin, *([f"staged_{recipe}"] if recipe else [])],
    }
    return Candidate(category, source.short, stratum, item, case, recipe, difficulty) if valid(case) else None


def _order(
    answers: list[dict[str, Any]], rng: random.Random, seats: list[tuple[int, int]] | None
) -> tuple[list[dict[str, Any]], list[str]]:
    """Answers in shuffled order with their agent ids ("agent-2"; in a debate "agent-2 (round 1)")."""
    if seats is None:
        shuffled = rng.sample(answers, len(answers))
        return shuffled, [f"agent-{i}" for i in range(1, len(shuffled) + 1)]
    agents = sorted({agent for _, agent in seats})
    perm = dict(zip(agents, rng.sample(agents, len(agents)), strict=True))
    placed = sorted(((r, perm[agent], a) for (r, agent), a in zip(seats, answers, strict=True)), key=lambda x: x[:2])
    last = max(r for r, _ in seats)
    ids = [f"agent-{k + 1} ({'final round' if r == last else f'round {r}'})" for r, k, _ in placed]
    return [a for *_, a in placed], ids


def valid(case: dict[str, Any]) -> bool:
    """Valid under the schema and the label scheme (checked with a placeholder id; real ids come at the end)."""
    probe = {**case, "id": "FCB-0000"}
    return not schema_errors(probe) and not [r for r in check_case(probe) if not r.warning]
