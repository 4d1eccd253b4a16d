"""The embedded data set: valid, balanced, exactly what its seeded generator writes, every label edge in it, and no
surface (answer count, agent order, a word) that says its category or its risk. The shortcut audit itself runs on it
in test_embedded_audit.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import jsonschema
from conftest import EMBEDDED, ROOT, run_cli, shared_file

from fcb_datasets import embedded
from fcb_datasets.embedded import assembly
from harness import types
from harness.cases.reader import scan


def test_shipped_file_is_what_the_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "regenerated.jsonl"
    seed = str(embedded.DEFAULT_SEED)
    command = [sys.executable, "-m", "fcb_datasets.embedded", "--out", str(out), "--seed", seed]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == EMBEDDED.read_bytes()


def test_the_generators_copy_of_the_label_scheme_is_the_contracts() -> None:
    # The generator may not import harness.types, so it keeps its own category -> risk table.
    assert assembly.CATEGORY_RISK == types.CATEGORY_RISK


def test_valid_balanced_and_varied() -> None:
    result = scan(EMBEDDED, strict=True)
    assert result.problems == [] and len(result.labels) >= 200
    cases = [json.loads(line) for line in EMBEDDED.read_text().splitlines()]
    by_category = Counter(c["category"] for c in cases)
    assert len(by_category) == 8 and min(by_category.values()) >= 25
    assert all(c["source"] == "original" for c in cases)
    assert {len(c["answers"]) for c in cases} >= {2, 16}
    assert 0.2 < sum("evidence" in c for c in cases) / len(cases) < 0.8
    assert all(
        set(a["metadata"]) == {"model_family", "saw_other_answers", "shared_context"}
        for c in cases
        for a in c["answers"]
    )
    subjects = Counter(t for c in cases for t in c["tags"])
    assert {"arithmetic", "units", "dates", "science", "geography", "code", "everyday_reasoning"} <= set(subjects)


def test_valid_under_the_shared_schema_with_a_general_validator() -> None:
    packaged = ROOT / "harness" / "data" / "fcb-case.schema.json"
    shared = shared_file("schemas", "fcb-case.schema.json")
    assert packaged.read_bytes() == shared.read_bytes()  # the packaged copy is the shared spec, byte for byte
    schema = json.loads((ROOT / "harness" / "data" / "fcb-case.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    for line in EMBEDDED.read_text().splitlines():
        assert not list(validator.iter_errors(json.loads(line)))


def test_make_eval_equivalent_runs_on_the_embedded_set(tmp_path: Path) -> None:
    proc = run_cli("eval", "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "macro-F1" in proc.stdout and "genuine_disagreement" in proc.stdout
    doc = json.loads(next(tmp_path.glob("*/metrics.json")).read_text())
    assert doc["detector"]["spec"] == "builtin:heuristic" and doc["complete"]
    assert doc["metrics"]["n_cases"] == len(EMBEDDED.read_text().splitlines())


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in EMBEDDED.read_text().splitlines()]


def test_every_category_takes_its_answer_counts_from_one_multiset() -> None:
    counts = {c: Counter(len(x["answers"]) for x in _cases() if x["category"] == c) for c in types.CATEGORIES}
    reference = counts["majority_wrong_fact"]
    assert {2, 16} <= set(reference) and len(reference) >= 10
    for category, seen in counts.items():
        if category == "lone_correct_dissenter":  # one right against 60% wrong needs three: its pairs are threes
            expected = Counter({(3 if n == 2 else n): k for n, k in reference.items() if n != 3})
            expected[3] += reference[3]
            assert seen == expected
        else:
            assert seen == reference, category


def _number(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _split(case: dict[str, Any]) -> list[int]:
    """A disagreement's split as its rationale states it ("split 2-2-1"), checked against its labels here."""
    parts = [int(p) for p in re.search(r"split (\d+(?:-\d+)+)", case["rationale"]).group(1).split("-")]  # type: ignore[union-attr]
    n, right = len(case["answers"]), sum(a["correct"] for a in case["answers"])
    assert sum(parts) == n and 5 * max(parts) < 3 * n, case["id"]
    assert right == 0 or right in parts, case["id"]
    return parts


def test_every_label_edge_of_the_scheme_is_in_the_set() -> None:
    edges: Counter[str] = Counter()
    for case in _cases():
        n, right = len(case["answers"]), sum(a["correct"] for a in case["answers"])
        majority, truth = case["majority_correct"], _number(case["ground_truth"])
        edges["evidence" if case.get("evidence") else "no evidence"] += 1
        edges[f"{n} answers"] += 1
        edges["exactly 60% right"] += majority is True and 5 * right == 3 * n
        edges["right majority, a wrong minority"] += majority is True and right < n
        edges["wrong majority, no right answer"] += majority is False and right == 0
        edges["wrong majority, several right answers"] += majority is False and right >= 2
        edges["lone dissenter of three"] += case["category"] == "lone_correct_dissenter" and n == 3
        if majority is None:
            parts = sorted(_split(case), reverse=True)
            edges["no consensus, tie at the top"] += parts[0] == parts[1]
            edges["no consensus, no right answer"] += right == 0
            edges["no consensus, one short of 60%"] += 5 * (parts[0] + 1) >= 3 * n
        edges["non-numeric truth"] += truth is None
        edges["negative truth"] += truth is not None and truth < 0
        edges["decimal truth"] += truth is not None and truth != truth.to_integral_value()
        edges["saw other answers"] += any(a["metadata"]["saw_other_answers"] for a in case["answers"])
        edges["shared context"] += any(a["metadata"]["shared_context"] for a in case["answers"])
        families = {a["metadata"]["model_family"] for a in case["answers"]}
        edges["one model family" if len(families) == 1 else "mixed families"] += 1
    wanted = [
        "evidence", "no evidence", "2 answers", "16 answers", "exactly 60% right", "right majority, a wrong minority",
        "wrong majority, no right answer", "wrong majority, several right answers", "lone dissenter of three",
        "no consensus, tie at the top", "no consensus, no right answer", "no consensus, one short of 60%",
        "non-numeric truth", "negative truth", "decimal truth", "saw other answers", "shared context",
        "one model family", "mixed families",
    ]  # fmt: skip
    assert [e for e in wanted if edges[e] == 0] == []


def test_agent_order_says_nothing_of_who_answered_first() -> None:
    cascades = [c for c in _cases() if c["category"] == "echo_cascade"]
    # The answer given alone (the one the others copied) is anywhere in the list, not first.
    first_alone = sum(not c["answers"][0]["metadata"]["saw_other_answers"] for c in cascades)
    assert first_alone < 0.8 * len(cascades)
    assert any(c["answers"][0]["metadata"]["saw_other_answers"] for c in cascades)


def test_right_and_wrong_majorities_share_every_framing() -> None:
    cases = _cases()
    for tag in ("note_in_question", "copied_answers"):
        for majority in (True, False):
            group = [c for c in cases if c["majority_correct"] is majority]
            assert sum(tag in c["tags"] for c in group) >= 0.1 * len(group), (tag, majority)


def test_no_word_marks_a_category_or_a_risk() -> None:
    """The audit's exact rules, by hand for single words: no word of a question or an answer that is in 9 cases or
    more comes mostly from one category, in 18 or more from two, or in 20 or more from one risk level (the old set
    had "already", "team" and "note" in anchoring cases only, "definitely" in correct_but_unsupported only)."""
    cases = _cases()
    where: defaultdict[str, set[int]] = defaultdict(set)
    for i, case in enumerate(cases):
        for text in [case["question"], *(a["text"] for a in case["answers"])]:
            for word in re.findall(r"\w+", text.lower()):
                where[word].add(i)
    for word, found in where.items():
        categories = Counter(cases[i]["category"] for i in found).most_common()
        risks = Counter(types.CATEGORY_RISK[cases[i]["category"]] for i in found).most_common()
        if len(found) >= 9:
            assert categories[0][1] < 0.8 * len(found), (word, categories)
        if len(found) >= 18:
            assert sum(k for _, k in categories[:2]) < 0.9 * len(found), (word, categories)
        if len(found) >= 20:
            assert risks[0][1] < 0.95 * len(found), (word, risks)
