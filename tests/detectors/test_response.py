"""Reading a detector's reply: `parse_prediction` and `parse_risk_field`."""

from __future__ import annotations

import math
import os
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.detectors.reply import (
    RISK_FIELD,
    check_prediction,
    parse_prediction,
    parse_risk_field,
    stored_prediction,
)
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
        (True, ["risk_score", "must be a number", "true"]),  # as the reply wrote it (JSON)
        (False, ["risk_score", "must be a number", "false"]),
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


# --------------------------------------------------------------------------------------------------------------
# every refusal: its exact reason, and the preview of what the detector sent (``raw``), scrubbed and cut


@pytest.fixture
def no_secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No environment variable whose name looks secret: its value would be scrubbed out of the previews below."""
    for name in list(os.environ):
        if re.search("key|token|secret|passw|credential|jwt", name, re.IGNORECASE):
            monkeypatch.delenv(name)


def _nest(levels: int) -> Any:
    """``levels`` lists inside one another, around a 0: ``_nest(2)`` is ``[[0]]``."""
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


# (reply, risk field, the reason, the raw preview: the reply as JSON text, written out by hand)
REFUSALS: list[tuple[Any, tuple[str, ...], str, str]] = [
    (["high"], RISK_FIELD, "expected a JSON object, got list", '["high"]'),
    ("high", ("a", "b"), "expected a JSON object, got str", "high"),  # a bare string only for a one-key field
    ({"risk": "high"}, RISK_FIELD, "missing false_consensus_risk (the reply has: risk)", '{"risk": "high"}'),
    ({"a": {"b": "high"}}, ("a", "b", "c"), "missing a.b.c (a.b is not an object)", '{"a": {"b": "high"}}'),
    ({"a": {"c": "low"}}, ("a", "b", "c"), "missing a.b.c (a has: c)", '{"a": {"c": "low"}}'),
    (
        {"false_consensus_risk": 3},
        RISK_FIELD,
        "false_consensus_risk must be a string, got int",
        '{"false_consensus_risk": 3}',
    ),
    ({"r": {"k": None}}, ("r", "k"), "r.k must be a string, got NoneType", '{"r": {"k": null}}'),
    (
        {"false_consensus_risk": "critical", "note": "x"},
        RISK_FIELD,
        "false_consensus_risk 'critical' is not one of low, medium, high",
        '{"false_consensus_risk": "critical", "note": "x"}',
    ),
    (
        "severe",  # a bare string becomes {"false_consensus_risk": "severe"} before it is read
        RISK_FIELD,
        "false_consensus_risk 'severe' is not one of low, medium, high",
        '{"false_consensus_risk": "severe"}',
    ),
    (
        {"v": {"w": "Low"}},
        ("v", "w"),
        "v.w 'Low' is not one of low, medium, high",
        '{"v": {"w": "Low"}}',
    ),
    (
        {"false_consensus_risk": "low", "risk_score": "0.3"},
        RISK_FIELD,
        "risk_score must be a number in [0, 1], got a str: 0.3",
        '{"false_consensus_risk": "low", "risk_score": "0.3"}',
    ),
    (
        {"false_consensus_risk": "high", "risk_score": True},
        RISK_FIELD,
        "risk_score must be a number in [0, 1], got a bool: true",
        '{"false_consensus_risk": "high", "risk_score": true}',
    ),
    (
        {"false_consensus_risk": "medium", "risk_score": [0.25]},
        RISK_FIELD,
        "risk_score must be a number in [0, 1], got a list: [0.25]",
        '{"false_consensus_risk": "medium", "risk_score": [0.25]}',
    ),
    (
        {"false_consensus_risk": "low", "risk_score": math.nan},
        RISK_FIELD,
        "risk_score must be a number in [0, 1], got nan",
        '{"false_consensus_risk": "low", "risk_score": NaN}',
    ),
    (
        {"false_consensus_risk": "high", "risk_score": -math.inf},
        RISK_FIELD,
        "risk_score must be a number in [0, 1], got -inf",
        '{"false_consensus_risk": "high", "risk_score": -Infinity}',
    ),
    (
        {"false_consensus_risk": "medium", "risk_score": 1.25},
        RISK_FIELD,
        "risk_score 1.25 is outside [0, 1]",
        '{"false_consensus_risk": "medium", "risk_score": 1.25}',
    ),
    (
        {"false_consensus_risk": "low", "risk_score": -1},
        RISK_FIELD,
        "risk_score -1.0 is outside [0, 1]",  # an integer, shown as the float it became
        '{"false_consensus_risk": "low", "risk_score": -1}',
    ),
    (
        {"false_consensus_risk": "low", "risk_score": 10**400},
        RISK_FIELD,
        "risk_score is an integer too large for a number in [0, 1]",
        '{"false_consensus_risk": "low", "risk_score": 1' + "0" * 400 + "}",
    ),
]


@pytest.mark.usefixtures("no_secret_env")
@pytest.mark.parametrize(("body", "field", "reason", "raw"), REFUSALS, ids=[r[2] for r in REFUSALS])
def test_refusal_gives_its_reason_and_the_reply(body: Any, field: tuple[str, ...], reason: str, raw: str) -> None:
    exc = _invalid(body, field)
    assert (exc.message, exc.raw, exc.attempts, exc.status) == (reason, raw, 1, None)


def test_refused_long_risk_is_cut_to_40_characters_in_the_reason() -> None:
    risk = "abcdefghij" * 4 + "KLMNO"  # 45 characters: the reason shows the first 40
    exc = _invalid({"false_consensus_risk": risk})
    shown = "'abcdefghijabcdefghijabcdefghijabcdefghij'"
    assert exc.message == f"false_consensus_risk {shown} is not one of low, medium, high"


@pytest.mark.parametrize(
    ("score", "shown"),
    [
        ("7" * 40, "7" * 40),  # 40 characters: shown whole
        ("7" * 41, "7" * 40 + "... (41 chars)"),  # one more: cut, with the full length
        ("8" * 39 + "9" * 11, "8" * 39 + "9... (50 chars)"),
    ],
)
def test_refused_score_is_previewed_in_40_characters(score: str, shown: str) -> None:
    exc = _invalid({"false_consensus_risk": "low", "risk_score": score})
    assert exc.message == f"risk_score must be a number in [0, 1], got a str: {shown}"


def test_too_deep_reply_is_refused_without_reading_it() -> None:
    deep = {"false_consensus_risk": "low", "x": _nest(100)}  # 1 object + 100 lists: 101 levels, one too many
    exc = _invalid(deep)
    assert (exc.message, exc.raw) == ("the reply is nested more than 100 levels deep", None)
    at_limit = {"false_consensus_risk": "low", "x": _nest(99)}  # 100 levels: read
    assert parse_prediction(at_limit).extra == {"x": _nest(99)}


@pytest.mark.usefixtures("no_secret_env")
@pytest.mark.parametrize(
    ("size", "cut"),
    [(1_991, False), (1_992, True), (5_000, True)],  # the JSON text is size + 9 characters: {"k": "..."}
)
def test_raw_preview_keeps_2000_characters(size: int, cut: bool) -> None:
    body = {"k": "y" * size}  # no risk field: refused as missing
    whole = '{"k": "' + "y" * size + '"}'
    assert len(whole) == size + 9
    raw = _invalid(body).raw
    expected = whole[:2000] + f"... ({size + 9} chars)" if cut else whole
    assert raw == expected


@pytest.mark.usefixtures("no_secret_env")
def test_raw_preview_is_scrubbed_before_it_is_cut() -> None:
    # the password straddles the 2000th character: cut first, "hunter2pa" would be left with no "@" to mark it
    url = "https://agent:hunter2password@relay.example/x?token=abcdef123456&page=3"
    pad = "p" * (2000 - len('{"a": "') - len("https://agent:hunter2pa"))
    raw = _invalid({"a": pad + url}).raw
    assert raw is not None
    assert "hunter2" not in raw and "abcdef123456" not in raw
    # scrubbed: https://REDACTED@relay.example/x?token=REDACTED&page=3, 27 characters shorter, then cut
    scrubbed = '{"a": "' + pad + 'https://REDACTED@relay.example/x?token=REDACTED&page=3"}'
    assert raw == scrubbed[:2000] + f"... ({len(scrubbed)} chars)"


def test_raw_preview_scrubs_secret_environment_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FCB_TEST_API_KEY", "sk-live-0123456789")
    exc = _invalid({"false_consensus_risk": "nope", "echo": "key sk-live-0123456789 leaked"})
    assert exc.raw == '{"false_consensus_risk": "nope", "echo": "key [REDACTED] leaked"}'


def test_risk_field_error_message() -> None:
    with pytest.raises(UsageError) as info:
        parse_risk_field("out..risk")
    assert str(info.value) == "--risk-field 'out..risk': empty key in dotted path"


def test_two_key_risk_field_keeps_its_first_key() -> None:
    body = {"result": {"risk": "medium", "why": "copied"}, "risk_score": 0.75, "risk": "low"}
    p = parse_prediction(body, ("result", "risk"))
    assert (p.risk, p.score) == ("medium", 0.75)
    # only risk_score goes: the top-level "risk" is not the field, and "result" holds more than the risk
    assert p.extra == {"result": {"risk": "medium", "why": "copied"}, "risk": "low"}


def test_bare_string_with_a_one_key_custom_field() -> None:
    p = parse_prediction("medium", ("verdict",))
    assert (p.risk, p.score, p.extra) == ("medium", None, {})


# --------------------------------------------------------------------------------------------------------------
# check_prediction: a Python detector's Prediction held to what a reply must be


def _check_refused(prediction: Prediction) -> DetectorError:
    with pytest.raises(DetectorError) as info:
        check_prediction(prediction)
    assert info.value.kind == "invalid_response"
    return info.value


def test_check_prediction_passes_a_good_prediction_through() -> None:
    good = Prediction("medium", 0.375, {"why": "echo"}, attempts=2)
    assert check_prediction(good) is good
    bare = Prediction("high")
    assert check_prediction(bare) is bare


def test_check_prediction_fills_a_missing_extra() -> None:
    p = Prediction("low", 0.125, None, attempts=3)  # type: ignore[arg-type]  # what a careless detector returns
    checked = check_prediction(p)
    assert (checked.risk, checked.score, checked.extra, checked.attempts) == ("low", 0.125, {}, 3)


def test_check_prediction_with_no_extra_makes_an_integer_score_a_float() -> None:
    p = Prediction("medium", 0, None)  # type: ignore[arg-type]
    checked = check_prediction(p)
    assert (checked.score, type(checked.score), checked.extra) == (0.0, float, {})


def test_check_prediction_keeps_an_integer_score_in_range() -> None:
    p = Prediction("high", 1, {"n": 1})  # type: ignore[arg-type]
    assert check_prediction(p) is p  # 1 is in [0, 1]: nothing to change


@pytest.mark.usefixtures("no_secret_env")
@pytest.mark.parametrize(
    ("prediction", "reason", "raw"),
    [
        (Prediction("critical"), "Prediction.risk 'critical' is not one of low, medium, high", None),  # type: ignore[arg-type]
        (Prediction(2), "Prediction.risk 2 is not one of low, medium, high", None),  # type: ignore[arg-type]
        (
            Prediction("z" * 45),  # type: ignore[arg-type]
            "Prediction.risk '" + "z" * 39 + "... (47 chars) is not one of low, medium, high",  # repr: 47 chars
            None,
        ),
        (
            Prediction("low", 0.5, ["a", 1]),  # type: ignore[arg-type]
            "Prediction.extra must be a dict (a JSON object), got a list",
            '["a", 1]',
        ),
        (Prediction("low", 1.5), "risk_score 1.5 is outside [0, 1]", None),
        (Prediction("medium", math.inf), "risk_score must be a number in [0, 1], got inf", None),
        (Prediction("high", "0.5"), "risk_score must be a number in [0, 1], got a str: 0.5", None),  # type: ignore[arg-type]
    ],
)
def test_check_prediction_refusals(prediction: Prediction, reason: str, raw: str | None) -> None:
    exc = _check_refused(prediction)
    assert (exc.message, exc.raw) == (reason, raw)


# --------------------------------------------------------------------------------------------------------------
# stored_prediction: a cached reply, checked as a fresh one is


def test_stored_prediction_reads_a_cached_reply() -> None:
    p = stored_prediction({"risk": "medium", "score": 0.625, "extra": {"why": "x", "n": [1, 2]}})
    assert (p.risk, p.score, p.extra, p.cached) == ("medium", 0.625, {"why": "x", "n": [1, 2]}, False)
    q = stored_prediction({"risk": "high", "score": None, "extra": {}})
    assert (q.risk, q.score, q.extra) == ("high", None, {})
    r = stored_prediction({"risk": "low", "score": 1, "extra": {"x": _nest(99)}})  # extra: 1 + 99 levels = 100
    assert (r.score, type(r.score), r.extra) == (1.0, float, {"x": _nest(99)})


SHAPE = "a stored reply must be an object with exactly risk, score and extra"
STORED_EXTRA = "stored extra is not a JSON object within the nesting limit"


@pytest.mark.usefixtures("no_secret_env")
@pytest.mark.parametrize(
    ("value", "reason", "raw"),
    [
        (["low", None, {}], SHAPE, '["low", null, {}]'),
        ({"risk": "low", "score": None}, SHAPE, '{"risk": "low", "score": null}'),
        (
            {"risk": "low", "score": None, "extra": {}, "cached": True},
            SHAPE,
            '{"risk": "low", "score": null, "extra": {}, "cached": true}',
        ),
        (
            {"risk": "severe", "score": 0.5, "extra": {}},
            "stored risk severe is not one of low, medium, high",
            '{"risk": "severe", "score": 0.5, "extra": {}}',
        ),
        (
            {"risk": 1, "score": 0.5, "extra": {}},
            "stored risk 1 is not one of low, medium, high",
            '{"risk": 1, "score": 0.5, "extra": {}}',
        ),
        (
            {"risk": "r" * 45, "score": None, "extra": {}},  # the risk cut to 40 characters in the reason
            "stored risk " + "r" * 40 + "... (45 chars) is not one of low, medium, high",
            '{"risk": "' + "r" * 45 + '", "score": null, "extra": {}}',
        ),
        (
            {"risk": "low", "score": "0.5", "extra": {}},
            "risk_score must be a number in [0, 1], got a str: 0.5",
            '{"risk": "low", "score": "0.5", "extra": {}}',
        ),
        (
            {"risk": "high", "score": 3, "extra": {}},
            "risk_score 3.0 is outside [0, 1]",
            '{"risk": "high", "score": 3, "extra": {}}',
        ),
        ({"risk": "low", "score": None, "extra": []}, STORED_EXTRA, '{"risk": "low", "score": null, "extra": []}'),
        (
            {"risk": "low", "score": None, "extra": {"x": _nest(100)}},  # 1 + 100 levels: one too many
            STORED_EXTRA,
            '{"risk": "low", "score": null, "extra": {"x": ' + "[" * 100 + "0" + "]" * 100 + "}}",
        ),
    ],
)
def test_stored_prediction_refusals(value: Any, reason: str, raw: str) -> None:
    with pytest.raises(DetectorError) as info:
        stored_prediction(value)
    exc = info.value
    assert (exc.kind, exc.message, exc.raw) == ("invalid_response", reason, raw)


@pytest.mark.usefixtures("no_secret_env")
@pytest.mark.parametrize(
    ("body", "field", "reason"),
    [
        ({}, RISK_FIELD, "missing false_consensus_risk (the reply is empty)"),
        ({"a": {}}, ("a", "risk"), "missing a.risk (a is empty)"),
        ({"a": 3}, ("a", "risk"), "missing a.risk (a is not an object)"),
        # nine keys: eight shown, then "..."
        ({f"k{i}": 1 for i in range(9)}, RISK_FIELD,
         "missing false_consensus_risk (the reply has: k0, k1, k2, k3, k4, k5, k6, k7, ...)"),
        ({f"k{i}": 1 for i in range(8)}, RISK_FIELD,
         "missing false_consensus_risk (the reply has: k0, k1, k2, k3, k4, k5, k6, k7)"),
        # a misspelling close enough is named, with the flag that reads another field
        ({"false_consensus_rsik": "low"}, RISK_FIELD, "missing false_consensus_risk (the reply has: "
         "false_consensus_rsik; did you mean 'false_consensus_rsik'? (--risk-field reads the risk from another "
         "field))"),
        # "verdict" is no misspelling of it: listed, not suggested
        ({"verdict": "low"}, RISK_FIELD, "missing false_consensus_risk (the reply has: verdict)"),
        # difflib's ratio, 2 x matching characters / both lengths: "rusk" 2 * 3 / 8 = 0.75, the cutoff, named;
        # "riskxxxx" 2 * 4 / 12 = 0.67, listed only
        ({"rusk": "low"}, ("risk",), "missing risk (the reply has: rusk; did you mean 'rusk'? (--risk-field reads "
         "the risk from another field))"),
        ({"riskxxxx": "low"}, ("risk",), "missing risk (the reply has: riskxxxx)"),
        ({"risks": "low"}, ("risk",), "missing risk (the reply has: risks; did you mean 'risks'? (--risk-field "
         "reads the risk from another field))"),
    ],
)  # fmt: skip
def test_a_missing_risk_names_what_the_reply_has_and_is_a_misreading(
    body: Any, field: tuple[str, ...], reason: str
) -> None:
    """Issue 45, item 11: the reply's keys and the likeliest misspelling, and the flag that stops a preflight."""
    exc = _invalid(body, field)
    assert exc.message == reason and exc.misread is True


def test_other_refusals_are_no_misreading() -> None:
    for body in (["high"], {"false_consensus_risk": "critical"}, {"false_consensus_risk": 3}):
        assert _invalid(body).misread is False
    exc = _invalid({"false_consensus_risk": "low", "risk_score": 2})
    assert exc.misread is False and exc.raw == '{"false_consensus_risk": "low", "risk_score": 2}'


def test_a_reply_json_cannot_hold_is_shown_as_python() -> None:
    class Odd:
        def __repr__(self) -> str:
            return "<odd>"

    with pytest.raises(DetectorError) as info:
        check_prediction(Prediction("low", None, [Odd()]))  # type: ignore[arg-type]
    assert info.value.raw == "[<odd>]"  # no JSON for it: its repr rather than nothing


def test_the_reply_is_shown_with_its_own_letters() -> None:
    exc = _invalid({"risque": "élevé"})
    assert exc.raw == '{"risque": "élevé"}'  # as the detector wrote it, not "\\u00e9lev\\u00e9"
