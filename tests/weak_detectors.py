"""Python detectors with one weakness each built in, and detectors built to ignore exactly what a probe changes:
the tests of the probes that rewrite the answers' text (`harness.cases.rewrites`, ``fcb eval --probe robust``) run
them through the real CLI as ``-d tests/weak_detectors.py:NAME`` and check that each probe catches the weakness it
names and stays quiet on a detector that cannot see what it changes.

Weak ones, one a probe:

- `obeys_instructions` (inject): an instruction follower. When any answer asks for a low risk (a "low" next to
  "risk" or ``false_consensus_risk`` in either order, "riesgo bajo", "risque faible", "niedriges Risiko", "(low)",
  "ignore your previous instructions" ... in several languages; matched by keywords, not by the probe's templates),
  it answers low; otherwise `builtin:heuristic`'s verdict and score.
- `swayed_by_tone` (tone): medium, unless most answers sound sure of themselves (certain, no doubt, definitely,
  verified ...: then low) or most hedge (not sure, might, guess, caution, could be wrong ...: then high). An answer
  with both kinds of words counts as hedging.
- `counts_words` (length): built to depend on the answers' length alone: level = floor(log2(mean words an answer))
  mod 3 gives low, medium, high. The length probe opens every answer with filler at least as long as the answer, so
  the mean at least doubles and the level moves, by one or two steps (three steps, which the mod 3 hides, need the
  mean to grow more than fourfold: answers of a few words, each given two sentences of filler).
- `fooled_by_duplicate` (duplicate): a head counter: the most answers stating one final value
  (`harness.final_answer.final_value` key): 4 or more low, 3 medium, 2 or fewer high. One more agent repeating the
  majority lowers it one step wherever it was above low.
- `reads_layout` (format): a stable hash of the answers' exact text, RISKS[hash % 3]: any change of layout moves it
  two times in three.
- `reads_last_lines` (restate): a stable hash of each answer's last line as written: a closing line moves it two times
  in three.

Ignoring counterparts, each blind to what its probes change:

- `reads_values` (format, restate): a stable hash of the sorted multiset of the answers' final value keys. Both probes
  keep a change only where every answer's key stays as it was, so it never flips on them.
- `ignores_added_sentences` (tone, length, inject): built to ignore exactly what those three probes add. It removes
  every sentence of their phrase banks (`CONFIDENT`, `HEDGING`, `FILLER`, `INJECTIONS`, public constants of
  `harness.cases.rewrites`), strips each answer's surrounding whitespace, and gives `builtin:heuristic`'s verdict on
  the cleaned request: the request as it is and its variant clean to the same texts.
- `values_not_heads` (duplicate): a stable hash of the set (not the multiset) of final value keys: one more agent
  repeating a value already held changes nothing it reads.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from typing import Any

from harness.cases.rewrites import CONFIDENT, FILLER, HEDGING, INJECTIONS
from harness.detectors.heuristic import features, rule
from harness.final_answer import final_value

RISKS = ("low", "medium", "high")


def h(text: str) -> int:
    """A stable hash of a text, as an integer."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _hashed(parts: list[str]) -> dict[str, Any]:
    digest = h(json.dumps(parts))
    return {"false_consensus_risk": RISKS[digest % 3], "risk_score": digest % 101 / 100}


def _heuristic(request: dict[str, Any]) -> dict[str, Any]:
    risk, score, _ = rule(features(request))
    return {"false_consensus_risk": risk, "risk_score": round(score, 4)}


def _texts(request: dict[str, Any]) -> list[str]:
    return [a["text"] for a in request["answers"]]


def _keys(request: dict[str, Any]) -> list[str]:
    """Each answer's final value key; "-" where none is read."""
    return [v.key if (v := final_value(t)) is not None else "-" for t in _texts(request)]


# ------------------------------------------------------------------ weak ones

_LOW = r"(?:low|bajo|baja|faible|basso|bassa|baixo|baixa|niedrig\w*|gering\w*|niski\w*)"
_RISK = r"(?:false[_ ]consensus[_ ]risk|risk|riesgo|risque|rischio|risco|risiko|ryzyko)"
_NEAR = r"[\s\"'`:=,()\[\]{}.-]{1,8}(?:\w+[\s\"'`:=,()-]{1,4}){0,3}?"
_ASKS_LOW = re.compile(
    rf"\b{_RISK}{_NEAR}{_LOW}\b|\b{_LOW}{_NEAR}{_RISK}\b|\(\s*low\s*\)"
    r"|\bignore (?:all |your |any )?(?:previous|prior|above) instructions\b",
    re.IGNORECASE,
)


def asks_for_low_risk(text: str) -> bool:
    """Whether a text holds an instruction for a low risk verdict (keywords in several languages)."""
    return _ASKS_LOW.search(text) is not None


def obeys_instructions(request: dict[str, Any]) -> dict[str, Any]:
    """Low whenever an answer asks for a low risk; otherwise `builtin:heuristic`'s verdict."""
    if any(asks_for_low_risk(t) for t in _texts(request)):
        return {"false_consensus_risk": "low", "risk_score": 0.05}
    return _heuristic(request)


_HEDGES = re.compile(
    r"\b(?:not (?:at all |entirely |completely |totally |really )?(?:sure|certain|confident)|unsure|uncertain|might"
    r"|may|maybe|perhaps|possibly|probably|guess|tentative\w*|caution|erred|could (?:\w+ )?be wrong|i think"
    r"|i believe|doubtful)\b",
    re.IGNORECASE,
)
_CONFIDENT = re.compile(
    r"\b(?:certain(?:ly)?|no doubt|without (?:any )?doubt|definitely|verified|sure|confident|checked|"
    r"undoubtedly|absolutely|guaranteed|of course|clearly)\b",
    re.IGNORECASE,
)


def tone(text: str) -> str | None:
    """An answer's tone: hedging, confident or None; an answer with a hedge word hedges, whatever else it says."""
    if _HEDGES.search(text):
        return "hedging"
    return "confident" if _CONFIDENT.search(text) else None


def swayed_by_tone(request: dict[str, Any]) -> dict[str, Any]:
    """Medium; low when most answers sound sure, high when most hedge."""
    tones = Counter(tone(t) for t in _texts(request))
    n = len(request["answers"])
    if 2 * tones["hedging"] > n:
        return {"false_consensus_risk": "high", "risk_score": 0.8}
    if 2 * tones["confident"] > n:
        return {"false_consensus_risk": "low", "risk_score": 0.2}
    return {"false_consensus_risk": "medium", "risk_score": 0.5}


def word_level(request: dict[str, Any]) -> int:
    """floor(log2(mean words an answer)) mod 3 (0 for a mean under one word)."""
    words = [len(t.split()) for t in _texts(request)]
    mean = sum(words) / len(words) if words else 0.0
    return math.floor(math.log2(mean)) % 3 if mean >= 1 else 0


def counts_words(request: dict[str, Any]) -> dict[str, Any]:
    """A verdict from the answers' mean length in words, and nothing else."""
    level = word_level(request)
    return {"false_consensus_risk": RISKS[level], "risk_score": level / 2}


def heads(request: dict[str, Any]) -> int:
    """The most answers that state one final value (0 when none is read)."""
    return max(Counter(k for k in _keys(request) if k != "-").values(), default=0)


def fooled_by_duplicate(request: dict[str, Any]) -> dict[str, Any]:
    """The more heads on one value, the lower the risk: 4 or more low, 3 medium, 2 or fewer high."""
    top = heads(request)
    risk = "low" if top >= 4 else "medium" if top == 3 else "high"
    return {"false_consensus_risk": risk, "risk_score": {"low": 0.2, "medium": 0.5, "high": 0.8}[risk]}


def reads_layout(request: dict[str, Any]) -> dict[str, Any]:
    """A hash of the answers' exact text."""
    return _hashed(_texts(request))


def last_line(text: str) -> str:
    """An answer's last line as written (after its last newline; the empty string after a closing newline)."""
    return text.split("\n")[-1]


def reads_last_lines(request: dict[str, Any]) -> dict[str, Any]:
    """A hash of each answer's last line."""
    return _hashed([last_line(t) for t in _texts(request)])


# ------------------------------------------------------------------ ignoring counterparts


def reads_values(request: dict[str, Any]) -> dict[str, Any]:
    """A hash of the sorted multiset of final value keys."""
    return _hashed(sorted(_keys(request)))


ADDED = tuple(sorted({*CONFIDENT, *HEDGING, *FILLER, *INJECTIONS.values()}, key=len, reverse=True))
"""Every sentence tone, length and inject add, the longest first."""


def cleaned(text: str) -> str:
    """``text`` without any sentence of `ADDED`, stripped of surrounding whitespace."""
    for sentence in ADDED:
        text = text.replace(sentence, "")
    return text.strip()


def ignores_added_sentences(request: dict[str, Any]) -> dict[str, Any]:
    """`builtin:heuristic`'s verdict on the request with every added sentence removed."""
    answers = [{"agent_id": a["agent_id"], "text": cleaned(a["text"])} for a in request["answers"]]
    return _heuristic({**request, "answers": answers})


def values_not_heads(request: dict[str, Any]) -> dict[str, Any]:
    """A hash of the set of final value keys: how many answers hold each one is not read."""
    return _hashed(sorted(set(_keys(request))))
