"""What every check returns: a `Finding` at a JSON pointer, printed as ``PATH: /json/pointer: message``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


def pointer(*parts: str | int) -> str:
    """An RFC 6901 JSON pointer for a path of keys and indexes (``~`` and ``/`` escaped)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def join(base: str, *parts: str | int) -> str:
    """``base`` (a pointer) extended by more keys or indexes."""
    return base + pointer(*parts)


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem at a JSON pointer; a warning does not make a file invalid."""

    pointer: str
    message: str
    warning: bool = False

    def render(self, path: str) -> str:
        prefix = "warning: " if self.warning else ""
        return f"{path}: {self.pointer or '(root)'}: {prefix}{self.message}"


def errors(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if not f.warning]
