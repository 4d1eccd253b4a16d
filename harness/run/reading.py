"""How a run reads its cases file, in one of two ways (`Reading`), each reading it once:

- *whole*: the file is read and checked before the detector is opened (`harness.cases.reader.scanning`): for a
  detector that is slow to open (a learned one trains, Ray starts) or asked no preflight, and a resumed run;
- *early*: for a detector that sends requests, the file is read up to the first case the run counts, which goes out
  as the preflight; the rest is read and checked in a thread meanwhile, so the reading overlaps the round trip.

Either way a broken line fails the run before anything is written (`InvalidCasesError`); the ways differ only in
whether the preflight had gone out (or was on its way) when it was found.

Why the cases are not checked as they are sent instead: a run sends its cases in a seeded order over the whole
file, so the sending can start only once every case is known; and checking each case on the event loop just before
it is sent adds that check to every request's turn, which measured no faster whole (issue 49: 0.99 of the early
reading's wall time at 64 and 256 in flight, with 10% more CPU).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib

from harness.cases.reader import Scan, scanning
from harness.errors import InvalidCasesError, RunError
from harness.run.selection import in_scope, in_shard, select, shard_filter, subset_choice
from harness.run.settings import EvalSettings
from harness.types import CaseLabels


def asks_first_early(settings: EvalSettings) -> bool:
    """Whether the preflight goes out as soon as the first case is checked, while the rest of the file is read: for
    a detector that sends requests (its round trip then overlaps the reading), in a new run that asks a preflight.
    Any other detector is opened and asked once the whole file is checked, as a detector slow to open must not make
    a broken line wait."""
    return settings.detector.kind in ("http", "llm") and settings.preflight and not settings.resume


class Reading:
    """A run's reading of its cases file; ``scanned`` holds what it found (see the module's two ways)."""

    def __init__(self, settings: EvalSettings) -> None:
        self.settings = settings
        self.scanned = Scan(path=str(settings.cases), sha256="")
        self._early = asks_first_early(settings)
        # a shard checks only its own cases
        self._lines = scanning(self.scanned, settings.cases, strict=settings.strict, spool=True,
                               keep=shard_filter(settings))  # fmt: skip

    def start(self) -> CaseLabels | None:
        """Read up to the case the preflight asks at once (early); None when the whole file was read and checked
        first (then the run goes on as it always did)."""
        if self._early:
            for lab in self._lines:
                if self.scanned.errors and not self.settings.skip_invalid:
                    break  # the run fails on it: nothing is sent
                if lab is not None and self._counts(lab):
                    return lab
        collections.deque(self._lines, 0)  # the whole file, before anything else
        return None

    def _counts(self, lab: CaseLabels) -> bool:
        """Whether the run counts the case (its subset and shard; ``--limit`` keeps the first anyway)."""
        settings = self.settings
        return bool(select([lab], settings.categories, settings.tags)) and in_shard(lab.case_id, settings.shard)

    async def rest(self) -> None:
        """The rest of the file, read and checked in a thread while the first case is out: a read that waits on a
        pipe never holds up the event loop, which sends the preflight and takes its answer meanwhile."""
        await asyncio.to_thread(collections.deque, self._lines, 0)  # length 0: every line read, none kept

    def checked_scope(self, *, asked: int) -> tuple[list[CaseLabels], list[CaseLabels], str]:
        """(the cases in scope, those to run, the data set's digest) of a whole reading, or the refusal of a file
        with errors (``asked``: the cases that had gone out or were on their way) or of nothing to evaluate."""
        scanned, settings = self.scanned, self.settings
        if scanned.errors and not settings.skip_invalid:
            raise invalid_cases(scanned, asked)
        scope, labels, digest = in_scope(settings, scanned)
        if scanned.empty:
            raise RunError(scanned.empty)
        if not labels:
            chosen = f" matching {subset_choice(settings)}" if subset_choice(settings) else ""
            raise RunError(f"{settings.cases}: no valid case{chosen} to evaluate ({scanned.lines} line(s) read)")
        return scope, labels, digest

    def close(self) -> None:
        with contextlib.suppress(ValueError):  # still being read in a thread (a cancelled run): ends with the file
            self._lines.close()
        self.scanned.close()


def invalid_cases(scanned: Scan, asked: int) -> InvalidCasesError:
    errors = scanned.errors
    message = f"{scanned.path}: {len(errors)} error(s) in {scanned.invalid_lines} line(s)"
    return InvalidCasesError(message, scanned.problems, asked=asked)
