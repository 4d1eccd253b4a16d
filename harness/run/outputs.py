"""What a run writes into its folder: the identity its ``run.json`` holds (checked when it resumes), and at the
end the metrics document and the reports made from it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness._version import __version__
from harness.cases.clusters import DEFAULT_CLUSTER_BY
from harness.cases.reader import Scan
from harness.documents import (
    Dataset,
    DetectorInfo,
    Identity,
    JournalRecord,
    Metrics,
    MetricsDocument,
    RunManifest,
    Subset,
)
from harness.errors import RunError
from harness.redact import redact_spec
from harness.run.selection import select, subset_choice
from harness.run.settings import EvalSettings, settings_record, shard_text
from harness.runfolder.folder import new_run_dir, refuse_taken
from harness.runfolder.manifest import check_resume, new_manifest, now
from harness.types import Detector, ItemKey

METRICS_VERSION = 2  # 2: headline_real and breakdowns.origin


def run_identity(settings: EvalSettings, scanned: Scan, detector_fingerprint: dict[str, Any]) -> Identity:
    """What must not change between a run and its resumption."""
    identity: Identity = {
        "dataset_sha256": scanned.sha256,
        "detector": settings.detector.display,
        "limit": settings.limit,
        "shard": shard_text(settings.shard),
        "anonymize_agents": settings.anonymize_agents,
        "strict": settings.strict,
        "risk_field": ".".join(settings.options.risk_field),
        "fingerprint": detector_fingerprint,
    }
    if subset := subset_choice(settings):
        identity["subset"] = subset
    if settings.epochs > 1:  # a run resumed or merged asks the same items: absent, a plain run's identity as ever
        identity["epochs"] = settings.epochs
    if settings.probes:
        identity["probes"] = list(settings.probes)
        identity["probe_seed"] = settings.probe_seed
    if settings.cluster_by != DEFAULT_CLUSTER_BY:  # the journal keeps each case's cluster key: one rule a journal
        identity["cluster_by"] = settings.cluster_by
    return identity


def open_run_dir(settings: EvalSettings, identity: Identity) -> tuple[Path, RunManifest]:
    """The run folder (made later, once the preflight passed) and its manifest: the resumed run's (checked
    against ``identity``) or a new one."""
    if settings.resume:
        if settings.out is None:
            raise RunError("resume needs the run folder")
        run_dir = Path(settings.out)
        return run_dir, check_resume(run_dir, identity)
    run_dir = (
        Path(settings.out) if settings.out else new_run_dir(settings.results_root, settings.detector, settings.name)
    )
    if not settings.overwrite:
        refuse_taken(run_dir)
    manifest = new_manifest(identity, os.path.abspath(settings.cases), settings_record(settings))
    return run_dir, manifest


def is_complete(
    *, stopped: str | None, not_run: int, unasked: int, counted: int, in_scope: int, invalid_lines: int, sharded: bool
) -> bool:
    """The one rule for ``complete`` in ``metrics.json``, a run's or a merged one's: nothing stopped the run, every
    case it counts has a result and every planned item (epoch, probe variant) was asked, ``--limit`` left no case of
    the data set out (``counted`` of ``in_scope``), no invalid line was skipped, and it is not one shard of several
    (a shard is only a part of the data set: merged with the others, the whole can be complete)."""
    whole = counted == in_scope and not invalid_lines and not sharded
    return stopped is None and not not_run and not unasked and whole


def dataset_info(settings: EvalSettings, scanned: Scan, digest: str) -> Dataset:
    """What ``metrics.json`` says of the data set a run (or a merge of shards) read."""
    subset = subset_choice(settings)
    name = Path(settings.cases).name
    return {
        "path": os.path.abspath(settings.cases),
        "name": name if subset is None else f"{name} [{_subset_text(subset)}]",
        "sha256": digest,  # a subset is its own data set: leaderboards never mix it with the whole file
        "file_sha256": scanned.sha256,
        "subset": subset,
        "cases": len(select(scanned.labels, settings.categories, settings.tags)),  # no subset: every case
        "lines": scanned.lines,
        "skipped_invalid": scanned.invalid_lines,
        "problems": [str(p) for p in scanned.problems[:200]],
    }


def detector_info(settings: EvalSettings, detector: Detector, detector_fingerprint: dict[str, Any]) -> DetectorInfo:
    """What ``metrics.json`` says of the detector: its spec and name with secrets removed, its label, its code."""
    return {
        "spec": settings.detector.display,
        "name": redact_spec(getattr(detector, "name", "")),
        "label": settings.name,
        "fingerprint": detector_fingerprint,
    }


def metrics_document(
    settings: EvalSettings,
    dataset: Dataset,
    detector: DetectorInfo,
    metrics: Metrics,
    *,
    complete: bool,
    stopped: str | None = None,
    merged_from: list[str] | None = None,
) -> MetricsDocument:
    """The document ``metrics.json`` holds, made here and nowhere else (a run's, `harness.run.runner`, and a merge
    of shards', `harness.run.merge`): the data set, the detector, the settings, the figures."""
    document: MetricsDocument = {
        "metrics_version": METRICS_VERSION,
        "harness_version": __version__,
        "created": now(),
        "complete": complete,
        "dataset": dataset,
        "detector": detector,
        "settings": settings_record(settings),
        "metrics": metrics,
        "stopped": stopped,
    }
    if merged_from is not None:
        document["merged_from"] = merged_from
    return document


def _subset_text(subset: Subset) -> str:
    parts = [f"category={','.join(subset['categories'])}"] if subset["categories"] else []
    return "; ".join(parts + ([f"tag={','.join(subset['tags'])}"] if subset["tags"] else []))


def write_outputs(
    run_dir: Path, document: MetricsDocument, scanned: Scan, items: Mapping[ItemKey, JournalRecord] | None = None
) -> None:
    """``metrics.json``, ``report.md`` and ``report.html``; the HTML's case explorer takes the cases from the run's
    scan of the file, as read (the cases file is never read twice, and no case parsed again), and the predictions
    from ``items``, the journal as the run wrote it, when it wrote it all (else from the journal)."""
    from harness.report.html import write_html  # the reports and their tables: imported once the answers are in
    from harness.report.text import write_reports

    write_reports(run_dir, document)
    write_html(run_dir, document, cases=scanned, items=items)
