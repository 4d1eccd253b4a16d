"""`harness.runfolder.cases`: the cases a report shows beside a run's predictions, from the run's own scan of the
file (unparsed, each the very line the run read) or from the file while it is still the one the run read."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import orjson
import pytest
from casegen import write_cases

from harness.cases.reader import scan
from harness.cases.validate import content_hash
from harness.runfolder.cases import WINDOW, SpooledTexts, case_texts


def _file_with_a_broken_line(tmp_path: Path) -> tuple[Path, list[bytes]]:
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    lines = cases.read_bytes().splitlines()
    # spaced out, keys reordered: the text as read must come back, not a re-serialised copy
    spaced = orjson.loads(lines[2])
    lines[2] = b'{ "id" : ' + orjson.dumps(spaced.pop("id")) + b", " + orjson.dumps(spaced)[1:]
    lines.insert(1, b"{not json")
    cases.write_bytes(b"\n".join(lines) + b"\n")
    return cases, lines


def test_the_run_s_scan_gives_each_wanted_case_as_the_line_it_read(tmp_path: Path) -> None:
    cases, lines = _file_with_a_broken_line(tmp_path)
    valid = [line for line in lines if line != b"{not json"]
    by_id = {orjson.loads(line)["id"]: line for line in valid}
    scanned = scan(cases, spool=True)
    try:
        ids = list(by_id)
        wanted = {ids[0]: content_hash(orjson.loads(by_id[ids[0]])), ids[1]: None, ids[2]: "0" * 16, "FCB-9999": None}
        texts = SpooledTexts(scanned, wanted)
        # the matching hash and the unpinned id are given; a hash the scan does not hold and an unknown id are not
        assert sorted(texts) == sorted(ids[:2]) and len(texts) == 2
        assert ids[0] in texts and ids[2] not in texts and "FCB-9999" not in texts
        document = orjson.dumps({i: texts[i] for i in reversed(ids[:2])})  # each read from the spool when asked for
    finally:
        scanned.close()
    assert orjson.loads(document) == {i: orjson.loads(by_id[i]) for i in ids[:2]}
    assert by_id[ids[1]] in document  # the spaced line, byte for byte
    assert b"{not json" not in document


def test_a_scan_that_kept_no_cases_is_refused(tmp_path: Path) -> None:
    scanned = scan(write_cases(tmp_path / "cases.jsonl", 2))
    with pytest.raises(ValueError, match="spool=True"):
        SpooledTexts(scanned, {})


def test_the_file_read_again_gives_its_cases_only_while_it_is_the_file_the_run_read(tmp_path: Path) -> None:
    cases, lines = _file_with_a_broken_line(tmp_path)
    first = orjson.loads(lines[0])
    wanted = {first["id"]: content_hash(first)}
    digest = hashlib.sha256(cases.read_bytes()).hexdigest()
    texts, note = case_texts(str(cases), wanted, digest)
    assert texts == {first["id"]: first} and note == ""
    texts, note = case_texts(str(cases), wanted, "f" * 64)
    assert texts == {} and note.startswith("case text unavailable") and "it changed since the run" in note


def test_every_case_in_any_order_is_its_line_whatever_its_length(tmp_path: Path) -> None:
    """Cases asked for out of file order, one longer than the spool's read window, the last line of the file."""
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    lines = cases.read_bytes().splitlines()
    long_case = orjson.loads(lines[17])
    for answer in long_case["answers"]:  # each answer's text at most 16,000 characters
        answer["text"] = "why? " * 3000
    assert len(orjson.dumps(long_case)) > WINDOW  # longer than a window on its own
    lines[17] = orjson.dumps(long_case)
    cases.write_bytes(b"\n".join(lines) + b"\n")
    by_id = {orjson.loads(line)["id"]: line for line in lines}
    order = list(by_id)
    random.Random(4).shuffle(order)
    scanned = scan(cases, spool=True)
    try:
        texts = SpooledTexts(scanned, dict.fromkeys(by_id))
        assert {i: bytes(orjson.dumps(texts[i])) for i in order} == by_id
        assert [bytes(orjson.dumps(texts[i])) for i in sorted(by_id)] == [by_id[i] for i in sorted(by_id)]
    finally:
        scanned.close()
