"""The run-level errors of fcb-harness: one base class, one tree. The ``fcb`` command maps it to exit codes.

The hierarchy, with the exit code of each (``exit_code`` reads it from `EXIT_CODES`)::

    FcbError                      2  anything fcb-harness refuses to do; the message says why and names the file
    ├── UsageError                2  a flag, a setting or an input file the command cannot use as given
    │   ├── DetectorLoadError     2  a detector spec that names nothing, or whose detector fails to load
    │   ├── SourceDataError       2  a public source file (fcb build-dataset) that does not read as its format
    │   └── ScenarioError         2  a valid scenario the analysis cannot take (too many indivisible resources)
    ├── RunError                  2  a run that cannot start or continue
    │   ├── InvalidCasesError     1  the cases file has errors; no detector was called
    │   ├── PreflightFailed       2  the first case failed in a way that would fail every case
    │   ├── RunLocked             2  another process holds the run folder
    │   └── RunMismatchError      2  a refusal: resume of a changed run, shards of different evaluations, a folder
    │       │                        that already holds a run
    │       └── IncomparableRuns  2  fcb compare: two runs on different data sets
    ├── RunLoadError              2  a run folder or a baseline file that cannot be read
    ├── ReportError               2  a run folder whose report page cannot be written
    └── RunInterrupted          130  Ctrl-C or SIGTERM before the run folder was made; nothing was written

Anything else that reaches the command is a bug in fcb-harness: the CLI prints its trace and exits 3. So a check
of the user's input raises one of these, never a bare ``ValueError``; a ``ValueError`` is kept for a broken
invariant (a bug), and for parsers whose callers turn it into one of these.

`harness.types.DetectorError` stands outside this tree on purpose: it is a detector failing on one case, which
the run records as that case's error and goes on; it never ends a run, so it never reaches the CLI. When the first
case's failure shows that every case would fail, the runner raises `PreflightFailed` instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class FcbError(Exception):
    """The base of every run-level error of fcb-harness; the message is meant for the user."""


class UsageError(FcbError):
    """A flag, a setting or an input file the command cannot use as given."""


class DetectorLoadError(UsageError):
    """A detector spec that names nothing, or whose detector fails to load (import, constructor, options)."""


class SourceDataError(UsageError):
    """A public source file given to ``fcb build-dataset`` that does not read as its format."""


class ScenarioError(UsageError):
    """A valid scenario the analysis cannot take."""


class RunError(FcbError):
    """A run that cannot start or continue; the message says why."""


class InvalidCasesError(RunError):
    """The cases file has errors; ``problems`` lists every problem found, warnings included; ``asked``: the cases
    that had gone out or were on their way when the error was found (the preflight: `harness.run.reading`)."""

    def __init__(self, message: str, problems: Sequence[Any] = (), *, asked: int = 0) -> None:
        super().__init__(message)
        self.problems = list(problems)
        self.asked = asked


class PreflightFailed(RunError):
    """The first case failed in a way that would fail every case: unreachable, refused, or the detector raised."""


class RunLocked(RunError):
    """Another process holds the run folder; the message says which."""


class RunMismatchError(RunError):
    """A refusal to combine what does not belong together: resume of a run whose settings or detector changed,
    merge of shards of different evaluations, a new run in a folder that holds one."""


class IncomparableRuns(RunMismatchError):
    """Two runs on different data sets: comparing them case by case would be meaningless."""


class RunLoadError(FcbError):
    """A run folder or a baseline file that cannot be read; the message names the file."""


class ReportError(FcbError):
    """A run folder the report page cannot be written for; the message names the file."""


class RunInterrupted(FcbError):
    """Ctrl-C or SIGTERM arrived before the run folder was made; nothing was written."""


EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
"""Every exit code of ``fcb``, defined here alone: done; invalid cases, a regression or too many errors; bad usage,
settings or input (an `FcbError`, or a file that cannot be read); a bug in fcb-harness; interrupted."""
EXIT_CODES: dict[type, int] = {
    FcbError: EXIT_USAGE,
    InvalidCasesError: EXIT_INVALID,
    RunInterrupted: EXIT_INTERRUPTED,
}
"""The exit code of each class that has its own; the others take their nearest ancestor's."""


def exit_code(exc: FcbError) -> int:
    """The ``fcb`` exit code of an error: that of the nearest class in its ancestry listed in `EXIT_CODES`."""
    return next(EXIT_CODES[cls] for cls in type(exc).__mro__ if cls in EXIT_CODES)


__all__ = [
    "EXIT_CODES",
    "DetectorLoadError",
    "FcbError",
    "IncomparableRuns",
    "InvalidCasesError",
    "PreflightFailed",
    "ReportError",
    "RunError",
    "RunInterrupted",
    "RunLoadError",
    "RunLocked",
    "RunMismatchError",
    "ScenarioError",
    "SourceDataError",
    "UsageError",
    "exit_code",
]
