"""The public sources in ../shared/data, and smaller copies of them in the same formats for quick builds.

A test that needs the data calls `shared()`: it skips with the reason when the data is absent, and fails when the
environment variable ``CI`` is set (CI always has it). `subset` writes a copy of every source holding only some of
its questions (the same questions for every model), in the sources' own file layout, so that a build from it runs
the same code on questions picked by the test.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from conftest import (
    ROOT,
    once,  # noqa: F401 - imported from here by the data set tests
    shared_file,
)

SHARED = ROOT.parent / "shared" / "data"
SOURCES = ("gsm8k", "truthfulqa", "dylan", "mmlu-pro", "zeroeval")


def shared() -> Path:
    """../shared/data, or a skip (a failure under CI) naming what is missing."""
    for source in SOURCES:
        shared_file("data", source)  # a skip naming it when absent; a failure when CI is set
    return SHARED


def build_args(root: Path) -> list[str]:
    """fcb build-dataset options naming every source under ``root`` (laid out as ../shared/data is)."""
    return [
        "--gsm8k", str(root / "gsm8k" / "example_model_solutions.jsonl"), "--truthfulqa", str(root / "truthfulqa"),
        "--dylan", str(root / "dylan"), "--mmlu-pro", str(root / "mmlu-pro"), "--zeroeval", str(root / "zeroeval"),
    ]  # fmt: skip


def gz_rows(path: Path) -> list[dict]:
    with gzip.open(path) as f:
        return [json.loads(line) for line in f]


def _write_gz(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)


def _bucket(key: str, parts: int) -> int:
    return hashlib.sha256(key.encode()).digest()[0] % parts


def norm_gsm(question: str) -> str:
    return " ".join(question.lower().split())


def norm_math(problem: str) -> str:
    return re.sub(r"[\s$~]", "", problem.lower())


def subset(out: Path, keep: Callable[[str], bool]) -> Path:
    """A copy of every source with only the questions whose identity ``keep`` accepts. Identities: a GSM8K question's
    normalised text (the same in gsm8k/ and zeroeval/gsm/), a MATH problem's (the same in dylan/ and
    zeroeval/math-l5/), MMLU-Pro's question id, a number comparison's id, a TruthfulQA question."""
    src = shared()
    rows = [json.loads(line) for line in (src / "gsm8k" / "example_model_solutions.jsonl").read_text().splitlines()]
    (out / "gsm8k").mkdir(parents=True)
    (out / "gsm8k" / "example_model_solutions.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows if keep("gsm:" + norm_gsm(r["question"])))
    )
    _truthfulqa(src / "truthfulqa", out / "truthfulqa", keep)
    for name in ("math_cot.jsonl.gz", "math_complex.jsonl.gz"):
        _write_gz(
            out / "dylan" / name, [r for r in gz_rows(src / "dylan" / name) if keep("math:" + norm_math(r["problem"]))]
        )
    for path in sorted((src / "mmlu-pro" / "outputs").glob("*.jsonl.gz")):
        rows = [r for r in gz_rows(path) if keep(f"mmlu:{r['question_id']}")]
        _write_gz(out / "mmlu-pro" / "outputs" / path.name, rows)
    shutil.copy(src / "mmlu-pro" / "manifest.json", out / "mmlu-pro" / "manifest.json")
    for task, field, ident in (
        ("gsm", "question", "gsm:"),
        ("math-l5", "problem", "math:"),
        ("numersense-v2", None, "num:"),
    ):
        for path in sorted((src / "zeroeval" / task).glob("*.jsonl.gz")):
            rows = [r for r in gz_rows(path) if keep(_zeroeval_key(r, field, ident))]
            _write_gz(out / "zeroeval" / task / path.name, rows)
    return out


def _zeroeval_key(row: dict, field: str | None, ident: str) -> str:
    if field is None:
        return ident + str(row["id"])
    return ident + (norm_gsm(row[field]) if ident == "gsm:" else norm_math(row[field]))


def _truthfulqa(src: Path, out: Path, keep: Callable[[str], bool]) -> None:
    out.mkdir(parents=True)
    with open(src / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    q = header.index("Question")
    with open(out / "TruthfulQA.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([header, *(r for r in rows if keep("tqa:" + r[q]))])
    for name in ("finetune_truth.jsonl", "finetune_info.jsonl"):
        (out / name).symlink_to(src / name)  # answers of questions left out are never read


def part(n: int, parts: int, share: int = 1) -> Callable[[str], bool]:
    """Questions in buckets [n, n + share) of ``parts`` by a hash of their identity."""
    return lambda key: (_bucket(key, parts) - n) % parts < share
