"""ZeroEval: 40-odd models answering GSM8K, MATH level 5 and number comparisons (``../shared/data/zeroeval``), as
panels.

Reader: one gzipped JSON-lines file per model and task (``<task>/<model>.jsonl.gz``), records as upstream. A reply's
value is its JSON ``answer`` field (read leniently: many replies are not valid JSON, `final_answer.reply_answer`),
compared with the gold answer by math-verify. A reply with no readable ``answer`` is unreadable.

Cases: every question asked of every panel of its task (`PANELS`, fixed here, listed in the card), its category what
the panel's answers show (`panels.panel_category`), ``origin_natural``; the answer a detector sees is the reply as
the model wrote it. Each task is its own source (its own data set, sizes and panels).

GSM8K questions whose gold answer the three strongest models (`REFERENCE`, in no panel) do not confirm, two of three
at least, are left out for every panel alike (a few GSM8K gold answers are wrong). MATH level 5 answers are whole
numbers checked by the source, and a number comparison's answer is arithmetic: those need no such check. Items:
a GSM8K question is ``gsm8k:<key>`` (the key `gsm8k.item_key` gives the same question in ``../gsm8k``), a MATH
problem ``math:<problem id>`` (DyLAN's ``problem_id``, so that a problem debated there is the same item), a
comparison ``numersense:<upstream id>``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fcb_datasets.realdata import errata
from fcb_datasets.realdata.cases import NATURAL, Candidate, Source, answer, make_case
from fcb_datasets.realdata.grading import Gold, one_of_several
from fcb_datasets.realdata.models import label_of
from fcb_datasets.realdata.panels import Panel, Reading, panel_category, too_unreadable
from fcb_datasets.realdata.sourcefile import json_records
from fcb_datasets.realdata.splits import gsm8k_key, math_key
from harness.errors import SourceDataError
from harness.final_answer import reply_answer

_ZEROEVAL = (
    "Lin (2024), ZeroEval: A Unified Framework for Evaluating Language Models",
    "https://github.com/WildEval/ZeroEval",
)
SOURCES = {
    "gsm": Source("zeroeval_gsm", "ZeroEval GSM8K answers", "Apache-2.0",
                  _ZEROEVAL[0] + "; questions: Cobbe et al. (2021), arXiv:2110.14168", _ZEROEVAL[1]),
    "math-l5": Source("zeroeval_math", "ZeroEval MATH level 5 answers", "Apache-2.0",
                      _ZEROEVAL[0] + "; problems: Hendrycks et al. (2021), Measuring Mathematical Problem Solving "
                      "With the MATH Dataset", _ZEROEVAL[1]),
    "numersense-v2": Source("zeroeval_numbers", "ZeroEval number comparison answers", "Apache-2.0",
                            _ZEROEVAL[0] + "; questions: numersense-v2, ZeroEval's own", _ZEROEVAL[1]),
}  # fmt: skip
TASKS = tuple(SOURCES)
REFERENCE = {"gsm": ("claude-3-5-sonnet-20241022", "gpt-4o-2024-08-06", "Llama-3.1-405B-Inst@sambanova")}
PANELS: dict[str, tuple[Panel, ...]] = {
    "gsm": (
        Panel("gsm-3", ("command-r", "gemma-2-2b-it", "Mixtral-8x7B-Instruct-v0.1")),
        Panel("gsm-4", ("reka-flash-20240226", "Yi-1.5-9B-Chat", "Meta-Llama-3-8B-Instruct", "Qwen2-7B-Instruct")),
        Panel("gsm-5", ("Phi-3.5-mini-instruct", "gpt-3.5-turbo-0125", "command-r-plus", "Yi-1.5-34B-Chat",
                        "gemma-2-9b-it")),
        Panel("gsm-6", ("reka-core-20240501", "yi-large", "Mistral-Nemo-Instruct-2407",
                        "Meta-Llama-3.1-8B-Instruct", "Athene-70B", "claude-3-haiku-20240307")),
    ),
    "math-l5": (
        Panel("math-3", ("Qwen2.5-72B-Instruct", "claude-3-5-haiku-20241022", "Meta-Llama-3.1-8B-Instruct")),
        Panel("math-4", ("claude-3-5-sonnet-20240620", "gemini-1.5-flash", "Qwen2-7B-Instruct", "gpt-3.5-turbo-0125")),
        Panel("math-5", ("gpt-4o-2024-05-13", "Mistral-Large-2", "Meta-Llama-3-70B-Instruct", "gemma-2-9b-it",
                         "claude-3-haiku-20240307")),
        Panel("math-6", ("chatgpt-4o-latest-24-09-07", "deepseek-v2.5-0908", "Qwen2-72B-Instruct", "gemma-2-27b-it",
                         "Yi-1.5-34B-Chat", "Meta-Llama-3-8B-Instruct")),
    ),
    "numersense-v2": (
        Panel("numbers-4a", ("gpt-4o-2024-05-13", "gemini-1.5-pro", "claude-3-5-sonnet-20240620",
                             "Meta-Llama-3-8B-Instruct")),
        Panel("numbers-4b", ("deepseek-v2-chat-0628", "gemini-1.5-flash", "Meta-Llama-3-70B-Instruct",
                             "gpt-3.5-turbo-0125")),
    ),
}  # fmt: skip
"""Panels of three to six models, dealt once by accuracy so that each spans strong and weak models. They are small
because these models are strong: a wrong answer held by 60% of a larger panel of them is rare."""
QUESTION_FIELD = {"gsm": "question", "math-l5": "problem", "numersense-v2": "question"}


@dataclass(frozen=True, slots=True)
class Record:
    """One model's graded reply to one question, in plain values (it crosses from a worker process)."""

    text: str
    key: str | None
    correct: bool
    gold: str
    question: str
    engine: str


def files(directory: str | Path, task: str) -> dict[str, Path]:
    """Model file stem -> path for one task (the greedy runs: ``numersense-v2/sampling`` and ``greedy@no_cot`` are
    other runs of models already there)."""
    out = {p.name.removesuffix(".jsonl.gz"): p for p in sorted((Path(directory) / task).glob("*.jsonl.gz"))}
    if not out:
        raise SourceDataError(f"{directory}: not a ZeroEval results folder (no {task}/*.jsonl.gz)")
    return out


def gold_of(task: str, row: dict[str, Any]) -> str:
    text = str(row["answer"]).strip()
    return text.removeprefix("#").strip() if task == "gsm" else text


def grade_file(task: str, path: Path) -> dict[str, Record]:
    """One model's replies to one task: question id -> graded reply. Runs in a worker process."""
    out: dict[str, Record] = {}
    golds: dict[str, Gold] = {}
    for row in json_records(path, "a ZeroEval", gz=True):
        output = row.need("output", list)
        text = (output or [""])[0] or ""
        if not isinstance(text, str):
            raise row.error("output[0]", "a string expected")
        row.need("answer", (str, int, float))
        qid = str(row.need("id", (str, int)))
        gold = errata.gold(item_of(task, qid, row.text(QUESTION_FIELD[task])), gold_of(task, row.row))
        grader = golds.setdefault(gold, Gold(gold, units=task == "gsm"))
        found = reply_answer(text)
        value, correct = grader.grade((found, "json") if found else None)
        out[qid] = Record(text.strip(), value.key if value else None, correct, gold, row.text(QUESTION_FIELD[task]),
                          str(row.record("configs").need("engine", str)))  # fmt: skip
    return out


def item_of(task: str, qid: str, question: str) -> str:
    if task == "gsm":
        return f"gsm8k:{gsm8k_key(question)}"
    if task == "math-l5":
        return f"math:{math_key(question)}"
    return f"numersense:{qid}"


def usable(task: str, qid: str, graded: dict[str, dict[str, Record]]) -> bool:
    """The question can be asked: its gold answer reads as a value and (GSM8K) the reference models confirm it."""
    if task == "math-l5" and "_" in next(iter(graded.values()))[qid].gold:
        return False  # an answer in another base ("-221_3"): no verifier reads it as the source means it
    if one_of_several(next(iter(graded.values()))[qid].question):
        return False
    refs = [graded[m][qid] for m in REFERENCE.get(task, ()) if qid in graded.get(m, {})]
    return not REFERENCE.get(task) or sum(r.correct for r in refs) >= 2


def cases(task: str, graded: dict[str, dict[str, Record]], seed: int) -> Iterator[tuple[str, str, Candidate]]:
    """(item, question, candidate) for every question x panel of a task that gives one."""
    missing = [m for p in PANELS[task] for m in p.models if m not in graded]
    if missing:
        raise SourceDataError(f"ZeroEval {task}: no output file for panel model(s) {', '.join(missing)}")
    ids = sorted({qid for p in PANELS[task] for m in p.models for qid in graded[m]})
    for qid in ids:
        holders = [graded[m][qid] for p in PANELS[task] for m in p.models if qid in graded[m]]
        if not usable(task, qid, {m: graded[m] for m in graded if qid in graded[m]}):
            continue
        item = item_of(task, qid, holders[0].question)
        for panel in PANELS[task]:
            records = [graded[m].get(qid) for m in panel.models]
            if any(r is None for r in records):
                continue
            candidate = _panel_case(task, qid, item, panel, [r for r in records if r], seed)
            if candidate is not None:
                yield item, holders[0].question, candidate


def _panel_case(task: str, qid: str, item: str, panel: Panel, records: list[Record], seed: int) -> Candidate | None:
    readings = [Reading(m, r.text, r.key, r.correct) for m, r in zip(panel.models, records, strict=True)]
    if too_unreadable(readings) or any(not r.text for r in readings) or len({r.gold for r in records}) != 1:
        return None
    category = panel_category(readings, numeric=True)
    if category is None:
        return None
    answers = [answer(r.text, r.correct, label_of(r.model)) for r in readings]
    how = f"The replies of panel {panel.name} ({panel.size} models, fixed in advance) as the source gives them."
    rng = random.Random(f"{seed}:zeroeval:{task}:{qid}:{panel.name}")
    return make_case(SOURCES[task], category, records[0].question, answers, records[0].gold, item, how, NATURAL,
                     panel.name, rng)  # fmt: skip
