"""MMLU-Pro: 34 models' full responses to the same ten-option questions (``../shared/data/mmlu-pro``), as panels.

Reader: one gzipped JSON-lines file per model (``outputs/<model>.jsonl.gz``), records as upstream. A response's
letter is the one it states with the source's own anchors ("The answer is (X)", else "Answer: X"), checked against
upstream's ``pred`` (`final_answer.mmlu_letter`); a response stating two different letters, or none, is unreadable.

Cases: every question asked of every panel in `PANELS` (fixed here, listed in the card), its category what the
panel's letters show (`panels.panel_category`: a category that an unreadable answer naming an option could change
gives no case), ``origin_natural``. A panel's letters are compared only where every
member saw the same revision of the question (question, options and gold letter identical), as the source asks.

Questions whose gold letter the three strongest models (`REFERENCE`, in no panel) do not confirm, two of three at
least, are left out for every panel alike: a wrong majority of a panel is then a real shared error, not a wrong
gold letter (MMLU-Pro has some). The check looks at the question only, never at a panel's answers.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from fcb_datasets.realdata.cases import NATURAL, Candidate, Source, answer, make_case
from fcb_datasets.realdata.models import label_of
from fcb_datasets.realdata.panels import Panel, Reading, panel_category, too_unreadable
from fcb_datasets.realdata.sourcefile import Record as SourceRecord
from fcb_datasets.realdata.sourcefile import json_records
from harness.errors import SourceDataError
from harness.final_answer import mmlu_letter, names_no_option

SOURCE = Source(
    "mmlu_pro",
    "MMLU-Pro model outputs",
    "Apache-2.0",
    "Wang et al. (2024), MMLU-Pro: A More Robust and Challenging Multi-Task Language Understanding Benchmark, "
    "NeurIPS 2024 Datasets and Benchmarks, arXiv:2406.01574",
    "https://github.com/TIGER-AI-Lab/MMLU-Pro",
)
REFERENCE = ("gemini-3.1-pro-preview", "gpt-4o-2024-05-13", "gemini-1.5-pro-002")
LEFT_OUT = {
    "Meta-Llama-3-70B": "a base model that runs on past its answer into new questions of its own",
    "Meta-Llama-3-8B": "a base model that runs on past its answer into new questions of its own",
    "DeepSeek-Coder-V2": "no output for most engineering and chemistry questions",
}
"""Models in no panel, with why (the `REFERENCE` models check gold letters instead)."""
PANELS = (
    Panel("mmlu-3", ("Qwen1.5-110B", "Meta-Llama-3-8B-Instruct", "Mistral-7B-Instruct-v0.2")),
    Panel("mmlu-4", ("Meta-Llama-3_1-70B", "mathstral-7B", "Meta-Llama-3_1-8B", "Yi-6b-Chat")),
    Panel("mmlu-5", ("deepseek-chat-v2-2024-05", "Mixtral-8x7B-Instruct-v0.1", "Qwen1.5-72B-Chat", "Mistral-7B-v0.2-hf",
                     "Mistral-7B-Instruct-v0.1")),
    Panel("mmlu-7", ("Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-8B-Instruct", "Mixtral-8x7B-v0.1", "Llama-2-70b-hf",
                     "gemma-7b", "Qwen1.5-7B-Chat", "Llama-2-13b-hf")),
    Panel("mmlu-9", ("gemini-1.5-flash-002", "jamba-1.5-large", "Yi-34B", "Phi-3-mini-4k-instruct",
                     "c4ai-command-r-v01",
                     "Meta-Llama-3-8B-Instruct-quantized", "Mistral-7B-v0.1", "Yi-6B", "Llama-2-7b-hf")),
)  # fmt: skip
"""Dealt once from the 28 panel models, strongest first, each to the panel furthest from full, so that every panel
spans strong and weak models; the two Llama-3-8B-Instruct runs (one model) sit in different panels."""
TEXT_FIELDS = ("generated_text", "model_outputs", "response")
LETTERS = "ABCDEFGHIJ"


@dataclass(frozen=True, slots=True)
class Record:
    """One model's graded answer to one question, in plain values (it crosses from a worker process)."""

    text: str
    letter: str | None
    how: str  # how the letter was read (harness.final_answer.mmlu_letter)
    gold: str
    revision: str  # the question's wording, options and gold letter, joined: answers compare only within one
    subject: str = ""  # the source's ``category`` (law, physics, ...): how hard a question is goes with it


def files(directory: str | Path) -> dict[str, Path]:
    """Model file stem -> path, for every model file in the folder."""
    out = {p.name.removesuffix(".jsonl.gz"): p for p in sorted((Path(directory) / "outputs").glob("*.jsonl.gz"))}
    if not out:
        raise SourceDataError(f"{directory}: not an MMLU-Pro outputs folder (no outputs/*.jsonl.gz)")
    return out


def grade_file(path: Path) -> dict[int, Record]:
    """One model's file: question id -> its graded answer. Runs in a worker process."""
    out: dict[int, Record] = {}
    for row in json_records(path, "an MMLU-Pro", gz=True):
        field = next((k for k in TEXT_FIELDS if k in row), None)
        if field is None:
            raise row.error(TEXT_FIELDS[0], f"missing (and no {' or '.join(TEXT_FIELDS[1:])})")
        text = row.get(field, (str, type(None))) or ""
        letter, how = mmlu_letter(text, row.get("pred", (str, type(None))))
        options = row.need("options", list)
        if not all(isinstance(o, str) for o in options):
            raise row.error("options", "a list of strings expected")
        question, gold = row.text("question"), row.text("answer")
        revision = orjson.dumps([question, options, gold]).decode()
        out[_question_id(row)] = Record(
            text.strip(), letter.text if letter else None, how, gold, revision,
            str(row.get("category", (str, type(None))) or ""),
        )  # fmt: skip
    return out


def _question_id(row: SourceRecord) -> int:
    qid = row.need("question_id", (int, str))
    try:
        return int(qid)
    except ValueError as exc:
        raise row.error("question_id", f"an integer expected, got {qid!r}") from exc


def question_text(question: str, options: list[str]) -> str:
    """The question as the source's prompt lays it out: the question, then "Options:" and one lettered line each."""
    lines = [f"{LETTERS[i]}. {option}" for i, option in enumerate(options)]
    return f"{question}\n\nOptions:\n" + "\n".join(lines)


def confirmed(qid: int, graded: dict[str, dict[int, Record]]) -> bool:
    """The reference models confirm the gold letter: at least two of the three state it."""
    refs = [graded[m][qid] for m in REFERENCE if m in graded and qid in graded[m]]
    return sum(r.letter == r.gold for r in refs) >= 2


def cases(graded: dict[str, dict[int, Record]], seed: int) -> Iterator[tuple[str, str, Candidate]]:
    """(item, question text, candidate) for every question x panel that gives one."""
    missing = [m for p in PANELS for m in p.models if m not in graded]
    if missing:
        raise SourceDataError(f"MMLU-Pro: no output file for panel model(s) {', '.join(missing)}")
    first = graded[PANELS[0].models[0]]
    kept = _kept_ids(graded)
    for qid in sorted(first):
        if not confirmed(qid, graded) or qid not in kept:
            continue
        item = f"mmlu-pro:{qid}"
        for panel in PANELS:
            records = [graded[m].get(qid) for m in panel.models]
            if any(r is None for r in records) or len({r.revision for r in records if r}) != 1:
                continue
            # the question as this panel saw it: revisions of one question order its options differently
            shown = shown_question(records[0].revision) if records[0] else ("", "")
            candidate = _panel_case(qid, item, panel, [r for r in records if r], shown, seed)
            if candidate is not None:
                yield item, shown[0], candidate


def _kept_ids(graded: dict[str, dict[int, Record]]) -> set[int]:
    """The question ids that are items: one id per repeated question text (MMLU-Pro repeats a few questions under
    another id, and a model's copy may differ from the others' by a space)."""
    seen: dict[str, int] = {}
    for model in sorted(graded):
        for qid, record in sorted(graded[model].items()):
            seen.setdefault(" ".join(orjson.loads(record.revision)[0].split()), qid)
    return set(seen.values())


def shown_question(revision: str) -> tuple[str, str]:
    """(question shown, gold shown) of one revision of a question: its options in its own order, its gold letter."""
    question, options, gold = orjson.loads(revision)
    shown_gold = f"({gold}) {options[LETTERS.index(gold)]}" if gold in LETTERS[: len(options)] else gold
    return question_text(question, options), shown_gold


def _panel_case(
    qid: int, item: str, panel: Panel, records: list[Record], texts: tuple[str, str], seed: int
) -> Candidate | None:
    gold = records[0].gold
    readings = [Reading(m, r.text, r.letter, r.letter == gold, r.how == "none-stated" and names_no_option(r.text))
                for m, r in zip(panel.models, records, strict=True)]  # fmt: skip
    if too_unreadable(readings) or any(not r.text for r in readings):
        return None
    category = panel_category(readings, numeric=False)
    if category is None:
        return None
    answers = [answer(r.text, r.correct, label_of(r.model)) for r in readings]
    how = f"The answers of panel {panel.name} ({panel.size} models, fixed in advance) as the source gives them."
    rng = random.Random(f"{seed}:mmlu-pro:{qid}:{panel.name}")
    question, truth = texts
    return make_case(
        SOURCE, category, question, answers, truth, item, how, NATURAL, panel.name, rng, difficulty=records[0].subject
    )
