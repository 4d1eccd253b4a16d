"""The worker side of the process and Ray engines: a detector loaded once, assessing batches of requests, and the
plain data its results cross back to the driver as; and, for ``--engine processes``, the worker process itself
with the driver's handle on it.

A worker process serves one batch at a time over a pipe of its own, so when it dies the driver knows which batch it
held (a pool that shares one queue among its processes fails every batch in flight when any one of them dies). It
leaves when its pipe closes, and also when the driver dies without closing it (``kill -9``): a thread watches the
parent's pid, since a worker busy in a long call would not see its pipe close until the call returned.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
import threading
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Any

from harness.detectors import fingerprint, load_detector
from harness.detectors.functions import exception_error
from harness.detectors.options import DetectorOptions
from harness.errors import DetectorLoadError
from harness.files import drop_output_on_broken_pipe
from harness.spec import DetectorSpec, parse_spec
from harness.types import Detector, DetectorError, HasSecrets, HasTrainingItems, Prediction, Request

PARENT_POLL_S = 0.5  # how often a worker process checks that the driver is still alive
STOP_GRACE_S = 2.0  # how long a worker process may take to leave once its pipe is closed, before it is killed


def wire(prediction: Prediction | None, error: DetectorError | None) -> tuple[Any, ...]:
    """A result as plain data: exceptions with their own constructors do not cross process boundaries well."""
    if prediction is not None:
        return ("ok", prediction.risk, prediction.score, prediction.extra, prediction.attempts)
    assert error is not None
    return ("error", error.kind, error.message, error.attempts, error.raw, error.traceback, error.status,
            error.connect_failed)  # fmt: skip


async def _assess_one(detector: Detector, request: Request) -> tuple[Any, ...]:
    try:
        return wire(await detector.assess(request), None)
    except DetectorError as exc:
        return wire(None, exc)
    except Exception as exc:  # a broken detector costs its case, as in a local run
        return wire(None, exception_error(exc))


async def assess_all(detector: Detector, requests: list[Request]) -> list[tuple[Any, ...]]:
    """Each request's result, assessed concurrently (a batch detector batches them again)."""
    return list(await asyncio.gather(*(_assess_one(detector, r) for r in requests)))


async def describe(detector: Detector, spec: DetectorSpec) -> dict[str, Any]:
    """What the driver needs to know of a worker's detector: name, fingerprint, secrets, training items."""
    return {
        "name": getattr(detector, "name", spec.text),
        "fingerprint": await fingerprint(detector, spec),
        "secrets": list(detector.secrets()) if isinstance(detector, HasSecrets) else [],
        "train_source_items": sorted(detector.train_source_items) if isinstance(detector, HasTrainingItems) else [],
    }


def worker_options(options: DetectorOptions, chunk: int) -> DetectorOptions:
    """A worker holds one batch (of ``chunk`` requests) at a time: its threads and batches are sized for that."""
    return replace(options, concurrency=max(chunk, options.batch_size))


# --- a worker process ----------------------------------------------------------------------------------------------


def _leave_with_parent(parent: int) -> None:
    """Ends this process once the driver is gone (its children are then adopted by another process)."""
    while os.getppid() == parent:
        threading.Event().wait(PARENT_POLL_S)
    os._exit(1)


def serve(conn: Connection, spec: str, options: DetectorOptions, path: list[str], parent: int) -> None:
    """A worker process's main: load the detector, then answer the driver's calls one at a time until the pipe
    closes. Each answer is ``("ok", value, retire)``, ``("load_error", message, retire)`` or ``("error", message,
    retire)``; ``retire``: a call overran its timeout and still runs on its thread, so this process leaves after
    answering (such a call, stuck in a CPU loop, would slow every later one) and the driver starts another."""
    threading.Thread(target=_leave_with_parent, args=(parent,), name="fcb-parent-watch", daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C is the driver's to handle: it stops us
    drop_output_on_broken_pipe()  # a detector's print() after fcb's reader went away must not fail its case
    sys.path.extend(p for p in path if p not in sys.path)  # the driver's: module:function specs import alike
    loop = asyncio.new_event_loop()
    detector: Detector | None = None
    failed = ""
    parsed = parse_spec(spec)  # the text that crossed from the driver, read once on this side
    try:
        detector = load_detector(parsed, options)
    except Exception as exc:  # said by the first call, with its message
        failed = str(exc) if isinstance(exc, DetectorLoadError) else f"{type(exc).__name__}: {exc}"
    while True:
        try:
            call, requests = conn.recv()
            status, value = _answer(loop, detector, failed, parsed, call, requests)
            retire = _overrunning(detector)
            try:
                conn.send((status, value, retire))
            except (OSError, EOFError):
                raise
            except Exception as exc:  # an answer that cannot be pickled (nothing was sent): the batch fails
                conn.send(("error", f"{type(exc).__name__}: {exc}"[:500], retire))
        except (EOFError, OSError):  # the driver closed the pipe, or is gone
            loop.close()  # closed here: left to the garbage collector at exit, it complains on stderr
            return
        if retire:  # the driver replaces this process; its stuck threads cannot be stopped, only ended with it
            os._exit(0)


def _overrunning(detector: Detector | None) -> bool:
    count = getattr(detector, "overrunning", None)
    return callable(count) and bool(count())


def _answer(
    loop: asyncio.AbstractEventLoop,
    detector: Detector | None,
    failed: str,
    spec: DetectorSpec,
    call: str,
    requests: Any,
) -> tuple[str, Any]:
    if detector is None:
        return ("load_error", failed)
    try:
        work = describe(detector, spec) if call == "describe" else assess_all(detector, requests)
        return ("ok", loop.run_until_complete(work))
    except Exception as exc:  # a bug here: the batch fails, not the worker
        return ("error", f"{type(exc).__name__}: {exc}"[:500])


class WorkerDied(Exception):
    """The worker (process or Ray actor) was lost while it held a batch."""


class ProcessWorker:
    """The driver's handle on one worker process: `call` sends it a batch and waits for its answer."""

    def __init__(self, spec: str, options: DetectorOptions, path: list[str]) -> None:
        # spawn, not fork: the driver may hold threads and an event loop that a forked child must not inherit
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self.process = context.Process(
            # not a daemon, as a process pool's workers are not: a detector may start processes of its own
            target=serve,
            args=(child, spec, options, path, os.getpid()),
            name="fcb-worker",
            daemon=False,
        )
        self.process.start()
        child.close()  # the driver keeps only its own end: the pipe reads as closed once the worker dies
        self._lock = threading.Lock()  # one call at a time, even one whose awaiting caller was cancelled
        self.retiring = False  # it answered, and leaves: a call it abandoned still runs on its thread

    def call(self, call: str, requests: list[Request]) -> Any:
        """Blocking: the worker's answer. Raises `WorkerDied`, or `DetectorLoadError` when the detector did not load
        in it, or `DetectorError` when it could not answer this batch."""
        with self._lock:
            try:
                self._conn.send((call, requests))
                status, value, self.retiring = self._conn.recv()
            except (EOFError, OSError):
                raise WorkerDied from None
        if status == "load_error":
            raise DetectorLoadError(value)
        if status == "error":
            raise DetectorError("detector_exception", f"the worker could not answer this batch: {value}")
        return value

    def stop(self) -> None:
        """Close its pipe, so that it leaves; kill it if it is busy (a call the run no longer waits for) or still
        there after `STOP_GRACE_S`."""
        if self._lock.acquire(blocking=False):
            self._conn.close()
            self._lock.release()
            self.process.join(STOP_GRACE_S)
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self._conn.close()  # a second close does nothing
