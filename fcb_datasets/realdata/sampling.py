"""Choosing the cases: per category and source, the same share of every stratum, so that neither a case's size nor its
panel says anything of its category.

A stratum is what a source's cases vary by that a detector could count or recognise: the panel for a panel source
(each panel has its own size and its own models' house styles), the number of answers for the others. Every
category of a source takes the same shares of its strata (`shares`), as many cases as the scarcest stratum allows,
up to a cap; one case per source item and category, chosen by question, never by agent.

Nor may a source say much of the risk: no risk level of a source holds more than `BALANCE` times its smallest
level (or `FLOOR`, when that is smaller still); larger levels are cut back, their categories in proportion. DyLAN's
debates end wrong more often than right, most ZeroEval panels agree on the right answer: without this, a source's
house style would say how risky its cases are. Constructed cases are balanced by recipe (`Candidate.unit`): a
recipe's false claims and true claims in equal numbers, so that what we wrote says nothing of the truth.

Nor may how hard a question is: wrong majorities and disagreement gather on hard questions (law in MMLU-Pro, level-5
MATH problems, long GSM8K problems), and a question's subject and length are there for any detector to read. Where
a source tells a question's difficulty (`Candidate.difficulty`), the plentiful categories named for it are thinned
to the difficulty mix of the rest of their unit before anything else is chosen (`matched`).

Each group's cases are dealt evenly to dev and test where both splits hold them (splits go by question, so a group's
candidates fall to the splits by the luck of a hash): the test split's size and make-up follow the caps.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from fcb_datasets.realdata.cases import Candidate

BALANCE = 1.5
FLOOR = 30
NEXT = 0.9
MIN_PANEL = 0.05
"""The least share of a panel (`panel_shares`): every panel keeps a part of every category."""
MIN_BIN = 0.05
MIN_MULTIPLE = 0.25
"""What bounds the thinning (`matched`): a difficulty bin holding less than `MIN_BIN` of its unit's target, or none
of the category thinned, sets no bound (a bin one category lacks must not empty it), and a category keeps at least
`MIN_MULTIPLE` times the target in each bin where it can (a bin it holds one case of must not empty it either). On
the shipped build neither binds; on a build from a few hundred questions they keep every category."""


def sample(
    candidates: Sequence[Candidate], shares: Mapping[str, Mapping[str, float]], cap: Mapping[tuple[str, str], int],
    seed: int, strict: frozenset[str] = frozenset(), by_next: frozenset[str] = frozenset(),
    split: Mapping[str, str] | None = None, thinned: Mapping[str, frozenset[str]] | None = None,
) -> list[Candidate]:  # fmt: skip
    """The kept cases, sorted by source, item, category and stratum. ``shares[source][stratum]`` sum to 1 per source;
    ``cap[(category, unit)]`` bounds a group (absent: no cases of that category from that unit); ``strict`` and
    ``by_next`` name units (`balanced`). ``split`` (item -> split): each group's cases are dealt evenly to the splits
    where both can give them (`sample_group`). ``thinned[source]``: the categories matched to the difficulty mix of
    the rest of their unit (`matched`)."""
    usable = [c for c in candidates if shares[c.source].get(c.stratum, 0) > 0]
    groups: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in matched(usable, thinned or {}, seed):
        groups[(c.category, c.unit)].append(c)
    source = {unit: group[0].source for (_, unit), group in groups.items()}
    totals = balanced(
        {k: min(cap.get(k, 0), possible(g, shares[source[k[1]]])) for k, g in groups.items()}, strict, by_next
    )
    kept: list[Candidate] = []
    for (category, unit), group in sorted(groups.items()):
        rng = random.Random(f"{seed}:{category}:{unit}")  # one stream per group: a change elsewhere moves nothing
        kept.extend(sample_group(group, shares[source[unit]], totals[(category, unit)], rng, split))
    return sorted(kept, key=lambda c: (c.source, c.item, c.category, c.stratum, c.recipe))


def matched(candidates: Sequence[Candidate], thinned: Mapping[str, frozenset[str]], seed: int) -> list[Candidate]:
    """The candidates, with each category in ``thinned[source]`` thinned, unit by unit, to the difficulty mix of the
    unit's other categories (its target): as many of each difficulty as the same multiple of the target allows, the
    largest multiple that every difficulty it holds can give (`MIN_BIN`, `MIN_MULTIPLE`). A category whose unit has
    no other category, or whose source tells no difficulty, is kept whole."""
    units: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        units[c.unit].append(c)
    out: list[Candidate] = []
    for unit, members in sorted(units.items()):
        thin = thinned.get(members[0].source, frozenset())
        target = Counter(c.difficulty for c in members if c.category not in thin)
        out.extend(c for c in members if c.category not in thin)
        for category in sorted({c.category for c in members} & thin):
            group = [c for c in members if c.category == category]
            if not target or set(target) == {""}:
                out.extend(group)
                continue
            out.extend(_thin(group, target, random.Random(f"{seed}:match:{unit}:{category}")))
    return out


def _thin(group: Sequence[Candidate], target: Counter[str], rng: random.Random) -> list[Candidate]:
    have: dict[str, list[Candidate]] = defaultdict(list)
    for c in sorted(group, key=lambda c: (c.item, c.stratum)):
        have[c.difficulty].append(c)
    total = sum(target.values())
    binding = [len(have[d]) / n for d, n in target.items() if n >= MIN_BIN * total and have[d]]
    multiple = max(min(binding, default=0.0), MIN_MULTIPLE)
    kept: list[Candidate] = []
    for difficulty in sorted(target):
        pool = have[difficulty]
        rng.shuffle(pool)
        kept.extend(pool[: round(multiple * target[difficulty])])
    return kept


def possible(group: Sequence[Candidate], shares: Mapping[str, float]) -> int:
    """How many cases a group can give in the source's shares of strata, distinct items in each."""
    items: dict[str, set[str]] = defaultdict(set)
    for c in group:
        items[c.stratum].add(c.item)
    return min(int(len(items[s]) / share) for s, share in shares.items() if share > 0)


def balanced(
    totals: Mapping[tuple[str, str], int], strict: frozenset[str] = frozenset(), by_next: frozenset[str] = frozenset()
) -> dict[tuple[str, str], int]:
    """Group totals with each unit's risk levels held within `BALANCE` times its smallest (module docstring); the
    levels of a unit are those its categories have (a recipe's two)."""
    from harness.types import CATEGORY_RISK

    out = dict(totals)
    for source in {s for _, s in totals}:
        levels: dict[str, int] = {}
        for (category, s), n in totals.items():
            if s == source:
                levels[CATEGORY_RISK[category]] = levels.get(CATEGORY_RISK[category], 0) + n
        ranked = sorted(levels.values(), reverse=True)
        if source in by_next:
            most = NEXT * ranked[1]
        else:
            most = (1.0 if source in strict else BALANCE) * max(ranked[-1], FLOOR)
        for (category, s), n in totals.items():
            if s == source and levels[CATEGORY_RISK[category]] > most:
                out[(category, s)] = int(n * most / levels[CATEGORY_RISK[category]])
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


def panel_shares(candidates: Sequence[Candidate], source: str, panels: Sequence[str]) -> dict[str, float]:
    """A panel source's shares of its panels: each panel's part of the source's wrong majorities (its high-risk
    candidates, by distinct item and category), at least `MIN_PANEL` each; equal when it has none. Every category
    takes these same shares, so a panel still says nothing of a category; wrong majorities, the scarce kind, gather
    in small panels of weaker models (an MMLU-Pro question fools three models together far more often than nine),
    and equal shares would keep only as many of them as the panel that has the fewest."""
    from harness.types import CATEGORY_RISK

    found: dict[str, set[tuple[str, str]]] = {p: set() for p in panels}
    for c in candidates:
        if c.source == source and c.stratum in found and CATEGORY_RISK[c.category] == "high":
            found[c.stratum].add((c.item, c.category))
    total = sum(map(len, found.values()))
    if not total:
        return equal(panels)
    raw = {p: max(len(found[p]) / total, MIN_PANEL) for p in panels}
    return {p: v / sum(raw.values()) for p, v in raw.items()}
