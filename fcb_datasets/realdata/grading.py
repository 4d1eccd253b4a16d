"""Final values of answers, read the way each source writes them, and compared with math-verify.

Each source's own answer format says where the final value is: a GSM8K solution's last ``A:`` line, a DyLAN agent's
last ``\\boxed{}`` or "The answer is", a ZeroEval reply's JSON ``answer`` field, an MMLU-Pro response's "The answer is
(X)". Those anchors are found here; the value they hold is parsed and compared with the gold answer by math-verify
(HuggingFace's verifier for MATH-style answers: LaTeX, fractions, intervals, sets, units), never by string matching.
A plain decimal number is read without sympy (most values are), which gives the same result and is a hundred times
faster.

An answer whose final value cannot be read is `UNREADABLE`: never correct, never part of a consensus.

A `Value` crosses process boundaries (the builder grades files in worker processes) as plain strings: ``key`` groups
answers that state the same value (numbers as exact fractions, other expressions as sympy prints them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

TIMEOUT = 20
"""Seconds math-verify may take to parse or compare one value. Generous, so that a loaded machine reads every value
the same way (a rebuild must be byte-identical); no value read here comes near it."""
LONGEST = 400
"""A segment longer than this is no final value but a stretch of working: unreadable."""

_PLAIN = re.compile(r"[-+]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?")


@dataclass(frozen=True, slots=True)
class Value:
    """A final value as read: ``text`` as the answer wrote it, ``key`` its canonical form, ``route`` where it was."""

    text: str
    key: str
    route: str


def plain_number(text: str) -> Fraction | None:
    """A plain number, exactly: a decimal ("18", "-2.50", "10,000", "$18", "18.") or a fraction of two whole numbers
    ("3/4", "\\frac{3}{4}", "-\\dfrac{3}{4}"), bare, in ``$...$`` or in ``\\boxed{}``; None for anything else.
    math-verify reads these the same way, a hundred times slower."""
    t = _unwrap(text)
    if len(t) > 60:  # no final value; a run of digits that long is some model looping
        return None
    if _PLAIN.fullmatch(t) and any(c.isdigit() for c in t):
        return Fraction(t.replace(",", ""))
    found = _FRACTION.fullmatch(t)
    if found and int(found.group(3) or found.group(5)) != 0:
        top, bottom = int(found.group(2) or found.group(4)), int(found.group(3) or found.group(5))
        return Fraction(-top if found.group(1) else top, bottom)
    return None


_FRACTION = re.compile(r"(-)?\s*(?:\\[dt]?frac\{(\d+)\}\{(\d+)\}|(\d+)\s*/\s*(\d+))")


def _unwrap(text: str) -> str:
    t = text.strip()
    if t.startswith("\\boxed{") and t.endswith("}"):
        t = t[len("\\boxed{") : -1].strip()
    t = t.removeprefix("\\$").strip()
    t = t.removeprefix("$").removesuffix("$").strip().rstrip(".").strip()
    return t.removeprefix("\\$").strip()


_CHOICE = re.compile(r"\\text(?:bf|rm)?\{\s*\(?([A-E])\)?\s*\}|\(([A-E])\)|([A-E])\.?$")


def choice(text: str) -> str | None:
    """The option letter a multiple-choice value opens with ("\\text{C}", "\\textbf{(C)}\\ 34 dollars", "(C)",
    a bare "C"), or None. Math-verify reads "\\text{C}" as a string and "\\textbf{(C)} 34" as 34: neither meets
    the other."""
    found = _CHOICE.match(_unwrap(_unwrap(text)))
    return next(g for g in found.groups() if g) if found else None


def _number_key(number: Fraction) -> str:
    return f"n:{number.numerator}/{number.denominator}" if number.denominator != 1 else f"n:{number.numerator}"


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
        return _number_key(Fraction(int(expr.p), int(expr.q)))
    if isinstance(expr, sympy.Float):
        return _number_key(Fraction(str(expr)).limit_denominator(10**9))
    return f"e:{expr}"


def read_value(segment: str, route: str) -> Value | None:
    """The value a segment states, or None."""
    return read(segment, route)[0]


def read(segment: str, route: str) -> tuple[Value | None, list[Any]]:
    """The value a segment states and math-verify's parse of it ([] for a plain number, read without sympy)."""
    number = plain_number(segment)
    if number is not None:
        return Value(segment.strip(), _number_key(number), route), []
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
            return value, value.key == _number_key(self.number)  # two plain numbers: exact
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


# ------------------------------------------------------------------ the sources' own anchors

_ANSWER_IS = re.compile(r"[Tt]he (?:final )?answer is[:\s]*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|(?<=\$\$)(?=\S)")
_ENDING_VALUE = re.compile(
    r"(?:\bis|\bequals|\bequal to|=|:)\s*"
    r"(\$[^$]+\$|\\\(.+?\\\)|\\\[.+?\\\]|[-+]?\d[\d,]*(?:\.\d+)?(?:/\d+)?)\s*[.!]?\s*$"
)
_TWO_WAYS = re.compile(r"\bor\b|\beither\b", re.IGNORECASE)
_FILLER = r"(?:indeed|still|also|now|then|clearly|simply|exactly|approximately|about|roughly)\b"
_PROSE = re.compile(rf"(?:{_FILLER}\s*)*(?!{_FILLER})[A-Za-z]{{3,}}\b(?!\s*[=(\\^_{{])")
_STATED = re.compile(r"\b(?:is|are|equals|be)\b[^$.]{0,12}\$")
_CONDITION = re.compile(r"\s*(?:if|when|assuming|unless)\b", re.IGNORECASE)


def boxed(text: str) -> str | None:
    """The last ``\\boxed{...}`` (or ``\\fbox{...}``) with its braces matched, or None."""
    found = boxes(text)
    return found[-1] if found else None


def boxes(text: str) -> list[str]:
    """Every ``\\boxed{...}`` and ``\\fbox{...}`` of a text, braces matched, in order."""
    out = []
    for start in (m.start() for m in re.finditer(r"\\(?:boxed|fbox)\s*\{", text)):
        depth = 0
        for j in range(text.find("{", start), len(text)):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                out.append(text[start : j + 1])
                break
    return out


def debate_final(text: str) -> tuple[str, str] | None:
    """Where a DyLAN agent states its final value, as (segment, route): its last ``\\boxed{}`` or "The answer is",
    whichever comes last; failing both, a value that ends its last sentence after "is", "=" or ":" ("...the value
    of $b$ is $-5$."), the way the few-shot examples the agents were given end. None when there is none, or when
    the answer ends on two values ("either \\boxed{a} or \\boxed{b}", "the answer is 3 or 4")."""
    found = boxes(text)
    box = found[-1] if found else None
    box_at = text.rfind(box) if box else -1
    said = list(_ANSWER_IS.finditer(text))
    if said and said[-1].start() > box_at:
        rest = _strip_tail(text[said[-1].end() :].split("\n")[0])
        sentence = _SENTENCE_END.split(text[: said[-1].start()])[-1]
        if _TWO_WAYS.search(rest) or _CONDITION.match(sentence):
            return None  # "the answer is 3 or 4"; "If the question means ..., then the answer is 10."
        if not _says_nothing(rest):
            return rest, "answer-is"
    if box:
        tail = text[text.rfind("\n\n", 0, box_at) + 1 :]  # the paragraph the last box is in
        if len({" ".join(b.split()) for b in boxes(tail)}) > 1:
            return None
        return box, "boxed"
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    if not sentences or len(_STATED.findall(sentences[-1])) > 1:
        return None  # "the center is at $(2,1)$, and the semi-major axis is $\\sqrt{5}$": which is the answer?
    ending = _ENDING_VALUE.search(sentences[-1])
    return (ending.group(1), "last-sentence") if ending else None


def _says_nothing(rest: str) -> bool:
    """A "the answer is" that goes on in words, not a value: "the answer is somewhere between 2 and 3. Taking the
    inverse ..." A short rest stays a value ("the answer is odd"), as does "x = 5" or "\\frac{1}{2}"."""
    return len(rest.split()) > 3 and _PROSE.match(rest) is not None


def _strip_tail(segment: str) -> str:
    """'$\\frac{1}{2}$.' -> '$\\frac{1}{2}$': the sentence's full stop is no part of the value."""
    return segment.strip().rstrip(".").strip()


def gsm8k_final(solution: str) -> tuple[str, str] | None:
    """The number after a GSM8K solution's last ``A:`` (commas are thousands separators)."""
    at = solution.rfind("A:")
    if at < 0:
        return None
    line = solution[at + 2 :].split("\n")[0]
    return _strip_tail(line), "a-line"


# ------------------------------------------------------------------ ZeroEval's JSON replies

_BAD_ESCAPE = re.compile(r'\\(?!["\\/bfnrtu])')


def reply_json(output: str) -> dict[str, Any] | None:
    """The JSON object of a ZeroEval reply, read leniently: strict JSON, then raw control characters allowed, then
    LaTeX backslashes that are no JSON escape kept as backslashes, then json_repair. None when there is none."""
    import json

    start = output.find("{")
    if start < 0:
        return None
    body = output[start : output.rfind("}") + 1]
    attempts: tuple[Callable[[], Any], ...] = (
        lambda: json.loads(body),
        lambda: json.loads(body, strict=False),
        lambda: json.loads(_BAD_ESCAPE.sub(r"\\\\", body), strict=False),
    )
    for attempt in attempts:
        try:
            found = attempt()
        except ValueError:
            continue
        return found if isinstance(found, dict) else None
    from json_repair import repair_json

    repaired = repair_json(output[start:], return_objects=True)
    if isinstance(repaired, list):
        repaired = next((x for x in repaired if isinstance(x, dict)), None)
    return repaired if isinstance(repaired, dict) else None


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_LATEX_COMMAND = re.compile(r"(?<!\\)\\(?=[A-Za-z]{2,})")


def reply_answer(output: str) -> str | None:
    """The ``answer`` field of a ZeroEval reply, as a string, when it states one value; None when the reply has no
    answer, or an answer of several values ({"blue": 4, "red": 6}, "4 blue and 6 red", "3 or 4"): such an answer
    is no single value to compare with the gold."""
    found = reply_json(output)
    answer = found.get("answer") if found else None
    if isinstance(answer, str) and any(c in answer for c in "\b\f\t\r\n"):
        # "\frac", "\boxed", "\times" written with one backslash are JSON escapes (form feed, backspace, tab):
        # read them again as the LaTeX they are
        again = reply_json(_LATEX_COMMAND.sub(r"\\\\", output))
        answer = again.get("answer") if again else answer
    if isinstance(answer, bool) or not isinstance(answer, (str, int, float)):
        return None
    text = str(answer).strip()
    if not text or _TWO_WAYS.search(text):
        return None
    if "\\" not in text and len(_NUMBER.findall(text)) > 1:  # LaTeX (\frac{3}{4}) holds several numbers in one value
        return None
    return text


# ------------------------------------------------------------------ MMLU-Pro's letters

_ANCHOR = (
    r"(?:answer (?:is|would be|should be)|[aA]nswer:"
    r"|(?:closest|correct|best|right|accurate|likely) (?:option|choice|statement|match|diagnosis) (?:is|would be))"
)
_LETTER = re.compile(
    rf"{_ANCHOR}\s*:?\s*(?:(?:\.\.\.|…)\s*)?(?:\*\*)?\(?([A-J])(?![A-Za-z])\)?"
    rf"((?:(?!{_ANCHOR})[^\n])*)"  # the rest of the line, up to the next anchor
)
# "The answer is ... I, B, J, G": letters listed after the first, by commas, "or", "and" or slashes
_LISTED = re.compile(r"^(?:\s*(?:,|;|/|\bor\b|\band\b)\s*\(?[A-J](?![A-Za-z])\)?)+")
_LISTED_LETTER = re.compile(r"(?<![A-Za-z])([A-J])(?![A-Za-z])")
# "The answer is (J).\n\nNow, let's summarize all the answers:\nA. $85.10 ...\nB. ...": a run-on over the options
_SUMMARY = re.compile(r"summari[sz]e (?:all )?(?:of )?(?:the )?answers|总结", re.IGNORECASE)
_LISTED_OPTION = re.compile(r"(?<![\w.])([A-J])\.\s+\S")
_OPTION = re.compile(r"(?<![\w.])([A-J])\.\s+[A-Z]")  # "A. Rely on force. B. Undermine the army": an option listed
# "The closest option is (E), but this is not the correct answer": a letter named and taken back
_TAKEN_BACK = re.compile(
    r"\bbut\b[^.]*\bnot\b|\bnot (?:the )?(?:correct|right|exact|accurate)\b|\bnone of\b", re.IGNORECASE
)
# "The answer is (D) None of the above": the text of the option named, not a choice taken back
_OPTION_NONE = re.compile(r"^[\s).:*]*none of the (?:above|options|choices)\b", re.IGNORECASE)
_NO_OPTION = re.compile(rf"{_ANCHOR}\s*:?\s*(?:\*\*)?(?:none|not (?:listed|given|among|one of))\b", re.IGNORECASE)


def stated_letters(text: str) -> list[str]:
    """The letters a response states with MMLU-Pro's own anchors ("the answer is (X)", "Answer: X", and "the
    answer would be (X)", in bold or not) or by naming its choice ("the closest option is (X)", "the correct
    statement is (X)"), in order, with any it names alongside in the same sentence ("(C) and (D)", "(I) Bill
    Clinton and (J) Margaret Thatcher") or lists after it on its line ("A. Rely on force. B. Undermine ..."). A
    letter taken back in its sentence ("..., but this is not the correct answer") and an answer of "none of the
    above" stand in the list as words, so that a response holding them reads as two answers, never as one; a letter
    followed by its option's text "None of the above" ("The answer is (D) None of the above") is that letter. So does
    a response that runs on over the options ("The answer is ... I, B, J", "Now, let's summarize all the answers:"
    and two or more options listed)."""
    letters: list[str] = ["none"] if _NO_OPTION.search(text) else []  # "Answer: None of the above" states no option
    summary = _SUMMARY.search(text)
    if summary and len(set(_LISTED_OPTION.findall(text[summary.end() :]))) > 1:
        letters.append("run on")  # every option listed again after "let's summarize all the answers"
    for first, line in _LETTER.findall(text):
        sentence = line.split(". ")[0]
        listed = _LISTED.match(line)
        letters += [first, *re.findall(r"\(([A-J])\)", sentence), *_OPTION.findall(line)]
        letters += _LISTED_LETTER.findall(listed.group(0)) if listed else []
        if _TAKEN_BACK.search(_OPTION_NONE.sub("", sentence)):
            letters.append("taken back")
    return letters


def mmlu_letter(text: str, pred: str | None) -> tuple[Value | None, str]:
    """An MMLU-Pro response's letter and how it was read.

    The response must state one letter (one or more times) with the source's anchors; upstream's ``pred`` is then
    checked against it. A response that states two different letters, or none (upstream's ``pred`` may then hold
    a letter its fallback guessed), is unreadable. Returns (value, how): how is ``agrees`` (the text's letter and
    ``pred`` agree), ``pred-none`` (the text states a letter, upstream found none), ``pred-differs``, ``conflicting``,
    ``none-stated``.
    """
    letters = stated_letters(text)
    if not any(len(x) == 1 for x in letters):  # none, or only "none of the above"
        return None, "none-stated"
    if len(set(letters)) > 1:
        return None, "conflicting"
    how = "agrees" if pred == letters[0] else ("pred-none" if pred is None else "pred-differs")
    return Value(letters[0], f"s:{letters[0]}", "letter"), how


_NAMES_OPTION = re.compile(r"\([A-J]\)|\*\*[A-J]\b|\b[A-J]\)|\b(?:answer|option|choice|statement)\b", re.IGNORECASE)


def names_no_option(text: str) -> bool:
    """An MMLU-Pro response whose end names no option and speaks of no answer (cut off, or looping on one
    sentence): what the anchors found nothing in, no reader finds a letter in either. "The closest option is (C)"
    or "the accurate statement is: D." names one."""
    return _NAMES_OPTION.search(text[-400:]) is None
