"""Argument types and choices shared by several ``fcb`` commands."""

from __future__ import annotations

import argparse

# the metrics a leaderboard ranks on and a history follows; NAME_real: the same on the natural + assembled cases
METRICS = ["accuracy", "macro_f1", "weighted_kappa", "high_risk_recall", "false_alarm_rate", "error_rate"]
METRICS += [f"{name}_real" for name in METRICS]

# The types keep their leading underscore: argparse names a type in its message for a value that is no number
# ("argument --limit: invalid _positive value: 'x'"), and that message stays as it was.


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 1 or more")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 0 or more")
    return value


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate between 0 and 1")
    return value
