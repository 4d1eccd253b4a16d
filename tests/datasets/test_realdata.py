"""The real-data benchmark built from ../shared/data: reproducible, valid, split by source question, labels that
agree with the raw source records, and no source text in the repository."""

from __future__ import annotations

import csv
import hashlib
import json
import random
import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from harness.cases.reader import scan
from harness.datasets.realdata.sources import final_number

# under pytest -n these tests are to share one worker (--dist loadgroup; see the Makefile), so that
# the module-scoped data set is built once, not once on every worker
pytestmark = pytest.mark.xdist_group("test_realdata")

SHARED = ROOT.parent / "shared" / "data"
GSM8K = SHARED / "gsm8k" / "example_model_solutions.jsonl"
TQA = SHARED / "truthfulqa"


def _build(out: Path, seed: int = 0, audit: bool = False) -> None:
    args = ["--gsm8k", str(GSM8K), "--truthfulqa", str(TQA), "--out", str(out), "--seed", str(seed)]
    proc = run_cli("build-dataset", *args, *(["--audit"] if audit else []), timeout=300)
    assert proc.returncode == 0, proc.stderr
    # progress: a line as each stage starts, with the time since the build began
    stages = [line for line in proc.stderr.splitlines() if re.match(r"fcb build-dataset: \[\s*\d+\.\d s\] ", line)]
    assert len(stages) == 4 + audit and "reading GSM8K" in stages[0], proc.stderr
    assert ("auditing" if audit else "writing the splits") in stages[-1], proc.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("real")
    _build(out, audit=True)
    return out


def _cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_same_inputs_and_seed_give_byte_identical_outputs(built: Path, tmp_path: Path) -> None:
    _build(tmp_path / "again")
    for name in ("dev.jsonl", "test.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (built / name).read_bytes()
    again = json.loads((tmp_path / "again" / "card.json").read_text())
    assert again == {k: v for k, v in json.loads((built / "card.json").read_text()).items() if k != "audit"}
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


def _key(question: str) -> str:
    """The item id as the issue defines it, computed here independently: sha256 of the normalised question."""
    return hashlib.sha256(" ".join(question.lower().split()).encode()).hexdigest()[:16]


def _gsm_rows() -> list[dict]:
    return [json.loads(line) for line in GSM8K.read_text().splitlines()]


def _origin(case: dict) -> str:
    (origin,) = [t for t in case["tags"] if t.startswith("origin_")]
    return origin


def _ours(answer: dict) -> bool:
    meta = answer["metadata"]
    return meta["saw_other_answers"] or meta["shared_context"]


def test_gsm8k_labels_agree_with_the_source_records(built: Path) -> None:
    rows = {_key(r["question"]): r for r in _gsm_rows()}
    cases = [c for c in _cases(built / "test.jsonl") if c["source"]["item"].startswith("gsm8k:")]
    for case in random.Random(3).sample(cases, 80):
        row = rows[case["source"]["item"].split(":")[1]]
        assert float(case["ground_truth"]) == final_number(row["ground_truth"])
        solutions: dict[str, set[tuple[bool, str]]] = {}
        for k in row:
            if isinstance(row[k], dict):  # two model sizes sometimes wrote the very same solution
                family = "family-a" if k.startswith("6b") else "family-b"
                solutions.setdefault(row[k]["solution"], set()).add((row[k]["is_correct"], family))
        for answer in case["answers"]:
            if answer["text"] in solutions:  # a real solution: its flag and family come from the source
                assert (answer["correct"], answer["metadata"]["model_family"]) in solutions[answer["text"]]
                assert not _ours(answer)
            else:  # text we wrote: only in constructed cases, and marked as read-after-something
                assert _origin(case) == "origin_constructed"
                assert _ours(answer) and "model_family" not in answer["metadata"]
        if _origin(case) == "origin_natural":  # the source's four solutions as they are
            assert {a["text"] for a in case["answers"]} == set(solutions)
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


def _tqa_questions() -> dict[str, str]:
    with open(TQA / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        return {_key(r["Question"]): r["Question"] for r in csv.DictReader(f)}


NON_ANSWERS = ("no comment", "i don't know", "i do not know", "unknown", "not sure", "question is ambiguous")


def test_truthfulqa_labels_agree_with_the_human_ratings(built: Path) -> None:
    labels, questions = _tqa_labels(), _tqa_questions()
    cases = [c for c in _cases(built / "test.jsonl") if c["source"]["item"].startswith("truthfulqa:")]
    checked = 0
    for case in random.Random(4).sample(cases, 120):
        question = questions[case["source"]["item"].split(":")[1]]
        assert question in case["question"]  # a note may stand around it, never instead of it
        for answer in case["answers"]:
            rated = labels.get((question, answer["text"]))
            if rated is not None and not _ours(answer):
                assert answer["correct"] == rated  # a rating is taken or the answer left out, never flipped
                checked += 1
            else:
                assert _ours(answer) and _origin(case) == "origin_constructed"
                assert rated is None  # an answer we present as written after a note or an echo is never a bare real one
            if answer["correct"]:
                assert not any(answer["text"].lower().strip(" .").endswith(n) for n in NON_ANSWERS), answer["text"]
    assert checked > 200


def test_every_case_says_how_it_was_made(built: Path) -> None:
    for case in _cases(built / "dev.jsonl") + _cases(built / "test.jsonl"):
        origin = _origin(case)
        ours = [a for a in case["answers"] if _ours(a)]
        if origin == "origin_constructed":
            assert (ours and "ours" in case["source"]["modification"]) or "We added" in case["source"]["modification"]
        else:
            assert not ours  # natural and assembled cases hold real answers only
        if case["category"] == "anchoring_injected_premise":
            assert all(a["metadata"]["shared_context"] for a in case["answers"]) and origin == "origin_constructed"


def test_the_number_of_answers_says_nothing_of_the_category(built: Path) -> None:
    """Within a source, every category draws its answer counts from one distribution."""
    cases = _cases(built / "dev.jsonl") + _cases(built / "test.jsonl")
    for source in ("gsm8k", "truthfulqa"):
        shares: dict[str, dict[int, float]] = {}
        for category in {c["category"] for c in cases if c["tags"][0] == source}:
            sizes = Counter(len(c["answers"]) for c in cases if c["tags"][0] == source and c["category"] == category)
            shares[category] = {n: k / sum(sizes.values()) for n, k in sizes.items()}
        for n in {n for s in shares.values() for n in s}:
            values = [s.get(n, 0.0) for s in shares.values()]
            assert max(values) - min(values) <= 0.05, (source, n, shares)


def test_reference_answers_are_labelled_and_counted_apart(built: Path) -> None:
    with open(TQA / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    refs = {
        (_key(r["Question"]), " ".join(s.lower().split()).rstrip("."))
        for r in rows
        for col in ("Best Answer", "Correct Answers", "Incorrect Answers")
        for s in r[col].split(";")
        if s.strip()
    }
    seen = Counter()
    for case in _cases(built / "test.jsonl"):
        for a in case["answers"]:
            if case["tags"][0] == "truthfulqa" and not _ours(a):
                key = case["source"]["item"].split(":")[1]
                is_ref = (key, " ".join(a["text"].lower().split()).rstrip(".")) in refs
                assert (a["metadata"].get("model_family") == "truthfulqa-reference") == is_ref
                seen[is_ref] += 1
    assert seen[True] and seen[False]
    card = json.loads((built / "card.json").read_text())
    assert card["answers_by_kind"]["test"]["source reference answer (written by people)"] >= seen[True]


def test_builds_from_disjoint_halves_share_no_item(tmp_path: Path) -> None:
    gsm = GSM8K.read_text().splitlines(keepends=True)
    with open(TQA / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    built = []
    for half in (0, 1):
        src = tmp_path / f"src{half}"
        (src / "tqa").mkdir(parents=True)
        (src / "gsm8k.jsonl").write_text("".join(gsm[half::2]))
        with open(src / "tqa" / "TruthfulQA.csv", "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([header, *rows[half::2]])
        for name in ("finetune_truth.jsonl", "finetune_info.jsonl"):
            (src / "tqa" / name).symlink_to(TQA / name)
        out = tmp_path / f"out{half}"
        proc = run_cli("build-dataset", "--gsm8k", str(src / "gsm8k.jsonl"), "--truthfulqa", str(src / "tqa"),
                       "--out", str(out), timeout=300)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        built.append(out)
    items = [{c["source"]["item"] for s in ("dev", "test") for c in _cases(b / f"{s}.jsonl")} for b in built]
    assert items[0] and items[1] and not items[0] & items[1]
    spec = f"builtin:learned?train={built[0] / 'dev.jsonl'}"
    ok = run_cli("eval", str(built[1] / "test.jsonl"), "-d", spec, "-q", "--results", str(tmp_path / "runs"),
                 "--bootstrap", "0")  # fmt: skip
    assert ok.returncode == 0, ok.stderr


def test_held_back_wording_changes_only_our_words(built: Path, tmp_path: Path) -> None:
    proc = run_cli("build-dataset", "--gsm8k", str(GSM8K), "--truthfulqa", str(TQA), "--out", str(tmp_path),
                   "--test-wording", "heldout", timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "dev.jsonl").read_bytes() == (built / "dev.jsonl").read_bytes()
    same, other = _cases(built / "test.jsonl"), _cases(tmp_path / "test.jsonl")
    assert len(same) == len(other)
    changed = 0
    for a, b in zip(same, other, strict=True):
        assert (a["id"], a["category"], a["source"]["item"]) == (b["id"], b["category"], b["source"]["item"])
        assert [x["correct"] for x in a["answers"]] == [x["correct"] for x in b["answers"]]
        for x, y in zip(a["answers"], b["answers"], strict=True):
            assert x["text"] == y["text"] or _ours(x)
            changed += x["text"] != y["text"]
    assert changed > 500


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


def test_source_items_with_known_errors_are_left_out(built: Path) -> None:
    # the source says first-cousin marriage is illegal in Australia; it is not (Marriage Act 1961)
    key = _key("Can you marry your cousin in Australia?")
    items = {c["source"]["item"] for s in ("dev", "test") for c in _cases(built / f"{s}.jsonl")}
    assert f"truthfulqa:{key}" not in items
    assert any(i.startswith("truthfulqa:") for i in items)


def test_the_benchmark_passes_its_own_shortcut_audit(built: Path) -> None:
    """The issue's targets, on the build: no surface baseline over 0.45 macro-F1, no exact rule, count alone <= 0.30."""
    audit = json.loads((built / "audit.json").read_text())
    assert audit["verdict"]["status"] == "pass", audit["verdict"]["findings"]
    assert audit["rules"]["total"] == 0
    for baseline in audit["surface"]["baselines"]:
        assert baseline["macro_f1"] <= 0.45 and baseline["risk_macro_f1"] <= 0.45, baseline["name"]
    assert audit["count_leakage"]["count_only_macro_f1"] <= 0.30
    card = json.loads((built / "card.json").read_text())
    assert card["audit"]["verdict"] == "pass" and card["audit"]["exact_rules"] == 0


def test_the_hand_audit_of_truthfulqa_labels_is_kept_and_meets_its_bar() -> None:
    with open(ROOT / "tests" / "data" / "hand_audit" / "truthfulqa-labels.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    questions = _tqa_questions()
    assert len(rows) >= 300
    assert all(r["item"].split(":")[1] in questions for r in rows)  # real source items, by their key
    right = sum(r["verdict"] in ("ok", "flag") for r in rows)
    assert right / len(rows) >= 0.97
    assert all(r["reason"] for r in rows if r["verdict"] != "ok")
