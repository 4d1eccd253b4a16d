"""Read ``cases.jsonl`` as a stream and validate each line against the schema and the label scheme.

The file is read once, never whole in memory: `scan` validates every line, keeps only the compact `CaseLabels` of
valid cases (and the problems found) and, with ``spool``, copies each valid line into a private temporary file;
`iter_cases` and `Scan.case` read the cases back from there, so a pipe, a FIFO or a file changed during the run can
never give the run two different contents. Lines are read with a bounded reader (`harness.cases.lines`) and each is
checked by `harness.cases.validate`.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import IO, Any

import orjson

from harness.cases.lines import open_input, raw_lines, too_long_message
from harness.cases.validate import Problem, check_line
from harness.types import CaseLabels


def embedded_cases_path() -> Path:
    """The original data set shipped inside the package."""
    return Path(str(resources.files("harness") / "data" / "embedded_cases.jsonl"))


@dataclass(slots=True)
class Scan:
    """What the validation pass learned about a file."""

    path: str
    sha256: str
    lines: int = 0
    labels: list[CaseLabels] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    invalid_lines: int = 0
    spool: IO[bytes] | None = None  # the valid lines as read, in a private unnamed temporary file
    offsets: dict[int, int] = field(default_factory=dict)  # line number -> where that line starts in the spool
    passed_over: int = 0  # lines of cases that ``keep`` left out, not validated (another shard's)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if not p.warning]

    @property
    def empty(self) -> str | None:
        """The message for a file of no lines at all (nothing checked is no pass: a wrong path or a failed export,
        most likely); None when it has lines."""
        return f"{self.path}: no cases: the file is empty" if self.lines == 0 else None

    def case(self, line: int) -> dict[str, Any]:
        """The parsed case on a valid line, read back from the spool (never from the file again)."""
        case: dict[str, Any] = orjson.loads(self.text(line))  # a valid line: a JSON object
        return case

    def text(self, line: int) -> bytes:
        """A valid line as it was read (without its newline), from the spool."""
        if self.spool is None:
            raise ValueError("scan(path, spool=True) keeps the cases; this scan did not")
        end = self.spool.tell()  # where a scan still under way writes its next line (`scanning`)
        self.spool.seek(self.offsets[line])
        raw = self.spool.readline()
        self.spool.seek(end)
        return raw.rstrip(b"\n")

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()


def scan(
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    spool: bool = False,
    keep: Callable[[str], bool] | None = None,
) -> Scan:
    """Validate every line of a cases file. With ``strict`` warnings count as errors; with ``spool`` the valid
    lines are kept in a private temporary file for `Scan.case` and `iter_cases`, so the file is read only once.

    With ``keep``, only the cases whose id it accepts are validated (a shard's own); a line whose id cannot be
    read is validated whatever ``keep`` says, so its errors are reported. The digest covers the whole file always.

    Raises OSError when the file cannot be opened (`NotAFile` for a device, a directory or a socket)."""
    result = Scan(path=str(path), sha256="")
    for _ in scanning(result, path, strict=strict, spool=spool, keep=keep):
        pass
    return result


def scanning(
    result: Scan,
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    spool: bool = False,
    keep: Callable[[str], bool] | None = None,
) -> Generator[CaseLabels | None, None, None]:
    """`scan` a line at a time, into ``result``: yields after each line the labels of the case it held when valid
    (else None), so that a run can send its first case while the rest of the file is read. ``result`` is whole
    (its ``sha256`` set) once the generator is exhausted; its spool is open from the first line, for `Scan.case`."""
    shown = result.path
    digest = hashlib.sha256()
    first_line: dict[str, int] = {}
    kept = tempfile.TemporaryFile(prefix="fcb-cases-") if spool else None  # noqa: SIM115 - Scan.close closes it
    result.spool = kept
    with open_input(path) as f:
        for line_no, raw, size in raw_lines(f, digest):
            result.lines = line_no
            if raw and keep is not None and _passed_over(raw, keep):
                result.passed_over += 1
                yield None
                continue
            if not raw:
                problems, labels = [Problem(shown, line_no, "(line)", too_long_message(size))], None
            else:
                problems, labels = check_line(shown, line_no, raw, first_line, strict)
            result.problems.extend(problems)
            if labels is None:
                result.invalid_lines += 1
                yield None
                continue
            result.labels.append(labels)
            if kept is not None:
                result.offsets[line_no] = kept.tell()
                kept.write(raw if raw.endswith(b"\n") else raw + b"\n")
            yield labels
    result.sha256 = digest.hexdigest()


def _passed_over(raw: bytes, keep: Callable[[str], bool]) -> bool:
    """Whether a line holds a case with a readable id that ``keep`` rejects."""
    try:
        case = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    case_id = case.get("id") if isinstance(case, dict) else None
    return isinstance(case_id, str) and not keep(case_id)


def iter_cases(
    source: Scan | str | os.PathLike[str], lines: Iterator[int] | list[int]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream the parsed cases on the given line numbers, which `scan` found valid: from a spooled `Scan` (in any
    order), or by reading the file at a path again (ascending line numbers only)."""
    if isinstance(source, Scan):
        for line_no in lines:
            yield line_no, source.case(line_no)
        return
    wanted = iter(lines)
    target = next(wanted, None)
    with open_input(source) as f:
        for line_no, raw, _ in raw_lines(f):
            if target is None:
                return
            if line_no == target:
                yield line_no, orjson.loads(raw)
                target = next(wanted, None)
