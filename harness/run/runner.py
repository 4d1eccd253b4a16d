"""Run a detector over a cases file: validate, strip labels, call the detector, journal, compute metrics.

The journal (``predictions.jsonl``) is the run's source of truth: metrics are always recomputed from it and the
case labels, so a resumed run and an uninterrupted one end with the same figures. The settings live in
`harness.run.settings`, the choice of cases in `harness.run.selection`, what the folder holds at the start and the
end in `harness.run.outputs` and `harness.runfolder`.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import random
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from harness.cases.clusters import cluster_key
from harness.detectors import fingerprint
from harness.detectors.functions import exception_error
from harness.detectors.limits import Budget, BudgetSpent, HasBudget, RunStopped
from harness.documents import JournalRecord, RunManifest
from harness.errors import InvalidCasesError, PreflightFailed, RunError, UsageError
from harness.files import shell_path
from harness.heartbeat import heartbeat
from harness.redact import clip, scrub_text
from harness.run.cache import EPOCH, cache_wanted, with_cache
from harness.run.details import case_details
from harness.run.engines import open_detector
from harness.run.items import Sent, build_item, item_source, plan_items
from harness.run.outputs import (
    dataset_info,
    detector_info,
    is_complete,
    metrics_document,
    open_run_dir,
    run_identity,
    write_outputs,
)
from harness.run.pace import fewer_collections, import_after_answers, then
from harness.run.progress import Progress
from harness.run.reading import Reading
from harness.run.settings import EvalSettings, manifest_settings, settings_record
from harness.run.signals import Signals
from harness.runfolder.folder import clear_run, refuse_taken
from harness.runfolder.journal import JournalWriter, in_file_order, item_key, outcome_of, read_items, record
from harness.runfolder.lock import run_lock
from harness.runfolder.manifest import add_session, now, write_manifest
from harness.runfolder.names import MANIFEST, PREDICTIONS
from harness.runfolder.scope import write_scope
from harness.types import (
    CaseLabels,
    Detector,
    DetectorError,
    HasConcurrency,
    HasPreflight,
    HasSecrets,
    HasTrainingItems,
    ItemKey,
    Outcome,
    Prediction,
    RunResult,
)

InvalidCases = InvalidCasesError  # the name before harness.errors; kept importable


def send_order(todo: list[Any], seed: int) -> list[Any]:
    """The pending cases (items) in a seeded shuffled order: a file grouped by category must not let a detector that
    keeps state infer labels from the order. Journal and reports keep the file's order."""
    order = list(todo)
    random.Random(f"send-order:{seed}").shuffle(order)
    return order


def first_plain(pending: list[tuple[CaseLabels, ItemKey]]) -> tuple[CaseLabels, ItemKey] | None:
    """The item the preflight asks: the first pending request as it is (no probe's variant) in file order, else the
    first pending item; None when none is pending. A request as it is: a detector that fails only on reordered
    answers must not be refused as one that cannot work. In file order: the first case can be sent while the rest
    of the file is still being read (`harness.run.reading`)."""
    return next((item for item in pending if item[1].variant is None), pending[0] if pending else None)


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
    except RunStopped:  # a cap or the provider, not the case's failure: the run stops, the case stays pending
        raise
    except Exception as exc:  # a broken adapter or detector costs one case, never the run
        return None, exception_error(exc)


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


async def _worker(
    source: Iterator[Sent],
    detector: Detector,
    journal: JournalWriter,
    outcomes: dict[ItemKey, Outcome],
    settings: EvalSettings,
    progress: Progress,
    streak: _Streak,
    stop: Callable[[str], None],
    spent: Callable[[str], None],
) -> None:
    for lab, key, request, fields in source:  # built by the item stage (harness.run.items)
        started = time.perf_counter()
        try:
            prediction, error = await _assess(detector, request)
        except BudgetSpent as exc:  # the others finish what they sent, then meet the cap too
            spent(exc.reason)
            return
        except RunStopped as exc:  # the provider will not answer: the others stop at once, their cases pending
            stop(exc.reason)
            return
        attempts = _attempts(prediction, error)
        rec = record(lab, prediction, error, attempts, time.perf_counter() - started, fields,
                     cluster_key(lab, settings.cluster_by))  # fmt: skip
        outcomes[key] = outcome_of(journal.write(rec))  # as written: echoed secrets scrubbed
        progress.step(error is not None)
        if streak.add(error):
            stop(streak.reason())


async def _run_workers(
    settings: EvalSettings,
    detector: Detector,
    source: Iterator[Sent],
    count: int,
    journal: JournalWriter,
    outcomes: dict[ItemKey, Outcome],
    progress: Progress,
    signals: Signals,
) -> str | None:
    """Run the ``count`` pending items ``source`` gives; returns None when they all ran, else why they stopped
    ("interrupted" or a streak)."""
    if signals.count:
        return INTERRUPTED
    streak = _Streak(settings.max_consecutive_errors)
    stopped: list[str] = []
    tasks: list[asyncio.Future[None]] = []

    def stop(reason: str) -> None:
        stopped.append(reason)
        for t in tasks:
            t.cancel()

    def spent(reason: str) -> None:
        if not stopped:
            stopped.append(reason)

    # an engine or a batch detector may want more cases in flight than --concurrency, to fill its batches
    wanted = detector.concurrency if isinstance(detector, HasConcurrency) else 0
    in_flight = max(settings.options.concurrency, wanted)
    n_workers = min(in_flight, max(1, count))
    tasks += [
        asyncio.ensure_future(_worker(source, detector, journal, outcomes, settings, progress, streak, stop, spent))
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
LIMIT_OPTIONS = ("rpm", "tpm", "max_requests", "max_cost")


FATAL_STATUSES = frozenset({401, 403, 404})


def fatal(error: DetectorError) -> bool:
    """An error on the first case that every other case would meet too: no connection could be made at all, the
    request was refused (401, 403, 404), the detector raised, or it answered a JSON object without the risk where the
    run reads it (a misspelled field). A reset, a timeout or a 5xx may pass. Read from the error's fields, never
    its message."""
    return error.kind == "detector_exception" or error.connect_failed or error.status in FATAL_STATUSES or error.misread


async def _preflight(
    settings: EvalSettings, detector: Detector, first: tuple[CaseLabels, ItemKey], case: dict[str, Any]
) -> JournalRecord:
    """Call the first pending item alone (``case``: its case, read before: the spool may still be written while this
    runs); its journal record, or `PreflightFailed` when it cannot work."""
    lab, key = first
    started = time.perf_counter()
    request, fields = build_item(settings, case, key)
    token = EPOCH.set(key.epoch)  # the response cache keys the epoch (harness.run.cache)
    try:
        prediction, error = await _assess(detector, request, preflight=True)
    finally:
        EPOCH.reset(token)
    # a variant is asked first only when no request as it is is left: what it alone fails on says little of the rest
    if (
        error is not None
        and fatal(error)
        and (key.variant is None or not (error.misread or error.kind == "detector_exception"))
    ):
        message = scrub_text(error.message, _secrets(detector))  # the journal scrubs the same
        reply = f"; it answered: {clip(error.raw, 300, _secrets(detector))}" if error.raw else ""
        raise PreflightFailed(
            f"preflight: the detector failed on the first case ({lab.case_id}) after {error.attempts} attempt(s): "
            f"{error.kind}: {message}{reply}; "
            "no other case was sent (--no-preflight skips this check)"
        )
    attempts = _attempts(prediction, error)
    return record(lab, prediction, error, attempts, time.perf_counter() - started, fields,
                  cluster_key(lab, settings.cluster_by))  # fmt: skip


def _cached(settings: EvalSettings, detector: Detector, detector_fingerprint: dict[str, Any], owns: bool) -> Detector:
    """The detector behind the response cache when the settings ask for it (see `harness.run.cache`); ``owns``: the
    run opened the detector, so the cache closes it with itself."""
    o = settings.options
    enabled = o.cache if o.cache is not None else (True if o.cache_refresh else None)  # refreshing means using it
    if not cache_wanted(settings.detector, enabled, o.temperature, o.samples):
        return detector
    return with_cache(detector, settings.detector, detector_fingerprint, risk_field=o.risk_field,
                      directory=o.cache_dir, refresh=o.cache_refresh, owns=owns)  # fmt: skip


def _refuse_limits_without_requests(settings: EvalSettings, detector: Detector) -> None:
    given = [f"--{name.replace('_', '-')}" for name in LIMIT_OPTIONS if getattr(settings.options, name) is not None]
    if given and not isinstance(detector, HasBudget):
        raise UsageError(f"{', '.join(given)}: only for HTTP and llm: detectors, which send requests")


def _count_spent(budget: Budget, journaled: Iterable[Outcome], manifest: RunManifest) -> None:
    """What the run folder's earlier sessions spent: the requests and cost each session recorded in ``run.json``
    (every attempt, those of cases stopped mid-retry too), or what the journal shows when that is more (a session
    killed before it could record its spending, a run written before sessions recorded it)."""
    journaled = list(journaled)
    sessions = manifest["sessions"]
    requests = max(sum(o.attempts for o in journaled), sum(s.get("requests", 0) for s in sessions))
    journal_cost = sum(budget.cost(o.prompt_tokens, o.completion_tokens) for o in journaled)
    budget.start_from(requests, max(journal_cost, sum(s.get("cost_usd", 0.0) for s in sessions)))


def _session_spent(detector: Detector) -> tuple[int, float] | None:
    """What this session sent (requests, cost at most), for a detector that sends requests."""
    if not isinstance(detector, HasBudget):
        return None
    budget = detector.budget
    return budget.spent_requests - budget.earlier_requests, budget.spent_cost - budget.earlier_cost


def _changed_settings(settings: EvalSettings, manifest: RunManifest) -> dict[str, Any]:
    """This session's settings that differ from the first session's (the record in ``run.json``), by their stored
    names: a resumed run says what its later cases ran with."""
    first = settings_record(manifest_settings(manifest))  # read back: what an older record lacks, at its default
    return {k: v for k, v in settings_record(settings).items() if first.get(k) != v}


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


def _standing(
    settings: EvalSettings, labels: list[CaseLabels], journaled: Mapping[ItemKey, Outcome]
) -> dict[ItemKey, Outcome]:
    """The journal's outcomes that stand in this session: of a case as it is now (its content hash), an error only
    when not asked again (``--retry-errors``: its error line stays in the journal until a newer line wins)."""
    hashes = {lab.case_id: lab.content_hash for lab in labels}
    outcomes = {k: o for k, o in journaled.items() if hashes.get(k.case_id) == o.content_hash}
    if settings.retry_errors:
        outcomes = {k: o for k, o in outcomes.items() if o.error_kind is None}
    return outcomes


def _in_plan_order(
    kept: Mapping[ItemKey, JournalRecord] | None, planned: Iterable[tuple[CaseLabels, ItemKey]]
) -> dict[ItemKey, JournalRecord] | None:
    """The records a run wrote, in the order its journal holds them once written (`in_file_order`)."""
    return None if kept is None else {key: kept[key] for _, key in planned if key in kept}


def _lock(held: contextlib.ExitStack, run_dir: Path) -> None:
    held.enter_context(run_lock(run_dir))  # RunLocked, a RunError, when another process holds it


async def run(settings: EvalSettings, detector: Detector | None = None) -> RunResult:
    """Evaluate a detector on a cases file and write the run folder. See `EvalSettings` for the knobs.

    Raises `InvalidCases` before anything is written when the file has errors (unless ``skip_invalid``; at most the
    preflight was sent, when it went out while the file was read: `harness.run.reading`), `RunError`
    when there is nothing to evaluate or a run folder cannot be resumed, `PreflightFailed` (a `RunError`) when
    the first case shows the detector cannot work, and `RunInterrupted` for a signal before the folder was made.
    """
    reading = Reading(settings)  # read once: the run sends from the spool
    try:
        with fewer_collections():
            return await _run_scanned(settings, detector, reading, reading.start())
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise _out_of_space(exc) from exc
    finally:
        reading.close()


async def _let_go(asking: asyncio.Future[JournalRecord] | None) -> None:
    """The preflight once the run is done with it: awaited, or cancelled first when a refusal came before its answer
    (a broken line found while it was out); what it raised then no longer counts."""
    if asking is None:
        return
    asking.cancel()  # nothing for a preflight that has answered
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await asking


def _out_of_space(exc: OSError) -> RunError:
    """A full disk said with the file it hit and, when that file is in a run folder (the one holding ``run.json``),
    how to go on: the journal keeps every case that finished, and a resume sends only the others."""
    path = Path(exc.filename) if exc.filename else None
    message = f"{path or 'a file'}: {exc.strerror or 'no space left on device'}"
    run_dir = next((p for p in path.parents if (p / MANIFEST).is_file()), None) if path else None
    if run_dir is None:
        return RunError(message)
    return RunError(
        f"{message}; the cases that finished are kept in {run_dir}: free some space, then go on with "
        f"`fcb eval --resume {shell_path(run_dir)}` (the same cases file and detector)"
    )


async def _run_scanned(
    settings: EvalSettings, detector: Detector | None, reading: Reading, early: CaseLabels | None
) -> RunResult:
    """The run, once the file is read (``early`` None) or read up to ``early``, the first case, which the preflight
    asks while the rest is read (`harness.run.reading`)."""
    scanned = reading.scanned
    if early is None:
        scope, labels, digest = reading.checked_scope(asked=0)
    else:  # known once the rest is read, while the preflight is out
        scope, labels, digest = [], [], scanned.sha256
    owned = detector is None
    # before any folder is made
    if detector is None:  # training a learned detector or starting Ray can take minutes: say so while it lasts
        with (
            heartbeat(f"fcb eval: opening {settings.detector.display}")
            if settings.progress
            else contextlib.nullcontext()
        ):
            detector = open_detector(settings.detector, settings.options, settings.engine_settings())
    asking: asyncio.Future[JournalRecord] | None = None  # the preflight, once sent
    with Signals() as signals, contextlib.ExitStack() as held:
        try:
            _refuse_limits_without_requests(settings, detector)
            detector_fingerprint = await signals.guard(fingerprint(detector, settings.detector))
            if (cached := _cached(settings, detector, detector_fingerprint, owns=owned)) is not detector:
                detector, owned = cached, True  # the wrapper is the run's own; it closes what it wraps if it owns it
            first_item = None if early is None else (early, ItemKey(early.case_id))  # first_plain's choice, too
            if first_item is not None:  # the first case goes out now, and the rest of the file is read meanwhile
                case = scanned.case(first_item[0].line)  # read before the rest is: the spool is written meanwhile
                asking = asyncio.ensure_future(_preflight(settings, detector, first_item, case))
                await reading.rest()
                scope, labels, digest = reading.checked_scope(asked=1)
            _refuse_training_overlap(detector, labels)
            run_dir, manifest = open_run_dir(settings, run_identity(settings, scanned, detector_fingerprint))
            if settings.resume:  # held until the report is written: two processes never run one folder
                _lock(held, run_dir)
            journaled = read_items(run_dir / PREDICTIONS) if settings.resume else {}
            outcomes = _standing(settings, labels, journaled)
            plan = plan_items(settings, labels, scanned)  # one item a case without --epochs and --probe
            pending = [(lab, key) for lab, key in plan.items if key not in outcomes]
            head = first_item if early is not None else first_plain(pending) if settings.preflight else None
            todo = send_order([item for item in pending if head is None or item[1] != head[1]], settings.seed)
            before = len(outcomes)
            if settings.resume and isinstance(detector, HasBudget):  # the caps count the earlier sessions too
                _count_spent(detector.budget, journaled.values(), manifest)
            # the session's clock: from the first request sent once the file is read (an early preflight overlapped
            # the reading: the time it took then is not the cases')
            started, started_at = time.perf_counter(), now()
            if asking is None and head is not None:
                asking = asyncio.ensure_future(_preflight(settings, detector, head, scanned.case(head[0].line)))
            first, stopped = None, None
            try:
                if asking is not None:
                    first = await signals.guard(asking)
            except RunStopped as exc:
                stopped, todo = exc.reason, []
            run_dir.mkdir(parents=True, exist_ok=True)
            if not settings.resume:
                _lock(held, run_dir)
                if settings.overwrite:  # only now: a failed preflight leaves the old run as it was
                    clear_run(run_dir)
                else:
                    refuse_taken(run_dir)  # another run may have started in this folder meanwhile
            write_manifest(run_dir, manifest)
            write_scope(run_dir, labels)  # what the run counts: compare and leaderboards count the same
            # a fresh run writes its whole journal: its reports take the records from here, not read back
            journal = JournalWriter(run_dir / PREDICTIONS, secrets=_secrets(detector), keep=not settings.resume)
            progress = Progress(len(plan), len(plan) - len(todo) - (first is not None), settings.progress)
            try:
                if first is not None:  # the preflight's answer stands as its case's result: no case is asked twice
                    outcomes[item_key(first)] = outcome_of(journal.write(first))
                    progress.step(first["error"] is not None)
                source = then(item_source(settings, scanned, todo), lambda: import_after_answers(settings.engine))
                stopped = stopped or await _run_workers(
                    settings, detector, source, len(todo), journal, outcomes, progress, signals
                )
            finally:
                ended = time.perf_counter()  # closing the detector (stopping a local Ray) is not the cases' time
                journal.close()
                progress.close()
            in_file_order(run_dir / PREDICTIONS, [lab.case_id for lab in labels])  # items: case, epoch, variant
        finally:
            await _let_go(asking)
            if owned:
                await detector.aclose()
        sent = len(outcomes) - before  # the items this session answered: a stopped run sent fewer than it had
        wall = add_session(run_dir, manifest, started=started_at, wall_s=ended - started, cases=sent,
                           spent=_session_spent(detector), changed=_changed_settings(settings, manifest))  # fmt: skip
        from harness.run.tally import run_figures  # numpy and the figures: imported once the answers are in

        metrics, reduced, unasked = run_figures(settings, labels, outcomes, plan, wall)
        complete = is_complete(stopped=stopped, not_run=metrics["n_not_run"], unasked=unasked, counted=len(labels),
                               in_scope=len(scope), invalid_lines=scanned.invalid_lines,
                               sharded=settings.shard is not None)  # fmt: skip
        dataset, described = (
            dataset_info(settings, scanned, digest),
            detector_info(settings, detector, detector_fingerprint),
        )
        document = metrics_document(settings, dataset, described, metrics, complete=complete, stopped=stopped)
        signals.abort_if_asked()
        write_outputs(run_dir, document, scanned, _in_plan_order(journal.kept, plan.items))
    problems = [str(p) for p in scanned.problems]
    details = case_details(run_dir, settings.cases, scanned.sha256)
    return RunResult(str(run_dir), document, labels, list(reduced.values()), document["complete"], problems, stopped,
                     case_details=details)  # fmt: skip
