"""The structural features of a request (`features`): named numbers computed from the request alone, which
`rule.rule` and `builtin:learned` both read."""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from harness.detectors.answers import agreement_share
from harness.detectors.heuristic.text import (
    ClaimKey,
    Ngrams,
    arithmetic_checks,
    claim_key,
    content_words,
    group_answers,
    jaccard,
    longest_shared_ngram,
    numbers,
    same_claim,
    split_task,
    words,
)
from harness.final_answer import votes
from harness.types import Request

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


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def _support(key: ClaimKey, text: str, text_words: frozenset[str]) -> float:
    """How much of a claim a text states, in [0, 1].

    A number claim: 1.0 when the text holds that number, else 0. A word claim: shared claim words over the smaller of
    2 and the claim's size, capped at 1 (two shared words, or the one word of a one-word claim, is full support).
    """
    if key.number is not None:
        return float(any(math.isclose(key.number, n, rel_tol=1e-9) for _, n in numbers(text)))
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
    keys: list[ClaimKey]
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
    question_numbers = frozenset(n for _, n in numbers(question))
    keys = [claim_key(t, question_words, question_numbers) for t in texts]
    evidence = "\n".join(request.get("evidence") or [])
    return _View(task, question, premise, texts, keys, group_answers(keys), evidence)


def _core(v: _View, group: list[int]) -> ClaimKey:
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


def vote_features(v: _View) -> dict[str, float]:
    """How the answers' final values fall, each read by `harness.final_answer.final_value` (what `builtin:vote`
    counts): ``vote_top_share``, ``vote_distinct_ratio`` (distinct values over answers), ``vote_unanimous``,
    ``vote_consensus`` (a value held by 60%), ``vote_unread_share`` (answers with no value read),
    ``vote_anchored``: 1 when every answer's value stood at an anchor (`harness.final_answer.ANCHORED`)."""
    counted = votes(v.texts)
    return {
        "vote_top_share": counted.top_share,
        "vote_distinct_ratio": counted.distinct / counted.n,
        "vote_unanimous": float(counted.unanimous),
        "vote_consensus": float(counted.consensus),
        "vote_unread_share": counted.unread / counted.n,
        "vote_anchored": float(counted.anchored == counted.n),
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
    grams = [Ngrams(t) for t in toks]
    task_grams = Ngrams(words(v.task))
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
    vote_features,
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
