"""The field types and markers every document is built from: bounds and descriptions that pydantic reads when it
builds a schema (`Limits`, `Doc`), the shared value types (`Count`, `Share`, `Interval`, ...), and a definition's
title and config (`titled`, `configure`). Imports no pydantic: the contract costs no start-up time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

# ---- markers: what a field allows beyond its type ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds, a least length or a pattern on one value: checked by pydantic and written into the JSON Schema."""

    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)
        for key in ("ge", "le", "gt", "lt", "min_length", "max_length", "pattern"):
            if (value := getattr(self, key)) is not None:
                schema[key] = value
        return schema


@dataclass(frozen=True, slots=True)
class Doc:
    """A field's description in the JSON Schema."""

    text: str

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        schema["description"] = self.text
        return schema


Count = Annotated[int, Limits(ge=0)]
Positive = Annotated[int, Limits(ge=1)]
Seconds = Annotated[float, Limits(ge=0)]
Share = Annotated[float, Limits(ge=0, le=1)]
Rate = Share | None
"""A rate in [0, 1], or null where it is undefined (no case to count it on)."""
Interval = Annotated[list[float], Limits(min_length=2, max_length=2)]
Sha256 = Annotated[str, Limits(pattern="^[0-9a-f]{64}$")]
Text = Annotated[str, Limits(min_length=1)]
Shard = Annotated[str, Limits(pattern="^[1-9][0-9]*/[1-9][0-9]*$")]


def configure(document: type, **config: Any) -> None:
    """What pydantic reads of a definition besides its fields (title, extra keys, forbidden extras): its config."""
    setattr(document, "__pydantic_config__", config)  # noqa: B010 - a TypedDict class takes no class attributes


def titled(document: type, title: str, description: str, **extra: Any) -> None:
    """A shipped document's title and description (its ``$id`` is set on the shipped schema alone, `generated`: an
    ``$id`` inside a schema that another one nests would move the base of its references)."""
    configure(document, title=title, json_schema_extra={"description": description, **extra})
