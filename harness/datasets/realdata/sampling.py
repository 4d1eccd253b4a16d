"""Choosing the cases: per category and source, the same share of every stratum, so that neither a case's size nor its
panel says anything of its category.

A stratum is what a source's cases vary by that a detector could count or recognise: the panel for a panel source
(each panel has its own size and its own models' house styles), the number of answers for the others. Every
category of a source takes the same shares of its strata (`shares`), as many cases as the scarcest stratum allows,
up to a cap; one case per source item and category, chosen by question, never by agent.

Nor may a source say much of the risk: no risk level of a source holds more than `BALANCE` times its smallest
level (or `FLOOR`, when that is smaller still); larger levels are cut back, their categories in proportion. DyLAN's
debates end wrong more often than right, most ZeroEval panels agree on the right answer: without this, a source's
house style would say how risky its cases are.

Each group's cases are dealt evenly to dev and test where both splits hold them (splits go by question, so a group's
candidates fall to the splits by the luck of a hash): the test split's size and make-up follow the caps.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence

from harness.datasets.realdata.cases import Candidate

BALANCE = 1.5
FLOOR = 30
NEXT = 0.9


def sample(
    candidates: Sequence[Candidate], shares: Mapping[str, Mapping[str, float]], cap: Mapping[tuple[str, str], int],
    seed: int, strict: frozenset[str] = frozenset(), by_next: frozenset[str] = frozenset(),
    split: Mapping[str, str] | None = None,
) -> list[Candidate]:  # fmt: skip
    """The kept cases, sorted by source, item, category and stratum. ``shares[source][stratum]`` sum to 1 per source;
    ``cap[(category, source)]`` bounds a group (absent: no cases of that category from that source). ``split`` (item
    -> split): each group's cases are dealt evenly to the splits where both can give them (`sample_group`)."""
    groups: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in candidates:
        groups[(c.category, c.source)].append(c)
    totals = balanced({k: min(cap.get(k, 0), possible(g, shares[k[1]])) for k, g in groups.items()}, strict, by_next)
    kept: list[Candidate] = []
    for (category, source), group in sorted(groups.items()):
        rng = random.Random(f"{seed}:{category}:{source}")  # one stream per group: a change elsewhere moves nothing
        kept.extend(sample_group(group, shares[source], totals[(category, source)], rng, split))
    return sorted(kept, key=lambda c: (c.source, c.item, c.category, c.stratum))


def possible(group: Sequence[Candidate], shares: Mapping[str, float]) -> int:
    """How many cases a group can give in the source's shares of strata, distinct items in each."""
    items: dict[str, set[str]] = defaultdict(set)
    for c in group:
        items[c.stratum].add(c.item)
    return min(int(len(items[s]) / share) for s, share in shares.items() if share > 0)


def balanced(
    totals: Mapping[tuple[str, str], int], strict: frozenset[str] = frozenset(), by_next: frozenset[str] = frozenset()
) -> dict[tuple[str, str], int]:
    """Group totals with each source's risk levels held within `BALANCE` times its smallest (module docstring)."""
    from harness.types import CATEGORY_RISK, RISKS

    out = dict(totals)
    for source in {s for _, s in totals}:
        levels = dict.fromkeys(RISKS, 0)
        for (category, s), n in totals.items():
            if s == source:
                levels[CATEGORY_RISK[category]] += n
        ranked = sorted(levels.values(), reverse=True)
        if source in by_next:
            most = NEXT * ranked[1]
        else:
            most = (1.0 if source in strict else BALANCE) * max(ranked[-1], FLOOR)
        for (category, s), n in totals.items():
            level = levels[CATEGORY_RISK[category]]
            if s == source and level > most:
                out[(category, s)] = int(n * most / level)
    return out


def sample_group(
    group: Sequence[Candidate], shares: Mapping[str, float], total: int, rng: random.Random,
    split: Mapping[str, str] | None = None,
) -> list[Candidate]:  # fmt: skip
    """``total`` cases of one group (at most what it can give), the strata in the given shares, distinct items; with
    ``split``, half of each stratum's cases from each split as far as each has them, so that a split's size and make-up
    follow the caps rather than the luck of the draw."""
    by_stratum: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(group, key=lambda c: (c.item, c.stratum)):
        by_stratum[c.stratum].append(c)
    items = {s: len({c.item for c in by_stratum[s]}) for s in shares}
    used: set[str] = set()
    kept = []
    for stratum in sorted(shares, key=lambda s: (items[s], s)):  # the scarcest stratum chooses first
        want = round(total * shares[stratum])
        pool = [c for c in by_stratum[stratum] if c.item not in used]
        rng.shuffle(pool)
        for c in _even(pool, want, split) if split is not None else pool[:want]:
            used.add(c.item)
            kept.append(c)
    return kept


def _even(pool: list[Candidate], want: int, split: Mapping[str, str]) -> list[Candidate]:
    """``want`` of a shuffled pool, half from each split where it can, the rest in pool order."""
    chosen: list[Candidate] = []
    for part in sorted(set(split[c.item] for c in pool)):
        chosen += [c for c in pool if split[c.item] == part][: want // 2]
    taken = {id(c) for c in chosen}
    return chosen + [c for c in pool if id(c) not in taken][: want - len(chosen)]


def equal(strata: Sequence[str]) -> dict[str, float]:
    """Equal shares of the given strata."""
    return {s: 1 / len(strata) for s in strata}
