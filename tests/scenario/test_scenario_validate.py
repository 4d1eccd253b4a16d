"""fcb scenario validate: every rule of the schema's description triggered by a scenario file in
tests/data/scenarios/, reported at its JSON pointer; exit codes; hostile input never gives a traceback."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import shared_file

from harness.scenario.problems import Finding
from harness.scenario.validate import check_file

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "data" / "scenarios"
E, W = "error", "warning"

# file -> the findings expected, as (pointer, severity, a fragment of the message); worked out from how each file
# was written (see the comments in the files' resources and the rule each stands for)
EXPECTED: dict[str, list[tuple[str, str, str]]] = {
    "logroll_two.json": [],
    "three_mixed.json": [],  # its latent resource is named in Bob's hidden fact and in the revelations
    "shared_raw.json": [],
    "indivisible_impasse.json": [],
    "no_resources.json": [],
    "bad_cross_rules.json": [
        ("/resources/1/name", E, "duplicate key"),
        ("/sample_turns/0/speaker", E, "'Robert' is neither a participant"),  # rule (a)
        ("/sample_turns/1/speaker", E, "did you mean 'Alice'?"),  # rule (a), wrong case
        ("/sample_turns/0/turn_number", E, "start at 1, not 2"),
        ("/sample_turns/1/turn_number", E, "does not increase"),
        ("/sample_turns/2/turn_number", E, "does not increase"),
        ("/evaluation_criteria/min_turns", E, "min_turns 30 > max_turns 24"),
        ("/resources/1/id", E, "duplicate resource id 'ovens'"),
        ("/resources/0/valuations/Robert", E, "'Robert' is not a participant"),  # rule (b)
        ("/resources/0/valuations", E, "no valuation for participant 'Bob'"),  # rule (b)
        ("/resources/1/held_by", E, "held_by 'Carol' is not a participant"),  # rule (c)
        ("/resources", W, "Bob's valuations sum to 0.5"),  # Robert's 0.5 is not Bob's
    ],
    "broken.json": [("", E, "invalid JSON")],
    "distributive.json": [("/resources", W, "single fixed pie")],
    "id_and_names.json": [
        ("/id", E, "does not match the file name's stem 'id_and_names'"),
        ("/participants/1/name", E, "both participants are named 'Sam'"),
    ],
    "schema_errors.json": [
        ("/canary_string", E, "operator field: remove before publishing"),
        ("/is_held_out", E, "operator field: remove before publishing"),
        ("/notes", E, "unknown field 'notes'"),
        ("/difficulty", E, "'hard' is not one of novice, intermediate, expert"),
        ("/resources/0/unit_label", E, "unit 'other' needs a unit_label"),
        ("/resources/0/valuations/Bob", E, "1.5 is out of range"),
        ("/resources/1/shared_mode", E, "needs a shared_mode"),
        ("/resources/2/held_by", E, "a latent resource needs held_by"),
    ],
    "latent_rules.json": [  # rule (d), each outcome
        ("/resources/1", W, "only weakly matches hidden fact /participants/0/hidden_facts/1"),
        ("/resources/1", E, "does not appear in evaluation_criteria.expected_revelations"),
        ("/resources/2", E, "(but /participants/1/hidden_facts/2 does: is held_by right?)"),
        ("/resources/2", E, "does not appear in evaluation_criteria.expected_revelations"),
        ("/resources/3", W, "stated by 2 hidden facts"),
        ("/resources/4", W, "only weakly matches expected revelation /evaluation_criteria/expected_revelations/2"),
    ],
    "warnings_only.json": [
        ("/resources/0/shared_mode", W, "shared_mode is ignored"),
        ("/resources/1/unit", W, "unit 'percent' without a description"),
        ("/resources/2/polarity", W, "both_benefit"),
        ("/resources/3/polarity", W, "joint_obligation"),
        ("/resources", W, "Alice's valuations sum to 0.9; normalized_share expects 1"),
    ],
    "moderator_name.json": [("/participants/1/name", W, "a participant named 'Moderator'")],
    "lone_divisible.json": [("/resources", E, "a lone divisible resource is a fixed pie")],
    "mixed_basis.json": [
        ("/resources", W, "valuation_basis is mixed (raw at /resources/0)"),
        ("/resources", E, "Bob values no resource: raw valuations cannot be renormalised"),
        ("/resources", W, "single fixed pie"),
    ],
}
ASCII_POINTERS = {  # non_ascii.json: where each character outside printable ASCII is
    "/description": 4,  # two curly single quotes, an em dash, an ellipsis
    "/participants/0/name": 1,
    "/participants/0/backstory": 5,  # é, en dash, â, ü, no-break space
    "/participants/0/stated_goal": 1,  # written as the escape \u2019
    "/participants/1/stated_goal": 2,
    "/sample_turns/0/speaker": 1,
    "/resources/0/valuations/José": 1,  # a key
    "/resources/1/valuations/José": 1,
}


def _triples(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.pointer, W if f.warning else E) for f in findings]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_rule_is_reported_at_its_pointer(name: str) -> None:
    findings = check_file(SCENARIOS / name).findings
    assert Counter(_triples(findings)) == Counter((p, s) for p, s, _ in EXPECTED[name]), [str(f) for f in findings]
    for pointer, severity, fragment in EXPECTED[name]:
        assert any(
            f.pointer == pointer and (W if f.warning else E) == severity and fragment in f.message for f in findings
        ), (pointer, fragment, [f.message for f in findings])


def test_every_scenario_file_is_covered() -> None:
    assert {p.name for p in SCENARIOS.glob("*.json")} == set(EXPECTED) | {"non_ascii.json"}


def test_ascii_problems_name_character_position_and_transliteration() -> None:
    findings = check_file(SCENARIOS / "non_ascii.json").findings
    assert all(not f.warning for f in findings)
    assert Counter(f.pointer for f in findings) == Counter(ASCII_POINTERS)
    by_text = {f.message.split(" (U+")[0]: f for f in findings}
    em = by_text["'—'"]
    assert em.pointer == "/description"
    assert "U+2014 EM DASH" in em.message and "offset 32 of the string" in em.message and "write '--'" in em.message
    escaped = next(f for f in findings if f.pointer == "/participants/0/stated_goal")
    assert "U+2019" in escaped.message and "offset 29" in escaped.message and 'write "\'"' in escaped.message
    assert "line 11, column" in escaped.message
    key = next(f for f in findings if f.pointer == "/resources/0/valuations/José")
    assert "of the key 'José'" in key.message and "write 'e'" in key.message


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "harness.scenario.commands", *args], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def test_cli_exit_codes_and_output_format(tmp_path: Path) -> None:
    ok = run("validate", str(SCENARIOS / "logroll_two.json"), str(SCENARIOS / "warnings_only.json"))
    assert ok.returncode == 0, ok.stderr
    assert "warning: Alice's valuations sum to 0.9" in ok.stdout
    bad = run("validate", str(SCENARIOS / "logroll_two.json"), str(SCENARIOS / "bad_cross_rules.json"))
    assert bad.returncode == 1
    line = f"{SCENARIOS / 'bad_cross_rules.json'}: /sample_turns/0/turn_number: turn numbers start at 1, not 2"
    assert line in bad.stdout.splitlines()
    assert f"{SCENARIOS / 'bad_cross_rules.json'}: invalid: 11 error(s), 1 warning(s)" in bad.stdout
    missing = run("validate", str(SCENARIOS / "logroll_two.json"), str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "No such file" in missing.stderr
    assert run("validate").returncode == 2  # usage
    assert run("validate", str(tmp_path)).returncode == 2  # a folder


HOSTILE = {
    "empty.json": b"",
    "list.json": b"[]",
    "string.json": b'"scenario"',
    "object.json": b"{}",
    "deep.json": b"[" * 5000 + b"]" * 5000,
    "deep_field.json": b'{"id": ' + b"[" * 900 + b"]" * 900 + b"}",
    "latin1.json": '{"id": "caf\xe9"}'.encode("latin-1"),
    "bom.json": b"\xef\xbb\xbf{}",
    "nan.json": b'{"id": NaN}',
    "huge_number.json": b'{"id": 1e400}',
    "wrong_types.json": b'{"participants": "two", "resources": [1, null], "sample_turns": [{"speaker": 5}]}',
    "trailing.json": b"{} {}",
    "lone_surrogate.json": b'{"id": "\\ud800"}',
}


def test_hostile_input_never_gives_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.scenario.commands import main

    paths = []
    for name, data in sorted(HOSTILE.items()):
        paths.append(tmp_path / name)
        paths[-1].write_bytes(data)
    for command in (["validate"], ["validate", "--fix-ascii"]):
        proc = run(*command, *map(str, paths))
        assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
        for path in paths:
            assert f"{path}: invalid: " in proc.stdout
    allocation = tmp_path / "allocation.json"
    allocation.write_text('{"allocation": {}}')
    for path in paths:  # the same entry point in process: an exception would fail the test
        assert main(["analyze", str(path)]) == 1
        assert main(["score", str(path), str(allocation)]) == 1
        assert capsys.readouterr().err.startswith(f"{path}: ")


def test_schema_in_the_package_is_the_shared_schema() -> None:
    shared = shared_file("schemas", "hai-scenario.schema.json")  # a skip in a clone without ../shared, as a user's
    assert (ROOT / "harness" / "data" / "hai-scenario.schema.json").read_bytes() == shared.read_bytes()


def test_registers_on_the_fcb_parser() -> None:
    import argparse

    from harness.scenario.commands import add_scenario_parser, cmd_analyze, cmd_score, cmd_validate

    parser = argparse.ArgumentParser(prog="fcb")
    add_scenario_parser(parser.add_subparsers(dest="command", required=True))
    assert parser.parse_args(["scenario", "validate", "a.json", "--fix-ascii"]).func is cmd_validate
    assert parser.parse_args(["scenario", "analyze", "a.json", "--format", "json"]).func is cmd_analyze
    assert parser.parse_args(["scenario", "score", "a.json", "b.json"]).func is cmd_score


def _valid_scenario() -> dict:
    import json

    return json.loads((SCENARIOS / "logroll_two.json").read_text())


@pytest.mark.parametrize("field", ["name", "resources"])
def test_a_value_nested_past_the_fast_validator_s_limit_is_a_finding_at_its_field(field: str) -> None:
    from harness.scenario.schema import check_schema

    deep: list = []
    for _ in range(100_000):  # past jsonschema-rs's recursion limit, which it reports as a ValueError
        deep = [deep]
    doc = _valid_scenario()
    doc[field] = deep
    report = check_schema(doc)
    assert report.findings == [Finding(f"/{field}", "value nested too deeply to validate")]
    assert report.shape_ok is False


def test_when_the_detailed_validator_finds_nothing_the_fast_one_s_first_error_stands(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from harness.scenario import schema

    class Silent:
        def iter_errors(self, _: object) -> list:
            return []

    monkeypatch.setattr(schema, "_full_validator", Silent)
    doc = _valid_scenario()
    doc["name"] = 5
    report = schema.check_schema(doc)
    assert report.findings == [Finding("/name", '5 is not of type "string"')] and report.shape_ok is False
    doc = _valid_scenario()
    doc["name"] = "Bakery\n"  # only the ASCII pattern, which the ASCII check reports: nothing from the schema
    assert schema.check_schema(doc).findings == [] and schema.check_schema(doc).shape_ok is True
