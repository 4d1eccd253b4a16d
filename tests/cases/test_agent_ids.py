"""Agent ids that look alike are errors (issue 24, item 17): zero-width and other invisible characters, case and
compatibility forms, and Latin mixed with Cyrillic or Greek letters, each named by file, line and field."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from casegen import make_case
from conftest import run_cli

from harness.cases.agent_ids import agent_id_problems

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

LOOK_ALIKES = [
    ("agent-1", "agent-1\u200b"),  # a zero-width space at the end
    ("agent-1", "agent\u2060-1"),  # a word joiner inside
    ("agent-1", "AGENT-1"),
    ("agent-1", "ａｇｅｎｔ-1"),  # fullwidth letters
    ("agent-1", "\u0430gent-1"),  # a Cyrillic a
]


def _case_with_ids(i: int, first: str, second: str) -> dict:
    case = make_case(i, random.Random(i))
    case["answers"][0]["agent_id"], case["answers"][1]["agent_id"] = first, second
    return case


def test_look_alike_agent_ids_are_errors_naming_file_line_and_field(tmp_path: Path) -> None:
    cases = tmp_path / "cases.jsonl"
    lines = [_case_with_ids(i, a, b) for i, (a, b) in enumerate([("agent-1", "agent-2"), *LOOK_ALIKES])]
    cases.write_text("".join(json.dumps(c, ensure_ascii=True) + "\n" for c in lines))
    proc = run_cli("validate", str(cases))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    flagged = [line for line in proc.stdout.splitlines() if "].agent_id: " in line]
    assert [line.split(": ", 2)[:2] for line in flagged] == [
        [f"{cases}:{n}", "answers[1].agent_id"] for n in range(2, 2 + len(LOOK_ALIKES))
    ], proc.stdout
    assert "\u200b" not in proc.stdout and "\\u200b" in proc.stdout  # the invisible character is shown as an escape


@pytest.mark.parametrize("agent_id", ["agent\u200b-1", "\u0430gent-1", "x\u00ad"])
def test_an_id_invisible_in_part_or_of_mixed_scripts_is_an_error_alone(agent_id: str) -> None:
    assert [i for i, _ in agent_id_problems(["other", agent_id])] == [1]


@pytest.mark.parametrize("ids", [["agent-1", "agent-2"], ["агент-1", "агент-2"], ["α", "β"], ["José", "Jose"]])
def test_distinct_ids_pass(ids: list[str]) -> None:
    assert agent_id_problems(ids) == []
