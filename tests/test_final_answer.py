"""One reading of an answer's final value for the builder, the audit and the built-ins. Every expected value was worked
out by hand from the text it is read from (texts written for these tests)."""

from __future__ import annotations

import pytest

from harness.final_answer import Votes, debate_final, final_value, mmlu_letter, votes


@pytest.mark.parametrize(
    ("text", "key", "route"),
    [
        ('{"reasoning": "4 + 5", "answer": "9"}', "n:9", "json"),
        ('{"reasoning": "half", "answer": "\\\\frac{1}{2}"}', "n:1/2", "json"),
        ("Cells divide by mitosis. The answer is (B).", "c:B", "letter"),
        ("Step one.\nAnswer: D", "c:D", "letter"),
        ("She pays 3 * 4 = 12 dollars.\nA: 12", "n:12", "final-line"),
        ("Adding them up.\n#### 1,250", "n:1250", "final-line"),
        ("So $x = 2$ and the total is $\\boxed{\\frac{3}{4}}$.", "n:3/4", "boxed"),
        ("We get 10 apples. The answer is 7. Another agent said 9.", "n:7", "answer-is"),
        ("It rose from 3 to 8 metres.", "n:8", "last-number"),
        ("Nothing happens if you crack your knuckles a lot.", "t:nothinghappensifyoucrackyourknucklesalot", "whole"),
    ],
)
def test_final_value_reads_each_anchor(text: str, key: str, route: str) -> None:
    found = final_value(text)
    assert found is not None and (found.key, found.route) == (key, route)


def test_a_long_answer_with_no_anchor_and_no_number_is_unread() -> None:
    assert final_value("word " * 100) is None


def test_the_answer_is_a_value_then_talk_of_other_values_is_that_value() -> None:
    """FCB-2348 of the v3 build: the agent boxes 1/4, then says which other agent was wrong and with what value."""
    text = (
        "Thus $2^{-2} = \\boxed{\\frac{1}{4}}$\n\nTherefore, the answer is $\\frac{1}{4}$, which matches the second "
        "agent. The first agent made an error and arrived at the incorrect answer of $2^{20}$."
    )
    assert debate_final(text) == ("$\\frac{1}{4}$", "answer-is")
    assert debate_final("Hence the answer is $3$, or perhaps $4$.") is None  # two values: no reading


def test_a_letter_hedged_then_restated_is_that_letter() -> None:
    """FCB-3839 of the v3 build: "The answer is (C), but ... not ...", then a closing "Answer: C"."""
    text = "The answer is (C), but keep in mind that it is not the whole story.\nAnswer: C"
    value, how = mmlu_letter(text, "C")
    assert value is not None and value.key == "s:C" and how == "agrees"
    taken_back, _ = mmlu_letter("The closest option is (E), but this is not the correct answer.", None)
    assert taken_back is None  # taken back and never restated: unreadable


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        (["A: 5", "A: 5", "A: 5"], Votes(3, 3, 1, 0, 3)),
        (["A: 5", "A: 5.0", "A: 6", "A: 5", "A: 7"], Votes(5, 3, 3, 0, 5)),  # 5 and 5.0 are one value
        (["A: 5", "word " * 100, "A: 6"], Votes(3, 1, 2, 1, 2)),
    ],
)
def test_votes_count_values(texts: list[str], expected: Votes) -> None:
    assert votes(texts) == expected


def test_consensus_is_sixty_percent_in_whole_numbers() -> None:
    assert Votes(5, 3, 3, 0).consensus and not Votes(5, 2, 4, 0).consensus  # 3 of 5 is exactly 60%
    assert not Votes(3, 1, 2, 1).unanimous and Votes(3, 3, 1, 0).unanimous
    assert Votes(4, 3, 2, 0).top_share == 0.75
