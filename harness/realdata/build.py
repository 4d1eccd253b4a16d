"""Build the real-data benchmark: cases from real model answers, split by source question, written reproducibly.

Natural categories come straight from the sources' answers and correctness labels; echo_cascade,
correct_but_unsupported and anchoring_injected_premise are constructed around real answers with text we write
(said in each case's ``source.modification``). The same inputs and seed give byte-identical files.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from harness.cases import file_sha256, schema_errors
from harness.labels import check_case
from harness.realdata.claims import group_by_claim, states_a_claim
from harness.realdata.sources import GsmItem, Solution, TqaItem, number_text, read_gsm8k, read_truthfulqa
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
CAP_PER_CATEGORY = 320  # keeps the large natural categories from swamping the constructed ones
ECHOES = (
    "I read the answer above and checked it: {claim}",
    "Having seen the earlier reply, I agree with it. {claim}",
    "Same conclusion as the first agent: {claim}",
    "The previous answer is right, so I will repeat it: {claim}",
)
RATIONALE = {
    "majority_wrong_fact": "Most agents state the same wrong answer, rated untruthful by human raters.",
    "echo_cascade": "The first answer is wrong and the agents who read it repeated it.",
    "anchoring_injected_premise": "A false note in the question was shared by all agents and their answers state it.",
    "lone_correct_dissenter": "A wrong answer holds the majority; the single correct answer is the dissent.",
    "numeric_consensus_error": "Most solutions reach the same wrong number.",
    "genuine_agreement_correct": "Independent answers agree on the correct answer.",
    "genuine_disagreement": "No single answer is held by 60% of the agents.",
    "correct_but_unsupported": "The consensus is correct but rests on one answer that the others copied.",
}


def _answer(text: str, correct: bool, family: str | None = None, saw: bool = False, shared: bool = False) -> dict:
    meta: dict[str, Any] = {"saw_other_answers": saw, "shared_context": shared}
    if family:
        meta = {"model_family": family, **meta}
    return {"text": text, "correct": correct, "metadata": meta}


def _majority(answers: list[dict], category: str) -> bool | None:
    if CATEGORY_RISK[category] == "high":
        return False
    return None if category == "genuine_disagreement" else True


def _case(
    category: str,
    question: str,
    answers: list[dict],
    truth: str,
    source: dict,
    rng: random.Random,
    modification: str,
    shuffle: bool = True,
) -> dict:
    if shuffle:
        rng.shuffle(answers)
    for i, a in enumerate(answers, start=1):
        a["agent_id"] = f"agent-{i}"
    return {
        "id": "",
        "category": category,
        "question": question,
        "answers": [
            {"agent_id": a["agent_id"], "text": a["text"], "correct": a["correct"], "metadata": a["metadata"]}
            for a in answers
        ],
        "ground_truth": truth,
        "expected_risk": CATEGORY_RISK[category],
        "majority_correct": _majority(answers, category),
        "rationale": RATIONALE[category],
        "source": {**source, "modification": modification},
        "tags": [source["item"].split(":")[0]],
    }


# ---------------------------------------------------------------- GSM8K


def _gsm_answer(s: Solution, **flags: Any) -> dict:
    return _answer(s.text, s.is_correct, s.family, **flags)


def _wrong_groups(item: GsmItem) -> dict[float, list[Solution]]:
    groups: dict[float, list[Solution]] = {}
    for s in item.solutions:
        if not s.is_correct and s.final is not None:
            groups.setdefault(s.final, []).append(s)
    return groups


def gsm8k_cases(item: GsmItem, rng: random.Random) -> Iterator[dict]:
    """Every case one GSM8K problem supports. Final answers are compared as numbers."""
    source = {**GSM8K, "item": f"gsm8k:{item.index}"}
    truth = number_text(item.truth)
    right = [s for s in item.solutions if s.is_correct]
    wrong = _wrong_groups(item)
    top = max(wrong.values(), key=len, default=[])
    whole = "The four real model solutions, unchanged, in shuffled order under neutral agent ids."
    if len(top) >= 3:
        category = "numeric_consensus_error"
    elif len(right) >= 3:
        category = "genuine_agreement_correct"
    else:  # no answer held by three of the four solutions
        category = "genuine_disagreement"
    yield _case(category, item.question, [_gsm_answer(s) for s in item.solutions], truth, source, rng, whole)
    others = [s for s in item.solutions if not s.is_correct and s not in top]
    if len(top) == 2 and others:
        chosen = [*top, rng.choice(others)]
        yield _case(
            "numeric_consensus_error",
            item.question,
            [_gsm_answer(s) for s in chosen],
            truth,
            source,
            rng,
            "A subset of three real solutions: two reaching the same wrong number and one reaching another.",
        )
    if len(top) >= 2 and right:
        chosen = [*top, rng.choice(right)]
        yield _case(
            "lone_correct_dissenter",
            item.question,
            [_gsm_answer(s) for s in chosen],
            truth,
            source,
            rng,
            "A subset of the real solutions: those sharing the most common wrong number and one correct one.",
        )
    if len(top) >= 2:
        wrong_number = number_text(top[0].final)  # type: ignore[arg-type]
        note = f"Note shared with every agent: a reviewer already worked this out and the answer is {wrong_number}."
        yield _case(
            "anchoring_injected_premise",
            f"{note}\n\n{item.question}",
            [_gsm_answer(s, shared=True) for s in top],
            truth,
            source,
            rng,
            "We added a note stating the wrong number that the real solutions reach; all agents saw it.",
        )
    yield from _gsm_cascades(item, rng, source, truth, right, wrong)


def _gsm_cascades(
    item: GsmItem,
    rng: random.Random,
    source: dict,
    truth: str,
    right: list[Solution],
    wrong: dict[float, list[Solution]],
) -> Iterator[dict]:
    wrong_solutions = [s for group in wrong.values() for s in group]
    if wrong_solutions:
        first = rng.choice(wrong_solutions)
        claim = f"the answer is {number_text(first.final)}."
        answers = [_gsm_answer(first)] + [
            _answer(e.format(claim=claim), False, saw=True) for e in rng.sample(ECHOES, 2)
        ]
        if right:
            answers.append(_gsm_answer(rng.choice(right)))
        yield _case(
            "echo_cascade",
            item.question,
            answers,
            truth,
            source,
            rng,
            "A real wrong solution first; the agents after it are ours and restate its number, having read "
            "it; a real correct solution may follow as a dissent.",
            shuffle=False,
        )
    if right:
        first = rng.choice(right)
        claim = f"the answer is {truth}."
        answers = [_gsm_answer(first)] + [_answer(e.format(claim=claim), True, saw=True) for e in rng.sample(ECHOES, 2)]
        if wrong_solutions:
            answers.append(_gsm_answer(rng.choice(wrong_solutions)))
        yield _case(
            "correct_but_unsupported",
            item.question,
            answers,
            truth,
            source,
            rng,
            "A real correct solution first; the agents after it are ours and restate its number, having read "
            "it; a real wrong solution may follow as a dissent.",
            shuffle=False,
        )


# ---------------------------------------------------------------- TruthfulQA


def ok(text: str) -> dict:
    return _answer(text, True)


def bad(text: str) -> dict:
    return _answer(text, False)


def tqa_cases(item: TqaItem, rng: random.Random) -> Iterator[dict]:
    """Every case one TruthfulQA question supports, with wrong answers grouped by the claim they state."""
    source = {**TRUTHFULQA, "item": f"truthfulqa:{item.index}"}
    groups = group_by_claim(item.question, item.wrong, item.incorrect_refs)
    claims = sorted((k for k in groups if k >= 0), key=lambda k: (-len(groups[k]), k))
    top = [item.wrong[i] for i in groups[claims[0]]] if claims else []
    # a rating of "truthful" is not taken for an answer that states one of the source's incorrect reference claims
    right = [t for t in item.correct if not states_a_claim(item.question, t, item.incorrect_refs)]
    rng.shuffle(right)
    q, truth = item.question, item.best
    if len(top) >= 3:
        n_top = min(len(top), rng.randint(3, 5))
        n_right = 2 if len(right) >= 2 and rng.random() < 0.5 else 0
        yield _case(
            "majority_wrong_fact",
            q,
            [bad(t) for t in top[:n_top]] + [ok(t) for t in right[:n_right]],
            truth,
            source,
            rng,
            "Real model answers stating the same incorrect reference claim"
            + (", with two real truthful answers." if n_right else "."),
        )
    if len(top) >= 2 and right:
        n_top = min(len(top), rng.randint(2, 4))
        yield _case(
            "lone_correct_dissenter",
            q,
            [bad(t) for t in top[:n_top]] + [ok(right[0])],
            truth,
            source,
            rng,
            "Real model answers stating the same incorrect reference claim, and one real truthful answer.",
        )
    if len(right) >= 3:
        yield _case(
            "genuine_agreement_correct",
            q,
            [ok(t) for t in right[: rng.randint(3, 5)]],
            truth,
            source,
            rng,
            "Real model answers rated truthful and informative by people.",
        )
    distinct_wrong = [item.wrong[groups[k][0]] for k in sorted(groups, key=lambda k: (k < 0, k))]
    if len(right) >= 2 and len(distinct_wrong) >= 3:
        yield _case(
            "genuine_disagreement",
            q,
            [ok(t) for t in right[:2]] + [bad(t) for t in distinct_wrong[:3]],
            truth,
            source,
            rng,
            "Two real truthful answers and three real wrong answers stating different claims.",
        )
    if len(top) >= 2:
        note = f"Background note given to every agent: {item.incorrect_refs[claims[0]]}."
        yield _case(
            "anchoring_injected_premise",
            f"{note}\n\n{q}",
            [_answer(t, False, shared=True) for t in top[:4]],
            truth,
            source,
            rng,
            "We added a note stating an incorrect reference claim of the source; the "
            "real answers state the same claim; all agents saw the note.",
        )
    yield from _tqa_cascades(q, truth, source, rng, top, right)


def _tqa_cascades(
    q: str, truth: str, source: dict, rng: random.Random, top: list[str], right: list[str]
) -> Iterator[dict]:
    if top:
        answers = [_answer(top[0], False)] + [
            _answer(e.format(claim=top[0]), False, saw=True) for e in rng.sample(ECHOES, 2)
        ]
        if right:
            answers.append(_answer(right[0], True))
        yield _case(
            "echo_cascade",
            q,
            answers,
            truth,
            source,
            rng,
            "A real wrong answer first; the agents after it "
            "are ours and repeat it, having read it; a real truthful answer may follow as a dissent.",
            shuffle=False,
        )
    if right:
        answers = [_answer(right[0], True)] + [
            _answer(e.format(claim=right[0]), True, saw=True) for e in rng.sample(ECHOES, 2)
        ]
        yield _case(
            "correct_but_unsupported",
            q,
            answers,
            truth,
            source,
            rng,
            "A real truthful answer first; the agents after it are ours and repeat it, having read it.",
            shuffle=False,
        )


# ---------------------------------------------------------------- assembly


def _split_of(item_id: str, seed: int) -> str:
    """dev or test by a seeded hash of the source question, so no question feeds both splits."""
    digest = hashlib.sha256(f"{seed}:{item_id}".encode()).digest()
    return "test" if digest[0] % 2 else "dev"


def _valid(case: dict) -> bool:
    """Valid under the schema and the label scheme (checked with a placeholder id; real ids come at the end)."""
    probe = {**case, "id": "FCB-0000"}
    return not schema_errors(probe) and not [r for r in check_case(probe) if not r.warning]


def _quiet(_: str) -> None:
    return None


def build(
    gsm8k_path: str | Path,
    truthfulqa_dir: str | Path,
    out_dir: str | Path,
    seed: int = 0,
    progress: Callable[[str], None] = _quiet,
) -> dict:
    """Write ``dev.jsonl``, ``test.jsonl`` and ``card.json`` into ``out_dir``; returns the card.

    ``progress`` receives one line as each stage starts and ends (reading, validating, writing).
    """
    rng = random.Random(seed)
    started = time.monotonic()

    def stage(text: str) -> None:
        progress(f"[{time.monotonic() - started:5.1f} s] {text}")

    candidates: list[dict] = []
    stage(f"reading GSM8K solutions from {gsm8k_path}")
    for item in read_gsm8k(gsm8k_path):
        candidates.extend(gsm8k_cases(item, rng))
    stage(f"{len(candidates)} GSM8K candidate cases; reading TruthfulQA from {truthfulqa_dir}")
    for tqa in read_truthfulqa(truthfulqa_dir):
        candidates.extend(tqa_cases(tqa, rng))
    stage(f"{len(candidates)} candidate cases in all; validating and balancing them")
    kept = _balance([c for c in candidates if _valid(c)], rng)
    stage(f"{len(kept)} cases kept; writing the splits to {out_dir}")
    splits: dict[str, list[dict]] = {"test": [], "dev": []}
    for case in kept:
        splits[_split_of(case["source"]["item"], seed)].append(case)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    number = 0
    for name in ("test", "dev"):
        for case in splits[name]:
            number += 1
            case["id"] = f"FCB-{number:04d}"
        (out_dir / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in splits[name]))
    card = _card(splits, seed, gsm8k_path, truthfulqa_dir, out_dir)
    (out_dir / "card.json").write_bytes(orjson.dumps(card, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return card


def _balance(cases: list[dict], rng: random.Random) -> list[dict]:
    """At most `CAP_PER_CATEGORY` cases a category (a seeded sample), in a stable order."""
    by_category: dict[str, list[dict]] = {}
    for case in cases:
        by_category.setdefault(case["category"], []).append(case)
    kept = []
    for category in sorted(by_category):
        group = by_category[category]
        kept.extend(rng.sample(group, CAP_PER_CATEGORY) if len(group) > CAP_PER_CATEGORY else group)
    return sorted(
        kept, key=lambda c: (c["source"]["item"].split(":")[0], int(c["source"]["item"].split(":")[1]), c["category"])
    )


def _card(splits: dict[str, list[dict]], seed: int, gsm8k: str | Path, tqa: str | Path, out: Path) -> dict:
    tqa = Path(tqa)
    return {
        "seed": seed,
        "sources": {
            "gsm8k": {"path": str(gsm8k), "sha256": file_sha256(gsm8k)},
            **{
                f"truthfulqa/{n}": {"path": str(tqa / n), "sha256": file_sha256(tqa / n)}
                for n in ("TruthfulQA.csv", "finetune_truth.jsonl", "finetune_info.jsonl")
            },
        },
        "outputs": {f"{n}.jsonl": {"sha256": file_sha256(out / f"{n}.jsonl"), "cases": len(splits[n])} for n in splits},
        "counts": {n: dict(sorted(Counter(c["category"] for c in cs).items())) for n, cs in splits.items()},
        "by_source": {n: dict(sorted(Counter(c["source"]["dataset"] for c in cs).items())) for n, cs in splits.items()},
    }
