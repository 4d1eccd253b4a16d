"""Detectors that ship with the harness, named ``builtin:NAME`` (``builtin:NAME?option=value`` for one that takes
options), and the reading of those specs. They read only the request, never labels."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from harness._version import __version__
from harness.cases.lines import file_sha256
from harness.detectors.answers import agreement_share
from harness.errors import DetectorLoadError
from harness.final_answer import Votes, votes
from harness.spec import DetectorSpec
from harness.types import Detector, Prediction, Request, Risk


class AlwaysLow:
    """Trusts every consensus: the floor any real detector must beat."""

    name = "builtin:always-low"

    async def assess(self, request: Request) -> Prediction:
        return Prediction("low", 0.0)

    async def aclose(self) -> None:
        return None


class Agreement:
    """Risk from how strongly the answers agree: the share on the most held final value when every answer states one at
    an anchor (`harness.final_answer.ANCHORED`: what `Vote` counts), else the share of the largest group of answers
    asserting the same last number or content words.

    Unanimity reads as low risk; a 60% majority with dissenters as high (a dissenter may be the one who is
    right); no 60% majority as medium. The score rises as the majority's margin shrinks.
    """

    name = "builtin:agreement"

    async def assess(self, request: Request) -> Prediction:
        texts = [a["text"] for a in request["answers"]]
        counted = votes(texts)
        share = counted.top_share if counted.anchored == counted.n else agreement_share(texts)
        if share >= 1.0:
            return Prediction("low", 0.15, {"agreement": share})
        if share >= 0.6:
            return Prediction("high", round(0.6 + (1.0 - share), 4), {"agreement": share})
        return Prediction("medium", 0.4, {"agreement": share})

    async def aclose(self) -> None:
        return None


def vote_rule(counted: Votes) -> tuple[Risk, float]:
    """The vote rule's risk and score (`Vote`); ``fcb audit-dataset`` scores it too."""
    if not counted.consensus:
        return "medium", 0.4
    if counted.unanimous:
        return "low", 0.15
    return "high", round(0.6 + (1.0 - round(counted.top_share, 4)), 4)


class Vote:
    """A baseline, not a detector: the risk that counting votes alone gives, the floor a detector is read against.

    Each answer's final value is read (`harness.final_answer.final_value`); no value held by 60% of the answers:
    medium; every answer on one value: low; a 60% majority with dissent: high. The score rises as the majority's
    share falls. It knows nothing of the truth: what it scores on a benchmark is what counting votes is worth there.
    """

    name = "builtin:vote"

    async def assess(self, request: Request) -> Prediction:
        counted = votes([a["text"] for a in request["answers"]])
        risk, score = vote_rule(counted)
        return Prediction(risk, score, {"top_share": round(counted.top_share, 4), "distinct": counted.distinct,
                                        "unread": counted.unread})  # fmt: skip

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
    "vote": Vote,
    "heuristic": _heuristic,
    "learned": _learned,
}
BUILTIN_OPTIONS: dict[str, tuple[str, ...]] = {"learned": ("train",)}
"""The options each built-in takes in its spec (``builtin:learned?train=PATH``); the others take none."""
BEST_BUILTIN = "builtin:heuristic"


def load_builtin(spec: DetectorSpec) -> Detector:
    """A built-in detector: ``builtin:NAME`` or ``builtin:NAME?option=value`` (see `BUILTIN_OPTIONS`)."""
    name, query = spec.target, spec.query
    if spec.kind != "builtin" or name not in BUILTINS:
        raise DetectorLoadError(f"unknown built-in detector {spec.text!r}; {_choices()}")
    options = _options(spec.text, query)
    allowed = BUILTIN_OPTIONS.get(name, ())
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = f"takes only {', '.join(allowed)}" if allowed else "takes no options"
        raise DetectorLoadError(f"built-in detector builtin:{name} {takes} (got {', '.join(unknown)}); {_choices()}")
    return BUILTINS[name](**options)


def builtin_fingerprint(spec: DetectorSpec) -> dict[str, Any]:
    """What identifies a built-in: its name and the harness version, and its training file's hash when it has one."""
    found: dict[str, Any] = {"kind": "builtin", "name": f"builtin:{spec.target}", "harness_version": __version__}
    train = _options(spec.text, spec.query).get("train") if spec.query else None
    if train and Path(train).is_file():
        found["train_sha256"] = file_sha256(train)
    return found


def _choices() -> str:
    """Every built-in spec, for error messages: ``builtin:NAME`` or ``builtin:NAME?option=PATH``."""

    def shown(name: str) -> str:
        options = "&".join(f"{o}=PATH" for o in BUILTIN_OPTIONS.get(name, ()))
        return f"builtin:{name}" + (f"?{options}" if options else "")

    return "choose from: " + ", ".join(shown(n) for n in BUILTINS)


def _options(spec: str, query: str) -> dict[str, str]:
    """The ``?key=value&...`` options of a built-in spec, percent-decoded; a literal ``+`` stays a plus."""
    try:
        pairs = parse_qsl(query.replace("+", "%2B"), keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise DetectorLoadError(f"built-in detector {spec!r}: options must read ?key=value&key=value") from None
    options = dict(pairs)
    if len(options) != len(pairs):
        raise DetectorLoadError(f"built-in detector {spec!r}: an option is given twice")
    return options
