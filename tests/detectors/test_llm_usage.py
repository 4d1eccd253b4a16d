"""A chat reply's token usage (harness.detectors.llm.reply_usage) on hand-made replies: what the reply gives as a
whole count stands, anything else counts at its most and is said to be estimated (issue 45, items 2 and 3)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.detectors.llm import reply_usage, vote
from harness.types import Prediction

WORST = (120, 300)  # the prompt's bytes over four, and max_tokens


def test_usage_given_as_whole_counts_stands_and_nothing_is_estimated() -> None:
    reply = {"usage": {"prompt_tokens": 11, "completion_tokens": 7.0, "total_tokens": 99}}
    # the total is the sum of the two counts read: a provider's own total is not what the prices multiply
    assert reply_usage(reply, WORST) == {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


@pytest.mark.parametrize(
    ("usage", "prompt", "completion"),
    [
        (None, None, None),  # absent
        ("lots", None, None),
        ([1, 2], None, None),
        ({"prompt_tokens": -5, "completion_tokens": -1}, None, None),
        ({"prompt_tokens": 1e30, "completion_tokens": 7}, None, 7),
        ({"prompt_tokens": "12", "completion_tokens": True}, None, None),
        ({"prompt_tokens": 12.5, "completion_tokens": 10**9}, None, 10**9),
        ({"prompt_tokens": 10**9 + 1, "completion_tokens": 0}, None, 0),
        ({"prompt_tokens": 40}, 40, None),
    ],
)
def test_a_count_that_is_not_a_whole_number_from_0_to_a_billion_counts_at_its_most(
    usage: Any, prompt: int | None, completion: int | None
) -> None:
    reply: dict[str, Any] = {} if usage is None else {"usage": usage}
    got = reply_usage(reply, WORST)
    want_prompt = 120 if prompt is None else prompt
    want_completion = 300 if completion is None else completion
    estimated = (120 if prompt is None else 0) + (300 if completion is None else 0)
    assert got["prompt_tokens"] == want_prompt and got["completion_tokens"] == want_completion
    assert got["total_tokens"] == want_prompt + want_completion
    assert got.get("estimated_tokens", 0) == estimated


def test_a_reply_that_is_not_an_object_counts_wholly_at_its_most() -> None:
    assert reply_usage(["not", "a", "reply"], WORST)["estimated_tokens"] == 420


def test_self_consistency_sums_the_estimates_and_writes_none_when_there_are_none() -> None:
    def answered(usage: dict[str, int]) -> Prediction:
        return Prediction("high", None, {"usage": usage})

    given = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    guessed = {"prompt_tokens": 120, "completion_tokens": 300, "total_tokens": 420, "estimated_tokens": 420}
    assert vote([answered(given), answered(guessed)]).extra["usage"] == {
        "prompt_tokens": 130, "completion_tokens": 305, "total_tokens": 435, "estimated_tokens": 420}  # fmt: skip
    assert "estimated_tokens" not in vote([answered(given), answered(given)]).extra["usage"]
