"""Detectors that ship with the harness, named ``builtin:NAME``. They read only the request, never labels."""

from __future__ import annotations

from collections.abc import Callable

from harness.detectors.answers import agreement_share
from harness.types import Detector, Prediction, Request


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
    from harness.detectors.heuristic import Heuristic  # imported on use: its features cost start-up time

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
