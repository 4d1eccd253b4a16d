"""``builtin:heuristic``: a false-consensus detector that reads structure only, never world knowledge.

`features` (``features.py``) turns a request (task, answers, optional evidence) into named numbers, with the text
helpers of ``text.py``; `Heuristic` (``rule.py``) applies a hand-set rule to them. `builtin:learned` (``learned.py``)
fits a model on the same `features`. Everything here is computed from the request alone: no labels, no network, no
model, no randomness.
"""

from __future__ import annotations

from harness.detectors.heuristic.features import FEATURE_GROUPS, features
from harness.detectors.heuristic.rule import Heuristic, rule, signals
from harness.detectors.heuristic.text import arithmetic_checks, calculate

__all__ = ["FEATURE_GROUPS", "Heuristic", "arithmetic_checks", "calculate", "features", "rule", "signals"]
