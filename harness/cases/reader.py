"""Read ``cases.jsonl`` as a stream and validate each line against the schema and the label scheme.

The file is read once, never whole in memory: `scan` validates every line, keeps only the compact `CaseLabels` of
valid cases (and the problems found) and, with ``spool``, copies each valid line into a private temporary file;
`iter_cases` and `Scan.case` read the cases back from there, so a pipe, a FIFO or a file changed during the run can
never give the run two different contents. Lines are read with a bounded reader: a line over `MAX_LINE_BYTES` is an
error for that line and is skipped without being held, so no input can exhaust memory.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import IO, Any

import fastjsonschema
import orjson

from harness.cases.labels import case_labels, check_case
from harness.jsoncheck import duplicate_key, may_be_too_deep, too_deep, too_deep_message
from harness.schema_messages import schema_message, shorten
from harness.types import CaseLabels

MAX_LINE_BYTES = 4 * 1024 * 1024  # the largest case the schema allows is well under 3 MiB of JSON
BOM = b"\xef\xbb\xbf"
READ_BLOCK = 1 << 20


def embedded_cases_path() -> Path:
    """The original data set shipped inside the package."""
    return Path(str(resources.files("harness") / "data" / "embedded_cases.jsonl"))


@cache
def case_schema() -> dict[str, Any]:
    """The case schema shipped in the package: the single source of truth for a case's shape."""
    return orjson.loads((resources.files("harness") / "data" / "fcb-case.schema.json").read_bytes())


@cache
def _fast_validator() -> Any:
    return fastjsonschema.compile(case_schema())


URI = re.compile(r"^\w+:(\/?\/?)[^\s]+\Z")  # the "uri" format as the fast validator checks it


@cache
def _full_validator() -> Any:
    # Only used on cases that already failed the fast check, to list every error with its path. It checks the
    # "uri" format the way the fast validator does, so the two agree on which cases are valid.
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("uri")(lambda value: not isinstance(value, str) or bool(URI.match(value)))
    return Draft202012Validator(case_schema(), format_checker=checker)


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem in a cases file, printed as ``PATH:LINE: field: message``."""

    path: str
    line: int
    field: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        prefix = "warning: " if self.warning else ""
        return f"{self.path}:{self.line}: {self.field}: {prefix}{self.message}"


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

    def case(self, line: int) -> dict[str, Any]:
        """The parsed case on a valid line, read back from the spool (never from the file again)."""
        if self.spool is None:
            raise ValueError("scan(path, spool=True) keeps the cases; this scan did not")
        self.spool.seek(self.offsets[line])
        return orjson.loads(self.spool.readline())

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()


def content_hash(case: dict[str, Any]) -> str:
    """A hash of a case's content that ignores key order and white space."""
    return hashlib.sha256(orjson.dumps(case, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def _field_name(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(case)"


def schema_errors(case: Any) -> list[tuple[str, str]]:
    """(field, message) for every way a parsed line breaks the schema; empty when it is valid."""
    try:
        _fast_validator()(case)
        return []
    except fastjsonschema.JsonSchemaValueException as fast_error:
        found = []
        try:
            for err in _full_validator().iter_errors(case):
                found.extend(_describe(err))
        except RecursionError:  # orjson parses 1,000 levels; the detailed validator's recursion is shallower
            return [(_field_name(fast_error.path[1:]), "value nested too deeply to validate")]
        if not found:  # the validators differ only on formats (e.g. "uri"), which fastjsonschema checks
            found.append((_field_name(fast_error.path[1:]), shorten(fast_error.message)))
        return sorted(set(found))


def _describe(err: Any) -> list[tuple[str, str]]:
    """(field, message) pairs for one jsonschema error, naming the deepest field that can be named."""
    if err.validator == "required" and isinstance(err.instance, dict):
        missing = [p for p in err.validator_value if p not in err.instance]
        return [(_field_name([*err.absolute_path, p]), "required field is missing") for p in missing]
    if err.context:  # oneOf/anyOf: report the branch the value was meant for, not "valid under none"
        branches: dict[Any, list[Any]] = {}
        for sub in err.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        meant = [b for b in branches.values() if not any(_rejects_shape(sub) for sub in b)]
        if len(meant) == 1:
            return [pair for sub in meant[0] for pair in _describe(sub)]
        from jsonschema.exceptions import best_match

        return _describe(best_match(err.context))
    return [(_field_name(err.absolute_path), schema_message(err))]


def _rejects_shape(err: Any) -> bool:
    """True for an error saying the value is of the wrong kind for this branch altogether."""
    return not err.relative_path and err.validator in ("type", "const", "enum")


def _decode_line(raw: bytes) -> tuple[Any, str | None]:
    """Parse one raw line; returns (case, None) or (None, reason)."""
    if raw.startswith(BOM):
        return None, "line starts with a UTF-8 byte-order mark; save the file as UTF-8 without BOM"
    if raw.endswith(b"\r\n"):
        return None, "CRLF line ending; cases.jsonl uses LF line endings"
    body = raw.rstrip(b"\n")
    if not body.strip():
        return None, "blank line; every line must hold one case"
    if len(body) > MAX_LINE_BYTES:
        return None, _too_long(len(body))
    try:
        case = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):  # orjson stops at 1,024 levels
            return None, too_deep_message("the line")
        return None, f"invalid JSON: {exc}"
    return case, None


def _structure_problem(raw: bytes, case: Any) -> tuple[str, str] | None:
    """(field, message) for what orjson accepts silently: nesting past `MAX_DEPTH`, a key given twice."""
    if may_be_too_deep(raw) and (top := too_deep(case)) is not None:
        return top or "(case)", too_deep_message("value")
    if found := duplicate_key(raw, case):
        return found[0], f"duplicate key {found[1]!r} in one object (JSON would keep only the last value)"
    return None


class NotAFile(OSError):
    """A path that is neither a regular file nor a pipe (a device such as /dev/zero, a directory, a socket)."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _open_input(path: str | os.PathLike[str]) -> IO[bytes]:
    f = open(path, "rb")  # noqa: SIM115 - closed by the caller
    mode = os.fstat(f.fileno()).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        f.close()
        raise NotAFile(errno.EINVAL, "not a regular file or a pipe; give a cases.jsonl file", str(path))
    return f


def _raw_lines(f: IO[bytes], digest: Any = None) -> Iterator[tuple[int, bytes, int]]:
    """(line number, line, its length in bytes) for each line, read in blocks. A line over `MAX_LINE_BYTES` comes
    back as ``b""`` with its true length: counted and skipped, never held. ``digest`` sees every byte."""
    line_no, parts, size, too_long = 0, [], 0, False
    while block := f.read(READ_BLOCK):
        if digest is not None:
            digest.update(block)
        start = 0
        while start < len(block):
            end = block.find(b"\n", start)
            piece = block[start:] if end < 0 else block[start : end + 1]
            size += len(piece)
            if not too_long:
                parts.append(piece)
                if size > MAX_LINE_BYTES + 2:  # + "\r\n": a line at the limit is still read whole and judged
                    parts, too_long = [], True
            if end < 0:
                break
            line_no += 1
            yield line_no, b"".join(parts), size - too_long  # a skipped line's length without its newline
            parts, size, too_long = [], 0, False
            start = end + 1
    if size:
        yield line_no + 1, b"".join(parts), size


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
    shown = str(path)
    digest = hashlib.sha256()
    result = Scan(path=shown, sha256="")
    first_line: dict[str, int] = {}
    kept = tempfile.TemporaryFile(prefix="fcb-cases-") if spool else None  # noqa: SIM115 - Scan.close closes it
    with _open_input(path) as f:
        for line_no, raw, size in _raw_lines(f, digest):
            result.lines = line_no
            if raw and keep is not None and _passed_over(raw, keep):
                result.passed_over += 1
                continue
            if not raw:
                problems, labels = [Problem(shown, line_no, "(line)", _too_long(size))], None
            else:
                problems, labels = _check_line(shown, line_no, raw, first_line, strict)
            result.problems.extend(problems)
            if labels is None:
                result.invalid_lines += 1
                continue
            result.labels.append(labels)
            if kept is not None:
                result.offsets[line_no] = kept.tell()
                kept.write(raw if raw.endswith(b"\n") else raw + b"\n")
    result.sha256 = digest.hexdigest()
    result.spool = kept
    return result


def _too_long(size: int) -> str:
    return f"line is {size:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit"


def _passed_over(raw: bytes, keep: Callable[[str], bool]) -> bool:
    """Whether a line holds a case with a readable id that ``keep`` rejects."""
    try:
        case = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    case_id = case.get("id") if isinstance(case, dict) else None
    return isinstance(case_id, str) and not keep(case_id)


def _check_line(
    path: str, line_no: int, raw: bytes, first_line: dict[str, int], strict: bool
) -> tuple[list[Problem], CaseLabels | None]:
    case, reason = _decode_line(raw)
    if reason is not None:
        return [Problem(path, line_no, "(line)", reason)], None
    if structure := _structure_problem(raw, case):
        return [Problem(path, line_no, *structure)], None
    errors = schema_errors(case)
    if errors:
        return [Problem(path, line_no, f, m) for f, m in errors], None
    problems = [Problem(path, line_no, r.field, r.message, r.warning and not strict) for r in check_case(case)]
    first = first_line.setdefault(case["id"], line_no)
    if first != line_no:
        problems.append(Problem(path, line_no, "id", f"duplicate id {case['id']} (first on line {first})"))
    if any(not p.warning for p in problems):
        return problems, None
    return problems, case_labels(case, line_no, content_hash(case))


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
    with _open_input(source) as f:
        for line_no, raw, _ in _raw_lines(f):
            if target is None:
                return
            if line_no == target:
                yield line_no, orjson.loads(raw)
                target = next(wanted, None)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
