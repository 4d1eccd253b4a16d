"""Reading a detector's reply: `parse_prediction` and `parse_risk_field`."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.detectors.reply import RISK_FIELD, parse_prediction, parse_risk_field
from harness.errors import UsageError
from harness.types import RISKS, DetectorError, Prediction

# --------------------------------------------------------------------------------------------------------------
# parse_risk_field


def test_risk_field_default() -> None:
    assert parse_risk_field(None) == ("false_consensus_risk",)
    assert parse_risk_field("") == ("false_consensus_risk",)
    assert RISK_FIELD == ("false_consensus_risk",)


@pytest.mark.parametrize(
    ("dotted", "path"),
    [
        ("risk", ("risk",)),
        ("a.b.c", ("a", "b", "c")),
        ("result.false_consensus_risk", ("result", "false_consensus_risk")),
    ],
)
def test_risk_field_dotted(dotted: str, path: tuple[str, ...]) -> None:
    assert parse_risk_field(dotted) == path


@pytest.mark.parametrize("dotted", ["a..b", ".a", "a.", "."])
def test_risk_field_empty_key_is_refused(dotted: str) -> None:
    with pytest.raises(UsageError, match="empty key"):
        parse_risk_field(dotted)


# --------------------------------------------------------------------------------------------------------------
# valid replies


@pytest.mark.parametrize("risk", ["low", "medium", "high"])
def test_risk_without_score(risk: str) -> None:
    p = parse_prediction({"false_consensus_risk": risk})
    assert isinstance(p, Prediction)
    assert (p.risk, p.score, p.extra) == (risk, None, {})


@pytest.mark.parametrize("score", [0, 1, 0.0, 1.0, 0.42, 1e-9])
def test_risk_with_score(score: float) -> None:
    p = parse_prediction({"false_consensus_risk": "high", "risk_score": score})
    assert p.risk == "high"
    assert p.score == score
    assert type(p.score) is float  # an integer 0 or 1 becomes a float
    assert p.extra == {}


def test_null_score_means_no_score() -> None:
    p = parse_prediction({"false_consensus_risk": "low", "risk_score": None})
    assert (p.risk, p.score) == ("low", None)
    assert "risk_score" not in p.extra


@pytest.mark.parametrize("risk", ["low", "medium", "high"])
def test_bare_risk_string(risk: str) -> None:
    p = parse_prediction(risk)
    assert (p.risk, p.score, p.extra) == (risk, None, {})


def test_extra_fields_are_kept() -> None:
    body = {
        "false_consensus_risk": "medium",
        "risk_score": 0.5,
        "rationale": "two agents copied a third",
        "signals": {"echo": 0.7, "dissent": [1, 2]},
        "model": None,
    }
    p = parse_prediction(body)
    assert (p.risk, p.score) == ("medium", 0.5)
    assert p.extra == {
        "rationale": "two agents copied a third",
        "signals": {"echo": 0.7, "dissent": [1, 2]},
        "model": None,
    }
    assert body["false_consensus_risk"] == "medium"  # the reply itself is left alone


def test_nested_risk_field() -> None:
    body = {"a": {"b": {"c": "high", "why": "x"}}, "risk_score": 0.8, "id": 7}
    p = parse_prediction(body, parse_risk_field("a.b.c"))
    assert (p.risk, p.score) == ("high", 0.8)
    # risk_score is read at the top level and removed; everything else, the nested object included, is kept
    assert p.extra == {"a": {"b": {"c": "high", "why": "x"}}, "id": 7}


def test_custom_top_level_risk_field() -> None:
    p = parse_prediction({"risk": "low", "false_consensus_risk": "high"}, ("risk",))
    assert p.risk == "low"
    assert p.extra == {"false_consensus_risk": "high"}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(RISKS),
    st.none() | st.floats(0, 1) | st.integers(0, 1),
    st.dictionaries(
        st.text(max_size=8).filter(lambda k: k not in ("false_consensus_risk", "risk_score")), st.integers()
    ),
)
def test_any_valid_reply_parses(risk: str, score: float | None, extra: dict[str, int]) -> None:
    body: dict[str, Any] = {**extra, "false_consensus_risk": risk}
    if score is not None:
        body["risk_score"] = score
    p = parse_prediction(body)
    assert p.risk == risk
    assert p.score == (None if score is None else float(score))
    assert p.extra == extra


# --------------------------------------------------------------------------------------------------------------
# invalid replies: always DetectorError("invalid_response") with a reason that names the problem


def _invalid(body: Any, risk_field: tuple[str, ...] = RISK_FIELD) -> DetectorError:
    with pytest.raises(DetectorError) as info:
        parse_prediction(body, risk_field)
    exc = info.value
    assert exc.kind == "invalid_response"
    assert exc.message == str(exc)
    return exc


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({}, RISK_FIELD, ["missing", "false_consensus_risk"]),
        ({"risk": "high"}, RISK_FIELD, ["missing", "false_consensus_risk"]),
        ({"a": {"b": {}}}, ("a", "b", "c"), ["missing", "a.b.c"]),
        ({"a": {"b": "high"}}, ("a", "b", "c"), ["missing", "a.b.c"]),  # a non-object on the path
        ({"a": ["high"]}, ("a", "b"), ["missing", "a.b"]),
        ({"false_consensus_risk": "critical"}, RISK_FIELD, ["'critical'", "not one of low, medium, high"]),
        ({"false_consensus_risk": "HIGH"}, RISK_FIELD, ["'HIGH'", "not one of"]),
        ({"false_consensus_risk": " low"}, RISK_FIELD, ["' low'", "not one of"]),
        ({"false_consensus_risk": 3}, RISK_FIELD, ["false_consensus_risk", "must be a string", "int"]),
        ({"false_consensus_risk": None}, RISK_FIELD, ["must be a string", "NoneType"]),
        ({"false_consensus_risk": ["high"]}, RISK_FIELD, ["must be a string", "list"]),
        ({"a": {"b": {"c": 2}}}, ("a", "b", "c"), ["a.b.c", "must be a string", "int"]),
        ("critical", RISK_FIELD, ["'critical'", "not one of"]),
        ("", RISK_FIELD, ["not one of"]),
        (["high"], RISK_FIELD, ["expected a JSON object", "list"]),
        (3, RISK_FIELD, ["expected a JSON object", "int"]),
        (None, RISK_FIELD, ["expected a JSON object", "NoneType"]),
        (True, RISK_FIELD, ["expected a JSON object", "bool"]),
    ],
)
def test_invalid_risk(body: Any, field: tuple[str, ...], words: list[str]) -> None:
    exc = _invalid(body, field)
    for word in words:
        assert word in exc.message, (word, exc.message)


@pytest.mark.parametrize(
    ("score", "words"),
    [
        (1.5, ["risk_score", "1.5", "outside [0, 1]"]),
        (-0.1, ["risk_score", "-0.1", "outside [0, 1]"]),
        (2, ["risk_score", "2", "outside [0, 1]"]),
        ("0.3", ["risk_score", "must be a number"]),
        (True, ["risk_score", "must be a number", "True"]),
        (False, ["risk_score", "must be a number", "False"]),
        (math.nan, ["risk_score", "must be a number", "nan"]),
        (math.inf, ["risk_score", "must be a number", "inf"]),
        ([0.3], ["risk_score", "must be a number"]),
        ({"value": 0.3}, ["risk_score", "must be a number"]),
    ],
)
def test_invalid_risk_score(score: Any, words: list[str]) -> None:
    exc = _invalid({"false_consensus_risk": "low", "risk_score": score})
    for word in words:
        assert word in exc.message, (word, exc.message)


def test_string_score_reason_says_it_is_a_string() -> None:
    # "got 0.3" would read as if the number 0.3 were refused: the reason must show the value was a string,
    # either quoted ('0.3') or by its type (str).
    exc = _invalid({"false_consensus_risk": "low", "risk_score": "0.3"})
    assert "'0.3'" in exc.message or '"0.3"' in exc.message or "str" in exc.message, exc.message


def test_huge_integer_score_is_an_invalid_response() -> None:
    # A Python detector (module:function) may return any Python number; an integer too large for a float is still
    # "a number outside [0, 1]" and must give invalid_response, not an OverflowError from math.isfinite.
    exc = _invalid({"false_consensus_risk": "low", "risk_score": 10**400})
    assert "risk_score" in exc.message


def test_invalid_reply_keeps_a_preview_of_the_raw_reply() -> None:
    exc = _invalid({"false_consensus_risk": "critical", "note": "x"})
    assert exc.raw is not None and "critical" in exc.raw
    long = {"false_consensus_risk": "nope", "blob": "y" * 10_000}
    raw = _invalid(long).raw
    assert raw is not None and len(raw) < 2_100 and raw.endswith("chars)")


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=10,
)
REPLIES = JSON_VALUES | st.fixed_dictionaries(
    {},
    optional={
        "false_consensus_risk": st.sampled_from(RISKS) | JSON_VALUES,
        "risk_score": st.floats(0, 1) | JSON_VALUES,
        "rationale": JSON_VALUES,
    },
)


@settings(max_examples=300, deadline=None)
@given(REPLIES)
def test_any_value_parses_or_is_invalid_response(body: Any) -> None:
    # Whatever a detector sends, the result is a Prediction or an invalid_response error, never anything else.
    try:
        p = parse_prediction(body)
    except DetectorError as exc:
        assert exc.kind == "invalid_response" and exc.message
    else:
        # independent statement of what a valid reply is
        is_dict = isinstance(body, dict)
        risk = body.get("false_consensus_risk") if is_dict else body
        assert risk in RISKS and p.risk == risk
        score = body.get("risk_score") if is_dict else None
        if score is None:
            assert p.score is None
        else:
            assert not isinstance(score, bool) and isinstance(score, int | float) and 0 <= score <= 1
            assert p.score == score
