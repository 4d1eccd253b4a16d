"""An answer's final value, read the same way by the benchmark builder, its audit and the built-in detectors.

The sources' own anchors first: a GSM8K solution's last ``A:`` line, a debate agent's last ``\\boxed{}`` or "The
answer is", a JSON reply's ``answer`` field, an MMLU-style "The answer is (X)". `final_value` tries them all on any
answer (the built-ins and the audit do not know the source), and falls back to the last number stated.

Plain reading only: numbers as exact fractions, option letters, other values as normalised text. No math-verify and
no sympy here, so the built-ins read answers with ``make eval``'s install alone; the builder
(``fcb_datasets.realdata.grading``) decides the equivalence of LaTeX values with math-verify on top of these anchors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

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
    t = t.removeprefix("$").removesuffix("$").strip().rstrip(".").strip()
    return t.removeprefix("\\$").strip()  # an escaped dollar ("\\$18"): after the $...$ above, which it is not


_CHOICE = re.compile(r"\\text(?:bf|rm)?\{\s*\(?([A-E])\)?\s*\}|\(([A-E])\)|([A-E])\.?$")


def choice(text: str) -> str | None:
    """The option letter a multiple-choice value opens with ("\\text{C}", "\\textbf{(C)}\\ 34 dollars", "(C)",
    a bare "C"), or None. Math-verify reads "\\text{C}" as a string and "\\textbf{(C)} 34" as 34: neither meets
    the other."""
    found = _CHOICE.match(_unwrap(_unwrap(text)))
    return next(g for g in found.groups() if g) if found else None


def number_key(number: Fraction) -> str:
    return f"n:{number.numerator}/{number.denominator}" if number.denominator != 1 else f"n:{number.numerator}"


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
        rest = _stated_value(text[said[-1].end() :].split("\n")[0])
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


_LEADING_MATH = re.compile(r"(\$[^$]+\$|\\\(.+?\\\)|\\\[.+?\\\])(?=\s*(?:[,;.!]|$))")


def _stated_value(line: str) -> str:
    """What follows "the answer is" up to the end of its sentence ("5. The other agents got 6." -> "5"), or the
    delimited expression it opens with when a clause follows ("$\\frac{1}{4}$, which is the same as the second
    agent's" -> "$\\frac{1}{4}$"): what comes after is talk about other values, no part of this one."""
    rest = _SENTENCE_END.split(line.strip())[0]
    leading = _LEADING_MATH.match(rest)
    if leading and not _TWO_WAYS.search(rest[leading.end() :]):
        return leading.group(1)
    return _strip_tail(rest)


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
_ANSWER_FIELD = re.compile(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)"')


def reply_json(output: str) -> dict[str, Any] | None:
    """The JSON object of a ZeroEval reply, read leniently: strict JSON, then raw control characters allowed, then
    LaTeX backslashes that are no JSON escape kept as backslashes, then json_repair (where the datasets extra is
    installed; else the ``"answer": "..."`` field alone). None when there is none."""

    start = output.find("{")
    if start < 0:
        return None
    body = output[start : output.rfind("}") + 1]
    attempts: tuple[Callable[[], Any], ...] = (
        lambda: json.loads(body),
        lambda: json.loads(body, strict=False),  # raw control characters; escaped backslashes left as they are
        lambda: json.loads(_BAD_ESCAPE.sub(r"\\\\", body), strict=False),  # LaTeX's \\sqrt: no JSON escape
    )
    for attempt in attempts:
        try:
            found: dict[str, Any] = attempt()  # a body that opens with "{" parses to an object or not at all
        except ValueError:
            continue
        return found
    try:
        from json_repair import repair_json
    except ImportError:  # the datasets extra is not installed: a plain field match, enough for most replies
        field = _ANSWER_FIELD.search(output[start:])
        return {"answer": _unescape(field.group(1))} if field else None
    repaired = repair_json(output[start:], return_objects=True)
    if isinstance(repaired, list):
        repaired = next((x for x in repaired if isinstance(x, dict)), None)
    return repaired if isinstance(repaired, dict) else None


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_LATEX_COMMAND = re.compile(r"(?<!\\)\\(?=[A-Za-z]{2,})")


def _unescape(raw: str) -> str:
    try:
        return str(json.loads(f'"{raw}"', strict=False))
    except ValueError:
        return raw


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
    letter taken back in its sentence ("..., but this is not the correct answer") and not stated again after it
    ("...\nAnswer: C"), and an answer of "none of the
    above" stand in the list as words, so that a response holding them reads as two answers, never as one; a letter
    followed by its option's text "None of the above" ("The answer is (D) None of the above") is that letter. So does
    a response that runs on over the options ("The answer is ... I, B, J", "Now, let's summarize all the answers:"
    and two or more options listed)."""
    letters: list[str] = ["none"] if _NO_OPTION.search(text) else []  # "Answer: None of the above" states no option
    summary = _SUMMARY.search(text)
    if summary and len(set(_LISTED_OPTION.findall(text[summary.end() :]))) > 1:
        letters.append("run on")  # every option listed again after "let's summarize all the answers"
    taken_back: set[str] = set()
    for first, line in _LETTER.findall(text):
        sentence = line.split(". ")[0]
        listed = _LISTED.match(line)
        letters += [first, *re.findall(r"\(([A-J])\)", sentence), *_OPTION.findall(line)]
        letters += _LISTED_LETTER.findall(listed.group(0)) if listed else []
        if _TAKEN_BACK.search(_OPTION_NONE.sub("", sentence)):
            taken_back.add(first)
        else:
            taken_back.discard(first)  # "The answer is (C), but ... not the exact origin.\nAnswer: C": restated
    return letters + ["taken back"] * bool(taken_back)


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


# ------------------------------------------------------------------ any answer, source unknown

_FINAL_LINE = re.compile(r"^\s*(?:#{4}|A:|(?:\*\*)?(?:final )?answer(?:\*\*)?\s*:)\s*(.+?)\s*$", re.I | re.M)
_LAST_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_MARKUP = re.compile(r"\\boxed\{|\\text(?:bf|rm)?\{|\\\(|\\\)|\\\[|\\\]|[${}*\s]")
WHOLE = 300
"""An answer of at most this many characters with no anchor and no number is its own value (a short claim, as
TruthfulQA's answers are): two answers agree when their texts are the same but for case, spacing and markup."""


def final_value(text: str) -> Value | None:
    """An answer's final value when its source is not known, the first of: a JSON ``answer`` field; an option letter
    stated with MMLU's anchors ("The answer is (C)", "Answer: C"); a closing ``A:``, ``####`` or ``Answer:`` line;
    the last ``\\boxed{}`` or "the answer is" (`debate_final`); the last number stated; a short answer's whole
    text (`WHOLE`). ``key`` groups answers that state the same value: ``n:`` an exact number, ``c:`` a letter,
    ``t:`` other text, normalised. None: nothing read (never part of a consensus)."""
    if '"answer"' in text:
        found = reply_answer(text)
        if found is not None:
            return _value(found, "json")
    letter, _ = mmlu_letter(text, None)
    if letter is not None:
        return Value(letter.text, f"c:{letter.text}", "letter")
    lines = _FINAL_LINE.findall(text)
    if lines and _key(_strip_tail(lines[-1])):
        return _value(_strip_tail(lines[-1]), "final-line")
    stated = debate_final(text)
    if stated is not None and _key(stated[0]):
        return _value(*stated)
    numbers = _LAST_NUMBER.findall(text)
    if numbers:
        return _value(numbers[-1], "last-number")
    return _value(text, "whole") if len(text) <= WHOLE else None


def _value(segment: str, route: str) -> Value | None:
    key = _key(segment)
    return Value(segment.strip(), key, route) if key else None


def _key(segment: str) -> str:
    number = plain_number(segment)
    if number is not None:
        return number_key(number)
    letter = choice(segment)
    if letter is not None:
        return f"c:{letter}"
    plain = _MARKUP.sub("", segment).rstrip(".").lower()
    return f"t:{plain}" if plain else ""


@dataclass(frozen=True, slots=True)
class Votes:
    """How the final values of a set of answers fall: ``n`` answers, ``top`` on the most held value, ``distinct``
    values read, ``unread`` answers with none (each counts as an answer, never towards a consensus), ``anchored``
    answers read at an anchor (`ANCHORED`)."""

    n: int
    top: int
    distinct: int
    unread: int
    anchored: int = 0  # answers whose value stood at an anchor (not merely their last number or whole text)

    @property
    def top_share(self) -> float:
        return self.top / self.n if self.n else 0.0

    @property
    def unanimous(self) -> bool:
        return self.n > 0 and self.top == self.n

    @property
    def consensus(self) -> bool:
        """Some value is held by at least 60% of the answers (3 of 5 is exactly 60%)."""
        return self.n > 0 and 5 * self.top >= 3 * self.n


ANCHORED = frozenset({"json", "letter", "final-line", "boxed", "answer-is", "last-sentence"})
"""The routes of `final_value` that find a value where the answer states it as its answer; the others ("last-number",
"whole") take a guess: in free prose the last number or the whole sentence is seldom the claim."""


def votes(texts: list[str]) -> Votes:
    """The `Votes` of a set of answers, each read by `final_value`."""
    read = list(map(final_value, texts))
    counts: dict[str, int] = {}
    for value in read:
        if value is not None:
            counts[value.key] = counts.get(value.key, 0) + 1
    anchored = sum(v is not None and v.route in ANCHORED for v in read)
    return Votes(len(read), max(counts.values(), default=0), len(counts), read.count(None), anchored)
