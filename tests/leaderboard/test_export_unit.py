"""``fcb export --to parquet`` (harness/leaderboard/export.py) at unit level: a small run made in-process by a detector
whose verdicts are chosen by hand, its rows built and written, read back with pyarrow and held, column by column, to
the journal line and the case line they join and to the verdicts chosen below (issue 46). The end-to-end test
through the CLI and a served detector is tests/leaderboard/test_export.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from casegen import write_cases

import harness
from harness.errors import RunLoadError, UsageError
from harness.leaderboard import export
from harness.leaderboard.export import (
    COLUMNS,
    JSON_COLUMNS,
    METADATA_KEY,
    export_parquet,
    joined_rows,
    metadata,
    parquet_bytes,
    run_cases,
)
from harness.leaderboard.runs import read_run
from harness.types import ItemKey

pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the parquet extra) is not installed")

# write_cases(4): FCB-0001..0004 all expect high. The detector's answer on each, chosen:
ANSWER: dict[str, tuple[str | None, float | None]] = {
    "FCB-0001": ("high", 0.9),  # right
    "FCB-0002": ("low", None),  # wrong, no score
    "FCB-0003": (None, None),  # an error: a risk the contract does not know
    "FCB-0004": ("medium", 0.4),  # wrong
}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("export")
    cases = write_cases(tmp / "cases.jsonl", 4, origins=True)
    by_task = {json.loads(line)["question"]: json.loads(line)["id"] for line in cases.read_text().splitlines()}

    def assess(request: dict[str, Any]) -> dict[str, Any]:
        risk, score = ANSWER[by_task[request["task"]]]
        reply: dict[str, Any] = {"false_consensus_risk": risk or "bogus", "why": "chosen"}
        return reply if score is None else {**reply, "risk_score": score}

    common = {"n_boot": 0, "retries": 0, "progress": False, "name": "chosen"}
    plain = harness.evaluate(str(cases), assess, out=str(tmp / "plain"), **common)
    repeated = harness.evaluate(str(cases), assess, out=str(tmp / "repeated"), epochs=2, probes=("order",), **common)
    return {"tmp": tmp, "cases": cases, "plain": Path(plain.run_dir), "repeated": Path(repeated.run_dir)}


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_row_per_case_in_id_order_every_column_from_its_journal_line_and_case(made: dict[str, Path]) -> None:
    path, n = export_parquet(made["plain"])
    assert path == made["plain"] / "predictions.parquet" and n == 4
    table = pq.read_table(path)
    assert table.column_names == [name for name, _ in COLUMNS]
    rows = table.to_pylist()
    journal = {r["id"]: r for r in lines(made["plain"] / "predictions.jsonl")}
    cases = {c["id"]: c for c in lines(made["cases"])}
    assert [r["id"] for r in rows] == ["FCB-0001", "FCB-0002", "FCB-0003", "FCB-0004"]
    assert [r["predicted_risk"] for r in rows] == ["high", "low", None, "medium"]  # as chosen; the error: null
    assert [r["risk_score"] for r in rows] == [0.9, None, None, 0.4]
    assert [r["correct"] for r in rows] == [True, False, False, False]  # all expect high
    assert [r["error_kind"] is None for r in rows] == [True, True, False, True]
    for row in rows:
        rec, case = journal[row["id"]], cases[row["id"]]
        assert (row["detector"], row["content_hash"], row["category"]) == ("chosen", rec["hash"], case["category"])
        assert (row["origin"], row["expected_risk"]) == (rec["origin"], case["expected_risk"])
        for field in ("question", "ground_truth", "majority_correct", "rationale"):
            assert row[field] == case[field], field
        assert row["n_answers"] == len(case["answers"])
        assert json.loads(row["answers_json"]) == case["answers"]
        assert json.loads(row["tags_json"]) == case["tags"] and json.loads(row["source_json"]) == case["source"]
        evidence = row["evidence_json"]
        assert (None if evidence is None else json.loads(evidence)) == case.get("evidence")
        assert (row["error_kind"], row["error_message"]) == (
            (rec["error"]["kind"], rec["error"]["message"]) if rec["error"] else (None, None)
        )
        response = None if row["response_json"] is None else json.loads(row["response_json"])
        assert response == rec.get("response")  # none kept for an error
        assert (row["attempts"], row["latency_s"], row["cached"]) == (rec["attempts"], rec["latency_s"], False)
        assert (row["epoch"], row["variant"], row["permutation_json"]) == (None, None, None)  # a row per case
    assert rows[2]["error_message"] and "bogus" in rows[2]["error_message"]
    assert rows[0]["evidence_json"] is not None and rows[1]["evidence_json"] is None  # FCB-0001 alone has evidence
    assert json.loads(rows[1]["response_json"]) == {"why": "chosen"}  # the reply beyond its risk and score
    meta = json.loads(table.schema.metadata[METADATA_KEY])
    doc = json.loads((made["plain"] / "metrics.json").read_text())
    assert meta["run"] == str(made["plain"]) and meta["dataset"] == doc["dataset"]
    assert meta["detector"] == doc["detector"] and meta["complete"] is True and meta["created"] == doc["created"]
    assert meta["harness_version"] == harness.__version__ and meta["json_columns"] == list(JSON_COLUMNS)


def test_the_column_types(made: dict[str, Path]) -> None:
    import pyarrow as pa

    out = made["tmp"] / "types.parquet"
    assert export_parquet(made["plain"], out) == (out, 4) and out.is_file()  # where it was told to write
    schema = pq.read_schema(out)
    kinds = {name: str(schema.field(name).type) for name in schema.names}
    assert kinds["id"] == "string" and kinds["majority_correct"] == "bool" and kinds["n_answers"] == "int64"
    assert kinds["risk_score"] == "double" and kinds["epoch"] == "int64" and kinds["cached"] == "bool"
    assert JSON_COLUMNS == ("answers_json", "evidence_json", "tags_json", "source_json", "response_json",
                            "permutation_json", "rewrite_json")  # fmt: skip
    assert pa.types.is_string(schema.field("permutation_json").type)


def test_items_one_row_per_case_epoch_and_variant(made: dict[str, Path], tmp_path: Path) -> None:
    path, n = export_parquet(made["repeated"], tmp_path / "items.parquet", items=True)
    rows = pq.read_table(path).to_pylist()
    # 4 cases x 2 epochs, and the order probe's variant where the answers' texts differ (FCB-0004's lone
    # dissenter, in both epochs): 8 + 2 = 10
    assert n == len(rows) == 10
    order = [(r["id"], r["epoch"], r["variant"]) for r in rows]
    assert order == [
        ("FCB-0001", 1, None), ("FCB-0001", 2, None), ("FCB-0002", 1, None), ("FCB-0002", 2, None),
        ("FCB-0003", 1, None), ("FCB-0003", 2, None), ("FCB-0004", 1, None), ("FCB-0004", 1, "order"),
        ("FCB-0004", 2, None), ("FCB-0004", 2, "order"),
    ]  # fmt: skip
    variant = rows[7]
    permutation = json.loads(variant["permutation_json"])
    assert sorted(permutation) == list(range(variant["n_answers"])) and permutation != sorted(permutation)
    assert rows[6]["permutation_json"] is None and variant["predicted_risk"] == "medium"
    per_case = pq.read_table(export_parquet(made["repeated"], tmp_path / "cases.parquet")[0]).to_pylist()
    assert [(r["id"], r["epoch"]) for r in per_case] == [(f"FCB-000{i}", None) for i in range(1, 5)]


def test_a_baseline_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "base.json"
    path.write_text("{}")
    with pytest.raises(UsageError) as info:
        export_parquet(path)
    assert str(info.value) == f"{path}: a baseline file keeps no replies; export a run folder"


def test_without_pyarrow_the_user_is_told_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(UsageError) as info:
        export_parquet(tmp_path)  # said before anything is read: tmp_path holds no run
    assert str(info.value) == "--to parquet needs pyarrow, which is not installed: pip install 'fcb-harness[parquet]'"


def test_a_changed_or_moved_cases_file(made: dict[str, Path], tmp_path: Path) -> None:
    changed = tmp_path / "changed.jsonl"
    changed.write_text(made["cases"].read_text().replace("synthetic", "edited"))
    with pytest.raises(RunLoadError) as info:
        export_parquet(made["plain"], tmp_path / "x.parquet", cases=str(changed))
    message = str(info.value)
    assert message.startswith(f"{made['plain']}: case text unavailable: {changed} is not the cases file")
    assert message.endswith("; pass --cases PATH to read the cases from where they are now")
    moved = tmp_path / "moved.jsonl"
    moved.write_bytes(made["cases"].read_bytes())
    assert export_parquet(made["plain"], tmp_path / "y.parquet", cases=str(moved))[1] == 4


def test_run_cases_lists_five_missing_ids_and_counts_the_rest(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    records = {r["id"]: r for r in lines(made["plain"] / "predictions.jsonl")}
    assert sorted(run_cases(run, records, None)) == sorted(records)  # default: the file the run read
    ghosts = {f"X{i}": {"hash": "0"} for i in range(1, 8)}  # seven ids the file has not
    with pytest.raises(RunLoadError) as info:
        run_cases(run, {**records, **ghosts}, None)  # type: ignore[dict-item]
    assert str(info.value) == (
        f"{made['cases']}: no case with the id and content the run journaled for X1, X2, X3, X4, X5 and 2 more"
    )
    six = {f"X{i}": {"hash": "0"} for i in range(1, 7)}  # six: five listed and 1 more
    with pytest.raises(RunLoadError) as info:
        run_cases(run, six, None)  # type: ignore[arg-type]
    assert str(info.value).endswith("journaled for X1, X2, X3, X4, X5 and 1 more")
    five = {f"X{i}": {"hash": "0"} for i in range(1, 6)}  # exactly five: no "more"
    with pytest.raises(RunLoadError) as info:
        run_cases(run, five, None)  # type: ignore[arg-type]
    assert str(info.value).endswith("journaled for X1, X2, X3, X4, X5")


def test_a_run_that_names_no_cases_file(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    nameless = run.__class__(**{**run.__dict__, "doc": {**run.doc, "dataset": {**run.dataset, "path": None}}})
    with pytest.raises(RunLoadError) as info:
        run_cases(nameless, {}, None)
    assert str(info.value) == (
        f"{made['plain']}: the run does not name its cases file; pass --cases PATH to read the cases from where "
        "they are now"
    )


# ---- the rows, by hand ---------------------------------------------------------------------------------------------

CASE = {"id": "c1", "category": "echo_cascade", "expected_risk": "high", "question": "q", "ground_truth": "4",
        "majority_correct": False, "rationale": "r", "answers": [{"text": "a"}, {"text": "b"}, {"text": "c"}],
        "tags": ["t"], "source": {"b": 2, "a": 1}}  # fmt: skip
RECORD = {"hash": "h1", "category": "echo_cascade", "expected": "high", "origin": "natural", "risk": "medium",
          "score": 0.25, "error": None, "response": {"z": 1, "a": [2]}, "attempts": 2, "latency_s": 1.5}  # fmt: skip


def test_a_row_built_by_hand(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    (row,) = joined_rows(run, {"c1": RECORD}, {"c1": CASE})  # type: ignore[dict-item]
    assert row == {
        "detector": "chosen", "id": "c1", "content_hash": "h1", "category": "echo_cascade", "origin": "natural",
        "expected_risk": "high", "question": "q", "ground_truth": "4", "majority_correct": False, "rationale": "r",
        "n_answers": 3, "answers_json": '[{"text":"a"},{"text":"b"},{"text":"c"}]', "evidence_json": None,
        "tags_json": '["t"]', "source_json": '{"a":1,"b":2}', "predicted_risk": "medium", "risk_score": 0.25,
        "correct": False, "error_kind": None, "error_message": None, "response_json": '{"a":[2],"z":1}',
        "attempts": 2, "latency_s": 1.5, "cached": False, "epoch": None, "variant": None, "permutation_json": None,
        "rewrite_json": None,
    }  # fmt: skip
    # a record of an older journal without attempts, latency or cache: 1 attempt, 0 s, not cached
    bare = {k: v for k, v in RECORD.items() if k not in ("attempts", "latency_s", "origin")}
    (row,) = joined_rows(run, {"c1": {**bare, "risk": "high", "cached": True}}, {"c1": CASE})  # type: ignore[dict-item]
    assert (row["attempts"], row["latency_s"], row["cached"], row["correct"]) == (1, 0.0, True, True)
    assert row["origin"] is None
    error = {**RECORD, "risk": None, "error": {"kind": "badrisk", "message": "no risk"}}
    (row,) = joined_rows(run, {"c1": error}, {"c1": CASE})  # type: ignore[dict-item]
    assert (row["error_kind"], row["error_message"], row["correct"]) == ("badrisk", "no risk", False)


def test_items_are_ordered_by_case_then_epoch_then_as_asked_before_variants(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    cases = {"a": {**CASE, "id": "a"}, "b": {**CASE, "id": "b"}}
    records = {
        ItemKey("b", 1): RECORD,
        ItemKey("a", 2, "order"): {**RECORD, "variant": "order", "permutation": [2, 0, 1]},
        ItemKey("a", 2): RECORD,
        ItemKey("a", 1, "names"): {**RECORD, "variant": "names"},
        ItemKey("a", 1): RECORD,
        ItemKey("b", 1, "inject"): {**RECORD, "variant": "inject", "rewrite": {"kind": "json", "answers": [1]}},
    }
    rows = joined_rows(run, records, cases)  # type: ignore[arg-type]
    assert [(r["id"], r["epoch"], r["variant"]) for r in rows] == [
        ("a", 1, None), ("a", 1, "names"), ("a", 2, None), ("a", 2, "order"), ("b", 1, None),
        ("b", 1, "inject")]  # fmt: skip
    assert rows[3]["permutation_json"] == "[2,0,1]" and rows[3]["rewrite_json"] is None
    assert rows[5]["rewrite_json"] == '{"answers":[1],"kind":"json"}'  # keys sorted
    assert export._order("a") == ("a", 0, "") and export._order(ItemKey("a", 3, "x")) == ("a", 3, "x")
    assert export._order(ItemKey("a", 2)) == ("a", 2, "")  # as asked: "", before any variant's name


def test_a_case_field_with_no_column_is_refused(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    with pytest.raises(RunLoadError) as info:
        joined_rows(run, {"c1": RECORD}, {"c1": {**CASE, "zeta": 1, "alpha": 2}})  # type: ignore[dict-item]
    assert str(info.value) == "case c1: field(s) alpha, zeta have no column in the export"
    with_evidence = {**CASE, "evidence": ["p2", "p1"]}
    (row,) = joined_rows(run, {"c1": RECORD}, {"c1": with_evidence})  # type: ignore[dict-item]
    assert row["evidence_json"] == '["p2","p1"]'


def test_parquet_bytes_keeps_the_metadata_as_json(tmp_path: Path) -> None:
    import io

    data = parquet_bytes([], {"run": "r", "n": 1})
    table = pq.read_table(io.BytesIO(data))
    assert table.num_rows == 0 and table.column_names == [name for name, _ in COLUMNS]
    assert orjson.loads(table.schema.metadata[b"fcb"]) == {"run": "r", "n": 1}
    assert METADATA_KEY == b"fcb"
    assert pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0).compression == "ZSTD"


def test_metadata_of_a_run(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    meta = metadata(run)
    assert sorted(meta) == ["complete", "created", "dataset", "detector", "harness_version", "json_columns", "run"]
    assert meta["detector"]["label"] == "chosen"
