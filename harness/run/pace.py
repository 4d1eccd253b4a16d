"""What a run does for its own pace, and nothing else: fewer garbage collections while it runs, and the imports of
its figures and reports overlapped with the wait on its last answers. Neither changes what a run computes or writes.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")

YOUNG_THRESHOLD = 20_000
"""The youngest generation's threshold while a run is on (Python's default: 700). A run keeps what it reads and what
it is answered (the cases' labels, the journal's records), so its heap grows by tens of thousands of objects that
every collection of the older generations walks again, and it makes next to no reference cycles: 0 objects freed by
the collections while 9,999 cases were sent. With the default, collections took 0.16 s of a 3.0 s run at 256 in
flight; with this, the whole process takes 4-5% less time (docs/performance.md). Cycles are still collected, once
20,000 new objects wait instead of 700: a few megabytes at most."""

_runs = 0  # the runs under way in this process: the threshold is restored when the last one ends
_saved = gc.get_threshold()
_counting = threading.Lock()  # runs may start and end in several threads (each with its own event loop)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the youngest generation's threshold to `YOUNG_THRESHOLD` (never lower it) for as long as any run in this
    process is on; restore what it was when the last run ends, however the runs interleave."""
    global _runs, _saved
    with _counting:
        if _runs == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(_saved[0], YOUNG_THRESHOLD), *_saved[1:])
        _runs += 1
    try:
        yield
    finally:
        with _counting:
            _runs -= 1
            if _runs == 0:
                gc.set_threshold(*_saved)


AFTER_ANSWERS = ("harness.run.tally", "numpy.random", "numpy.ma", "harness.report.text", "harness.report.html")
"""What a run imports once its answers are in (numpy, the figures, the reports): imported while the last are out.
numpy imports ``numpy.random`` (the bootstrap's draws) and ``numpy.ma`` (inside ``np.unique``) on first use only."""


def then(source: Iterator[T], after: Callable[[], None]) -> Iterator[T]:
    """``source``'s items, then ``after()`` once, when a worker finds it empty: every request has been sent."""
    yield from source
    after()


def import_after_answers(engine: str) -> None:
    """Import `AFTER_ANSWERS` in a thread once every request has been sent, while the run waits on the last answers:
    the event loop then has no request left to send, so their import time overlaps that wait instead of following it
    (started earlier, at 256 in flight against a 50 ms detector, it took the loop's time from the sending: 0.85-0.92 of
    the bare loop's pace on 5,000 cases, against 0.96 without). Only with the local engine: worker processes may
    fork while the thread holds an import lock. A failed import here is left to the run's own import to raise."""
    if engine == "local":
        threading.Thread(target=_import_quietly, args=(AFTER_ANSWERS,), name="fcb-imports", daemon=True).start()


def _import_quietly(names: Iterable[str]) -> None:
    for name in names:  # each on its own: one that fails leaves the others to be imported
        with contextlib.suppress(Exception):
            importlib.import_module(name)
