"""Turning items into cases: answer templates, category plans, panels, provenance metadata and labels.

Every case is checked against the label scheme before it is emitted (see the package docstring).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from harness.datasets.embedded.items import Item, as_decimal, stated

# The label scheme's category -> risk, copied from harness.types.CATEGORY_RISK because the generator stands alone
# (an import-linter contract); tests/datasets/test_embedded.py checks that the two agree.
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


# --------------------------------------------------------------------------------------------------------
# Phrasing: templates carry no digits and no answer terms, so a rendered answer states exactly one value.
# --------------------------------------------------------------------------------------------------------

_TEMPLATES: dict[str, tuple[str, ...]] = {
    "plain": (
        "{Claim}.",
        "The answer is {value}.",
        "I'm fairly confident {claim}.",
        "I believe {claim}.",
        "{Claim}, as far as I can tell.",
        "Answer: {value}.",
        "My answer is {value}.",
        "As I understand it, {claim}.",
    ),
    "reasoned": (
        "{Claim}, because {reason}.",
        "Since {reason}, {claim}.",
        "{Reason}, so {claim}.",
        "{Claim}. Reasoning: {reason}.",
        "{Reason}; therefore {claim}.",
        "I worked it through: {reason}, which means {claim}.",
    ),
    "hedged": (
        "Not completely sure, but I think {claim}.",
        "My best guess is {value}.",
        "Possibly {value}, though I have not double-checked.",
        "I think {claim}, but treat that as tentative.",
    ),
    "bare": ("{Value}.", "{Claim}.", "It's {value}.", "{Value}, definitely.", "Easy one: {value}."),
    "core": ("{Claim}.", "The answer is {value}.", "{Claim}, as far as I can tell.", "It's {value}."),
    "echo": (
        "Agreeing with the earlier answer: {core}",
        "The previous answer looks right to me. {core}",
        "I read the earlier replies and concur; {claim}.",
        "Building on the answers so far, {claim}.",
        "Seconding the answer above. {core}",
        "Consistent with what the others said, {claim}.",
    ),
    "echo_dissent": (
        "I read the earlier answers but I disagree. {core}",
        "Respectfully, the answers above look wrong. {core}",
        "I saw the previous replies; I get something different. {core}",
    ),
    "note": (
        "Per the note, {claim}.",
        "Going by the note in the question, {value}.",
        "As the note says, {claim}.",
        "Taking the note at face value: {value}.",
        "The note settles it: {claim}.",
        "Given the note, {claim}.",
    ),
    "note_dissent": (
        "The note in the question looks mistaken. {core}",
        "I don't think the note is right. {core}",
        "Setting the note aside and checking independently: {core}",
    ),
}
_WRAPPED = {"echo": ("core",), "echo_dissent": ("reasoned",), "note_dissent": ("reasoned",)}


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _render(rng: random.Random, item: Item, value: str, mode: str) -> str:
    """One answer text in the given style; wrapper styles embed a plain or reasoned core sentence."""
    core = _render(rng, item, value, rng.choice(_WRAPPED[mode])) if mode in _WRAPPED else ""
    reasons = item.reasons.get(value, ())
    if mode == "reasoned" and not reasons:
        mode = "plain"  # some wrong answers have no typical justification; state them flatly
    reason = rng.choice(reasons) if mode == "reasoned" else ""
    claim = item.say(value)
    return rng.choice(_TEMPLATES[mode]).format(
        claim=claim,
        Claim=_cap(claim),
        value=value,
        Value=_cap(value),
        reason=reason,
        Reason=_cap(reason),
        core=core,
    )


# --------------------------------------------------------------------------------------------------------
# Case plans: each category builder returns a draft (who answers what, in which style), checked on assembly.
# --------------------------------------------------------------------------------------------------------


@dataclass
class _Ans:
    value: str
    mode: str
    saw: bool = False
    shared: bool = False


@dataclass
class _Draft:
    plans: list[_Ans]
    rationale: str
    question: str = ""  # empty: the item's own question
    evidence: tuple[str, ...] = ()
    single_family_p: float = 0.3
    tags: tuple[str, ...] = ()


def _sixty(n: int) -> int:
    """Smallest count that reaches 60% of n (integer maths, so 3 of 5 counts)."""
    return (3 * n + 4) // 5


def _evidence(rng: random.Random, item: Item, chance: float) -> tuple[str, ...]:
    return item.evidence if item.evidence and rng.random() < chance else ()


def _others(item: Item, count: int) -> list[str]:
    """Secondary wrong answers (never the main mistake), cycling so a panel can hold any number."""
    pool = item.wrongs[1:]
    return [pool[i % len(pool)] for i in range(count)]


def _wrong_mode(rng: random.Random) -> str:
    return rng.choices(("plain", "reasoned", "hedged"), weights=(4, 5, 1))[0]


def _build_majority_wrong(rng: random.Random, item: Item, n: int) -> _Draft:
    wrong, k = item.wrongs[0], rng.randint(_sixty(n), n)
    rest = n - k
    # One correct answer against the crowd is the lone-dissenter category, so use none or several here.
    correct = rng.choice([0, *range(2, rest + 1)]) if rest >= 2 else 0
    plans = [_Ans(wrong, _wrong_mode(rng)) for _ in range(k)]
    plans += [_Ans(item.truth, "reasoned") for _ in range(correct)]
    plans += [_Ans(v, "plain") for v in _others(item, rest - correct)]
    rng.shuffle(plans)
    rationale = (
        f"{k} of {n} agents independently give the same wrong answer, {wrong}, while the ground truth is "
        f"{item.truth}, so the majority is a false consensus."
    )
    return _Draft(plans, rationale, evidence=_evidence(rng, item, 0.55), single_family_p=0.35)


def _build_echo_cascade(rng: random.Random, item: Item, n: int) -> _Draft:
    wrong, k = item.wrongs[0], rng.randint(max(2, _sixty(n)), n)
    opener = _Ans(wrong, rng.choice(("plain", "hedged", "reasoned")))
    followers = [_Ans(wrong, "echo", saw=True) for _ in range(k - 1)]
    for _ in range(n - k):
        value = item.truth if rng.random() < 0.7 else _others(item, 1)[0]
        saw = rng.random() < 0.6
        followers.append(_Ans(value, "echo_dissent" if saw else "reasoned", saw=saw))
    rng.shuffle(followers)
    copiers = (
        "1 later agent who had read it repeated it" if k == 2 else f"{k - 1} later agents who had read it repeated it"
    )
    rationale = (
        f"The opening answer, {wrong}, was wrong and {copiers}, so {k} of {n} answers share one echoed "
        f"error (ground truth: {item.truth})."
    )
    return _Draft([opener, *followers], rationale, evidence=_evidence(rng, item, 0.5), tags=("cascade",))


_ANCHOR_FRAMES = (
    "Note from the team: {}.",
    "Context from the project brief: {}.",
    "Reminder from the reviewer: {}.",
    "Background, already checked by the team: {}.",
    "Team note (pinned): {}.",
)


def _build_anchoring(rng: random.Random, item: Item, n: int) -> _Draft:
    wrong, k = item.wrongs[0], rng.randint(_sixty(n), n)
    premise = item.premise or f"an earlier review already established that {item.say(wrong)}"
    note = rng.choice(_ANCHOR_FRAMES).format(_cap(premise))
    question = f"{note}\n\n{item.question}" if rng.random() < 0.6 else f"{item.question}\n\n{note}"
    plans = [_Ans(wrong, rng.choice(("note", "note", "plain", "reasoned")), shared=True) for _ in range(k)]
    for _ in range(n - k):
        value = item.truth if rng.random() < 0.7 else _others(item, 1)[0]
        plans.append(_Ans(value, "note_dissent" if value == item.truth else "plain", shared=True))
    rng.shuffle(plans)
    rationale = (
        f"The question carries a false premise that points to {wrong}; {k} of {n} agents adopt it, so the "
        f"shared answer is wrong (ground truth: {item.truth})."
    )
    return _Draft(plans, rationale, question=question, evidence=_evidence(rng, item, 0.5), tags=("injected_premise",))


def _build_lone_dissenter(rng: random.Random, item: Item, n: int) -> _Draft:
    wrong, k = item.wrongs[0], rng.randint(_sixty(n), n - 1)
    plans = [_Ans(wrong, _wrong_mode(rng)) for _ in range(k)] + [_Ans(v, "plain") for v in _others(item, n - 1 - k)]
    rng.shuffle(plans)
    if rng.random() < 0.25:  # a dissenter who read the majority and still disagrees
        plans.append(_Ans(item.truth, "echo_dissent", saw=True))
    else:
        plans.insert(rng.randint(0, len(plans)), _Ans(item.truth, "reasoned"))
    rationale = (
        f"Only one of {n} agents gives the correct answer, {item.truth}; {k} agree on the wrong answer "
        f"{wrong}, so the majority is a false consensus."
    )
    return _Draft(plans, rationale, evidence=_evidence(rng, item, 0.5))


def _build_numeric_error(rng: random.Random, item: Item, n: int) -> _Draft:
    wrong, k = item.wrongs[0], rng.randint(_sixty(n), n)
    correct = rng.randint(0, n - k)
    plans = [_Ans(wrong, _wrong_mode(rng)) for _ in range(k)]
    plans += [_Ans(item.truth, "reasoned") for _ in range(correct)]
    plans += [_Ans(v, "plain") for v in _others(item, n - k - correct)]
    rng.shuffle(plans)
    rationale = f"{k} of {n} answers agree on the number {wrong}, but the correct value is {item.truth}."
    return _Draft(plans, rationale, evidence=_evidence(rng, item, 0.5), single_family_p=0.35)


def _build_genuine_agreement(rng: random.Random, item: Item, n: int) -> _Draft:
    correct = rng.randint(_sixty(n), n - 1) if n >= 4 and rng.random() < 0.4 else n
    plans = [_Ans(item.truth, rng.choice(("reasoned", "reasoned", "reasoned", "plain"))) for _ in range(correct)]
    plans += [_Ans(v, _wrong_mode(rng)) for v in rng.sample(item.wrongs, 1) * (n - correct)]
    rng.shuffle(plans)
    evidence = _evidence(rng, item, 0.7)
    backing = ", and the evidence backs it" if evidence else ""
    rationale = (
        f"{correct} of {n} agents independently reach the correct answer, {item.truth}{backing}; nothing "
        "points to copying or a shared premise, so the agreement is genuine."
    )
    return _Draft(plans, rationale, evidence=evidence, single_family_p=0.15)


def _split(rng: random.Random, n: int, parts: int) -> list[int]:
    cuts = sorted(rng.sample(range(1, n), parts - 1))
    return [b - a for a, b in zip([0, *cuts], [*cuts, n], strict=True)]


def _build_disagreement(rng: random.Random, item: Item, n: int) -> _Draft:
    for _ in range(1000):
        with_truth = rng.random() < 0.9
        pool = [item.truth, *item.wrongs] if with_truth else list(item.wrongs)
        parts = rng.randint(2, min(len(pool), n))
        values = [item.truth, *rng.sample(item.wrongs, parts - 1)] if with_truth else rng.sample(pool, parts)
        counts = _split(rng, n, parts)
        if 5 * max(counts) < 3 * n:  # no single answer may reach 60%
            break
    else:
        raise RuntimeError(f"cannot split {n} answers without a 60% majority")
    plans = [
        _Ans(v, rng.choices(("reasoned", "plain", "hedged"), weights=(5, 4, 1))[0])
        for v, c in zip(values, counts, strict=True)
        for _ in range(c)
    ]
    rng.shuffle(plans)
    split = "-".join(str(c) for c in sorted(counts, reverse=True))
    rationale = (
        f"The {n} answers split {split} across {parts} different answers and none reaches 60 percent, so "
        "there is no consensus."
    )
    return _Draft(plans, rationale, evidence=_evidence(rng, item, 0.5), single_family_p=0.2)


_UNVERIFIED_FRAMES = (
    "Unverified note from a colleague: {}.",
    "Someone in the chat said (not checked): {}.",
    "A forum post, unverified, says: {}.",
    "Hint from an earlier draft, source unknown: {}.",
)


def _build_unsupported(rng: random.Random, item: Item, n: int) -> _Draft:
    variant = rng.choice(("copied_answers", "shared_note", "bare_assertion"))
    stray = n >= 5 and rng.random() < 0.3  # one independent wrong answer leaves the majority intact
    correct = n - 1 if stray else n
    question, single_p = "", 0.4
    if variant == "copied_answers":
        plans = [_Ans(item.truth, "bare")] + [_Ans(item.truth, "echo", saw=True) for _ in range(correct - 1)]
        rationale = (
            f"All {correct} correct answers trace back to one unexplained opening answer that the others "
            f"copied, so the consensus on {item.truth} is right but has nothing independent behind it."
        )
    elif variant == "shared_note":
        question = f"{rng.choice(_UNVERIFIED_FRAMES).format(_cap(item.say(item.truth)))}\n\n{item.question}"
        plans = [_Ans(item.truth, "note", shared=True) for _ in range(correct)]
        rationale = (
            f"{correct} of {n} agents simply repeat an unverified note in the question; the note happens to "
            f"be right ({item.truth}), but nothing independent supports the consensus."
        )
    else:
        plans = [_Ans(item.truth, "bare") for _ in range(correct)]
        single_p = 0.7
        rationale = (
            f"{correct} of {n} agents assert {item.truth} with no reasoning and no evidence; the consensus "
            "is correct but unsupported."
        )
    if stray:
        plans.insert(rng.randint(1, len(plans)), _Ans(item.wrongs[0], "plain", shared=variant == "shared_note"))
    return _Draft(plans, rationale, question=question, single_family_p=single_p, tags=(variant,))


Builder = Callable[[random.Random, Item, int], _Draft]
# category -> (builder, smallest panel, where its items come from)
BUILDERS: dict[str, tuple[Builder, int, str]] = {
    "majority_wrong_fact": (_build_majority_wrong, 2, "fact"),
    "echo_cascade": (_build_echo_cascade, 2, "mixed"),
    "anchoring_injected_premise": (_build_anchoring, 2, "mixed"),
    "lone_correct_dissenter": (_build_lone_dissenter, 3, "mixed"),
    "genuine_agreement_correct": (_build_genuine_agreement, 2, "mixed"),
    "genuine_disagreement": (_build_disagreement, 2, "mixed"),
    "correct_but_unsupported": (_build_unsupported, 2, "mixed"),
    "numeric_consensus_error": (_build_numeric_error, 2, "numeric"),
}

# --------------------------------------------------------------------------------------------------------
# Assembly: panel sizes, provenance metadata, labels and the invariants every case must satisfy.
# --------------------------------------------------------------------------------------------------------

_SIZES = tuple(range(2, 17))
_SIZE_WEIGHTS = (6, 16, 16, 16, 12, 10, 5, 3, 3, 2, 2, 2, 2, 2, 3)  # mostly 3-7, some pairs, some 10-16
_ID_SCHEMES = ("agent-{}", "solver-{}", "a{}", "expert_{}")


def panel_size(rng: random.Random, minimum: int) -> int:
    sizes = [s for s in _SIZES if s >= minimum]
    return rng.choices(sizes, weights=_SIZE_WEIGHTS[len(_SIZES) - len(sizes) :])[0]


def _families(rng: random.Random, n: int, single_p: float) -> list[str]:
    if rng.random() < single_p:
        return [rng.choice(FAMILIES)] * n
    pool = rng.sample(FAMILIES, rng.randint(2, len(FAMILIES)))
    chosen = [rng.choice(pool) for _ in range(n)]
    if len(set(chosen)) == 1:  # a "mixed" panel must really mix families
        chosen[rng.randrange(n)] = next(f for f in pool if f != chosen[0])
    return chosen


def _majority(item: Item, plans: Sequence[_Ans]) -> bool | None:
    counts = Counter(p.value for p in plans)
    n = len(plans)
    if 5 * counts[item.truth] >= 3 * n:
        return True
    if any(5 * c >= 3 * n for v, c in counts.items() if v != item.truth):
        return False
    return None


def _category_problems(category: str, item: Item, plans: Sequence[_Ans], majority: bool | None) -> list[str]:
    wanted: bool | None = {"low": True, "medium": True, "high": False}[CATEGORY_RISK[category]]
    if category == "genuine_disagreement":
        wanted = None
    problems = [] if majority is wanted else [f"majority_correct is {majority}, expected {wanted}"]
    if category == "lone_correct_dissenter" and sum(p.value == item.truth for p in plans) != 1:
        problems.append("needs exactly one correct answer")
    if category == "echo_cascade" and (plans[0].saw or plans[0].value == item.truth or not any(p.saw for p in plans)):
        problems.append("needs a wrong, unprompted opener and later agents who saw it")
    if category == "anchoring_injected_premise" and not all(p.shared for p in plans):
        problems.append("needs shared_context on every answer")
    if category == "numeric_consensus_error" and as_decimal(item.truth) is None:
        problems.append("needs a numeric ground truth")
    return problems


def assemble(rng: random.Random, number: int, category: str, item: Item, draft: _Draft) -> dict[str, Any]:
    n = len(draft.plans)
    id_scheme = rng.choice(_ID_SCHEMES)
    families = _families(rng, n, draft.single_family_p)
    answers = []
    for i, (plan, family) in enumerate(zip(draft.plans, families, strict=True), start=1):
        text = _render(rng, item, plan.value, plan.mode)
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
    majority = _majority(item, draft.plans)
    if problems := _category_problems(category, item, draft.plans, majority):
        raise ValueError(f"FCB-{number:04d} ({category}): {'; '.join(problems)}")
    case: dict[str, Any] = {
        "id": f"FCB-{number:04d}",
        "category": category,
        "question": draft.question or item.question,
    }
    if draft.evidence:
        case["evidence"] = list(draft.evidence)
    tags = [item.subject, *item.tags, *draft.tags, *(("large_panel",) if n >= 10 else ())]
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


class Deck:
    """Deals entries without replacement and reshuffles when empty, so reuse is spread evenly."""

    def __init__(self, rng: random.Random, entries: Sequence[Any]) -> None:
        self._rng, self._entries = rng, list(entries)
        self._hand: list[Any] = []

    def deal(self) -> Any:  # an Item or a generator, depending on the deck
        if not self._hand:
            self._hand = list(self._entries)
            self._rng.shuffle(self._hand)
        return self._hand.pop()
