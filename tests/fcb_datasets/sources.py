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

import orjson
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


def _bucket(key: str, parts: int) -> int:
    return hashlib.sha256(key.encode()).digest()[0] % parts


def norm_gsm(question: str) -> str:
    return " ".join(question.lower().split())


def norm_math(problem: str) -> str:
    return re.sub(r"[\s$~]", "", problem.lower())


def subset(out: Path, keep: Callable[[str], bool], src: Path | None = None) -> Path:
    """A copy of every source with only the questions whose identity ``keep`` accepts, each kept line as the source
    wrote it. Identities: a GSM8K question's normalised text (the same in gsm8k/ and zeroeval/gsm/), a MATH problem's
    (the same in dylan/ and zeroeval/math-l5/), MMLU-Pro's question id, a number comparison's id, a TruthfulQA
    question. ``src``: a copy made by this function to take a part of (read faster than the whole), or
    ../shared/data."""
    src = src or shared()
    gsm = out / "gsm8k" / "example_model_solutions.jsonl"
    gsm.parent.mkdir(parents=True)
    lines = (src / "gsm8k" / "example_model_solutions.jsonl").read_bytes().splitlines(keepends=True)
    gsm.write_bytes(b"".join(line for line in lines if keep("gsm:" + norm_gsm(orjson.loads(line)["question"]))))
    _truthfulqa(src / "truthfulqa", out / "truthfulqa", keep)
    for name in ("math_cot.jsonl.gz", "math_complex.jsonl.gz"):
        _filter_gz(src / "dylan" / name, out / "dylan" / name, lambda r: keep("math:" + norm_math(r["problem"])))
    for path in sorted((src / "mmlu-pro" / "outputs").glob("*.jsonl.gz")):
        _filter_gz(path, out / "mmlu-pro" / "outputs" / path.name, lambda r: keep(f"mmlu:{r['question_id']}"))
    shutil.copy(src / "mmlu-pro" / "manifest.json", out / "mmlu-pro" / "manifest.json")
    for task, field, ident in (
        ("gsm", "question", "gsm:"),
        ("math-l5", "problem", "math:"),
        ("numersense-v2", None, "num:"),
    ):
        for path in sorted((src / "zeroeval" / task).glob("*.jsonl.gz")):
            _filter_gz(path, out / "zeroeval" / task / path.name,
                       lambda r, f=field, i=ident: keep(_zeroeval_key(r, f, i)))  # fmt: skip
    return out


def _filter_gz(path: Path, out: Path, keep: Callable[[dict], bool]) -> None:
    """The lines of a gzipped JSON-lines file whose record ``keep`` accepts, as they were, gzipped into ``out``."""
    with gzip.open(path) as f:
        kept = [line for line in f if keep(orjson.loads(line))]
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wb", compresslevel=1) as f:  # read once by one build: speed over size
        f.writelines(kept)


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
