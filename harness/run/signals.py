"""SIGINT and SIGTERM during a run: the first stops the cases and keeps what finished."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

from harness.errors import RunInterrupted
from harness.types import RunAborted


class Signals:
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
        self._old_hook: Callable[[Any], object] | None = None

    def __enter__(self) -> Signals:
        self._loop = asyncio.get_running_loop()
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(ValueError, OSError):
                    self._old[sig] = signal.signal(sig, self._handle)
            self._old_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(self, *_: object) -> None:
        for sig, old in self._old.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)
        if self._old_hook is not None:
            sys.unraisablehook, self._old_hook = self._old_hook, None

    def _unraisable(self, unraisable: Any) -> None:
        """The third signal's `RunAborted`, raised where Python only reports exceptions (a weakref's callback), is
        not reported as a trace: `abort_if_asked` aborts the run before its report all the same."""
        if not isinstance(unraisable.exc_value, RunAborted) and self._old_hook is not None:
            self._old_hook(unraisable)

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

    def abort_if_asked(self) -> None:
        """Raise `RunAborted` when a third signal came: its own raise can be lost, when it lands in code whose
        exceptions Python only reports ("Exception ignored in: ...", a weakref's callback), and the report must not
        be written all the same."""
        if self.count >= 3:
            raise RunAborted

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
