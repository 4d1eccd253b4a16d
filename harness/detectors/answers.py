"""What an answer asserts, for comparing answers without knowledge: the text helpers that the built-in detectors
share (`builtin.py` and `heuristic/` both build on them, so they stand in a module of their own)."""

from __future__ import annotations

import re

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORD_TEXT = """a an the is are was were be it its i im think believe answer of to in on at and or so that this
which with for as by my our we not sure probably likely maybe yes"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def answer_key(text: str) -> tuple[str, frozenset[str] | float]:
    """What an answer asserts, for comparing answers: its last number if it has one, else its content words."""
    numbers = _NUMBER.findall(text)
    if numbers:
        try:
            return "number", float(numbers[-1].replace(",", ""))
        except ValueError:
            pass
    return "words", frozenset(w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)


def same_answer(a: tuple[str, object], b: tuple[str, object], threshold: float = 0.5) -> bool:
    """Two keys agree when both are the same number, or their word sets overlap by Jaccard >= threshold."""
    if a[0] != b[0]:
        return False
    if a[0] == "number":
        return a[1] == b[1]
    wa, wb = a[1], b[1]
    assert isinstance(wa, frozenset) and isinstance(wb, frozenset)
    union = wa | wb
    return bool(union) and len(wa & wb) / len(union) >= threshold


def agreement_share(texts: list[str]) -> float:
    """Share of answers in the largest group of answers that assert the same thing (greedy grouping)."""
    groups: list[list[tuple[str, object]]] = []
    for key in map(answer_key, texts):
        for group in groups:
            if same_answer(group[0], key):
                group.append(key)
                break
        else:
            groups.append([key])
    return max(len(g) for g in groups) / len(texts)
