"""Short, readable messages for JSON Schema errors, shared by the case and the scenario validators."""

from __future__ import annotations

from typing import Any


def preview(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def schema_message(err: Any) -> str:
    """A short message that says what is wrong without echoing a long value back."""
    v, inst = err.validator_value, err.instance
    size = len(inst) if isinstance(inst, str | list | dict) else 0
    units: dict[type, str] = {str: "character", dict: "entry"}
    unit = units.get(type(inst), "item")
    match err.validator:
        case "minItems" | "minLength" | "minProperties":
            return f"has {size} {unit}(s); at least {v} required"
        case "maxItems" | "maxLength" | "maxProperties":
            return f"has {size} {unit}(s); at most {v} allowed"
        case "type":
            return f"{preview(inst)} is not of type {' or '.join(v) if isinstance(v, list) else v}"
        case "pattern":
            return f"{preview(inst)} does not match {v}"
        case "enum":
            return f"{preview(inst)} is not one of {', '.join(map(str, v))}"
        case "minimum" | "exclusiveMinimum" | "maximum" | "exclusiveMaximum":
            return f"{preview(inst)} is out of range ({err.validator} {v})"
    return shorten(err.message)


def shorten(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


def printable(text: str, *, escape_backslash: bool = True) -> str:
    """``text`` safe to print in one line of a terminal or a log: every character that is not printable (controls
    such as ESC and newlines, and invisible format characters such as a zero-width space) is shown as its escape
    (``\\x1b``, ``\\n``, ``\\u200b``), and so is the backslash unless ``escape_backslash`` is false, so that an
    escape shown is never ambiguous."""
    return "".join(
        c if c.isprintable() and (c != "\\" or not escape_backslash) else c.encode("unicode_escape").decode("ascii")
        for c in text
    )
