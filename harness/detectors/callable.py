"""Detectors written as Python functions: ``package.module:function`` or ``path/to/file.py:function``."""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from harness.detectors.batch import Batcher
from harness.detectors.options import DetectorOptions
from harness.detectors.pool import ThreadPool
from harness.redact import scrub_text
from harness.response import parse_prediction
from harness.types import DetectorError, Prediction, Request


def load_callable(spec: str) -> Callable[..., Any]:
    """Import the function a spec names. Raises ValueError with a message a user can act on."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ValueError(f"detector {spec!r}: expected module:function or path/to/file.py:function")
    try:
        module = _load_file(Path(target)) if target.endswith(".py") else importlib.import_module(target)
    except ValueError:
        raise
    except Exception as exc:  # a syntax error or a failing import in the user's module: say which and why
        raise ValueError(f"detector {spec!r}: cannot import {target}: {type(exc).__name__}: {exc}") from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ValueError(f"detector {spec!r}: {target} has no function {name!r}")
    return fn


def _load_file(path: Path) -> Any:
    if not path.is_file():
        raise ValueError(f"detector file {path} does not exist")
    mod_name = f"fcb_detector_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(mod_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses and pickling look modules up here
    spec.loader.exec_module(module)
    return module


MAX_TRACEBACK_CHARS = 8000


def exception_error(exc: BaseException) -> DetectorError:
    """A detector's exception as a ``detector_exception``, keeping its traceback (secrets scrubbed)."""
    text = "".join(traceback.format_exception(exc))
    return DetectorError(
        "detector_exception",
        scrub_text(f"{type(exc).__name__}: {exc}")[:500],
        traceback=scrub_text(text)[-MAX_TRACEBACK_CHARS:],
    )


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
    ) -> None:
        self.name = name
        self._fn = fn
        self._options = options
        self._owner = owner
        self._is_async = inspect.iscoroutinefunction(fn) if is_async is None else is_async
        self._pool = None if self._is_async else ThreadPool(options.concurrency)
        self.concurrency = concurrency or options.concurrency  # requests the runner keeps in flight
        trained = getattr(owner, "train_source_items", None)
        if trained:
            self.train_source_items = trained  # the runner refuses to score a detector on its training items

    async def assess(self, request: Request) -> Prediction:
        try:
            async with asyncio.timeout(self._options.timeout):
                reply = await (self._fn(request) if self._pool is None else self._pool.run(self._fn, request))
        except TimeoutError:
            raise DetectorError("timeout", f"no answer within {self._options.timeout:g} s") from None
        except DetectorError:
            raise
        except Exception as exc:  # the detector's own bug belongs to this case, not to the run
            raise exception_error(exc) from exc
        if isinstance(reply, Prediction):
            self._check_size(reply.extra)
            return reply
        self._check_size(reply)
        return parse_prediction(reply, self._options.risk_field)

    def fingerprint(self) -> dict[str, Any]:
        """What identifies this code: the content hash of the file that defines the function."""
        defined_in = type(self._owner).__module__ if self._owner is not None else getattr(self._fn, "__module__", None)
        module = sys.modules.get(defined_in or "")
        path = getattr(module, "__file__", None)
        if path and Path(path).is_file():
            return {"kind": "python", "source": Path(path).name, "sha256": file_sha256(path)}
        return {"kind": "python", "object": getattr(self._fn, "__qualname__", type(self._fn).__name__)}

    def secrets(self) -> list[str]:
        found = getattr(self._owner, "secrets", None)
        return list(found()) if callable(found) else []

    def _check_size(self, reply: Any) -> None:
        """A reply must be JSON-serialisable and within the response cap, as an HTTP reply would be."""
        try:
            size = len(orjson.dumps(reply, option=orjson.OPT_NON_STR_KEYS))
        except (TypeError, orjson.JSONEncodeError) as exc:
            raise DetectorError("invalid_response", f"reply is not JSON-serialisable: {exc}"[:300]) from None
        if size > self._options.max_response_bytes:
            raise DetectorError(
                "invalid_response", f"reply of {size:,} bytes exceeds the {self._options.max_response_bytes:,}-byte cap"
            )

    async def aclose(self) -> None:
        for pool in (self._pool, getattr(self._fn, "pool", None)):
            if isinstance(pool, ThreadPool):
                pool.close()
        close = getattr(self._owner, "aclose", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result


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
        # the batch gets a case's time budget: a hung call is abandoned (its thread replaced) with its cases
        async with asyncio.timeout(self._timeout):
            return await (self._fn(requests) if self.pool is None else self.pool.run(self._fn, requests))


def class_detector(owner: Any, name: str, options: DetectorOptions) -> CallableDetector:
    """The adapter for an instance: batched through ``assess_batch`` when it has one, else its ``assess``."""
    if not callable(getattr(owner, "assess_batch", None)):
        return CallableDetector(owner.assess, name, options, owner=owner)
    call = _BatchCall(owner, options)  # awaited; its own pool runs a sync assess_batch
    # enough requests in flight to fill a batch
    return CallableDetector(call, name, options, owner, is_async=True, concurrency=max(options.concurrency, call.size))


def construct(cls: type, spec: str) -> Any:
    """An instance of a detector class named by a spec: constructed once, then ``setup()`` if it has one."""
    try:
        instance = cls()
        setup = getattr(instance, "setup", None)
        if callable(setup):
            setup()
    except Exception as exc:  # the user's model failed to load: say which and why, without a traceback
        raise ValueError(f"detector {spec!r}: {cls.__name__}() failed: {type(exc).__name__}: {exc}") from exc
    if not callable(getattr(instance, "assess", None)) and not callable(getattr(instance, "assess_batch", None)):
        raise ValueError(f"detector {spec!r}: class {cls.__name__} has no assess(request) or assess_batch(requests)")
    return instance
