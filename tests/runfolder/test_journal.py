"""The journal (`harness.runfolder.journal`) at unit level: the record a finished case writes, the reader that
refuses a broken line naming the file, the line and the field, cuts a torn last line off and loses nothing else,
the writer that scrubs secrets and names the file when a write fails, and the rewrite into the cases file's order.

Journals are written here as the harness writes them: `record` for each finished case, `JournalWriter` appending
the lines; hand-edited lines are appended as a user would edit the file."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from harness.errors import RunError, RunLoadError
from harness.runfolder.journal import (
    JournalWriter,
    checked_records,
    in_file_order,
    outcome_of,
    read_journal,
    record,
    record_problem,
    scrub_record,
)
from harness.types import CaseLabels, DetectorError, ItemKey, Outcome, Prediction

SECRET = "s3cr3t-Token-9"


def labels(
    case_id: str = "FCB-0001",
    *,
    content_hash: str = "0123456789abcdef",
    category: str = "echo_cascade",
    expected: str = "high",
    tags: tuple[str, ...] = (),
) -> CaseLabels:
    return CaseLabels(
        line=1,
        case_id=case_id,
        content_hash=content_hash,
        category=category,
        expected_risk=expected,  # type: ignore[arg-type]
        majority_correct=False,
        n_answers=3,
        has_evidence=False,
        families=(),
        families_complete=False,
        any_saw_other_answers=False,
        any_shared_context=False,
        tags=tags,
        source_dataset="original",
        source_item=case_id,
    )


def sound() -> dict[str, Any]:
    """A sound prediction record, as `record` writes one (a fresh dict each call)."""
    rec = record(
        labels(),
        Prediction("medium", score=0.625, extra={"usage": {"prompt_tokens": 1234, "completion_tokens": 56}}),
        None,
        2,
        0.5,
    )
    return dict(rec)


def sound_error() -> dict[str, Any]:
    """A sound error record, as `record` writes one."""
    return dict(record(labels(), None, DetectorError("timeout", "no reply within 30 s", attempts=4), 4, 30.25))


def write_journal(path: Path, records: list[dict[str, Any]]) -> None:
    writer = JournalWriter(path)
    try:
        for rec in records:
            writer.write(rec)  # type: ignore[arg-type]
    finally:
        writer.close()


# ---- record: one line per finished case --------------------------------------------------------------------------


def test_a_prediction_record_holds_the_labels_the_answer_and_its_cost_in_the_journal_s_order() -> None:
    lab = labels("FCB-0042", content_hash="feedc0de00000042", category="genuine_disagreement", expected="medium",
                 tags=("arithmetic", "origin_assembled"))  # fmt: skip
    extra = {"why": "two camps", "usage": {"prompt_tokens": 1234, "completion_tokens": 56}}
    rec = record(lab, Prediction("high", score=0.875, extra=extra, attempts=9), None, 3, 1.23456789)
    assert list(rec) == ["id", "hash", "category", "expected", "origin", "attempts", "latency_s", "risk", "score",
                         "response", "error"]  # fmt: skip
    assert rec == {
        "id": "FCB-0042",
        "hash": "feedc0de00000042",
        "category": "genuine_disagreement",
        "expected": "medium",
        "origin": "assembled",
        "attempts": 3,  # the attempts given, not the prediction's own
        "latency_s": 1.234568,  # 1.23456789 to six decimals
        "risk": "high",
        "score": 0.875,
        "response": extra,
        "error": None,
    }
    assert record_problem(rec) is None


def test_an_untagged_case_has_no_origin_and_several_origin_tags_count_as_the_least_real() -> None:
    rec = record(labels(tags=("arithmetic",)), Prediction("low"), None, 1, 0.0)
    assert "origin" not in rec
    assert rec["score"] is None and rec["response"] == {}
    both = record(labels(tags=("origin_natural", "origin_constructed")), Prediction("low"), None, 1, 0.0)
    assert both["origin"] == "constructed"


def test_a_case_s_cluster_key_rides_after_its_origin_and_a_case_alone_has_none() -> None:
    rec = record(labels(tags=("origin_natural",)), Prediction("low"), None, 1, 0.0, cluster="gsm8k:17")
    assert list(rec)[:6] == ["id", "hash", "category", "expected", "origin", "cluster"]
    assert rec["cluster"] == "gsm8k:17" and record_problem(rec) is None
    assert "cluster" not in record(labels(), Prediction("low"), None, 1, 0.0, cluster=None)


def test_a_cached_answer_records_no_detector_time() -> None:
    rec = record(labels(), Prediction("low", score=0.125, cached=True, attempts=0), None, 0, 2.5)
    assert list(rec) == ["id", "hash", "category", "expected", "attempts", "latency_s", "cached", "risk", "score",
                         "response", "error"]  # fmt: skip
    assert rec["cached"] is True
    assert rec["latency_s"] == 0.0  # 2.5 s were spent, none of it by the detector
    assert rec["attempts"] == 0
    assert record_problem(rec) is None
    fresh = record(labels(), Prediction("low", cached=False), None, 1, 2.5)
    assert "cached" not in fresh and fresh["latency_s"] == 2.5


def test_an_error_record_holds_the_error_and_no_risk() -> None:
    error = DetectorError("invalid_response", "not JSON", attempts=2, raw="<html>", traceback="Traceback: x")
    rec = record(labels(), None, error, 2, 0.0625)
    assert list(rec) == ["id", "hash", "category", "expected", "attempts", "latency_s", "risk", "score", "error"]
    assert rec["risk"] is None and rec["score"] is None and "response" not in rec
    assert rec["error"] == {"kind": "invalid_response", "message": "not JSON", "raw": "<html>",
                            "traceback": "Traceback: x"}  # fmt: skip
    assert rec["latency_s"] == 0.0625
    bare = record(labels(), None, DetectorError("connection", "refused"), 1, 0.0)
    assert bare["error"] == {"kind": "connection", "message": "refused"}  # no raw, no traceback: no keys
    assert record_problem(rec) is None and record_problem(bare) is None


# ---- record_problem: the first wrong field of a line -------------------------------------------------------------

KINDS = "invalid_response, timeout, connection, http_status, detector_exception"


def _with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = dict(base)
    for key, value in changes.items():
        if value is _DROP:
            out.pop(key, None)
        else:
            out[key] = value
    return out


_DROP = object()

PROBLEMS: list[tuple[str, dict[str, Any], tuple[str, str]]] = [
    ("id missing", {"id": _DROP}, ("id", "None is not a non-empty string")),
    ("id empty", {"id": ""}, ("id", "'' is not a non-empty string")),
    ("id a number", {"id": 7}, ("id", "7 is not a non-empty string")),
    ("hash empty", {"hash": ""}, ("hash", "'' is not a non-empty string")),
    ("hash a list", {"hash": ["ab"]}, ("hash", "['ab'] is not a non-empty string")),
    ("category missing", {"category": _DROP}, ("category", "None is not a non-empty string")),
    ("category a number", {"category": 3.5}, ("category", "3.5 is not a non-empty string")),
    ("expected unknown", {"expected": "severe"}, ("expected", "'severe' is not one of low, medium, high")),
    ("expected missing", {"expected": _DROP}, ("expected", "None is not one of low, medium, high")),
    ("origin unknown", {"origin": "made-up"},
     ("origin", "'made-up' is not one of assembled, constructed, natural, unknown")),
    ("origin null", {"origin": None}, ("origin", "None is not one of assembled, constructed, natural, unknown")),
    ("cluster empty", {"cluster": ""}, ("cluster", "'' is not a non-empty string")),
    ("cluster null", {"cluster": None}, ("cluster", "None is not a non-empty string")),
    ("cluster a number", {"cluster": 4}, ("cluster", "4 is not a non-empty string")),
    ("risk null without error", {"risk": None},
     ("risk", "None is not one of low, medium, high (and the record has no error)")),
    ("risk unknown", {"risk": "extreme"},
     ("risk", "'extreme' is not one of low, medium, high (and the record has no error)")),
    ("score above 1", {"score": 1.5}, ("score", "1.5 is not a number in [0, 1] or null")),
    ("score below 0", {"score": -0.25}, ("score", "-0.25 is not a number in [0, 1] or null")),
    ("score a string", {"score": "0.5"}, ("score", "'0.5' is not a number in [0, 1] or null")),
    ("score a boolean", {"score": True}, ("score", "True is not a number in [0, 1] or null")),
    ("response a string", {"response": "text"},
     ("response", "'text' is not a JSON object (what else the detector returned)")),
    ("response null", {"response": None},
     ("response", "None is not a JSON object (what else the detector returned)")),
    ("attempts 0", {"attempts": 0}, ("attempts", "0 is not a whole number of 1 or more")),
    ("attempts a float", {"attempts": 2.0}, ("attempts", "2.0 is not a whole number of 1 or more")),
    ("attempts a boolean", {"attempts": True}, ("attempts", "True is not a whole number of 1 or more")),
    ("attempts null", {"attempts": None}, ("attempts", "None is not a whole number of 1 or more")),
    ("cached not true", {"cached": "yes", "attempts": 0}, ("attempts", "0 is not a whole number of 1 or more")),
    ("cached, attempts negative", {"cached": True, "attempts": -1},
     ("attempts", "-1 is not a whole number of 0 or more")),
    ("latency negative", {"latency_s": -0.5}, ("latency_s", "-0.5 is not a number of seconds, 0 or more")),
    ("latency infinite", {"latency_s": float("inf")}, ("latency_s", "inf is not a number of seconds, 0 or more")),
    ("latency nan", {"latency_s": float("nan")}, ("latency_s", "nan is not a number of seconds, 0 or more")),
    ("latency a string", {"latency_s": "1"}, ("latency_s", "'1' is not a number of seconds, 0 or more")),
    ("latency a boolean", {"latency_s": False}, ("latency_s", "False is not a number of seconds, 0 or more")),
    ("latency null", {"latency_s": None}, ("latency_s", "None is not a number of seconds, 0 or more")),
    ("hash a long value, previewed", {"hash": ["x" * 50]}, ("hash", "['" + "x" * 35 + "... is not a non-empty string")),
    ("two problems: the first field", {"hash": "", "risk": "extreme"}, ("hash", "'' is not a non-empty string")),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "expected"), [p[1:] for p in PROBLEMS], ids=[p[0] for p in PROBLEMS])
def test_a_wrong_field_of_a_prediction_record_is_named_with_what_is_wrong(
    changes: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert record_problem(_with(sound(), **changes)) == expected


ERROR_PROBLEMS: list[tuple[str, dict[str, Any], tuple[str, str]]] = [
    ("error with a risk", {"risk": "low"}, ("risk", "a record with an error has no risk (null)")),
    ("error a string", {"error": "boom"}, ("error.kind", f"'boom' is not an error of a known kind ({KINDS})")),
    ("error of no kind", {"error": {}}, ("error.kind", f"{{}} is not an error of a known kind ({KINDS})")),
    ("error of another kind", {"error": {"kind": "gremlin"}},
     ("error.kind", f"{{'kind': 'gremlin'}} is not an error of a known kind ({KINDS})")),
    ("error false", {"error": False}, ("error.kind", f"False is not an error of a known kind ({KINDS})")),
    ("error with a score", {"score": 2}, ("score", "2 is not a number in [0, 1] or null")),
    ("error with a sound score", {"score": 0.5}, ("score", "a record with an error has no score (null)")),
]  # fmt: skip


@pytest.mark.parametrize(("changes", "expected"), [p[1:] for p in ERROR_PROBLEMS], ids=[p[0] for p in ERROR_PROBLEMS])
def test_a_wrong_field_of_an_error_record_is_named_with_what_is_wrong(
    changes: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert record_problem(_with(sound_error(), **changes)) == expected


def test_a_line_that_is_no_object_is_named_as_the_line() -> None:
    assert record_problem([1, 2]) == ("(line)", "[1, 2] is not a JSON object")
    assert record_problem("FCB-0001") == ("(line)", "'FCB-0001' is not a JSON object")
    assert record_problem(None) == ("(line)", "None is not a JSON object")


SOUND_EDGES: list[tuple[str, dict[str, Any]]] = [
    ("score 0", {"score": 0.0}),
    ("score 1", {"score": 1.0}),
    ("score an integer 1", {"score": 1}),
    ("score null", {"score": None}),
    ("no response", {"response": _DROP}),
    ("every origin", {"origin": "natural"}),
    ("origin unknown written out", {"origin": "unknown"}),
    ("no origin", {"origin": _DROP}),
    ("no attempts", {"attempts": _DROP}),
    ("one attempt", {"attempts": 1}),
    ("cached, no attempts", {"cached": True, "attempts": 0}),
    ("cached false, one attempt", {"cached": False, "attempts": 1}),
    ("no latency", {"latency_s": _DROP}),
    ("latency 0", {"latency_s": 0}),
    ("latency a large float", {"latency_s": 1e300}),
]


@pytest.mark.parametrize("changes", [e[1] for e in SOUND_EDGES], ids=[e[0] for e in SOUND_EDGES])
def test_a_sound_record_at_the_edges_of_each_range_passes(changes: dict[str, Any]) -> None:
    assert record_problem(_with(sound(), **changes)) is None


def test_a_hand_written_error_line_needs_no_risk_score_attempts_or_latency() -> None:
    line = {"id": "FCB-0009", "hash": "ab", "category": "echo_cascade", "expected": "high",
            "error": {"kind": "detector_exception", "message": "boom"}}  # fmt: skip
    assert record_problem(line) is None
    assert record_problem({**line, "cached": True, "attempts": 0, "risk": None}) is None


# ---- outcome_of: what a record stands for ------------------------------------------------------------------------


def test_the_outcome_of_a_prediction_carries_its_tokens() -> None:
    rec = _with(sound(), id="FCB-0007", hash="cafe", attempts=3, latency_s=0.75)
    assert outcome_of(rec) == Outcome(  # type: ignore[arg-type]
        case_id="FCB-0007",
        content_hash="cafe",
        risk="medium",
        score=0.625,
        error_kind=None,
        attempts=3,
        latency_s=0.75,
        prompt_tokens=1234,
        completion_tokens=56,
        error_message=None,
        cached=False,
    )


def test_the_outcome_of_an_error_has_no_risk_and_keeps_the_message() -> None:
    assert outcome_of(sound_error()) == Outcome(  # type: ignore[arg-type]
        case_id="FCB-0001",
        content_hash="0123456789abcdef",
        risk=None,
        score=None,
        error_kind="timeout",
        attempts=4,
        latency_s=30.25,
        error_message="no reply within 30 s",
    )


def test_the_outcome_of_a_bare_hand_written_line_takes_the_defaults() -> None:
    line = {"id": "FCB-0009", "hash": "ab", "category": "echo_cascade", "expected": "high",
            "error": {"kind": "detector_exception"}}  # fmt: skip
    out = outcome_of(line)  # type: ignore[arg-type]
    assert out == Outcome("FCB-0009", "ab", None, None, "detector_exception", 1, 0.0, 0, 0, "", False)
    assert isinstance(out.latency_s, float) and isinstance(out.attempts, int)
    numbered = outcome_of({**line, "error": {"kind": "timeout", "message": 42}})  # type: ignore[arg-type]
    assert numbered.error_message == "42"


def test_a_cached_outcome_is_marked_and_an_integer_latency_reads_as_seconds() -> None:
    rec = _with(sound(), cached=True, attempts=0, latency_s=2)
    out = outcome_of(rec)  # type: ignore[arg-type]
    assert out.cached is True and out.attempts == 0
    assert out.latency_s == 2.0 and isinstance(out.latency_s, float)


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        ({"prompt_tokens": 0, "completion_tokens": 7}, (0, 7)),
        ({"prompt_tokens": 11}, (11, 0)),
        ({"completion_tokens": 13}, (0, 13)),
        ({"prompt_tokens": -5, "completion_tokens": 3}, (0, 3)),  # a negative count is no count
        ({"prompt_tokens": True, "completion_tokens": 2}, (0, 2)),  # a boolean is no count
        ({"prompt_tokens": 3.0, "completion_tokens": "4"}, (0, 0)),  # neither a float nor a string
        (["prompt_tokens", 5], (0, 0)),  # usage that is no object
        (None, (0, 0)),
    ],
)
def test_tokens_are_counted_only_when_they_are_whole_numbers_of_0_or_more(usage: Any, tokens: tuple[int, int]) -> None:
    out = outcome_of(_with(sound(), response={"usage": usage}))  # type: ignore[arg-type]
    assert (out.prompt_tokens, out.completion_tokens) == tokens


@pytest.mark.parametrize(
    ("usage", "estimated"),
    [
        ({"prompt_tokens": 120, "completion_tokens": 300, "estimated_tokens": 420}, 420),
        ({"prompt_tokens": 120, "completion_tokens": 7, "estimated_tokens": 120}, 120),
        ({"prompt_tokens": 12, "completion_tokens": 7}, 0),  # the reply gave both: nothing estimated
        ({"estimated_tokens": -3}, 0),
    ],
)
def test_the_tokens_counted_at_their_most_are_read_back(usage: dict[str, int], estimated: int) -> None:
    """Issue 45, item 2: a reply without usable usage is journaled at its worst, with ``estimated_tokens``."""
    out = outcome_of(_with(sound(), response={"usage": usage}))  # type: ignore[arg-type]
    assert out.estimated_tokens == estimated


def test_a_record_without_a_response_counts_no_tokens() -> None:
    out = outcome_of(_with(sound(), response=_DROP))  # type: ignore[arg-type]
    assert (out.prompt_tokens, out.completion_tokens) == (0, 0)


# ---- read_journal: outcomes by case id, a torn last line cut off -------------------------------------------------


def _three(path: Path) -> list[dict[str, Any]]:
    """Three finished cases (one an error), then case 2 again (resumed with --retry-errors): the later line wins."""
    records = [
        dict(record(labels("FCB-0001"), Prediction("high", score=0.75), None, 1, 0.5)),
        dict(record(labels("FCB-0002", expected="low"), None, DetectorError("http_status", "503"), 3, 1.5)),
        dict(record(labels("FCB-0003", expected="medium"), Prediction("medium"), None, 2, 0.25)),
        dict(record(labels("FCB-0002", expected="low"), Prediction("low", score=0.125), None, 1, 0.125)),
    ]
    write_journal(path, records)
    return records


def test_a_journal_reads_as_outcomes_by_case_id_and_a_later_line_wins(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _three(path)
    before = path.read_bytes()
    outcomes = read_journal(path)
    assert list(outcomes) == ["FCB-0001", "FCB-0002", "FCB-0003"]
    assert outcomes == {
        "FCB-0001": Outcome("FCB-0001", "0123456789abcdef", "high", 0.75, None, 1, 0.5),
        "FCB-0002": Outcome("FCB-0002", "0123456789abcdef", "low", 0.125, None, 1, 0.125),
        "FCB-0003": Outcome("FCB-0003", "0123456789abcdef", "medium", None, None, 2, 0.25),
    }
    assert path.read_bytes() == before  # a sound journal is left as it is
    assert read_journal(str(path)) == outcomes  # a path as text reads the same


def test_a_missing_journal_reads_as_no_outcome_and_is_not_made(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    assert read_journal(path) == {}
    assert not path.exists()


def test_a_torn_last_line_is_cut_off_and_every_finished_case_kept(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _three(path)
    whole = path.read_bytes()
    torn = orjson.dumps(record(labels("FCB-0004"), Prediction("low"), None, 1, 0.5))[:-9]  # no newline: cut short
    path.write_bytes(whole + torn)
    outcomes = read_journal(path)
    assert list(outcomes) == ["FCB-0001", "FCB-0002", "FCB-0003"]
    assert path.read_bytes() == whole  # truncated to its last complete line, so resuming appends after it
    assert read_journal(path) == outcomes


def test_without_repair_a_torn_last_line_is_left_in_place_and_still_not_read(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _three(path)
    path.write_bytes(path.read_bytes() + b'{"id": "FCB-00')
    before = path.read_bytes()
    outcomes = read_journal(path, repair=False)
    assert list(outcomes) == ["FCB-0001", "FCB-0002", "FCB-0003"]
    assert path.read_bytes() == before


def test_a_journal_of_one_torn_line_reads_as_nothing_and_is_emptied(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(b'{"id": "FCB-0001", "ha')
    assert read_journal(path) == {}
    assert path.read_bytes() == b""


def test_a_journal_reached_through_a_link_is_read_but_never_truncated_through_it(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.jsonl"
    _three(target)
    link = tmp_path / "predictions.jsonl"
    link.symlink_to(target)
    assert list(read_journal(link)) == ["FCB-0001", "FCB-0002", "FCB-0003"]  # nothing to cut: read as it is
    target.write_bytes(target.read_bytes() + b'{"id"')
    before = target.read_bytes()
    with pytest.raises(RunError) as info:
        read_journal(link)
    assert str(info.value) == f"{link} is a symbolic link; a run never writes through one: replace it by the file"
    assert target.read_bytes() == before


def _orjson_message(line: bytes) -> str:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return str(exc)
    raise AssertionError(f"{line!r} is JSON")


def test_a_line_that_is_no_json_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _three(path)
    with open(path, "ab") as f:
        f.write(b"{not json}\n")
    before = path.read_bytes()
    with pytest.raises(RunLoadError) as info:
        read_journal(path)
    assert str(info.value) == f"{path}:5: (line): unreadable journal record: {_orjson_message(b'{not json}')}"
    assert isinstance(info.value.__cause__, orjson.JSONDecodeError)
    assert path.read_bytes() == before  # nothing is cut from a journal that has a complete but broken line


def test_an_empty_line_is_an_unreadable_record(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _three(path)
    path.write_bytes(b"\n" + path.read_bytes())
    with pytest.raises(RunLoadError) as info:
        read_journal(path)
    assert str(info.value) == f"{path}:1: (line): unreadable journal record: {_orjson_message(b'')}"


def test_a_wrong_field_is_named_by_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    records = _three(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = orjson.dumps({**records[2], "score": 7}) + b"\n"  # the third line, edited by hand
    path.write_bytes(b"".join(lines))
    with pytest.raises(RunLoadError) as info:
        read_journal(path)
    assert str(info.value) == f"{path}:3: score: 7 is not a number in [0, 1] or null"


def test_checked_records_yields_each_sound_record_in_order_then_stops_at_the_first_wrong_line(tmp_path: Path) -> None:
    first, second = sound(), sound_error()
    lines = [orjson.dumps(first), orjson.dumps(second), b'{"id": "FCB-0003"}', b"[]"]
    path = tmp_path / "journal.jsonl"  # named in the message; never read here
    found = []
    with pytest.raises(RunLoadError) as info:
        for rec in checked_records(path, lines):
            found.append(rec)
    assert found == [first, second]
    assert str(info.value) == f"{path}:3: hash: None is not a non-empty string"
    assert list(checked_records(path, [])) == []


# ---- in_file_order: the journal a run leaves follows the cases file ----------------------------------------------


def _line(case_id: str, risk: str = "low") -> bytes:
    return orjson.dumps(record(labels(case_id), Prediction(risk), None, 1, 0.5)) + b"\n"  # type: ignore[arg-type]


def test_the_journal_is_rewritten_in_the_cases_file_s_order_with_the_later_line_and_others_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "predictions.jsonl"
    c, a_old, other1, b, a_new, listed, other2 = (
        _line("c-3"), _line("a-1", "high"), _line("zz-other"), _line("b-2"), _line("a-1", "medium"), b"[1, 2]\n",
        _line("aa-other"),
    )  # fmt: skip
    path.write_bytes(c + a_old + other1 + b + a_new + listed + other2)
    in_file_order(path, ["c-3", "a-1", "b-2"])  # the cases file's order, not the alphabet's
    assert path.read_bytes() == c + a_new + b + other1 + listed + other2


def test_a_journal_already_in_order_is_left_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(_line("c-3") + _line("a-1") + _line("zz-other"))
    before = path.stat().st_ino
    in_file_order(path, ["c-3", "a-1", "b-2"])
    assert path.stat().st_ino == before  # not even rewritten (an atomic write makes a new file)
    assert path.read_bytes() == _line("c-3") + _line("a-1") + _line("zz-other")


def test_ordering_a_missing_journal_makes_none(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    in_file_order(path, ["a-1"])
    assert not path.exists()


# ---- the writer: a line per case, secrets scrubbed, the file named when a write fails ----------------------------


def test_the_writer_appends_one_line_per_record_each_on_disk_at_once(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(_line("FCB-0000"))  # a resumed run appends after what is there
    writer = JournalWriter(path)
    first = record(labels("FCB-0001"), Prediction("high", extra={1: "one", "seen": {3}}), None, 1, 0.5)
    written = writer.write(first)
    assert written is first  # no secrets: the record itself
    expected_first = orjson.dumps({**first, "response": {"1": "one", "seen": "{3}"}}) + b"\n"  # keys as text, repr
    assert path.read_bytes() == _line("FCB-0000") + expected_first  # flushed: on disk before close
    second = record(labels("FCB-0002"), None, DetectorError("timeout", "slow"), 2, 3.0)
    writer.write(second)
    writer.close()
    assert writer._file.closed
    assert path.read_bytes() == _line("FCB-0000") + expected_first + orjson.dumps(second) + b"\n"


def test_a_writer_that_keeps_its_records_holds_each_item_s_last_as_written(tmp_path: Path) -> None:
    """keep=True: each item's latest record, scrubbed as the file has it; by default nothing is kept."""
    plain = JournalWriter(tmp_path / "plain.jsonl")
    plain.write(record(labels("FCB-0001"), Prediction("high"), None, 1, 0.5))
    plain.close()
    assert plain.kept is None
    writer = JournalWriter(tmp_path / "predictions.jsonl", secrets=["sk-hidden"], keep=True)
    first = record(labels("FCB-0001"), None, DetectorError("timeout", "slow"), 2, 3.0)
    again = record(labels("FCB-0001"), Prediction("low", extra={"echo": "sk-hidden"}), None, 1, 0.5)
    other = record(labels("FCB-0002"), Prediction("high"), None, 1, 0.25)
    for rec in (first, again, other):
        writer.write(rec)
    writer.close()
    on_disk = [orjson.loads(line) for line in (tmp_path / "predictions.jsonl").read_bytes().splitlines()]
    assert writer.kept == {ItemKey("FCB-0001"): on_disk[1], ItemKey("FCB-0002"): on_disk[2]}
    assert on_disk[1]["response"] == {"echo": "[REDACTED]"}


def test_a_new_journal_has_the_usual_permissions_and_is_never_inherited(tmp_path: Path) -> None:
    import fcntl

    reference = tmp_path / "reference"
    os.close(os.open(reference, os.O_WRONLY | os.O_CREAT, 0o644))  # 0o644 less the umask, as any file is made
    writer = JournalWriter(tmp_path / "predictions.jsonl")
    try:
        assert (tmp_path / "predictions.jsonl").stat().st_mode == reference.stat().st_mode
        assert fcntl.fcntl(writer._file.fileno(), fcntl.F_GETFD) & fcntl.FD_CLOEXEC
    finally:
        writer.close()


def test_the_writer_never_writes_through_a_link(tmp_path: Path) -> None:
    target = tmp_path / "target.jsonl"
    target.write_bytes(b"")
    link = tmp_path / "predictions.jsonl"
    link.symlink_to(target)
    with pytest.raises(RunError) as info:
        JournalWriter(link)
    assert str(info.value) == f"{link} is a symbolic link; a run never writes through one: replace it by the file"


def test_a_journal_that_cannot_be_opened_is_named_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "no-such-folder" / "predictions.jsonl"
    with pytest.raises(RunError) as info:
        JournalWriter(path)
    assert str(info.value) == f"{path}: {os.strerror(errno.ENOENT)}"


def test_secrets_a_detector_echoes_are_scrubbed_from_free_text_only(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    writer = JournalWriter(path, secrets=["", SECRET, "high", "hash"])
    lab = labels("FCB-0001", content_hash="hashhigh" + SECRET)  # a secret in the hash: the hash stays
    pred = Prediction("high", score=0.5, extra={"note": f"my key is {SECRET}", "hash": "high", "n": 5})
    written = writer.write(record(lab, pred, None, 1, 0.5))
    err = DetectorError("http_status", f"401 for {SECRET}", raw=f"raw {SECRET}", traceback=f"tb {SECRET}")
    written_error = writer.write(record(labels("FCB-0002"), None, err, 1, 0.5))
    writer.close()
    r = "[REDACTED]"
    assert written["hash"] == "hashhigh" + SECRET and written["risk"] == "high" and written["expected"] == "high"
    assert written["response"] == {"note": f"my key is {r}", "hash": r, "n": 5}  # keys and numbers stay
    assert written_error["error"] == {"kind": "http_status", "message": f"401 for {r}", "raw": f"raw {r}",
                                      "traceback": f"tb {r}"}  # fmt: skip
    on_disk = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert on_disk == [written, written_error]


def test_a_secret_that_is_also_an_error_kind_never_changes_the_kind() -> None:
    rec = record(labels(), None, DetectorError("timeout", "timeout after 30 s", raw="timeout"), 3, 30.0)
    scrubbed = scrub_record(rec, ["timeout"])
    assert scrubbed["error"] == {"kind": "timeout", "message": "[REDACTED] after 30 s", "raw": "[REDACTED]"}
    assert rec["error"] == {"kind": "timeout", "message": "timeout after 30 s", "raw": "timeout"}  # a copy scrubbed


def test_scrub_record_leaves_a_record_without_response_or_error_as_it_is() -> None:
    rec = _with(sound(), response=_DROP)
    assert scrub_record(rec, [SECRET]) == rec  # type: ignore[arg-type]
    odd = {**sound_error(), "error": "not an object"}
    assert scrub_record(odd, [SECRET]) == odd  # type: ignore[arg-type]
    nulled = {**sound(), "response": None}
    assert scrub_record(nulled, [SECRET]) == nulled  # type: ignore[arg-type]


def test_a_writer_without_secrets_writes_records_as_they_are(tmp_path: Path) -> None:
    for secrets in (None, [], [""]):
        path = tmp_path / f"journal-{len(secrets or [])}-{secrets is None}.jsonl"
        writer = JournalWriter(path, secrets=secrets)
        rec = record(labels(), Prediction("low", extra={"note": SECRET}), None, 1, 0.5)
        assert writer.write(rec) is rec
        writer.close()
        assert orjson.loads(path.read_bytes()) == rec


class _FailingFile:
    """Stands for the journal's open file: its writes, flushes or closing fail as a full disk or a lost mount do."""

    def __init__(self, write: OSError | None = None, flush: OSError | None = None, close: OSError | None = None):
        self.errors = {"write": write, "flush": flush, "close": close}
        self.calls: list[str] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if self.errors[name] is not None:
            raise self.errors[name]

    def write(self, data: bytes) -> int:
        self._call("write")
        return len(data)

    def flush(self) -> None:
        self._call("flush")

    def fileno(self) -> int:
        return self._real.fileno()

    def close(self) -> None:
        self._real.close()
        self._call("close")


def _failing(writer: JournalWriter, fake: _FailingFile) -> _FailingFile:
    fake._real = writer._file  # type: ignore[attr-defined]
    writer._file = fake  # type: ignore[assignment]
    return fake


def test_a_write_that_fails_without_a_file_name_is_said_with_the_journal_s(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    writer = JournalWriter(path)
    cause = OSError(errno.ENOSPC, "No space left on device")
    _failing(writer, _FailingFile(flush=cause))
    with pytest.raises(OSError) as info:
        writer.write(sound())  # type: ignore[arg-type]
    assert (info.value.errno, info.value.strerror, info.value.filename) == (errno.ENOSPC, "No space left on device",
                                                                            str(path))  # fmt: skip
    assert info.value.__cause__ is cause
    writer._file._real.close()  # type: ignore[attr-defined]


def test_a_write_error_that_names_its_file_is_raised_as_it_is(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "predictions.jsonl")
    cause = OSError(errno.EACCES, "Permission denied", "/mnt/elsewhere")
    _failing(writer, _FailingFile(write=cause))
    with pytest.raises(OSError) as info:
        writer.write(sound())  # type: ignore[arg-type]
    assert info.value is cause
    writer._file._real.close()  # type: ignore[attr-defined]


def test_closing_names_the_journal_when_the_last_flush_fails_and_closes_the_file_anyway(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    writer = JournalWriter(path)
    fake = _failing(writer, _FailingFile(flush=OSError(errno.EIO, "Input/output error"), close=OSError(errno.EIO, "x")))
    with pytest.raises(OSError) as info:
        writer.close()
    assert (info.value.errno, info.value.strerror, info.value.filename) == (errno.EIO, "Input/output error", str(path))
    assert fake.calls == ["flush", "close"]  # the close's own error is dropped: the flush's says where
    assert fake._real.closed  # type: ignore[attr-defined]


def test_closing_flushes_and_syncs_then_closes(tmp_path: Path) -> None:
    writer = JournalWriter(tmp_path / "predictions.jsonl")
    fake = _failing(writer, _FailingFile())
    writer.close()
    assert fake.calls == ["flush", "close"]
    assert fake._real.closed  # type: ignore[attr-defined]
