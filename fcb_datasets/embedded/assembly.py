"""Turning plans into cases: panel sizes, agent order, provenance metadata, wording and labels.

Every case is checked against the label scheme before it is emitted (see the package docstring).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from fcb_datasets.embedded.plans import Ans, Draft, Slot
from fcb_datasets.embedded.questions import Question, as_decimal, stated
from fcb_datasets.embedded.wording import note_question, pick_voice, render

# The label scheme's category -> risk, copied from harness.types.CATEGORY_RISK because the generator stands alone
# (an import-linter contract); tests/fcb_datasets/test_embedded.py checks that the two agree.
CATEGORY_RISK: dict[str, str] = {
    "majority_wrong_fact": "high",
    "echo_cascade": "high",
    "anchoring_injected_premise": "high",
    "lone_correct_dissenter": "high",
    "genuine_agreement_correct": "low",
    "genuine_disagreement": "medium",
    "correct_but_unsupported": "medium",
    "numeric_consensus_error": "high",
}
FAMILIES = tuple(f"family-{c}" for c in "abcdef")


# Answer counts: one multiset for every category, dealt in a shuffled order, so the count of answers says nothing of
# the category (the count-only model of the shortcut audit learns nothing from it) and every category holds pairs and
# panels of 16. A lone dissenter needs three answers (one right against at least 60% wrong): its pairs become 3.
SIZES_PER_CATEGORY = (2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 10, 12, 13, 14, 16)
RARE_PER_CATEGORY = 3  # cases of each category that take its rare variant (genuine_disagreement: no right answer)
RARE_SIZES = (2, 4)  # sizes the rare variant can take: the items' two wrong answers split evenly, 1-1 or 2-2
_ID_SCHEMES = ("agent-{}", "solver-{}", "a{}", "expert_{}")


def category_slots(rng: random.Random, minimum: int) -> list[Slot]:
    """One category's slots in a random order: the shared sizes (those under ``minimum`` raised to it), and the
    rare variant on a few of those whose size allows it."""
    sizes = [max(s, minimum) for s in SIZES_PER_CATEGORY]
    rng.shuffle(sizes)
    rare = set(rng.sample([i for i, n in enumerate(sizes) if n in RARE_SIZES], RARE_PER_CATEGORY))
    return [Slot(n, i in rare) for i, n in enumerate(sizes)]


def _families(rng: random.Random, n: int, single_p: float) -> list[str]:
    if rng.random() < single_p:
        return [rng.choice(FAMILIES)] * n
    pool = rng.sample(FAMILIES, rng.randint(2, len(FAMILIES)))
    chosen = [rng.choice(pool) for _ in range(n)]
    if len(set(chosen)) == 1:  # a "mixed" panel must really mix families
        chosen[rng.randrange(n)] = next(f for f in pool if f != chosen[0])
    return chosen


def _majority(item: Question, plans: Sequence[Ans]) -> bool | None:
    counts = Counter(p.value for p in plans)
    n = len(plans)
    if 5 * counts[item.truth] >= 3 * n:
        return True
    if any(5 * c >= 3 * n for v, c in counts.items() if v != item.truth):
        return False
    return None


def _category_problems(category: str, item: Question, plans: Sequence[Ans], majority: bool | None) -> list[str]:
    wanted: bool | None = {"low": True, "medium": True, "high": False}[CATEGORY_RISK[category]]
    if category == "genuine_disagreement":
        wanted = None
    problems = [] if majority is wanted else [f"majority_correct is {majority}, expected {wanted}"]
    n = len(plans)
    wrong = item.wrongs[0]
    if category == "lone_correct_dissenter" and sum(p.value == item.truth for p in plans) != 1:
        problems.append("needs exactly one correct answer")
    if category == "echo_cascade":
        alone = sum(p.value == wrong and not p.saw for p in plans)
        if alone != 1 or 5 * sum(p.value == wrong for p in plans) < 3 * n or not any(p.saw for p in plans):
            problems.append("needs one wrong answer given alone that agents who read it carry to 60%")
    if category in ("majority_wrong_fact", "numeric_consensus_error", "genuine_agreement_correct"):
        value = item.truth if category == "genuine_agreement_correct" else wrong
        if 5 * sum(p.value == value and not p.saw for p in plans) < 3 * n:
            problems.append("the agents who answered alone must make the 60% majority")
    if category == "anchoring_injected_premise" and not all(p.shared for p in plans):
        problems.append("needs shared_context on every answer")
    if category == "numeric_consensus_error" and as_decimal(item.truth) is None:
        problems.append("needs a numeric ground truth")
    return problems


def _question(rng: random.Random, item: Question, draft: Draft, frame: str) -> str:
    if draft.note_value is None:
        return item.question
    return note_question(rng, item, draft.note_value, frame)


def assemble(rng: random.Random, number: int, category: str, item: Question, draft: Draft) -> dict[str, Any]:
    plans = list(draft.plans)
    rng.shuffle(plans)  # agent order says nothing of who is right, who answered first or who copied
    n = len(plans)
    id_scheme = rng.choice(_ID_SCHEMES)
    families = _families(rng, n, draft.single_family_p)
    voice, frame = pick_voice(rng)
    answers = []
    for i, (plan, family) in enumerate(zip(plans, families, strict=True), start=1):
        text = render(rng, item, plan.value, plan.mode, voice)
        if stated(item, text) != [plan.value]:  # the `correct` flag must match what the text states
            raise ValueError(f"answer {text!r} does not state exactly {plan.value!r}")
        meta = {"model_family": family, "saw_other_answers": plan.saw, "shared_context": plan.shared}
        answers.append(
            {
                "agent_id": id_scheme.format(i),
                "text": text,
                "correct": plan.value == item.truth,
                "metadata": meta,
            }
        )
    majority = _majority(item, plans)
    if problems := _category_problems(category, item, plans, majority):
        raise ValueError(f"FCB-{number:04d} ({category}): {'; '.join(problems)}")
    case: dict[str, Any] = {
        "id": f"FCB-{number:04d}",
        "category": category,
        "question": _question(rng, item, draft, frame),
    }
    if draft.evidence_allowed and item.evidence and rng.random() < EVIDENCE_SHARE:
        case["evidence"] = list(item.evidence)
    tags = [item.subject, *item.tags, *FRAMING_TAGS[draft.framing], *(("large_panel",) if n >= 10 else ())]
    case.update(
        answers=answers,
        ground_truth=item.truth,
        expected_risk=CATEGORY_RISK[category],
        majority_correct=majority,
        rationale=draft.rationale,
        source="original",
        tags=list(dict.fromkeys(tags)),
    )
    return case


EVIDENCE_SHARE = 0.5  # of the cases whose item has evidence (never correct_but_unsupported: evidence is support)
FRAMING_TAGS = {
    "panel": (),
    "note": ("note_in_question",),
    "copy": ("copied_answers",),
}


class Deck:
    """Deals entries without replacement and reshuffles when empty, so reuse is spread evenly."""

    def __init__(self, rng: random.Random, entries: Sequence[Any]) -> None:
        self._rng, self._entries = rng, list(entries)
        self._hand: list[Any] = []

    def deal(self) -> Any:  # an Question or a generator, depending on the deck
        if not self._hand:
            self._hand = list(self._entries)
            self._rng.shuffle(self._hand)
        return self._hand.pop()
