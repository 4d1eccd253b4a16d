"""Agent ids that must be told apart by eye: none invisible in part, none a look-alike of another in its case.

Two ids that differ only by a zero-width character, by case, by a compatibility form (``ａ`` for ``a``) or by a
letter of another script (Cyrillic ``а`` for Latin ``a``) look like one agent to a reader of a case or a report,
while the harness counts two. Without a confusables table, a letter of Latin mixed with Cyrillic or Greek letters
in one id stands for the last kind (ids wholly in one script are left alone).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from functools import lru_cache

_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn"})  # controls, format (zero-width...), private, unassigned
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # Hangul fillers, the blank Braille cell: drawn empty
_MIXABLE = frozenset({"LATIN", "CYRILLIC", "GREEK"})  # scripts whose letters stand for one another


def _invisible(char: str) -> bool:
    return unicodedata.category(char) in _INVISIBLE or char in _FILLERS


@lru_cache(maxsize=4096)  # ids repeat from case to case ("agent_1"): each is worked out once
def skeleton(agent_id: str) -> str:
    """How an id looks: compatibility forms folded (NFKC), invisible characters dropped, case folded."""
    if agent_id.isascii() and agent_id.isprintable():
        return agent_id.lower()  # NFKC leaves printable ASCII as it is, and it holds nothing invisible
    return "".join(c for c in unicodedata.normalize("NFKC", agent_id) if not _invisible(c)).casefold()


def _scripts(agent_id: str) -> set[str]:
    return {unicodedata.name(c, "?").split()[0] for c in agent_id if c.isalpha()} & _MIXABLE


@lru_cache(maxsize=4096)
def _own_problem(agent_id: str) -> str | None:
    if agent_id.isascii() and agent_id.isprintable():
        return None  # printable ASCII: nothing invisible, and its letters are all Latin
    if hidden := [c for c in agent_id if _invisible(c)]:
        char = hidden[0]
        name = unicodedata.name(char, "a control or unassigned character")
        return f"agent_id {agent_id!r} holds an invisible character U+{ord(char):04X} ({name})"
    if len(scripts := _scripts(agent_id)) > 1:
        return f"agent_id {agent_id!r} mixes {' and '.join(sorted(s.title() for s in scripts))} letters (look-alikes)"
    return None


def agent_id_problems(agent_ids: Sequence[str]) -> list[tuple[int, str]]:
    """(index, message) for each id that is invisible in part, mixes look-alike scripts, repeats an earlier id, or
    looks like an earlier one (the same `skeleton`)."""
    problems: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    looks: dict[str, int] = {}
    for i, agent_id in enumerate(agent_ids):
        if (first := seen.setdefault(agent_id, i)) != i:
            problems.append((i, f"duplicate agent_id {agent_id!r} (first at answers[{first}])"))
        elif (alike := looks.setdefault(skeleton(agent_id), i)) != i:
            other = agent_ids[alike]
            problems.append((i, f"agent_id {agent_id!r} looks like {other!r} (answers[{alike}])"))
        elif own := _own_problem(agent_id):
            problems.append((i, own))
    return problems
