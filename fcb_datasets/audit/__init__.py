"""``fcb audit-dataset``: does a benchmark measure detection, or can its own wording, sizes and sources be learned?

Pure computations over two lists of cases (TRAIN, TEST). Surface baselines are fitted on TRAIN only, their settings
chosen by grouped cross-validation on TRAIN (groups = source item, so one question never sits on both sides of a
fold), and scored once on TEST. Exact rules, count leakage and composition look at both files together; overlap
compares them. The result is a plain-JSON document (`AuditDocument`), described by ``harness/data/audit.schema.json``.

Modules (``audit`` here runs them all):
- ``view``: the audit's view of a case (`CaseView`), its settings, the split by source item
- ``baselines``: surface models, fitted on TRAIN's wording and sizes alone
- ``rules``: exact rules and count leakage
- ``overlap``: what TRAIN and TEST share, and what each file is made of
- ``shape``: tells shared by several categories: constructed cases found, truth inside a shape, answer position
- ``structure``: what counting votes is worth: the vote rule and a model over the votes, on every case and on the
  cases with a consensus
- ``verdict``: findings over the thresholds (exit 1) and warnings
The output document is defined in `harness.documents.audit` (`AuditDocument`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

from fcb_datasets.audit.baselines import surface_baselines
from fcb_datasets.audit.overlap import composition, overlap
from fcb_datasets.audit.rules import count_leakage, exact_rules
from fcb_datasets.audit.shape import shape_tells
from fcb_datasets.audit.structure import structure_baselines
from fcb_datasets.audit.verdict import verdict
from fcb_datasets.audit.view import CaseView, Settings
from harness.documents.audit import AuditDocument, AuditFile, AuditFiles
from harness.types import CATEGORIES

AUDIT_VERSION: Literal[4] = 4


def audit(
    train: Sequence[CaseView],
    test: Sequence[CaseView],
    files: tuple[AuditFile, AuditFile],
    settings: Settings,
    progress: Callable[[str], None] = lambda _msg: None,
    split_by: Literal["source-item"] | None = None,
) -> AuditDocument:
    """The whole audit of TRAIN against TEST, read from ``files`` (TRAIN's and TEST's: one file twice when
    ``split_by`` split it). Every case's view names its file as ``train`` or ``test`` (`CaseView.file`): the
    composition and the overlap inside each file are counted by that name."""
    for side, views in (("train", train), ("test", test)):
        if any(it.file != side for it in views):
            raise ValueError(f"audit: every {side.upper()} item must have file={side!r}")
    import sklearn.ensemble  # noqa: F401  loaded first, so that threadpoolctl sees its OpenMP runtime
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits  # installed with scikit-learn

    started = time.perf_counter()

    def timed_files() -> AuditFiles:
        seconds = round(time.perf_counter() - started, 2)
        return AuditFiles(train=files[0], test=files[1], split_by=split_by, seconds=seconds)

    # One thread: the trees' OpenMP threads fight over a shared machine's cores (a 4 s fit took 0.1 s with one).
    with threadpool_limits(limits=1), warnings.catch_warnings():
        # a grid point that stops at max_iter is still a valid (if weaker) model; the grid picks the better ones
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _audit(train, test, settings, progress, timed_files)


def _audit(
    train: Sequence[CaseView],
    test: Sequence[CaseView],
    settings: Settings,
    progress: Callable[[str], None],
    files: Callable[[], AuditFiles],
) -> AuditDocument:
    cats = [c for c in CATEGORIES if any(it.category == c for it in [*train, *test])]
    cats += sorted({it.category for it in [*train, *test]} - set(cats))
    surface, top = surface_baselines(train, test, cats, settings, progress)
    progress("exact rules over TRAIN + TEST")
    rules = exact_rules([*train, *test], cats, top)
    count_only = next(b["macro_f1"] for b in surface["baselines"] if b["name"] == "answer count only")
    leak = count_leakage([*train, *test], cats, count_only)
    progress("shape tells: constructed cases, truth inside a shape, answer position")
    shape = shape_tells(train, test, settings)
    structure = structure_baselines(train, test, settings, progress)
    progress("overlap between and within the files")
    shared = overlap(train, test)
    found = verdict(surface, rules, shape, structure, shared, settings)
    return AuditDocument(
        audit_version=AUDIT_VERSION,
        files=files(),  # timed to here
        settings={
            "max_surface_f1": settings.max_surface_f1,
            "seed": settings.seed,
            "bootstrap": settings.n_boot,
            "max_shape_auc": settings.max_shape_auc,
            "max_structure_auc": settings.max_structure_auc,
            "search": settings.search,
        },
        categories=cats,
        surface=surface,
        rules=rules,
        count_leakage=leak,
        shape=shape,
        structure=structure,
        overlap=shared,
        composition=composition(train, test),
        verdict=found,
    )
