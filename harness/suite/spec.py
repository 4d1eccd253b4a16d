"""The suite file: a TOML document naming detectors, data sets and gates, checked by a pydantic model.

Every refusal reads ``FILE:LINE: key: message``. tomllib gives no positions for keys, so the line is found by
searching the file's text (`key_line`): the n-th ``[[detectors]]`` header, then the first ``key =`` after it; a
missing key points at its table's header.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.documents.suite import Suite, SuiteDataset, SuiteDetector, SuiteGate
from harness.errors import UsageError

__all__ = ["EMBEDDED", "Suite", "SuiteDataset", "SuiteDetector", "SuiteGate", "cases_file", "key_line", "load_suite",
           "resolve"]  # fmt: skip

EMBEDDED = "embedded"
SPLIT_FILE = "{split}.jsonl"
"""A built benchmark folder's split file (``fcb build-dataset`` writes dev.jsonl and test.jsonl)."""


def key_line(text: str, loc: tuple[int | str, ...]) -> int:
    """The line of ``loc`` (("detectors", 1, "timeout")) in the TOML text, found by searching: tomllib keeps no
    positions. The n-th ``[[table]]`` header, then the first ``key =`` after it; else the header; else line 1."""
    lines = text.splitlines()
    start, line = 0, 1
    if len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int):
        headers = [i for i, s in enumerate(lines) if re.match(rf"\s*\[\[\s*{re.escape(loc[0])}\s*\]\]", s)]
        if loc[1] < len(headers):
            start = headers[loc[1]]
            line = start + 1
        keys = [k for k in loc[2:] if isinstance(k, str)]
        end = next((h for h in headers if h > start), len(lines)) if loc[1] < len(headers) else len(lines)
    else:
        keys = [k for k in loc[:1] if isinstance(k, str)]
        end = next((i for i, s in enumerate(lines) if s.lstrip().startswith("[")), len(lines))
    if keys:
        pattern = re.compile(rf"\s*[\"']?{re.escape(keys[0])}[\"']?\s*=")
        found = next((i for i in range(start, end) if pattern.match(lines[i])), None)
        if found is not None:
            return found + 1
        if not (len(loc) >= 2 and isinstance(loc[1], int)):  # a top-level table: its header
            found = next((i for i, s in enumerate(lines) if re.match(rf"\s*\[+\s*{re.escape(keys[0])}\b", s)), None)
            line = found + 1 if found is not None else line
    return line


def _key_name(loc: tuple[int | str, ...]) -> str:
    """``detectors[1].timeout``: where a problem is, as the file's reader would name it."""
    parts = [f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc]
    return "".join(parts).lstrip(".") or "(document)"


def _message(error: Any) -> str:
    kind: str = error["type"]
    msg: str = error["msg"]
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing (required)"
    if kind.endswith("_type") or kind in {"int_from_float", "bool_parsing"}:
        return f"{msg} (got {type(error['input']).__name__} {error['input']!r})"
    return msg.removeprefix("Value error, ")


def load_suite(path: str | Path) -> tuple[Suite, Path]:
    """The suite file, checked, and the folder its relative paths are read from. Raises `UsageError` as
    ``FILE:LINE: key: message`` for the first problems (all of them, one a line)."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message ends "(at line N, column M)"; no lineno before 3.14
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        raise UsageError(f"{path}:{found.group(1) if found else 1}: {exc}") from None
    try:
        suite = Suite.model_validate(data)
    except ValidationError as exc:
        lines = [f"{path}:{key_line(text, e['loc'])}: {_key_name(e['loc'])}: {_message(e)}" for e in exc.errors()]
        raise UsageError("\n".join(lines)) from None
    _check_names(suite, text, path)
    _check_splits(suite, text, path)
    return suite, path.parent


def _check_names(suite: Suite, text: str, path: Path) -> None:
    """Names unique within their list, and every gate naming a detector and a data set of the suite."""
    lists = {"detectors": [d.name for d in suite.detectors], "datasets": [d.name for d in suite.datasets]}
    for kind, listed in lists.items():
        for i, name in enumerate(listed):
            if name in listed[:i]:
                line = key_line(text, (kind, i, "name"))
                raise UsageError(f"{path}:{line}: {kind}[{i}].name: {name!r} is named twice")
    names = {"detector": {d.name for d in suite.detectors}, "dataset": {d.name for d in suite.datasets}}
    for i, gate in enumerate(suite.gates):
        for key, known in names.items():
            if (value := getattr(gate, key)) not in known:
                line = key_line(text, ("gates", i, key))
                raise UsageError(
                    f"{path}:{line}: gates[{i}].{key}: {value!r} is no {key} of this suite ({', '.join(sorted(known))})"
                )


def _check_splits(suite: Suite, text: str, path: Path) -> None:
    """A data set with ``split`` names a built benchmark folder holding that split's file; a folder without
    ``split`` is refused too (which split would it be?)."""
    for i, ds in enumerate(suite.datasets):
        if ds.cases == EMBEDDED:
            if ds.split:
                line = key_line(text, ("datasets", i, "split"))
                raise UsageError(f"{path}:{line}: datasets[{i}].split: the embedded set has no splits")
            continue
        folder = Path(resolve(path.parent, ds.cases))
        if ds.split is None:
            if folder.is_dir():
                line = key_line(text, ("datasets", i, "cases"))
                raise UsageError(f"{path}:{line}: datasets[{i}].cases: {folder} is a folder (a built benchmark?): "
                                 'give split = "dev" or "test", or the path of a cases file')  # fmt: skip
            continue
        split_file = folder / SPLIT_FILE.format(split=ds.split)
        if not split_file.is_file():
            line = key_line(text, ("datasets", i, "split"))
            what = "is no folder" if not folder.is_dir() else f"holds no {split_file.name}"
            raise UsageError(f"{path}:{line}: datasets[{i}].split: {folder} {what}; split needs cases to name a "
                             "benchmark folder built by fcb build-dataset (dev.jsonl, test.jsonl)")  # fmt: skip


def cases_file(base: Path, ds: SuiteDataset) -> str:
    """The cases file of a data set other than the embedded one: its path, or its split's file in the folder."""
    path = resolve(base, ds.cases)
    return str(Path(path) / SPLIT_FILE.format(split=ds.split)) if ds.split else path


def resolve(base: Path, value: str) -> str:
    """A path of the suite file, relative to its folder (as a detector config's prompt is)."""
    return str(value if Path(value).is_absolute() else base / value)
