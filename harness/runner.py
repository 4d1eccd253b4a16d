"""Run a detector over a cases file: validate, strip labels, call the detector, journal, compute metrics.

The journal (``predictions.jsonl``) is the run's source of truth: metrics are always recomputed from it and the
case labels, so a resumed run and an uninterrupted one end with the same figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness import __version__
from harness.cases import Problem, Scan, iter_cases, scan
from harness.detectors import load_detector
from harness.detectors.options import DetectorOptions
from harness.journal import (
    PREDICTIONS,
    JournalWriter,
    outcome_of,
    read_journal,
    read_manifest,
    record,
    write_manifest,
)
from harness.metrics import compute
from harness.redact import redact_spec
from harness.report import write_reports
from harness.request import build_request
from harness.types import CaseLabels, Detector, DetectorError, Outcome, Prediction, RunResult

METRICS_VERSION = 2  # 2: headline_real and breakdowns.origin


class RunError(Exception):
    """A run that cannot start or continue; the message says why."""


class InvalidCases(RunError):
    """The cases file has errors; ``problems`` lists every problem found, warnings included."""

    def __init__(self, scan_result: Scan) -> None:
        errors = scan_result.errors
        super().__init__(f"{scan_result.path}: {len(errors)} error(s) in {scan_result.invalid_lines} line(s)")
        self.problems: list[Problem] = scan_result.problems


@dataclass(frozen=True)
class EvalSettings:
    """Everything that decides what a run does. ``out`` None makes a new folder under ``results_root``."""

    cases: str
    detector: str
    options: DetectorOptions = field(default_factory=DetectorOptions)
    out: str | None = None
    results_root: str = "results"
    resume: bool = False
    limit: int | None = None
    shard: tuple[int, int] | None = None  # (K, N): only the K-th of N deterministic parts of the cases
    anonymize_agents: bool = False
    skip_invalid: bool = False
    strict: bool = False
    progress: bool = False
    n_boot: int = 1000
    seed: int = 0


def shard_text(shard: tuple[int, int] | None) -> str | None:
    return f"{shard[0]}/{shard[1]}" if shard else None


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"K/N"`` (1 <= K <= N) as (K, N); None for None. Raises ValueError otherwise."""
    if text is None:
        return None
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ValueError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(k), int(n)


def in_shard(case_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether a case belongs to shard K of N: decided by its id alone, so reordering the file changes nothing."""
    if shard is None:
        return True
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % shard[1] == shard[0] - 1


def _slug(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", redact_spec(spec).split("://")[-1]).strip("-")[:40] or "detector"


def new_run_dir(root: str, spec: str) -> Path:
    """A fresh folder ``ROOT/<UTC time>-<detector>``, with a numeric suffix if that name is taken."""
    base = Path(root) / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{_slug(spec)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def _identity(settings: EvalSettings, scanned: Scan) -> dict[str, Any]:
    """What must not change between a run and its resumption."""
    return {
        "dataset_sha256": scanned.sha256,
        "detector": redact_spec(settings.detector),
        "limit": settings.limit,
        "shard": shard_text(settings.shard),
        "anonymize_agents": settings.anonymize_agents,
        "strict": settings.strict,
        "risk_field": ".".join(settings.options.risk_field),
    }


def _check_resume(run_dir: Path, identity: dict[str, Any]) -> dict[str, Any]:
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise RunError(f"{run_dir}: not a run folder (no run.json); nothing to resume")
    changed = [k for k, v in identity.items() if manifest["identity"].get(k) != v]
    if changed:
        detail = "; ".join(f"{k} was {manifest['identity'].get(k)!r}, now {identity[k]!r}" for k in changed)
        raise RunError(f"{run_dir}: refusing to resume, the run changed: {detail}")
    return manifest


def settings_record(settings: EvalSettings) -> dict[str, Any]:
    """The settings as stored in ``run.json`` and ``metrics.json``; `resumed_settings` reads them back.

    Header values are not stored: ``headers`` maps a header name to the environment variable that holds it.
    """
    options = asdict(settings.options)
    options["risk_field"] = ".".join(options["risk_field"])
    return {
        "limit": settings.limit,
        "shard": shard_text(settings.shard),
        "anonymize_agents": settings.anonymize_agents,
        "skip_invalid": settings.skip_invalid,
        "strict": settings.strict,
        "bootstrap_resamples": settings.n_boot,
        "seed": settings.seed,
        **options,
    }


def resumed_settings(run_dir: str | Path) -> EvalSettings:
    """The settings an interrupted run was started with, read from its ``run.json``, ready to continue it."""
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise RunError(f"{run_dir}: not a run folder (no run.json); nothing to resume")
    record = dict(manifest["settings"])
    flags = {k: record.pop(k) for k in ("limit", "anonymize_agents", "skip_invalid", "strict")}
    flags["shard"] = parse_shard(record.pop("shard"))
    n_boot, seed = record.pop("bootstrap_resamples"), record.pop("seed")
    record["risk_field"] = tuple(record["risk_field"].split("."))
    return EvalSettings(
        cases=manifest["cases"],
        detector=manifest["identity"]["detector"],
        options=DetectorOptions(**record),
        out=str(run_dir),
        resume=True,
        n_boot=n_boot,
        seed=seed,
        **flags,
    )


def _pending(settings: EvalSettings, todo: list[CaseLabels]) -> Iterator[tuple[CaseLabels, dict[str, Any]]]:
    by_line = {lab.line: lab for lab in todo}
    for line_no, case in iter_cases(settings.cases, [lab.line for lab in todo]):
        yield by_line[line_no], case


async def _assess(detector: Detector, request: Any) -> tuple[Prediction | None, DetectorError | None]:
    try:
        return await detector.assess(request), None
    except DetectorError as exc:
        return None, exc
    except Exception as exc:  # a broken adapter or detector costs one case, never the run
        return None, DetectorError("detector_exception", f"{type(exc).__name__}: {exc}"[:500])


class _Progress:
    """A tqdm bar on a terminal (cases/s and errors so far), or nothing."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.errors = 0
        self._bar = None
        if enabled and total:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="case", file=sys.stderr, dynamic_ncols=True)

    def step(self, failed: bool) -> None:
        self.errors += failed
        if self._bar is not None:
            if failed:
                self._bar.set_postfix(errors=self.errors, refresh=False)
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


async def _worker(
    source: Iterator[tuple[CaseLabels, dict[str, Any]]],
    detector: Detector,
    journal: JournalWriter,
    outcomes: dict[str, Outcome],
    settings: EvalSettings,
    progress: _Progress,
) -> None:
    for lab, case in source:
        started = time.perf_counter()
        prediction, error = await _assess(detector, build_request(case, anonymize_agents=settings.anonymize_agents))
        attempts = prediction.attempts if prediction else error.attempts  # type: ignore[union-attr]
        rec = record(lab, prediction, error, attempts, time.perf_counter() - started)
        journal.write(rec)
        outcomes[lab.case_id] = outcome_of(rec)
        progress.step(error is not None)


async def _run_workers(
    settings: EvalSettings,
    detector: Detector,
    todo: list[CaseLabels],
    journal: JournalWriter,
    outcomes: dict[str, Outcome],
) -> bool:
    """Run the pending cases; returns False when interrupted by SIGINT/SIGTERM."""
    progress = _Progress(len(todo), settings.progress)
    source = _pending(settings, todo)
    n_workers = min(settings.options.concurrency, max(1, len(todo)))
    tasks = [
        asyncio.ensure_future(_worker(source, detector, journal, outcomes, settings, progress))
        for _ in range(n_workers)
    ]
    interrupted = False

    def stop() -> None:
        nonlocal interrupted
        interrupted = True
        for t in tasks:
            t.cancel()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop)
    try:
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(sig)
        progress.close()
    for r in results:
        if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
            raise r
    return not interrupted


def _refuse_training_overlap(detector: Detector, labels: list[CaseLabels]) -> None:
    """A trained detector must never be scored on the source items it was trained on."""
    trained_on = getattr(detector, "train_source_items", None)
    if not trained_on:
        return
    shared = sorted({lab.source_item for lab in labels} & set(trained_on))
    if shared:
        raise RunError(
            f"refusing to evaluate: the detector was trained on {len(shared)} source item(s) of this file "
            f"(e.g. {', '.join(shared[:3])}); train on a split that shares no source question"
        )


def _open_run_dir(settings: EvalSettings, identity: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """The run folder and its manifest: the resumed run's (checked against ``identity``) or a new one."""
    if settings.resume:
        if settings.out is None:
            raise RunError("resume needs the run folder")
        run_dir = Path(settings.out)
        return run_dir, _check_resume(run_dir, identity)
    run_dir = Path(settings.out) if settings.out else new_run_dir(settings.results_root, settings.detector)
    if (run_dir / PREDICTIONS).exists():
        raise RunError(f"{run_dir} already holds a run; use --resume {run_dir} to continue it")
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest = {
        "identity": identity,
        "cases": os.path.abspath(settings.cases),
        "settings": settings_record(settings),
        "created": _now(),
        "sessions": [],
    }
    return run_dir, manifest


async def run(settings: EvalSettings, detector: Detector | None = None) -> RunResult:
    """Evaluate a detector on a cases file and write the run folder. See `EvalSettings` for the knobs.

    Raises `InvalidCases` before any detector call when the file has errors (unless ``skip_invalid``), and
    `RunError` when there is nothing to evaluate or a run folder cannot be resumed.
    """
    scanned = scan(settings.cases, strict=settings.strict)
    if scanned.errors and not settings.skip_invalid:
        raise InvalidCases(scanned)
    scope = [lab for lab in scanned.labels if in_shard(lab.case_id, settings.shard)]
    labels = scope[: settings.limit] if settings.limit is not None else scope
    if not labels:
        raise RunError(f"{settings.cases}: no valid case to evaluate ({scanned.lines} line(s) read)")
    owned = detector is None
    detector = detector or load_detector(settings.detector, settings.options)  # before any folder is made
    try:
        _refuse_training_overlap(detector, labels)
        run_dir, manifest = _open_run_dir(settings, _identity(settings, scanned))
        hashes = {lab.case_id: lab.content_hash for lab in labels}
        journaled = read_journal(run_dir / PREDICTIONS)
        outcomes = {cid: o for cid, o in journaled.items() if hashes.get(cid) == o.content_hash}
        todo = [lab for lab in labels if lab.case_id not in outcomes]
        write_manifest(run_dir, manifest)
        journal = JournalWriter(run_dir / PREDICTIONS, secrets=getattr(detector, "secrets", list)())
        started, started_at = time.perf_counter(), _now()
        try:
            uninterrupted = await _run_workers(settings, detector, todo, journal, outcomes)
        finally:
            journal.close()
    finally:
        if owned:
            await detector.aclose()
    manifest["sessions"].append({"started": started_at, "wall_s": time.perf_counter() - started, "cases": len(todo)})
    write_manifest(run_dir, manifest)
    wall = sum(s["wall_s"] for s in manifest["sessions"])
    prices = (settings.options.price_prompt_per_mtok, settings.options.price_completion_per_mtok)
    metrics = compute(labels, outcomes, wall_s=wall, n_boot=settings.n_boot, seed=settings.seed, prices=prices)
    complete = uninterrupted and not metrics["n_not_run"] and len(labels) == len(scope)
    # a shard is only a part of the data set: it counts as complete once merged with the others (fcb merge)
    whole = complete and not scanned.invalid_lines and settings.shard is None
    document = _document(settings, scanned, detector, metrics, complete=whole)
    write_reports(run_dir, document)
    problems = [str(p) for p in scanned.problems]
    return RunResult(str(run_dir), document, labels, list(outcomes.values()), document["complete"], problems)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _document(
    settings: EvalSettings, scanned: Scan, detector: Detector, metrics: dict[str, Any], *, complete: bool
) -> dict[str, Any]:
    return {
        "metrics_version": METRICS_VERSION,
        "harness_version": __version__,
        "created": _now(),
        "complete": complete,
        "dataset": {
            "path": os.path.abspath(settings.cases),
            "name": Path(settings.cases).name,
            "sha256": scanned.sha256,
            "cases": len(scanned.labels),
            "lines": scanned.lines,
            "skipped_invalid": scanned.invalid_lines,
            "problems": [str(p) for p in scanned.problems[:200]],
        },
        "detector": {"spec": redact_spec(settings.detector), "name": redact_spec(getattr(detector, "name", ""))},
        "settings": settings_record(settings),
        "metrics": metrics,
    }


def _settings_for(cases: str, detector: str | Detector, kwargs: dict[str, Any]) -> tuple[EvalSettings, Detector | None]:
    if isinstance(detector, str):
        return EvalSettings(cases=cases, detector=detector, **kwargs), None
    return EvalSettings(cases=cases, detector=getattr(detector, "name", type(detector).__name__), **kwargs), detector


def evaluate(cases: str, detector: str | Detector, **kwargs: Any) -> RunResult:
    """Synchronous entry point for the Python API: ``evaluate("cases.jsonl", "builtin:agreement")``.

    ``detector`` is a spec string or an object with ``async assess(request)``; other keyword arguments are
    `EvalSettings` fields (``options`` takes a `DetectorOptions`). Inside a running event loop (a notebook),
    await `evaluate_async` instead.
    """
    return asyncio.run(run(*_settings_for(cases, detector, kwargs)))


async def evaluate_async(cases: str, detector: str | Detector, **kwargs: Any) -> RunResult:
    """`evaluate` for code that already runs an event loop."""
    return await run(*_settings_for(cases, detector, kwargs))
