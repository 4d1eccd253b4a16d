"""A detector spec, parsed once: the string a user gives ``-d`` as a small typed value.

Every part of the harness that needs to know what a spec names (the adapter registry, the worker engines, the
response cache, the fingerprint, the run folder's name) reads a `DetectorSpec` instead of splitting the string by
prefix itself. The forms:

- ``http(s)://host[:port][/path]``, comma-separated for replicas: ``kind="http"``, ``target`` the URL(s);
- ``llm:MODEL@BASE_URL``: ``kind="llm"``, ``target`` ``MODEL@BASE_URL``;
- ``builtin:NAME`` or ``builtin:NAME?option=value``: ``kind="builtin"``, ``target`` the name, ``query`` the options;
- anything else names Python code, ``package.module:NAME`` or ``path/file.py:NAME``: ``kind="python"``, ``target``
  the module or file, ``attribute`` the function or class.

``display`` is the form fit to print and store (credentials and secret-looking values removed); ``identity`` a digest
of the whole spec as given, secrets included, for what must tell two detectors apart (the response cache, the
leaderboard's rows): two specs that differ only in a secret are two detectors, and the digest shows neither.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from harness.redact import redact_spec

SpecKind = Literal["http", "llm", "builtin", "python"]
PREFIXES: dict[str, SpecKind] = {"http://": "http", "https://": "http", "llm:": "llm", "builtin:": "builtin"}
"""A spec's prefix and the kind it names; a spec with none of them names Python code."""


@dataclass(frozen=True, slots=True)
class DetectorSpec:
    """A detector spec as given (``text``) and what it names."""

    text: str
    kind: SpecKind
    target: str
    attribute: str = ""  # the function or class of a Python spec
    query: str = ""  # the ``key=value&...`` of a built-in, as given (`harness.detectors.builtin` reads it)

    @property
    def display(self) -> str:
        """The spec fit to print and store: credentials and secret-looking values removed."""
        return redact_spec(self.text)

    @property
    def identity(self) -> str:
        """A digest of the spec as given, secrets included, that shows none of them."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def short(self) -> str:
        """The spec as a run folder's name shows it: ``display`` without an ``llm:`` prefix (the model first)."""
        return self.display.removeprefix("llm:") if self.kind == "llm" else self.display

    @property
    def is_file(self) -> bool:
        """A ``path/file.py:NAME`` spec."""
        return self.kind == "python" and self.target.endswith(".py")

    def portable(self) -> str:
        """The spec with a Python file's path made absolute, so that a worker started elsewhere finds it."""
        return f"{Path(self.target).resolve()}:{self.attribute}" if self.is_file else self.text


PORT = re.compile(r"[0-9]+(/.*)?")
"""What follows the last colon of ``host:port[/path]``: no Python name is all digits."""


def meant(spec: DetectorSpec) -> str | None:
    """The spec a user most likely meant when ``spec`` reads as Python code but cannot be (a URL with a mistyped or
    missing scheme: ``htp://host:8765``, ``HTTP://host``, ``127.0.0.1:8765/detect``), else None."""
    if spec.kind != "python":
        return None
    text = spec.text
    scheme, sep, rest = text.partition("://")
    if sep:
        return f"{'https' if scheme.lower().endswith('s') else 'http'}://{rest}"
    if spec.target and PORT.fullmatch(spec.attribute):
        return f"http://{text}"
    return None


def looks_like_spec(text: str) -> bool:
    """Whether ``text`` reads as a detector spec rather than a file path (a cases file given where -d belongs)."""
    spec = parse_spec(text)
    return spec.kind != "python" or meant(spec) is not None or (spec.is_file and spec.attribute.isidentifier())


def parse_spec(text: str) -> DetectorSpec:
    """What ``text`` names. A Python spec without ``:NAME`` keeps an empty ``attribute`` (its loader says what is
    missing); nothing here imports or opens anything."""
    for prefix, kind in PREFIXES.items():
        if text.startswith(prefix):
            rest = text.removeprefix(prefix) if kind in ("llm", "builtin") else text
            if kind == "builtin":
                name, _, query = rest.partition("?")
                return DetectorSpec(text, kind, name, query=query)
            return DetectorSpec(text, kind, rest)
    target, _, attribute = text.rpartition(":")
    return DetectorSpec(text, "python", target, attribute)
