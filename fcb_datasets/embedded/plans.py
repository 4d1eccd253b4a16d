"""Case plans: who answers what, in which mode, for each category; checked and rendered by ``assembly``.

A case has one *framing*, drawn from the same three for every category that allows it:

- ``panel``: agents answer on their own (reasoned, plain, hedged or bare); one may restate an answer it read, one of
  the minority may say it read the others and disagrees;
- ``note``: the question carries a note stating a value, true or false; each agent takes it up or rejects it;
- ``copy``: one agent answers on its own and others restate that answer.

Which framings a category allows follows from its definition (an echo cascade is copied answers; genuine agreement
is never copied nor anchored on a note). Each right majority is built as the mirror of a wrong one, the right
answer and the main mistake swapped (genuine agreement of majority_wrong_fact, numeric_consensus_error and
lone_correct_dissenter; correct_but_unsupported of echo_cascade and anchoring_injected_premise), with the same
framing odds, so the framings and the words they bring are spread alike over wrong majorities and right ones, and
wherever a right majority can sit at least as many wrong ones sit too. Answer counts come from one distribution
for all categories (``assembly``), and every plan is shuffled there: nothing about a case's position, size or
wording depends on whether its consensus is right.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fcb_datasets.embedded.questions import Question

PANEL_ECHO = 0.2  # a panel where one agent restates an answer it read (when the rest still make the majority)
PANEL_DISSENT = 0.3  # a panel where one of the minority says it read the others and disagrees
INDEPENDENT_MODES = (("reasoned", "plain", "hedged", "bare"), (6, 2, 1, 1))


@dataclass
class Ans:
    value: str
    mode: str
    saw: bool = False
    shared: bool = False


@dataclass(frozen=True)
class Slot:
    """Where a case sits in its category: its number of answers, and whether it takes the category's rare variant
    (dealt to a fixed few of each category's cases, so that a rare label edge is in every build)."""

    n: int
    rare: bool = False


@dataclass
class Draft:
    plans: list[Ans]
    rationale: str
    framing: str
    note_value: str | None = None  # the value the question's note states, when it has one
    evidence_allowed: bool = True
    single_family_p: float = 0.3


def sixty(n: int) -> int:
    """Smallest count that reaches 60% of n (integer maths, so 3 of 5 counts)."""
    return (3 * n + 4) // 5


def others(item: Question, count: int) -> list[str]:
    """Secondary wrong answers (never the main mistake), cycling so a panel can hold any number."""
    pool = item.wrongs[1:]
    return [pool[i % len(pool)] for i in range(count)]


def _independent(rng: random.Random, value: str) -> Ans:
    modes, weights = INDEPENDENT_MODES
    return Ans(value, rng.choices(modes, weights=weights)[0])


def _answers(rng: random.Random, framing: str, values: Sequence[str], note_value: str | None = None) -> list[Ans]:
    """Answers given alone, in a panel or under a note (copying is built by ``_copied``)."""
    if framing == "note":
        return [Ans(v, "adopt" if v == note_value else "reject", shared=True) for v in values]
    plans = [_independent(rng, v) for v in values]
    if not any(p.mode == "reasoned" for p in plans):  # a panel always holds at least one reasoned answer
        rng.choice(plans).mode = "reasoned"
    return plans


def _panel_twists(rng: random.Random, plans: list[Ans], majority: str, n: int) -> None:
    """In a panel: now and then one agent of the majority restates an answer it read (only when the agents who
    answered alone still make 60% without it), and one of the minority says it read the others and disagrees."""
    alone = [p for p in plans if p.value == majority]
    if len(alone) - 1 >= sixty(n) and rng.random() < PANEL_ECHO:
        echoer = rng.choice(alone)
        echoer.mode, echoer.saw = "echo", True
    minority = [p for p in plans if p.value != majority]
    if minority and rng.random() < PANEL_DISSENT:
        reader = rng.choice(minority)
        reader.mode, reader.saw = "dissent", True


def _copied(rng: random.Random, value: str, copies: int) -> list[Ans]:
    """One agent answering alone and ``copies`` agents restating its answer."""
    return [_independent(rng, value)] + [Ans(value, "echo", saw=True) for _ in range(copies)]


def _framing(rng: random.Random, odds: dict[str, float]) -> str:
    return rng.choices(list(odds), weights=list(odds.values()))[0]


# Framing odds. A right majority and its wrong mirrors share them: genuine agreement and the three wrong majorities
# built alike (its mirrors) are panels or rejected notes at the same odds; correct_but_unsupported is copied answers
# or an adopted note, as echo_cascade and anchoring_injected_premise are. So no framing is where right majorities
# gather, and within a framing the wrong majorities outnumber the right ones.
CROWD_FRAMINGS = {"panel": 0.7, "note": 0.3}
UNSUPPORTED_FRAMINGS = {"copy": 0.5, "note": 0.5}
DISAGREEMENT_FRAMINGS = {"panel": 0.5, "note": 0.25, "copy": 0.25}


def _crowd(rng: random.Random, item: Question, n: int, main: str, second: str, lone: bool) -> tuple[list[str], int]:
    """Values of a panel with a 60% majority on ``main``: ``second`` held by exactly one agent (``lone``) or by none
    or several, the rest the item's secondary wrong answers. Wrong and right majorities are built by this one
    function with the two values swapped, so their shapes are alike. Returns the values and the majority's size."""
    k = rng.randint(sixty(n), n - 1 if lone else n)
    rest = n - k
    # one agent alone on `second` is the lone shape, so otherwise none or several
    several = rng.choice([0, *range(2, rest + 1)]) if rest >= 2 else 0
    held = 1 if lone else several
    return [main] * k + [second] * held + others(item, rest - held), k


def _crowd_plans(rng: random.Random, framing: str, values: list[str], main: str, note: str, n: int) -> list[Ans]:
    plans = _answers(rng, framing, values, note_value=note)
    if framing == "panel":
        _panel_twists(rng, plans, main, n)
    return plans


def _cascade(rng: random.Random, item: Question, n: int, main: str, rival: str) -> tuple[list[Ans], int]:
    """One agent answers ``main`` alone and agents who read it carry it to 60% or more; the rest hold ``rival``
    (70%) or a secondary wrong answer, most of them saying they read the others and disagree."""
    k = rng.randint(max(2, sixty(n)), n)
    plans = _copied(rng, main, k - 1)
    for _ in range(n - k):
        value = rival if rng.random() < 0.7 else others(item, 1)[0]
        plans.append(Ans(value, "dissent", saw=True) if rng.random() < 0.6 else _independent(rng, value))
    return plans, k


def _anchored(rng: random.Random, item: Question, n: int, main: str, rival: str) -> tuple[list[Ans], int]:
    """A note states ``main`` and 60% or more take it up; the rest reject it, holding ``rival`` (70%) or a secondary
    wrong answer."""
    k = rng.randint(sixty(n), n)
    values = [main] * k + [rival if rng.random() < 0.7 else others(item, 1)[0] for _ in range(n - k)]
    return _answers(rng, "note", values, note_value=main), k


_HOW = {"panel": "answering on their own", "note": "rejecting a correct note in the question"}


def build_majority_wrong(rng: random.Random, item: Question, slot: Slot) -> Draft:
    """A wrong answer held by at least 60%, reached without copying (also numeric_consensus_error)."""
    framing = _framing(rng, CROWD_FRAMINGS)
    wrong, n = item.wrongs[0], slot.n
    values, k = _crowd(rng, item, n, wrong, item.truth, lone=False)
    plans = _crowd_plans(rng, framing, values, wrong, item.truth, n)
    rationale = (
        f"{k} of {n} agents give the same wrong answer, {wrong}, {_HOW[framing]}, while the ground truth is "
        f"{item.truth}, so the majority is a false consensus."
    )
    return Draft(plans, rationale, framing, note_value=item.truth if framing == "note" else None, single_family_p=0.35)


def build_lone_dissenter(rng: random.Random, item: Question, slot: Slot) -> Draft:
    framing = _framing(rng, CROWD_FRAMINGS)
    wrong, n = item.wrongs[0], slot.n
    values, k = _crowd(rng, item, n, wrong, item.truth, lone=True)
    plans = _crowd_plans(rng, framing, values, wrong, item.truth, n)
    how = "; the note in the question states it too" if framing == "note" else ""
    rationale = (
        f"Only one of {n} agents gives the correct answer, {item.truth}{how}; {k} agree on the wrong answer "
        f"{wrong}, so the majority is a false consensus."
    )
    return Draft(plans, rationale, framing, note_value=item.truth if framing == "note" else None)


def build_genuine_agreement(rng: random.Random, item: Question, slot: Slot) -> Draft:
    """The mirror of a wrong majority (the right answer and the main mistake swapped): a panel, or a false note that
    the majority rejects; as often as the wrong majorities, one agent alone holds the mistake."""
    framing = _framing(rng, CROWD_FRAMINGS)
    wrong, n = item.wrongs[0], slot.n
    lone = n >= 3 and rng.random() < 1 / 3  # lone_correct_dissenter is a third of the wrong-majority panels
    values, k = _crowd(rng, item, n, item.truth, wrong, lone=lone)
    plans = _crowd_plans(rng, framing, values, item.truth, wrong, n)
    how = f", rejecting a false note that says {wrong}" if framing == "note" else ""
    rationale = (
        f"{k} of {n} agents reach the correct answer, {item.truth}, on their own{how}; nothing points to "
        "copying or a shared premise, so the agreement is genuine."
    )
    return Draft(plans, rationale, framing, note_value=wrong if framing == "note" else None, single_family_p=0.15)


def build_echo_cascade(rng: random.Random, item: Question, slot: Slot) -> Draft:
    wrong, n = item.wrongs[0], slot.n
    plans, k = _cascade(rng, item, n, wrong, item.truth)
    copiers = "1 agent who had read it repeated it" if k == 2 else f"{k - 1} agents who had read it repeated it"
    rationale = (
        f"One agent answered {wrong} on its own and {copiers}, so {k} of {n} answers share one echoed error "
        f"(ground truth: {item.truth})."
    )
    return Draft(plans, rationale, "copy")


def build_anchoring(rng: random.Random, item: Question, slot: Slot) -> Draft:
    wrong, n = item.wrongs[0], slot.n
    plans, k = _anchored(rng, item, n, wrong, item.truth)
    rationale = (
        f"The question carries a false note that points to {wrong}; {k} of {n} agents adopt it, so the shared "
        f"answer is wrong (ground truth: {item.truth})."
    )
    return Draft(plans, rationale, "note", note_value=wrong)


def _split(rng: random.Random, n: int, parts: int) -> list[int]:
    cuts = sorted(rng.sample(range(1, n), parts - 1))
    return [b - a for a, b in zip([0, *cuts], [*cuts, n], strict=True)]


def build_disagreement(rng: random.Random, item: Question, slot: Slot) -> Draft:
    """No answer reaches 60%; the rare variant holds no right answer at all."""
    framing, n = _framing(rng, DISAGREEMENT_FRAMINGS), slot.n
    with_truth = not slot.rare
    for _ in range(1000):
        pool = [item.truth, *item.wrongs] if with_truth else list(item.wrongs)
        parts = rng.randint(2, min(len(pool), n))
        values = [item.truth, *rng.sample(item.wrongs, parts - 1)] if with_truth else rng.sample(pool, parts)
        counts = _split(rng, n, parts)
        if 5 * max(counts) < 3 * n:  # no single answer may reach 60%
            break
    else:
        raise RuntimeError(f"cannot split {n} answers without a 60% majority")
    top = values[counts.index(max(counts))]
    note_value = rng.choice(values) if framing == "note" else None
    if framing == "copy":
        plans = _copied(rng, top, max(counts) - 1)
        plans += [_independent(rng, v) for v, c in zip(values, counts, strict=True) if v != top for _ in range(c)]
    else:
        spread = [v for v, c in zip(values, counts, strict=True) for _ in range(c)]
        plans = _crowd_plans(rng, framing, spread, top, note_value or "", n)
    split = "-".join(str(c) for c in sorted(counts, reverse=True))
    rationale = (
        f"The {n} answers split {split} across {parts} different answers and none reaches 60 percent, so "
        "there is no consensus."
    )
    return Draft(plans, rationale, framing, note_value=note_value, single_family_p=0.2)


def build_unsupported(rng: random.Random, item: Question, slot: Slot) -> Draft:
    """The mirror of a false consensus with nothing independent behind it (an echo cascade, an adopted note), on the
    right answer."""
    framing = _framing(rng, UNSUPPORTED_FRAMINGS)
    truth, wrong, n = item.truth, item.wrongs[0], slot.n
    if framing == "copy":
        plans, k = _cascade(rng, item, n, truth, wrong)
        rationale = (
            f"{k} of {n} answers trace back to one agent's answer that the others copied, so the consensus on "
            f"{truth} is right but has nothing independent behind it."
        )
    else:
        plans, k = _anchored(rng, item, n, truth, wrong)
        rationale = (
            f"{k} of {n} agents simply repeat a note in the question; the note happens to be right ({truth}), "
            "but nothing independent supports the consensus."
        )
    return Draft(plans, rationale, framing, note_value=truth if framing == "note" else None,
                 evidence_allowed=False, single_family_p=0.4)  # fmt: skip


Builder = Callable[[random.Random, Question, Slot], Draft]
# category -> (builder, where its items come from)
BUILDERS: dict[str, tuple[Builder, str]] = {
    "majority_wrong_fact": (build_majority_wrong, "fact"),
    "echo_cascade": (build_echo_cascade, "mixed"),
    "anchoring_injected_premise": (build_anchoring, "mixed"),
    "lone_correct_dissenter": (build_lone_dissenter, "mixed"),
    "genuine_agreement_correct": (build_genuine_agreement, "mixed"),
    "genuine_disagreement": (build_disagreement, "mixed"),
    "correct_but_unsupported": (build_unsupported, "mixed"),
    "numeric_consensus_error": (build_majority_wrong, "numeric"),
}
