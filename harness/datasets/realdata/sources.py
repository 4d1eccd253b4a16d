"""Readers for the two public sources: GSM8K model solutions and TruthfulQA human-labelled model answers."""

from __future__ import annotations

import contextlib
import csv
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from harness.errors import SourceDataError

GSM8K_KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
GSM8K_FAMILY = {"6b": "family-a", "175b": "family-b"}  # two model sizes: the source's two model families
_FINAL = re.compile(r"A:\s*(-?[\d,]*\.?\d+)")


def final_number(solution: str) -> float | None:
    """The number after a solution's last ``A:``; commas are thousands separators. None when there is none."""
    found = _FINAL.findall(solution)
    if not found:
        return None
    try:
        return float(found[-1].replace(",", ""))
    except ValueError:
        return None


def item_key(question: str) -> str:
    """A source item's identity: a hash of its question text, whitespace and case normalised.

    It survives any subset or reordering of the source file (a line number does not), so two builds from disjoint
    parts of a source never share a key, and the same question always gets the same one.
    """
    normal = " ".join(question.lower().split())
    return hashlib.sha256(normal.encode()).hexdigest()[:16]


def number_text(value: float) -> str:
    """A number as a plain string: ``18`` rather than ``18.0``."""
    return str(int(value)) if value == int(value) else repr(value)


@dataclass(frozen=True)
class Solution:
    key: str
    family: str
    text: str
    is_correct: bool
    final: float | None


@dataclass(frozen=True)
class GsmItem:
    key: str  # item_key of the question: the item id
    question: str
    truth: float
    solutions: tuple[Solution, ...]


@contextlib.contextmanager
def _source_format(path: str | Path, what: str) -> Iterator[None]:
    """A source file that does not read as its format (bad JSON, a missing key or column) is the user's input, not a
    bug: `SourceDataError` naming the file."""
    try:
        yield
    except (ValueError, KeyError, TypeError) as exc:
        raise SourceDataError(f"{path}: not {what}: {type(exc).__name__}: {exc}") from exc


def read_gsm8k(path: str | Path) -> list[GsmItem]:
    """Problems with a readable ground truth and four solutions, in file order."""
    with _source_format(path, "GSM8K model solutions (JSON lines)"):
        return _read_gsm8k(path)


def _read_gsm8k(path: str | Path) -> list[GsmItem]:
    items = []
    for line in Path(path).read_bytes().splitlines():
        row = orjson.loads(line)
        truth = final_number(row["ground_truth"])
        if truth is None or not all(k in row for k in GSM8K_KEYS):
            continue
        solutions = tuple(
            Solution(
                k,
                GSM8K_FAMILY[k.split("_")[0]],
                row[k]["solution"],
                bool(row[k]["is_correct"]),
                final_number(row[k]["solution"]),
            )
            for k in GSM8K_KEYS
        )
        items.append(GsmItem(item_key(row["question"]), row["question"], truth, solutions))
    return items


@dataclass
class TqaItem:
    key: str  # item_key of the question: the item id
    question: str
    best: str
    correct_refs: list[str]  # the source's reference answers: written by its authors, not by a model
    incorrect_refs: list[str]
    correct: list[str] = field(default_factory=list)  # model answers rated truthful and informative
    wrong: list[str] = field(default_factory=list)  # model answers rated informative and not truthful


def _split_prompt(prompt: str, tag: str) -> tuple[str, str]:
    question, _, rest = prompt.partition("\nA: ")
    answer, _, _ = rest.rpartition(f"\n{tag}:")
    return question.removeprefix("Q: "), answer


def _labels(path: Path, tag: str) -> dict[tuple[str, str], bool]:
    out = {}
    for line in path.read_bytes().splitlines():
        row = orjson.loads(line)
        out[_split_prompt(row["prompt"], tag)] = row["completion"].strip() == "yes"
    return out


def read_truthfulqa(directory: str | Path) -> list[TqaItem]:
    """Questions with their reference answers and the rated answers, split into correct and wrong, in key order.

    A correct answer is rated truthful and informative; a wrong one informative and not truthful; the rest
    (uninformative answers such as "I have no comment") are dropped. Many rated answers are the source's own reference
    answers, written by people (see `normal_text`): the builder labels them as such.
    """
    with _source_format(directory, "a TruthfulQA folder (TruthfulQA.csv, finetune_truth.jsonl, finetune_info.jsonl)"):
        return _read_truthfulqa(Path(directory))


def _read_truthfulqa(directory: Path) -> list[TqaItem]:
    with open(directory / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    items = {
        r["Question"]: TqaItem(
            item_key(r["Question"]),
            r["Question"],
            r["Best Answer"].strip(),
            _refs(r["Best Answer"] + ";" + r["Correct Answers"]),
            _refs(r["Incorrect Answers"]),
        )
        for r in rows
    }
    truthful = _labels(directory / "finetune_truth.jsonl", "True")
    informative = _labels(directory / "finetune_info.jsonl", "Helpful")
    for (question, answer), is_true in sorted(truthful.items()):
        item = items.get(question)
        if item is None or not informative.get((question, answer)) or not answer.strip():
            continue
        (item.correct if is_true else item.wrong).append(answer.strip())
    return [items[q] for q in sorted(items, key=lambda q: items[q].key)]


def _refs(cell: str) -> list[str]:
    return list(dict.fromkeys(s.strip() for s in cell.split(";") if s.strip()))


def normal_text(text: str) -> str:
    """Text compared for identity with a reference answer: case, spacing and a final full stop ignored."""
    return " ".join(text.lower().split()).rstrip(".").strip()
