"""Checking one line of a cases file: JSON, structure (nesting, duplicate keys), the case schema, the label scheme.

Each problem is a `Problem`, printed as ``PATH:LINE: field: message``. The schema is checked by a fast compiled
validator; only a case that fails it goes through the detailed one, which names every wrong field.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import jsonschema_rs
import orjson

from harness.cases.labels import case_labels, check_case
from harness.cases.lines import MAX_LINE_BYTES, too_long_message
from harness.jsoncheck import duplicate_key, may_be_too_deep, too_deep, too_deep_message
from harness.schema_messages import schema_message, shorten
from harness.types import CaseLabels

BOM = b"\xef\xbb\xbf"


@cache
def case_schema() -> dict[str, Any]:
    """The case schema shipped in the package: the single source of truth for a case's shape."""
    schema: dict[str, Any] = orjson.loads((resources.files("harness") / "data" / "fcb-case.schema.json").read_bytes())
    return schema


URI = re.compile(r"^\w+:(\/?\/?)[^\s]+\Z")  # the "uri" format: a scheme, a colon, no white space to the end


def is_uri(value: str) -> bool:
    return bool(URI.match(value))


@cache
def _fast_validator() -> Any:
    # jsonschema-rs (compiled Rust): 1.5 us a realistic case where fastjsonschema took 8.8, on every line of every
    # run. Formats are checked, "uri" as the detailed validator checks it, so the two agree on which cases are valid.
    return jsonschema_rs.validator_for(case_schema(), formats={"uri": is_uri}, validate_formats=True)


@cache
def _full_validator() -> Any:
    # Only used on cases that already failed the fast check, to list every error with its path. It checks the
    # "uri" format the way the fast validator does, so the two agree on which cases are valid.
    from jsonschema import Draft202012Validator, FormatChecker

    checker = FormatChecker(formats=())
    checker.checks("uri")(lambda value: not isinstance(value, str) or is_uri(value))
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
    if _fast_validator().is_valid(case):
        return []
    fast_error = next(_fast_validator().iter_errors(case))
    found = []
    try:
        for err in _full_validator().iter_errors(case):
            found.extend(_describe(err))
    except RecursionError:  # orjson parses 1,000 levels; the detailed validator's recursion is shallower
        return [(_field_name(fast_error.instance_path), "value nested too deeply to validate")]
    if not found:  # the two agree on every case we know of; should they not, the case is still refused
        found.append((_field_name(fast_error.instance_path), shorten(fast_error.message)))
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
        return None, too_long_message(len(body))
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


def check_line(
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
