"""Characters outside printable ASCII: where they are, what to write instead, and an in-place fix.

The schema's rule: "ASCII only (straight quotes/hyphens; transliterate accented names; no curly quotes, em-dashes,
emoji)", i.e. every string matches ``^[\\x20-\\x7E]*$``. `scan_text` walks the JSON text itself (not the parsed
value), so each offending character is reported with the JSON pointer of the string that holds it (or of the key,
for a key), its 0-based character offset in that string, its line and column in the file, and the span of text
that spells it: the character itself or its ``\\uXXXX`` escape. Transliterations are suggested for

- curly and low quotes and primes (``'`` or ``"``), dashes and the minus sign (``-``; ``--`` for an em dash or a
  horizontal bar, as the schema's own description writes one);
- accented and other letters: Unicode NFKD with combining marks dropped (``é`` -> ``e``), plus a few letters NFKD
  leaves alone (``ß`` -> ``ss``, ``æ`` -> ``ae``, ``ø`` -> ``o``, ``ł`` -> ``l``, ...); NFKD also covers the
  compatibility forms ``…`` (``...``) and the no-break space (a space).

Emoji, other symbols and control characters get no suggestion: they need a person.

`fix_text` rewrites exactly the characters that have a suggestion, each in place, JSON-escaped where the
suggestion needs it (a curly double quote becomes ``\\"``); everything else in the file is kept byte for byte:
indentation, key order, number spelling, line endings, other escapes, a missing or present final newline. Nothing
is re-serialised. A leading UTF-8 byte-order mark is reported too and removed by the fix.
"""

from __future__ import annotations

import bisect
import unicodedata
from dataclasses import dataclass

from harness.scenario.problems import Finding, pointer

BOM = "\ufeff"
QUOTES_DASHES = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2212\u2043\ufe63\uff0d", "-"),
    **dict.fromkeys("\u2014\u2015", "--"),
}
LETTERS = {
    "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L",
    "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i", "ħ": "h", "Ħ": "H",
}  # fmt: skip
ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def printable(char: str) -> bool:
    return 0x20 <= ord(char) <= 0x7E


def suggest(char: str) -> str | None:
    """The ASCII to write instead of ``char``, or None when there is no safe transliteration."""
    if char in QUOTES_DASHES:
        return QUOTES_DASHES[char]
    if char in LETTERS:
        return LETTERS[char]
    if unicodedata.category(char).startswith("C"):  # control, format, private use, unassigned
        return None
    plain = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return plain if plain and all(printable(c) for c in plain) else None


@dataclass(frozen=True, slots=True)
class AsciiIssue:
    """One character outside printable ASCII, where it is and what could replace it."""

    pointer: str
    offset: int  # 0-based character offset within the string (or key) that holds it
    char: str
    line: int
    column: int
    in_key: bool
    span: tuple[int, int]  # [start, end) in the text: the character or its escape sequence
    suggestion: str | None

    def finding(self) -> Finding:
        if self.char == BOM and self.span == (0, 1):
            return Finding(
                self.pointer, "the file starts with a UTF-8 byte-order mark (U+FEFF); remove it (--fix-ascii)"
            )
        what = f"key {self.pointer.rsplit('/', 1)[-1]!r}" if self.in_key else "string"
        where = f"offset {self.offset} of the {what} (line {self.line}, column {self.column})"
        name = unicodedata.name(self.char, "") or ("control character" if self.char < " " else "unnamed")
        text = f"{_show(self.char)} (U+{ord(self.char):04X} {name}) is not printable ASCII: {where}"
        if self.suggestion is None:
            return Finding(self.pointer, f"{text}; no transliteration known, rewrite by hand")
        return Finding(self.pointer, f"{text}; write {self.suggestion!r} instead (fcb scenario validate --fix-ascii)")


def _show(char: str) -> str:
    return repr(char) if printable(char) or unicodedata.category(char)[0] in "CZ" else f"'{char}'"


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    pointer: str
    line: int


@dataclass(slots=True)
class _Frame:
    is_object: bool
    key: str | int = 0
    keys: set[str] | None = None
    expecting_key: bool = False


class _Scanner:
    """Walks JSON text that is known to parse, tracking the pointer of every string (iteratively: no recursion)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.stack: list[_Frame] = []
        self.issues: list[AsciiIssue] = []
        self.duplicates: list[DuplicateKey] = []
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def run(self) -> None:
        text, i = self.text, 0
        if text.startswith(BOM):
            self.issues.append(AsciiIssue("", 0, BOM, 1, 1, False, (0, 1), ""))
            i = 1
        while i < len(text):
            c = text[i]
            if c == '"':
                i = self._string(i)
                continue
            self._punct(c)
            i += 1

    def _punct(self, c: str) -> None:
        if c in "{[":
            self.stack.append(_Frame(c == "{", keys=set() if c == "{" else None, expecting_key=c == "{"))
        elif c in "}]":
            self.stack.pop()
        elif c == "," and self.stack:
            top = self.stack[-1]
            if top.is_object:
                top.expecting_key = True
            else:
                top.key = int(top.key) + 1

    def _path(self) -> list[str | int]:
        return [f.key for f in self.stack]

    def _string(self, start: int) -> int:
        top = self.stack[-1] if self.stack else None
        is_key = bool(top and top.is_object and top.expecting_key)
        chars, spans, end = _decode_string(self.text, start)
        value = "".join(chars)
        if is_key:
            assert top is not None and top.keys is not None
            if value in top.keys:
                self.duplicates.append(DuplicateKey(pointer(*self._path()[:-1], value), self._line_col(start)[0]))
            top.keys.add(value)
            top.key, top.expecting_key = value, False
        where = pointer(*self._path()[:-1], value) if is_key else pointer(*self._path())
        for offset, (char, span) in enumerate(zip(chars, spans, strict=True)):
            if not printable(char):
                line, column = self._line_col(span[0])
                self.issues.append(AsciiIssue(where, offset, char, line, column, is_key, span, suggest(char)))
        return end

    def _line_col(self, index: int) -> tuple[int, int]:
        row = bisect.bisect_right(self.line_starts, index) - 1
        return row + 1, index - self.line_starts[row] + 1


def _decode_string(text: str, start: int) -> tuple[list[str], list[tuple[int, int]], int]:
    """The characters of the JSON string starting at ``text[start] == '"'``, their text spans, and the index past it."""
    chars: list[str] = []
    spans: list[tuple[int, int]] = []
    i = start + 1
    while text[i] != '"':
        if text[i] != "\\":
            chars.append(text[i])
            spans.append((i, i + 1))
            i += 1
            continue
        if text[i + 1] != "u":
            chars.append(ESCAPES[text[i + 1]])
            spans.append((i, i + 2))
            i += 2
            continue
        code, j = int(text[i + 2 : i + 6], 16), i + 6
        if 0xD800 <= code < 0xDC00 and text[j : j + 2] == "\\u" and 0xDC00 <= int(text[j + 2 : j + 6], 16) < 0xE000:
            code = 0x10000 + ((code - 0xD800) << 10) + (int(text[j + 2 : j + 6], 16) - 0xDC00)
            j += 6
        chars.append(chr(code))
        spans.append((i, j))
        i = j
    return chars, spans, i + 1


def scan_text(text: str) -> tuple[list[AsciiIssue], list[DuplicateKey]]:
    """Every non-printable-ASCII character in JSON ``text`` (which must parse), and every duplicate key."""
    scanner = _Scanner(text)
    scanner.run()
    return scanner.issues, scanner.duplicates


def _json_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def fix_text(text: str, issues: list[AsciiIssue]) -> tuple[str, list[AsciiIssue]]:
    """``text`` with every issue that has a suggestion replaced in place, and the issues that were fixed."""
    fixable = sorted((i for i in issues if i.suggestion is not None), key=lambda i: i.span)
    out, last = [], 0
    for issue in fixable:
        start, end = issue.span
        out.append(text[last:start])
        out.append(_json_escape(issue.suggestion or ""))
        last = end
    out.append(text[last:])
    return "".join(out), fixable
