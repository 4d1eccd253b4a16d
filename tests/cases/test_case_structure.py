"""What orjson accepts silently in a case line (issue 15, items 6 and 18): nesting past the limit and a key given
twice are `PATH:LINE: field: message` errors, never a traceback, in `fcb validate` and `fcb eval` alike."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from casegen import make_case
from conftest import run_cli


def _case(i: int) -> dict:
    return make_case(i, random.Random(i))


def _nested(depth: int) -> str:
    return "[" * depth + '"x"' + "]" * depth


def _with_tags(tags_json: str) -> str:
    case = _case(0)  # a valid case; its tags replaced by raw JSON text
    text = json.dumps(case)
    start = text.index('"tags": [')
    end = text.index("]", start) + 1
    return text[:start] + '"tags": ' + tags_json + text[end:]


@pytest.mark.parametrize("depth", [150, 600, 1023, 1100])  # within orjson's 1,024 levels, and past them
@pytest.mark.parametrize("command", ["validate", "eval"])
def test_a_case_nested_too_deep_is_an_error_for_its_line(tmp_path: Path, depth: int, command: str) -> None:
    path = tmp_path / "cases.jsonl"
    good = json.dumps(_case(1))
    path.write_text(good + "\n" + _with_tags(_nested(depth)) + "\n")
    proc = run_cli(command, str(path), *(["-d", "builtin:agreement"] if command == "eval" else []))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr  # invalid cases, not a crash (3)
    findings = proc.stdout if command == "validate" else proc.stderr
    field = "tags" if depth < 1024 else "(line)"  # past orjson's own limit the line cannot be parsed at all
    what = "value" if depth < 1024 else "the line"
    assert f"{path}:2: {field}: {what} is nested more than 100 levels deep" in findings


def test_nesting_up_to_the_limit_reaches_the_schema(tmp_path: Path) -> None:
    # tags nested 99 deep sit at level 100 (the case object is level 1): within the limit, so the schema judges it
    path = tmp_path / "cases.jsonl"
    path.write_text(_with_tags(_nested(99)) + "\n")
    proc = run_cli("validate", str(path))
    assert proc.returncode == 1 and f"{path}:1: tags[0]: " in proc.stdout and "nested" not in proc.stdout


@pytest.mark.parametrize(
    ("edit", "field", "key"),
    [
        (lambda t: t.replace('"category": ', '"category": "echo_cascade", "category": ', 1), "category", "category"),
        (lambda t: t.replace('"text": ', '"text": "a", "text": ', 2), "answers[0].text", "text"),
        (
            lambda t: t.replace('"model_family": ', '"model_family" : "x", "model_family": ', 1),
            "answers[0].metadata.model_family",
            "model_family",
        ),
    ],
    ids=["top-level", "in-an-answer", "white-space-before-the-colon"],
)
def test_a_key_given_twice_is_an_error_naming_it(tmp_path: Path, edit, field: str, key: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(_case(1)) + "\n" + edit(json.dumps(_case(2))) + "\n")
    proc = run_cli("validate", str(path))
    assert proc.returncode == 1, proc.stdout
    assert f"{path}:2: {field}: duplicate key '{key}' in one object" in proc.stdout
    assert "1 valid case(s)" in proc.stdout


def test_text_that_looks_like_a_key_is_not_a_duplicate(tmp_path: Path) -> None:
    case = _case(3)
    case["answers"][0]["text"] = 'He wrote "text" : twice, "text": see?'  # an escaped quote, a colon
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(case) + "\n")
    proc = run_cli("validate", str(path))
    assert proc.returncode == 0, proc.stdout
