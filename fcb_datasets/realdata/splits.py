"""Source items and splits: every question's upstream identity, and which split it lands in.

An item is named ``<question set>:<key>`` in ``source.item``: ``gsm8k:<key>`` for a GSM8K question whether its answers
come from ``../gsm8k`` or from ZeroEval, ``math:<problem id>`` for a MATH problem whether debated by DyLAN or answered
in ZeroEval, ``mmlu-pro:<question id>``, ``numersense:<id>``, ``truthfulqa:<key>``. A split holds whole families:
questions with one identity (the same text under two sources) or near-duplicates of each other (TF-IDF cosine 0.75
or more: "Brits are taller than which places?" and "Americans are taller than which places?"), joined across every
source, go to one split by a seeded hash of the family.
"""

from __future__ import annotations

import hashlib
import re

from harness.metrics import Joined

NEAR_DUPLICATE = 0.75
"""TF-IDF cosine (word 1-2-grams) at which two questions are one family and go to one split (`fcb audit-dataset`
flags 0.8)."""


def gsm8k_key(question: str) -> str:
    """A GSM8K question's identity: a hash of its text, whitespace and case normalised.

    It survives any subset or reordering of a source file (a line number does not), so two builds from disjoint
    parts of a source never share a key, and the same question always gets the same one."""
    normal = " ".join(question.lower().split())
    return hashlib.sha256(normal.encode()).hexdigest()[:16]


item_key = gsm8k_key  # TruthfulQA questions are keyed the same way


def math_key(problem: str) -> str:
    """A MATH problem's identity as DyLAN's ``problem_id`` has it: sha256 of the text in lower case with whitespace,
    ``$`` and ``~`` removed, first 16 hex digits."""
    return hashlib.sha256(re.sub(r"[\s$~]", "", problem.lower()).encode()).hexdigest()[:16]


def split_of(family: str, seed: int) -> str:
    """dev or test by a seeded hash of a family's key, so no question feeds both splits."""
    digest = hashlib.sha256(f"{seed}:{family}".encode()).digest()
    return "test" if digest[0] % 2 else "dev"


def families(questions: dict[str, str]) -> dict[str, str]:
    """Each item mapped to its family (the smallest item among those joined by one identity or near-duplicates).

    ``questions`` maps item -> question text; items of different sources whose texts normalise alike (`math_key`'s
    normal form, which also covers `gsm8k_key`'s) are one family too."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    items = sorted(questions)
    joined = Joined(len(items))
    by_text: dict[str, int] = {}
    for i, item in enumerate(items):
        j = by_text.setdefault(math_key(questions[item]), i)
        if j != i:
            joined.join(i, j)
    if len(items) >= 2:
        vectors = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, token_pattern=r"(?u)\b\w+\b").fit_transform(
            [questions[k] for k in items]
        )
        for start in range(0, len(items), 1000):  # in blocks: all pairs at once would hold 10^8 similarities
            block = (vectors[start : start + 1000] @ vectors.T).toarray()
            for i, j in zip(*(block >= NEAR_DUPLICATE).nonzero(), strict=True):
                if start + i < j:
                    joined.join(start + int(i), int(j))
    return {k: items[joined.root(i)] for i, k in enumerate(items)}
