"""Agreement structure that says nothing of the truth: wrong consensus and right consensus in the same shapes.

A case's shape is how its answers' final values fall, as any reader counts them (`harness.final_answer.votes`, the
reading the audit and ``builtin:vote`` use): the number of answers, the number on the most held value, the number
of distinct values, whether any answer states none; and the answers' mean length, in `LENGTH_BINS` bins per source.
Left alone, sampling by category gives the shapes away: a lone correct dissenter is never unanimous and wrong
majorities with dissent are plentiful, while right majorities are mostly unanimous, so that counting votes told
high from low (ROC-AUC 0.75 for a structure-only model on the v3 build).

`match` makes the right-consensus cases of every cell (a source, a stratum and a split, of real answers) take the
shapes of its wrong-consensus cases, in the same proportions: for every wrong majority with one dissenter a right
majority with one dissenter, for every unanimous wrong panel a unanimous right one. A case's side is its
``majority_correct``: false for the high-risk categories, true for ``genuine_agreement_correct`` and
``correct_but_unsupported`` (a right consensus resting on a note or an echo, the mirror of a constructed wrong one).
Each right category keeps its share of the cell as far as it has mirrors (so that its mix of strata stays near what
sampling set), drawn again from the cell's candidates of that category (the cases already kept first); a
wrong-consensus case whose shape has too few mirrors in the whole right side is dropped. Every cell takes the same
ratio of right to wrong, the ratio over all kept cases: a source with more right consensus than the others would
otherwise let a model that recognises the source (by its number of answers or their lengths) call its cases right.
The cases we wrote are left as sampling chose them, in cells of their own: a recipe's true claims
(``correct_but_unsupported``) already mirror its false ones (one recipe, as many of each), drawing them to the
shapes of real wrong majorities would let shape tell a recipe's false claims from its true ones, and their shapes
hang on our wording (a held-out wording must change no case chosen). Disagreement (no consensus, medium) is left as
it is: it is visible by definition.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

from fcb_datasets.realdata.cases import Candidate
from harness.final_answer import votes


def shape(candidate: Candidate) -> str:
    """How a case's final values fall: ``answers:top:distinct:unread`` (unread 0 or 1: any answer with no value)."""
    counted = votes([str(a["text"]) for a in candidate.case["answers"]])
    return f"{counted.n}:{counted.top}:{counted.distinct}:{min(counted.unread, 1)}"


def match(
    kept: Sequence[Candidate], candidates: Sequence[Candidate], split: Mapping[str, str], seed: int
) -> list[Candidate]:
    """The kept cases with each cell's right-consensus shapes matched to its wrong-consensus shapes (module
    docstring), sorted as `sampling.sample` sorts them."""
    shapes: dict[int, str] = {}
    cuts = _length_cuts(kept, split)

    def shape_of(c: Candidate) -> str:
        if id(c) not in shapes:
            length = _length(c)
            shapes[id(c)] = f"{shape(c)}:{sum(length > cut for cut in cuts[(c.source, split[c.item])])}"
        return shapes[id(c)]

    cells: dict[tuple[str, str, str, str], list[Candidate]] = defaultdict(list)
    for c in kept:
        cells[_cell_of(c, split)].append(c)
    spare: dict[tuple[str, str, str, str], list[Candidate]] = defaultdict(list)
    chosen = {id(c) for c in kept}
    for c in candidates:
        if id(c) not in chosen and _side(c) == "right" and _cell_of(c, split) in cells:
            spare[_cell_of(c, split)].append(c)
    used = {(c.category, c.unit, c.item) for c in kept}
    sides = Counter(_side(c) for c in kept)
    ratio = sides["right"] / sides["wrong"] if sides["wrong"] else 0.0
    out: list[Candidate] = []
    for key in sorted(cells):
        if key[-1] == "ours":  # a recipe: its true and false claims come from one recipe, in equal numbers
            out.extend(cells[key])
            continue
        rng = random.Random(f"{seed}:structure:{':'.join(key)}")
        out.extend(_cell(cells[key], spare[key], shape_of, used, rng, ratio))
    return sorted(out, key=lambda c: (c.source, c.item, c.category, c.stratum, c.recipe))


def _cell(
    kept: list[Candidate], spare: list[Candidate], shape_of: Callable[[Candidate], str],
    used: set[tuple[str, str, str]], rng: random.Random, ratio: float,
) -> list[Candidate]:  # fmt: skip
    """One cell: a wrong shape keeps as many cases as the right side's mirrors of it allow (at the ratio), and its
    mirrors are shared out to the right categories in their shares of the cell, as far as each has mirrors of that
    shape (`_share_out`)."""
    wrong = [c for c in kept if _side(c) == "wrong"]
    right = [c for c in kept if _side(c) == "right"]
    if not wrong or not right or ratio <= 0:
        return kept
    wrong_by: dict[str, list[Candidate]] = defaultdict(list)
    for c in wrong:
        wrong_by[shape_of(c)].append(c)
    for members in wrong_by.values():
        rng.shuffle(members)
    counts = Counter(c.category for c in right)
    pools = {category: _pool(category, right, spare, shape_of, used, rng) for category in sorted(counts)}
    owed = dict.fromkeys(pools, 0.0)
    weights = {category: n / len(right) for category, n in counts.items()}
    out = [c for c in kept if _side(c) == ""]
    due = 0.0
    for s in sorted(wrong_by):
        mirrors = {category: _distinct(pool.get(s, []), used) for category, pool in pools.items()}
        keep = min(len(wrong_by[s]), int(sum(map(len, mirrors.values())) / ratio + 1e-9))
        out.extend(wrong_by[s][:keep])
        due += keep * ratio
        take = min(sum(map(len, mirrors.values())), round(due))
        due -= take
        for category, n in _share_out(take, mirrors, weights, owed).items():
            for c in mirrors[category][:n]:
                used.add((c.category, c.unit, c.item))
                out.append(c)
    return out


def _share_out(
    take: int, mirrors: dict[str, list[Candidate]], weights: dict[str, float], owed: dict[str, float]
) -> dict[str, int]:
    """How many of ``take`` mirrors each right category gives: what it is owed by its weight (carried over from
    shape to shape), the most owed first, as far as it has mirrors; any shortfall from the categories with mirrors
    left. ``owed`` is updated."""
    for category in owed:
        owed[category] += take * weights[category]
    order = sorted(owed, key=lambda k: (-owed[k], k))
    given = dict.fromkeys(owed, 0)
    for category in order:
        given[category] = max(0, min(len(mirrors[category]), round(owed[category]), take - sum(given.values())))
    for category in order:
        given[category] += min(take - sum(given.values()), len(mirrors[category]) - given[category])
    for category, n in given.items():
        owed[category] -= n
    return given


def _pool(
    category: str, right: list[Candidate], spare: list[Candidate], shape_of: Callable[[Candidate], str],
    used: set[tuple[str, str, str]], rng: random.Random,
) -> dict[str, list[Candidate]]:  # fmt: skip
    """A category's right-consensus candidates of a cell by shape: the kept ones first, then the others shuffled; the
    kept ones are free again (in ``used``) until chosen."""
    pool: dict[str, list[Candidate]] = defaultdict(list)
    for c in right:
        if c.category == category:
            pool[shape_of(c)].append(c)
            used.discard((c.category, c.unit, c.item))
    others = sorted((c for c in spare if c.category == category), key=lambda c: (c.item, c.recipe))
    rng.shuffle(others)
    for c in others:
        pool[shape_of(c)].append(c)
    return pool


LENGTH_BINS = 3
"""The answers' mean length is matched too, in this many bins of equal size per source and split: a wrong GSM8K
solution runs longer than a right one, and a length is there for any detector to read."""


def _cell_of(c: Candidate, split: Mapping[str, str]) -> tuple[str, str, str, str]:
    """A case's cell: its source, stratum and split, and whether we wrote it (a recipe's true claims mirror its false
    ones, real answers mirror real answers)."""
    return (c.source, c.stratum, split[c.item], "ours" if c.recipe else "real")


def _side(c: Candidate) -> str:
    """A case's side: ``wrong`` or ``right`` consensus, "" without one."""
    majority = c.case.get("majority_correct")
    return "" if majority is None else ("right" if majority else "wrong")


def _length(c: Candidate) -> float:
    return sum(len(str(a["text"])) for a in c.case["answers"]) / len(c.case["answers"])


def _length_cuts(kept: Sequence[Candidate], split: Mapping[str, str]) -> dict[tuple[str, str], list[float]]:
    """Per source and split, the mean lengths that part its real consensus cases into `LENGTH_BINS` bins of equal
    size (per split, and from real answers only: our wording, held-out or not, must change no case chosen)."""
    lengths: dict[tuple[str, str], list[float]] = defaultdict(list)
    for c in kept:
        if _side(c) and not c.recipe:
            lengths[(c.source, split[c.item])].append(_length(c))
    out: dict[tuple[str, str], list[float]] = defaultdict(list)
    for key, found in lengths.items():
        found.sort()
        out[key] = [found[len(found) * k // LENGTH_BINS] for k in range(1, LENGTH_BINS)]
    return out


def _distinct(pool: list[Candidate], used: set[tuple[str, str, str]]) -> list[Candidate]:
    """The pool's candidates in order, one per (category, unit, item), none already used."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for c in pool:
        key = (c.category, c.unit, c.item)
        if key not in used and key not in seen:
            seen.add(key)
            out.append(c)
    return out
