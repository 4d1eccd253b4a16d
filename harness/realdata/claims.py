"""Group a question's wrong answers by the incorrect reference claim they state.

Similarity is TF-IDF cosine over the words of an answer that are not in the question (nor stop words): the words
a question and its answers share say nothing about which claim an answer makes. An answer joins the claim it is
most similar to when the similarity is at least `THRESHOLD` and beats the runner-up by `MARGIN`; otherwise it
stands alone. On a sample of 40 answer/claim pairs read by hand across similarity bands, pairs at 0.4 or more
were the same claim in about nine of ten, pairs between 0.3 and 0.4 in under half, and ties between two claims
were ambiguous (hence the margin).
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, TfidfVectorizer

THRESHOLD = 0.4
MARGIN = 0.1
_WORD = re.compile(r"[a-z0-9]+")
# Words that reverse or grade a claim ("one more rib" against "one fewer rib") must count, stop words or not.
_KEEP = frozenset(
    (
        "more",
        "less",
        "fewer",
        "most",
        "least",
        "not",
        "no",
        "never",
        "nothing",
        "none",
        "cannot",
        "without",
        "only",
        "all",
        "every",
    )
)
_STOP = ENGLISH_STOP_WORDS - _KEEP


def content_words(text: str, exclude: set[str]) -> str:
    return " ".join(w for w in _WORD.findall(text.lower()) if w not in _STOP and w not in exclude)


def states_a_claim(question: str, answer: str, claims: list[str]) -> bool:
    """True when an answer clearly states one of the given (incorrect reference) claims."""
    return any(key >= 0 for key in group_by_claim(question, [answer], claims))


def group_by_claim(question: str, answers: list[str], claims: list[str]) -> dict[int, list[int]]:
    """Answer indices grouped by claim index; answers that match no claim clearly get their own key (-1 - i)."""
    groups: dict[int, list[int]] = {}
    asked = set(content_words(question, set()).split())
    docs = [content_words(t, asked) for t in [*answers, *claims]]
    if not answers or not claims or not any(docs[len(answers) :]):
        return {-1 - i: [i] for i in range(len(answers))}
    vectorizer = TfidfVectorizer(token_pattern=r"\S+", sublinear_tf=True).fit(docs)
    sims = (vectorizer.transform(docs[: len(answers)]) @ vectorizer.transform(docs[len(answers) :]).T).toarray()
    for i, row in enumerate(sims):
        ranked = sorted(range(len(claims)), key=lambda j: (-row[j], j))
        best = ranked[0]
        runner_up = row[ranked[1]] if len(ranked) > 1 else 0.0
        key = best if row[best] >= THRESHOLD and row[best] - runner_up >= MARGIN else -1 - i
        groups.setdefault(key, []).append(i)
    return groups
