"""Finished runs read back from their folders (``metrics.json`` and ``predictions.jsonl``), for ranking and comparing.

A `Run` keeps each case's id, category, expected risk and predicted risk as arrays in case-id order, so two runs
on the same data set can be paired case by case.
"""

from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from harness.cases.labels import REAL_ORIGINS, UNKNOWN_ORIGIN
from harness.documents import BaselineDocument, MetricsDocument, error_rate
from harness.errors import RunLoadError
from harness.files import shell_path
from harness.leaderboard.figures import (
    check_figures,
    item_figures,
    journal_figures,
    latency_figures,
    operating_figures,
    score_figures,
)
from harness.metrics import CODE, ERROR, Joined, cluster_codes
from harness.runfolder.baseline import BASELINE_VERSION, BaselineCase, decode_cases, encode_cases, read_baseline
from harness.runfolder.journal import is_item_record
from harness.runfolder.manifest import read_manifest
from harness.runfolder.names import METRICS as METRICS_FILE
from harness.runfolder.names import PREDICTIONS
from harness.runfolder.read import item_records, read_metrics, reduced_records
from harness.runfolder.scope import read_scope
from harness.types import RISKS, ItemKey

REAL_SUFFIX = "_real"
"""A metric name ending in this is the metric on the natural and assembled cases only."""
NATURAL_SUFFIX = "_natural"
"""A metric name ending in this is the metric on the natural cases alone (``headline_natural``)."""
MISSING = -1
"""In a verdict matrix (`item_verdicts`): no item journaled for this case and epoch."""
ECE_PATH = "scores.calibration"
"""Where ``metrics.json`` keeps the calibration of risk_score (`harness.calibration`)."""


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
    scores: np.ndarray | None = None  # float, NaN where a case has no risk_score; None for a baseline (keeps none)
    epochs: np.ndarray | None = None  # (cases, N) verdict codes of a run with --epochs N >= 2 (no item: an error)
    variants: dict[str, np.ndarray] = field(default_factory=dict)  # per probe: (cases, N) codes, -1: no variant
    reducer: str = "mode"  # the run's --epoch-reducer
    clusters: np.ndarray | None = None  # str: each case's cluster key (None: alone); None when no case shares one

    @property
    def n_epochs(self) -> int:
        """How many times each case was asked: 1 for a run without --epochs and for a baseline."""
        return 1 if self.epochs is None else int(self.epochs.shape[1])

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
        assembled cases, ``headline_real``) or ``_natural`` (on the natural ones, ``headline_natural``), or a dotted
        path such as ``operational.latency_s.p95``."""
        node: Any = self.doc["metrics"]
        if name.endswith(REAL_SUFFIX):
            name = f"headline_real.{name.removesuffix(REAL_SUFFIX)}"
        elif name.endswith(NATURAL_SUFFIX):
            name = f"headline_natural.{name.removesuffix(NATURAL_SUFFIX)}"
        elif name == "error_rate":
            return error_rate(node)
        for key in name.split("."):
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node if isinstance(node, int | float) else None

    def ece(self) -> tuple[float, int] | None:
        """(ECE, its bin count) as checked against the journal; None without one: no scores, a document written
        before calibration was reported, or a baseline (it keeps no scores to check it against)."""
        ece, bins = self.metric(f"{ECE_PATH}.ece"), self.metric(f"{ECE_PATH}.bins")
        if self.scores is None or ece is None or bins is None:
            return None
        return float(ece), int(bins)


def read_run(path: str | Path) -> Run:
    """Read a run folder, or a baseline file, through `harness.runfolder` (every file checked against its
    definition), its figures checked against its cases (`harness.leaderboard.figures`). Raises `RunLoadError`
    naming the file and field when it cannot, or when ``metrics.json`` states a figure its journal does not give."""
    path = Path(path)
    if path.is_file() and path.suffix == ".json":
        return read_baseline_run(path)
    doc = read_metrics(path)
    items = item_records(path)
    has_items = any(is_item_record(rec) for rec in items.values())
    reducer = _reducer(path) if has_items else "mode"
    records = reduced_records(items, reducer) if has_items else {k.case_id: r for k, r in items.items()}
    ids = np.array(sorted(records), dtype=object)
    rows = [records[i] for i in ids]
    origins = np.array([r.get("origin", UNKNOWN_ORIGIN) for r in rows], dtype=object)
    clusters = np.array([r.get("cluster") for r in rows], dtype=object)
    scores = np.array([np.nan if r["score"] is None else r["score"] for r in rows], dtype=float)
    epochs, variants = item_verdicts(items, ids)
    run = Run(
        path=path,
        doc=doc,
        ids=ids,
        categories=np.array([r["category"] for r in rows], dtype=object),
        y_true=np.array([CODE[r["expected"]] for r in rows], dtype=np.int64),
        y_pred=np.array([ERROR if r["risk"] is None else CODE[r["risk"]] for r in rows], dtype=np.int64),
        origins=origins if (origins != UNKNOWN_ORIGIN).any() else None,
        scores=scores,
        epochs=np.where(epochs == MISSING, ERROR, epochs) if epochs.shape[1] > 1 else None,
        variants=variants,
        reducer=reducer,
        clusters=clusters if any(k is not None for k in clusters) else None,
    )
    figures = journal_figures(run.categories, run.y_true, run.y_pred, run.origins)
    figures |= score_figures(doc["metrics"], run.y_true, scores)
    figures |= operating_figures(doc["metrics"], run.y_true, run.y_pred, scores)
    figures |= _item_operational(items) if has_items else {}
    figures |= item_figures(doc["metrics"], run.y_true, epochs, variants)
    asked = [float(r.get("latency_s", 0.0)) for r in (items.values() if has_items else rows)
             if r.get("cached") is not True]  # as metrics.operational: every item asked counts  # fmt: skip
    figures |= latency_figures(np.array(asked, dtype=float))
    if (scope := read_scope(path)) is not None:
        figures[("n_not_run",)] = len(scope) - len(records)
    stale = f" (edited, or left stale by a resume stopped before it rewrote them: fcb eval --resume {shell_path(path)})"
    check_figures(f"{path / METRICS_FILE}: metrics", f"its journal ({PREDICTIONS})", doc["metrics"], figures, stale)
    if doc["complete"] and scope is not None and len(scope) > len(records):  # only a finished run ranks
        raise RunLoadError(
            f"{path / METRICS_FILE}: complete: true, but {len(scope) - len(records)} case(s) of its scope.json have "
            f"no line in its journal ({PREDICTIONS}); refusing a run whose figures do not follow from its cases"
        )
    return run


def _reducer(path: Path) -> str:
    """The ``--epoch-reducer`` of a run with items (its ``run.json``)."""
    manifest = read_manifest(path)
    return str(manifest["settings"].get("epoch_reducer", "mode")) if manifest else "mode"


def _item_operational(items: dict[ItemKey, Any]) -> dict[tuple[str, ...], Any]:
    """``operational.cases`` and ``.errors`` of a run with items: every item counts (a request each)."""
    errors = sum(1 for rec in items.values() if rec.get("error") is not None)
    return {("operational", "cases"): len(items), ("operational", "errors"): errors}


def item_verdicts(items: dict[ItemKey, Any], ids: np.ndarray) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Verdict codes by case (rows in ``ids`` order) and epoch (columns, 1..N): the plain items', and each probe's
    variants'; `MISSING` where the case has no such item in that epoch."""
    n_epochs = max((k.epoch for k in items), default=1)
    row = {case_id: i for i, case_id in enumerate(ids)}
    plain = np.full((len(ids), n_epochs), MISSING, dtype=np.int64)
    variants: dict[str, np.ndarray] = {}
    for key, rec in items.items():
        if key.case_id not in row:
            continue
        code = ERROR if rec.get("risk") is None else CODE[rec["risk"]]
        if key.variant is None:
            plain[row[key.case_id], key.epoch - 1] = code
        else:
            table = variants.setdefault(key.variant, np.full((len(ids), n_epochs), MISSING, dtype=np.int64))
            table[row[key.case_id], key.epoch - 1] = code
    return plain, variants


DISCOVER_DEPTH = 3  # DIR/runs/DATASET/DETECTOR: deep enough for a suite's folder, not a walk of a whole disk


def discover(folder: str | Path) -> list[Path]:
    """The run folders (those holding ``metrics.json``) in and under ``folder``, up to `DISCOVER_DEPTH` levels
    down, in path order; a run folder's own subfolders are not searched."""
    root = Path(folder)
    if not root.is_dir():
        raise RunLoadError(f"{root}: no such folder")
    found: list[Path] = []
    for here, dirs, files in os.walk(root, followlinks=True):  # a linked run counts; the depth bounds a link cycle
        depth = len(Path(here).relative_to(root).parts)
        if METRICS_FILE in files:
            found.append(Path(here))
            dirs.clear()
        elif depth >= DISCOVER_DEPTH:
            dirs.clear()
        dirs.sort()
    return sorted(found)


def find_runs(patterns: list[str]) -> list[Path]:
    """Run folders named by paths or globs, the one finder of every command that reads results (``fcb board``,
    ``leaderboard``, ``history``, ``cases``): a folder without ``metrics.json`` contributes the runs in and under it
    (`discover`, `DISCOVER_DEPTH` levels down). A run reached twice (named twice, or through a symbolic link) is
    listed once, by the first name it was reached by."""
    found: list[Path] = []
    for pattern in patterns:
        matches = sorted(glob.glob(pattern)) or [pattern]
        for match in map(Path, matches):
            if (match / METRICS_FILE).is_file() or (match.is_file() and match.suffix == ".json"):
                found.append(match)
            elif match.is_dir():
                found.extend(discover(match))
            elif not match.exists():
                raise RunLoadError(f"{match}: no such folder")
            else:
                raise RunLoadError(f"{match}: no run folder (no {METRICS_FILE}) here")
    first_name: dict[str, Path] = {}  # by real path: a run reached twice counts once
    for run in found:
        first_name.setdefault(os.path.realpath(run), run)
    return list(first_name.values())


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


def aligned_clusters(runs: list[Run], ids: np.ndarray) -> np.ndarray:
    """Each case's cluster on ``ids`` (from `align`), numbered 0, 1, ... (`harness.metrics.cluster_codes`): the cases
    that any of the runs put in one cluster are resampled together, so that two runs clustered differently are
    compared on the coarser clustering of both. Without any cluster, each case is its own: 0..n-1."""
    joined = Joined(len(ids))
    for run in runs:
        if run.clusters is None:
            continue
        first: dict[str, int] = {}
        for pos, key in zip(np.searchsorted(ids, run.ids).tolist(), run.clusters.tolist(), strict=True):
            if key is not None:
                joined.join(pos, first.setdefault(key, pos))
    return cluster_codes(joined.root(i) for i in range(len(ids)))


def real_mask(origins: np.ndarray) -> np.ndarray:
    """True for the natural and assembled cases."""
    return np.isin(origins, sorted(REAL_ORIGINS))


def natural_mask(origins: np.ndarray) -> np.ndarray:
    """True for the natural cases."""
    return np.asarray(origins == "natural")


def baseline_document(run: Run, name: str) -> BaselineDocument:
    """What `compare` needs of a run, compactly: its metrics document and one letter per case."""
    origins = run.origins if run.origins is not None else [UNKNOWN_ORIGIN] * len(run.ids)
    clusters = run.clusters if run.clusters is not None else [None] * len(run.ids)
    rows = zip(run.ids, run.categories, run.y_true, run.y_pred, origins, clusters, strict=True)
    cases = [BaselineCase(str(i), str(c), RISKS[t], None if p == ERROR else RISKS[p], str(o), k)
             for i, c, t, p, o, k in rows]  # fmt: skip
    return {"baseline_version": BASELINE_VERSION, "name": name, "source_run": str(run.path), "doc": run.doc,
            "cases": encode_cases(cases)}  # fmt: skip


def read_baseline_run(path: Path) -> Run:
    """A baseline file written by ``fcb baseline save``, as a `Run` (read and decoded by
    `harness.runfolder.baseline`)."""
    doc = read_baseline(path)
    cases = decode_cases(doc)
    origins = np.array([c.origin for c in cases], dtype=object)
    run = Run(
        path=path,
        doc=doc["doc"],
        ids=np.array([c.id for c in cases], dtype=object),
        categories=np.array([c.category for c in cases], dtype=object),
        y_true=np.array([CODE[c.expected] for c in cases], dtype=np.int64),
        y_pred=np.array([ERROR if c.predicted is None else CODE[c.predicted] for c in cases], dtype=np.int64),
        origins=origins if "origins" in doc["cases"] else None,
        clusters=np.array([c.cluster for c in cases], dtype=object) if "clusters" in doc["cases"] else None,
    )
    figures = journal_figures(run.categories, run.y_true, run.y_pred, run.origins)
    figures |= operating_figures(doc["doc"]["metrics"], run.y_true, run.y_pred, None)
    check_figures(f"{path}: doc.metrics", "its cases (the letters of cases.expected and cases.predicted)",
                  doc["doc"]["metrics"], figures)  # fmt: skip
    return run
