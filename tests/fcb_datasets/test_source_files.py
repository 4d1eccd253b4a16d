"""`fcb build-dataset` on malformed sources: every one is exit 2 with a message naming the file, the line and the
field, never a traceback, never a data set built from a misread file; only regular files are read (a device or a FIFO
is refused at once, never read into memory or waited on). Each source here is written by the test, small, in the
layout of ../shared/data (no shared data is copied)."""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
HEADER = "Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source\n"
ROW = "Adversarial,Misconceptions,Where is the sun?,In the sky,In the sky; Up,Under the sea,https://example.org\n"
PROMPT = "Q: Where is the sun?\nA: In the sky\nTrue:"


def gsm8k_row(**changes: object) -> dict:
    row: dict = {
        "question": "Ann has 2 apples and buys 3 more. How many apples does she have?",
        "ground_truth": "2 + 3 = <<2+3=5>>5\nA: 5",
        **{k: {"is_correct": True, "solution": "2 + 3 = 5\nA: 5"} for k in KEYS},
    }
    row.update(changes)
    return row


def _jsonl(path: Path, rows: list, gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows).encode()
    path.write_bytes(gzip.compress(text) if gz else text)
    return path


def _truthfulqa(root: Path, csv_text: str, truth: list | None = None) -> list[str]:
    folder = root / "truthfulqa"
    folder.mkdir()
    (folder / "TruthfulQA.csv").write_text(csv_text)
    _jsonl(folder / "finetune_truth.jsonl", truth or [{"prompt": PROMPT, "completion": " yes"}])
    _jsonl(folder / "finetune_info.jsonl", [{"prompt": PROMPT.replace("True:", "Helpful:"), "completion": " yes"}])
    return ["--truthfulqa", str(folder)]


def _mmlu(root: Path, data: bytes) -> list[str]:
    (root / "mmlu-pro" / "outputs").mkdir(parents=True)
    (root / "mmlu-pro" / "outputs" / "Yi-6B.jsonl.gz").write_bytes(data)
    return ["--mmlu-pro", str(root / "mmlu-pro")]


def _dylan(root: Path, rows: list) -> list[str]:
    _jsonl(root / "dylan" / "math_cot.jsonl.gz", rows, gz=True)
    return ["--dylan", str(root / "dylan")]


def _zeroeval(root: Path, rows: list) -> list[str]:
    for task in ("gsm", "math-l5", "numersense-v2"):
        _jsonl(root / "zeroeval" / task / "yi-large.jsonl.gz", rows, gz=True)
    return ["--zeroeval", str(root / "zeroeval")]


MMLU = {"question_id": 1, "question": "2 + 3?", "options": ["4", "5"], "answer": "B", "pred": "B",
        "generated_text": "The answer is (B)."}  # fmt: skip
DEBATE = {"problem_id": "abc", "problem": "2 + 3?", "gt": "5", "prob_level": 1,
          "responses": [[{"role": "system", "content": "Solve."}, {"role": "user", "content": "2 + 3?"},
                         {"role": "assistant", "content": "The answer is 5."}]]}  # fmt: skip
ZEROEVAL = {"id": "q1", "question": "2 + 3?", "answer": "5", "output": ['{"answer": "5"}'], "configs": {}}

# name -> (writes the source under tmp_path, returns its options; what stderr must hold, {root} for tmp_path)
MALFORMED: dict[str, tuple[Callable[[Path], list[str]], str]] = {
    "gsm8k ground truth a number": (
        lambda r: ["--gsm8k", str(_jsonl(r / "g.jsonl", [gsm8k_row(), gsm8k_row(ground_truth=5)]))],
        "{root}/g.jsonl:2: not a GSM8K solutions record: ground_truth: a string expected, got an integer",
    ),
    "gsm8k is_correct a string": (
        lambda r: [
            "--gsm8k",
            str(_jsonl(r / "g.jsonl", [gsm8k_row(**{KEYS[2]: {"is_correct": "no", "solution": "5"}})])),
        ],
        "{root}/g.jsonl:1: not a GSM8K solutions record: 175b_finetuning.is_correct: true or false expected",
    ),
    "truthfulqa row with fields missing": (
        lambda r: _truthfulqa(r, HEADER + ROW + "Adversarial,Misconceptions,Why?\n"),
        "{root}/truthfulqa/TruthfulQA.csv:3: 3 field(s) where the header has 7",
    ),
    "truthfulqa quote left open to the end": (
        lambda r: _truthfulqa(r, HEADER + ROW.replace(",In the sky,", ',"In the sky,', 1) + ROW.replace("sun", "moon")),
        "{root}/truthfulqa/TruthfulQA.csv:3: broken CSV quoting: unexpected end of data",
    ),
    "truthfulqa quote left open to a later quote": (
        lambda r: _truthfulqa(r, HEADER + 'A,M,Why?,"Because,Yes,No,s\nA,M,How?,So",Yes,No,s\n' + ROW),
        "{root}/truthfulqa/TruthfulQA.csv:3: Best Answer: a line break inside a field",
    ),
    "truthfulqa column missing": (
        lambda r: _truthfulqa(r, HEADER.replace("Best Answer", "Best") + ROW),
        "{root}/truthfulqa/TruthfulQA.csv:1: Best Answer: column missing from the header",
    ),
    "truthfulqa prompt a number": (
        lambda r: _truthfulqa(r, HEADER + ROW, [{"prompt": PROMPT, "completion": " yes"}, {"prompt": 5}]),
        "{root}/truthfulqa/finetune_truth.jsonl:2: not a TruthfulQA rating record: prompt: a string expected",
    ),
    "mmlu-pro not gzip": (
        lambda r: _mmlu(r, json.dumps(MMLU).encode()),
        "{root}/mmlu-pro/outputs/Yi-6B.jsonl.gz:1: not gzip-compressed JSON lines, or cut short",
    ),
    "mmlu-pro gzip cut short": (
        lambda r: _mmlu(r, gzip.compress((json.dumps(MMLU) + "\n").encode() * 400)[:-4]),
        "{root}/mmlu-pro/outputs/Yi-6B.jsonl.gz:401: not gzip-compressed JSON lines, or cut short",
    ),
    "mmlu-pro options not strings": (
        lambda r: _mmlu(r, gzip.compress((json.dumps(MMLU) + "\n" + json.dumps({**MMLU, "options": [4, 5]})).encode())),
        "{root}/mmlu-pro/outputs/Yi-6B.jsonl.gz:2: not an MMLU-Pro record: options: a list of strings expected",
    ),
    "dylan gold a number": (
        lambda r: _dylan(r, [DEBATE, {**DEBATE, "gt": 5}]),
        "{root}/dylan/math_cot.jsonl.gz:2: not a DyLAN debate record: gt: a string expected, got an integer",
    ),
    "dylan message without content": (
        lambda r: _dylan(r, [{**DEBATE, "responses": [[{"role": "system", "content": "x"}, {"role": "user"}]]}]),
        "{root}/dylan/math_cot.jsonl.gz:1: not a DyLAN debate record: responses[0][1].content: missing",
    ),
    "zeroeval engine missing": (
        lambda r: _zeroeval(r, [ZEROEVAL]),
        "{root}/zeroeval/gsm/yi-large.jsonl.gz:1: not a ZeroEval record: configs.engine: missing",
    ),
    "gsm8k a directory": (
        lambda r: ["--gsm8k", str(r)],
        "{root}: not a regular file",
    ),
}


def _build(args: list[str], out: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    """fcb build-dataset under a 1.5 GB address-space limit (a source read whole from /dev/zero ends in
    MemoryError) and a timeout (a FIFO nobody writes would be waited on for ever)."""
    return subprocess.run(
        [sys.executable, "-m", "harness", "build-dataset", *args, "--out", str(out), "--workers", "1"],
        capture_output=True, text=True, timeout=timeout, cwd=ROOT,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20)),
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_source_is_exit_2_naming_file_line_and_field(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # four different tracebacks (exit 3), messages without the line or the field, and a TruthfulQA.csv with a quote
    # left open read as a different table, exit 0
    # in this process, through the CLI's own entry point: the command's code and messages as a user meets them,
    # without an interpreter start per source (the two tests below run a real subprocess, under limits)
    from harness.cli import main

    root = tmp_path / "src"
    root.mkdir()
    write, said = MALFORMED[name]
    code = main(["build-dataset", *write(root), "--out", str(tmp_path / "out"), "--workers", "1"])
    stderr = capsys.readouterr().err
    assert code == 2, (code, stderr)
    assert "Traceback" not in stderr and said.format(root=root) in stderr, stderr
    assert not (tmp_path / "out" / "dev.jsonl").exists()


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo"])
def test_only_a_regular_file_is_read_as_a_source(kind: str, tmp_path: Path) -> None:
    # `--gsm8k /dev/zero` exhausted memory; a FIFO hung (and would have been read twice)
    path = kind
    if kind == "fifo":
        path = str(tmp_path / "g.fifo")
        os.mkfifo(path)
    proc = _build(["--gsm8k", path], tmp_path / "out", timeout=20)
    assert proc.returncode == 2 and f"{path}: not a regular file" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
