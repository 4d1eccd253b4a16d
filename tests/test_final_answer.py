"""One reading of an answer's final value for the builder, the audit and the built-ins. Every expected value was worked
out by hand from the text it is read from (texts written for these tests)."""

from __future__ import annotations

import sys
from fractions import Fraction

import pytest

from harness.final_answer import (
    Value,
    Votes,
    boxed,
    boxes,
    debate_final,
    final_value,
    gsm8k_final,
    mmlu_letter,
    names_no_option,
    plain_number,
    reply_answer,
    reply_json,
    stated_letters,
    votes,
)


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
    # 2 of 4 is 50% (10 < 12): no consensus, where a rule at one half would see one; 2 of 3 is 67% (10 >= 9)
    assert not Votes(4, 2, 2, 0).consensus and Votes(3, 2, 2, 0).consensus
    assert not Votes(3, 1, 2, 1).unanimous and Votes(3, 3, 1, 0).unanimous
    assert Votes(4, 3, 2, 0).top_share == 0.75


# ------------------------------------------------------------------ the anchors, one rule at a time


def test_boxed_is_the_last_box_and_boxes_match_their_braces() -> None:
    assert boxed("first \\boxed{1}, then \\boxed{\\frac{2}{3}}.") == "\\boxed{\\frac{2}{3}}"
    assert boxed("no box here") is None
    assert boxes("\\boxed{1} and \\fbox{2}") == ["\\boxed{1}", "\\fbox{2}"]
    assert boxes("\\boxed{unclosed") == []  # a box whose braces never close holds no value


def test_a_number_of_sixty_characters_is_a_value_and_one_longer_is_looping() -> None:
    assert plain_number("9" * 60) == Fraction("9" * 60)
    assert plain_number("9" * 61) is None


def test_the_answer_is_before_the_last_box_gives_way_to_it() -> None:
    # the box comes twice; the one that counts is the last, after "the answer is"
    text = "Try \\boxed{2}. The answer is 3, I thought.\n\nChecking again: \\boxed{2}"
    assert debate_final(text) == ("\\boxed{2}", "boxed")
    # two different boxes in the closing paragraph: no reading; in two paragraphs: the last
    assert debate_final("So it is either \\boxed{1} or \\boxed{2}") is None
    assert debate_final("First \\boxed{1}.\n\nOn reflection \\boxed{2}") == ("\\boxed{2}", "boxed")
    # one paragraph break only (a single newline): still one paragraph, two boxes, no reading
    assert debate_final("Here \\boxed{1}\nand here \\boxed{2}") is None


def test_a_last_sentence_stating_one_value_is_read_and_two_are_not() -> None:
    assert debate_final("We solve it. The value of $b$ is $-5$.") == ("$-5$", "last-sentence")
    assert debate_final("The center is $(2,1)$ and the axis is $\\sqrt{5}$.") is None


def test_the_answer_is_followed_by_three_words_is_a_value_and_by_four_is_prose() -> None:
    assert debate_final("Hence the answer is odd numbers only") == ("odd numbers only", "answer-is")
    assert debate_final("Hence the answer is somewhere between two and three") is None


def test_a_closing_a_line_loses_its_full_stop_only() -> None:
    assert gsm8k_final("4 + 5 = 9\nA: 9.") == ("9", "a-line")
    assert gsm8k_final("Sum.\nA: 12X.") == ("12X", "a-line")  # a value ending in X keeps its X
    assert gsm8k_final("no closing line") is None


def test_a_reply_s_json_is_read_strictly_then_leniently() -> None:
    assert reply_json('x {"answer": "4"} y') == {"answer": "4"}
    assert reply_json('{"answer": "line\nbreak"}') == {"answer": "line\nbreak"}  # a raw control character
    assert reply_json('{"answer": "\\sqrt{2}"}') == {"answer": "\\sqrt{2}"}  # \s is no JSON escape: kept
    assert reply_json("[1, 2]") is None and reply_json("no braces") is None
    assert reply_json('{"answer": "5", oops}') == {"answer": "5"}  # json_repair mends what is left


def test_without_json_repair_the_answer_field_alone_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "json_repair", None)  # the datasets extra not installed: import fails
    assert reply_json('{"answer": "a \\"quoted\\" 5", oops}') == {"answer": 'a "quoted" 5'}
    assert reply_json('{"reasoning": "r", oops}') is None
    assert reply_json('{"answer": "bad \\q escape", oops}') == {"answer": "bad \\q escape"}  # kept as written


def test_reply_answer_rereads_latex_written_with_one_backslash_and_refuses_two_values() -> None:
    assert reply_answer('{"answer": "\\frac{1}{2}"}') == "\\frac{1}{2}"  # \f read as a form feed, then again
    assert reply_answer('{"answer": "3 or 4"}') is None
    assert reply_answer('{"answer": ""}') is None
    assert reply_answer('{"answer": true}') is None
    assert reply_answer('{"answer": 7}') == "7"


def test_stated_letters_name_what_makes_a_response_unreadable() -> None:
    assert stated_letters("The answer is (D) None of the above.") == ["D"]  # the option's own text
    assert stated_letters("Answer: None of the above") == ["none"]
    assert stated_letters("The answer is (E), but this is not the correct one.") == ["E", "taken back"]
    summary = "The answer is (A).\nNow, let's summarize all the answers:\nA. one\nB. two"
    assert stated_letters(summary)[:1] == ["run on"] and "A" in stated_letters(summary)
    one_listed = "The answer is (A).\nNow, let's summarize all the answers:\nA. one"
    assert "run on" not in stated_letters(one_listed)  # one option listed again is no run-on
    value, _ = mmlu_letter("The answer is (B).", "B")
    assert value == Value("B", "s:B", "letter")


def test_names_no_option_reads_the_last_400_characters() -> None:
    assert names_no_option("x" * 500) and not names_no_option("x" * 500 + "the answer")
    assert names_no_option("**C " + "x" * 397)  # "**C" begins 401 characters from the end: out of reach
    assert not names_no_option("**C " + "x" * 396)


def test_final_value_keys_and_routes() -> None:
    assert final_value("I pick it. The answer is (C).") == Value("C", "c:C", "letter")
    assert final_value("We had 1, then 2, then 3 apples.") == Value("3", "n:3", "last-number")
    short = "w" * 300
    assert final_value(short) == Value(short, f"t:{short}", "whole") and final_value(short + "w") is None
    assert final_value("  Paris.  ") == Value("Paris.", "t:paris", "whole")  # stripped, no full stop, lower case
    assert final_value("$ $") is None  # nothing left once the markup goes
    assert final_value("Therefore the answer is (B) for sure\nA: 5") == Value("B", "c:B", "letter")


def test_votes_of_answers_with_no_value_read() -> None:
    assert votes(["$ $", "$$"]) == Votes(2, 0, 0, 2, 0)


def test_each_json_attempt_is_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without json_repair, each lenient reading shows: the whole object comes back, not the answer field alone."""
    monkeypatch.setitem(sys.modules, "json_repair", None)
    # an escaped backslash and a raw line break: strict JSON refuses the break, keeping LaTeX's \\s would double
    # the escaped backslash; only "control characters allowed" reads it
    escaped = '{"answer": "\\\\sqrt{2}", "r": "a\nb"}'
    assert reply_json(escaped) == {"answer": "\\sqrt{2}", "r": "a\nb"}
    # a lone backslash before letters and a raw line break: only the last reading takes both
    lone = '{"answer": "\\sqrt{2}", "r": "a\nb"}'
    assert reply_json(lone) == {"answer": "\\sqrt{2}", "r": "a\nb"}
    # the object ends at its last brace: a full stop after it is no part of it
    assert reply_json('{"answer": "5", "r": 1}.') == {"answer": "5", "r": 1}
    # with a control character and an escaped quote, the answer field is unescaped as JSON
    assert reply_json('{"answer": "a\t\\"q\\"", oops}') == {"answer": 'a\t"q"'}


def test_json_repair_reads_what_is_left() -> None:
    assert reply_json('{"answer": "1"}, {"answer": "2"}') == {"answer": "1"}  # a list of objects: the first
    assert reply_json("{ 3 }") is None  # a list with no object


def test_a_closing_a_line_is_the_last_and_may_open_the_text() -> None:
    assert gsm8k_final("A: 5") == ("5", "a-line")
    assert gsm8k_final("A: 1\nthen again\nA: 2") == ("2", "a-line")
    assert gsm8k_final("Sum.\nA:12") == ("12", "a-line")
    assert gsm8k_final("Sum.\nA: 12 apples\nthat is all") == ("12 apples", "a-line")


def test_only_the_paragraph_of_the_last_box_is_read_for_a_second_value() -> None:
    assert debate_final("Intro.\n\nFirst \\boxed{1}.\n\nOn reflection \\boxed{2}") == ("\\boxed{2}", "boxed")
    assert debate_final("It is either \\boxed{1} or \\boxed{2}\n\nThat is all.") is None


def test_a_number_with_letters_after_it_is_no_plain_number_and_three_boxes_give_the_last() -> None:
    assert plain_number("18X.") is None and plain_number("\\$18") == 18
    assert boxed("\\boxed{1} \\boxed{2} \\boxed{3}") == "\\boxed{3}"


def test_final_value_falls_past_an_anchor_that_holds_no_value() -> None:
    found = final_value("The answer is $ $.")
    assert found is not None and found.route == "whole"
    assert final_value('{"answer": "(C)"}') == Value("(C)", "c:C", "json")
    assert final_value("MAX") == Value("MAX", "t:max", "whole")


def test_no_answers_are_neither_unanimous_nor_a_consensus() -> None:
    """No answer at all: n = 0 and top = 0, so top == n (0 == 0) holds, yet nothing was voted for: not unanimous (the
    heuristic's ``vote_unanimous`` would otherwise be 1), no consensus (5 x 0 >= 3 x 0 holds too), top share 0."""
    empty = Votes(0, 0, 0, 0)
    assert (empty.unanimous, empty.consensus, empty.top_share) == (False, False, 0.0)
