"""Readers for the two public sources: GSM8K model solutions and TruthfulQA human-labelled model answers."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

import orjson

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
    index: int  # 0-based line number in the source file: the item id
    question: str
    truth: float
    solutions: tuple[Solution, ...]


def read_gsm8k(path: str | Path) -> list[GsmItem]:
    """Problems with a readable ground truth and four solutions, in file order."""
    items = []
    for index, line in enumerate(Path(path).read_bytes().splitlines()):
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
        items.append(GsmItem(index, row["question"], truth, solutions))
    return items


@dataclass
class TqaItem:
    index: int  # 0-based row number in TruthfulQA.csv: the item id
    question: str
    best: str
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
    """Questions with their reference answers and the real model answers, split into correct and wrong.

    A correct answer is rated truthful and informative; a wrong one informative and not truthful; the rest
    (uninformative answers such as "I have no comment") are dropped.
    """
    directory = Path(directory)
    with open(directory / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    items = {
        r["Question"]: TqaItem(
            i,
            r["Question"],
            r["Best Answer"].strip(),
            [s.strip() for s in r["Incorrect Answers"].split(";") if s.strip()],
        )
        for i, r in enumerate(rows)
    }
    truthful = _labels(directory / "finetune_truth.jsonl", "True")
    informative = _labels(directory / "finetune_info.jsonl", "Helpful")
    for (question, answer), is_true in sorted(truthful.items()):
        item = items.get(question)
        if item is None or not informative.get((question, answer)) or not answer.strip():
            continue
        (item.correct if is_true else item.wrong).append(answer.strip())
    return [items[q] for q in sorted(items, key=lambda q: items[q].index)]
