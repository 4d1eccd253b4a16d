"""Run a detector over a cases file: validate, strip labels, call the detector, journal, compute metrics.

The journal (``predictions.jsonl``) is the run's source of truth: metrics are always recomputed from it and the
case labels, so a resumed run and an uninterrupted one end with the same figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from harness._version import __version__
from harness.cases.reader import Scan, scan
from harness.cases.request import build_request
from harness.detectors import adapt, fingerprint
from harness.detectors.callable import exception_error
from harness.detectors.options import DetectorOptions
from harness.documents import JournalRecord, Metrics, MetricsDocument
from harness.errors import (
    InvalidCasesError,
    PreflightFailed,
    RunError,
    RunInterrupted,
    RunMismatchError,
    UsageError,
)
from harness.metrics import compute
from harness.redact import redact_spec, scrub_text
from harness.report.html import write_html
from harness.report.text import write_reports
from harness.run.cache import CachedDetector, cache_wanted, with_cache
from harness.run.engines import EngineSettings, open_detector
from harness.runfolder.journal import (
    METRICS,
    PREDICTIONS,
    JournalWriter,
    in_file_order,
    outcome_of,
    read_journal,
    read_manifest,
    record,
    run_lock,
    write_manifest,
    write_scope,
)
from harness.types import (
    CATEGORIES,
    CaseLabels,
    Detector,
    DetectorError,
    HasConcurrency,
    HasPreflight,
    HasSecrets,
    HasTrainingItems,
    Outcome,
    Prediction,
    RunAborted,
    RunResult,
)

METRICS_VERSION = 2  # 2: headline_real and breakdowns.origin


InvalidCases = InvalidCasesError  # the name before harness.errors; kept importable


def _invalid_cases(scan_result: Scan) -> InvalidCasesError:
    errors = scan_result.errors
    message = f"{scan_result.path}: {len(errors)} error(s) in {scan_result.invalid_lines} line(s)"
    return InvalidCasesError(message, scan_result.problems)


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
    progress: bool | str = False  # True or "bar": a tqdm bar; "lines": a plain line every 10 s or 5%
    n_boot: int = 1000
    seed: int = 0
    name: str | None = None  # shown in reports and leaderboards instead of the spec
    categories: tuple[str, ...] = ()  # only cases of these categories (a subset: its own data set)
    tags: tuple[str, ...] = ()  # only cases with one of these tags
    preflight: bool = True  # call the first case alone before the others; stop at once if it cannot work
    max_consecutive_errors: int = 25  # stop after this many errors of one kind in a row (0: never)
    # where a Python detector runs (harness.run.engines): none of these changes a run's results
    engine: str = "local"  # "local", "processes" or "ray"
    workers: int | None = None
    ray_address: str | None = None
    num_cpus: float | None = None
    num_gpus: float | None = None

    def engine_settings(self) -> EngineSettings:
        return EngineSettings(self.engine, self.workers, self.ray_address, self.num_cpus, self.num_gpus)


_ENGINE_FIELDS = ("engine", "workers", "ray_address", "num_cpus", "num_gpus")


def shard_text(shard: tuple[int, int] | None) -> str | None:
    return f"{shard[0]}/{shard[1]}" if shard else None


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"K/N"`` (1 <= K <= N) as (K, N); None for None. Raises `UsageError` otherwise."""
    if text is None:
        return None
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise UsageError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(k), int(n)


def in_shard(case_id: str, shard: tuple[int, int] | None) -> bool:
    """Whether a case belongs to shard K of N: decided by its id alone, so reordering the file changes nothing."""
    if shard is None:
        return True
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % shard[1] == shard[0] - 1


def _slug(spec: str) -> str:
    # a URL loses its scheme; llm:MODEL@URL keeps its model name in front
    text = re.sub(r"^llm:", "", re.sub(r"[A-Za-z][A-Za-z0-9+.-]*://", "", redact_spec(spec)))
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:40] or "detector"


def new_run_dir(root: str, spec: str) -> Path:
    """A fresh folder ``ROOT/<UTC time>-<detector>``, with a numeric suffix if that name is taken."""
    base = Path(root) / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{_slug(spec)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def select(labels: list[CaseLabels], categories: tuple[str, ...], tags: tuple[str, ...]) -> list[CaseLabels]:
    """The cases of any of ``categories`` that carry any of ``tags`` (an empty choice selects everything)."""
    unknown = sorted(set(categories) - set(CATEGORIES))
    if unknown:
        raise RunError(f"--category {unknown[0]!r}: not a category; choose from {', '.join(CATEGORIES)}")
    wanted = set(tags)
    return [
        lab
        for lab in labels
        if (not categories or lab.category in categories) and (not wanted or wanted.intersection(lab.tags))
    ]


def subset_digest(labels: list[CaseLabels]) -> str:
    """A subset's own data-set digest: the hash of its cases' content hashes, whatever filter chose them."""
    return hashlib.sha256("\n".join(sorted(lab.content_hash for lab in labels)).encode()).hexdigest()


def _subset(settings: EvalSettings) -> dict[str, list[str]] | None:
    if not (settings.categories or settings.tags):
        return None
    return {"categories": sorted(settings.categories), "tags": sorted(settings.tags)}


def _identity(settings: EvalSettings, scanned: Scan, detector_fingerprint: dict[str, Any]) -> dict[str, Any]:
    """What must not change between a run and its resumption."""
    identity = {
        "dataset_sha256": scanned.sha256,
        "detector": redact_spec(settings.detector),
        "limit": settings.limit,
        "shard": shard_text(settings.shard),
        "anonymize_agents": settings.anonymize_agents,
        "strict": settings.strict,
        "risk_field": ".".join(settings.options.risk_field),
        "fingerprint": detector_fingerprint,
    }
    if subset := _subset(settings):
        identity["subset"] = subset
    return identity


def _change(key: str, was: Any, now: Any) -> str:
    if key == "fingerprint" and isinstance(was, dict) and isinstance(now, dict):
        what = now.get("source") or now.get("kind")
        keys = sorted(set(was) | set(now))
        parts = [f"{k} was {was.get(k)!r}, now {now.get(k)!r}" for k in keys if was.get(k) != now.get(k)]
        return f"the detector's fingerprint changed ({what}: {'; '.join(parts)})"
    return f"{key} was {was!r}, now {now!r}"


def _check_resume(run_dir: Path, identity: dict[str, Any]) -> dict[str, Any]:
    manifest = read_manifest(run_dir)
    if manifest is None:
        raise RunError(f"{run_dir}: not a run folder (no run.json); nothing to resume")
    old = manifest["identity"]
    # runs written before fingerprints were kept have none to compare
    keys = [k for k in dict.fromkeys([*identity, *old]) if not (k == "fingerprint" and k not in old)]
    changed = [k for k in keys if old.get(k) != identity.get(k)]
    if changed:
        detail = "; ".join(_change(k, old.get(k), identity.get(k)) for k in changed)
        raise RunMismatchError(f"{run_dir}: refusing to resume, the run changed: {detail}")
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
        "name": settings.name,
        "categories": list(settings.categories),
        "tags": list(settings.tags),
        **{key: getattr(settings, key) for key in _ENGINE_FIELDS},
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
    name = record.pop("name", None)  # the last three are absent from runs of older versions
    categories, tags = tuple(record.pop("categories", ())), tuple(record.pop("tags", ()))
    engine = {key: record.pop(key) for key in _ENGINE_FIELDS if key in record}
    record["risk_field"] = tuple(record["risk_field"].split("."))
    return EvalSettings(
        cases=manifest["cases"],
        detector=manifest["identity"]["detector"],
        options=DetectorOptions(**record),
        out=str(run_dir),
        resume=True,
        n_boot=n_boot,
        seed=seed,
        name=name,
        categories=categories,
        tags=tags,
        **engine,
        **flags,
    )


def _pending(scanned: Scan, todo: list[CaseLabels]) -> Iterator[tuple[CaseLabels, dict[str, Any]]]:
    # from the spool that scan filled: the file is never read a second time
    for lab in todo:
        yield lab, scanned.case(lab.line)


def send_order(todo: list[CaseLabels], seed: int) -> list[CaseLabels]:
    """The pending cases in a seeded shuffled order: a file grouped by category must not let a detector that keeps
    state infer labels from the order. Journal and reports keep the file's order."""
    order = list(todo)
    random.Random(f"send-order:{seed}").shuffle(order)
    return order


def _attempts(prediction: Prediction | None, error: DetectorError | None) -> int:
    """Tries made for one case: `_assess` returns a prediction or an error, never neither."""
    if prediction is not None:
        return prediction.attempts
    assert error is not None
    return error.attempts


async def _assess(
    detector: Detector, request: Any, *, preflight: bool = False
) -> tuple[Prediction | None, DetectorError | None]:
    # a preflight goes through the adapter's own preflight when it has one (no waiting on an unreachable host)
    call = detector.preflight if preflight and isinstance(detector, HasPreflight) else detector.assess
    try:
        return await call(request), None
    except DetectorError as exc:
        return None, exc
    except Exception as exc:  # a broken adapter or detector costs one case, never the run
        return None, exception_error(exc)


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return (
        f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"
    )


class _Progress:
    """A tqdm bar on a terminal; elsewhere (a CI log, nohup) a plain line on stderr every 10 s or 5% of the cases.

    ``mode``: True or "bar" for the bar, "lines" for the lines, anything false for nothing. ``done`` counts the
    cases a resumed run had already finished.
    """

    EVERY_S = 10.0

    def __init__(self, total: int, done: int, mode: bool | str) -> None:
        self.total, self.done, self.errors = total, done, 0
        self._bar = None
        self._lines = mode == "lines" and total > done
        self._first = done
        self._started = self._last_t = time.monotonic()
        self._next = done + max(1, -(-total // 20))  # 5% of the cases, rounded up
        if mode in (True, "bar") and total > done:
            from tqdm import tqdm

            self._bar = tqdm(total=total, initial=done, unit="case", file=sys.stderr, dynamic_ncols=True)

    def step(self, failed: bool) -> None:
        self.done += 1
        self.errors += failed
        if self._bar is not None:
            if failed:
                self._bar.set_postfix(errors=self.errors, refresh=False)
            self._bar.update(1)
        elif self._lines and (self.done >= self._next or self.done == self.total):
            self._next = self.done + max(1, -(-self.total // 20))
            self.line()

    def tick(self) -> None:
        """Called every second or so: a line when 10 s passed without one, so a stalled run still says so."""
        if self._lines and time.monotonic() - self._last_t >= self.EVERY_S:
            self.line()

    def line(self) -> None:
        now = time.monotonic()
        self._last_t = now
        rate = (self.done - self._first) / (now - self._started) if now > self._started else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else None
        print(
            f"fcb eval: {self.done}/{self.total} cases ({100 * self.done / self.total:.0f}%), {rate:.1f} cases/s, "
            f"{self.errors} error(s), ETA {_duration(eta)}",
            file=sys.stderr,
            flush=True,
        )

    async def ticking(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            self.tick()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


class _Streak:
    """Errors of one kind in a row; reaching ``limit`` (0: never) means the detector is down, not unlucky."""

    def __init__(self, limit: int) -> None:
        self.limit, self.kind, self.count, self.message = limit, "", 0, ""

    def add(self, error: DetectorError | None) -> bool:
        if error is None:
            self.kind, self.count = "", 0
            return False
        self.count = self.count + 1 if error.kind == self.kind else 1
        self.kind, self.message = error.kind, error.message
        return bool(self.limit) and self.count >= self.limit

    def reason(self) -> str:
        return f"{self.count} consecutive {self.kind} errors (the last: {self.message})"


class _Signals:
    """SIGINT and SIGTERM from a run's start until its report is on disk.

    The first stops the cases (what finished is kept and the report is written); the second says the report is
    being finished; the third aborts at once (KeyboardInterrupt), without a report. Installed with
    `signal.signal`, not the event loop's handlers, so that they also act while the report is computed.
    """

    def __init__(self) -> None:
        self.count = 0
        self.on_first: Callable[[], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._old: dict[int, Any] = {}

    def __enter__(self) -> _Signals:
        self._loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(ValueError, OSError):
                    self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *_: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1
        if self.count == 1:
            assert self._loop is not None
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._first)
        elif self.count == 2:
            with contextlib.suppress(OSError, ValueError):  # os.write: print is not safe inside a signal handler
                os.write(sys.stderr.fileno(), b"finishing the report; press Ctrl-C again to abort\n")
        else:
            raise RunAborted  # a KeyboardInterrupt that detector adapters do not take for the detector's own

    def _first(self) -> None:
        if self.on_first is not None:
            self.on_first()

    async def guard(self, awaitable: Any) -> Any:
        """Await a step before the run folder exists; a signal cancels it and raises `RunInterrupted`."""
        task = asyncio.ensure_future(awaitable)
        self.on_first = task.cancel
        if self.count:
            task.cancel()
        try:
            return await task
        except asyncio.CancelledError:
            if self.count:
                raise RunInterrupted("interrupted before the run started; nothing was written") from None
            raise
        finally:
            self.on_first = None


async def _worker(
    source: Iterator[tuple[CaseLabels, dict[str, Any]]],
    detector: Detector,
    journal: JournalWriter,
    outcomes: dict[str, Outcome],
    settings: EvalSettings,
    progress: _Progress,
    streak: _Streak,
    stop: Callable[[str], None],
) -> None:
    for lab, case in source:
        started = time.perf_counter()
        prediction, error = await _assess(detector, build_request(case, anonymize_agents=settings.anonymize_agents))
        attempts = _attempts(prediction, error)
        rec = record(lab, prediction, error, attempts, time.perf_counter() - started)
        outcomes[lab.case_id] = outcome_of(journal.write(rec))  # as written: echoed secrets scrubbed
        progress.step(error is not None)
        if streak.add(error):
            stop(streak.reason())


async def _run_workers(
    settings: EvalSettings,
    detector: Detector,
    todo: list[CaseLabels],
    journal: JournalWriter,
    outcomes: dict[str, Outcome],
    progress: _Progress,
    signals: _Signals,
    scanned: Scan,
) -> str | None:
    """Run the pending cases; returns None when they all ran, else why they stopped ("interrupted" or a streak)."""
    if signals.count:
        return INTERRUPTED
    source = _pending(scanned, todo)
    streak = _Streak(settings.max_consecutive_errors)
    stopped: list[str] = []
    tasks: list[asyncio.Future[None]] = []

    def stop(reason: str) -> None:
        stopped.append(reason)
        for t in tasks:
            t.cancel()

    # an engine or a batch detector may want more cases in flight than --concurrency, to fill its batches
    wanted = detector.concurrency if isinstance(detector, HasConcurrency) else 0
    in_flight = max(settings.options.concurrency, wanted)
    n_workers = min(in_flight, max(1, len(todo)))
    tasks += [
        asyncio.ensure_future(_worker(source, detector, journal, outcomes, settings, progress, streak, stop))
        for _ in range(n_workers)
    ]
    signals.on_first = lambda: stop(INTERRUPTED)
    ticker = asyncio.ensure_future(progress.ticking())
    try:
        results = await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        signals.on_first = None
        ticker.cancel()
    for r in results:
        if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
            raise r
    return stopped[0] if stopped else None


INTERRUPTED = "interrupted"
_FATAL_STATUS = re.compile(r"HTTP (401|403|404)\b")
_NO_CONNECTION = re.compile(r"ClientConnector")  # aiohttp's errors for refused, unknown host, TLS failure


def fatal(error: DetectorError) -> bool:
    """An error on the first case that every other case would meet too: no connection could be made at all, the
    request was refused (401, 403, 404), or the detector raised. A reset, a timeout or a 5xx may pass."""
    if error.kind == "detector_exception":
        return True
    if error.kind == "connection":
        return bool(_NO_CONNECTION.match(error.message))
    return error.kind == "http_status" and bool(_FATAL_STATUS.match(error.message))


async def _preflight(settings: EvalSettings, detector: Detector, lab: CaseLabels, scanned: Scan) -> JournalRecord:
    """Call the first pending case alone; its journal record, or `PreflightFailed` when it cannot work."""
    case = scanned.case(lab.line)
    started = time.perf_counter()
    request = build_request(case, anonymize_agents=settings.anonymize_agents)
    prediction, error = await _assess(detector, request, preflight=True)
    if error is not None and fatal(error):
        message = scrub_text(error.message, _secrets(detector))  # the journal scrubs the same
        raise PreflightFailed(
            f"preflight: the detector failed on the first case ({lab.case_id}): {error.kind}: {message}; "
            "no other case was sent (--no-preflight skips this check)"
        )
    attempts = _attempts(prediction, error)
    return record(lab, prediction, error, attempts, time.perf_counter() - started)


def _cached(settings: EvalSettings, detector: Detector, detector_fingerprint: dict[str, Any]) -> Detector:
    """The detector behind the response cache when the settings ask for it (see `harness.run.cache`)."""
    o = settings.options
    enabled = o.cache if o.cache is not None else (True if o.cache_refresh else None)  # refreshing means using it
    if not cache_wanted(settings.detector, enabled, o.temperature, o.samples):
        return detector
    return with_cache(
        detector, detector_fingerprint, risk_field=o.risk_field, directory=o.cache_dir, refresh=o.cache_refresh
    )


def _secrets(detector: Detector) -> list[str]:
    return list(detector.secrets()) if isinstance(detector, HasSecrets) else []


def _refuse_training_overlap(detector: Detector, labels: list[CaseLabels]) -> None:
    """A trained detector must never be scored on the source items it was trained on."""
    trained_on = detector.train_source_items if isinstance(detector, HasTrainingItems) else ()
    if not trained_on:
        return
    shared = sorted({lab.source_item for lab in labels} & set(trained_on))
    if shared:
        raise RunError(
            f"refusing to evaluate: the detector was trained on {len(shared)} source item(s) of this file "
            f"(e.g. {', '.join(shared[:3])}); train on a split that shares no source question"
        )


def _open_run_dir(settings: EvalSettings, identity: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """The run folder (made later, once the preflight passed) and its manifest: the resumed run's (checked
    against ``identity``) or a new one."""
    if settings.resume:
        if settings.out is None:
            raise RunError("resume needs the run folder")
        run_dir = Path(settings.out)
        return run_dir, _check_resume(run_dir, identity)
    run_dir = (
        Path(settings.out) if settings.out else new_run_dir(settings.results_root, settings.name or settings.detector)
    )
    if (run_dir / PREDICTIONS).exists():
        raise RunMismatchError(f"{run_dir} already holds a run; use --resume {run_dir} to continue it")
    manifest = {
        "identity": identity,
        "cases": os.path.abspath(settings.cases),
        "settings": settings_record(settings),
        "created": _now(),
        "sessions": [],
    }
    return run_dir, manifest


def _lock(held: contextlib.ExitStack, run_dir: Path) -> None:
    held.enter_context(run_lock(run_dir))  # RunLocked, a RunError, when another process holds it


def _in_scope(settings: EvalSettings, scanned: Scan) -> tuple[list[CaseLabels], list[CaseLabels], str]:
    """(the cases of the selected subset and shard, those of them to run (--limit), the data set's digest)."""
    selected = select(scanned.labels, settings.categories, settings.tags)
    digest = subset_digest(selected) if _subset(settings) else scanned.sha256
    scope = [lab for lab in selected if in_shard(lab.case_id, settings.shard)]
    labels = scope[: settings.limit] if settings.limit is not None else scope
    return scope, labels, digest


def _shard_filter(settings: EvalSettings) -> Callable[[str], bool] | None:
    """A shard validates only its own cases (the digest still covers the whole file, for fcb merge to check); a
    subset of a shard needs every case's content hash for its digest, so it validates them all."""
    if settings.shard is None or _subset(settings):
        return None
    shard = settings.shard
    return lambda case_id: in_shard(case_id, shard)


async def run(settings: EvalSettings, detector: Detector | None = None) -> RunResult:
    """Evaluate a detector on a cases file and write the run folder. See `EvalSettings` for the knobs.

    Raises `InvalidCases` before any detector call when the file has errors (unless ``skip_invalid``), `RunError`
    when there is nothing to evaluate or a run folder cannot be resumed, `PreflightFailed` (a `RunError`) when
    the first case shows the detector cannot work, and `RunInterrupted` for a signal before the folder was made.
    """
    # read once: the run sends from the spool; a shard validates only its own cases
    scanned = scan(settings.cases, strict=settings.strict, spool=True, keep=_shard_filter(settings))
    try:
        return await _run_scanned(settings, detector, scanned)
    finally:
        scanned.close()


async def _run_scanned(settings: EvalSettings, detector: Detector | None, scanned: Scan) -> RunResult:
    if scanned.errors and not settings.skip_invalid:
        raise _invalid_cases(scanned)
    scope, labels, digest = _in_scope(settings, scanned)
    if not labels:
        chosen = f" matching {_subset(settings)}" if _subset(settings) else ""
        raise RunError(f"{settings.cases}: no valid case{chosen} to evaluate ({scanned.lines} line(s) read)")
    owned = detector is None
    # before any folder is made
    detector = detector or open_detector(settings.detector, settings.options, settings.engine_settings())
    with _Signals() as signals, contextlib.ExitStack() as held:
        try:
            _refuse_training_overlap(detector, labels)
            detector_fingerprint = await signals.guard(fingerprint(detector, settings.detector))
            detector = _cached(settings, detector, detector_fingerprint)
            run_dir, manifest = _open_run_dir(settings, _identity(settings, scanned, detector_fingerprint))
            if settings.resume:  # held until the report is written: two processes never run one folder
                _lock(held, run_dir)
            hashes = {lab.case_id: lab.content_hash for lab in labels}
            journaled = read_journal(run_dir / PREDICTIONS)
            outcomes = {cid: o for cid, o in journaled.items() if hashes.get(cid) == o.content_hash}
            todo = send_order([lab for lab in labels if lab.case_id not in outcomes], settings.seed)
            started, started_at = time.perf_counter(), _now()
            first = (
                await signals.guard(_preflight(settings, detector, todo[0], scanned))
                if settings.preflight and todo
                else None
            )
            run_dir.mkdir(parents=True, exist_ok=True)
            if not settings.resume:
                _lock(held, run_dir)
                if (run_dir / PREDICTIONS).exists():  # another run started in this folder meanwhile
                    raise RunMismatchError(f"{run_dir} already holds a run; use --resume {run_dir} to continue it")
            write_manifest(run_dir, manifest)
            write_scope(run_dir, labels)  # what the run counts: compare and leaderboards count the same
            journal = JournalWriter(run_dir / PREDICTIONS, secrets=_secrets(detector))
            progress = _Progress(len(labels), len(outcomes), settings.progress)
            try:
                if first is not None:  # the preflight's answer stands as its case's result: no case is asked twice
                    outcomes[first["id"]] = outcome_of(journal.write(first))
                    todo = todo[1:]
                    progress.step(first["error"] is not None)
                stopped = await _run_workers(settings, detector, todo, journal, outcomes, progress, signals, scanned)
            finally:
                ended = time.perf_counter()  # closing the detector (stopping a local Ray) is not the cases' time
                journal.close()
                progress.close()
            in_file_order(run_dir / PREDICTIONS, [lab.case_id for lab in labels])
        finally:
            if owned:
                await detector.aclose()
            if isinstance(detector, CachedDetector):
                detector.cache.close()
        manifest["sessions"].append(
            {"started": started_at, "wall_s": ended - started, "cases": len(todo) + (first is not None)}
        )
        write_manifest(run_dir, manifest)
        wall = sum(s["wall_s"] for s in manifest["sessions"])
        prices = (settings.options.price_prompt_per_mtok, settings.options.price_completion_per_mtok)
        metrics = compute(labels, outcomes, wall_s=wall, n_boot=settings.n_boot, seed=settings.seed, prices=prices)
        complete = stopped is None and not metrics["n_not_run"] and len(labels) == len(scope)
        # a shard is only a part of the data set: it counts as complete once merged with the others (fcb merge)
        whole = complete and not scanned.invalid_lines and settings.shard is None
        document = _document(settings, scanned, digest, detector, detector_fingerprint, metrics, complete=whole)
        document["stopped"] = stopped
        write_reports(run_dir, document)
        write_html(run_dir, document, cases=scanned.spool)  # the spool: the cases file is never read twice
    problems = [str(p) for p in scanned.problems]
    return RunResult(str(run_dir), document, labels, list(outcomes.values()), document["complete"], problems, stopped)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _document(
    settings: EvalSettings,
    scanned: Scan,
    digest: str,
    detector: Detector,
    detector_fingerprint: dict[str, Any],
    metrics: Metrics,
    *,
    complete: bool,
) -> MetricsDocument:
    subset = _subset(settings)
    name = Path(settings.cases).name
    return {
        "metrics_version": METRICS_VERSION,
        "harness_version": __version__,
        "created": _now(),
        "complete": complete,
        "dataset": {
            "path": os.path.abspath(settings.cases),
            "name": name if subset is None else f"{name} [{_subset_text(subset)}]",
            "sha256": digest,  # a subset is its own data set: leaderboards never mix it with the whole file
            "file_sha256": scanned.sha256,
            "subset": subset,
            "cases": len(scanned.labels)
            if subset is None
            else len(select(scanned.labels, settings.categories, settings.tags)),
            "lines": scanned.lines,
            "skipped_invalid": scanned.invalid_lines,
            "problems": [str(p) for p in scanned.problems[:200]],
        },
        "detector": {
            "spec": redact_spec(settings.detector),
            "name": redact_spec(getattr(detector, "name", "")),
            "label": settings.name,
            "fingerprint": detector_fingerprint,
        },
        "settings": settings_record(settings),
        "metrics": metrics,
    }


def _subset_text(subset: dict[str, list[str]]) -> str:
    parts = [f"category={','.join(subset['categories'])}"] if subset["categories"] else []
    return "; ".join(parts + ([f"tag={','.join(subset['tags'])}"] if subset["tags"] else []))


_OPTION_FIELDS = frozenset(f.name for f in fields(DetectorOptions))
_SETTING_FIELDS = frozenset(f.name for f in fields(EvalSettings)) - {"cases", "detector", "options"}


def _api_settings(
    cases: str | Path, detector: Any, name: str | None, kwargs: dict[str, Any]
) -> tuple[EvalSettings, Detector | None]:
    """`EvalSettings` from `evaluate`'s keyword arguments: the CLI's settings, by their Python names."""
    given = dict(kwargs)
    option_args = {k: given.pop(k) for k in list(given) if k in _OPTION_FIELDS}
    base = given.pop("options", None) or DetectorOptions()
    unknown = sorted(set(given) - _SETTING_FIELDS)
    if unknown:
        known = ", ".join(sorted(_SETTING_FIELDS | _OPTION_FIELDS))
        raise TypeError(f"evaluate() has no setting {unknown[0]!r}; the settings are: {known}")
    if isinstance(option_args.get("risk_field"), str):
        option_args["risk_field"] = tuple(option_args["risk_field"].split("."))
    if isinstance(given.get("shard"), str):
        given["shard"] = parse_shard(given["shard"])
    for key in ("categories", "tags"):
        if key in given:
            given[key] = (given[key],) if isinstance(given[key], str) else tuple(given[key])
    options = replace(base, **option_args)
    adapted: Detector | None = None
    if isinstance(detector, str):
        spec = detector
    else:
        adapted = adapt(detector, options, name)
        spec = adapted.name
    return EvalSettings(cases=str(cases), detector=spec, options=options, name=name, **given), adapted


async def evaluate_async(
    cases: str | Path,
    detector: Any,
    *,
    name: str | None = None,
    concurrency: int = 8,
    timeout: float = 30.0,
    retries: int = 3,
    **settings: Any,
) -> RunResult:
    """`evaluate` for code that already runs an event loop."""
    config, adapted = _api_settings(
        cases, detector, name, {"concurrency": concurrency, "timeout": timeout, "retries": retries, **settings}
    )
    try:
        return await run(config, adapted)
    finally:
        if adapted is not None:
            await adapted.aclose()


def evaluate(
    cases: str | Path,
    detector: Any,
    *,
    name: str | None = None,
    concurrency: int = 8,
    timeout: float = 30.0,
    retries: int = 3,
    **settings: Any,
) -> RunResult:
    """Run a detector over a cases file from Python: ``evaluate("cases.jsonl", "builtin:agreement")``.

    ``detector`` is a spec string (as ``fcb eval -d``), a plain or ``async`` function of the request dict, or an
    object with an ``assess(request)`` method; a function or method returns a reply dict, a risk string or a
    `Prediction`. Anything else raises TypeError at once. Other keyword arguments are the CLI's settings by their
    Python names (``risk_field``, ``headers``, ``limit``, ``shard``, ``categories``, ``tags``, ``anonymize_agents``,
    ``skip_invalid``, ``strict``, ``out``, ``results_root``, ``n_boot``, ``seed``, ``preflight``,
    ``max_consecutive_errors``, ``progress``...). Inside a running event loop (a notebook) await `evaluate_async`.
    """
    return asyncio.run(
        evaluate_async(
            cases, detector, name=name, concurrency=concurrency, timeout=timeout, retries=retries, **settings
        )
    )


def load_result(run_dir: str | Path) -> RunResult:
    """A finished run read back from its folder, as the `RunResult` that `evaluate` returned (``.frame()`` too)."""
    path = Path(run_dir)
    try:
        document: MetricsDocument = orjson.loads((path / METRICS).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise RunError(f"{path / METRICS}: {exc}; a run that has not finished has none (fcb eval --resume)") from exc
    settings = resumed_settings(path)
    scanned = scan(settings.cases, strict=settings.strict)
    if scanned.sha256 != document["dataset"].get("file_sha256", document["dataset"]["sha256"]):
        raise RunError(f"{settings.cases}: not the cases file this run evaluated (its sha256 differs)")
    _, labels, _ = _in_scope(settings, scanned)
    hashes = {lab.case_id: lab.content_hash for lab in labels}
    journaled = read_journal(path / PREDICTIONS, repair=False)
    outcomes = [o for cid, o in journaled.items() if hashes.get(cid) == o.content_hash]
    problems = [str(p) for p in scanned.problems]
    return RunResult(
        str(path), document, labels, outcomes, bool(document["complete"]), problems, document.get("stopped")
    )
