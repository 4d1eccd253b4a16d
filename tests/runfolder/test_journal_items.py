"""The journal of a run with epochs or probes (`harness.runfolder.journal`, `harness.runfolder.read`): item lines
written by `record` with their item fields, checked field by field, read back by item with a later line winning,
and refused by every reader that keeps one line a case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from harness.errors import RunLoadError
from harness.runfolder.journal import JournalWriter, in_file_order, read_items, read_journal, record, record_problem
from harness.runfolder.read import item_records, journal_records
from harness.types import DetectorError, ItemKey, Outcome, Prediction
from tests.runfolder.test_journal import labels


def _write(path: Path, records: list[Any]) -> None:
    writer = JournalWriter(path)
    try:
        for rec in records:
            writer.write(rec)
    finally:
        writer.close()


def test_an_item_record_holds_its_item_fields_after_the_labels_and_a_plain_record_none() -> None:
    rec = record(labels(), Prediction("low"), None, 1, 0.5, {"epoch": 2, "variant": "order", "permutation": [1, 0, 2]})
    assert list(rec)[:7] == ["id", "hash", "category", "expected", "epoch", "variant", "permutation"]
    assert (rec["epoch"], rec["variant"], rec["permutation"]) == (2, "order", [1, 0, 2])
    assert record_problem(rec) is None
    plain = record(labels(), Prediction("low"), None, 1, 0.5)
    assert not {"epoch", "variant", "permutation"} & set(plain)


@pytest.mark.parametrize(
    ("fields", "field", "words"),
    [
        ({"epoch": 0}, "epoch", "0 is not a whole number of 1 or more"),
        ({"epoch": True}, "epoch", "True is not a whole number"),
        ({"epoch": "2"}, "epoch", "is not a whole number"),
        ({"variant": "reversed"}, "variant", "is not one of order, names, evidence-order"),
        ({"variant": None}, "variant", "None is not one of"),
        ({"variant": "names", "permutation": [0]}, "permutation", "only an order or evidence-order variant"),
        ({"permutation": [0, 1]}, "permutation", "only an order or evidence-order variant"),
        ({"variant": "order", "permutation": [0, 0]}, "permutation", "is not a permutation of 0..n-1"),
        ({"variant": "order", "permutation": [1, 2]}, "permutation", "is not a permutation of 0..n-1"),
        ({"variant": "evidence-order", "permutation": "10"}, "permutation", "is not a permutation"),
    ],
)
def test_a_wrong_item_field_is_named_with_what_is_wrong(fields: dict[str, Any], field: str, words: str) -> None:
    rec = dict(record(labels(), Prediction("low"), None, 1, 0.5))
    rec.update(fields)
    problem = record_problem(rec)
    assert problem is not None
    assert problem[0] == field
    assert words in problem[1]


ORDER = {"epoch": 1, "variant": "order", "permutation": [2, 0, 1]}


def _items_journal(path: Path) -> None:
    """Case 1 in epochs 1 and 2 and its order variant of epoch 1; epoch 2 asked again (resumed): the later wins."""
    lab = labels("FCB-0001")
    _write(
        path,
        [
            record(lab, Prediction("high", score=0.75), None, 1, 0.5, {"epoch": 1}),
            record(lab, None, DetectorError("timeout", "slow"), 2, 3.0, {"epoch": 2}),
            record(lab, Prediction("low", score=0.25), None, 1, 0.5, ORDER),
            record(lab, Prediction("medium", score=0.5), None, 1, 0.25, {"epoch": 2}),
        ],
    )


def test_items_read_back_by_case_epoch_and_variant_a_later_line_winning(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _items_journal(path)
    items = read_items(path)
    assert list(items) == [ItemKey("FCB-0001", 1, None), ItemKey("FCB-0001", 2, None), ItemKey("FCB-0001", 1, "order")]
    h = "0123456789abcdef"
    assert items[ItemKey("FCB-0001", 2)] == Outcome("FCB-0001", h, "medium", 0.5, None, 1, 0.25, epoch=2)
    assert items[ItemKey("FCB-0001", 1, "order")] == Outcome("FCB-0001", h, "low", 0.25, None, 1, 0.5,
                                                             variant="order")  # fmt: skip


def test_a_plain_journal_reads_as_one_item_a_case(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _write(path, [record(labels("A"), Prediction("low"), None, 1, 0.5), record(labels("B"), Prediction("high"),
                                                                              None, 1, 0.5)])  # fmt: skip
    assert list(read_items(path)) == [ItemKey("A", 1, None), ItemKey("B", 1, None)]
    assert read_items(tmp_path / "missing.jsonl") == {}


def test_readers_that_keep_one_line_a_case_refuse_an_items_journal_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _items_journal(path)
    with pytest.raises(RunLoadError, match=r"predictions\.jsonl:1: epoch: .*--epochs or --probe"):
        read_journal(path)
    with pytest.raises(RunLoadError, match=r"predictions\.jsonl:1: epoch: .*read_items"):
        journal_records(tmp_path, scoped=False)


def test_a_probe_only_journal_is_refused_at_its_first_variant_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    lab = labels("A")
    _write(path, [record(lab, Prediction("low"), None, 1, 0.5), record(lab, Prediction("low"), None, 1, 0.5,
                                                                      {"variant": "names"})])  # fmt: skip
    with pytest.raises(RunLoadError, match=r"predictions\.jsonl:2: variant: "):
        read_journal(path)
    assert list(item_records(tmp_path, scoped=False)) == [ItemKey("A", 1, None), ItemKey("A", 1, "names")]


def test_readers_of_one_record_a_case_get_the_reduced_record_never_epoch_one_alone(tmp_path: Path) -> None:
    from harness.runfolder.read import case_records, reduced_records

    lab, other = labels("A"), labels("B", expected="low")
    _write(
        tmp_path / "predictions.jsonl",
        [
            record(lab, Prediction("low", score=0.2, extra={"why": "one"}), None, 1, 0.5, {"epoch": 1}),
            record(lab, Prediction("high", score=0.8, extra={"why": "two"}), None, 1, 0.5, {"epoch": 2}),
            record(lab, Prediction("high", score=0.5, extra={"why": "three"}), None, 1, 0.5, {"epoch": 3}),
            record(lab, Prediction("low"), None, 1, 0.5, {"epoch": 1, "variant": "names"}),
            record(other, None, DetectorError("timeout", "slow"), 1, 0.5, {"epoch": 1}),
            record(other, None, DetectorError("http_status", "503"), 1, 0.5, {"epoch": 2}),
            record(other, None, DetectorError("timeout", "slow"), 1, 0.5, {"epoch": 3}),
        ],
    )
    mode = case_records(tmp_path, scoped=False, reducer="mode")
    assert mode["A"]["risk"] == "high" and mode["A"]["response"] == {"why": "two"}  # the earliest epoch saying high
    assert mode["A"]["score"] == pytest.approx(0.5)  # (0.2 + 0.8 + 0.5) / 3
    assert not {"epoch", "variant", "permutation"} & set(mode["A"])
    assert record_problem(mode["A"]) is None
    assert mode["B"]["error"] == {"kind": "timeout", "message": "slow"}  # all errored: the lowest epoch's error
    first = reduced_records(item_records(tmp_path, scoped=False), "first")
    assert (first["A"]["risk"], first["A"]["score"]) == ("low", 0.2)


def test_an_items_journal_is_rewritten_case_by_case_then_epoch_then_variant(tmp_path: Path) -> None:
    from harness.runfolder.journal import in_file_order

    path = tmp_path / "predictions.jsonl"
    a, b = labels("A"), labels("B")
    order = {"variant": "order", "permutation": [1, 0]}
    finished = [  # as a shuffled send order finishes them; B's epoch 1 answered twice (a resume): the later wins
        record(b, Prediction("low"), None, 1, 0.5, {"epoch": 2}),
        record(a, Prediction("low"), None, 1, 0.5, {"epoch": 2, **order}),
        record(b, Prediction("low"), None, 1, 0.5, {"epoch": 1}),
        record(a, Prediction("high"), None, 1, 0.5, {"epoch": 1, "variant": "names"}),
        record(a, Prediction("low"), None, 1, 0.5, {"epoch": 1}),
        record(b, Prediction("high"), None, 1, 0.5, {"epoch": 1}),
        record(a, Prediction("low"), None, 1, 0.5, {"epoch": 1, **order}),
        record(a, Prediction("low"), None, 1, 0.5, {"epoch": 2}),
    ]
    _write(path, finished)
    in_file_order(path, ["A", "B"])
    keys = [
        (r["id"], r["epoch"], r.get("variant"), r["risk"]) for r in map(orjson.loads, path.read_bytes().splitlines())
    ]
    assert keys == [
        ("A", 1, None, "low"), ("A", 1, "order", "low"), ("A", 1, "names", "high"),
        ("A", 2, None, "low"), ("A", 2, "order", "low"),
        ("B", 1, None, "high"), ("B", 2, None, "low"),
    ]  # fmt: skip


def _wrong(fields: dict[str, Any]) -> tuple[str, str] | None:
    rec = dict(record(labels(), Prediction("low"), None, 1, 0.5))
    rec.update(fields)
    return record_problem(rec)


def test_the_messages_of_a_wrong_variant_and_permutation_show_the_value_in_full() -> None:
    assert _wrong({"variant": "reversed"}) == (
        "variant",
        "'reversed' is not one of order, names, evidence-order, format, tone, length, restate, inject, duplicate",
    )
    assert _wrong({"variant": "names", "permutation": [1, 0]}) == (
        "permutation",
        "only an order or evidence-order variant has a permutation",
    )
    assert _wrong({"variant": "order", "permutation": [0, 2, 2]}) == (
        "permutation",
        "[0, 2, 2] is not a permutation of 0..n-1",
    )


@pytest.mark.parametrize(
    "perm",
    [
        [1.0, 0],  # sorted: [0, 1.0], which equals [0, 1]: only the type check refuses the float
        [True, 0],  # sorted: [0, True], which equals [0, 1]: only the type check refuses the bool
    ],
)
def test_a_permutation_holds_whole_numbers_never_floats_or_booleans(perm: list[Any]) -> None:
    assert _wrong({"variant": "evidence-order", "permutation": perm}) == (
        "permutation",
        f"{perm!r} is not a permutation of 0..n-1",
    )
    assert _wrong({"variant": "evidence-order", "permutation": [1, 2, 0]}) is None


def test_the_refusal_of_an_items_journal_says_how_to_read_it(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    lab = labels("A")
    _write(path, [record(lab, Prediction("low"), None, 1, 0.5, {"epoch": 2})])
    with pytest.raises(RunLoadError) as info:
        read_journal(path)
    assert str(info.value) == (
        f"{path}:1: epoch: the journal of a run with --epochs or --probe holds several items a case; "
        "this reader keeps one line a case (read it with read_items and reduce it: harness.epochs)"
    )


def test_read_items_cuts_a_torn_last_line_off_unless_told_not_to(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _items_journal(path)
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"id": "FCB-0001", "epo')  # a write cut short: no newline
    kept = read_items(path, repair=False)
    assert len(kept) == 3 and path.read_bytes() == whole + b'{"id": "FCB-0001", "epo'  # left in place
    assert read_items(path) == kept  # by default: the same items, and the torn line truncated away
    assert path.read_bytes() == whole


def test_read_items_names_the_file_line_and_field_of_a_wrong_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    _items_journal(path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = orjson.dumps({**orjson.loads(lines[1]), "epoch": 0}) + b"\n"  # the second line, edited by hand
    path.write_bytes(b"".join(lines))
    with pytest.raises(RunLoadError) as info:
        read_items(path)
    assert str(info.value) == f"{path}:2: epoch: 0 is not a whole number of 1 or more"


def _lines(path: Path) -> list[tuple[str, int, str | None, str]]:
    records = map(orjson.loads, path.read_bytes().splitlines())
    return [(r["id"], r.get("epoch", 0), r.get("variant"), r["risk"]) for r in records]


def test_ordering_takes_a_line_without_an_epoch_for_epoch_one_as_read_items_does(tmp_path: Path) -> None:
    # a journal merged by hand: A's epoch-1 lines without the field (a plain run's), its epoch 2 with it
    path = tmp_path / "predictions.jsonl"
    a = labels("A")
    _write(
        path,
        [
            record(a, Prediction("low"), None, 1, 0.5, {"epoch": 2}),
            record(a, Prediction("high"), None, 1, 0.5, {"variant": "names"}),
            record(a, Prediction("medium"), None, 1, 0.5),
            record(a, Prediction("high"), None, 1, 0.5, {"epoch": 3, "variant": "names"}),
            record(a, Prediction("low"), None, 1, 0.5, {"epoch": 1}),  # the same item as the line without an epoch
        ],
    )
    items = read_items(path)
    in_file_order(path, ["A"])
    assert _lines(path) == [  # 0: no epoch field
        ("A", 1, None, "low"), ("A", 0, "names", "high"), ("A", 2, None, "low"), ("A", 3, "names", "high"),
    ]  # fmt: skip
    assert read_items(path) == items


def test_a_line_of_an_unknown_variant_is_kept_after_and_never_replaces_an_item_s_line(tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    a = labels("A")
    plain = orjson.dumps(record(a, Prediction("low"), None, 1, 0.5, {"epoch": 2})) + b"\n"
    order = orjson.dumps(record(a, Prediction("medium"), None, 1, 0.5, {"epoch": 2, **ORDER_2})) + b"\n"
    edited = orjson.dumps({**orjson.loads(plain), "variant": "reversed", "risk": "high"}) + b"\n"
    first = orjson.dumps(record(a, Prediction("high"), None, 1, 0.5, {"epoch": 1})) + b"\n"
    path.write_bytes(order + plain + edited + first)
    in_file_order(path, ["A"])
    assert path.read_bytes() == first + plain + order + edited


ORDER_2 = {"variant": "order", "permutation": [1, 0]}
