"""A finished run exported for the tools people already use: its predictions joined with the cases they were made
on, as one Parquet file (pandas, DuckDB, Polars, Spark).

One row per case the run finished, in case-id order: for a run with ``--epochs`` or ``--probe``, the verdict its
headline counts (its epochs reduced; variants left out), or with ``items=True`` one row per case, epoch and variant
(columns ``epoch``, ``variant``, ``permutation_json``, ``rewrite_json``), every answer the journal holds. The
case's own fields come from the cases file the run read, matched line by line by the content hash its journal
recorded (the very case that was sent: a changed file is refused, never joined). Scalar fields are columns of their
own; nested ones (answers, evidence, tags, source, the detector's reply) are JSON text in columns ending ``_json``
(`JSON_COLUMNS`), so that every reader gets plain strings and DuckDB's ``json_extract`` or pandas' ``json.loads``
opens them. The file's key-value metadata (``fcb``) holds the run's identity: data set, detector, completeness,
harness version.

pyarrow is an optional dependency (the ``parquet`` extra), imported here on use only.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from harness._version import __version__
from harness.documents import JournalRecord
from harness.errors import RunLoadError, UsageError
from harness.files import atomic_write
from harness.leaderboard.runs import Run, read_run
from harness.runfolder.cases import case_texts, file_sha256_of
from harness.runfolder.read import case_records, item_records
from harness.types import ItemKey

CASE_FIELDS = ("question", "ground_truth", "majority_correct", "rationale")
"""Scalar fields of a case, each a column under its own name (``id``, ``category`` and ``expected_risk`` too)."""
NESTED_CASE_FIELDS = ("answers", "evidence", "tags", "source")
"""Fields of a case held as JSON text in ``NAME_json`` (null where the case has none: ``evidence`` is optional)."""
KNOWN_CASE_KEYS = frozenset({"id", "category", "expected_risk", *CASE_FIELDS, *NESTED_CASE_FIELDS})
COLUMNS: tuple[tuple[str, str], ...] = (
    ("detector", "string"),
    ("id", "string"),
    ("content_hash", "string"),
    ("category", "string"),
    ("origin", "string"),
    ("expected_risk", "string"),
    ("question", "string"),
    ("ground_truth", "string"),
    ("majority_correct", "bool_"),
    ("rationale", "string"),
    ("n_answers", "int64"),
    ("answers_json", "string"),
    ("evidence_json", "string"),
    ("tags_json", "string"),
    ("source_json", "string"),
    ("predicted_risk", "string"),
    ("risk_score", "float64"),
    ("correct", "bool_"),
    ("error_kind", "string"),
    ("error_message", "string"),
    ("response_json", "string"),
    ("attempts", "int64"),
    ("latency_s", "float64"),
    ("cached", "bool_"),
    ("epoch", "int64"),
    ("variant", "string"),
    ("permutation_json", "string"),
    ("rewrite_json", "string"),
)
"""Every column, in order, with its Arrow type; each may hold nulls (``epoch``, ``variant``, ``permutation_json``
and ``rewrite_json`` are null on a row per case; ``variant`` null on an item as it was asked; ``rewrite_json`` what
a rewriting probe's variant changed: its template or tone, the answers rewritten)."""
JSON_COLUMNS = tuple(name for name, _ in COLUMNS if name.endswith("_json"))
METADATA_KEY = b"fcb"


def _json(value: Any) -> str | None:
    return None if value is None else orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def _order(key: str | ItemKey) -> tuple[str, int, str]:
    """Case id, then epoch, then the request as it is before its variants."""
    if isinstance(key, str):
        return key, 0, ""
    return key.case_id, key.epoch, key.variant or ""


def joined_rows(
    run: Run,
    records: Mapping[str, JournalRecord] | Mapping[ItemKey, JournalRecord],
    cases: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """One row per record, by case (a `case_records` mapping) or by item (`item_records`), in case-id order, its
    case's fields beside its prediction (see `COLUMNS`)."""
    rows = []
    for key in sorted(records, key=_order):
        rec = records[key]  # type: ignore[index]
        case_id = key if isinstance(key, str) else key.case_id
        case = cases[case_id]
        if extra := sorted(set(case) - KNOWN_CASE_KEYS):
            raise RunLoadError(f"case {case_id}: field(s) {', '.join(extra)} have no column in the export")
        error = rec.get("error")
        row: dict[str, Any] = {
            "detector": run.label,
            "id": case_id,
            "content_hash": rec["hash"],
            "category": rec["category"],
            "origin": rec.get("origin"),
            "expected_risk": rec["expected"],
            **{field: case.get(field) for field in CASE_FIELDS},
            "n_answers": len(case["answers"]),
            **{f"{field}_json": _json(case.get(field)) for field in NESTED_CASE_FIELDS},
            "predicted_risk": rec["risk"],
            "risk_score": rec["score"],
            "correct": rec["risk"] == rec["expected"],
            "error_kind": error["kind"] if error else None,
            "error_message": error["message"] if error else None,
            "response_json": _json(rec.get("response")),
            "attempts": rec.get("attempts", 1),
            "latency_s": rec.get("latency_s", 0.0),
            "cached": bool(rec.get("cached", False)),
            "epoch": None if isinstance(key, str) else key.epoch,
            "variant": rec.get("variant"),
            "permutation_json": _json(rec.get("permutation")),
            "rewrite_json": _json(rec.get("rewrite")),
        }
        rows.append(row)
    return rows


def run_cases(run: Run, records: Mapping[str, JournalRecord], cases_path: str | None) -> dict[str, dict[str, Any]]:
    """The cases of the run's journal records, read from ``cases_path`` (default: the file the run read), each the
    very case the run sent (its content hash). Raises `RunLoadError` when the file is not there, has changed, or
    lacks a case: an export never joins predictions to other cases."""
    dataset = run.doc["dataset"]
    path = cases_path or dataset.get("path")
    found, note = case_texts(path, {i: r["hash"] for i, r in records.items()}, file_sha256_of(dataset))
    if note:
        raise RunLoadError(f"{run.path}: {note}; pass --cases PATH to read the cases from where they are now")
    if missing := sorted(set(records) - set(found)):
        listed = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise RunLoadError(f"{path}: no case with the id and content the run journaled for {listed}")
    return found


def metadata(run: Run) -> dict[str, Any]:
    """The run's identity, stored in the Parquet file's metadata under ``fcb``."""
    return {
        "run": str(run.path),
        "dataset": run.dataset,
        "detector": dict(run.doc["detector"]),
        "complete": run.complete,
        "created": run.created,
        "harness_version": __version__,
        "json_columns": list(JSON_COLUMNS),
    }


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError(
            "--to parquet needs pyarrow, which is not installed: pip install 'fcb-harness[parquet]'"
        ) from None
    return pa, pq


def parquet_bytes(rows: Sequence[Mapping[str, Any]], meta: Mapping[str, Any]) -> bytes:
    """The rows as a Parquet file (zstd), with ``meta`` as JSON under the key ``fcb``."""
    pa, pq = _pyarrow()
    schema = pa.schema([pa.field(name, getattr(pa, kind)()) for name, kind in COLUMNS])
    schema = schema.with_metadata({METADATA_KEY: orjson.dumps(meta)})
    table = pa.Table.from_pylist(list(rows), schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="zstd")
    return buffer.getvalue()


def export_parquet(
    run_dir: str | Path, out: str | Path | None = None, cases: str | None = None, *, items: bool = False
) -> tuple[Path, int]:
    """Write the run's predictions joined with its cases to ``out`` (default ``RUN_DIR/predictions.parquet``), one
    row a case, or with ``items`` one row a case, epoch and variant; returns (the path, the number of rows)."""
    run_dir = Path(run_dir)
    if run_dir.is_file():
        raise UsageError(f"{run_dir}: a baseline file keeps no replies; export a run folder")
    _pyarrow()  # before any reading: a missing library is said at once
    run = read_run(run_dir)  # every file checked, and its figures against its journal
    records: Mapping[str, JournalRecord] | Mapping[ItemKey, JournalRecord]
    records = item_records(run_dir) if items else case_records(run_dir)
    by_case = {(k if isinstance(k, str) else k.case_id): rec for k, rec in records.items()}
    rows = joined_rows(run, records, run_cases(run, by_case, cases))
    path = Path(out) if out else run_dir / "predictions.parquet"
    atomic_write(path, parquet_bytes(rows, metadata(run)))
    return path, len(rows)
