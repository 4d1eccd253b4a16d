"""Detectors written as Python functions: ``package.module:function`` or ``path/to/file.py:function``."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.detectors.options import DetectorOptions
from harness.response import parse_prediction
from harness.types import DetectorError, Prediction, Request


def load_callable(spec: str) -> Callable[..., Any]:
    """Import the function a spec names. Raises ValueError with a message a user can act on."""
    target, sep, name = spec.rpartition(":")
    if not sep or not target or not name:
        raise ValueError(f"detector {spec!r}: expected module:function or path/to/file.py:function")
    if target.endswith(".py"):
        module = _load_file(Path(target))
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise ValueError(f"detector {spec!r}: cannot import {target}: {exc}") from exc
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


class CallableDetector:
    """Runs a sync or async function. Sync functions run in a thread pool so a slow one cannot block the run."""

    def __init__(self, fn: Callable[..., Any], name: str, options: DetectorOptions) -> None:
        self.name = name
        self._fn = fn
        self._options = options
        self._is_async = inspect.iscoroutinefunction(fn)
        self._pool = None if self._is_async else ThreadPoolExecutor(options.concurrency, thread_name_prefix="fcb")

    async def assess(self, request: Request) -> Prediction:
        try:
            async with asyncio.timeout(self._options.timeout):
                if self._is_async:
                    reply = await self._fn(request)
                else:
                    reply = await asyncio.get_running_loop().run_in_executor(self._pool, self._fn, request)
        except TimeoutError:
            raise DetectorError("timeout", f"no answer within {self._options.timeout:g} s") from None
        except DetectorError:
            raise
        except Exception as exc:  # the detector's own bug belongs to this case, not to the run
            raise DetectorError("detector_exception", f"{type(exc).__name__}: {exc}"[:500]) from exc
        return parse_prediction(reply, self._options.risk_field)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
