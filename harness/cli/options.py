"""Argument types and choices shared by several ``fcb`` commands."""

from __future__ import annotations

import argparse

# the metrics a leaderboard ranks on and a history follows; NAME_real: the same on the natural + assembled cases
METRICS = ["accuracy", "macro_f1", "weighted_kappa", "high_risk_recall", "false_alarm_rate", "error_rate"]
METRICS += [f"{name}_real" for name in METRICS]


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 1 or more")
    return value


def non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 0 or more")
    return value


def fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate between 0 and 1")
    return value


# argparse names a type in its message for a value that is no number ("argument --limit: invalid _positive value:
# 'x'"); the types print the names they had before they were shared, so that the message stays as it was.
positive_int.__name__ = "_positive"
non_negative_int.__name__ = "_non_negative"
fraction.__name__ = "_rate"
