"""Read a scenario file and run every check: encoding, JSON, ASCII, duplicate keys, the schema, the cross-field rules.

The cross-field rules run only when the document's shape is what the schema describes (`SchemaReport.shape_ok`),
so that they never trip over a value of the wrong type; ASCII problems and operator fields do not change the shape.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from harness.scenario.ascii import BOM, AsciiIssue, fix_text, scan_text
from harness.scenario.problems import Finding, errors
from harness.scenario.rules import check_rules
from harness.scenario.schema import check_schema

MAX_BYTES = 8 * 1024 * 1024


@dataclass(slots=True)
class Report:
    """What checking one file found; ``doc`` is the parsed document (None when it did not parse)."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    doc: Any = None
    text: str | None = None
    ascii: list[AsciiIssue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not errors(self.findings)


def read_text(path: str | os.PathLike[str]) -> tuple[str | None, Finding | None]:
    """The file's text, or the reason it cannot be read as a scenario. OSError propagates (a usage error).

    At most `MAX_BYTES` + 1 bytes are ever read, whatever the path is (a pipe, /dev/zero): never more in memory."""
    with open(path, "rb") as f:
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        size = Path(path).stat().st_size
        shown = f"{size:,} bytes" if size > MAX_BYTES else f"more than {MAX_BYTES:,} bytes"
        return None, Finding("", f"file is {shown}, over the {MAX_BYTES:,}-byte limit")
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, Finding("", f"not UTF-8: byte 0x{raw[exc.start]:02X} at byte offset {exc.start}")


def parse(text: str) -> tuple[Any, Finding | None]:
    try:
        return orjson.loads(text.removeprefix(BOM)), None
    except orjson.JSONDecodeError as exc:
        return None, Finding("", f"invalid JSON: {exc}")


def check_document(doc: Any, stem: str) -> list[Finding]:
    """Schema findings, then the cross-field rules when the shape allows them."""
    schema = check_schema(doc)
    findings = list(schema.findings)
    if schema.shape_ok and isinstance(doc, dict):
        findings += check_rules(doc, stem)
    return findings


def check_file(path: str | os.PathLike[str]) -> Report:
    """Every problem in one scenario file. Raises OSError when the file cannot be read."""
    report = Report(str(path))
    text, problem = read_text(path)
    if problem is not None or text is None:
        report.findings.append(problem or Finding("", "unreadable"))
        return report
    report.text = text
    doc, problem = parse(text)
    if problem is not None:
        report.findings.append(problem)
        return report
    report.doc = doc
    report.ascii, duplicates = scan_text(text)
    report.findings += [issue.finding() for issue in report.ascii]
    report.findings += [
        Finding(d.pointer, f"duplicate key (line {d.line}); readers keep only one value") for d in duplicates
    ]
    report.findings += check_document(doc, Path(path).stem)
    return report


def fix_ascii(path: str | os.PathLike[str]) -> tuple[list[AsciiIssue], Finding | None]:
    """Transliterate in place, atomically, every non-ASCII character that has a suggestion; nothing else changes.

    Returns the issues fixed, or a finding saying why the file was left alone (it does not parse, it is read-only,
    it is not a regular file). A symlink's target is edited (the link stays a link); the file keeps its mode.
    """
    from harness.files import atomic_write

    target = os.path.realpath(path)
    mode = os.stat(target).st_mode
    if not stat.S_ISREG(mode):
        return [], Finding("", "not fixed: not a regular file")
    if not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):  # by its mode bits, which root too must respect
        return [], Finding("", "not fixed: the file is read-only; make it writable to fix it")
    text, problem = read_text(target)
    if problem is not None or text is None:
        return [], problem
    _, problem = parse(text)
    if problem is not None:
        return [], Finding(problem.pointer, f"not fixed: {problem.message}")
    issues, _ = scan_text(text)
    fixed_text, fixed = fix_text(text, issues)
    if not fixed:
        return [], None
    _, problem = parse(fixed_text)
    if problem is not None:  # a bug if it ever happens: never write a file that no longer parses
        return [], Finding("", f"not fixed: the transliterated text would not parse ({problem.message})")
    atomic_write(target, fixed_text.encode("utf-8"))
    os.chmod(target, stat.S_IMODE(mode))
    return fixed, None
