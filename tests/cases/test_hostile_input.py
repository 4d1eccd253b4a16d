"""Hostile and broken cases files (tests/data/broken/, plus a 20 MB line and deep nesting made here): each gives
PATH:LINE: field: message and a non-zero exit, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

BROKEN = ROOT / "tests" / "data" / "broken"
PROBLEM = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<field>\S+): (?P<message>.+)$")
EXPECTED = {  # file -> {(line, field)}: where each problem is, worked out from how the files were made
    "invalid_json.jsonl": {(2, "(line)"), (3, "(line)")},
    "bom.jsonl": {(1, "(line)")},
    "crlf.jsonl": {(1, "(line)"), (2, "(line)")},
    "blank_lines.jsonl": {(2, "(line)"), (3, "(line)")},
    "wrong_types.jsonl": {(2, "answers[0].correct"), (2, "answers[1].text"), (2, "majority_correct")},
    "out_of_range.jsonl": {(2, "answers"), (3, "answers"), (4, "question"), (4, "answers[0].agent_id")},
    "duplicate_ids.jsonl": {(3, "id")},
    "non_utf8.jsonl": {(2, "(line)")},
    "invariants.jsonl": {(2, "majority_correct"), (3, "answers[1].agent_id")},
}


def _problems(stderr: str, path: Path) -> set[tuple[int, str]]:
    found = set()
    for line in stderr.splitlines():
        if (m := PROBLEM.match(line)) and m["path"] == str(path):
            found.add((int(m["line"]), m["field"]))
    return found


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_broken_file_is_reported_by_line_and_field(name: str) -> None:
    path = BROKEN / name
    for command in (["validate", str(path)], ["eval", str(path), "-q", "--results", "/nonexistent-never-made"]):
        proc = run_cli(*command)
        assert proc.returncode == 1 and "Traceback" not in proc.stderr
        findings = proc.stdout if command[0] == "validate" else proc.stderr  # validate's findings are its output
        assert _problems(findings, path) == EXPECTED[name]


def test_huge_line_and_deep_nesting(tmp_path: Path) -> None:
    good = write_cases(tmp_path / "good.jsonl", 2).read_text().splitlines()
    path = tmp_path / "hostile.jsonl"
    with open(path, "w") as f:
        f.write(good[0] + "\n")
        f.write('{"id": "FCB-0009", "question": "' + "x" * 20_000_000 + '"}\n')  # a 20 MB line
        f.write("[" * 100_000 + "]" * 100_000 + "\n")  # nesting far past any parser's limit
        f.write('{"id": ' + "[" * 900 + "]" * 900 + "}\n")  # deep, but within the parser's limit
        f.write(good[1] + "\n")
    proc = run_cli("validate", str(path))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    found = _problems(proc.stdout, path)
    assert {line for line, _ in found} == {2, 3, 4}  # lines 1 and 5 are valid
    assert {(2, "(line)"), (3, "(line)"), (4, "id")} <= found  # line 4 also lacks its required fields
    assert "2 valid case(s)" in proc.stdout
