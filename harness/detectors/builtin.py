"""Detectors that ship with the harness, named ``builtin:NAME``. They read only the request, never labels."""

from __future__ import annotations

import re
from collections.abc import Callable

from harness.types import Detector, Prediction, Request

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


class AlwaysLow:
    """Trusts every consensus: the floor any real detector must beat."""

    name = "builtin:always-low"

    async def assess(self, request: Request) -> Prediction:
        return Prediction("low", 0.0)

    async def aclose(self) -> None:
        return None


class Agreement:
    """Risk from how strongly the answers agree.

    Unanimity reads as low risk; a 60% majority with dissenters as high (a dissenter may be the one who is
    right); no 60% majority as medium. The score rises as the majority's margin shrinks.
    """

    name = "builtin:agreement"

    async def assess(self, request: Request) -> Prediction:
        share = agreement_share([a["text"] for a in request["answers"]])
        if share >= 1.0:
            return Prediction("low", 0.15, {"agreement": share})
        if share >= 0.6:
            return Prediction("high", round(0.6 + (1.0 - share), 4), {"agreement": share})
        return Prediction("medium", 0.4, {"agreement": share})

    async def aclose(self) -> None:
        return None


def _heuristic() -> Detector:
    from harness.detectors.heuristic import Heuristic  # imported on use: heuristic.py builds on this module

    return Heuristic()


def _learned(train: str | None = None) -> Detector:
    from harness.detectors.learned import Learned  # imported on use: only this detector loads scikit-learn

    return Learned(train)


BUILTINS: dict[str, Callable[..., Detector]] = {
    "always-low": AlwaysLow,
    "agreement": Agreement,
    "heuristic": _heuristic,
    "learned": _learned,
}
BUILTIN_OPTIONS: dict[str, tuple[str, ...]] = {"learned": ("train",)}
"""The options each built-in takes in its spec (``builtin:learned?train=PATH``); the others take none."""
BEST_BUILTIN = "builtin:heuristic"
