"""Finished runs read back from their folders (``metrics.json`` and ``predictions.jsonl``), for ranking and comparing.

A `Run` keeps each case's id, category, expected risk and predicted risk as arrays in case-id order, so two runs
on the same data set can be paired case by case.
"""

from __future__ import annotations

import glob
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from harness.cases.labels import ORIGINS, REAL_ORIGINS, UNKNOWN_ORIGIN
from harness.documents import BaselineDocument, MetricsDocument, error_rate
from harness.errors import RunLoadError
from harness.metrics import CODE, ERROR
from harness.runfolder.journal import checked_records
from harness.runfolder.names import METRICS as METRICS_FILE
from harness.runfolder.names import PREDICTIONS
from harness.runfolder.scope import read_scope

REAL_SUFFIX = "_real"
"""A metric name ending in this is the metric on the natural and assembled cases only."""


@dataclass(frozen=True)
class Run:
    """One finished run: its metrics document and its per-case outcomes, sorted by case id."""

    path: Path
    doc: MetricsDocument
    ids: np.ndarray  # str, sorted
    categories: np.ndarray  # str
    y_true: np.ndarray  # 0..2
    y_pred: np.ndarray  # 0..2, or 3 for an error
    origins: np.ndarray | None = None  # str, from the cases' origin tags; None for runs of untagged cases

    @property
    def detector(self) -> str:
        return str(self.doc["detector"]["spec"])

    @property
    def label(self) -> str:
        """The detector's name in leaderboards: the run's ``--name``, or its spec."""
        return str(self.doc["detector"].get("label") or self.detector)

    @property
    def fingerprint(self) -> dict[str, Any] | None:
        """What identified the detector's code when it ran (see `harness.detectors.fingerprint`); None for older
        runs, which kept none."""
        found = self.doc["detector"].get("fingerprint")
        return dict(found) if isinstance(found, dict) else None

    @property
    def fingerprint_id(self) -> str:
        """A short digest of the fingerprint ("" when the run kept none)."""
        if self.fingerprint is None:
            return ""
        return hashlib.sha256(orjson.dumps(self.fingerprint, option=orjson.OPT_SORT_KEYS)).hexdigest()[:8]

    @property
    def dataset(self) -> dict[str, Any]:
        return dict(self.doc["dataset"])

    @property
    def sha256(self) -> str:
        return str(self.doc["dataset"]["sha256"])

    @property
    def complete(self) -> bool:
        return bool(self.doc["complete"])

    @property
    def created(self) -> str:
        return str(self.doc["created"])

    def metric(self, name: str) -> float | None:
        """A metric from ``metrics.json``: a headline name, the same name ending ``_real`` (on the natural and
        assembled cases, ``headline_real``), or a dotted path such as ``operational.latency_s.p95``."""
        node: Any = self.doc["metrics"]
        if name.endswith(REAL_SUFFIX):
            name = f"headline_real.{name.removesuffix(REAL_SUFFIX)}"
        elif name == "error_rate":
            return error_rate(node)
        for key in name.split("."):
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node if isinstance(node, int | float) else None


def load_run(path: str | Path) -> Run:
    """Read a run folder, or a baseline file. Raises `RunLoadError` naming the file when it cannot."""
    path = Path(path)
    if path.is_file() and path.suffix == ".json":
        return load_baseline(path)
    try:
        doc = orjson.loads((path / METRICS_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise RunLoadError(f"{path / METRICS_FILE}: {exc}") from exc
    scope = read_scope(path)  # RunLoadError naming the file when it cannot be read
    records = _read_journal(path / PREDICTIONS, scope)
    ids = np.array(sorted(records), dtype=object)
    rows = [records[i] for i in ids]
    origins = np.array([r[3] for r in rows], dtype=object)
    return Run(
        path=path,
        doc=doc,
        ids=ids,
        categories=np.array([r[0] for r in rows], dtype=object),
        y_true=np.array([CODE[r[1]] for r in rows], dtype=np.int64),
        y_pred=np.array([r[2] for r in rows], dtype=np.int64),
        origins=origins if (origins != UNKNOWN_ORIGIN).any() else None,
    )


def _read_journal(path: Path, scope: set[tuple[str, str]] | None = None) -> dict[str, tuple[str, str, int, str]]:
    """(category, expected risk, predicted code, origin) by case id; a later line wins; a torn last line is
    skipped. Journals of untagged cases, and those written before origins were recorded, have no origin.

    With ``scope`` (the run's ``scope.json``) only the lines the run itself counted are read: a line for an id
    outside it, or for an older content of a case, is left out as the run left it out. Every line's fields are
    checked all the same: a malformed line is an error naming the file, the line and the field."""
    records: dict[str, tuple[str, str, int, str]] = {}
    try:
        lines = path.read_bytes().split(b"\n")[:-1]  # the part after the last newline is unfinished
    except OSError as exc:
        raise RunLoadError(f"{path}: {exc}") from exc
    for rec in checked_records(path, lines):
        if scope is not None and (rec["id"], rec["hash"]) not in scope:
            continue
        risk = rec.get("risk")  # None only on a record with an error
        code = ERROR if risk is None else CODE[risk]
        records[rec["id"]] = (rec["category"], rec["expected"], code, rec.get("origin", UNKNOWN_ORIGIN))
    return records


def find_runs(patterns: list[str]) -> list[Path]:
    """Run folders named by paths or globs; a folder without ``metrics.json`` contributes the runs inside it."""
    found: list[Path] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) or [pattern]
        for match in map(Path, matches):
            if (match / METRICS_FILE).is_file() or (match.is_file() and match.suffix == ".json"):
                found.append(match)
            elif match.is_dir():
                found.extend(sorted(p.parent for p in match.glob(f"*/{METRICS_FILE}")))
            else:
                raise RunLoadError(f"{match}: no run folder (no {METRICS_FILE}) here")
    return list(dict.fromkeys(found))


def align(runs: list[Run]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """Put runs of one data set on a common case list (the union of their ids).

    Returns (ids, categories, y_true, one y_pred per run). A case a run did not finish counts as an error for
    that run, so an incomplete run is never flattered by the cases it skipped.
    """
    labels: dict[str, tuple[str, int]] = {}
    for run in runs:
        for case_id, cat, truth in zip(run.ids, run.categories, run.y_true, strict=True):
            labels.setdefault(case_id, (cat, int(truth)))
    ids = np.array(sorted(labels), dtype=object)
    categories = np.array([labels[i][0] for i in ids], dtype=object)
    y_true = np.array([labels[i][1] for i in ids], dtype=np.int64)
    preds = []
    for run in runs:
        pred = np.full(len(ids), ERROR, dtype=np.int64)
        pred[np.searchsorted(ids, run.ids)] = run.y_pred
        preds.append(pred)
    return ids, categories, y_true, preds


def aligned_origins(runs: list[Run], ids: np.ndarray) -> np.ndarray | None:
    """The origin of each case of ``ids`` (from `align`), from whichever run recorded one; None when no run did."""
    known: dict[str, str] = {}
    for run in runs:
        if run.origins is not None:
            known.update((i, o) for i, o in zip(run.ids, run.origins, strict=True) if o != UNKNOWN_ORIGIN)
    if not known:
        return None
    return np.array([known.get(i, UNKNOWN_ORIGIN) for i in ids], dtype=object)


def real_mask(origins: np.ndarray) -> np.ndarray:
    """True for the natural and assembled cases."""
    return np.isin(origins, sorted(REAL_ORIGINS))


BASELINE_VERSION = 1
_LETTERS = "lmhe"  # low, medium, high, error: one letter per case keeps a baseline small
_ORIGIN_LETTERS = {**{o: o[0] for o in ORIGINS}, UNKNOWN_ORIGIN: "u"}  # natural n, assembled a, constructed c


def baseline_document(run: Run, name: str) -> BaselineDocument:
    """What `compare` needs of a run, compactly: its metrics document and one letter per case."""
    doc: BaselineDocument = {
        "baseline_version": BASELINE_VERSION,
        "name": name,
        "source_run": str(run.path),
        "doc": run.doc,
        "cases": {
            "ids": list(run.ids),
            "categories": list(run.categories),
            "expected": "".join(_LETTERS[t] for t in run.y_true),
            "predicted": "".join(_LETTERS[p] for p in run.y_pred),
        },
    }
    if run.origins is not None:  # optional: a baseline of untagged cases is as it was
        doc["cases"]["origins"] = "".join(_ORIGIN_LETTERS[o] for o in run.origins)
    return doc


def load_baseline(path: Path) -> Run:
    """A baseline file written by ``fcb baseline save``, as a `Run`."""
    try:
        data = orjson.loads(path.read_bytes())
        cases = data["cases"]
        from_letter = {v: k for k, v in _ORIGIN_LETTERS.items()}
        origins = [from_letter[c] for c in cases["origins"]] if "origins" in cases else None
        return Run(
            path=path,
            doc=data["doc"],
            ids=np.array(cases["ids"], dtype=object),
            categories=np.array(cases["categories"], dtype=object),
            y_true=np.array([_LETTERS.index(c) for c in cases["expected"]], dtype=np.int64),
            y_pred=np.array([_LETTERS.index(c) for c in cases["predicted"]], dtype=np.int64),
            origins=None if origins is None else np.array(origins, dtype=object),
        )
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise RunLoadError(f"{path}: not a baseline file: {exc!r}") from exc
