"""Read a detector's reply into a `Prediction`, or explain why it is not one."""

from __future__ import annotations

import difflib
import json
import math
from dataclasses import replace
from typing import Any

from harness.errors import UsageError
from harness.jsoncheck import too_deep, too_deep_message
from harness.redact import scrub_text
from harness.types import RISKS, DetectorError, Prediction

RISK_FIELD = ("false_consensus_risk",)


def parse_risk_field(dotted: str | None) -> tuple[str, ...]:
    """``"a.b.c"`` to a path of keys; None gives the standard ``false_consensus_risk``."""
    if not dotted:
        return RISK_FIELD
    parts = tuple(dotted.split("."))
    if not all(parts):
        raise UsageError(f"--risk-field {dotted!r}: empty key in dotted path")
    return parts


def _invalid(reason: str, raw: Any = None, *, misread: bool = False) -> DetectorError:
    text = None if raw is None else _preview(raw)
    return DetectorError("invalid_response", reason, raw=text, misread=misread)


def _preview(raw: Any, limit: int = 2000) -> str:
    """The reply as JSON text, as the detector sent it (a Python repr only for what JSON cannot hold). The standard
    library writes it: orjson would write NaN as null and refuses integers past 64 bits, both replies to show."""
    if not isinstance(raw, str):
        try:
            raw = json.dumps(raw, ensure_ascii=False)
        except (TypeError, ValueError):  # a Python detector's object that is no JSON, or a cycle
            raw = repr(raw)
    text = scrub_text(raw)  # scrubbed before it is cut
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def _dig(body: dict[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = body
    for depth, key in enumerate(path):
        if not isinstance(node, dict) or key not in node:
            where = ".".join(path[:depth]) or "the reply"
            raise _invalid(f"missing {'.'.join(path)}{_keys_note(node, key, where)}", body, misread=True)
        node = node[key]
    return node


def _keys_note(node: Any, key: str, where: str) -> str:
    """What the reply holds where the key was looked for, and the likeliest misspelling of it."""
    if not isinstance(node, dict):
        return f" ({where} is not an object)"
    keys = [str(k) for k in node]
    if not keys:
        return f" ({where} is empty)"
    shown = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "")
    close = difflib.get_close_matches(key, keys, cutoff=0.75)  # the closest first
    hint = f"; did you mean {close[0]!r}? (--risk-field reads the risk from another field)" if close else ""
    return f" ({where} has: {shown}{hint})"


def _score(value: Any, body: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        kind = type(value).__name__
        raise _invalid(f"risk_score must be a number in [0, 1], got a {kind}: {_preview(value, 40)}", body)
    try:
        score = float(value)
    except OverflowError:
        raise _invalid("risk_score is an integer too large for a number in [0, 1]", body) from None
    if not math.isfinite(score):
        raise _invalid(f"risk_score must be a number in [0, 1], got {score}", body)
    if not 0.0 <= score <= 1.0:
        raise _invalid(f"risk_score {score} is outside [0, 1]", body)
    return score


def parse_prediction(body: Any, risk_field: tuple[str, ...] = RISK_FIELD) -> Prediction:
    """A detector's reply (a decoded JSON value, or a bare risk string) as a `Prediction`.

    Raises `DetectorError` of kind ``invalid_response`` when the reply is not a JSON object with the risk at
    ``risk_field`` in ``low|medium|high``, when an optional ``risk_score`` is not a number in [0, 1], or when it
    nests deeper than `MAX_DEPTH` levels.
    Everything else in the reply is kept in ``Prediction.extra``.
    """
    if isinstance(body, str):
        body = {risk_field[-1]: body} if len(risk_field) == 1 else body
    if too_deep(body) is not None:  # before anything reads it: the journal could not write it back (orjson: 254)
        raise _invalid(too_deep_message("the reply"))
    if not isinstance(body, dict):
        raise _invalid(f"expected a JSON object, got {type(body).__name__}", body)
    risk = _dig(body, risk_field)
    if not isinstance(risk, str):
        raise _invalid(f"{'.'.join(risk_field)} must be a string, got {type(risk).__name__}", body)
    if risk not in RISKS:
        raise _invalid(f"{'.'.join(risk_field)} {risk[:40]!r} is not one of low, medium, high", body)
    score = body.get("risk_score")
    if score is not None:
        score = _score(score, body)
    dropped = {"risk_score", risk_field[0]} if len(risk_field) == 1 else {"risk_score"}
    extra = {k: v for k, v in body.items() if k not in dropped}
    return Prediction(risk=risk, score=score, extra=extra)  # a Risk: checked against RISKS above


def check_prediction(prediction: Prediction) -> Prediction:
    """A `Prediction` a Python detector returned, held to what `parse_prediction` demands of a reply: a risk of
    `RISKS`, a score in [0, 1] or None, and ``extra`` a dict (None: an empty one), since the journal writes it as
    the record's ``response``, a JSON object. Raises `DetectorError` of kind ``invalid_response`` otherwise: the
    case is an error, and the journal stays readable by resume and every reader."""
    if not isinstance(prediction.risk, str) or prediction.risk not in RISKS:
        raise _invalid(f"Prediction.risk {_preview(repr(prediction.risk), 40)} is not one of low, medium, high")
    extra = {} if prediction.extra is None else prediction.extra
    if not isinstance(extra, dict):
        raise _invalid(f"Prediction.extra must be a dict (a JSON object), got a {type(extra).__name__}", extra)
    score = None if prediction.score is None else _score(prediction.score, None)
    if extra is prediction.extra and score == prediction.score:
        return prediction
    return replace(prediction, score=score, extra=extra)


def stored_prediction(value: Any) -> Prediction:
    """A reply kept by the response cache (``{"risk", "score", "extra"}``), checked as a fresh reply is: the risk in
    ``low|medium|high``, the score a number in [0, 1] or null, the rest an object no deeper than `MAX_DEPTH`.

    Raises `DetectorError` of kind ``invalid_response`` when the stored value is not one (an edited, garbled or
    foreign cache row): a replay must never give a value that a detector's reply could not."""
    if not isinstance(value, dict) or set(value) != {"risk", "score", "extra"}:
        raise _invalid("a stored reply must be an object with exactly risk, score and extra", value)
    risk, extra = value["risk"], value["extra"]
    if not isinstance(risk, str) or risk not in RISKS:
        raise _invalid(f"stored risk {_preview(risk, 40)} is not one of low, medium, high", value)
    score = None if value["score"] is None else _score(value["score"], value)
    if not isinstance(extra, dict) or too_deep(extra) is not None:
        raise _invalid("stored extra is not a JSON object within the nesting limit", value)
    return Prediction(risk=risk, score=score, extra=extra)
