"""Final values of answers, read the way each source writes them, and compared with math-verify.

Each source's own answer format says where the final value is: a GSM8K solution's last ``A:`` line, a DyLAN agent's
last ``\\boxed{}`` or "The answer is", a ZeroEval reply's JSON ``answer`` field, an MMLU-Pro response's "The answer is
(X)". Those anchors are found by `harness.final_answer` (the built-ins and the audit read answers with them too); the
value they hold is parsed and compared with the gold answer by math-verify
(HuggingFace's verifier for MATH-style answers: LaTeX, fractions, intervals, sets, units), never by string matching.
A plain decimal number is read without sympy (most values are), which gives the same result and is a hundred times
faster.

An answer whose final value cannot be read is `UNREADABLE`: never correct, never part of a consensus.

A `Value` crosses process boundaries (the builder grades files in worker processes) as plain strings: ``key`` groups
answers that state the same value (numbers as exact fractions, other expressions as sympy prints them).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from harness.final_answer import Value, choice, number_key, plain_number

TIMEOUT = 20
"""Seconds math-verify may take to parse or compare one value. Generous, so that a loaded machine reads every value
the same way (a rebuild must be byte-identical); no value read here comes near it."""
LONGEST = 400
"""A segment longer than this is no final value but a stretch of working: unreadable."""

_UNICODE = {
    "π": r"\pi ",
    "−": "-",
    "×": r"\times ",
    "÷": r"\div ",
    "·": r"\cdot ",
    "²": "^2",
    "³": "^3",
    "∞": r"\infty ",
}
_ROOT = re.compile(r"√\s*(?:\(([^()]*)\)|\{([^{}]*)\}|(\d+(?:\.\d+)?|[A-Za-z]))")
_DELIMITED = re.compile(r"\$|\\\(|\\\[")


def _as_latex(segment: str) -> str | None:
    """Unicode mathematics in LaTeX: math-verify reads "90π" as 90 and "2√3" as 2. "√(x+1)" is \\sqrt{x+1};
    a root whose argument is not clear gives None (unreadable, never misread)."""
    if not any(ch in segment for ch in "√π−×÷·²³∞"):
        return segment
    latex = _ROOT.sub(lambda m: rf"\sqrt{{{next(g for g in m.groups() if g is not None)}}}", segment)
    if "√" in latex:
        return None
    for char, command in _UNICODE.items():
        latex = latex.replace(char, command)
    return latex if _DELIMITED.search(latex) else f"${latex.strip()}$"


def parse_math(segment: str) -> list[Any]:
    """math-verify's reading of a segment (LaTeX or plain expression); [] when it finds nothing."""
    from math_verify import parse

    latex = _as_latex(segment)
    if latex is None or len(latex) > LONGEST:
        return []
    parsed: list[Any] = parse(latex, parsing_timeout=TIMEOUT)
    return parsed


def _key(parsed: list[Any]) -> str:
    import sympy

    expr = parsed[0]
    if isinstance(expr, sympy.Basic) and expr.is_Rational:
        return number_key(Fraction(int(expr.p), int(expr.q)))
    if isinstance(expr, sympy.Float):  # the decimal as written (sympy prints 15 digits): the key a plain reading gives
        return number_key(Fraction(str(expr)))
    return f"e:{expr}"


def read_value(segment: str, route: str) -> Value | None:
    """The value a segment states, or None."""
    return read(segment, route)[0]


def read(segment: str, route: str) -> tuple[Value | None, list[Any]]:
    """The value a segment states and math-verify's parse of it ([] for a plain number, read without sympy)."""
    number = plain_number(segment)
    if number is not None:
        return Value(segment.strip(), number_key(number), route), []
    whole = _whole(segment)
    parsed = parse_math(whole) if whole is not None else []
    if not parsed:
        return None, []
    try:
        return Value(str(parsed[-1]), _key(parsed), route), parsed
    except (ValueError, OverflowError, RecursionError):  # sympy printing a number of thousands of digits
        return None, []


UNIT_FACTORS = (7, 12, 24, 60, 100, 1000, 3600)
"""Factors between common units (days and weeks, months and years, hours and days, minutes and hours, cents and
dollars or a percentage and a fraction, grams and kilograms, seconds and hours)."""


def another_unit(value: Fraction | None, gold: Fraction) -> bool:
    """A number that is the gold in another unit (2040 minutes for a gold of 34 hours): in a word problem that names
    no unit for its answer, neither right nor wrong, so it is read as no value (`Gold` with ``units``). Not in MATH
    problems, which have no units: there 1 for a gold of 12 is a wrong answer."""
    if value is None or value == gold or not value or not gold:
        return False
    ratio = abs(value / gold)
    return any(ratio in (f, Fraction(1, f)) for f in UNIT_FACTORS) and (value > 0) == (gold > 0)


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_LATEX_OPEN = re.compile(r"\$|\\\(|\\\[|\\boxed")
_TEXT = re.compile(r"\\text\{([^{}]*)\}")
_WORD = re.compile(r"(?<!\S)[A-Za-z]{2,}(?=[\s.,;:!?)]|$)")


def _whole(segment: str) -> str | None:
    """A segment as math-verify is to read it whole. Outside ``$...$`` math-verify picks one number out of free text
    ("2\\sqrt{3}" read as 2, "-1 + i" as -1, "10^{5}" as 10): a bare expression (a JSON ``answer``, "the answer is
    2\\sqrt{3}") is read inside ``$...$`` instead. A bare answer in words ("7 dozens", "13.9 is bigger") is its one
    number; with two numbers in it ("123 remainder 18") it is unreadable (None)."""
    if _LATEX_OPEN.search(segment):
        return segment
    if _WORD.search(_TEXT.sub(r" \1 ", segment)):
        numbers = _NUMBER.findall(segment)
        return numbers[0] if len(numbers) == 1 else None
    return f"${segment.strip()}$"


_ONE_OF_SEVERAL = re.compile(r"\bnot both\b|\benter (?:only )?one of\b|\benter either\b", re.IGNORECASE)


def one_of_several(problem: str) -> bool:
    """A problem that asks for any one of several right answers ("Enter only one of the foci, not both."): its gold
    is one of them, so an answer giving another is right and would be graded wrong. Such problems give no case."""
    return _ONE_OF_SEVERAL.search(problem) is not None


_EMPTY_ARGUMENT = re.compile(r"\\[A-Za-z]+\{\s*\}")


class Gold:
    """A gold answer, parsed once; `grade` reads an answer's value and says whether it equals the gold."""

    def __init__(self, text: str, units: bool = False) -> None:
        self.text = text
        self.number = plain_number(text)
        self.units = units  # a word problem: a number that is the gold in another unit is no value (`another_unit`)
        self._parsed: list[Any] | None = None

    @property
    def parsed(self) -> list[Any]:
        if self._parsed is None:
            self._parsed = parse_math(f"${self.text}$") or parse_math(self.text)
        return self._parsed

    @property
    def readable(self) -> bool:
        """A gold answer math-verify reads. Arrays and matrices (``\\begin{...}``) are left out: the sources' copies of
        them are sometimes broken (a row break lost), and a broken gold would mark right answers wrong; so are golds
        with a command whose argument was lost (DyLAN's ``10\\sqrt{}2`` for ``10\\sqrt{2}``)."""
        if "\\begin" in self.text or _EMPTY_ARGUMENT.search(self.text):
            return False
        return self.number is not None or bool(self.parsed)

    def grade(self, found: tuple[str, str] | None) -> tuple[Value | None, bool]:
        """The value of ``(segment, route)`` and whether it equals the gold; (None, False) when unreadable."""
        if found is None:
            return None, False
        segment, route = found
        gold_letter = choice(self.text) if self.number is None else None
        letter = choice(segment) if gold_letter is not None else None
        if letter is not None:  # a multiple-choice problem: letters meet letters
            return Value(segment.strip(), f"c:{letter}", route), letter == gold_letter
        value, parsed = read(segment, route)
        if value is None:
            return None, False
        if self.number is not None and value.key.startswith("n:"):
            if self.units and another_unit(plain_number(value.text), self.number):
                return None, False
            return value, value.key == number_key(self.number)  # two plain numbers: exact
        from math_verify import verify

        target = parsed or parse_math(segment)
        if not (self.parsed and target) or _unevaluated(self.parsed) != _unevaluated(target):
            return value, False
        return value, verify(self.parsed, target, timeout_seconds=TIMEOUT)


def _unevaluated(parsed: list[Any]) -> bool:
    """An infinite sum, product, integral or limit left as such. Against a closed form sympy may take longer than any
    timeout to decide (and a timeout that fires on a loaded machine only would make a rebuild differ): such a pair is
    never equal here."""
    import sympy

    unevaluated = (sympy.Sum, sympy.Product, sympy.Integral, sympy.Limit)
    return any(isinstance(p, sympy.Basic) and p.has(*unevaluated) for p in parsed)
