"""Detectors written as Python functions: ``package.module:function`` or ``path/to/file.py:function``."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from harness.detectors.options import DetectorOptions
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


def _in_daemon_thread(fn: Callable[..., Any], arg: Any) -> asyncio.Future[Any]:
    """Run ``fn(arg)`` in a new daemon thread; the future resolves with its result or exception.

    A fresh thread per call (rather than a pool) means a call that overruns its timeout never delays the calls
    after it, and a call that never returns cannot keep the process alive once the run is over.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            (future.set_result if ok else future.set_exception)(value)

    def hand_over(ok: bool, value: Any) -> None:
        # the run may be over (interrupted, or the call timed out) and its loop closed: the answer is not wanted
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, ok, value)

    def target() -> None:
        try:
            result = fn(arg)
        except BaseException as exc:  # handed to the awaiting coroutine, which classifies it
            hand_over(False, exc)
        else:
            hand_over(True, result)

    threading.Thread(target=target, name="fcb-detector", daemon=True).start()
    return future


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
    """Runs a sync or async function; a sync one runs in its own thread so a slow call cannot block the others.

    The function may return a reply dict, a bare risk string or a `Prediction`. ``owner`` is the object whose
    ``assess`` method ``fn`` is, if any: its ``aclose`` is called at the end of a run.
    """

    def __init__(self, fn: Callable[..., Any], name: str, options: DetectorOptions, owner: Any = None) -> None:
        self.name = name
        self._fn = fn
        self._options = options
        self._owner = owner
        self._is_async = inspect.iscoroutinefunction(fn)
        trained = getattr(owner, "train_source_items", None)
        if trained:
            self.train_source_items = trained  # the runner refuses to score a detector on its training items

    async def assess(self, request: Request) -> Prediction:
        try:
            async with asyncio.timeout(self._options.timeout):
                reply = await (self._fn(request) if self._is_async else _in_daemon_thread(self._fn, request))
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
        module = sys.modules.get(getattr(self._fn, "__module__", None) or "")
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
        close = getattr(self._owner, "aclose", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result
