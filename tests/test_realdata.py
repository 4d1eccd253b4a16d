"""The real-data benchmark built from ../shared/data: reproducible, valid, split by source question, labels that
agree with the raw source records, and no source text in the repository."""

from __future__ import annotations

import json
import random
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from harness.cases import scan
from harness.realdata.sources import final_number

SHARED = ROOT.parent / "shared" / "data"
GSM8K = SHARED / "gsm8k" / "example_model_solutions.jsonl"
TQA = SHARED / "truthfulqa"


def _build(out: Path, seed: int = 0) -> None:
    proc = run_cli(
        "build-dataset",
        "--gsm8k",
        str(GSM8K),
        "--truthfulqa",
        str(TQA),
        "--out",
        str(out),
        "--seed",
        str(seed),
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    # progress: a line as each stage starts, with the time since the build began
    stages = [line for line in proc.stderr.splitlines() if re.match(r"fcb build-dataset: \[\s*\d+\.\d s\] ", line)]
    assert len(stages) == 4 and "reading GSM8K" in stages[0] and "writing the splits" in stages[-1], proc.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("real")
    _build(out)
    return out


def _cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_same_inputs_and_seed_give_byte_identical_outputs(built: Path, tmp_path: Path) -> None:
    _build(tmp_path / "again")
    for name in ("dev.jsonl", "test.jsonl", "card.json"):
        assert (tmp_path / "again" / name).read_bytes() == (built / name).read_bytes()
    card = json.loads((built / "card.json").read_text())
    assert card["seed"] == 0 and card["sources"]["gsm8k"]["sha256"]
    assert card["outputs"]["test.jsonl"]["cases"] == len(_cases(built / "test.jsonl"))


def test_valid_balanced_and_split_by_source_question(built: Path) -> None:
    dev, test = _cases(built / "dev.jsonl"), _cases(built / "test.jsonl")
    for path in (built / "dev.jsonl", built / "test.jsonl"):
        assert scan(path, strict=True).problems == []
    assert len(dev) + len(test) >= 1500
    assert not {c["source"]["item"] for c in dev} & {c["source"]["item"] for c in test}
    assert not {c["id"] for c in dev} & {c["id"] for c in test}
    total = Counter(c["category"] for c in dev + test)
    assert len(total) == 8 and min(total.values()) >= 80
    assert set(Counter(c["category"] for c in dev)) == set(Counter(c["category"] for c in test)) == set(total)
    for case in dev + test:
        src = case["source"]
        assert {"dataset", "license", "citation", "url", "item", "modification"} <= set(src)


def _gsm_rows() -> list[dict]:
    return [json.loads(line) for line in GSM8K.read_text().splitlines()]


def test_gsm8k_labels_agree_with_the_source_records(built: Path) -> None:
    rows = _gsm_rows()
    cases = [c for c in _cases(built / "test.jsonl") if c["source"]["item"].startswith("gsm8k:")]
    for case in random.Random(3).sample(cases, 60):
        row = rows[int(case["source"]["item"].split(":")[1])]
        assert float(case["ground_truth"]) == final_number(row["ground_truth"])
        solutions = {row[k]["solution"]: (row[k]["is_correct"], k) for k in row if isinstance(row[k], dict)}
        for answer in case["answers"]:
            if answer["text"] in solutions:  # a real solution: its flag and family come from the source
                is_correct, key = solutions[answer["text"]]
                assert answer["correct"] == is_correct
                assert answer["metadata"]["model_family"] == ("family-a" if key.startswith("6b") else "family-b")
            else:  # text we wrote around a real answer: only in the constructed categories, and marked as such
                assert case["category"] in ("echo_cascade", "correct_but_unsupported")
                assert answer["metadata"]["saw_other_answers"] is True
                assert "model_family" not in answer["metadata"]
        if case["category"] == "numeric_consensus_error":
            finals = Counter(final_number(a["text"]) for a in case["answers"])
            number, held = finals.most_common(1)[0]
            assert number != float(case["ground_truth"]) and 5 * held >= 3 * len(case["answers"])


def _tqa_labels() -> dict[tuple[str, str], bool]:
    labels = {}
    for line in (TQA / "finetune_truth.jsonl").read_text().splitlines():
        row = json.loads(line)
        question, _, rest = row["prompt"].partition("\nA: ")
        labels[(question.removeprefix("Q: "), rest.rpartition("\nTrue:")[0].strip())] = row["completion"] == " yes"
    return labels


def test_truthfulqa_labels_agree_with_the_human_ratings(built: Path) -> None:
    labels = _tqa_labels()
    cases = [c for c in _cases(built / "test.jsonl") if c["source"]["item"].startswith("truthfulqa:")]
    checked = 0
    for case in random.Random(4).sample(cases, 80):
        question = case["question"].split("\n\n")[-1]  # an anchoring case has a note before the question
        for answer in case["answers"]:
            rated = labels.get((question, answer["text"]))
            if rated is not None:
                assert answer["correct"] == rated
                checked += 1
            else:
                assert answer["metadata"]["saw_other_answers"] is True  # our restatement of a real answer
    assert checked > 150


def test_no_source_text_is_stored_in_the_repository() -> None:
    rng = random.Random(5)
    probes = [r["question"] for r in rng.sample(_gsm_rows(), 40)]
    probes += [q for (q, _a) in rng.sample(sorted(_tqa_labels()), 40)]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    corpus = "\n".join((ROOT / f).read_text(errors="ignore") for f in tracked.splitlines() if (ROOT / f).is_file())
    leaked = [p for p in probes if len(p) > 40 and p in corpus]
    assert leaked == []


def test_learned_baseline_is_never_scored_on_its_training_questions(built: Path, tmp_path: Path) -> None:
    spec = f"builtin:learned?train={built / 'dev.jsonl'}"
    refused = run_cli("eval", str(built / "dev.jsonl"), "-d", spec, "-q", "--results", str(tmp_path))
    assert refused.returncode == 2 and "refusing to evaluate" in refused.stderr
    assert not any(tmp_path.iterdir())  # refused before any run folder was made
    ok = run_cli("eval", str(built / "test.jsonl"), "-d", spec, "-q", "--results", str(tmp_path), "--bootstrap", "0")
    assert ok.returncode == 0, ok.stderr
