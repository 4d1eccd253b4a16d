"""builtin:vote: the risk counting final values gives, worked by hand on requests written for these tests."""

from __future__ import annotations

import asyncio

import pytest

from harness.detectors.builtin import load_builtin
from harness.spec import parse_spec


def _assess(texts: list[str]) -> tuple[str, float | None, dict[str, object]]:
    detector = load_builtin(parse_spec("builtin:vote"))
    request = {"task": "How many?", "answers": [{"agent_id": f"a{i}", "text": t} for i, t in enumerate(texts)]}
    found = asyncio.run(detector.assess(request))  # type: ignore[arg-type]
    return found.risk, found.score, dict(found.extra)


@pytest.mark.parametrize(
    ("texts", "risk", "score"),
    [
        (["A: 12", "The answer is 12.", "#### 12"], "low", 0.15),  # three anchors, one value: unanimous
        (["A: 12", "A: 12", "A: 12", "A: 9", "A: 7"], "high", 1.0),  # 3 of 5 = 60%: a consensus with dissent
        (["A: 12", "A: 12", "A: 9", "A: 7", "A: 5"], "medium", 0.4),  # 2 of 5: no consensus
        (["A: 12", "A: 12", "A: 12", "word " * 100], "high", 0.85),  # an unread answer is never part of one
    ],
)
def test_vote_counts_final_values(texts: list[str], risk: str, score: float) -> None:
    got_risk, got_score, details = _assess(texts)
    assert (got_risk, got_score) == (risk, pytest.approx(score))
    assert set(details) == {"top_share", "distinct", "unread"}


def test_vote_reads_option_letters_and_fractions_as_values() -> None:
    risk, _, details = _assess(["The answer is (B).", "Answer: B", "So it is \\boxed{\\frac{1}{2}}."])
    assert risk == "high" and details == {"top_share": 0.6667, "distinct": 2, "unread": 0}
