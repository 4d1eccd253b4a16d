"""A line every few seconds while a long stage runs, so that a terminal or a CI log never sits silent: "still
training builtin:learned (12 s)". Nothing is printed by a stage that ends before its first beat."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator

EVERY_S = 5.0


def _stderr_line(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def heartbeat(
    what: str, *, every: float | None = None, first: float | None = None, say: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Say ``what`` with the seconds since the block began, ``first`` seconds in (default ``every``, itself by
    default `EVERY_S`) and every ``every`` seconds after, until the block ends; ``say`` prints a line on standard
    error unless given. A daemon thread says it: it never holds the process open."""
    done = threading.Event()
    started = time.monotonic()
    period = EVERY_S if every is None else every
    speak = _stderr_line if say is None else say  # read when called: a test puts its own in place

    def beat() -> None:
        wait = period if first is None else first
        while not done.wait(wait):
            speak(f"{what} ({time.monotonic() - started:.0f} s)")
            wait = period

    thread = threading.Thread(target=beat, name="fcb-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
