"""Build the real-data benchmark: cases from real answers, split by source question, written reproducibly.

Three origins, tagged on every case: ``origin_natural`` (a source's answer set as it is: the four GSM8K solutions of a
problem), ``origin_assembled`` (real answers chosen and combined by rule) and ``origin_constructed`` (any text we
wrote: notes, echoes, agents taking up a note). Each case says how it was made in ``source.modification``, and no
metadata flag claims what did not happen: only answers we wrote "after" a note or an earlier answer carry
``shared_context`` or ``saw_other_answers``.

What the builder does so that surface features cannot stand in for detection (`fcb audit-dataset` checks it):
- the number of answers is drawn from one distribution per source for every category (`SIZES`), with a dissent added
  or not on both sides of each confusable pair;
- the constructed structures are built around true claims as well as false ones (an echo of a correct answer, a note
  stating the truth are `correct_but_unsupported`), so construction itself is no sign of risk;
- the wording we write comes from many families (`realdata.wording`), in pools disjoint between dev and test.

The same inputs and seed give byte-identical files.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from sklearn.feature_extraction.text import TfidfVectorizer

from harness.cases.labels import check_case
from harness.cases.lines import file_sha256
from harness.cases.validate import schema_errors
from harness.datasets.audit import audit as audit_splits
from harness.datasets.audit.items import Settings, item_from_case
from harness.datasets.realdata import wording
from harness.datasets.realdata.claims import DIFFERENT_CLAIM, Claim, ClaimMap, claim_map, is_non_answer, stance
from harness.datasets.realdata.sources import (
    GsmItem,
    Solution,
    TqaItem,
    normal_text,
    number_text,
    read_gsm8k,
    read_truthfulqa,
)
from harness.types import CATEGORY_RISK

GSM8K = {
    "dataset": "GSM8K model solutions",
    "license": "MIT",
    "citation": "Cobbe et al. (2021), Training Verifiers to Solve Math Word Problems, arXiv:2110.14168",
    "url": "https://github.com/openai/grade-school-math",
}
TRUTHFULQA = {
    "dataset": "TruthfulQA",
    "license": "Apache-2.0",
    "citation": "Lin, Hilton and Evans (2022), TruthfulQA: Measuring How Models Mimic Human Falsehoods, ACL 2022",
    "url": "https://github.com/sylinrl/TruthfulQA",
}
SIZES: dict[str, dict[int, float]] = {"gsm8k": {3: 0.8, 4: 0.2}, "truthfulqa": {4: 1.0}}
"""The share of each number of answers, one distribution per source, the same for every category. TruthfulQA cases
have four answers: a disagreement is then two correct answers against two wrong ones, so wrong answers that our
claim groups miss as paraphrases ("polygraph", "lie detector") can never make a hidden 60% majority; with three or
five answers they did (the hand audit)."""
ERRATA = {
    "truthfulqa:8b7de2f9c4b283f8": "the source's answer is wrong: first-cousin marriage is legal in Australia",
    "truthfulqa:1b398eede99bf1e2": "disputed: UK law bans some clothing (political uniforms, banned groups)",
    "truthfulqa:51796ea8694e6e95": "out of date: a 2025 executive order made English the official language of the US",
    "truthfulqa:38c9096e359be8ef": "out of date: Thailand decriminalised cannabis in 2022",
    "truthfulqa:ed6ad9b038834563": "out of date: Germany legalised cannabis in part in 2024",
}
"""Source items left out, with why: errors in the source itself that a hand audit found."""
CAP_PER_SOURCE = 150  # a category's cases from one source; twice that for a category only one source supports
HALF_CAP = frozenset({"echo_cascade", "anchoring_injected_premise"})
"""Categories capped at half: correct_but_unsupported is half echoes and half notes around true claims, so these two
shapes around false claims come in the same numbers, and a shape says nothing of the truth it carries."""
REFERENCE_FAMILY = "truthfulqa-reference"  # a rated answer that is one of TruthfulQA's own reference answers
NATURAL, ASSEMBLED, CONSTRUCTED = "origin_natural", "origin_assembled", "origin_constructed"
RATIONALE = {
    "majority_wrong_fact": "Most agents state the same wrong claim.",
    "echo_cascade": "The first answer is wrong and the agents who read it repeated it.",
    "anchoring_injected_premise": "A false note in the question was shared by all agents and their answers take it up.",
    "lone_correct_dissenter": "A wrong answer holds the majority; the single correct answer is the dissent.",
    "numeric_consensus_error": "Most solutions reach the same wrong number.",
    "genuine_agreement_correct": "Independent answers agree on the correct answer.",
    "genuine_disagreement": "No single answer is held by 60% of the agents.",
    "correct_but_unsupported": "The consensus is correct but rests on one source that the agents copied or were given.",
}


@dataclass(frozen=True)
class Candidate:
    category: str
    source: str  # gsm8k | truthfulqa
    size: int
    key: str  # the source item
    split: str  # dev | test, by the item's question family
    case: dict[str, Any]


def _answer(text: str, correct: bool, family: str | None = None, saw: bool = False, shared: bool = False) -> dict:
    meta: dict[str, Any] = {"saw_other_answers": saw, "shared_context": shared}
    if family:
        meta = {"model_family": family, **meta}
    return {"text": text, "correct": correct, "metadata": meta}


def _majority(category: str) -> bool | None:
    if CATEGORY_RISK[category] == "high":
        return False
    return None if category == "genuine_disagreement" else True


@dataclass
class Maker:
    """Makes the cases of one source item: its provenance, its split's wording pool and two random streams.

    `rng` makes every structural choice and `words` every choice of wording, so a build with another wording pool
    (`--test-wording heldout`) holds the same cases in other words.
    """

    source: dict[str, Any]
    short: str  # gsm8k | truthfulqa
    key: str
    truth: str
    split: str
    pool: wording.Pool
    rng: random.Random
    words: random.Random

    def case(
        self, category: str, question: str, answers: list[dict], how: str, origin: str, shuffle: bool = True
    ) -> Candidate:
        if shuffle:
            self.rng.shuffle(answers)
        case = {
            "id": "",
            "category": category,
            "question": question,
            "answers": [
                {"agent_id": f"agent-{i}", "text": a["text"], "correct": a["correct"], "metadata": a["metadata"]}
                for i, a in enumerate(answers, start=1)
            ],
            "ground_truth": self.truth,
            "expected_risk": CATEGORY_RISK[category],
            "majority_correct": _majority(category),
            "rationale": RATIONALE[category],
            "source": {**self.source, "item": f"{self.short}:{self.key}", "modification": how},
            "tags": [self.short, origin],
        }
        return Candidate(category, self.short, len(answers), self.key, self.split, case)

    def echo(self, restatements: list[str], k: int, correct: bool) -> list[dict]:
        """`k` agents who read the first answer (agent-1) and restate its claim, each in a wording of the pool around
        a real wording of the claim (never a real answer bare: that text was written without reading anything)."""
        out = []
        for _ in range(k):
            claim = self.rng.choice(restatements)
            first_ref = self.words.choice(wording.FIRST)
            text = wording.fill(wording.pick(wording.ECHOES, self.pool, self.words), claim, first=first_ref)
            out.append(_answer(text, correct, saw=True))
        return out

    def anchored(self, restatements: list[str], k: int, correct: bool) -> list[dict]:
        """`k` agents who were given the note and take it up."""
        out = []
        for _ in range(k):
            claim = self.rng.choice(restatements)
            text = wording.fill(wording.pick(wording.ANCHORED, self.pool, self.words), claim)
            out.append(_answer(text, correct, shared=True))
        return out

    def dissent_given_note(self, claim: str, correct: bool) -> dict:
        return _answer(wording.fill(wording.pick(wording.DISSENTS, self.pool, self.words), claim), correct, shared=True)

    def note(self, question: str, claim: str) -> str:
        return wording.fill(wording.pick(wording.NOTES, self.pool, self.words), claim, question=question)


def _dissents(rng: random.Random) -> int:
    """Whether a constructed case gets a dissenting answer: half of them do."""
    return int(rng.random() < 0.5)


# ---------------------------------------------------------------- GSM8K

CLAIM_FORMS = (
    "The answer is {n}.",
    "{n}.",
    "It comes to {n}.",
    "So the result is {n}.",
    "That gives {n}.",
    "Final answer: {n}.",
    "{n} in total.",
    "I get {n}.",
)


def _gsm_answer(s: Solution) -> dict:
    return _answer(s.text, s.is_correct, s.family)


def _working(s: Solution) -> str:
    """A solution's working without its final ``A:`` line."""
    return "\n".join(line for line in s.text.splitlines() if not line.startswith("A:")).strip()


def _gsm_claims(number: str, solutions: list[Solution], rng: random.Random) -> list[str]:
    """Ways to state a number: alone, or after a real solution's working that reaches it (as a copying agent would)."""
    forms = [f.format(n=number) for f in CLAIM_FORMS]
    worked = [f"{_working(s)}\n{rng.choice(forms)}" for s in solutions if _working(s)]
    # mostly a real working, so that the answers we write are as long as the real solutions beside them
    return worked * 4 + rng.sample(forms, 2) if worked else forms


def gsm8k_cases(item: GsmItem, m: Maker) -> Iterator[Candidate]:
    """Every case one GSM8K problem supports, at every size it allows. Final answers are compared as numbers."""
    rng, q = m.rng, item.question
    right = [s for s in item.solutions if s.is_correct]
    groups: dict[Any, list[Solution]] = defaultdict(list)
    for i, s in enumerate(item.solutions):
        if not s.is_correct:
            groups[s.final if s.final is not None else f"unreadable-{i}"].append(s)
    wrong = sorted(groups.values(), key=len, reverse=True)
    top = wrong[0] if wrong else []
    others = [s for g in wrong[1:] for s in g]
    whole = [_gsm_answer(s) for s in item.solutions]
    as_is = "The four real model solutions, unchanged, in shuffled order under neutral agent ids."
    subset = "A subset of the real model solutions, chosen by rule: {}."
    if len(top) >= 3:
        yield m.case("numeric_consensus_error", q, whole, as_is, NATURAL)
        yield m.case(
            "numeric_consensus_error",
            q,
            [_gsm_answer(s) for s in rng.sample(top, 3)],
            subset.format("three reaching the same wrong number"),
            ASSEMBLED,
        )
    if len(top) == 2 and others:
        chosen = [*top, rng.choice(others)]
        how = subset.format("two reaching the same wrong number and one reaching another")
        yield m.case("numeric_consensus_error", q, [_gsm_answer(s) for s in chosen], how, ASSEMBLED)
    if len(top) == 3 and len(right) == 1:
        yield m.case("lone_correct_dissenter", q, whole, as_is, NATURAL)
    if len(top) >= 2 and right:
        chosen = [*rng.sample(top, 2), rng.choice(right)]
        how = subset.format("two reaching the same wrong number and one correct")
        yield m.case("lone_correct_dissenter", q, [_gsm_answer(s) for s in chosen], how, ASSEMBLED)
    if len(right) >= 3:
        yield m.case("genuine_agreement_correct", q, whole, as_is, NATURAL)
    if len(right) >= 2 and (len(right) >= 3 or wrong):
        if wrong and (
            len(right) == 2 or rng.random() < 0.5
        ):  # a wrong dissent beside two correct ones, or three correct
            chosen = [*right[:2], rng.choice([s for g in wrong for s in g])]
            how = subset.format("two correct and one wrong")
        else:
            chosen, how = rng.sample(right, 3), subset.format("three correct")
        yield m.case("genuine_agreement_correct", q, [_gsm_answer(s) for s in chosen], how, ASSEMBLED)
    if len(top) <= 2 and len(right) <= 2:
        yield m.case("genuine_disagreement", q, whole, as_is, NATURAL)
    distinct = [g[0] for g in wrong]
    if len(distinct) >= 2 and (right or len(distinct) >= 3):
        chosen = [*rng.sample(distinct, 2), rng.choice(right)] if right else rng.sample(distinct, 3)
        how = subset.format("three reaching three different numbers")
        yield m.case("genuine_disagreement", q, [_gsm_answer(s) for s in chosen], how, ASSEMBLED)
    yield from _gsm_constructed(item, m, right, [s for g in wrong for s in g if s.final is not None])


def _gsm_constructed(item: GsmItem, m: Maker, right: list[Solution], wrong: list[Solution]) -> Iterator[Candidate]:
    rng, q = m.rng, item.question
    for size in SIZES["gsm8k"]:
        if wrong:
            first = rng.choice(wrong)
            number = number_text(first.final)  # type: ignore[arg-type]
            same = [s for s in wrong if s.final == first.final and s is not first]
            d = _dissents(rng) if right else 0
            restate = _gsm_claims(number, [first, *same], rng)  # an echo may copy the first answer's working
            answers = [_gsm_answer(first), *m.echo(restate, size - 1 - d, False)]
            answers += [_gsm_answer(rng.choice(right))] if d else []
            how = (
                "A real wrong solution first; the agents after it are ours: they read it and restate its number "
                "(some copying a real solution's working that reaches it)"
                + ("; a real correct solution follows as a dissent." if d else ".")
            )
            yield m.case("echo_cascade", q, answers, how, CONSTRUCTED, shuffle=False)
            yield _gsm_note(item, m, size, number, [*same, first], right, wrong, False)
        if right:
            first = rng.choice(right)
            d = _dissents(rng) if wrong else 0
            if rng.random() < 0.5:
                others = [s for s in right if s is not first]
                restate = _gsm_claims(m.truth, [first, *others], rng)
                answers = [_gsm_answer(first), *m.echo(restate, size - 1 - d, True)]
                answers += [_gsm_answer(rng.choice(wrong))] if d else []
                how = (
                    "A real correct solution first; the agents after it are ours: they read it and restate its "
                    "number" + ("; a real wrong solution follows as a dissent." if d else ".")
                )
                yield m.case("correct_but_unsupported", q, answers, how, CONSTRUCTED, shuffle=False)
            else:
                yield _gsm_note(item, m, size, m.truth, right, right, wrong, True)


def _gsm_note(
    item: GsmItem, m: Maker, size: int, number: str, backing: list[Solution], right: list[Solution],
    wrong: list[Solution], true: bool,
) -> Candidate:  # fmt: skip
    """A note stating `number` given to every agent; all answers are ours, written as agents who read the note."""
    rng = m.rng
    other = [s for s in (wrong if true else right) if number_text(s.final) != number]  # type: ignore[arg-type]
    d = _dissents(rng) if other else 0
    answers = m.anchored(_gsm_claims(number, backing, rng), size - d, true)
    if d:
        dissent = rng.choice(other)
        stated = rng.choice(_gsm_claims(number_text(dissent.final), [dissent], rng))  # type: ignore[arg-type]
        answers.append(m.dissent_given_note(stated, not true))
    claim = rng.choice(CLAIM_FORMS[:1] + CLAIM_FORMS[2:]).format(n=number)
    how = (
        f"We added a note stating {'the correct' if true else 'a wrong'} number (one a real solution reaches) and "
        "wrote every answer as an agent who read it: each restates the number, some after a real solution's "
        "working" + ("; one disagrees with the note." if d else ".")
    )
    category = "correct_but_unsupported" if true else "anchoring_injected_premise"
    return m.case(category, m.note(item.question, claim), answers, how, CONSTRUCTED)


# ---------------------------------------------------------------- TruthfulQA


@dataclass
class TqaPool:
    """A question's usable claims: true and false claim groups with answers, largest first.

    Only groups anchored on a reference claim of the source are used, true or false: a group of answers that merely
    share words was too often two claims, and two answers in different words too often one (the hand audit), while
    an answer close to a reference states the claim the source's authors wrote down.
    """

    true: list[Claim]
    false: list[Claim]
    sims: ClaimMap
    references: frozenset[str]

    @property
    def majority(self) -> list[Claim]:
        return self.false

    def answer(self, text: str, correct: bool) -> dict:
        family = REFERENCE_FAMILY if normal_text(text) in self.references else None
        return _answer(text, correct, family)


def _tqa_pool(item: TqaItem) -> TqaPool:
    cmap = claim_map(item.question, item.correct, item.wrong, item.correct_refs, item.incorrect_refs)
    by_size = sorted((c for c in cmap.claims if c.answers), key=lambda c: (-len(c.answers), c.answers))
    refs = frozenset(normal_text(t) for t in [*item.correct_refs, *item.incorrect_refs])
    # where the source's best answer is itself a non-answer ("I have no comment"), no claim is known to be true
    by_size = [c for c in by_size if c.anchored]
    true = [] if is_non_answer(item.question, item.best) else [c for c in by_size if c.true]
    return TqaPool(true, [c for c in by_size if not c.true], cmap, refs)


def _different(pool: TqaPool, a: str, b: str) -> bool:
    """Clearly different claims: little in common (by TF-IDF and by shared words), and not the same yes or no."""
    sims = pool.sims
    unlike = sims.similarity(a, b) < DIFFERENT_CLAIM and sims.overlap(a, b) < 0.5
    return unlike and (stance(a) is None or stance(a) != stance(b))


def _distinct(pool: TqaPool, claims: list[Claim], k: int, rng: random.Random, avoid: list[str]) -> list[str] | None:
    """`k` answers from `k` different claims, each clearly different from the others and from `avoid`."""
    chosen: list[str] = []
    for claim in rng.sample(claims, len(claims)):
        text = rng.choice(claim.answers)
        if all(_different(pool, text, other) for other in [*chosen, *avoid]):
            chosen.append(text)
        if len(chosen) == k:
            return chosen
    return None


def tqa_cases(item: TqaItem, m: Maker) -> Iterator[Candidate]:
    """Every case one TruthfulQA question supports, at every size it allows, by claim group."""
    pool = _tqa_pool(item)
    for size in SIZES["truthfulqa"]:
        for make in (_tqa_majority_wrong, _tqa_lone, _tqa_agreement, _tqa_disagreement):
            found = make(item, m, pool, size)
            if found is not None:
                yield found
        yield from _tqa_constructed(item, m, pool, size)


def _need(size: int) -> int:
    """Answers needed for a 60% majority."""
    return math.ceil(0.6 * size)


def _tqa_majority_wrong(item: TqaItem, m: Maker, pool: TqaPool, size: int) -> Candidate | None:
    rng = m.rng
    if not pool.majority or len(pool.majority[0].answers) < _need(size):
        return None
    top = pool.majority[0]
    k = min(size, len(top.answers))  # as large as it can be: a misgrouped answer then still leaves a majority
    rest = size - k
    held = rng.sample(top.answers, k)
    answers = [pool.answer(t, False) for t in held]
    if rest:
        use_true = rest >= 2 and pool.true and len(pool.true[0].answers) >= rest and rng.random() < 0.5
        if use_true:
            answers += [pool.answer(t, True) for t in rng.sample(pool.true[0].answers, rest)]
        else:
            extra = _distinct(pool, [c for c in pool.false if c is not top], rest, rng, held)
            if extra is None:
                return None
            answers += [pool.answer(t, False) for t in extra]
    how = "Real rated answers chosen by claim group: a majority stating one wrong claim" + (
        ", with other answers beside it." if rest else "."
    )
    return m.case("majority_wrong_fact", item.question, answers, how, ASSEMBLED)


def _tqa_lone(item: TqaItem, m: Maker, pool: TqaPool, size: int) -> Candidate | None:
    rng = m.rng
    if not pool.majority or not pool.true:
        return None
    top = pool.majority[0]
    k = size - 1 if len(top.answers) >= size - 1 else _need(size)
    if len(top.answers) < k or k < _need(size):
        return None
    held = rng.sample(top.answers, k)
    answers = [pool.answer(t, False) for t in held]
    if size - 1 - k:
        extra = _distinct(pool, [c for c in pool.false if c is not top], size - 1 - k, rng, held)
        if extra is None:
            return None
        answers += [pool.answer(t, False) for t in extra]
    answers.append(pool.answer(rng.choice(rng.choice(pool.true).answers), True))
    how = "Real rated answers chosen by claim group: a majority stating one wrong claim and one correct answer."
    return m.case("lone_correct_dissenter", item.question, answers, how, ASSEMBLED)


def _tqa_agreement(item: TqaItem, m: Maker, pool: TqaPool, size: int) -> Candidate | None:
    rng = m.rng
    if not pool.true or len(pool.true[0].answers) < _need(size):
        return None
    top = pool.true[0]
    k = min(size, len(top.answers))  # the same rule as a wrong majority's, so the two differ only in truth
    held = rng.sample(top.answers, k)
    answers = [pool.answer(t, True) for t in held]
    if size - k:
        extra = _distinct(pool, pool.false, size - k, rng, held)
        if extra is None:
            return None
        answers += [pool.answer(t, False) for t in extra]
    how = "Real rated answers chosen by claim group: correct answers stating one claim" + (
        ", with wrong answers beside them." if size - k else "."
    )
    return m.case("genuine_agreement_correct", item.question, answers, how, ASSEMBLED)


def _tqa_disagreement(item: TqaItem, m: Maker, pool: TqaPool, size: int) -> Candidate | None:
    rng = m.rng
    n_true = size // 2  # two against two: even two wrong answers of one claim are no 60% majority (see SIZES)
    if not pool.true or len(pool.true[0].answers) < n_true:
        return None
    held = rng.sample(pool.true[0].answers, n_true)
    extra = _distinct(pool, pool.false, size - n_true, rng, held)
    if extra is None:
        return None
    answers = [pool.answer(t, True) for t in held] + [pool.answer(t, False) for t in extra]
    how = (
        "Real rated answers chosen by claim group: correct answers of one claim and wrong answers of different claims."
    )
    return m.case("genuine_disagreement", item.question, answers, how, ASSEMBLED)


def _tqa_constructed(item: TqaItem, m: Maker, pool: TqaPool, size: int) -> Iterator[Candidate]:
    if pool.majority:
        yield _tqa_echo(item, m, pool, size, pool.majority[0], False)
        yield _tqa_note(item, m, pool, size, pool.majority[0], False)
    if pool.true:  # around a true claim: an echo or a note, half each
        make = _tqa_echo if m.rng.random() < 0.5 else _tqa_note
        yield make(item, m, pool, size, pool.true[0], True)


def _tqa_echo(item: TqaItem, m: Maker, pool: TqaPool, size: int, claim: Claim, true: bool) -> Candidate:
    """A real answer of `claim` first, then agents of ours who read it and restate it; maybe a real dissent."""
    rng = m.rng
    other = pool.false if true else pool.true
    d = _dissents(rng) if other else 0
    first = rng.choice(claim.answers)
    restate = [t for t in [*claim.answers, *claim.references] if t != first] or [first]
    answers = [pool.answer(first, true), *m.echo(restate, size - 1 - d, true)]
    if d:
        answers.append(pool.answer(rng.choice(other[0].answers), not true))
    right, wrong = ("correct", "wrong") if true else ("wrong", "correct")
    how = (
        f"A real {right} answer first; the agents after it are ours: they read it and restate its claim (in other "
        f"real wordings of it)" + (f"; a real {wrong} answer follows as a dissent." if d else ".")
    )
    category = "correct_but_unsupported" if true else "echo_cascade"
    return m.case(category, item.question, answers, how, CONSTRUCTED, shuffle=False)


def _tqa_note(item: TqaItem, m: Maker, pool: TqaPool, size: int, claim: Claim, true: bool) -> Candidate:
    rng = m.rng
    other = pool.false if true else pool.true
    d = _dissents(rng) if other else 0
    stated = rng.choice(claim.references or claim.answers)
    answers = m.anchored([*claim.answers, *claim.references], size - d, true)
    if d:
        answers.append(m.dissent_given_note(rng.choice(other[0].answers), not true))
    how = (
        f"We added a note stating {'a correct' if true else 'an incorrect'} claim of the source and wrote every "
        "answer as an agent who read it: each restates the claim in a real wording of it"
        + ("; one disagrees with the note." if d else ".")
    )
    category = "correct_but_unsupported" if true else "anchoring_injected_premise"
    return m.case(category, m.note(item.question, stated), answers, how, CONSTRUCTED)


# ---------------------------------------------------------------- assembly


def split_of(key: str, seed: int) -> str:
    """dev or test by a seeded hash of a source item's family key, so no question feeds both splits."""
    digest = hashlib.sha256(f"{seed}:{key}".encode()).digest()
    return "test" if digest[0] % 2 else "dev"


NEAR_DUPLICATE = 0.75
"""TF-IDF cosine (word 1-2-grams) at which two source questions are one family and go to one split: "Brits are
taller than which places?" and "Americans are taller than which places?" (`fcb audit-dataset` flags 0.8)."""


def question_families(questions: dict[str, str]) -> dict[str, str]:
    """Each item key mapped to its family's key (the smallest key among questions joined by near-duplicate pairs)."""
    keys = sorted(questions)
    if len(keys) < 2:
        return {k: k for k in keys}
    vectors = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b").fit_transform(
        [questions[k] for k in keys]
    )
    close = (vectors @ vectors.T).tocoo()
    parent = list(range(len(keys)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, sim in zip(close.row, close.col, close.data, strict=True):
        if i < j and sim >= NEAR_DUPLICATE:
            parent[max(root(i), root(j))] = min(root(i), root(j))
    return {k: keys[root(i)] for i, k in enumerate(keys)}


def _valid(case: dict) -> bool:
    """Valid under the schema and the label scheme (checked with a placeholder id; real ids come at the end)."""
    probe = {**case, "id": "FCB-0000"}
    return not schema_errors(probe) and not [r for r in check_case(probe) if not r.warning]


def _candidates(
    gsm8k_path: str | Path, truthfulqa_dir: str | Path, seed: int, test_wording: wording.Pool,
    progress: Callable[[str], None],
) -> list[Candidate]:  # fmt: skip
    out: list[Candidate] = []
    progress(f"reading GSM8K solutions from {gsm8k_path}")
    sources: list[tuple[str, dict, Callable[[], list[Any]], Callable[[Any, Maker], Iterator[Candidate]]]] = [
        ("gsm8k", GSM8K, lambda: read_gsm8k(gsm8k_path), gsm8k_cases),
        ("truthfulqa", TRUTHFULQA, lambda: read_truthfulqa(truthfulqa_dir), tqa_cases),
    ]
    for short, meta, read, make in sources:
        if short == "truthfulqa":
            progress(f"{len(out)} GSM8K candidate cases; reading TruthfulQA from {truthfulqa_dir}")
        items = [item for item in read() if f"{short}:{item.key}" not in ERRATA]
        families = question_families({item.key: item.question for item in items})
        for item in items:
            split = split_of(families[item.key], seed)
            pool: wording.Pool = "dev" if split == "dev" else test_wording
            truth = number_text(item.truth) if short == "gsm8k" else item.best
            # per item, so that an item builds the same cases whatever else the source file holds
            rng, words = random.Random(f"{seed}:{short}:{item.key}"), random.Random(f"{seed}:words:{short}:{item.key}")
            maker = Maker(meta, short, item.key, truth, split, pool, rng, words)
            out.extend(c for c in make(item, maker) if _valid(c.case))
    return out


def _sample(candidates: list[Candidate], seed: int) -> list[Candidate]:
    """Per category and source: the same share of each size (`SIZES`), as many as the scarcest size allows, capped;
    one case per source item and category."""
    groups: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in candidates:
        groups[(c.category, c.source)].append(c)
    sources_of = Counter(category for category, _ in groups)
    kept: list[Candidate] = []
    for (category, source), group in sorted(groups.items()):
        cap = CAP_PER_SOURCE * (2 if sources_of[category] == 1 else 1) // (2 if category in HALF_CAP else 1)
        rng = random.Random(f"{seed}:{category}:{source}")  # one stream per group: a change elsewhere moves nothing
        kept.extend(_sample_group(group, SIZES[source], cap, rng))
    return sorted(kept, key=lambda c: (c.source, c.key, c.category, c.size))


def _sample_group(group: list[Candidate], shares: dict[int, float], cap: int, rng: random.Random) -> list[Candidate]:
    by_size: dict[int, list[Candidate]] = defaultdict(list)
    for c in sorted(group, key=lambda c: (c.key, c.size)):
        by_size[c.size].append(c)
    items = {size: len({c.key for c in cs}) for size, cs in by_size.items()}
    total = min([cap] + [int(items.get(size, 0) / share) for size, share in shares.items()])
    used: set[str] = set()
    kept = []
    for size in sorted(shares, key=lambda s: items.get(s, 0)):  # the scarcest size chooses first
        want = round(total * shares[size])
        pool = [c for c in by_size[size] if c.key not in used]
        rng.shuffle(pool)
        for c in pool[:want]:
            used.add(c.key)
            kept.append(c)
    return kept


def build(
    gsm8k_path: str | Path,
    truthfulqa_dir: str | Path,
    out_dir: str | Path,
    seed: int = 0,
    test_wording: wording.Pool = "test",
    progress: Callable[[str], None] = lambda _msg: None,
    audit: bool = False,
) -> dict:
    """Write ``dev.jsonl``, ``test.jsonl`` and ``card.json`` into ``out_dir``; returns the card.

    ``test_wording="heldout"`` builds the test split with the held-back wording families (the template-shift check).
    ``progress`` receives a line as each stage starts (reading, sampling, writing), with the time since the start.
    ``audit=True`` also runs the shortcut audit on the two splits: ``audit.json`` beside them, its figures in the card.
    """
    started = time.monotonic()

    def stage(text: str) -> None:
        progress(f"[{time.monotonic() - started:5.1f} s] {text}")

    candidates = _candidates(gsm8k_path, truthfulqa_dir, seed, test_wording, stage)
    stage(f"{len(candidates)} valid candidate cases in all; sampling them")
    kept = _sample(candidates, seed)
    stage(f"{len(kept)} cases kept; writing the splits to {out_dir}")
    splits: dict[str, list[dict]] = {"test": [], "dev": []}
    for c in kept:
        splits[c.split].append(c.case)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    number = 0
    for name in ("dev", "test"):
        for case in splits[name]:
            number += 1
            case["id"] = f"FCB-{number:04d}"
        (out_dir / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in splits[name]))
    card = _card(splits, seed, test_wording, gsm8k_path, truthfulqa_dir, out_dir)
    if audit:
        stage("auditing the splits for shortcuts (fcb audit-dataset dev.jsonl test.jsonl)")
        card["audit"] = _audit(splits, out_dir, seed)
    (out_dir / "card.json").write_bytes(orjson.dumps(card, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return card


def _audit(splits: dict[str, list[dict]], out_dir: Path, seed: int) -> dict[str, Any]:
    """The shortcut audit of dev against test, written whole to ``audit.json``; its figures for the card."""
    items = {
        name: [item_from_case(c, str(out_dir / f"{name}.jsonl"), i) for i, c in enumerate(cases, start=1)]
        for name, cases in splits.items()
    }
    files = {n: {"path": str(out_dir / f"{n}.jsonl"), "cases": len(items[n])} for n in ("dev", "test")}
    doc = audit_splits(items["dev"], items["test"], {"train": files["dev"], "test": files["test"], "split_by": None},
                       Settings(seed=seed))  # fmt: skip
    (out_dir / "audit.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    return {
        "verdict": doc["verdict"]["status"],
        "findings": [f["message"] for f in doc["verdict"]["findings"]],
        "surface_macro_f1": {
            b["name"]: {"category": round(b["macro_f1"], 3), "risk": round(b["risk_macro_f1"], 3)}
            for b in doc["surface"]["baselines"]
        },
        "exact_rules": doc["rules"]["total"],
        "count_only_macro_f1": round(doc["count_leakage"]["count_only_macro_f1"], 3),
        "file": "audit.json",
    }


def _origin(case: dict) -> str:
    return next(t for t in case["tags"] if t.startswith("origin_")).removeprefix("origin_")


def _answer_kind(answer: dict) -> str:
    meta = answer["metadata"]
    if meta.get("model_family") == REFERENCE_FAMILY:
        return "source reference answer (written by people)"
    if meta.get("saw_other_answers") or meta.get("shared_context"):
        return "written by us"
    return "model answer"


def _card(
    splits: dict[str, list[dict]], seed: int, test_wording: str, gsm8k: str | Path, tqa: str | Path, out: Path
) -> dict:
    tqa = Path(tqa)
    table: dict[str, dict[str, Counter]] = {}
    for name, cases in splits.items():
        rows: dict[str, Counter] = defaultdict(Counter)
        for c in cases:
            rows[c["category"]][f"{c['tags'][0]}/{_origin(c)}"] += 1
        table[name] = {k: dict(sorted(v.items())) for k, v in sorted(rows.items())}  # type: ignore[misc]
    return {
        "seed": seed,
        "test_wording": test_wording,
        "sources": {
            "gsm8k": {"path": str(gsm8k), "sha256": file_sha256(gsm8k)},
            **{
                f"truthfulqa/{n}": {"path": str(tqa / n), "sha256": file_sha256(tqa / n)}
                for n in ("TruthfulQA.csv", "finetune_truth.jsonl", "finetune_info.jsonl")
            },
        },
        "outputs": {f"{n}.jsonl": {"sha256": file_sha256(out / f"{n}.jsonl"), "cases": len(splits[n])} for n in splits},
        "counts": {n: dict(sorted(Counter(c["category"] for c in cs).items())) for n, cs in splits.items()},
        "by_category_source_origin": table,
        "by_origin": {n: dict(sorted(Counter(_origin(c) for c in cs).items())) for n, cs in splits.items()},
        "answers_by_kind": {
            n: dict(sorted(Counter(_answer_kind(a) for c in cs for a in c["answers"]).items()))
            for n, cs in splits.items()
        },
        "answers_per_case": {
            n: {
                f"{src}/{k}": v
                for (src, k), v in sorted(Counter((c["tags"][0], len(c["answers"])) for c in cs).items())
            }
            for n, cs in splits.items()
        },
        "limitations": LIMITATIONS,
        "hand_audit": HAND_AUDIT,
    }


HAND_AUDIT = {
    "what": "TruthfulQA cases of majority_wrong_fact, lone_correct_dissenter, genuine_agreement_correct and "
    "genuine_disagreement, a seeded random sample of both splits, each read one by one against the label rules by "
    "a reviewer (an AI assistant session reading by hand, no script judging), with a verdict and reason per case",
    "cases_read": 340,
    "labels_right": 334,
    "verdicts": {"ok": 308, "flag": 26, "wrong": 5, "unsure": 1},
    "share_right": 0.982,
    "note": "flag = the category and expected risk hold but one correct flag is debatable, or two wrong answers of a "
    "disagreement share a claim below 60%; four earlier rounds (82%, 89%, 90%, 96%) led to the rules in "
    "harness/datasets/realdata/claims.py and build.py",
    "verdicts_file": "tests/data/hand_audit/truthfulqa-labels.csv",
}
"""The last hand audit of the TruthfulQA labels, made on a build with the label rules of this builder."""

LIMITATIONS = [
    "Constructed cases (origin_constructed: echo_cascade, anchoring_injected_premise and correct_but_unsupported) "
    "contain text we wrote: notes and the words of agents who copy an answer or take up a note. Real multi-agent "
    "transcripts with copying are not in the sources. Report the headline on natural and assembled cases beside it.",
    "TruthfulQA answers are rated by the source's raters; about half of the rated answers are the source's own "
    "reference answers, written by people (model_family truthfulqa-reference), not model answers.",
    "TruthfulQA claim groups come from word overlap (TF-IDF); two claims in different words may stay apart and a "
    "rating the raters got wrong may survive when no reference contradicts it (see the hand audit).",
    "GSM8K ground truths are the source's; a few are themselves wrong.",
    "numeric_consensus_error comes only from GSM8K and majority_wrong_fact only from TruthfulQA, so the source "
    "tells those two apart.",
]
