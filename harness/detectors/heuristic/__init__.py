"""``builtin:heuristic``: a false-consensus detector that reads structure only, never world knowledge.

Everything here is computed from the request alone: no labels, no network, no model, no randomness. `builtin:learned`
(``harness/detectors/learned.py``) fits a model on the same `features`.

Modules:
- ``text``: word tokens, the claim an answer makes (`claim_key`), whether two claims match
- ``features``: a request (task, answers, optional evidence) turned into named numbers (`features`)
- ``rule``: the hand-set rule (`rule`) and the detector that applies it, `Heuristic`
"""

from __future__ import annotations

from harness.detectors.heuristic.features import FEATURE_GROUPS, features
from harness.detectors.heuristic.rule import Heuristic, rule, signals
from harness.detectors.heuristic.text import arithmetic_checks, calculate

__all__ = ["FEATURE_GROUPS", "Heuristic", "arithmetic_checks", "calculate", "features", "rule", "signals"]
