"""ASCII problems and ``--fix-ascii``: the round trip changes exactly the transliterable characters, in place, and
nothing else of the file (byte for byte); what has no transliteration is reported and left alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.scenario.ascii import fix_text, scan_text, suggest
from harness.scenario.validate import check_file, fix_ascii

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "data" / "scenarios"


@pytest.mark.parametrize(
    ("char", "ascii"),
    [
        ("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'), ("\u201e", '"'),  # quotes
        ("\u2013", "-"), ("\u2014", "--"), ("\u2212", "-"), ("\u2011", "-"),  # dashes, minus
        ("é", "e"), ("Å", "A"), ("ñ", "n"), ("ç", "c"), ("ß", "ss"), ("ø", "o"), ("Ł", "L"), ("æ", "ae"),  # letters
        ("\u2026", "..."), ("\u00a0", " "),  # NFKD compatibility forms
        ("😀", None), ("→", None), ("中", None), ("\u200b", None), ("\x07", None),  # need a person
    ],
)  # fmt: skip
def test_suggestions(char: str, ascii: str | None) -> None:
    assert suggest(char) == ascii


def _replace_all(text: str, table: dict[str, str]) -> str:
    for old, new in table.items():
        text = text.replace(old, new)
    return text


def test_fix_round_trip_is_byte_exact_outside_the_fixed_characters(tmp_path: Path) -> None:
    path = tmp_path / "non_ascii.json"
    shutil.copy(SCENARIOS / "non_ascii.json", path)
    before = path.read_text(encoding="utf-8")
    fixed, problem = fix_ascii(path)
    assert problem is None and len(fixed) == 16
    after = path.read_text(encoding="utf-8")
    # the same text with each character (or the one escape) replaced, JSON-escaped where needed
    table = {
        "\u2018": "'", "\u2019": "'", "\u2014": "--", "\u2026": "...", "é": "e", "\u2013": "-", "â": "a",
        "ü": "u", "\u00a0": " ", "\\u2019": "'", "\u201c": '\\"', "\u201d": '\\"',
    }  # fmt: skip
    assert after == _replace_all(before, table)
    assert after.isascii()
    assert check_file(path).findings == []  # José became Jose everywhere: name, speaker, valuation keys
    doc = json.loads(after)
    assert doc["participants"][1]["stated_goal"] == 'Keep the "catering" clients.'
    assert doc["participants"][0]["stated_goal"] == "Keep the ovens and the bakery's recipe book."
    assert fix_ascii(path) == ([], None)  # nothing left to do: the file is not rewritten again
    assert path.read_text(encoding="utf-8") == after


def test_unfixable_characters_are_reported_and_left(tmp_path: Path) -> None:
    text = '{\r\n  "a": "caf\\u00e9 \\ud83d\\ude00 \u2192",\t"b" : [1.50, "x\u2014y"]\r\n}'  # CRLF, tab, 1.50 kept
    issues, duplicates = scan_text(text)
    assert duplicates == []
    assert [(i.pointer, i.offset, i.char, i.suggestion) for i in issues] == [
        ("/a", 3, "é", "e"),
        ("/a", 5, "😀", None),  # a surrogate pair is one character
        ("/a", 7, "→", None),
        ("/b/1", 1, "\u2014", "--"),
    ]
    assert issues[3].line == 2 and issues[0].line == 2 and issues[0].column == 12  # where the escape for e-acute starts
    fixed, done = fix_text(text, issues)
    assert len(done) == 2
    assert fixed == '{\r\n  "a": "cafe \\ud83d\\ude00 \u2192",\t"b" : [1.50, "x--y"]\r\n}'
    assert json.loads(fixed) == {"a": "cafe 😀 →", "b": [1.5, "x--y"]}


def test_bom_and_duplicate_keys(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"id": "x", "id": "y"}')
    messages = [(f.pointer, f.message) for f in check_file(path).findings]
    assert ("", "the file starts with a UTF-8 byte-order mark (U+FEFF); remove it (--fix-ascii)") in messages
    assert any(p == "/id" and m.startswith("duplicate key") for p, m in messages)
    fixed, _ = fix_ascii(path)
    assert len(fixed) == 1 and path.read_bytes() == b'{"id": "x", "id": "y"}'


def test_cli_fix_ascii(tmp_path: Path) -> None:
    path = tmp_path / "non_ascii.json"
    shutil.copy(SCENARIOS / "non_ascii.json", path)
    before = subprocess.run(
        [sys.executable, "-m", "harness.scenario.commands", "validate", str(path)], capture_output=True, text=True
    )
    assert before.returncode == 1
    proc = subprocess.run(
        [sys.executable, "-m", "harness.scenario.commands", "validate", "--fix-ascii", str(path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{path}: /description: fixed '\u2014' -> '--' at offset 32" in proc.stdout
    assert f"{path}: valid: 0 error(s), 0 warning(s)" in proc.stdout
    assert not list(tmp_path.glob(".*.tmp"))  # the atomic write left no temporary file


def test_a_final_newline_in_a_string_is_one_ascii_problem(tmp_path: Path) -> None:
    # Python's "$" matches before a final newline, so jsonschema takes "Bakery\n" for printable ASCII while the
    # fast validator (JSON Schema's "$") does not: the file gets exactly one finding, from the ASCII check, and the
    # cross-field rules still run (the id below is not the file's stem).
    doc = json.loads((SCENARIOS / "logroll_two.json").read_text())
    doc["name"] = "Bakery\n"
    path = tmp_path / "other_stem.json"
    path.write_text(json.dumps(doc, indent=2))
    findings = check_file(path).findings
    assert [f.pointer for f in findings] == ["/name", "/id"]
    assert "'\\n' (U+000A control character)" in findings[0].message and "rewrite by hand" in findings[0].message
