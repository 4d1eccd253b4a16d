"""Cross-field label rules (`harness.cases.labels`) and the line-by-line check (`harness.cases.reader.scan`)."""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
from collections.abc import Callable
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT, shared_file
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from harness.cases.labels import (
    HIGH_RISK_CATEGORIES,
    NEEDS_MAJORITY_TRUE,
    ORIGINS,
    REAL_ORIGINS,
    UNKNOWN_ORIGIN,
    Rule,
    case_labels,
    check_case,
    majority_rules,
    origin_of,
)
from harness.cases.reader import scan
from harness.cases.validate import Problem, schema_errors
from harness.types import CATEGORY_RISK, CaseLabels


@cache
def independent() -> Draft202012Validator:
    """The case spec, read from the shared copy (../shared), not the package's; a skip when it is absent."""
    return Draft202012Validator(json.loads(shared_file("schemas", "fcb-case.schema.json").read_text()))


# --------------------------------------------------------------------------------------------------------------
# a schema-valid case that keeps every rule, per category

HIGH = [c for c, r in CATEGORY_RISK.items() if r == "high"]


def make_case(
    category: str = "majority_wrong_fact",
    case_id: str = "FCB-0001",
    *,
    correct: list[bool] | None = None,
    majority_correct: bool | str | None = "default",
    **overrides: Any,
) -> dict[str, Any]:
    """A case of ``category`` that passes the schema and every label rule, with ``overrides`` applied."""
    if correct is None:
        correct = {
            "lone_correct_dissenter": [False, False, True, False, False],
            "genuine_agreement_correct": [True] * 5,
            "correct_but_unsupported": [True] * 5,
            "genuine_disagreement": [True, False, True, False, False],  # 2 of 5 correct: under 60%
        }.get(category, [False] * 5)
    if majority_correct == "default":
        majority_correct = {"low": True, "medium": True, "high": False}[CATEGORY_RISK[category]]
        if category == "genuine_disagreement":
            majority_correct = None
    answers = []
    for i, ok in enumerate(correct):
        meta: dict[str, Any] = {"model_family": "family-a" if i % 2 else "family-b"}
        if category == "echo_cascade":
            meta["saw_other_answers"] = i > 0
        if category == "anchoring_injected_premise":
            meta["shared_context"] = True
        answers.append({"agent_id": f"agent-{i}", "text": f"Answer number {i}.", "correct": ok, "metadata": meta})
    case = {
        "id": case_id,
        "category": category,
        "question": "How many moons does Mars have?",
        "answers": answers,
        "ground_truth": "42" if category == "numeric_consensus_error" else "Two: Phobos and Deimos.",
        "expected_risk": CATEGORY_RISK[category],
        "majority_correct": majority_correct,
        "rationale": "Test case.",
        "source": "original",
    }
    case.update(overrides)
    return case


SHARED_SCHEMA = ROOT.parent / "shared" / "schemas" / "fcb-case.schema.json"


def rules_of(case: dict[str, Any]) -> list[Rule]:
    """check_case, after making sure the case meets check_case's precondition (schema-valid): by the package's schema,
    and by the shared spec too when ../shared is beside the checkout (always under CI). The label rules need no file:
    without ../shared (a clone, a work folder of `make mutation`) they are still checked, not skipped."""
    assert schema_errors(case) == []
    if SHARED_SCHEMA.exists() or os.environ.get("CI"):
        assert independent().is_valid(case)
    return check_case(case)


@pytest.mark.parametrize("category", list(CATEGORY_RISK))
def test_helper_case_is_valid(category: str) -> None:
    assert rules_of(make_case(category)) == []


# --------------------------------------------------------------------------------------------------------------
# one mutation per rule, breaking exactly that rule


def set_meta(i: int, **values: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(case: dict[str, Any]) -> None:
        case["answers"][i].setdefault("metadata", {}).update(values)

    return mutate


def drop_meta(i: int) -> Callable[[dict[str, Any]], None]:
    def mutate(case: dict[str, Any]) -> None:
        del case["answers"][i]["metadata"]

    return mutate


def set_flags(flags: list[bool], mc: bool | str | None = "keep") -> Callable[[dict[str, Any]], None]:
    def mutate(case: dict[str, Any]) -> None:
        for a, ok in zip(case["answers"], flags, strict=True):
            a["correct"] = ok
        if mc != "keep":
            case["majority_correct"] = mc

    return mutate


def set_field(key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def mutate(case: dict[str, Any]) -> None:
        case[key] = value

    return mutate


MUTATIONS: list[tuple[str, str, Callable[[dict[str, Any]], None], str, str]] = [
    # (rule, category, mutation, field of the rule, a word the message must hold)
    # majority_correct vs the share of correct answers (category constraints kept)
    (
        "true needs 60% correct",
        "genuine_agreement_correct",
        set_flags([True, True, False, False, False]),
        "majority_correct",
        "60%",
    ),
    (
        "false needs 60% wrong",
        "majority_wrong_fact",
        set_flags([True, True, True, False, False]),
        "majority_correct",
        "60%",
    ),
    (
        "null needs under 60% correct",
        "genuine_disagreement",
        set_flags([True, True, True, False, False]),
        "majority_correct",
        "60%",
    ),
    # high-risk categories need majority_correct false (null keeps the share rule: under 60% correct)
    *[(f"{c} needs false", c, set_field("majority_correct", None), "majority_correct", "false") for c in HIGH],
    (
        "majority_wrong_fact needs false (true)",
        "majority_wrong_fact",
        set_flags([True] * 5, True),
        "majority_correct",
        "false",
    ),
    # low/medium categories that need majority_correct true
    (
        "genuine_agreement_correct needs true",
        "genuine_agreement_correct",
        set_flags([False] * 5, False),
        "majority_correct",
        "true",
    ),
    (
        "correct_but_unsupported needs true",
        "correct_but_unsupported",
        set_flags([True, True, False, False, False], None),
        "majority_correct",
        "true",
    ),
    (
        "genuine_disagreement needs null",
        "genuine_disagreement",
        set_flags([True] * 5, True),
        "majority_correct",
        "null",
    ),
    # category-specific demands on answers
    ("lone dissenter: no correct answer", "lone_correct_dissenter", set_flags([False] * 5), "answers", "exactly one"),
    (
        "lone dissenter: two correct answers",
        "lone_correct_dissenter",
        set_flags([True, True, False, False, False]),
        "answers",
        "exactly one",
    ),
    (
        "echo needs saw_other_answers",
        "echo_cascade",
        lambda c: [set_meta(i, saw_other_answers=False)(c) for i in range(5)],
        "answers",
        "saw_other_answers",
    ),
    (
        "echo: metadata absent",
        "echo_cascade",
        lambda c: [drop_meta(i)(c) for i in range(5)],
        "answers",
        "saw_other_answers",
    ),
    (
        "anchoring needs shared_context on answer 2",
        "anchoring_injected_premise",
        set_meta(2, shared_context=False),
        "answers[2].metadata.shared_context",
        "true",
    ),
    (
        "anchoring: metadata absent on answer 4",
        "anchoring_injected_premise",
        drop_meta(4),
        "answers[4].metadata.shared_context",
        "true",
    ),
    (
        "numeric ground truth",
        "numeric_consensus_error",
        set_field("ground_truth", "about forty-two"),
        "ground_truth",
        "numeric",
    ),
    # agent ids unique within a case
    (
        "duplicate agent_id",
        "genuine_agreement_correct",
        lambda c: c["answers"][3].update(agent_id="agent-1"),
        "answers[3].agent_id",
        "answers[1]",
    ),
]


@pytest.mark.parametrize(("rule", "category", "mutate", "field", "word"), MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_each_rule_breaks_alone(rule: str, category: str, mutate: Callable, field: str, word: str) -> None:
    case = make_case(category)
    mutate(case)
    found = rules_of(case)
    assert len(found) == 1, found
    assert found[0].field == field
    assert found[0].warning is False
    assert word in found[0].message, found[0].message


def test_anchoring_reports_every_answer_without_shared_context() -> None:
    case = make_case("anchoring_injected_premise")
    set_meta(0, shared_context=False)(case)
    drop_meta(3)(case)
    assert [r.field for r in rules_of(case)] == [
        "answers[0].metadata.shared_context",
        "answers[3].metadata.shared_context",
    ]


def test_duplicate_agent_ids_each_reported() -> None:
    case = make_case("genuine_agreement_correct")
    for i in (2, 4):
        case["answers"][i]["agent_id"] = "agent-0"
    found = rules_of(case)
    assert [r.field for r in found] == ["answers[2].agent_id", "answers[4].agent_id"]
    assert all("'agent-0'" in r.message and "answers[0]" in r.message for r in found)


@pytest.mark.parametrize(
    ("category", "departing"),
    [("majority_wrong_fact", "medium"), ("genuine_disagreement", "low"), ("genuine_agreement_correct", "high")],
)
def test_expected_risk_departing_from_category_is_a_warning(category: str, departing: str) -> None:
    found = rules_of(make_case(category, expected_risk=departing))
    assert found == [Rule("expected_risk", found[0].message, warning=True)]
    assert departing in found[0].message and CATEGORY_RISK[category] in found[0].message


@pytest.mark.parametrize("truth", ["42", " 42 ", "-3.5", "1e3", "1,234", "0.001"])
def test_numeric_ground_truth_accepted(truth: str) -> None:
    assert rules_of(make_case("numeric_consensus_error", ground_truth=truth)) == []


@pytest.mark.parametrize("truth", ["forty-two", "42 km", "nan", "inf", "-Infinity", "1/2"])
def test_non_numeric_ground_truth_refused(truth: str) -> None:
    found = rules_of(make_case("numeric_consensus_error", ground_truth=truth))
    assert [r.field for r in found] == ["ground_truth"]


# --------------------------------------------------------------------------------------------------------------
# the 60% boundary


def _mc_case(n_correct: int, n: int, mc: bool | None) -> dict[str, Any]:
    return {"answers": [{"correct": i < n_correct} for i in range(n)], "majority_correct": mc}


@pytest.mark.parametrize(
    ("n_correct", "n", "mc", "allowed"),
    [
        (3, 5, True, True),  # exactly 60% correct: true is allowed
        (2, 5, True, False),  # 40%: true is not
        (2, 5, False, True),  # 3 of 5 wrong = exactly 60% wrong: false is allowed
        (3, 5, False, False),  # 2 of 5 wrong: false is not
        (3, 5, None, False),  # null needs under 60% correct; 3 of 5 is 60%
        (2, 5, None, True),
        (6, 10, True, True),
        (5, 10, True, False),
        (4, 10, False, True),
    ],
)
def test_sixty_percent_boundary(n_correct: int, n: int, mc: bool | None, allowed: bool) -> None:
    assert (majority_rules(_mc_case(n_correct, n, mc)) == []) is allowed


@settings(max_examples=200, deadline=None)
@given(
    st.integers(2, 16).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), st.sampled_from([True, False, None])
)
def test_majority_rule_matches_exact_fraction(kn: tuple[int, int], mc: bool | None) -> None:
    k, n = kn
    share = Fraction(k, n)
    allowed = {True: share >= Fraction(3, 5), False: 1 - share >= Fraction(3, 5), None: share < Fraction(3, 5)}[mc]
    found = majority_rules(_mc_case(k, n, mc))
    assert (found == []) is allowed
    assert all(r.field == "majority_correct" and not r.warning for r in found)


# --------------------------------------------------------------------------------------------------------------
# scan(): a real file, PATH:LINE: field: message


def dumps(case: Any) -> bytes:
    return orjson.dumps(case)


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"".join(lines))
    return path


PROBLEM_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+): (?P<field>[^:]+): (?P<message>.+)$")


def test_scan_reports_problems_on_their_lines(tmp_path: Path) -> None:
    no_rationale = make_case("genuine_agreement_correct", "FCB-0007")
    del no_rationale["rationale"]
    no_rationale["answers"][1]["correct"] = "yes"
    lines = [
        dumps(make_case("majority_wrong_fact", "FCB-0001", evidence=["Mars has two moons."])) + b"\n",  # 1 ok
        b"\n",  # 2 blank
        b"\xef\xbb\xbf" + dumps(make_case("echo_cascade", "FCB-0002")) + b"\n",  # 3 BOM
        dumps(make_case("echo_cascade", "FCB-0003")) + b"\r\n",  # 4 CRLF
        b'{"id": "FCB-0004", "category": \n',  # 5 invalid JSON
        b'{"id": "FCB-00\xff\xfe"}\n',  # 6 not UTF-8
        b"[1, 2]\n",  # 7 a JSON array
        dumps(make_case("genuine_agreement_correct", "FCB-0001")) + b"\n",  # 8 duplicate of line 1
        dumps(make_case("genuine_agreement_correct", "FCB-0005", correct=[True, True, False, False, False]))
        + b"\n",  # 9 majority_correct true with 2 of 5 correct
        dumps(make_case("majority_wrong_fact", "FCB-0006", expected_risk="medium")) + b"\n",  # 10 warning only
        dumps(no_rationale) + b"\n",  # 11 two schema errors
        dumps(make_case("lone_correct_dissenter", "FCB-0008", tags=["x_1"])),  # 12 ok, no final newline
    ]
    path = write_lines(tmp_path / "cases.jsonl", lines)
    result = scan(path)

    assert result.lines == 12
    assert [lab.line for lab in result.labels] == [1, 10, 12]
    assert [lab.case_id for lab in result.labels] == ["FCB-0001", "FCB-0006", "FCB-0008"]
    assert result.invalid_lines == 9

    printed = [str(p) for p in result.problems]
    parsed = [PROBLEM_LINE.match(text) for text in printed]
    assert all(parsed), printed
    assert {mt["path"] for mt in parsed if mt} == {str(path)}
    where = {(int(mt["line"]), mt["field"]) for mt in parsed if mt}
    assert where == {
        (2, "(line)"),
        (3, "(line)"),
        (4, "(line)"),
        (5, "(line)"),
        (6, "(line)"),
        (7, "(case)"),
        (8, "id"),
        (9, "majority_correct"),
        (10, "expected_risk"),
        (11, "rationale"),
        (11, "answers[1].correct"),
    }
    by_line: dict[int, list[str]] = {}
    for mt in parsed:
        assert mt
        by_line.setdefault(int(mt["line"]), []).append(mt["message"])
    assert "blank" in by_line[2][0]
    assert "byte-order mark" in by_line[3][0]
    assert "CRLF" in by_line[4][0]
    assert "invalid JSON" in by_line[5][0]
    assert "invalid JSON" in by_line[6][0]
    assert "object" in by_line[7][0]
    assert "duplicate id FCB-0001" in by_line[8][0] and "line 1" in by_line[8][0]
    assert "60%" in by_line[9][0]
    assert by_line[10][0].startswith("warning: ")
    assert any("required field is missing" in msg for msg in by_line[11])
    assert any("boolean" in msg for msg in by_line[11])
    # warnings do not count as errors
    assert {p.line for p in result.errors} == {2, 3, 4, 5, 6, 7, 8, 9, 11}
    assert [p.warning for p in result.problems if p.line == 10] == [True]

    strict = scan(path, strict=True)
    assert [lab.line for lab in strict.labels] == [1, 12]
    assert 10 in {p.line for p in strict.errors}


def test_scan_labels_of_valid_cases(tmp_path: Path) -> None:
    case = make_case("majority_wrong_fact", "FCB-0042", evidence=["e"], tags=["b_tag", "a_tag"])
    case["answers"][0]["metadata"] = {}  # one answer without model_family
    source = {
        "dataset": "truthfulqa",
        "license": "Apache-2.0",
        "citation": "c",
        "url": "https://example.org/x",
        "item": "1",
    }
    other = make_case("echo_cascade", "FCB-0043", source=source)
    path = write_lines(tmp_path / "c.jsonl", [dumps(case) + b"\n", dumps(other) + b"\n"])
    result = scan(path)
    assert result.problems == []
    first, second = result.labels
    assert (first.case_id, first.line, first.category, first.expected_risk) == (
        "FCB-0042",
        1,
        "majority_wrong_fact",
        "high",
    )
    assert first.has_evidence and not second.has_evidence
    assert first.families == ("family-a", "family-b") and first.families_complete is False
    assert second.families_complete is True
    assert first.tags == ("b_tag", "a_tag") and second.tags == ()
    assert not first.any_saw_other_answers and second.any_saw_other_answers
    assert (first.source_dataset, second.source_dataset) == ("original", "truthfulqa")
    assert first.n_answers == 5
    assert case_labels(case, 1, first.content_hash) == first


def test_duplicate_reported_on_each_later_line(tmp_path: Path) -> None:
    lines = [dumps(make_case("echo_cascade", "FCB-0009")) + b"\n" for _ in range(3)]
    result = scan(write_lines(tmp_path / "d.jsonl", lines))
    dups = [(p.line, p.field) for p in result.problems]
    assert dups == [(2, "id"), (3, "id")]
    assert all("first on line 1" in p.message for p in result.problems)
    assert [lab.line for lab in result.labels] == [1]


def test_problem_format() -> None:
    assert (
        str(Problem("a/cases.jsonl", 7, "answers[0].text", "too long")) == "a/cases.jsonl:7: answers[0].text: too long"
    )
    assert str(Problem("p", 1, "expected_risk", "departs", warning=True)) == "p:1: expected_risk: warning: departs"


# --------------------------------------------------------------------------------------------------------------
# schema_errors and scan never raise: they return problems


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=25,
)
CASE_KEYS = [*json.loads((ROOT / "harness" / "data" / "fcb-case.schema.json").read_text())["properties"], "extra"]


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_schema_errors_on_any_json_value(value: Any) -> None:
    errors = schema_errors(value)
    assert isinstance(errors, list)
    assert all(isinstance(f, str) and isinstance(msg, str) and f and msg for f, msg in errors)
    if not isinstance(value, dict) or not independent().is_valid(value):
        assert errors, value


@st.composite
def near_cases(draw: st.DrawFn) -> dict[str, Any]:
    """A valid case with a few fields (top level or inside an answer) replaced by arbitrary JSON."""
    case = make_case(draw(st.sampled_from(list(CATEGORY_RISK))))
    for _ in range(draw(st.integers(0, 2))):  # inside answers first, while they are still the helper's
        answer = case["answers"][draw(st.integers(0, 4))]
        answer[draw(st.sampled_from(["agent_id", "text", "correct", "metadata", "other"]))] = draw(JSON)
    for _ in range(draw(st.integers(0, 2))):
        case[draw(st.sampled_from(CASE_KEYS))] = draw(JSON)
    return case


@settings(max_examples=200, deadline=None)
@given(near_cases())
def test_schema_errors_on_near_valid_cases(case: dict[str, Any]) -> None:
    errors = schema_errors(copy.deepcopy(case))
    if not independent().is_valid(case):
        assert errors
    if not errors:
        check_case(case)  # a case the schema accepts meets check_case's precondition


@pytest.fixture(scope="module")
def scratch() -> Path:
    with tempfile.TemporaryDirectory() as d:
        yield Path(d)


LINES = st.lists(
    st.binary(max_size=80).map(lambda b: b.replace(b"\n", b""))
    | st.builds(lambda v: orjson.dumps(v), JSON)
    | near_cases().map(dumps)
    | st.sampled_from([b"", b"\xef\xbb\xbf{}", b" ", b"\r", b"\xff", b"{", b"[]", b"null"]),
    max_size=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(LINES, st.sampled_from([b"\n", b"\r\n"]), st.booleans())
def test_scan_never_raises(scratch: Path, lines: list[bytes], end: bytes, final_newline: bool) -> None:
    data = end.join(lines) + (end if final_newline and lines else b"")
    path = scratch / "any.jsonl"
    path.write_bytes(data)
    result = scan(path)
    # lines end at LF only (a CR is part of its line); a last line without LF still counts
    assert result.lines == data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    assert all(1 <= p.line <= result.lines for p in result.problems)
    error_lines = {p.line for p in result.errors}
    label_lines = {lab.line for lab in result.labels}
    assert not error_lines & label_lines  # a line with an error leaves no label record
    assert len(error_lines) == result.invalid_lines
    assert len(label_lines) + result.invalid_lines == result.lines


# Values nested deeper than Python's recursion allows for the validator: still valid JSON for orjson (its limit is
# 1024 levels), so the line must give a problem, not an exception.
def _deep(depth: int) -> bytes:
    return b"[" * depth + b"0" + b"]" * depth


@pytest.mark.parametrize(
    "line",
    [
        b'{"tags": [' + _deep(300) + b", " + _deep(300) + b"]}",  # uniqueItems compares two deep lists
        b'{"id": ' + _deep(1000) + b"}",  # the error message holds the repr of a 1000-deep list
        _deep(1000),
    ],
    ids=["tags-two-300-deep-lists", "id-1000-deep", "array-1000-deep"],
)
def test_deeply_nested_line_is_a_problem_not_a_crash(tmp_path: Path, line: bytes) -> None:
    orjson.loads(line)  # valid JSON
    path = write_lines(tmp_path / "deep.jsonl", [dumps(make_case()) + b"\n", line + b"\n"])
    result = scan(path)
    assert [lab.line for lab in result.labels] == [1]
    assert result.invalid_lines == 1
    assert {p.line for p in result.errors} == {2}


# --------------------------------------------------------------------------------------------------------------
# the label scheme of docs/benchmark.md, typed out by hand: each category's risk, and what it demands

SCHEME_RISK = {
    "majority_wrong_fact": "high",
    "echo_cascade": "high",
    "anchoring_injected_premise": "high",
    "lone_correct_dissenter": "high",
    "numeric_consensus_error": "high",
    "genuine_agreement_correct": "low",
    "genuine_disagreement": "medium",
    "correct_but_unsupported": "medium",
}


def test_scheme_constants() -> None:
    assert {c for c, r in SCHEME_RISK.items() if r == "high"} == HIGH_RISK_CATEGORIES
    assert len(HIGH_RISK_CATEGORIES) == 5
    assert {"genuine_agreement_correct", "correct_but_unsupported"} == NEEDS_MAJORITY_TRUE
    assert ORIGINS == ("natural", "assembled", "constructed")  # from most to least real
    assert {"natural", "assembled"} == REAL_ORIGINS
    assert UNKNOWN_ORIGIN == "unknown"
    assert Rule("f", "m").warning is False


@pytest.mark.parametrize("category", list(SCHEME_RISK))
@pytest.mark.parametrize("risk", ["low", "medium", "high"])
def test_expected_risk_follows_the_category(category: str, risk: str) -> None:
    found = rules_of(make_case(category, expected_risk=risk))
    scheme = SCHEME_RISK[category]
    if risk == scheme:
        assert found == []
    else:
        assert found == [Rule("expected_risk", f"{risk} departs from {scheme}, the risk of category {category}", True)]


# (category, correct flags, majority_correct, other fields, every rule broken, in order)
BROKEN: list[tuple[str, list[bool], bool | None, dict[str, Any], list[Rule]]] = [
    (
        # 2 of 5 correct: true breaks the share rule and genuine_disagreement's null; high departs from medium
        "genuine_disagreement",
        [True, True, False, False, False],
        True,
        {"expected_risk": "high"},
        [
            Rule("majority_correct", "true needs at least 60% correct answers; 2 of 5 answers correct"),
            Rule("majority_correct", "genuine_disagreement needs majority_correct null, not true"),
            Rule("expected_risk", "high departs from medium, the risk of category genuine_disagreement", True),
        ],
    ),
    (
        # 0 of 5 correct, null: the share rule holds (0 < 60%); a high-risk category needs false, a dissenter one
        "lone_correct_dissenter",
        [False] * 5,
        None,
        {},
        [
            Rule("majority_correct", "lone_correct_dissenter needs majority_correct false, not null"),
            Rule("answers", "lone_correct_dissenter needs exactly one correct answer, found 0"),
        ],
    ),
    (
        # 3 of 5 correct and false: 2 of 5 wrong is under 60%
        "lone_correct_dissenter",
        [True, False, True, False, True],
        False,
        {},
        [
            Rule("majority_correct", "false needs at least 60% wrong answers; 3 of 5 answers correct"),
            Rule("answers", "lone_correct_dissenter needs exactly one correct answer, found 3"),
        ],
    ),
    (
        # 4 of 4 correct... with null: 100% correct is not "under 60%"
        "correct_but_unsupported",
        [True] * 4,
        None,
        {},
        [
            Rule("majority_correct", "null needs fewer than 60% correct answers; 4 of 4 answers correct"),
            Rule("majority_correct", "correct_but_unsupported needs majority_correct true, not null"),
        ],
    ),
    (
        "genuine_agreement_correct",
        [False, False, False],
        False,
        {"expected_risk": "medium"},
        [
            Rule("majority_correct", "genuine_agreement_correct needs majority_correct true, not false"),
            Rule("expected_risk", "medium departs from low, the risk of category genuine_agreement_correct", True),
        ],
    ),
    (
        "echo_cascade",
        [True, True, True, True],
        True,
        {},
        [Rule("majority_correct", "echo_cascade needs majority_correct false, not true")],
    ),
    (
        "numeric_consensus_error",
        [False] * 5,
        False,
        {"ground_truth": "x" * 70},  # its repr cut to 60 characters: the quote and 59 x
        [Rule("ground_truth", "numeric_consensus_error needs a numeric ground_truth, got '" + "x" * 59)],
    ),
]


@pytest.mark.parametrize(("category", "correct", "mc", "fields", "expected"), BROKEN, ids=[b[0] for b in BROKEN])
def test_every_broken_rule_with_its_message(
    category: str, correct: list[bool], mc: bool | None, fields: dict[str, Any], expected: list[Rule]
) -> None:
    assert rules_of(make_case(category, correct=correct, majority_correct=mc, **fields)) == expected


def test_rules_come_in_order_majority_category_agent_ids() -> None:
    case = make_case("anchoring_injected_premise", correct=[True] * 4, majority_correct=None, expected_risk="low")
    del case["answers"][1]["metadata"]["shared_context"]
    set_meta(3, shared_context=False)(case)
    case["answers"][2]["agent_id"] = "agent-0"
    assert rules_of(case) == [
        Rule("majority_correct", "null needs fewer than 60% correct answers; 4 of 4 answers correct"),
        Rule("majority_correct", "anchoring_injected_premise needs majority_correct false, not null"),
        Rule("answers[1].metadata.shared_context", "anchoring_injected_premise needs true on every answer"),
        Rule("answers[3].metadata.shared_context", "anchoring_injected_premise needs true on every answer"),
        Rule("expected_risk", "low departs from high, the risk of category anchoring_injected_premise", True),
        Rule("answers[2].agent_id", "duplicate agent_id 'agent-0' (first at answers[0])"),
    ]


def test_echo_cascade_needs_only_one_answer_that_saw_others() -> None:
    case = make_case("echo_cascade")
    for i, answer in enumerate(case["answers"]):
        answer["metadata"]["saw_other_answers"] = i == 3
    assert rules_of(case) == []


# --------------------------------------------------------------------------------------------------------------
# origin_of and case_labels


@pytest.mark.parametrize(
    ("tags", "origin"),
    [
        ((), "unknown"),
        (("origin_natural",), "natural"),
        (("x_1", "origin_assembled"), "assembled"),
        (["origin_constructed"], "constructed"),
        (("origin_natural", "origin_constructed"), "constructed"),  # several: the least real
        (("origin_assembled", "origin_natural"), "assembled"),  # whatever their order
        (("natural",), "unknown"),
        (("origin_naturally",), "unknown"),
    ],
)
def test_origin_of(tags: tuple[str, ...] | list[str], origin: str) -> None:
    assert origin_of(tags) == origin


def test_case_labels_every_field() -> None:
    case = make_case("echo_cascade", "FCB-0321", correct=[False, True, False, False], majority_correct=False)
    metas = [
        {"model_family": "fam-c", "saw_other_answers": False},
        {"model_family": "fam-a", "saw_other_answers": False, "shared_context": True},
        {"model_family": "fam-c", "saw_other_answers": True, "shared_context": False},
    ]
    for answer, meta in zip(case["answers"], metas, strict=False):
        answer["metadata"] = meta
    del case["answers"][3]["metadata"]  # the fourth answer has none: families incomplete
    case.update(evidence=["Mars has two moons."], tags=["zeta", "origin_assembled"])
    case["source"] = {
        "dataset": "truthfulqa",
        "license": "Apache-2.0",
        "citation": "Lin et al.",
        "url": "https://example.org/tqa",
        "item": "817",
    }
    assert rules_of(case) == []
    assert case_labels(case, 7, "h-0321") == CaseLabels(
        line=7,
        case_id="FCB-0321",
        content_hash="h-0321",
        category="echo_cascade",
        expected_risk="high",
        majority_correct=False,
        n_answers=4,
        has_evidence=True,
        families=("fam-a", "fam-c"),
        families_complete=False,
        any_saw_other_answers=True,
        any_shared_context=True,
        tags=("zeta", "origin_assembled"),
        source_dataset="truthfulqa",
        source_item="truthfulqa:817",
    )


def test_case_labels_of_an_original_case() -> None:
    case = make_case("genuine_disagreement", "FCB-0654", correct=[True, False, False])
    for answer in case["answers"]:
        answer["metadata"] = {"model_family": "fam-z", "saw_other_answers": False, "shared_context": False}
    assert rules_of(case) == []
    assert case_labels(case, 12, "h-0654") == CaseLabels(
        line=12,
        case_id="FCB-0654",
        content_hash="h-0654",
        category="genuine_disagreement",
        expected_risk="medium",
        majority_correct=None,
        n_answers=3,
        has_evidence=False,
        families=("fam-z",),
        families_complete=True,
        any_saw_other_answers=False,
        any_shared_context=False,
        tags=(),
        source_dataset="original",
        source_item="FCB-0654",
    )


def test_case_labels_shared_context_everywhere_but_no_family() -> None:
    case = make_case("anchoring_injected_premise", "FCB-0987", correct=[False, False])
    for answer in case["answers"]:
        answer["metadata"] = {"shared_context": True, "saw_other_answers": True}
    labels = case_labels(case, 3, "h-0987")
    assert (labels.families, labels.families_complete) == ((), False)
    assert (labels.any_saw_other_answers, labels.any_shared_context) == (True, True)
