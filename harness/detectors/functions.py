"""Detectors written as Python functions: ``package.module:function`` or ``path/to/file.py:function``."""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import hashlib
import importlib
import importlib.util
import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from harness.cases.lines import file_sha256
from harness.detectors.batch import Batcher
from harness.detectors.options import DetectorOptions
from harness.detectors.pool import ThreadPool
from harness.detectors.reply import check_prediction, parse_prediction
from harness.errors import DetectorLoadError
from harness.jsoncheck import too_deep, too_deep_message
from harness.redact import scrub_text
from harness.spec import DetectorSpec, meant
from harness.types import DetectorError, HasSecrets, HasTrainingItems, Prediction, Request, RunAborted


def load_callable(parsed: DetectorSpec) -> Callable[..., Any]:
    """Import the function a spec names. Raises `DetectorLoadError` with a message a user can act on."""
    spec, target, name = parsed.text, parsed.target, parsed.attribute
    if (suggestion := meant(parsed)) is not None:
        raise DetectorLoadError(f"detector {spec!r} is neither a URL nor Python code; try -d {suggestion} instead")
    if parsed.kind != "python" or not target or not name:
        raise DetectorLoadError(f"detector {spec!r}: expected module:function or path/to/file.py:function")
    try:
        module = _load_file(Path(target)) if target.endswith(".py") else importlib.import_module(target)
    except DetectorLoadError:
        raise
    # a syntax error, a failing import or a sys.exit() in the user's module: say which and why (a SystemExit let
    # through would end the run with its code and no word)
    except (Exception, SystemExit) as exc:
        raise DetectorLoadError(f"detector {spec!r}: cannot import {target}: {describe_exception(exc)}") from exc
    fn: Callable[..., Any] | None = getattr(module, name, None)
    if not callable(fn):
        raise DetectorLoadError(f"detector {spec!r}: {target} has no function {name!r}{_did_you_mean(module, name)}")
    return fn


def _did_you_mean(module: Any, name: str) -> str:
    """``; did you mean 'assess'?`` for the module's callable closest to a misspelled name, else its callables."""
    names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
    own = [n for n in names if getattr(vars(module)[n], "__module__", None) == module.__name__] or names
    if close := difflib.get_close_matches(name, own, n=1, cutoff=0.6):
        return f"; did you mean {close[0]!r}?"
    return f" (it has: {', '.join(own[:10])})" if own else " (it defines no function)"


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise DetectorLoadError(f"detector file {path} does not exist")
    # one name in every process (hash() of a str differs from process to process): what a worker pickles names a
    # module another worker has under the same name
    mod_name = f"fcb_detector_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses and pickling look modules up here
    spec.loader.exec_module(module)
    return module


MAX_TRACEBACK_CHARS = 8000


def _being_cancelled() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def describe_exception(exc: BaseException) -> str:
    """``TypeError: message``; a `SystemExit` as the call that raised it, ``sys.exit(3)``."""
    if isinstance(exc, SystemExit):
        return f"sys.exit({'' if exc.code is None else repr(exc.code)}) was called"
    return f"{type(exc).__name__}: {exc}"


def exception_error(exc: BaseException) -> DetectorError:
    """A detector's exception as a ``detector_exception``, keeping its traceback (secrets scrubbed)."""
    text = "".join(traceback.format_exception(exc))
    return DetectorError(
        "detector_exception",
        scrub_text(f"{type(exc).__name__}: {exc}")[:500],
        traceback=scrub_text(text)[-MAX_TRACEBACK_CHARS:],
    )


class LoopWatch:
    """A watchdog for an event loop that stops turning: an ``async def`` detector running blocking code.

    ``asyncio.timeout`` can only act when the loop runs, so such a detector holds up every case and overruns
    ``--timeout`` unseen. A callback on the loop notes the time every `TICK` seconds; a daemon thread reads it, and
    when the loop has not turned for ``limit_s`` it calls ``report`` with how long, once per blocked spell.
    """

    TICK = 0.1

    def __init__(self, limit_s: float, report: Callable[[float], None]) -> None:
        self._loop = asyncio.get_running_loop()
        self._limit_s, self._report = limit_s, report
        self._stopped = threading.Event()
        self._last = time.monotonic()
        self._handle = self._loop.call_soon(self._tick)
        threading.Thread(target=self._watch, name="fcb-loop-watch", daemon=True).start()

    def _tick(self) -> None:
        self._last = time.monotonic()
        self._handle = self._loop.call_later(self.TICK, self._tick)

    def _watch(self) -> None:
        reported = False
        while not self._stopped.wait(self.TICK) and not self._loop.is_closed():
            blocked = time.monotonic() - self._last
            if blocked > self._limit_s and not reported:
                self._report(blocked)
            reported = blocked > self._limit_s

    def stop(self) -> None:
        self._stopped.set()
        self._handle.cancel()


def _say_blocked(timeout: float) -> Callable[[float], None]:
    def report(blocked: float) -> None:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(
                f"fcb: the event loop has been blocked for {blocked:.1f} s by an async def detector, so --timeout "
                f"{timeout:g} s cannot stop it; the call is recorded as a timeout when it returns. Do not block in "
                "an async def (await asyncio.to_thread(...) for blocking work), or use a plain def, which runs in "
                "a thread of its own\n"
            )
            sys.stderr.flush()

    return report


class CallableDetector:
    """Runs a sync or async function; a sync one runs on a bounded pool of daemon threads (`ThreadPool`), which
    replaces a thread stuck past the timeout, so a slow or hung call cannot block the others.

    The function may return a reply dict, a bare risk string or a `Prediction`. ``owner`` is the object whose
    ``assess`` method ``fn`` is, if any: its ``aclose`` is called at the end of a run.
    """

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        options: DetectorOptions,
        owner: Any = None,
        *,
        is_async: bool | None = None,
        concurrency: int | None = None,
        times_itself: bool = False,
    ) -> None:
        self.name = name
        self._fn = fn
        self._options = options
        self._owner = owner
        self._is_async = inspect.iscoroutinefunction(fn) if is_async is None else is_async
        self._times_itself = times_itself  # ``fn`` applies the timeout (a batch, timed from when it is sent)
        self._pool = None if self._is_async else ThreadPool(options.concurrency)
        self.concurrency = concurrency or options.concurrency  # requests the runner keeps in flight
        self._watch: LoopWatch | None = None  # started with the first async call, on the loop that runs it
        if isinstance(owner, HasTrainingItems) and owner.train_source_items:
            self.train_source_items = owner.train_source_items  # a run refuses to score it on its training items
        self._secrets = self._owner_secrets()  # asked once, at load: a failure is a load error, before any folder

    async def assess(self, request: Request) -> Prediction:
        timeout = self._options.timeout
        if self._is_async and self._watch is None:
            self._watch = LoopWatch(timeout + 1.0, _say_blocked(timeout))  # a second's grace for ordinary hiccups
        started = time.monotonic()
        try:
            if self._pool is not None:  # timed on its thread: another call stuck in a CPU loop is not charged to it
                reply = await self._pool.run(self._fn, request, timeout)
            elif self._times_itself:
                reply = await self._fn(request)
            else:
                async with asyncio.timeout(timeout):
                    reply = await self._fn(request)
        except TimeoutError:
            raise DetectorError("timeout", f"no answer within {timeout:g} s") from None
        except (DetectorError, RunAborted):
            raise
        except asyncio.CancelledError as exc:
            if _being_cancelled():  # the run stops, or the case timed out: not the detector's doing
                raise
            raise exception_error(exc) from exc
        except BaseException as exc:  # sys.exit(), KeyboardInterrupt, a bug: they cost this case, never the run
            raise exception_error(exc) from exc
        # an async def that answered, but only by keeping the timeout out (a plain def's pool judged its own time)
        if self._pool is None and not self._times_itself and (elapsed := time.monotonic() - started) > timeout:
            raise DetectorError(
                "timeout",
                f"answered after {elapsed:.1f} s, over --timeout {timeout:g} s, which could not interrupt it: an "
                "async def detector that blocks the event loop (or swallows cancellation)",
            )
        if isinstance(reply, Prediction):
            reply = check_prediction(reply)  # its extra is journaled as the record's response: a JSON object
            self._check_size(reply.extra)
            return _plain(reply)
        self._check_size(reply)
        return _plain(parse_prediction(reply, self._options.risk_field))

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this code: the content hash of the file that defines the function."""
        defined_in = type(self._owner).__module__ if self._owner is not None else getattr(self._fn, "__module__", None)
        module = sys.modules.get(defined_in or "")
        path = getattr(module, "__file__", None)
        if path and Path(path).is_file():
            return {"kind": "python", "source": Path(path).name, "sha256": file_sha256(path)}
        return {"kind": "python", "object": getattr(self._fn, "__qualname__", type(self._fn).__name__)}

    def secrets(self) -> list[str]:
        return list(self._secrets)

    def _owner_secrets(self) -> list[str]:
        owner = self._owner  # a user's object: a `secrets` that is a plain attribute is not the ability
        if not (isinstance(owner, HasSecrets) and callable(owner.secrets)):
            return []
        try:
            return [str(secret) for secret in owner.secrets()]
        except (Exception, SystemExit) as exc:  # a SystemExit let through would end the run without a word
            raise DetectorLoadError(f"detector {self.name!r}: secrets() failed: {describe_exception(exc)}") from exc

    def _check_size(self, reply: Any) -> None:
        """A reply must be JSON-serialisable, no deeper than `MAX_DEPTH` and within the response cap, as an HTTP
        reply would be."""
        if too_deep(reply) is not None:
            raise DetectorError("invalid_response", too_deep_message("the reply"))
        try:
            size = len(orjson.dumps(reply, option=orjson.OPT_NON_STR_KEYS))
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise DetectorError("invalid_response", f"reply is not JSON-serialisable: {exc}"[:300]) from None
        if size > self._options.max_response_bytes:
            raise DetectorError(
                "invalid_response", f"reply of {size:,} bytes exceeds the {self._options.max_response_bytes:,}-byte cap"
            )

    def overrunning(self) -> int:
        """Calls of this detector abandoned past their timeout that still run on their threads."""
        return sum(pool.overrunning() for pool in self._pools())

    def _pools(self) -> list[ThreadPool]:
        return [pool for pool in (self._pool, getattr(self._fn, "pool", None)) if isinstance(pool, ThreadPool)]

    async def aclose(self) -> None:
        if self._watch is not None:
            self._watch.stop()
            self._watch = None
        for pool in self._pools():
            pool.close()
        close = getattr(self._owner, "aclose", None)
        if close is None:
            return
        try:
            result = close()
            if inspect.isawaitable(result):
                await result
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            if isinstance(exc, RunAborted):  # the user's third Ctrl-C
                raise
            # every case has its result by now: the report is still written, and the failure said
            with contextlib.suppress(OSError, ValueError):
                print(f"fcb: the detector's aclose() failed: {scrub_text(describe_exception(exc))}", file=sys.stderr)


def _plain(prediction: Prediction) -> Prediction:
    """The prediction as plain data, as the journal will hold it: a dataclass, an enum or a set of the detector's
    own module becomes what orjson writes for it. Under ``--engine processes|ray`` a reply crosses a process
    boundary, and the driver cannot unpickle the classes of a module it never imported (a file's module name
    differs from process to process); a local run gets the very same values."""
    risk, score, extra = prediction.risk, prediction.score, prediction.extra
    if type(risk) is not str:  # a str enum member: its value
        risk = orjson.loads(orjson.dumps(risk))
    if score is not None and type(score) is not float:  # a float subclass, numpy's float64
        score = float(score)
    if extra:  # serialisable: checked by _check_size
        extra = orjson.loads(orjson.dumps(extra, option=orjson.OPT_NON_STR_KEYS))
    return replace(prediction, risk=risk, score=score, extra=extra)


class _BatchCall:
    """``owner.assess_batch`` behind a `Batcher`: an async function of one request, for `CallableDetector`."""

    def __init__(self, owner: Any, options: DetectorOptions) -> None:
        self._fn = owner.assess_batch
        self._timeout = options.timeout
        self.size = options.batch_size
        # batches at once: what --concurrency allows, at least one
        sync = not inspect.iscoroutinefunction(self._fn)
        self.pool = ThreadPool(max(1, options.concurrency // self.size)) if sync else None
        self._batcher = Batcher(self._send, self.size)

    async def __call__(self, request: Request) -> Any:
        return await self._batcher.submit(request)

    async def _send(self, requests: list[Request]) -> Any:
        # the batch gets a case's time budget, from when it is sent (its cases' clock): a hung call is abandoned
        # (its thread replaced) with its cases
        try:
            if self.pool is not None:  # timed on its thread, as a plain def's single calls are
                return await self.pool.run(self._fn, requests, self._timeout)
            started = time.monotonic()
            async with asyncio.timeout(self._timeout):
                replies = await self._fn(requests)
            if time.monotonic() - started > self._timeout:  # it blocked the event loop: the timeout could not act
                raise TimeoutError
            return replies
        except (Exception, asyncio.CancelledError, RunAborted):
            raise  # the batcher fails its cases with an exception, or cancels them with the run
        except BaseException as exc:
            # sys.exit() or KeyboardInterrupt from assess_batch: raised in the batch's task, asyncio would let it
            # out of the event loop and end the run with no report; it costs the batch's cases instead
            raise exception_error(exc) from exc


def class_detector(owner: Any, name: str, options: DetectorOptions) -> CallableDetector:
    """The adapter for an instance: batched through ``assess_batch`` when it has one, else its ``assess``."""
    if not callable(getattr(owner, "assess_batch", None)):
        return CallableDetector(owner.assess, name, options, owner=owner)
    call = _BatchCall(owner, options)  # awaited; its own pool runs a sync assess_batch
    # enough requests in flight to fill a batch
    return CallableDetector(
        call, name, options, owner, is_async=True, concurrency=max(options.concurrency, call.size), times_itself=True
    )


def construct(cls: type, spec: str) -> Any:
    """An instance of a detector class named by a spec: constructed once, then ``setup()`` if it has one."""
    try:
        instance = cls()
        setup = getattr(instance, "setup", None)
        if callable(setup):
            setup()
    except (Exception, SystemExit) as exc:  # the user's model failed to load: say which and why, without a traceback
        raise DetectorLoadError(f"detector {spec!r}: {cls.__name__}() failed: {describe_exception(exc)}") from exc
    if not callable(getattr(instance, "assess", None)) and not callable(getattr(instance, "assess_batch", None)):
        raise DetectorLoadError(
            f"detector {spec!r}: class {cls.__name__} has no assess(request) or assess_batch(requests)"
        )
    return instance
