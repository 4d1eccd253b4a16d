"""``builtin:heuristic``: a false-consensus detector that reads structure only, never world knowledge.

`features` turns a request (task, answers, optional evidence) into named numbers; `Heuristic` applies a hand-set rule
to them. `builtin:learned` (``learned.py``) fits a model on the same `features`. Everything here is computed from the
request alone: no labels, no network, no model, no randomness.
"""

from __future__ import annotations

import ast
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from harness.detectors.answers import agreement_share, answer_key
from harness.types import Prediction, Request, Risk

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

_COPY = re.compile(
    r"\b(?:i agree|agree(?:ing)? with|as (?:the )?others? (?:said|say|noted|mentioned|have said)|as (?:was )?(?:said|"
    r"stated|mentioned) (?:above|before|earlier)|(?:previous|earlier|above|prior|first|other) (?:answer|answers|reply|"
    r"replies|agent|agents|response|responses)|same as|concur|second(?:ing)? (?:that|the|this)|echo(?:ing)?|"
    r"what the others said|like the others|the others? (?:are|is) right)\b",
    re.IGNORECASE,
)
"""Phrases by which an answer says it follows other answers."""

_NOTE_MENTION = re.compile(
    r"\b(?:the note|per the|as (?:stated|given|noted) in|the premise|the hint|the context|the question says|"
    r"as the question|as established|already established|as given)\b",
    re.IGNORECASE,
)
"""Phrases by which an answer leans on something stated in the question."""

_PREMISE = re.compile(
    r"\b(?:note|notes|premise|hint|context|background|reminder|already (?:established|checked|known)|established that|"
    r"according to|it is known|we know|recall that|remember that|someone (?:said|says|claims|in)|forum|unverified|"
    r"reportedly|rumou?r|pinned|fyi)\b",
    re.IGNORECASE,
)
"""Words that introduce a statement placed in the question as context (a note, a premise, a hint)."""

_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|might|i think|i believe|i guess|my (?:best )?guess|not sure|unsure|"
    r"not certain|uncertain|tentative|as far as i (?:can tell|know)|if i recall|i'm not|could be|likely|seems|"
    r"appears to|as i understand it|i suspect)\b",
    re.IGNORECASE,
)
"""Words by which an answer signals doubt."""

_DISSENT = re.compile(
    r"\b(?:however|actually|in fact|mistaken|incorrect|wrong|disagree|not correct|not true|misconception|myth|"
    r"contrary|setting (?:that|the note|it) aside|on closer|looks off|is false|no,|there is no|does not|doesn't|"
    r"isn't|aren't|cannot|never)\b",
    re.IGNORECASE,
)
"""Words by which an answer contradicts something: another answer, the question's note, or a common belief."""

_CERTAIN = re.compile(r"\b(?:definitely|certainly|obviously|clearly|of course|easy|surely|no doubt|100%)\b", re.I)
"""Words by which an answer claims certainty without giving a reason."""

_REASON = re.compile(r"\b(?:because|since|therefore|thus|hence|so|which means|so that|as a result|given that)\b", re.I)
"""Words that introduce a reason: an answer that argues rather than asserts."""

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
class _Key:
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


def _numbers(text: str) -> list[tuple[int, float]]:
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
    found = _numbers(text)
    fresh = [(pos, n) for pos, n in found if n not in question_numbers]
    cued = [(pos, n) for pos, n in fresh if _RESULT_CUE.search(text[max(0, pos - 14) : pos])]
    for candidates in (cued, fresh, found):
        if candidates:
            return candidates[-1][1]
    return None


def claim_key(text: str, question_words: frozenset[str], question_numbers: frozenset[float] = frozenset()) -> _Key:
    """An answer's claim: its number (`final_number`), or its content words that the question does not contain."""
    number = final_number(text, question_numbers)
    claim = content_words(text) - question_words
    lead = _POLARITY.match(text)
    return _Key(number, claim if claim else content_words(text), lead.group(1).lower() if lead else None)


def same_claim(a: _Key, b: _Key) -> bool:
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


def group_answers(keys: Sequence[_Key]) -> list[list[int]]:
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


class _Ngrams:
    """The n-gram sets of one token list, built once per n on first use."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.tokens = tokens[:NGRAM_WORDS]
        self.sets: dict[int, frozenset[tuple[str, ...]]] = {}

    def of(self, n: int) -> frozenset[tuple[str, ...]]:
        if n not in self.sets:
            self.sets[n] = ngrams(self.tokens, n)
        return self.sets[n]


def longest_shared_ngram(a: _Ngrams, b: _Ngrams, exclude: _Ngrams) -> int:
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


def evaluate(expression: str) -> float | None:
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
        value = evaluate(expression)
        if value is None:
            continue
        checked += 1
        wrong += not _close_enough(value, claimed)
    return checked, wrong


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _support(key: _Key, text: str, text_words: frozenset[str]) -> float:
    """How much of a claim a text states, in [0, 1].

    A number claim: 1.0 when the text holds that number, else 0. A word claim: shared claim words over the smaller of
    2 and the claim's size, capped at 1 (two shared words, or the one word of a one-word claim, is full support).
    """
    if key.number is not None:
        return float(any(math.isclose(key.number, n, rel_tol=1e-9) for _, n in _numbers(text)))
    if not key.words:
        return 0.0
    return min(1.0, len(key.words & text_words) / min(2, len(key.words)))


@dataclass(slots=True)
class _View:
    """The pieces of a request that the feature functions share."""

    task: str
    question: str
    premise: str
    texts: list[str]
    keys: list[_Key]
    groups: list[list[int]]
    evidence: str

    @property
    def majority(self) -> list[int]:
        return self.groups[0]

    @property
    def minority(self) -> list[int]:
        return [i for g in self.groups[1:] for i in g]


def _view(request: Request) -> _View:
    task = str(request.get("task", ""))
    texts = [str(a["text"]) for a in request["answers"]]
    if not texts:
        raise ValueError("a request needs at least one answer")
    question, premise = split_task(task)
    question_words = content_words(question)
    question_numbers = frozenset(n for _, n in _numbers(question))
    keys = [claim_key(t, question_words, question_numbers) for t in texts]
    evidence = "\n".join(request.get("evidence") or [])
    return _View(task, question, premise, texts, keys, group_answers(keys), evidence)


def _core(v: _View, group: list[int]) -> _Key:
    """The group's claim as its most concise member states it: the member key with the fewest words."""
    return min((v.keys[i] for i in group), key=lambda k: len(k.words))


def agreement_features(v: _View) -> dict[str, float]:
    """How strongly the answers agree on one claim.

    - ``agreement``: share of answers in the largest group of same-claim answers (`group_answers`).
    - ``agreement_builtin``: the same share as `builtin:agreement` computes it (last number or all content words).
    - ``n_answers``, ``n_groups``: answers, and distinct claims among them; ``distinct_ratio`` = n_groups / n_answers.
    - ``largest_group``: answers in the largest group; ``second_share``: share of the second-largest group.
    - ``unanimous``: 1 when every answer makes the same claim; ``has_majority``: 1 when the largest group is >= 60%.
    - ``one_dissenter``: 1 when exactly one answer is outside the largest group (and that group has 2 or more).
    - ``numeric_share``: share of answers whose claim is a number.
    """
    n = len(v.texts)
    top = len(v.majority)
    second = len(v.groups[1]) if len(v.groups) > 1 else 0
    return {
        "agreement": top / n,
        "agreement_builtin": agreement_share(v.texts),
        "n_answers": float(n),
        "n_groups": float(len(v.groups)),
        "distinct_ratio": len(v.groups) / n,
        "largest_group": float(top),
        "second_share": second / n,
        "unanimous": float(len(v.groups) == 1),
        "has_majority": float(top * 5 >= n * 3),
        "one_dissenter": float(n - top == 1 and top >= 2),
        "numeric_share": _share([k.number is not None for k in v.keys]),
    }


def similarity_features(v: _View) -> dict[str, float]:
    """How alike the answers' texts are, and signs that one was copied from another.

    - ``mean_jaccard`` / ``max_jaccard``: token-set Jaccard similarity over all pairs of answers (all words).
    - ``near_duplicate_share``: share of answers whose word set is >= 0.9 Jaccard-similar to another answer's.
    - ``max_shared_ngram``: longest word sequence (capped at 20) two answers share that the task does not contain.
    - ``shared_ngram_ratio``: that length over the shorter of the two answers' lengths (1.0: one contains the other).
    - ``copy_phrase_share``: share of answers that say they follow others ("I agree with the previous answer").
    - ``later_copy_share``: share of the answers after the first that use a copy phrase and repeat an earlier claim.
    """
    toks = [words(t) for t in v.texts]
    sets = [set(t) for t in toks]
    grams = [_Ngrams(t) for t in toks]
    task_grams = _Ngrams(words(v.task))
    sims: list[float] = []
    dup = [False] * len(toks)
    best_ngram, best_ratio = 0, 0.0
    for i, j in combinations(range(len(toks)), 2):
        s = jaccard(sets[i], sets[j])
        sims.append(s)
        if s >= 0.9:
            dup[i] = dup[j] = True
        g = longest_shared_ngram(grams[i], grams[j], task_grams)
        best_ngram = max(best_ngram, g)
        best_ratio = max(best_ratio, g / max(1, min(len(grams[i].tokens), len(grams[j].tokens))))
    copy = [bool(_COPY.search(t)) for t in v.texts]
    later = [copy[i] and any(same_claim(v.keys[i], v.keys[j]) for j in range(i)) for i in range(1, len(v.texts))]
    return {
        "mean_jaccard": _mean(sims),
        "max_jaccard": max(sims, default=0.0),
        "near_duplicate_share": _share(dup),
        "max_shared_ngram": float(best_ngram),
        "shared_ngram_ratio": best_ratio,
        "copy_phrase_share": _share(copy),
        "later_copy_share": _share(later),
    }


def premise_features(v: _View) -> dict[str, float]:
    """Whether the question carries a note or premise and whether the answers repeat it.

    - ``has_premise``: 1 when part of the task is introduced as context (a note, hint, "already established", ...).
    - ``premise_majority_support``: how much of the majority's claim the premise states (`_support`), 0 without one.
    - ``premise_minority_support``: the same for the best-supported claim outside the majority.
    - ``note_mention_share``: share of answers that point at the question's note ("per the note", "as given").
    """
    mentions = _share([bool(_NOTE_MENTION.search(t)) for t in v.texts])
    if not v.premise:
        return {
            "has_premise": 0.0,
            "premise_majority_support": 0.0,
            "premise_minority_support": 0.0,
            "note_mention_share": mentions,
        }
    pw = content_words(v.premise)
    minority = [_support(_core(v, g), v.premise, pw) for g in v.groups[1:]]
    return {
        "has_premise": 1.0,
        "premise_majority_support": _support(_core(v, v.majority), v.premise, pw),
        "premise_minority_support": max(minority, default=0.0),
        "note_mention_share": mentions,
    }


def stance_features(v: _View) -> dict[str, float]:
    """Hedged, dissenting and reasoned answers, in the majority and outside it.

    - ``hedge_share`` / ``majority_hedge_share`` / ``minority_hedge_share``: answers with doubt words, over all
      answers, over the majority, over the rest (0 when there is no rest).
    - ``dissent_share`` / ``minority_dissent``: answers that contradict something (however, mistaken, myth, ...);
      ``minority_dissent`` is 1 when some answer outside the majority does.
    - ``reason_share`` / ``majority_reason_share`` / ``minority_reason_share``: answers that give a reason (because,
      since, so, ...), over all answers, the majority and the rest; long answers (over 40 words: worked solutions)
      count as reasoned.
    - ``first_hedged``: 1 when the first answer (the one later answers may have read) signals doubt.
    - ``certainty_share``: answers that claim certainty (definitely, obviously, easy, ...).
    - ``bare_share``: answers of at most six words that give no reason (a bare claim).
    """
    hedge = [bool(_HEDGE.search(t)) for t in v.texts]
    lengths = [len(words(t)) for t in v.texts]
    dissent = [bool(_DISSENT.search(t)) for t in v.texts]
    reason = [bool(_REASON.search(t)) or n > 40 for t, n in zip(v.texts, lengths, strict=True)]
    maj, mino = v.majority, v.minority
    return {
        "hedge_share": _share(hedge),
        "majority_hedge_share": _share([hedge[i] for i in maj]),
        "minority_hedge_share": _share([hedge[i] for i in mino]),
        "first_hedged": float(hedge[0]),
        "dissent_share": _share(dissent),
        "minority_dissent": float(any(dissent[i] for i in mino)),
        "reason_share": _share(reason),
        "majority_reason_share": _share([reason[i] for i in maj]),
        "minority_reason_share": _share([reason[i] for i in mino]),
        "certainty_share": _share([bool(_CERTAIN.search(t)) for t in v.texts]),
        "bare_share": _share([n <= 6 and not r for n, r in zip(lengths, reason, strict=True)]),
    }


def evidence_features(v: _View) -> dict[str, float]:
    """Whether the evidence (when there is some) states the majority's claim or another one.

    - ``has_evidence``: 1 when the request carries evidence.
    - ``evidence_majority_support``: how much of the majority's claim the evidence states (`_support`).
    - ``evidence_minority_support``: the same for the best-supported claim outside the majority.
    - ``evidence_margin``: majority support minus minority support (negative: the evidence sides with a dissenter).
    - ``evidence_silent``: 1 when the majority's claim is in words (not a number or a date) and the evidence states
      none of them. (Evidence for a numeric question usually gives a method, not the result, so silence about a
      number means little.)
    """
    if not v.evidence:
        return {
            "has_evidence": 0.0,
            "evidence_majority_support": 0.0,
            "evidence_minority_support": 0.0,
            "evidence_margin": 0.0,
            "evidence_silent": 0.0,
        }
    ew = content_words(v.evidence)
    core = _core(v, v.majority)
    major = _support(core, v.evidence, ew)
    minor = max((_support(_core(v, g), v.evidence, ew) for g in v.groups[1:]), default=0.0)
    return {
        "has_evidence": 1.0,
        "evidence_majority_support": major,
        "evidence_minority_support": minor,
        "evidence_margin": major - minor,
        "evidence_silent": float(major == 0 and core.number is None and any(w.isalpha() for w in core.words)),
    }


def arithmetic_features(v: _View) -> dict[str, float]:
    """Arithmetic written out in the answers (``12 * 3 = 36``, ``<<12*3=36>>``), re-evaluated.

    - ``arith_checked``: expressions re-evaluated over all answers; ``arith_mismatches``: how many were wrong.
    - ``arith_wrong_share``: share of answers with at least one wrong expression.
    - ``majority_arith_wrong``: share of the majority's answers with a wrong expression.
    - ``minority_arith_wrong``: the same outside the majority.
    """
    checks = [arithmetic_checks(t) for t in v.texts]
    wrong = [w > 0 for _, w in checks]
    return {
        "arith_checked": float(sum(c for c, _ in checks)),
        "arith_mismatches": float(sum(w for _, w in checks)),
        "arith_wrong_share": _share(wrong),
        "majority_arith_wrong": _share([wrong[i] for i in v.majority]),
        "minority_arith_wrong": _share([wrong[i] for i in v.minority]),
    }


def length_features(v: _View) -> dict[str, float]:
    """Answer lengths in words.

    - ``mean_words``: mean length; ``length_cv``: standard deviation over mean (0: all the same length).
    - ``minority_length_ratio``: mean length outside the majority over mean length inside it (0 when unanimous).
    """
    lengths = [len(words(t)) for t in v.texts]
    mean = _mean(lengths)
    maj = _mean([lengths[i] for i in v.majority])
    mino = _mean([lengths[i] for i in v.minority])
    return {
        "mean_words": mean,
        "length_cv": statistics.pstdev(lengths) / mean if mean else 0.0,
        "minority_length_ratio": mino / maj if maj and v.minority else 0.0,
    }


FEATURE_GROUPS = (
    agreement_features,
    similarity_features,
    premise_features,
    stance_features,
    evidence_features,
    arithmetic_features,
    length_features,
)


def features(request: Request) -> dict[str, float]:
    """Every structural feature of a request, by name; always the same names in the same order."""
    view = _view(request)
    out: dict[str, float] = {}
    for group in FEATURE_GROUPS:
        out.update(group(view))
    return out


def signals(f: dict[str, float]) -> dict[str, bool]:
    """The yes/no readings of the features that the hand-set rule (`rule`) combines."""
    return {
        "no_majority": f["has_majority"] == 0,
        "evidence_for": f["has_evidence"] > 0 and f["evidence_margin"] > 0,
        "evidence_against": f["has_evidence"] > 0 and (f["evidence_margin"] < 0 or f["evidence_silent"] > 0),
        "arithmetic_slip": f["majority_arith_wrong"] > 0,
        "dissenter_slip": f["minority_arith_wrong"] > 0 and f["majority_arith_wrong"] == 0,
        "copying": f["later_copy_share"] > 0 or f["copy_phrase_share"] >= 0.25,
        "premise_echo": f["has_premise"] > 0 and (f["premise_majority_support"] >= 0.5 or f["note_mention_share"] > 0),
        "dissent": f["unanimous"] == 0,
        "rebuttal": f["minority_dissent"] > 0,
        "hedged_majority": f["majority_hedge_share"] >= 0.5,
        "hedged_source": f["first_hedged"] > 0 and f["later_copy_share"] > 0,
    }


_ALARMS = (
    "evidence_against",
    "arithmetic_slip",
    "copying",
    "premise_echo",
    "dissent",
    "rebuttal",
    "hedged_majority",
    "hedged_source",
)


def rule(f: dict[str, float]) -> tuple[Risk, float, list[str]]:
    """The hand-set rule of `Heuristic`: (risk, risk_score, the signals that were on), first match wins.

    1. No claim held by 60% of the answers: ``medium`` (there is no consensus to trust or distrust).
    2. The evidence sides against the majority (states a dissenter's claim more than the majority's, or says nothing
       of a worded majority claim), or a majority answer's written arithmetic is wrong: ``high``.
    3. The answers copy one another or repeat a note in the question: ``high`` if there is also a sign of error (a
       dissenter, a rebuttal among the dissenters, a hedged majority, a hedged first answer that others repeated),
       else ``medium`` (a consensus with nothing independent behind it, right or wrong).
    4. The evidence supports the majority, or the only re-checked arithmetic slips are the dissenters': ``low``.
    5. A 60% majority with dissenters: ``high`` (a dissenter may be the one who is right).
    6. Independent unanimity: ``low``.

    Scores: ``high`` 0.6 + 0.07 per alarm signal on (`_ALARMS`), at most 0.95; ``medium`` 0.5 for an unsupported
    consensus and 0.45 - 0.1 x distinct-claim ratio (+0.1 with evidence against) without a majority; ``low`` 0.2
    for independent unanimity, 0.1 with supporting evidence (0.2 with dissenters).
    """
    s = signals(f)
    on = [name for name, value in s.items() if value]
    high = min(0.95, 0.6 + 0.07 * sum(s[k] for k in _ALARMS))
    if s["no_majority"]:
        return "medium", round(0.45 - 0.1 * f["distinct_ratio"] + 0.1 * s["evidence_against"], 4), on
    if s["evidence_against"] or s["arithmetic_slip"]:
        return "high", high, on
    if s["copying"] or s["premise_echo"]:
        error_sign = s["dissent"] or s["rebuttal"] or s["hedged_majority"] or s["hedged_source"]
        return ("high", high, on) if error_sign else ("medium", 0.5, on)
    if s["evidence_for"] or s["dissenter_slip"]:
        return "low", 0.1 + 0.1 * s["dissent"], on
    if s["dissent"]:
        return "high", high, on
    return "low", 0.2, on


class Heuristic:
    """Risk from the structure of the answers alone, by the hand-set `rule` on the structural `features`.

    No world knowledge: it never knows which answer is right, only whether the agreement looks independent
    (copying, an echoed note), contested (dissenters, rebuttals, hedges) or checkable (evidence, arithmetic).
    """

    name = "builtin:heuristic"

    async def assess(self, request: Request) -> Prediction:
        f = features(request)
        risk, score, on = rule(f)
        return Prediction(risk, round(score, 4), {"signals": on, "agreement": round(f["agreement"], 4)})

    async def aclose(self) -> None:
        return None
