"""``fcb merge``: combine the shard runs of one evaluation (``fcb eval --shard K/N``) into one run.

The merged run's metrics are computed from the shards' journals and the case labels exactly as a single run's
are, so they equal those of an unsharded run.
"""

from __future__ import annotations

from pathlib import Path

from harness.cases.reader import scan
from harness.documents import Identity, MetricsDocument, RunManifest, Settings
from harness.errors import RunError, RunMismatchError
from harness.metrics import compute
from harness.report.html import write_html
from harness.report.text import write_reports
from harness.run.outputs import METRICS_VERSION
from harness.run.selection import select
from harness.run.settings import parse_shard, shard_text
from harness.runfolder.journal import read_journal
from harness.runfolder.manifest import read_manifest, write_manifest
from harness.runfolder.names import PREDICTIONS
from harness.runfolder.read import read_metrics
from harness.runfolder.scope import write_scope
from harness.types import Outcome

SAME = ("dataset_sha256", "detector", "limit", "anonymize_agents", "strict", "risk_field", "fingerprint", "subset")


def _manifests(run_dirs: list[Path]) -> list[RunManifest]:
    manifests = []
    for run_dir in run_dirs:
        manifest = read_manifest(run_dir)
        if manifest is None:
            raise RunError(f"{run_dir}: not a run folder (no run.json)")
        manifests.append(manifest)
    first = manifests[0]["identity"]
    for run_dir, manifest in zip(run_dirs, manifests, strict=True):
        differs = [k for k in SAME if manifest["identity"].get(k) != first.get(k)]
        if differs:
            raise RunMismatchError(
                f"{run_dir}: not a shard of the same evaluation as {run_dirs[0]} (differs in {differs[0]})"
            )
    shards = sorted(parse_shard(m["identity"].get("shard")) or (0, 0) for m in manifests)
    n = shards[0][1]
    if shards != [(k, n) for k in range(1, n + 1)] or n == 0:
        found = ", ".join(shard_text(s) or "unsharded" for s in shards)
        raise RunMismatchError(f"the runs must be shards 1/N .. N/N of one evaluation, each once; found {found}")
    return manifests


def merge_runs(run_dirs: list[str | Path], out: str | Path, *, cases: str | None = None) -> MetricsDocument:
    """Merge shard runs into the folder ``out``; returns the merged metrics document."""
    dirs = [Path(d) for d in run_dirs]
    manifests = _manifests(dirs)
    cases_path = cases or manifests[0]["cases"]
    identity: Identity = {**manifests[0]["identity"], "shard": None}
    settings: Settings = {**manifests[0]["settings"], "shard": None}
    scanned = scan(cases_path, strict=bool(identity["strict"]))
    if scanned.sha256 != identity["dataset_sha256"]:
        raise RunMismatchError(f"{cases_path}: not the data set the shards ran on (sha256 differs); pass --cases")
    subset = identity.get("subset") or {}
    selected = select(scanned.labels, tuple(subset.get("categories", ())), tuple(subset.get("tags", ())))
    labels = selected[: identity["limit"]] if identity["limit"] else selected
    hashes = {lab.case_id: lab.content_hash for lab in labels}
    outcomes: dict[str, Outcome] = {}
    out = Path(out)
    if (out / PREDICTIONS).exists():
        raise RunMismatchError(f"{out} already holds a run")
    out.mkdir(parents=True, exist_ok=True)
    with open(out / PREDICTIONS, "wb") as journal:
        for run_dir in dirs:
            shard_outcomes = read_journal(run_dir / PREDICTIONS, repair=False)
            outcomes.update({k: o for k, o in shard_outcomes.items() if hashes.get(k) == o.content_hash})
            journal.write((run_dir / PREDICTIONS).read_bytes())
    write_scope(out, labels)
    sessions = [s for m in manifests for s in m["sessions"]]
    write_manifest(
        out,
        {
            "identity": identity,
            "cases": manifests[0]["cases"],
            "settings": settings,
            "created": min(m["created"] for m in manifests),
            "sessions": sessions,
            "merged_from": [str(d) for d in dirs],
        },
    )
    wall = max(sum(s["wall_s"] for s in m["sessions"]) for m in manifests)  # shards run side by side
    metrics = compute(labels, outcomes, wall_s=wall, n_boot=settings["bootstrap_resamples"], seed=settings["seed"])
    complete = not metrics["n_not_run"] and not scanned.invalid_lines and not identity["limit"]
    first_doc = read_metrics(dirs[0])  # a shard without one has not finished: RunLoadError says so
    document: MetricsDocument = {
        **first_doc,
        "metrics_version": METRICS_VERSION,
        "complete": complete,
        "settings": settings,
        "metrics": metrics,
        "merged_from": [str(d) for d in dirs],
        "dataset": {**first_doc["dataset"], "cases": len(selected), "lines": scanned.lines,
                    "skipped_invalid": scanned.invalid_lines},
    }  # fmt: skip
    write_reports(out, document)
    write_html(out, document)
    return document
