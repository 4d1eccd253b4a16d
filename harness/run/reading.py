"""How a run reads its cases file, in one of three ways (`Reading`), each reading it once:

- *whole*: the file is read and checked before the detector is opened (`harness.cases.reader.scanning`): for a
  detector that is slow to open (a learned one trains, Ray starts) or asked no preflight, a resumed run, and so on;
- *early*: for a detector that sends requests, the file is read up to the first case the run counts, which goes out
  as the preflight; the rest is read and checked in a thread meanwhile;
- *streamed*: as *early*, but the rest is only copied while the preflight is out, and each case is checked just
  before it is sent, in the send order (`harness.cases.reader.Unchecked`): the sending needs no pass over the file
  first. Only for a plain new run of every case of a file (no subset, shard, limit, epochs or probes, no invalid
  line skipped, nothing replaced), where every line is a case the run sends.

Whatever the way, a broken line fails the run before anything is written (`InvalidCasesError`), its problems as
`harness.cases.reader.scan` lists them; the ways differ only in what was sent before it was found: nothing, the
preflight, or (streamed) the cases sent before it came up in the send order, whose answers are then dropped with
the run folder.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Generator, Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from harness.cases.reader import Scan, Unchecked, scanning
from harness.cases.request import build_request
from harness.errors import InvalidCasesError, RunError
from harness.run.items import PLAIN, has_items
from harness.run.selection import in_scope, in_shard, select, shard_filter, subset_choice
from harness.run.settings import EvalSettings
from harness.runfolder.folder import clear_run
from harness.runfolder.names import LOCK
from harness.types import CaseLabels, Detector, ItemKey, Request

Sent = tuple[CaseLabels, ItemKey, Request, Mapping[str, Any]]
"""What the workers pull: an item's labels, key, request and journal fields."""


def asks_first_early(settings: EvalSettings, detector: Detector | None) -> bool:
    """Whether the preflight goes out as soon as the first case is checked, while the rest of the file is read: for
    a detector that sends requests (its round trip then overlaps the reading), in a new run that asks a preflight.
    Any other detector is opened and asked once the whole file is checked, as a detector slow to open must not make
    a broken line wait."""
    return detector is None and settings.detector.kind in ("http", "llm") and settings.preflight and not settings.resume


def streams(settings: EvalSettings, detector: Detector | None) -> bool:
    """Whether each case is checked just before it is sent: an early preflight, in a plain run of every case of the
    file that replaces nothing (``--overwrite`` removes the old run once the preflight passed, before a broken
    line further on could be found) and skips no invalid line."""
    chosen = settings.limit is not None or subset_choice(settings) is not None or settings.shard is not None
    kept_apart = settings.overwrite or settings.skip_invalid or has_items(settings)
    return asks_first_early(settings, detector) and not chosen and not kept_apart


class Reading:
    """A run's reading of its cases file; ``scanned`` holds what it found (see the module's three ways)."""

    def __init__(self, settings: EvalSettings, detector: Detector | None) -> None:
        self.settings = settings
        self.scanned = Scan(path=str(settings.cases), sha256="")
        self.streamed = streams(settings, detector)
        self._early = asks_first_early(settings, detector)
        self._unchecked: Unchecked | None = None
        self._lines: Generator[CaseLabels | None, None, None] | None = None
        if self.streamed:
            self._unchecked = Unchecked(self.scanned, settings.cases, strict=settings.strict)
        else:  # a shard checks only its own cases
            self._lines = scanning(self.scanned, settings.cases, strict=settings.strict, spool=True,
                                   keep=shard_filter(settings))  # fmt: skip

    def start(self) -> CaseLabels | None:
        """Read up to the case the preflight asks at once (early and streamed); None when the whole file was read
        and checked first (then the run goes on as it always did)."""
        first = self._first_streamed() if self._unchecked is not None else self._first_early()
        if first is None:
            self.streamed = False
        return first

    def _first_streamed(self) -> CaseLabels | None:
        unchecked = self._unchecked
        assert unchecked is not None
        unchecked.copy(limit=1)
        first = unchecked.check(1)[0] if self.scanned.lines else None
        if first is None:  # a broken first line (or no line): the whole file, checked, and the run fails on it
            unchecked.copy()
            unchecked.rest()
        return first

    def _first_early(self) -> CaseLabels | None:
        lines = self._lines
        assert lines is not None
        if self._early:
            for lab in lines:
                if self.scanned.errors and not self.settings.skip_invalid:
                    break  # the run fails on it: nothing is sent
                if lab is not None and self._counts(lab):
                    return lab
        collections.deque(lines, 0)  # the whole file, before anything else
        return None

    def _counts(self, lab: CaseLabels) -> bool:
        """Whether the run counts the case (its subset and shard; ``--limit`` keeps the first anyway)."""
        settings = self.settings
        return bool(select([lab], settings.categories, settings.tags)) and in_shard(lab.case_id, settings.shard)

    async def rest(self) -> None:
        """The rest of the file, in a thread while the first case is out (a read that waits on a pipe never holds
        up the event loop): checked, or (streamed) only copied."""
        if self._unchecked is not None:
            await asyncio.to_thread(self._unchecked.copy)
        else:
            assert self._lines is not None
            await asyncio.to_thread(collections.deque, self._lines, 0)  # length 0: every line read, none kept

    def checked_scope(self, *, asked: int) -> tuple[list[CaseLabels], list[CaseLabels], str]:
        """(the cases in scope, those to run, the data set's digest) of a whole reading, or the refusal of a file
        with errors (``asked``: the requests sent before they were found) or of nothing to evaluate."""
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

    def checked_source(self, lines: list[int]) -> Iterator[Sent]:
        """(streamed) Each of ``lines``, in that order, checked as the workers pull it, and its request; a broken
        line ends the source, so no case after it is sent (the run then fails: `finish`)."""
        unchecked = self._unchecked
        assert unchecked is not None
        anonymize = self.settings.anonymize_agents
        for line_no in lines:
            lab, raw = unchecked.check(line_no)
            if lab is None:
                return
            yield lab, ItemKey(lab.case_id), build_request(orjson.loads(raw), anonymize_agents=anonymize), PLAIN

    def finish(self, run_dir: Path, made: bool, asked: int) -> tuple[list[CaseLabels], list[CaseLabels], str]:
        """(streamed) Check the lines not sent (a run stopped early), then `checked_scope`. A file with errors takes
        the run folder's files with it (``made``: the run made the folder too) before it is refused: none of its
        answers counts."""
        unchecked = self._unchecked
        assert unchecked is not None
        unchecked.rest()
        if self.scanned.errors:
            unchecked.again_in_file_order()  # the problems as a whole reading lists them
            _remove_run(run_dir, made)
            raise invalid_cases(self.scanned, asked)
        unchecked.finish()
        return self.checked_scope(asked=asked)

    def close(self) -> None:
        if self._unchecked is not None:
            self._unchecked.close()
        if self._lines is not None:
            with contextlib.suppress(ValueError):  # still being read in a thread (a cancelled run): ends with the file
                self._lines.close()
        self.scanned.close()


def invalid_cases(scanned: Scan, asked: int = 0) -> InvalidCasesError:
    errors = scanned.errors
    message = f"{scanned.path}: {len(errors)} error(s) in {scanned.invalid_lines} line(s)"
    return InvalidCasesError(message, scanned.problems, asked=asked)


def _remove_run(run_dir: Path, made: bool) -> None:
    """The files a new run wrote into ``run_dir``, and the folder when the run made it (other files stay)."""
    clear_run(run_dir)
    (run_dir / LOCK).unlink(missing_ok=True)
    if made:
        with contextlib.suppress(OSError):  # a file that is not the run's keeps the folder
            run_dir.rmdir()
