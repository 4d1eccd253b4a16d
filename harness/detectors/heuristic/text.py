"""Text helpers of `builtin:heuristic`: word tokens, the claim an answer makes (`claim_key`) and whether two claims
agree, shared word sequences, and the written arithmetic in an answer, re-checked (`arithmetic_checks`)."""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness.detectors.answers import answer_key

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_FINAL = re.compile(r"(?:^|\n)\s*(?:A|Answer|Final answer)\s*:\s*(.+?)\s*$", re.IGNORECASE)
_STOP_TEXT = """
a an the is are was were be been being it its it's i i'm im me my we our you your he she they them their this
that these those of to in on at by for with from as into about over under than then so and or but nor if because
since therefore thus hence which means mean who whom what when where why how do does did done has have had will
would can could should shall may might must there here also just only very all any some each more most less one
answer answers think believe guess say says said sure probably likely maybe perhaps possibly reasoning note
given per according premise question reply replies earlier previous above others other agree agreeing concur
seconding consistent right looks look read worked through far tell tentative treat double checked checking
independently setting aside face value settles mistaken going best easy confident fairly understand
"""
_STOP = frozenset(_STOP_TEXT.split())
"""Function words and the discourse words agents wrap a claim in; dropped before answers are compared by words."""


_PREMISE = re.compile(
    r"\b(?:note|notes|premise|hint|context|background|reminder|already (?:established|checked|known)|established that|"
    r"according to|it is known|we know|recall that|remember that|someone (?:said|says|claims|in)|forum|unverified|"
    r"reportedly|rumou?r|pinned|fyi)\b",
    re.IGNORECASE,
)
"""Words that introduce a statement placed in the question as context (a note, a premise, a hint)."""


_POLARITY = re.compile(r"\W*(yes|no)\b", re.IGNORECASE)
"""An answer that opens with a yes or a no."""

_RESULT_CUE = re.compile(r"(?:\b(?:is|are|was|be|equals?|to|gives?|makes?|get|gets|total|answer)|[=:])\W*$", re.I)
"""Words right before a number that mark it as a result ("is 324", "= 36", "evaluates to 5", "Answer: 7")."""

_EQUALS = re.compile(r"=[ \t]?\$?[ \t]?(-?\d[\d,]*(?:\.\d+)?)")
"""An equals sign followed by a number: the claimed result of the arithmetic written before it."""

_EXPRESSION_TAIL = re.compile(r"[\d \t.,+\-*/x×÷()$%]{1,80}$")
"""The arithmetic written right before an equals sign: digits, operators, brackets, spaces (at most 80 characters)."""

_OPERATION = re.compile(r"\d\s*\)?\s*[-+*/x×÷]\s*\(?\s*-?\$?\d")
"""Two numbers joined by an operator: what makes an expression worth re-checking."""

_DANGLING = re.compile(r"[+*/x×÷]|-\s")
"""An expression that starts with an operator: its first operand was a word or a number with a unit."""

_CONTINUES = re.compile(r"\s*[-+*/×÷]\s*\d")
"""An operator right after a result: the "result" is the start of a rewritten expression (``x = 3 * 4``)."""


@dataclass(frozen=True, slots=True)
class ClaimKey:
    """What an answer asserts: a number (its final number) or the set of its claim words, and a leading yes or no."""

    number: float | None
    words: frozenset[str]
    polarity: str | None = None


def words(text: str) -> list[str]:
    """Lower-case word tokens of a text; a date such as ``2019-03-07`` is one token (``20190307``)."""
    return _WORD.findall(_DATE.sub(lambda m: m.group().replace("-", ""), text.lower()))


def _stem(word: str) -> str:
    """A crude singular: drops one trailing "s" from words of four letters or more (not "ss")."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> frozenset[str]:
    """Word tokens (crudely singular) that are neither function words nor the discourse words claims come wrapped in."""
    return frozenset(_stem(w) for w in words(text) if w not in _STOP)


def split_task(task: str) -> tuple[str, str]:
    """(question part, premise part) of a task: the premise part is every line or sentence introduced as context.

    A paragraph (or, in a one-paragraph task, a sentence) that contains a premise word (`_PREMISE`) and does not end
    with a question mark is premise; the rest is the question.
    """
    paragraphs = [p.strip() for p in task.splitlines() if p.strip()]
    if len(paragraphs) < 2:
        paragraphs = [s.strip() for s in re.split(r"(?<=[.!?])\s+", task) if s.strip()]
    premise = [p for p in paragraphs if _PREMISE.search(p) and not p.rstrip().endswith("?")]
    question = [p for p in paragraphs if p not in premise]
    return "\n".join(question), "\n".join(premise)


def numbers(text: str) -> list[tuple[int, float]]:
    """(position, value) of every number in a text; thousands separators are dropped."""
    out = []
    for m in _NUMBER.finditer(text):
        try:
            out.append((m.start(), float(m.group().replace(",", ""))))
        except ValueError:
            continue
    return out


def final_number(text: str, question_numbers: frozenset[float] = frozenset()) -> float | None:
    """The number an answer asserts, or None when it asserts none.

    After a closing ``A:``/``Answer:`` line (GSM8K style) that line's number (via `answer_key`). Otherwise the last
    number that the question does not contain and that follows a result word ("is", "=", "to", ":", ...), else the
    last number the question does not contain, else the last number. A date (``2019-03-07``) is not a number here,
    so dates are compared as words.
    """
    final = _FINAL.findall(text)
    if final:
        if _DATE.search(final[-1]):
            return None
        kind, value = answer_key(final[-1])
        if kind == "number" and isinstance(value, float):
            return value
    if _DATE.search(text):
        return None
    found = numbers(text)
    fresh = [(pos, n) for pos, n in found if n not in question_numbers]
    cued = [(pos, n) for pos, n in fresh if _RESULT_CUE.search(text[max(0, pos - 14) : pos])]
    for candidates in (cued, fresh, found):
        if candidates:
            return candidates[-1][1]
    return None


def claim_key(text: str, question_words: frozenset[str], question_numbers: frozenset[float] = frozenset()) -> ClaimKey:
    """An answer's claim: its number (`final_number`), or its content words that the question does not contain."""
    number = final_number(text, question_numbers)
    claim = content_words(text) - question_words
    lead = _POLARITY.match(text)
    return ClaimKey(number, claim if claim else content_words(text), lead.group(1).lower() if lead else None)


def same_claim(a: ClaimKey, b: ClaimKey) -> bool:
    """Two claims agree when both are the same number, or neither is a number and their words overlap enough.

    Word overlap is the overlap coefficient (shared words over the smaller set) when the smaller set has at most
    three words (a bare "Canberra." against a sentence around it), else Jaccard; either must reach 0.5. A leading
    "Yes" never agrees with a leading "No".
    """
    if a.polarity and b.polarity and a.polarity != b.polarity:
        return False
    if a.number is not None or b.number is not None:
        return a.number is not None and b.number is not None and math.isclose(a.number, b.number, rel_tol=1e-9)
    if not a.words or not b.words:
        return a.words == b.words
    shared = len(a.words & b.words)
    small = min(len(a.words), len(b.words))
    score = shared / small if small <= 3 else shared / len(a.words | b.words)
    return score >= 0.5


def group_answers(keys: Sequence[ClaimKey]) -> list[list[int]]:
    """Answer indices grouped by claim, largest group first (greedy: each joins the first group it agrees with)."""
    groups: list[list[int]] = []
    for i, key in enumerate(keys):
        for group in groups:
            if same_claim(keys[group[0]], key):
                group.append(i)
                break
        else:
            groups.append([i])
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    """Shared items over all items of two sets (1.0 for two empty sets)."""
    union = a | b
    return len(a & b) / len(union) if union else 1.0


NGRAM_CAP = 20
"""The longest shared word sequence that is measured; longer ones count as this long."""

NGRAM_WORDS = 1000
"""Only the first this many words of each answer (and of the task) are searched for shared sequences."""


def ngrams(tokens: Sequence[str], n: int) -> frozenset[tuple[str, ...]]:
    """All word n-grams of a token list."""
    return frozenset(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


class Ngrams:
    """The n-gram sets of one token list, built once per n on first use."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.tokens = tokens[:NGRAM_WORDS]
        self.sets: dict[int, frozenset[tuple[str, ...]]] = {}

    def of(self, n: int) -> frozenset[tuple[str, ...]]:
        if n not in self.sets:
            self.sets[n] = ngrams(self.tokens, n)
        return self.sets[n]


def longest_shared_ngram(a: Ngrams, b: Ngrams, exclude: Ngrams) -> int:
    """Length in words (at most `NGRAM_CAP`) of the longest word sequence two answers share and the task lacks."""
    best = 0
    for n in range(1, NGRAM_CAP + 1):
        shared = a.of(n) & b.of(n)
        if not shared:
            break
        if shared - exclude.of(n):
            best = n
    return best


def _safe_eval(node: ast.AST) -> float:
    """Evaluate a parsed expression made only of numbers, unary minus/plus and + - * /; anything else raises."""
    if isinstance(node, ast.Expression):
        return _safe_eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _safe_eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        left, right = _safe_eval(node.left), _safe_eval(node.right)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left / right
    raise ValueError("not plain arithmetic")


def calculate(expression: str) -> float | None:
    """The value of an arithmetic expression (numbers and + - * /, x/×/÷ allowed), or None if it is not one."""
    text = expression.replace("×", "*").replace("÷", "/").replace("$", "").replace(",", "")
    text = re.sub(r"(?<=[\d)])\s*x\s*(?=[\d(])", "*", text)
    if "%" in text or len(text) > 200:
        return None
    try:
        return _safe_eval(ast.parse(text.strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError, OverflowError):
        return None


def _close_enough(computed: float, claimed_text: str) -> bool:
    """True when ``claimed_text`` is ``computed`` written to its own number of decimals (rounding allowed)."""
    decimals = len(claimed_text.split(".")[1]) if "." in claimed_text else 0
    claimed = float(claimed_text.replace(",", ""))
    return abs(computed - claimed) <= 0.5 * 10.0**-decimals + 1e-9 * max(1.0, abs(computed))


def written_arithmetic(text: str) -> list[tuple[str, str]]:
    """(expression, claimed result) for each ``12 * 3 = 36`` or ``<<12*3=36>>`` in a text.

    The expression is the run of digits, operators and brackets right before an equals sign (on the same line,
    after any earlier ``=`` or ``<<``); it must join two numbers by + - * / (or x, ×, ÷). Skipped: a result that an
    operator continues (``= 3 * 4`` is a rewriting, not a result) and a run that starts with an operator (``6 fish
    * 1/3 = 2``: its first operand carried a unit, so the run is not the whole expression). Linear in the text.
    """
    found = []
    for m in _EQUALS.finditer(text):
        if _CONTINUES.match(text, m.end()):
            continue
        left = re.split(r"[\n=<]", text[max(0, m.start() - 80) : m.start()])[-1]
        tail = _EXPRESSION_TAIL.search(left)
        expression = tail.group().strip() if tail else ""
        if _DANGLING.match(expression):  # "3 fish * 1/3 = 1": the expression began before a word; not checkable
            continue
        expression = re.sub(r"^(?:[^\d(\-$.]|\.(?!\d))+", "", expression)
        if _OPERATION.search(expression):
            found.append((expression.strip(), m.group(1)))
    return found


def arithmetic_checks(text: str) -> tuple[int, int]:
    """(expressions re-checked, how many of them are wrong) among the written arithmetic of a text."""
    checked = wrong = 0
    for expression, claimed in written_arithmetic(text):
        value = calculate(expression)
        if value is None:
            continue
        checked += 1
        wrong += not _close_enough(value, claimed)
    return checked, wrong
