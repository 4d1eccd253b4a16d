"""Checks on JSON that orjson does not make: a nesting limit and duplicate keys.

One depth limit, `MAX_DEPTH`, holds for input lines and detector replies alike. It is checked by walking the value
with an explicit stack, never by recursion, so no value can raise RecursionError here; and as it sits far below
orjson's own limits (1,024 levels to parse, 254 to serialise) no value that passed it can make orjson fail later,
in the journal or in a content hash.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

MAX_DEPTH = 100
"""Levels of arrays and objects a case or a reply may nest; the deepest real case needs 4."""

_KEY_IN_RAW = re.compile(rb'"\s*:')  # the end of an object key, white space allowed (also matches \" : in text)
_SPACED_KEY = re.compile(rb'"\s+:')


def too_deep_message(what: str) -> str:
    return f"{what} is nested more than {MAX_DEPTH} levels deep"


def too_deep(value: Any, limit: int = MAX_DEPTH) -> str | None:
    """None when ``value`` nests at most ``limit`` arrays/objects; otherwise the top-level key under which it goes
    deeper ("" when the top level itself does). Iterative: a value 1,000 levels deep costs a walk, never a
    RecursionError."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, top = stack.pop()
        if isinstance(node, dict):
            children: Any = node.items()
        elif isinstance(node, list | tuple):
            children = ((None, v) for v in node)
        else:
            continue
        if depth > limit:
            return top
        for key, child in children:
            if isinstance(child, dict | list | tuple):
                stack.append((child, depth + 1, top if depth > 1 or key is None else str(key)))
    return None


def may_be_too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """A cheap test: a line with at most ``limit`` opening brackets cannot nest deeper than ``limit``."""
    return raw.count(b"[") + raw.count(b"{") > limit


def duplicate_key(raw: bytes, parsed: Any) -> tuple[str, str] | None:
    """(field path, key) of a key given twice in one object of ``raw``, or None.

    orjson keeps the last of duplicate keys silently. A fast test first: re-serialised, the parsed value has as
    many keys as ``raw`` unless a key was dropped; only when the counts differ (or escapes make them unreliable)
    is the line parsed again with a hook that sees every key.
    """
    if b"\\u" not in raw:
        # orjson writes no space before a colon; a counted bytes search is several times faster than the regex
        in_raw = len(_KEY_IN_RAW.findall(raw)) if _SPACED_KEY.search(raw) else raw.count(b'":')
        if in_raw == orjson.dumps(parsed).count(b'":'):
            return None
    found: list[tuple[int, str]] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj and not found:
                found.append((id(obj), key))
            obj[key] = value
        return obj

    tree = json.loads(raw, object_pairs_hook=pairs_hook)  # parsed by orjson already, no deeper than MAX_DEPTH
    if not found:
        return None
    owner, key = found[0]
    return _path_to(tree, owner, key), key


def _path_to(tree: Any, owner: int, key: str) -> str:
    """The field path (``answers[1].text``) of ``key`` in the object whose id is ``owner``, found without recursion."""
    stack: list[tuple[Any, str]] = [(tree, "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            if id(node) == owner:
                return f"{path}.{key}" if path else key
            stack += [(v, f"{path}.{k}" if path else k) for k, v in node.items()]
        elif isinstance(node, list):
            stack += [(v, f"{path}[{i}]") for i, v in enumerate(node)]
    return key
