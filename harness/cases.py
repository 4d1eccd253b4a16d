"""Read ``cases.jsonl`` as a stream and validate each line against the schema and the label scheme.

Two passes, neither of which holds the file in memory: `scan` validates every line and keeps only the compact
`CaseLabels` of valid cases (and the problems found); `iter_cases` streams the valid cases again for the run.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import fastjsonschema
import orjson

from harness.labels import case_labels, check_case
from harness.schema_messages import schema_message, shorten
from harness.types import CaseLabels

MAX_LINE_BYTES = 4 * 1024 * 1024  # the largest case the schema allows is well under 3 MiB of JSON
BOM = b"\xef\xbb\xbf"


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
    passed_over: int = 0  # lines of cases that ``keep`` left out, not validated (another shard's)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if not p.warning]


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
        return None, f"line is {len(body):,} bytes, over the {MAX_LINE_BYTES:,}-byte limit"
    try:
        return orjson.loads(body), None
    except orjson.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc}"


def _raw_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, bytes]]:
    with open(path, "rb") as f:
        yield from enumerate(f, start=1)


def scan(path: str | os.PathLike[str], *, strict: bool = False, keep: Callable[[str], bool] | None = None) -> Scan:
    """Validate every line of a cases file. With ``strict`` warnings count as errors.

    With ``keep``, only the cases whose id it accepts are validated (a shard's own); a line whose id cannot be
    read is validated whatever ``keep`` says, so its errors are reported. The digest covers the whole file always.
    """
    shown = str(path)
    digest = hashlib.sha256()
    result = Scan(path=shown, sha256="")
    first_line: dict[str, int] = {}
    for line_no, raw in _raw_lines(path):
        digest.update(raw)
        result.lines = line_no
        if keep is not None and _passed_over(raw, keep):
            result.passed_over += 1
            continue
        problems, labels = _check_line(shown, line_no, raw, first_line, strict)
        result.problems.extend(problems)
        if labels is None:
            result.invalid_lines += 1
        else:
            result.labels.append(labels)
    result.sha256 = digest.hexdigest()
    return result


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


def iter_cases(path: str | os.PathLike[str], lines: Iterator[int] | list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Stream the parsed cases on the given line numbers (ascending), which `scan` found valid."""
    wanted = iter(lines)
    target = next(wanted, None)
    for line_no, raw in _raw_lines(path):
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
