"""``fcb merge``: combine the shard runs of one evaluation (``fcb eval --shard K/N``) into one run.

The merged run's metrics are computed from the shards' journals and the case labels exactly as a single run's
are, so they equal those of an unsharded run.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from harness.cases.reader import scan
from harness.documents import Identity, JournalRecord, MetricsDocument, RunManifest
from harness.errors import RunError, RunLoadError, RunMismatchError
from harness.files import atomic_write, shell_path
from harness.report.html import write_html
from harness.report.text import write_reports
from harness.run.items import has_items, plan_items
from harness.run.outputs import dataset_info, is_complete, metrics_document
from harness.run.selection import in_scope, in_shard
from harness.run.settings import manifest_settings, parse_shard, settings_record, shard_text
from harness.run.tally import run_figures
from harness.runfolder.journal import checked_records, item_key, outcome_of
from harness.runfolder.manifest import read_manifest, write_manifest
from harness.runfolder.names import METRICS, PREDICTIONS
from harness.runfolder.read import read_metrics
from harness.runfolder.scope import read_scope, write_scope
from harness.types import CaseLabels, ItemKey, Outcome

SAME = ("dataset_sha256", "detector", "limit", "anonymize_agents", "strict", "risk_field", "fingerprint", "subset",
        "epochs", "probes", "probe_seed", "cluster_by")  # fmt: skip


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
        found = ", ".join(shard_text(s if s[1] else None) or "unsharded" for s in shards)  # (0, 0): no shard
        raise RunMismatchError(f"the runs must be shards 1/N .. N/N of one evaluation, each once; found {found}")
    return manifests


def _shard_journal(
    run_dir: Path, manifest: RunManifest, selected: list[CaseLabels], warn: Callable[[str], None]
) -> list[tuple[bytes, JournalRecord]]:
    """A shard's journal lines and their records, each checked, each one of the shard's own cases.

    A line for a case outside the shard's scope (not in its ``scope.json``, or not of its shard K/N: a foreign or
    forged line) is refused, naming the file and line: merged, it would count for a case another shard ran. A last
    line without its newline is a write cut short by a crash: it is left out (and left in place), as a resume and
    every reader of the journal leave it out, with a warning; its case counts as not run."""
    path = run_dir / PREDICTIONS
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RunLoadError(f"{path}: no such file; not a shard run, or one whose run never started") from None
    except OSError as exc:
        raise RunLoadError(f"{path}: {exc.strerror or exc}") from None
    complete = data.rfind(b"\n") + 1
    if complete < len(data):
        warn(f"{path}: its last line is cut short (the shard was killed while writing it); it is left out, as a "
             "resume leaves it out, and its case counts as not run")  # fmt: skip
    lines = data[:complete].splitlines()
    shard = parse_shard(manifest["identity"].get("shard"))
    own = {(lab.case_id, lab.content_hash) for lab in selected if in_shard(lab.case_id, shard)}
    scope = read_scope(run_dir)
    allowed = own if scope is None else own & scope  # scope.json alone could be forged too
    records = list(checked_records(path, lines))
    for line_no, rec in enumerate(records, start=1):
        if (rec["id"], rec["hash"]) not in allowed:
            raise RunMismatchError(
                f"{path}:{line_no}: id: {rec['id']!r} (content hash {rec['hash']}) is not one of the cases of shard "
                f"{shard_text(shard)} (its scope.json and the data set); refusing to merge a journal with lines "
                "from outside its shard"
            )
    return list(zip(lines, records, strict=True))


def _first_metrics(dirs: list[Path], warn: Callable[[str], None]) -> MetricsDocument:
    """The metrics document of the first shard that has one (what the merged document keeps of the data set and the
    detector), whatever order the shards were named in. A shard without one has not finished (killed, say): its
    journal is merged all the same, each line checked, and the cases it did not run count as not run, with a warning;
    `RunLoadError` when no shard has finished."""
    docs: list[MetricsDocument] = []
    for run_dir in dirs:
        if (run_dir / METRICS).exists():
            docs.append(read_metrics(run_dir))  # a broken one is refused, naming its file and field
        else:
            warn(f"{run_dir}: the shard has not finished (no {METRICS}); the cases its journal lacks count as not run "
                 f"(fcb eval --resume {shell_path(run_dir)} finishes it)")  # fmt: skip
    if not docs:
        return read_metrics(dirs[0])  # RunLoadError: no such file
    return docs[0]


def _stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def merge_runs(
    run_dirs: list[str | Path],
    out: str | Path,
    *,
    cases: str | None = None,
    warn: Callable[[str], None] = _stderr,
) -> MetricsDocument:
    """Merge shard runs into the folder ``out``; returns the merged metrics document. Nothing is written when a
    shard is refused (`_shard_journal`); ``warn`` hears of what is left out. The merged run's settings are the
    shards' but for the shard, its cases and figures are a single run's (`in_scope`, `run_figures`), and its
    metrics.json is made as a run's (`metrics_document`, `is_complete`)."""
    dirs = [Path(d) for d in run_dirs]
    manifests = _manifests(dirs)
    settings = replace(manifest_settings(manifests[0]), shard=None, cases=cases or manifests[0]["cases"])
    identity: Identity = {**manifests[0]["identity"], "shard": None}
    scanned = scan(settings.cases, strict=settings.strict, spool=has_items(settings))  # items: planned again
    if scanned.sha256 != identity["dataset_sha256"]:
        raise RunMismatchError(f"{settings.cases}: not the data set the shards ran on (sha256 differs); pass --cases")
    scope, labels, digest = in_scope(settings, scanned)
    first_doc = _first_metrics(dirs, warn)
    journals = [_shard_journal(d, m, scope, warn) for d, m in zip(dirs, manifests, strict=True)]
    hashes = {lab.case_id: lab.content_hash for lab in labels}
    outcomes: dict[ItemKey, Outcome] = {}
    for _, rec in (entry for journal in journals for entry in journal):
        if hashes.get(rec["id"]) == rec["hash"]:  # a case past --limit is in its shard but not counted
            outcomes[item_key(rec)] = outcome_of(rec)
    out = Path(out)
    if (out / PREDICTIONS).exists():
        raise RunMismatchError(f"{out} already holds a run")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / PREDICTIONS, b"".join(line + b"\n" for journal in journals for line, _ in journal))
    write_scope(out, labels)
    merged_from = [str(d) for d in dirs]
    write_manifest(
        out,
        {
            "identity": identity,
            "cases": manifests[0]["cases"],
            "settings": settings_record(settings),
            "created": min(m["created"] for m in manifests),
            "sessions": [s for m in manifests for s in m["sessions"]],
            "merged_from": merged_from,
        },
    )
    wall = max(sum(s["wall_s"] for s in m["sessions"]) for m in manifests)  # shards run side by side
    metrics, _, unasked = run_figures(settings, labels, outcomes, plan_items(settings, labels, scanned), wall)
    scanned.close()
    complete = is_complete(stopped=None, not_run=metrics["n_not_run"], unasked=unasked, counted=len(labels),
                           in_scope=len(scope), invalid_lines=scanned.invalid_lines, sharded=False)  # fmt: skip
    dataset = dataset_info(settings, scanned, digest)
    document = metrics_document(settings, dataset, first_doc["detector"], metrics, complete=complete,
                                merged_from=merged_from)  # fmt: skip
    write_reports(out, document)
    write_html(out, document)
    return document
