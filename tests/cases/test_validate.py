"""Checking one line of a cases file (harness/cases/validate.py) on lines written by hand: each verdict and each
message, with the file, the line and the field it names, held to what the rule says at its boundary (issue 46)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson
import pytest

from harness.cases import validate
from harness.cases.lines import MAX_LINE_BYTES
from harness.cases.validate import Problem, check_line, content_hash, schema_errors
from harness.jsoncheck import MAX_DEPTH

PATH = "data/cases.jsonl"


def case(**overrides: Any) -> dict[str, Any]:
    """A case that passes the schema and every label rule: majority_wrong_fact is high risk and needs majority_correct
    false, and 2 of 2 wrong answers are 100% >= 60% wrong."""
    doc: dict[str, Any] = {
        "id": "FCB-0001",
        "category": "majority_wrong_fact",
        "question": "How many moons does Mars have?",
        "answers": [
            {"agent_id": "a", "text": "One.", "correct": False},
            {"agent_id": "b", "text": "One.", "correct": False},
        ],
        "ground_truth": "Two.",
        "expected_risk": "high",
        "majority_correct": False,
        "rationale": "Both agents say one.",
        "source": "original",
    }
    doc.update(overrides)
    return doc


def line(doc: Any) -> bytes:
    return json.dumps(doc).encode() + b"\n"


def check(raw: bytes, line_no: int = 7, first: dict[str, int] | None = None, strict: bool = False) -> Any:
    return check_line(PATH, line_no, raw, {} if first is None else first, strict)


def source(**overrides: Any) -> dict[str, Any]:
    doc = {"dataset": "d", "license": "MIT", "citation": "c", "url": "https://example.org/x", "item": "i"}
    doc.update(overrides)
    return doc


# --------------------------------------------------------------------------------------------------------------
# Problem, content_hash, the field names


def test_a_problem_prints_path_line_field_and_message_and_a_warning_says_so() -> None:
    assert str(Problem("a/b.jsonl", 12, "answers[1].text", "too long")) == "a/b.jsonl:12: answers[1].text: too long"
    warned = Problem("a/b.jsonl", 3, "expected_risk", "departs", warning=True)
    assert str(warned) == "a/b.jsonl:3: expected_risk: warning: departs"
    assert Problem("p", 1, "f", "m").warning is False  # a problem is an error unless said otherwise


def test_the_content_hash_is_the_first_16_hex_digits_of_the_sha256_of_the_sorted_compact_json() -> None:
    # {"b": 1, "a": [1, 2]} sorted and compact is {"a":[1,2],"b":1}: hashed here with hashlib on the text written out
    expected = hashlib.sha256(b'{"a":[1,2],"b":1}').hexdigest()[:16]
    assert content_hash({"b": 1, "a": [1, 2]}) == expected
    assert content_hash({"a": [1, 2], "b": 1}) == expected  # key order does not count
    assert content_hash({"a": [2, 1], "b": 1}) != expected  # array order does
    assert len(expected) == 16


@pytest.mark.parametrize(
    ("parts", "name"),
    [
        ([], "(case)"),
        (["question"], "question"),
        (["source", "url"], "source.url"),
        (["answers", 0, "text"], "answers[0].text"),
        (["answers", 15, "metadata", "model_family"], "answers[15].metadata.model_family"),
        ([3], "[3]"),
        (["tags", 0, 1], "tags[0][1]"),
    ],
)
def test_a_field_is_named_with_dots_between_keys_and_brackets_round_indices(parts: list[Any], name: str) -> None:
    assert validate._field_name(parts) == name


# --------------------------------------------------------------------------------------------------------------
# the schema: every wrong field named, with a short message


def test_a_valid_case_has_no_schema_error() -> None:
    assert schema_errors(case()) == []


def test_tags_are_unique_lower_case_words() -> None:
    assert schema_errors(case(tags=["a_1", "b"])) == []
    assert schema_errors(case(tags=["a", "a"])) == [("tags", "['a', 'a'] has non-unique elements")]
    assert schema_errors(case(tags=["ok", "A"])) == [("tags[1]", "'A' does not match ^[a-z0-9_]+$")]


def test_each_missing_required_field_is_named_in_sorted_order() -> None:
    doc = case()
    del doc["rationale"], doc["question"]
    assert schema_errors(doc) == [("question", "required field is missing"), ("rationale", "required field is missing")]


def test_a_value_that_is_not_an_object_is_the_case_itself() -> None:
    assert schema_errors([1]) == [("(case)", "[1] is not of type object")]


@pytest.mark.parametrize(
    ("n", "errors"),
    [
        (1, [("answers", "has 1 item(s); at least 2 required")]),  # minItems 2: one below
        (2, []),  # exactly the least
        (16, []),  # exactly the most
        (17, [("answers", "has 17 item(s); at most 16 allowed")]),  # maxItems 16: one above
    ],
)
def test_the_number_of_answers_at_its_bounds(n: int, errors: list[tuple[str, str]]) -> None:
    answers = [{"agent_id": f"agent-{i}", "text": "One.", "correct": False} for i in range(n)]
    assert schema_errors(case(answers=answers)) == errors


def test_errors_inside_answers_name_the_answer_by_its_index() -> None:
    answers = [{"agent_id": "a", "text": "One."}, {"agent_id": "b", "text": "One.", "correct": 1}]
    assert schema_errors(case(answers=answers)) == [
        ("answers[0].correct", "required field is missing"),
        ("answers[1].correct", "1 is not of type boolean"),
    ]


def test_a_source_object_is_described_by_the_branch_it_was_meant_for() -> None:
    """``source`` is one of "original" or an object. An object cannot be the constant: its errors are the object
    branch's, named inside the source, not "is not valid under any of the given schemas"."""
    no_url = source()
    del no_url["url"]
    assert schema_errors(case(source=no_url)) == [("source.url", "required field is missing")]
    assert schema_errors(case(source=source(dataset=5))) == [("source.dataset", "5 is not of type string")]
    licence = "'GPL' is not one of Apache-2.0, MIT, CC-BY-4.0, CC-BY-SA-4.0, CC0-1.0"
    assert schema_errors(case(source=source(license="GPL"))) == [("source.license", licence)]
    assert schema_errors(case(source=source(url="no uri"))) == [("source.url", "'no uri' is not a 'uri'")]


def test_every_error_of_the_branch_meant_is_listed() -> None:
    # an object with two faults, both in the object branch: both named, not one picked as the best match
    two = source(dataset=5)
    del two["url"]
    assert schema_errors(case(source=two)) == [
        ("source.dataset", "5 is not of type string"),
        ("source.url", "required field is missing"),
    ]
    extra = source(extra=1)  # an unknown key in the object branch
    message = "Additional properties are not allowed ('extra' was unexpected)"
    assert schema_errors(case(source=extra)) == [("source", message)]


@pytest.mark.parametrize("value", [5, None, "foo", ["original"]])
def test_a_source_that_fits_neither_branch_gets_the_best_match(value: Any) -> None:
    # a value other than "original" that is no object is of the wrong kind for both branches
    assert schema_errors(case(source=value)) == [("source", "'original' was expected")]


@pytest.mark.parametrize("url", ["https://example.org/x", "doi:10.1000/182", "urn:isbn:0451450523"])
def test_a_valid_uri_beside_another_error_adds_no_error_of_its_own(url: str) -> None:
    """The detailed validator checks "uri" as the fast one does: a valid URL is no error there either, so the only
    error listed is the real one (the question missing)."""
    doc = case(source=source(url=url))
    del doc["question"]
    assert schema_errors(doc) == [("question", "required field is missing")]


@pytest.mark.parametrize(("url", "valid"), [("a:b", True), ("a: b", False), ("ab", False), ("a:b\n", False)])
def test_the_uri_pattern_at_its_edges(url: str, valid: bool) -> None:
    # a scheme, a colon, then at least one character that is not white space, up to the very end
    assert bool(validate.URI.match(url)) is valid
    assert (schema_errors(case(source=source(url=url))) == []) is valid


def test_a_branch_rejects_a_value_of_the_wrong_kind_only_at_its_top() -> None:
    """An error of "type", "const" or "enum" on the branch's own value says the value was never meant for it; the same
    error on a field inside the value (a path) says the value was meant for it, with a wrong field."""
    from jsonschema import Draft202012Validator

    def errors(schema: dict[str, Any], value: Any) -> list[Any]:
        return list(Draft202012Validator(schema).iter_errors(value))

    for schema, value in (({"enum": ["a"]}, "b"), ({"const": "a"}, "b"), ({"type": "object"}, "b")):
        (err,) = errors(schema, value)
        assert validate._rejects_shape(err), schema
    (inner,) = errors({"properties": {"k": {"enum": ["a"]}}}, {"k": "b"})
    assert not validate._rejects_shape(inner)
    (length,) = errors({"minLength": 2}, "b")  # the right kind, wrong in its size
    assert not validate._rejects_shape(length)


class _Full:
    """A detailed validator that finds nothing, or runs out of stack."""

    def __init__(self, recursion: bool) -> None:
        self.recursion = recursion

    def iter_errors(self, _: Any) -> Any:
        if self.recursion:
            raise RecursionError
        return iter(())


@pytest.mark.parametrize(
    ("doc", "field"), [(case(question=5), "question"), ([1], "(case)"), (case(source=source(url=7)), "source")]
)
def test_when_the_detailed_validator_runs_out_of_stack_the_fast_ones_field_is_named(
    monkeypatch: pytest.MonkeyPatch, doc: Any, field: str
) -> None:
    monkeypatch.setattr(validate, "_full_validator", lambda: _Full(recursion=True))
    assert schema_errors(doc) == [(field, "value nested too deeply to validate")]


def test_when_the_validators_disagree_the_fast_ones_message_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(validate, "_full_validator", lambda: _Full(recursion=False))
    assert schema_errors(case(question=5)) == [("question", '5 is not of type "string"')]  # jsonschema-rs's words
    long_name = "x" * 300  # the fast validator's message names the key: cut to 200 characters, the last three "..."
    doc = case()
    doc[long_name] = 1
    (got,) = schema_errors(doc)
    assert got[0] == "(case)" and len(got[1]) == 200 and got[1].endswith("...")


def test_the_real_detailed_validator_runs_when_the_fast_one_fails() -> None:
    # the message is jsonschema's, shortened by schema_message, not the fast validator's '5 is not of type "string"'
    assert schema_errors(case(question=5)) == [("question", "5 is not of type string")]


def test_the_uri_check_of_the_detailed_validator_ignores_values_that_are_not_strings() -> None:
    # url 7 fails "type": that is its one error, not a second one for the format
    validator = validate._full_validator()
    assert validator.format_checker.conforms(7, "uri")
    assert not validator.format_checker.conforms("no uri", "uri")
    assert schema_errors(case(source=source(url=7))) == [("source.url", "7 is not of type string")]


ODD_VALUES = [None, True, 0, -1, 1.5, 2**70, "", "x", "FCB-0001\n", "a:b", "a: b", "\u00e9", [], [1], {}, {"k": 1}]
"""What each field is set to in turn: every JSON kind, and the strings at the patterns' and the uri's edges."""


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(value, dict):
        out += [p for k, v in value.items() for p in _paths(v, (*path, k))]
    elif isinstance(value, list):
        out += [p for i, v in enumerate(value) for p in _paths(v, (*path, i))]
    return out


def _edited(doc: Any, path: tuple[Any, ...], edit: Any) -> Any:
    """A deep copy of ``doc`` with the value at ``path`` edited: ``edit(parent, key)`` changes it in place."""
    doc = orjson.loads(orjson.dumps(doc))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    edit(parent, path[-1])
    return doc


def _variants(doc: dict[str, Any]) -> list[Any]:
    """``doc`` with each field set to each of `ODD_VALUES`, each field removed, and a key added to each object."""
    out: list[Any] = []
    for path in _paths(doc):
        if not path:
            continue
        for odd in ODD_VALUES:
            out.append(_edited(doc, path, lambda parent, key, odd=odd: parent.__setitem__(key, odd)))
        out.append(_edited(doc, path, lambda parent, key: parent.pop(key)))
    for path in _paths(doc):
        target = orjson.loads(orjson.dumps(doc))
        for key in path:
            target = target[key]
        if isinstance(target, dict):
            out.append(_edited(doc, (*path, "zz_extra"), lambda parent, key: parent.__setitem__(key, 1)))
    return out


def _rich_cases() -> list[dict[str, Any]]:
    """The hand case, one with a source object, and the embedded set's first cases with evidence and metadata."""
    from harness.cases.reader import embedded_cases_path

    embedded = [orjson.loads(raw) for raw in embedded_cases_path().read_bytes().splitlines()]
    with_evidence = next(c for c in embedded if c.get("evidence"))
    with_metadata = next(c for c in embedded if any(a.get("metadata") for a in c["answers"]))
    return [case(), case(source=source(), tags=["a_b", "c"]), with_evidence, with_metadata]


def test_the_fast_and_the_detailed_validator_agree_on_every_variant_of_real_cases() -> None:
    """The fast validator decides; the detailed one only explains. Where they disagreed, a case one of them calls
    broken would pass (or be refused without a named field): they must give the same verdict on each variant."""
    fast, full = validate._fast_validator(), validate._full_validator()
    variants = [v for doc in _rich_cases() for v in _variants(doc)]
    assert len(variants) > 1000  # every field of four cases, each edited 17 ways
    disagree = [v for v in variants if fast.is_valid(v) != full.is_valid(v)]
    # one known difference: Python's "$" (the detailed validator's patterns) matches before a final newline, the
    # JSON Schema (ECMA-262) "$" the fast one follows does not. The fast one refuses; its words name the field.
    assert {v["id"] for v in disagree} == {"FCB-0001\n"} and not any(fast.is_valid(v) for v in disagree)
    assert {tuple(schema_errors(v)) for v in disagree} == {(("id", '"FCB-0001\\n" does not match "^FCB-[0-9]{4}$"'),)}
    assert 0 < sum(fast.is_valid(v) for v in variants) < len(variants)  # both verdicts occur


# --------------------------------------------------------------------------------------------------------------
# the line as bytes: encoding, line ending, blank, length, JSON, nesting, duplicate keys


def only(problems: list[Problem]) -> Problem:
    assert len(problems) == 1, problems
    return problems[0]


def test_a_valid_line_has_no_problem_and_gives_its_labels() -> None:
    raw = line(case())
    problems, labels = check(raw, line_no=7)
    assert problems == [] and labels is not None
    assert (labels.line, labels.case_id, labels.category) == (7, "FCB-0001", "majority_wrong_fact")
    assert labels.content_hash == content_hash(orjson.loads(raw))
    assert labels.content_hash == hashlib.sha256(orjson.dumps(case(), option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def test_a_last_line_without_a_newline_is_read_as_well() -> None:
    problems, labels = check(line(case()).rstrip(b"\n"))
    assert problems == [] and labels is not None


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            b"\xef\xbb\xbf" + line(case()),
            "line starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM",
        ),
        (line(case())[:-1] + b"\r\n", "CRLF line ending; cases.jsonl uses LF line endings"),
        (b"\n", "blank line; every line must hold one case"),
        (b"", "blank line; every line must hold one case"),
        (b"  \t \n", "blank line; every line must hold one case"),
    ],
)
def test_a_line_that_is_no_case_at_all_is_one_problem_of_the_line(raw: bytes, message: str) -> None:
    problems, labels = check(raw, line_no=4)
    assert labels is None
    assert only(problems) == Problem(PATH, 4, "(line)", message)
    assert str(problems[0]) == f"{PATH}:4: (line): {message}"


def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_refused() -> None:
    # "{}" then spaces, MAX_LINE_BYTES bytes in all before the newline: JSON for an empty object, so it is read and
    # reaches the schema (its first missing field is "answers"); one space more is over the limit
    at_limit = b"{}" + b" " * (MAX_LINE_BYTES - 2) + b"\n"
    problems, labels = check(at_limit, line_no=2)
    assert labels is None and problems[0] == Problem(PATH, 2, "answers", "required field is missing")
    over = b"{}" + b" " * (MAX_LINE_BYTES - 1) + b"\n"
    size = f"{MAX_LINE_BYTES + 1:,}"
    assert size == "4,194,305"  # 4 * 1024 * 1024 + 1
    message = f"line is {size} bytes, over the 4,194,304-byte limit"
    assert check(over, line_no=2) == ([Problem(PATH, 2, "(line)", message)], None)


def test_only_the_newline_is_taken_off_the_end_of_a_line() -> None:
    # a case followed by " X": invalid JSON (trailing characters), whatever letters it ends with
    for tail in (b" X", b" XX", b" x"):
        problems, labels = check(line(case()).rstrip(b"\n") + tail + b"\n", line_no=3)
        assert labels is None and only(problems).message.startswith("invalid JSON: ")


def test_invalid_json_says_so_with_the_parsers_reason() -> None:
    problems, labels = check(b'{"id": "FCB-0001",\n', line_no=9)
    problem = only(problems)
    assert labels is None and (problem.line, problem.field) == (9, "(line)")
    assert problem.message.startswith("invalid JSON: ") and len(problem.message) > len("invalid JSON: ")


def test_a_line_past_the_parsers_depth_limit_is_too_deep_not_invalid() -> None:
    # orjson refuses more than 1,024 levels as "depth limit": the line is well formed, only too deep
    raw = b"[" * 1100 + b"]" * 1100 + b"\n"
    assert check(raw, line_no=5) == ([Problem(PATH, 5, "(line)", "the line is nested more than 100 levels deep")], None)


def nested(levels: int) -> Any:
    """A value of ``levels`` arrays, one inside the other: nested(1) is [], nested(2) is [[]]."""
    value: Any = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_nesting_of_exactly_the_limit_passes_to_the_schema_and_one_level_more_is_refused() -> None:
    """The case object is level 1, so tags = nested(MAX_DEPTH - 1) reaches level 100: allowed (the schema then says
    tags[0] is no string). One level more is too deep, named by its top-level key."""
    assert MAX_DEPTH == 100
    problems, labels = check(line(case(tags=nested(MAX_DEPTH - 1))), line_no=3)
    assert labels is None and only(problems).field == "tags[0]"
    too_deep = check(line(case(tags=nested(MAX_DEPTH))), line_no=3)
    assert too_deep == ([Problem(PATH, 3, "tags", "value is nested more than 100 levels deep")], None)


def test_a_top_level_array_too_deep_is_named_as_the_case() -> None:
    assert check(line(nested(MAX_DEPTH + 1)), line_no=1) == (
        [Problem(PATH, 1, "(case)", "value is nested more than 100 levels deep")],
        None,
    )
    problems, _ = check(line(nested(MAX_DEPTH)), line_no=1)  # exactly 100 levels: only the schema's error
    assert only(problems) == Problem(
        PATH, 1, "(case)", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[... is not of type object"
    )


def test_a_line_with_many_brackets_that_nest_shallowly_is_not_too_deep() -> None:
    # 101 empty arrays side by side: 102 opening brackets with the object, but only 3 levels
    problems, labels = check(line(case(tags=[[] for _ in range(101)])), line_no=1)
    assert labels is None and len(problems) >= 1
    assert all(p.field.startswith("tags") and "nested" not in p.message for p in problems)


def test_a_key_given_twice_is_named_with_its_field() -> None:
    raw = line(case())
    twice = raw.replace(b'"id": "FCB-0001"', b'"id": "FCB-0001", "id": "FCB-0002"')
    message = "duplicate key 'id' in one object (JSON would keep only the last value)"
    assert check(twice, line_no=8) == ([Problem(PATH, 8, "id", message)], None)
    inner = raw.replace(b'"agent_id": "b"', b'"agent_id": "b", "agent_id": "c"')
    message = "duplicate key 'agent_id' in one object (JSON would keep only the last value)"
    assert check(inner, line_no=8) == ([Problem(PATH, 8, "answers[1].agent_id", message)], None)


# --------------------------------------------------------------------------------------------------------------
# the schema's and the label rules' problems, warnings, duplicate ids


def test_every_schema_error_is_a_problem_of_its_line_and_no_labels() -> None:
    doc = case(question="", expected_risk="huge")
    problems, labels = check(line(doc), line_no=11)
    assert labels is None
    assert problems == [
        Problem(PATH, 11, "expected_risk", "'huge' is not one of low, medium, high"),
        Problem(PATH, 11, "question", "has 0 character(s); at least 1 required"),
    ]


def test_a_broken_label_rule_is_an_error_and_gives_no_labels() -> None:
    # majority_correct true needs 60% correct; 0 of 2 is 0%. majority_wrong_fact needs it false too.
    problems, labels = check(line(case(majority_correct=True)), line_no=6)
    assert labels is None
    assert problems == [
        Problem(PATH, 6, "majority_correct", "true needs at least 60% correct answers; 0 of 2 answers correct"),
        Problem(PATH, 6, "majority_correct", "majority_wrong_fact needs majority_correct false, not true"),
    ]


def test_a_departing_risk_is_a_warning_that_keeps_the_labels_unless_strict() -> None:
    raw = line(case(expected_risk="medium"))
    message = "medium departs from high, the risk of category majority_wrong_fact"
    problems, labels = check(raw, line_no=5, strict=False)
    assert problems == [Problem(PATH, 5, "expected_risk", message, warning=True)]
    assert labels is not None and labels.expected_risk == "medium"
    assert str(problems[0]) == f"{PATH}:5: expected_risk: warning: {message}"
    strict, labels = check(raw, line_no=5, strict=True)  # --strict: the same problem is an error
    assert strict == [Problem(PATH, 5, "expected_risk", message, warning=False)] and labels is None


def test_an_id_seen_on_an_earlier_line_is_a_duplicate_naming_that_line() -> None:
    first: dict[str, int] = {}
    assert check(line(case()), line_no=3, first=first)[1] is not None
    assert first == {"FCB-0001": 3}
    problems, labels = check(line(case(question="Another?")), line_no=9, first=first)
    assert labels is None
    assert problems == [Problem(PATH, 9, "id", "duplicate id FCB-0001 (first on line 3)")]
    assert first == {"FCB-0001": 3}  # the first line stays the one named
    # another id is no duplicate, and the same line read again (a resumed scan) is not one of itself
    assert check(line(case(id="FCB-0002")), line_no=10, first=first)[0] == []
    assert check(line(case()), line_no=3, first=first)[0] == []
    assert first == {"FCB-0001": 3, "FCB-0002": 10}


def test_a_duplicate_id_beside_a_warning_keeps_both_and_gives_no_labels() -> None:
    first = {"FCB-0001": 1}
    problems, labels = check(line(case(expected_risk="low")), line_no=2, first=first)
    assert labels is None
    assert [(p.field, p.warning) for p in problems] == [("expected_risk", True), ("id", False)]
