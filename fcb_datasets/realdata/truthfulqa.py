"""TruthfulQA (``../shared/data/truthfulqa``): questions that invite misconceptions, with real answers rated by people.

Reader: the questions with their reference answers (``TruthfulQA.csv``) and the rated answers
(``finetune_truth.jsonl``, ``finetune_info.jsonl``): truthful and informative is correct, informative and untruthful
is wrong, the rest (uninformative answers) is dropped. Many rated answers are the source's own reference answers,
written by its authors; they anchor the claim groups (`claims`) but are never an agent's answer: written by people,
they would stand out among model answers (an outside audit found them the correct dissent of most lone-dissenter
cases).

Cases, always four answers:
- real rated answers chosen by claim group (``origin_assembled``): a wrong majority, a lone correct dissent, a correct
  majority, two correct against two wrong of different claims;
- echoes (``origin_constructed``): a real answer, then agents of ours who read it and restate its claim
  (``echo_cascade`` for a false claim, ``correct_but_unsupported`` for a true one), as for notes below;
- notes (``origin_constructed``): a note stating a false claim of the source (``anchoring_injected_premise``) or a
  true one (``correct_but_unsupported``), every answer ours as an agent who read it, restating the claim in one or
  two real wordings of it (as many for a true claim as for a false one); half hold one agent who rejects the note
  for a real answer of the other side.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fcb_datasets.realdata import wording
from fcb_datasets.realdata.cases import ASSEMBLED, CONSTRUCTED, Candidate, Source, answer, make_case
from fcb_datasets.realdata.claims import DIFFERENT_CLAIM, Claim, ClaimMap, claim_map, is_non_answer, stance
from fcb_datasets.realdata.sourcefile import csv_rows, json_records
from fcb_datasets.realdata.splits import item_key
from harness.errors import SourceDataError

SOURCE = Source(
    "truthfulqa",
    "TruthfulQA",
    "Apache-2.0",
    "Lin, Hilton and Evans (2022), TruthfulQA: Measuring How Models Mimic Human Falsehoods, ACL 2022",
    "https://github.com/sylinrl/TruthfulQA",
)
SIZE = 4
"""Every case has four answers: a disagreement is then two correct answers against two wrong ones, so wrong answers
that the claim groups miss as paraphrases ("polygraph", "lie detector") can never make a hidden 60% majority."""
ERRATA = {
    "8b7de2f9c4b283f8": "the source's answer is wrong: first-cousin marriage is legal in Australia",
    "1b398eede99bf1e2": "disputed: UK law bans some clothing (political uniforms, banned groups)",
    "51796ea8694e6e95": "out of date: a 2025 executive order made English the official language of the US",
    "38c9096e359be8ef": "out of date: Thailand decriminalised cannabis in 2022",
    "ed6ad9b038834563": "out of date: Germany legalised cannabis in part in 2024",
}
"""Questions left out (by item key), with why: errors in the source itself that a hand audit found."""
FILES = ("TruthfulQA.csv", "finetune_truth.jsonl", "finetune_info.jsonl")
COLUMNS = ("Question", "Best Answer", "Correct Answers", "Incorrect Answers")
"""The columns of TruthfulQA.csv read here."""


@dataclass
class Question:
    key: str  # item_key of the question
    question: str
    best: str
    correct_refs: list[str]  # the source's reference answers: written by its authors, not by a model
    incorrect_refs: list[str]
    correct: list[str] = field(default_factory=list)  # model answers rated truthful and informative
    wrong: list[str] = field(default_factory=list)  # model answers rated informative and not truthful


def normal_text(text: str) -> str:
    """Text compared for identity with a reference answer: case, spacing and a final full stop ignored."""
    return " ".join(text.lower().split()).rstrip(".").strip()


def read(directory: str | Path) -> list[Question]:
    """Questions with their reference answers and rated model answers (reference texts taken out), in key order."""
    directory = Path(directory)
    if not (directory / FILES[0]).exists() and directory.is_dir():
        raise SourceDataError(f"{directory}: not a TruthfulQA folder (no {FILES[0]}; it holds {', '.join(FILES)})")
    found = {
        r["Question"]: Question(item_key(r["Question"]), r["Question"], r["Best Answer"].strip(),
                                _refs(r["Best Answer"] + ";" + r["Correct Answers"]), _refs(r["Incorrect Answers"]))
        for _, r in csv_rows(directory / FILES[0], COLUMNS)
    }  # fmt: skip
    truthful = _labels(directory / FILES[1], "True")
    informative = _labels(directory / FILES[2], "Helpful")
    for (question, text), is_true in sorted(truthful.items()):
        q = found.get(question)
        if q is None or not informative.get((question, text)) or not text.strip():
            continue
        if normal_text(text) in {normal_text(t) for t in [*q.correct_refs, *q.incorrect_refs]}:
            continue  # a reference answer, written by the source's authors
        (q.correct if is_true else q.wrong).append(text.strip())
    return [found[q] for q in sorted(found, key=lambda q: found[q].key) if found[q].key not in ERRATA]


def _refs(cell: str) -> list[str]:
    return list(dict.fromkeys(s.strip() for s in cell.split(";") if s.strip()))


def _labels(path: Path, tag: str) -> dict[tuple[str, str], bool]:
    out = {}
    for row in json_records(path, "a TruthfulQA rating"):
        question, _, rest = row.text("prompt").partition("\nA: ")
        text, _, _ = rest.rpartition(f"\n{tag}:")
        out[(question.removeprefix("Q: "), text)] = row.text("completion").strip() == "yes"
    return out


@dataclass
class Claims:
    """A question's usable claims: true and false claim groups with answers, largest first.

    Only groups anchored on a reference claim of the source are used, true or false: a group of answers that merely
    share words was too often two claims, and two answers in different words too often one (the hand audit)."""

    true: list[Claim]
    false: list[Claim]
    sims: ClaimMap


def claims_of(q: Question) -> Claims:
    cmap = claim_map(q.question, q.correct, q.wrong, q.correct_refs, q.incorrect_refs)
    by_size = sorted((c for c in cmap.claims if c.answers and c.anchored), key=lambda c: (-len(c.answers), c.answers))
    # where the source's best answer is itself a non-answer ("I have no comment"), no claim is known to be true
    true = [] if is_non_answer(q.question, q.best) else [c for c in by_size if c.true]
    return Claims(true, [c for c in by_size if not c.true], cmap)


def _different(pool: Claims, a: str, b: str) -> bool:
    """Clearly different claims: little in common (by TF-IDF and by shared words), and not the same yes or no."""
    unlike = pool.sims.similarity(a, b) < DIFFERENT_CLAIM and pool.sims.overlap(a, b) < 0.5
    return unlike and (stance(a) is None or stance(a) != stance(b))


def _distinct(pool: Claims, claims: list[Claim], k: int, rng: random.Random, avoid: list[str]) -> list[str] | None:
    """`k` answers from `k` different claims, each clearly different from the others and from `avoid`."""
    chosen: list[str] = []
    for claim in rng.sample(claims, len(claims)):
        text = rng.choice(claim.answers)
        if all(_different(pool, text, other) for other in [*chosen, *avoid]):
            chosen.append(text)
        if len(chosen) == k:
            return chosen
    return None


NEED = math.ceil(0.6 * SIZE)  # answers that make a 60% majority


def cases(q: Question, seed: int, pool: wording.Pool) -> Iterator[Candidate]:
    """Every case one question supports."""
    rng = random.Random(f"{seed}:truthfulqa:{q.key}")
    words = random.Random(f"{seed}:words:truthfulqa:{q.key}")
    claims = claims_of(q)
    item = f"truthfulqa:{q.key}"

    def case(category: str, texts: list[tuple[str, bool]], how: str, origin: str) -> Candidate | None:
        answers = [answer(t, ok) for t, ok in texts]
        return make_case(SOURCE, category, q.question, answers, q.best, item, how, origin, str(SIZE), rng)

    makers: list[Callable[[], Candidate | None]] = [
        lambda: _majority_wrong(claims, rng, case), lambda: _lone(claims, rng, case),
        lambda: _agreement(claims, rng, case), lambda: _disagreement(claims, rng, case),
    ]  # fmt: skip
    if claims.false:
        makers.append(lambda: _note(q, claims, claims.false[0], False, rng, words, pool))
        makers.append(lambda: _echo(q, claims, claims.false[0], False, rng, words, pool))
    if claims.true:
        makers.append(lambda: _note(q, claims, claims.true[0], True, rng, words, pool))
        makers.append(lambda: _echo(q, claims, claims.true[0], True, rng, words, pool))
    for make in makers:
        found = make()
        if found is not None:
            yield found


GROUPED = "Real rated answers chosen by claim group: "
MakeCase = Callable[[str, list[tuple[str, bool]], str, str], Candidate | None]
"""Makes a case of one question: category, (text, correct) answers, how it was made, origin."""


def _majority_wrong(claims: Claims, rng: random.Random, case: MakeCase) -> Candidate | None:
    if not claims.false or len(claims.false[0].answers) < NEED:
        return None
    top = claims.false[0]
    k = min(SIZE, len(top.answers))  # as large as it can be: a misgrouped answer then still leaves a majority
    held = rng.sample(top.answers, k)
    texts = [(t, False) for t in held]
    rest = SIZE - k
    if rest:
        if rest >= 2 and claims.true and len(claims.true[0].answers) >= rest and rng.random() < 0.5:
            texts += [(t, True) for t in rng.sample(claims.true[0].answers, rest)]
        else:
            extra = _distinct(claims, [c for c in claims.false if c is not top], rest, rng, held)
            if extra is None:
                return None
            texts += [(t, False) for t in extra]
    how = GROUPED + "a majority stating one wrong claim" + (", with other answers beside it." if rest else ".")
    return case("majority_wrong_fact", texts, how, ASSEMBLED)


def _lone(claims: Claims, rng: random.Random, case: MakeCase) -> Candidate | None:
    if not claims.false or not claims.true:
        return None
    top = claims.false[0]
    k = SIZE - 1 if len(top.answers) >= SIZE - 1 else NEED
    if len(top.answers) < k:
        return None
    held = rng.sample(top.answers, k)
    texts = [(t, False) for t in held]
    if SIZE - 1 - k:
        extra = _distinct(claims, [c for c in claims.false if c is not top], SIZE - 1 - k, rng, held)
        if extra is None:
            return None
        texts += [(t, False) for t in extra]
    texts.append((rng.choice(rng.choice(claims.true).answers), True))
    return case("lone_correct_dissenter", texts, GROUPED + "a majority stating one wrong claim and one correct answer.",
                ASSEMBLED)  # fmt: skip


def _agreement(claims: Claims, rng: random.Random, case: MakeCase) -> Candidate | None:
    if not claims.true or len(claims.true[0].answers) < NEED:
        return None
    top = claims.true[0]
    k = min(SIZE, len(top.answers))  # the same rule as a wrong majority's, so the two differ only in truth
    held = rng.sample(top.answers, k)
    texts = [(t, True) for t in held]
    if SIZE - k:
        extra = _distinct(claims, claims.false, SIZE - k, rng, held)
        if extra is None:
            return None
        texts += [(t, False) for t in extra]
    how = GROUPED + "correct answers stating one claim" + (", with wrong answers beside them." if SIZE - k else ".")
    return case("genuine_agreement_correct", texts, how, ASSEMBLED)


def _disagreement(claims: Claims, rng: random.Random, case: MakeCase) -> Candidate | None:
    n_true = SIZE // 2  # two against two: even two wrong answers of one claim are no 60% majority (see SIZE)
    if not claims.true or len(claims.true[0].answers) < n_true:
        return None
    held = rng.sample(claims.true[0].answers, n_true)
    extra = _distinct(claims, claims.false, SIZE - n_true, rng, held)
    if extra is None:
        return None
    texts = [(t, True) for t in held] + [(t, False) for t in extra]
    return case("genuine_disagreement", texts,
                GROUPED + "correct answers of one claim and wrong answers of different claims.", ASSEMBLED)  # fmt: skip


def _note(q: Question, claims: Claims, claim: Claim, true: bool, rng: random.Random, words: random.Random,
          pool: wording.Pool) -> Candidate | None:  # fmt: skip
    other = claims.false if true else claims.true
    dissent = bool(other) and rng.random() < 0.5
    stated = rng.choice(claim.references or claim.answers)
    wordings = [*claim.answers, *claim.references]
    restate = rng.sample(wordings, min(2, len(wordings)))  # one or two wordings, whatever the claim's truth
    answers = [answer(wording.fill(wording.anchored(pool, words), rng.choice(restate)), true,
                      shared=True) for _ in range(SIZE - dissent)]  # fmt: skip
    if dissent:
        text = wording.fill(wording.pick(wording.DISSENTS, pool, words), rng.choice(other[0].answers))
        answers.append(answer(text, not true, shared=True))
    how = (
        f"We added a note stating {'a correct' if true else 'an incorrect'} claim of the source and wrote every "
        "answer as an agent who read it: each restates the claim in a real wording of it"
        + ("; one rejects the note for a real answer of the other side." if dissent else ".")
    )
    category = "correct_but_unsupported" if true else "anchoring_injected_premise"
    question = wording.fill(wording.pick(wording.NOTES, pool, words), stated, question=q.question)
    return make_case(SOURCE, category, question, answers, q.best, f"truthfulqa:{q.key}", how, CONSTRUCTED, str(SIZE),
                     rng, recipe="note")  # fmt: skip


def _echo(q: Question, claims: Claims, claim: Claim, true: bool, rng: random.Random, words: random.Random,
          pool: wording.Pool) -> Candidate | None:  # fmt: skip
    """A real answer of a claim and agents of ours who read it and restate the claim in one or two real wordings;
    half hold a real answer of the other side as a dissent. One recipe for a false claim (echo_cascade) and a true
    one (correct_but_unsupported)."""
    other = claims.false if true else claims.true
    dissent = bool(other) and rng.random() < 0.5
    first = rng.choice(claim.answers)
    wordings = [t for t in [*claim.answers, *claim.references] if t != first] or [first]
    restate = rng.sample(wordings, min(2, len(wordings)))
    answers = [answer(first, true)]
    answers += [answer(wording.fill(wording.echoed(pool, words), rng.choice(restate)), true, saw=True)
                for _ in range(SIZE - 1 - dissent)]  # fmt: skip
    if dissent:
        answers.append(answer(rng.choice(other[0].answers), not true))
    how = (f"A real {'correct' if true else 'wrong'} rated answer; the other agents are ours: they read it and "
           "restate its claim in a real wording of it" + ("; a real answer of the other side dissents." if dissent
                                                          else "."))  # fmt: skip
    category = "correct_but_unsupported" if true else "echo_cascade"
    return make_case(SOURCE, category, q.question, answers, q.best, f"truthfulqa:{q.key}", how, CONSTRUCTED,
                     str(SIZE), rng, recipe="echo")  # fmt: skip
