"""Source gold answers that are wrong, and the gold that is right: ``errata.toml`` beside this module, keyed by source
item, so that every source carrying the item (DyLAN's debates and ZeroEval's MATH replies share MATH problems) is
fixed alike. An entry applies only while a source still gives the gold it names as wrong."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from harness.errors import SourceDataError


@cache
def entries() -> dict[str, dict[str, Any]]:
    """Source item -> its entry (``given``, ``gold``, ``reason``), checked once."""
    text = resources.files("fcb_datasets.realdata").joinpath("errata.toml").read_text(encoding="utf-8")
    found: dict[str, dict[str, Any]] = {}
    for item, listed in tomllib.loads(text).items():
        for entry in listed:
            if set(entry) != {"given", "gold", "reason"} or not all(isinstance(v, str) and v for v in entry.values()):
                raise SourceDataError(f"errata.toml: [[{item!r}]] needs given, gold and reason, each a string")
            found[item] = entry
    return found


def gold(item: str, given: str) -> str:
    """The gold answer of a source item: the source's own, unless the errata name it as wrong."""
    entry = entries().get(item)
    return str(entry["gold"]) if entry and entry["given"] == given.strip() else given
