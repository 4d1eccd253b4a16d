"""Progress of a run on standard error: a bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import asyncio
import sys
import time


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return (
        f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"
    )


class Progress:
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
