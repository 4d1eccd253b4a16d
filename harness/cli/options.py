"""Argument types and choices shared by several ``fcb`` commands."""

from __future__ import annotations

import argparse
import math

from harness.vocabulary import MAX_SEED

# the metrics a leaderboard ranks on and a history follows; NAME_real: the same on the natural + assembled cases
METRICS = ["accuracy", "macro_f1", "weighted_kappa", "high_risk_recall", "false_alarm_rate", "error_rate"]
METRICS += [f"{name}_real" for name in METRICS]


def _number(text: str, kind: type[int] | type[float], what: str) -> int | float:
    """``text`` as a number, or the usage error that says what was wanted (not argparse's "invalid ... value")."""
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}") from None


def positive_int(text: str) -> int:
    value = int(_number(text, int, "a whole number"))
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 1 or more")
    return value


def non_negative_int(text: str) -> int:
    value = int(_number(text, int, "a whole number"))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 0 or more")
    return value


def positive_float(text: str) -> float:
    value = float(_number(text, float, "a number"))
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number above 0")
    return value


def non_negative_float(text: str) -> float:
    value = float(_number(text, float, "a number"))
    if not 0 <= value < math.inf:
        raise argparse.ArgumentTypeError(f"{text} is not a number of 0 or more")
    return value


def seed(text: str) -> int:
    """A seed: a whole number from 0 to 2**32 - 1, refused before any work starts (-5 or 1e20 crashed a generator
    after the detector had run)."""
    value = int(_number(text, int, "a whole number"))
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number from 0 to {MAX_SEED}")
    return value


def fraction(text: str) -> float:
    value = float(_number(text, float, "a number"))
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate between 0 and 1")
    return value


def probe_list(text: str) -> tuple[str, ...]:
    """``--probe order,names`` as the probes named, in `harness.types.PROBES` order; ``all`` every probe,
    ``robust`` those that rewrite the answers' text (`harness.vocabulary.ROBUST`)."""
    from harness.types import PROBES
    from harness.vocabulary import ROBUST

    names = {n.strip() for n in text.split(",") if n.strip()}
    groups = {"all": PROBES, "robust": ROBUST}
    unknown = sorted(names - set(PROBES) - set(groups))
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"{text!r}: probes are {', '.join(PROBES)} (comma-separated), robust (the last six) or all"
        )
    named = names.union(*(groups[g] for g in names & set(groups)))
    return tuple(p for p in PROBES if p in named)
