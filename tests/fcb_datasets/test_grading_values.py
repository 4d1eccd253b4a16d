"""The builder's grading, value by value: how a segment becomes a `Value` (its text, key and route), the unicode
mathematics rewritten as LaTeX, the longest segment read, the units rule and each way `Gold.grade` says "no value".
Every expected value is worked out by hand in the comment beside it."""

from __future__ import annotations

from fractions import Fraction

import pytest

from fcb_datasets.realdata.grading import (
    LONGEST,
    Gold,
    _as_latex,
    _whole,
    another_unit,
    parse_math,
    read,
    read_value,
)
from harness.final_answer import Value


def test_a_plain_number_is_read_without_sympy_and_keeps_its_route() -> None:
    # "  18 " is the plain number 18: the text is stripped, the key is n:18, and no parse is made ([])
    assert read("  18 ", "a-line") == (Value("18", "n:18", "a-line"), [])
    assert read_value("  18 ", "a-line") == Value("18", "n:18", "a-line")


def test_a_latex_value_takes_math_verifys_text_and_an_exact_fraction_key() -> None:
    # math-verify reads "$x = \frac{3}{2}$" as the equation and "\frac{3}{2}" alone as 3/2; its last element
    # is the LaTeX it extracted, which becomes the value's text
    value, parsed = read("so we get $\\frac{3}{2}$", "boxed")
    assert value == Value("\\frac{3}{2}", "n:3/2", "boxed")
    assert len(parsed) == 2 and parsed[-1] == "\\frac{3}{2}"
    assert read_value("so we get $\\frac{3}{2}$", "boxed") == value


def test_a_decimal_read_through_sympy_has_the_key_of_the_same_decimal_read_plainly() -> None:
    # "$\approx 0.1234567891$" is no plain number, so sympy reads it (a Float); its key must be the decimal
    # as written, 1234567891 / 10^10, the key the plain reading of "0.1234567891" gives: the same value, one group
    through_sympy = read_value("$\\approx 0.1234567891$", "r")
    assert through_sympy is not None and through_sympy.key == "n:1234567891/10000000000"
    assert read_value("0.1234567891", "r") == Value("0.1234567891", "n:1234567891/10000000000", "r")
    # a short decimal too: 2.5 = 5/2
    half = read_value("$\\approx 2.5$", "r")
    assert half is not None and half.key == "n:5/2"


def test_an_expression_is_keyed_by_how_sympy_prints_it() -> None:
    value = read_value("$\\pi$", "r")
    assert value == Value("\\pi", "e:pi", "r")


def test_nothing_readable_gives_no_value_and_no_parse() -> None:
    assert read("no value here at all", "r") == (None, [])  # words, no number
    assert read_value("123 remainder 18", "r") is None  # two numbers in words: which one?


@pytest.mark.parametrize(
    ("segment", "latex"),
    [
        ("12", "12"),  # no unicode mathematics: returned as it is
        ("2X", "2X"),  # a capital X is no mathematics sign
        ("90π", "$90\\pi$"),  # "90\pi " stripped and put between dollars
        ("$90π$", "$90\\pi $"),  # already delimited: left so
        ("2√3", "$2\\sqrt{3}$"),
        ("√(x+1)", "$\\sqrt{x+1}$"),
        ("−5", "$-5$"),  # a minus sign
        ("3×4", "$3\\times 4$"),
        ("x²", "$x^2$"),
        ("2√", None),  # a root of nothing: unreadable, never misread
    ],
)
def test_unicode_mathematics_is_rewritten_as_latex(segment: str, latex: str | None) -> None:
    assert _as_latex(segment) == latex


def test_a_root_of_nothing_parses_to_nothing() -> None:
    assert parse_math("2√") == []


def test_the_longest_segment_read_is_exactly_longest_characters() -> None:
    # "$" + spaces + "7$": LONGEST characters in all is still read as 7; one character more is working, not a value
    at_limit = "$" + " " * (LONGEST - 3) + "7$"
    assert len(at_limit) == LONGEST
    assert parse_math(at_limit)[-1] == "7"
    assert parse_math(" " + at_limit) == []


@pytest.mark.parametrize(
    ("segment", "whole"),
    [
        ("\\boxed{5}", "\\boxed{5}"),  # LaTeX opens: read as it is
        ("2\\sqrt{3}", "$2\\sqrt{3}$"),  # a bare expression: read whole, between dollars
        ("7 dozens", "7"),  # a bare answer in words is its one number
        ("7\\text{ dozens}", "7"),  # \text{...} is words too
        ("\\text{5}", "$\\text{5}$"),  # no word of two letters, only \text around a number
        ("123 remainder 18", None),  # two numbers in words
    ],
)
def test_a_segment_is_read_whole_or_by_its_one_number(segment: str, whole: str | None) -> None:
    assert _whole(segment) == whole


@pytest.mark.parametrize(
    ("value", "gold", "other_unit"),
    [
        (Fraction(2040), Fraction(34), True),  # 2040 / 34 = 60: minutes for hours
        (Fraction(34, 60), Fraction(34), True),  # 1/60 of the gold: hours for minutes
        (Fraction(30), Fraction(1, 2), True),  # 30 / (1/2) = 60, both positive
        (Fraction(60), Fraction(1), True),  # a gold of exactly 1
        (Fraction(-2040), Fraction(-34), True),  # both negative: the same sign
        (Fraction(-2040), Fraction(34), False),  # signs differ: a wrong number
        (Fraction(68), Fraction(34), False),  # twice the gold: 2 is no unit factor
        (Fraction(34), Fraction(34), False),  # the gold itself
        (Fraction(0), Fraction(34), False),  # zero is in no unit
        (Fraction(5), Fraction(0), False),  # a gold of zero has no other unit (and no division by it)
        (None, Fraction(34), False),
    ],
)
def test_a_number_in_another_unit(value: Fraction | None, gold: Fraction, other_unit: bool) -> None:
    assert another_unit(value, gold) is other_unit


def test_grade_says_no_value_three_ways() -> None:
    assert Gold("18").grade(None) == (None, False)  # nothing found at the anchors
    assert Gold("18").grade(("no value here at all", "r")) == (None, False)  # found, unreadable
    assert Gold("34", units=True).grade(("2040", "r")) == (None, False)  # the gold in minutes
    # without units (a MATH problem) 2040 is a wrong value
    assert Gold("34").grade(("2040", "r")) == (Value("2040", "n:2040", "r"), False)


def test_an_option_letter_keeps_the_segment_and_route() -> None:
    assert Gold("\\text{C}").grade(("  (C) ", "answer-is")) == (Value("(C)", "c:C", "answer-is"), True)
    assert Gold("\\text{C}").grade(("(D)", "answer-is")) == (Value("(D)", "c:D", "answer-is"), False)


def test_a_letter_against_a_numeric_gold_is_no_option() -> None:
    # the gold 18 is a number, so an answer "(B)" is not read as option B (key c:B) but as an expression
    value, correct = Gold("18").grade(("(B)", "r"))
    assert correct is False
    assert value is not None and not value.key.startswith("c:")


def test_a_plain_answer_against_a_latex_gold_is_parsed_for_math_verify() -> None:
    # "0.5" is read plainly (no parse), so math-verify needs the segment parsed to compare it with 1/2
    assert Gold("\\frac{1}{2}").grade(("0.5", "r")) == (Value("0.5", "n:1/2", "r"), True)
    assert Gold("\\frac{1}{2}").grade(("0.6", "r")) == (Value("0.6", "n:3/5", "r"), False)


def test_a_plain_answer_against_a_gold_that_is_no_plain_number_goes_to_math_verify() -> None:
    # the gold sqrt(4) is no plain number, the answer "2" is: math-verify compares sqrt(4) with 2, equal
    assert Gold("\\sqrt{4}").grade(("2", "r")) == (Value("2", "n:2", "r"), True)
    assert Gold("\\sqrt{4}").grade(("3", "r")) == (Value("3", "n:3", "r"), False)
