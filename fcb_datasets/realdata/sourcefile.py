"""Reading the public source files of ``fcb build-dataset`` defensively: only regular files, of bounded size, with
bounded lines, and every record's fields read with their expected type. Whatever is wrong with a source (not a
regular file, not gzip, cut short, a line that is not JSON, a field missing or of another type, a CSV whose quoting
or field count is broken) is a `SourceDataError` naming the file, the line and the field: exit 2, never a
traceback, never a data set built from a misread source."""

from __future__ import annotations

import csv
import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from harness.errors import SourceDataError
from harness.files import NotRegular, open_regular

MAX_FILE_BYTES = 1 << 30
"""The largest source file read (1 GiB; the largest shipped one is 7 MB)."""
MAX_TEXT_BYTES = 1 << 30
"""The most bytes a file may hold once decompressed (1 GiB; the largest shipped one is 101 MB)."""
MAX_LINE_BYTES = 16 << 20
"""The longest line (16 MiB; the longest shipped one is 85 kB)."""
READ_BLOCK = 1 << 20


def open_source(path: str | Path) -> BinaryIO:
    """``path`` opened for reading bytes when it is a regular file under `MAX_FILE_BYTES`; a `SourceDataError`
    otherwise (a device such as /dev/zero, a FIFO, a directory). A file that does not exist stays an OSError."""
    try:
        return open_regular(path, MAX_FILE_BYTES)
    except NotRegular as exc:
        raise SourceDataError(f"{path}: {exc.strerror}; give the source's own file") from exc
    except IsADirectoryError as exc:
        raise SourceDataError(f"{path}: a directory; give the source's own file") from exc


def lines(path: str | Path, gz: bool = False) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its newline) for every line of a source file, gzip-compressed when ``gz``, in
    bounded memory: a line over `MAX_LINE_BYTES` or a file over `MAX_TEXT_BYTES` is an error, as are bytes that are
    not gzip and a gzip stream cut short."""
    number, total = 0, 0
    with open_source(path) as raw:
        stream = gzip.GzipFile(fileobj=raw) if gz else raw
        try:
            while True:
                line = stream.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                number += 1
                total += len(line)
                if len(line) > MAX_LINE_BYTES:
                    raise SourceDataError(f"{path}:{number}: a line over the {MAX_LINE_BYTES:,}-byte limit")
                if total > MAX_TEXT_BYTES:
                    raise SourceDataError(f"{path}:{number}: over {MAX_TEXT_BYTES:,} bytes of text")
                yield number, line.rstrip(b"\r\n")
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise SourceDataError(f"{path}:{number + 1}: not gzip-compressed JSON lines, or cut short: {exc}") from exc


def json_records(path: str | Path, what: str, gz: bool = False) -> Iterator[Record]:
    """Every line of a JSON-lines source as a `Record` (a JSON object); ``what`` names the record in errors, with
    its article ("an MMLU-Pro")."""
    for number, line in lines(path, gz):
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise SourceDataError(f"{path}:{number}: not {what} record: not JSON: {exc}") from exc
        yield Record(row, f"{path}:{number}", what)


class Record:
    """A JSON object read from a source: each field is read with the type the reader needs, and a field that is
    missing or of another type is a `SourceDataError` naming the file, the line and the field (dotted for a field
    inside another)."""

    def __init__(self, row: Any, where: str, what: str, prefix: str = "") -> None:
        if not isinstance(row, dict):
            field = f"{prefix.rstrip('.')}: " if prefix else ""
            raise SourceDataError(f"{where}: not {what} record: {field}a JSON object expected, got {_kind(row)}")
        self.row, self.where, self.what, self.prefix = row, where, what, prefix

    def __contains__(self, key: str) -> bool:
        return key in self.row

    def error(self, key: str, message: str) -> SourceDataError:
        return SourceDataError(f"{self.where}: not {self.what} record: {self.prefix}{key}: {message}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None) -> Any:
        """The field's value when it has one of the types ``kind`` (bool is never taken for int), ``default``
        when it is absent."""
        if key not in self.row:
            return default
        value = self.row[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(_name(k) for k in kinds)
            raise self.error(key, f"{names} expected, got {_kind(value)}")
        return value

    def need(self, key: str, kind: type | tuple[type, ...]) -> Any:
        """As `get`, for a field that must be there."""
        if key not in self.row:
            raise self.error(key, "missing")
        return self.get(key, kind)

    def text(self, key: str) -> str:
        return str(self.need(key, str))

    def record(self, key: str) -> Record:
        return Record(self.need(key, dict), self.where, self.what, f"{self.prefix}{key}.")

    def records(self, key: str) -> list[Record]:
        """A list of objects."""
        items = self.need(key, list)
        return [Record(v, self.where, self.what, f"{self.prefix}{key}[{i}].") for i, v in enumerate(items)]

    def nested(self, key: str) -> list[list[Record]]:
        """A list of lists of objects."""
        out = []
        for i, inner in enumerate(self.need(key, list)):
            if not isinstance(inner, list):
                raise self.error(f"{key}[{i}]", f"a list expected, got {_kind(inner)}")
            where = f"{self.prefix}{key}[{i}]"
            out.append([Record(v, self.where, self.what, f"{where}[{j}].") for j, v in enumerate(inner)])
        return out


def _name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list",
            dict: "an object", type(None): "null"}.get(kind, kind.__name__)  # fmt: skip


def _kind(value: Any) -> str:
    return "null" if value is None else _name(type(value))


def csv_rows(path: str | Path, columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """(line, row) for every row of a CSV source whose header holds ``columns``, streamed and read strictly: broken
    quoting (a quote left open runs to the end of the file, or to a later quote, taking the lines between into one
    field), a line break inside a field (the sources have none) or a row with more or fewer fields than the header
    is an error naming the line, never a silently different table. Rows are given by the header's names."""
    reader = csv.reader(_text_lines(path), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise SourceDataError(f"{path}: empty; a header line with {', '.join(columns)} expected")
        missing = [c for c in columns if c not in header]
        if missing:
            raise SourceDataError(f"{path}:1: {missing[0]}: column missing from the header")
        for row in reader:
            yield reader.line_num, _checked_row(f"{path}:{reader.line_num}", header, row)
    except csv.Error as exc:
        raise SourceDataError(f"{path}:{reader.line_num}: broken CSV quoting: {exc}") from exc


def _text_lines(path: str | Path) -> Iterator[str]:
    for number, line in lines(path):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SourceDataError(f"{path}:{number}: not UTF-8 text: {exc.reason}") from exc
        yield (text.removeprefix("\ufeff") if number == 1 else text) + "\n"


def _checked_row(where: str, header: list[str], row: list[str]) -> dict[str, str]:
    if len(row) != len(header):
        raise SourceDataError(f"{where}: {len(row)} field(s) where the header has {len(header)} (a quote left open, "
                              "or a separator too many or too few)")  # fmt: skip
    for name, cell in zip(header, row, strict=True):
        if "\n" in cell or "\r" in cell:
            raise SourceDataError(f"{where}: {name}: a line break inside a field (a quote left open on an earlier "
                                  "line?)")  # fmt: skip
    return dict(zip(header, row, strict=True))
