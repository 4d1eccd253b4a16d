"""Rule (d): a latent resource "should be derivable from exactly one participant's 'hidden_facts' entry and the same
content should appear in 'evaluation_criteria.expected_revelations'".

How the match is made (no model, no randomness):

1. Text becomes content terms: lower-cased runs of letters and digits, minus a short list of English stop words and
   words under three letters (numbers are kept), with a plural ``s``/``ies`` taken off.
2. Two terms match when they are equal or share a prefix of at least five letters that covers at least 75% of the
   shorter term (so ``license``, ``licensed`` and ``licensing`` match; ``remote`` and ``removal`` do not).
3. A resource has two term sets: its key terms (from its ``name`` and ``id``) and its description's terms. A text's
   score is the larger of the two coverages: the share of the key terms, or of the description's terms, that the
   text matches.
4. A hidden fact or a revelation is a **strong** match at a score of at least 0.5 (`STRONG`), a **weak** match at any
   score above 0 (one term in common), and **no** match at 0. A revelation is also strong when it restates the
   hidden fact the resource matched: at least half the terms of the shorter of the two texts match.

Rule (d) then reads: exactly one strong hidden fact of the holder (none strong but some weak: a warning; none at all:
an error; two or more strong: a warning, since the schema wants exactly one), and at least one strong expected
revelation (only weak ones: a warning; none: an error).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

STRONG = 0.5
_STOP = """about after again against all also and any are because been before being both but can could did does doing
    down during each few for from further had has have having her here hers him his how into its itself just more
    most not now off once only other our out over own same she should some such than that the their them then there
    these they this those through too under until very was were what when where which while who whom why will with
    would you your"""
STOP_WORDS = frozenset(_STOP.split())


def terms(text: str) -> frozenset[str]:
    """The content terms of a text (see the module's step 1)."""
    out = set()
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOP_WORDS or (len(word) < 3 and not word.isdigit()):
            continue
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        out.add(word)
    return frozenset(out)


def terms_match(a: str, b: str) -> bool:
    if a == b:
        return True
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n >= 5 and n >= 0.75 * min(len(a), len(b))


def coverage(wanted: frozenset[str], found: frozenset[str]) -> float:
    """The share of ``wanted`` terms that some term of ``found`` matches (0 when nothing is wanted)."""
    if not wanted:
        return 0.0
    return sum(any(terms_match(w, f) for f in found) for w in wanted) / len(wanted)


@dataclass(frozen=True, slots=True)
class Match:
    index: int
    score: float

    @property
    def strong(self) -> bool:
        return self.score >= STRONG


def resource_terms(resource: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """(key terms from name and id, description terms) of a resource."""
    key = terms(f"{resource.get('name', '')} {str(resource.get('id', '')).replace('_', ' ')}")
    return key, terms(str(resource.get("description", "")))


def score(resource: dict[str, Any], text: str) -> float:
    key, described = resource_terms(resource)
    found = terms(text)
    return max(coverage(key, found), coverage(described, found))


def matches(resource: dict[str, Any], texts: Sequence[str]) -> list[Match]:
    """Every text with a score above 0, best first."""
    scored = [Match(i, score(resource, t)) for i, t in enumerate(texts)]
    return sorted((m for m in scored if m.score > 0), key=lambda m: (-m.score, m.index))


def restates(a: str, b: str) -> bool:
    """True when at least half the terms of the shorter text match terms of the other."""
    ta, tb = terms(a), terms(b)
    short, other = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    return coverage(short, other) >= STRONG


def revelation_matches(resource: dict[str, Any], revelations: Sequence[str], facts: Iterable[str]) -> list[Match]:
    """Revelations scored against the resource, raised to strong when one restates a matched hidden fact."""
    facts = list(facts)
    out = []
    for m in [Match(i, score(resource, r)) for i, r in enumerate(revelations)]:
        if not m.strong and any(restates(revelations[m.index], f) for f in facts):
            m = Match(m.index, max(m.score, STRONG))
        if m.score > 0:
            out.append(m)
    return sorted(out, key=lambda m: (-m.score, m.index))
