"""GSM8K model solutions (``../shared/data/gsm8k``): four real solutions per problem from two GPT-3 sizes.

Reader: one JSON object per line: the question, the worked ground truth ending in ``A: <number>``, and four model
solutions with the source's own correctness flag. A solution's final value is the number after its last ``A:``.

Cases:
- the four solutions as the source gives them (``origin_natural``), categorised as a panel's (`panels.panel_category`,
  with the source's flags);
- subsets of three, chosen by rule (``origin_assembled``): three reaching one wrong number, two wrong and one correct,
  two or three correct, three different numbers;
- echoes (``origin_constructed``): a real solution, then agents of ours who read it and restate its number
  (``echo_cascade`` for a wrong solution, ``correct_but_unsupported`` for a correct one), in the notes' recipe below;
- notes (``origin_constructed``): a note in the question stating a wrong number a real solution reaches
  (``anchoring_injected_premise``) or the correct one (``correct_but_unsupported``), and every answer written by us as
  an agent who read it. Both come from one recipe, so only the truth of the number tells them apart: each answer
  restates the number after the working of one real solution that reaches it (one solution a case, whichever the
  truth: a bare restatement, a line long, would mark our answers out among real solutions by length alone), and ends,
  as every solution in this source does, on ``A: <number>``; half the cases hold one agent who rejects the note for a
  number a real solution of the other side reaches.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcb_datasets.realdata import wording
from fcb_datasets.realdata.cases import ASSEMBLED, CONSTRUCTED, NATURAL, Candidate, Source, answer, make_case
from fcb_datasets.realdata.models import GSM8K_MODELS
from fcb_datasets.realdata.panels import Reading, panel_category
from fcb_datasets.realdata.sourcefile import json_records
from fcb_datasets.realdata.splits import gsm8k_key
from harness.final_answer import gsm8k_final, plain_number

SOURCE = Source(
    "gsm8k",
    "GSM8K model solutions",
    "MIT",
    "Cobbe et al. (2021), Training Verifiers to Solve Math Word Problems, arXiv:2110.14168",
    "https://github.com/openai/grade-school-math",
)
KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
CLAIM_FORMS = (
    "The answer is {n}.", "{n}.", "It comes to {n}.", "So we get {n}.", "That gives {n}.", "The total is {n}.",
    "It works out to {n}.", "That makes {n}.", "For a total of {n}.", "The final number is {n}.",
    "We end up with {n}.", "{n} in total.",
)  # fmt: skip
"""Ways a note or an answer of ours states a number: many, each in few of our cases (an answer picks one, a case holds
three or four), and none sharing its words with another ("It is", "So it is" marked a third of our cases together),
so that no phrase marks the notes; the commonest words of the source's own solutions ("a total of", "in total")
where they fit."""
SIZES = {3: 0.8, 4: 0.2}
"""The share of each number of answers, the same for every category. The natural cases have four; few problems have
three wrong solutions on one number, or three wrong and one correct, so four answers are a fifth."""


MakeCase = Callable[[str, list["Solution"], str, str], Candidate | None]
"""Makes a case of one problem: category, the solutions it holds, how it was made, origin."""


@dataclass(frozen=True)
class Solution:
    key: str
    family: str
    text: str
    is_correct: bool
    final: str | None  # the value key of the number after the last A:, None when there is none


@dataclass(frozen=True)
class Problem:
    key: str  # gsm8k_key of the question
    question: str
    truth: str  # the ground truth's number, as a plain string
    solutions: tuple[Solution, ...]
    steps: int = 0  # lines of working in the ground truth: how hard the problem is

    @property
    def difficulty(self) -> str:
        """The steps of the ground truth's working, 2 or fewer and 5 or more taken together (`sampling.matched`)."""
        return str(min(max(self.steps, 2), 5))


def steps(ground_truth: str) -> int:
    """Lines of working in a ground-truth solution (its final ``A:`` line aside)."""
    return sum(1 for line in ground_truth.splitlines() if line.strip() and not line.startswith("A:"))


def _final(text: str) -> str | None:
    found = gsm8k_final(text)
    number = plain_number(found[0]) if found else None
    if number is None:
        return None
    return str(number.numerator) if number.denominator == 1 else str(float(number))


def read(path: str | Path) -> list[Problem]:
    """Problems with a readable ground truth and four solutions, in file order."""
    out = []
    for row in json_records(path, "a GSM8K solutions"):
        truth = _final(row.text("ground_truth"))
        question = row.text("question")
        if truth is None or not all(k in row for k in KEYS):
            continue
        solutions = []
        for k in KEYS:
            record = row.record(k)
            text = record.text("solution")
            solutions.append(Solution(k, GSM8K_MODELS[k.split("_")[0]], text, record.need("is_correct", bool),
                                      _final(text)))  # fmt: skip
        out.append(Problem(gsm8k_key(question), question, truth, tuple(solutions), steps(row.text("ground_truth"))))
    return out


def _real(s: Solution) -> dict[str, Any]:
    return answer(s.text, s.is_correct, s.family)


def cases(problem: Problem, seed: int, pool: wording.Pool) -> Iterator[Candidate]:
    """Every case one problem supports."""
    rng = random.Random(f"{seed}:gsm8k:{problem.key}")
    words = random.Random(f"{seed}:words:gsm8k:{problem.key}")
    item, q = f"gsm8k:{problem.key}", problem.question

    def case(category: str | None, chosen: list[Solution], how: str, origin: str) -> Candidate | None:
        if category is None:
            return None
        return make_case(SOURCE, category, q, [_real(s) for s in chosen], problem.truth, item, how, origin,
                         str(len(chosen)), rng, difficulty=problem.difficulty)  # fmt: skip

    readings = [Reading(s.family, s.text, s.final, s.is_correct) for s in problem.solutions]
    natural = case(panel_category(readings, numeric=True), list(problem.solutions),
                   "The four real model solutions, unchanged.", NATURAL)  # fmt: skip
    found = [natural, *_subsets(problem, rng, case)]
    found += [_note(problem, rng, words, pool, true) for true in (False, True)]
    found += [_echo(problem, rng, words, pool, true) for true in (False, True)]
    yield from (c for c in found if c is not None)


def _subsets(problem: Problem, rng: random.Random, case: MakeCase) -> Iterator[Candidate | None]:
    right = [s for s in problem.solutions if s.is_correct]
    groups: dict[str, list[Solution]] = defaultdict(list)
    for s in problem.solutions:
        if not s.is_correct and s.final is not None:
            groups[s.final].append(s)
    wrong = sorted(groups.values(), key=lambda g: (-len(g), g[0].final or ""))
    top = wrong[0] if wrong else []
    subset = "A subset of the real model solutions, chosen by rule: {}."
    if len(top) >= 3:
        yield case("numeric_consensus_error", rng.sample(top, 3), subset.format("three reaching one wrong number"),
                   ASSEMBLED)  # fmt: skip
    elif len(top) == 2 and len(wrong) > 1:
        yield case("numeric_consensus_error", [*top, rng.choice(wrong[1])],
                   subset.format("two reaching one wrong number and one another"), ASSEMBLED)  # fmt: skip
    if len(top) >= 2 and right:
        yield case("lone_correct_dissenter", [*rng.sample(top, 2), rng.choice(right)],
                   subset.format("two reaching one wrong number and one correct"), ASSEMBLED)  # fmt: skip
    if len(right) >= 2 and wrong:
        yield case("genuine_agreement_correct", [*rng.sample(right, 2), rng.choice(rng.choice(wrong))],
                   subset.format("two correct and one wrong"), ASSEMBLED)  # fmt: skip
    elif len(right) >= 3:
        yield case("genuine_agreement_correct", rng.sample(right, 3), subset.format("three correct"), ASSEMBLED)
    distinct = [g[0] for g in wrong]
    if len(distinct) >= 2 and (right or len(distinct) >= 3):
        chosen = [*rng.sample(distinct, 2), rng.choice(right)] if right else rng.sample(distinct, 3)
        yield case("genuine_disagreement", chosen, subset.format("three reaching three different numbers"), ASSEMBLED)


def _working(s: Solution) -> str:
    """A solution's working without its final ``A:`` line."""
    return "\n".join(line for line in s.text.splitlines() if not line.startswith("A:")).strip()


def _note(problem: Problem, rng: random.Random, words: random.Random, pool: wording.Pool, true: bool
          ) -> Candidate | None:  # fmt: skip
    """A note stating a number, every answer ours as an agent who read it (module docstring)."""
    right = [s for s in problem.solutions if s.is_correct and s.final == problem.truth]
    wrong = [s for s in problem.solutions if not s.is_correct and s.final is not None and s.final != problem.truth]
    backing, other = (right, wrong) if true else (wrong, right)
    if not backing:
        return None
    source = rng.choice(backing)
    number = source.final or ""
    size = rng.choice(sorted(SIZES))
    dissent = bool(other) and rng.random() < 0.5
    answers = []
    for _ in range(size - dissent):
        text = wording.fill(wording.anchored(pool, words), words.choice(CLAIM_FORMS).format(n=number))
        worked = _working(source)
        answers.append(answer(_solution(worked, text, number), true, shared=True))
    if dissent:
        against = rng.choice(other)
        text = wording.fill(
            wording.pick(wording.DISSENTS, pool, words), words.choice(CLAIM_FORMS).format(n=against.final)
        )
        answers.append(answer(_solution(_working(against), text, against.final or ""), not true, shared=True))
    claim = words.choice(CLAIM_FORMS).format(n=number)
    question = wording.fill(wording.pick(wording.NOTES, pool, words), claim, question=problem.question)
    how = (
        f"We added a note stating {'the correct' if true else 'a wrong'} number (one a real solution reaches) and "
        "wrote every answer as an agent who read it: each restates the number after that solution's working"
        + ("; one rejects the note for a number a real solution of the other side reaches." if dissent else ".")
    )
    category = "correct_but_unsupported" if true else "anchoring_injected_premise"
    return make_case(SOURCE, category, question, answers, problem.truth, f"gsm8k:{problem.key}", how, CONSTRUCTED,
                     str(size), rng, recipe="note", difficulty=problem.difficulty)  # fmt: skip


def _solution(working: str, sentence: str, number: str) -> str:
    """An answer in the source's own format: working (if any), the sentence, and a final ``A: <number>`` line."""
    return "\n".join(part for part in (working, sentence, f"A: {number}") if part)


def _echo(problem: Problem, rng: random.Random, words: random.Random, pool: wording.Pool, true: bool
          ) -> Candidate | None:  # fmt: skip
    """A real solution and agents of ours who read it and restate its number; maybe a real dissent (module
    docstring). The same recipe for a wrong solution (echo_cascade) and a correct one (correct_but_unsupported)."""
    right = [s for s in problem.solutions if s.is_correct and s.final == problem.truth]
    wrong = [s for s in problem.solutions if not s.is_correct and s.final is not None and s.final != problem.truth]
    backing, other = (right, wrong) if true else (wrong, right)
    if not backing:
        return None
    first = rng.choice(backing)
    number = first.final or ""
    size = rng.choice(sorted(SIZES))
    dissent = bool(other) and rng.random() < 0.5
    answers = [_real(first)]
    for _ in range(size - 1 - dissent):
        text = wording.fill(wording.echoed(pool, words), words.choice(CLAIM_FORMS).format(n=number))
        worked = _working(first)
        answers.append(answer(_solution(worked, text, number), true, saw=True))
    if dissent:
        answers.append(_real(rng.choice(other)))
    how = (
        f"A real {'correct' if true else 'wrong'} solution; the other agents are ours: they read it and restate "
        "its number after its working" + ("; a real solution of the other side dissents." if dissent else ".")
    )
    category = "correct_but_unsupported" if true else "echo_cascade"
    return make_case(SOURCE, category, problem.question, answers, problem.truth, f"gsm8k:{problem.key}", how,
                     CONSTRUCTED, str(size), rng, recipe="echo", difficulty=problem.difficulty)  # fmt: skip
