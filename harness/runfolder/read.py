"""Reading a run folder back, in one place: every file checked against its document's definition
(`harness.documents`) before anyone reads a key of it.

Leaderboards, compare, history, merge, view, resume and the Python API read run folders through these functions
alone (a baseline file through `harness.runfolder.baseline`). A file that is missing, is not JSON, or breaks its
definition raises `RunLoadError` naming the file and the first wrong field (a journal line: its line too), so a
half-written or foreign folder is refused the same way everywhere: ``fcb`` exits 2 with that message, never 3.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from harness.documents import JournalRecord, MetricsDocument
from harness.epochs import reduce_case
from harness.errors import RunLoadError
from harness.files import read_regular, shell_path
from harness.runfolder.checked import read_document
from harness.runfolder.journal import ITEM_FIELDS, checked_records, is_item_record, item_key, outcome_of, refuse_items
from harness.runfolder.names import MANIFEST, METRICS, PREDICTIONS
from harness.runfolder.scope import read_scope
from harness.types import ItemKey

UNFINISHED = "a run that has not finished has none (fcb eval --resume {run})"
MAX_JOURNAL_BYTES = 16 << 30
"""The largest journal read back (16 GiB): a bound for a file that is not the run's own, not for any real run."""


def read_metrics(run_dir: str | Path) -> MetricsDocument:
    """A run folder's ``metrics.json``, checked."""
    run = Path(run_dir)
    return cast(MetricsDocument, read_document(run / METRICS, "metrics", UNFINISHED.format(run=shell_path(run))))


def journal_records(run_dir: str | Path, *, scoped: bool = True) -> dict[str, JournalRecord]:
    """A finished run's journal records by case id (a later line wins; a torn last line, a write cut short by a
    crash, is left out and left in place), each line checked (`RunLoadError` names the file, line and field).

    With ``scoped`` only the lines the run itself counted are read (``scope.json``): a line for an id outside it,
    or for an older content of a case, is left out as the run left it out. The journal of a run with epochs or
    probes is refused (`RunLoadError` naming its first item line): `item_records` reads it."""
    records: dict[str, JournalRecord] = {}
    path = Path(run_dir) / PREDICTIONS
    for line_no, rec in _scoped_records(run_dir, scoped):
        if is_item_record(rec):
            raise RunLoadError(refuse_items(path, line_no, rec))
        records[rec["id"]] = rec
    return records


def item_records(run_dir: str | Path, *, scoped: bool = True) -> dict[ItemKey, JournalRecord]:
    """A finished run's journal records by item (case id, epoch, variant), read as `journal_records` reads them;
    a plain run's journal gives one item a case, (id, 1, None)."""
    return {item_key(rec): rec for _, rec in _scoped_records(run_dir, scoped)}


def _scoped_records(run_dir: str | Path, scoped: bool) -> Iterator[tuple[int, JournalRecord]]:
    path = Path(run_dir) / PREDICTIONS
    try:
        lines = read_regular(path, MAX_JOURNAL_BYTES).split(b"\n")[:-1]  # after the last newline: unfinished
    except FileNotFoundError:
        raise RunLoadError(f"{path}: no such file; not a run folder, or one whose run never started") from None
    except OSError as exc:
        raise RunLoadError(f"{path}: {exc.strerror or exc}") from None
    scope = read_scope(run_dir) if scoped else None
    for line_no, rec in enumerate(checked_records(path, lines), start=1):
        if scope is None or (rec["id"], rec["hash"]) in scope:
            yield line_no, rec


def case_records(
    run_dir: str | Path,
    *,
    scoped: bool = True,
    reducer: str | None = None,
    items: Mapping[ItemKey, JournalRecord] | None = None,
) -> dict[str, JournalRecord]:
    """One record a case, for readers that show or pair runs case by case (reports, leaderboards, compare): a plain
    run's `journal_records`; for a run with epochs or probes, its items reduced (`reduced_records`) by ``reducer``,
    by default the run's own ``--epoch-reducer`` (its ``run.json``). Never epoch 1 taken for the case. ``items``:
    the run's `item_records` when the caller read them already (the journal is then not read again)."""
    items = item_records(run_dir, scoped=scoped) if items is None else items
    if reducer is None and has_items(items):
        manifest = read_document(Path(run_dir) / MANIFEST, "run")
        reducer = manifest["settings"].get("epoch_reducer", "mode")
    return records_by_case(items, reducer or "mode")


def has_items(items: Mapping[ItemKey, JournalRecord]) -> bool:
    """Whether records read by `item_records` are those of a run with epochs or probes."""
    return any(is_item_record(rec) for rec in items.values())


def records_by_case(items: Mapping[ItemKey, JournalRecord], reducer: str) -> dict[str, JournalRecord]:
    """One record a case from `item_records`: a plain run's records as they are, else `reduced_records`."""
    if not has_items(items):
        return {key.case_id: rec for key, rec in items.items()}
    return reduced_records(items, reducer)


def reduced_records(items: Mapping[ItemKey, JournalRecord], reducer: str) -> dict[str, JournalRecord]:
    """One record a case from its items' records: the record of the epoch whose outcome the reduction kept (the
    earliest epoch that gave the reduced verdict; the lowest epoch for an error or with ``first``), its score the
    reduced score (`harness.epochs.reduce_case`), without item fields. Variants are left out."""
    by_case: dict[str, list[JournalRecord]] = {}
    for key, rec in sorted(items.items(), key=lambda kv: kv[0].epoch):
        if key.variant is None:
            by_case.setdefault(key.case_id, []).append(rec)
    out: dict[str, JournalRecord] = {}
    for case_id, recs in by_case.items():
        reduced = reduce_case([outcome_of(r) for r in recs], reducer)
        base = next((r for r in recs if reducer == "mode" and r["risk"] == reduced.risk), recs[0])
        one: dict[str, Any] = {k: v for k, v in base.items() if k not in ITEM_FIELDS}
        if reduced.risk is not None:
            one["score"] = reduced.score
        out[case_id] = cast(JournalRecord, one)
    return out
