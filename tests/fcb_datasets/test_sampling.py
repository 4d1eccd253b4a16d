"""Choosing the cases (`fcb_datasets.realdata.sampling`): strata in their shares, even splits, risk levels held
together per unit, and difficulty matched across categories. Every expected count below is worked out by hand."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from fcb_datasets.realdata.cases import Candidate
from fcb_datasets.realdata.sampling import balanced, matched, panel_shares, possible, sample, sample_group


def _candidates(counts: dict[str, int]) -> list[Candidate]:
    return [Candidate("c", "s", stratum, f"item-{stratum}-{i}", {}) for stratum, n in counts.items() for i in range(n)]


def test_sampling_keeps_every_stratum_in_its_share_and_the_scarcest_sets_the_total() -> None:
    group = _candidates({"3": 40, "4": 10})
    shares = {"3": 0.8, "4": 0.2}
    # 10 items of size 4 at a 20% share allow 50 cases in all: 40 of size 3 and 10 of size 4
    assert possible(group, shares) == 50
    kept = sample_group(group, shares, 30, random.Random(0))
    assert sorted(c.stratum for c in kept).count("3") == 24 and len(kept) == 30
    assert len({c.item for c in kept}) == len(kept)


def test_sampling_deals_a_group_evenly_to_the_splits_where_both_have_cases() -> None:
    group = _candidates({"3": 40, "4": 40})
    shares = {"3": 0.5, "4": 0.5}
    # size 3: 30 items in dev, 10 in test; size 4: 20 and 20
    split = {c.item: "dev" if int(c.item.rsplit("-", 1)[1]) < (30 if c.stratum == "3" else 20) else "test"
             for c in group}  # fmt: skip
    kept = sample_group(group, shares, 40, random.Random(0), split)
    parts = Counter((c.stratum, split[c.item]) for c in kept)
    # 20 per stratum, 10 from each split: size 3's test side has exactly the 10 it needs
    assert parts == {("3", "dev"): 10, ("3", "test"): 10, ("4", "dev"): 10, ("4", "test"): 10}
    # a split short of its half gives what it has; the other makes up the rest
    kept = sample_group(group, shares, 60, random.Random(0), split)
    parts = Counter((c.stratum, split[c.item]) for c in kept)
    assert parts[("3", "test")] == 10 and parts[("3", "dev")] == 20 and len(kept) == 60


def test_risk_levels_of_a_source_are_held_together() -> None:
    totals = {("echo_cascade", "s"): 300, ("genuine_disagreement", "s"): 100, ("genuine_agreement_correct", "s"): 80}
    # the smallest level is 80: no level may exceed 1.5 x 80 = 120, so high goes from 300 to 120, medium stays
    assert balanced(totals) == {**totals, ("echo_cascade", "s"): 120}
    # strict: every level held to the smallest, 80
    assert balanced(totals, strict=frozenset({"s"}))[("genuine_disagreement", "s")] == 80
    # by the next largest instead (0.9 x 100 = 90): for a source whose smallest level is all but empty
    assert balanced(totals, by_next=frozenset({"s"}))[("echo_cascade", "s")] == 90


def _hard(category: str, counts: dict[str, int], source: str = "s", recipe: str = "") -> list[Candidate]:
    """Candidates of one category, ``counts[difficulty]`` of each difficulty, one item each."""
    return [Candidate(category, source, "3", f"{category}-{recipe}-{d}-{i}", {}, recipe, d)
            for d, n in counts.items() for i in range(n)]  # fmt: skip


def test_plentiful_categories_take_the_difficulty_mix_of_the_rest_of_their_unit() -> None:
    wrong = _hard("majority_wrong_fact", {"law": 10, "biology": 30})
    right = _hard("genuine_agreement_correct", {"law": 15, "biology": 200})
    split = _hard("genuine_disagreement", {"law": 90, "biology": 60})
    kept = Counter(
        (c.category, c.difficulty)
        for c in matched(
            [*wrong, *right, *split], {"s": frozenset({"genuine_agreement_correct", "genuine_disagreement"})}, 0
        )
    )
    # the target is the wrong majorities' 10 law : 30 biology. Agreement: law allows 1.5x, biology 6.67x, so 1.5x of
    # the target: 15 law, 45 biology. Disagreement: law 9x, biology 2x, so 2x: 20 law, 60 biology.
    assert kept == {("majority_wrong_fact", "law"): 10, ("majority_wrong_fact", "biology"): 30,
                    ("genuine_agreement_correct", "law"): 15, ("genuine_agreement_correct", "biology"): 45,
                    ("genuine_disagreement", "law"): 20, ("genuine_disagreement", "biology"): 60}  # fmt: skip


def _kept(wrong: dict[str, int], right: dict[str, int]) -> Counter[str]:
    group = [*_hard("majority_wrong_fact", wrong), *_hard("genuine_agreement_correct", right)]
    thin = {"s": frozenset({"genuine_agreement_correct"})}
    return Counter(c.difficulty for c in matched(group, thin, 0) if c.category == "genuine_agreement_correct")


def test_a_difficulty_one_category_lacks_does_not_empty_it() -> None:
    # "topology" holds 1 of the target's 41 (2.4%, under MIN_BIN): agreement has none, and keeps the rest of the mix
    assert _kept({"law": 20, "biology": 20, "topology": 1}, {"law": 40, "biology": 100}) == {"law": 40, "biology": 40}
    # level 2 holds a fifth of the target, and echo cascades none there: levels 3 and 4 bound it (5/10, 30/10)
    assert _kept({"2": 5, "3": 10, "4": 10}, {"3": 5, "4": 30}) == {"3": 5, "4": 5}
    # one case at level 3 would allow a tenth of the target; a quarter of it is kept where the category can
    assert _kept({"3": 8, "4": 40}, {"3": 1, "4": 100}) == {"3": 1, "4": 10}


def test_matching_stays_inside_a_unit_and_leaves_other_sources_whole() -> None:
    # a recipe's true claims follow its own false claims, not the other recipe's; source "t" names nothing to thin
    notes = [*_hard("anchoring_injected_premise", {"2": 10, "5": 10}, recipe="note"),
             *_hard("correct_but_unsupported", {"2": 40, "5": 20}, recipe="note")]  # fmt: skip
    echoes = [*_hard("echo_cascade", {"2": 5, "5": 15}, recipe="echo"),
              *_hard("correct_but_unsupported", {"2": 40, "5": 30}, recipe="echo")]  # fmt: skip
    other = _hard("genuine_agreement_correct", {"2": 50, "5": 1}, source="t")
    kept = Counter(
        (c.unit, c.category, c.difficulty)
        for c in matched([*notes, *echoes, *other], {"s": frozenset({"correct_but_unsupported"})}, 0)
    )
    true = "correct_but_unsupported"
    # note: 2 allows 4x, 5 allows 2x: 20 and 20; echo: 2 allows 8x, 5 allows 2x: 10 and 30
    assert kept[("s/note", true, "2")] == 20 and kept[("s/note", true, "5")] == 20
    assert kept[("s/echo", true, "2")] == 10 and kept[("s/echo", true, "5")] == 30
    assert kept[("t", "genuine_agreement_correct", "2")] == 50 and kept[("t", "genuine_agreement_correct", "5")] == 1


def test_a_recipe_holds_as_many_false_claims_as_true_ones() -> None:
    # a recipe unit has two levels, high and medium, and no low: no floor of 30 for a level it never has
    totals = {("anchoring_injected_premise", "s/note"): 200, ("correct_but_unsupported", "s/note"): 320}
    assert balanced(totals, strict=frozenset({"s/note"})) == {**totals, ("correct_but_unsupported", "s/note"): 200}
    notes = [*_hard("anchoring_injected_premise", {"": 50}, recipe="note"),
             *_hard("correct_but_unsupported", {"": 80}, recipe="note")]  # fmt: skip
    caps = {("anchoring_injected_premise", "s/note"): 200, ("correct_but_unsupported", "s/note"): 200}
    kept = sample(notes, {"s": {"3": 1.0}}, caps, 0, strict=frozenset({"s/note"}))
    assert Counter(c.category for c in kept) == {"anchoring_injected_premise": 50, "correct_but_unsupported": 50}


def test_panels_take_the_shares_of_the_wrong_majorities_they_hold() -> None:
    def panel(name: str, category: str, n: int, source: str = "p") -> list[Candidate]:
        return [Candidate(category, source, name, f"q{i}", {}) for i in range(n)]

    candidates = [
        *panel("small", "majority_wrong_fact", 30),
        *panel("small", "lone_correct_dissenter", 10),
        *panel("small", "majority_wrong_fact", 30),  # the same 30 items again: counted once
        *panel("large", "majority_wrong_fact", 10),
        *panel("large", "genuine_agreement_correct", 500),
        *panel("mid", "genuine_disagreement", 90),
        *panel("small", "majority_wrong_fact", 99, "q"),
    ]
    # 50 wrong majorities of source p (distinct item and category): 40 small, 10 large, none mid (held at 5%):
    # raw 0.8, 0.2, 0.05, over their sum 1.05
    shares = panel_shares(candidates, "p", ["small", "large", "mid"])
    assert shares == pytest.approx({"small": 0.8 / 1.05, "large": 0.2 / 1.05, "mid": 0.05 / 1.05})
    assert panel_shares(panel("a", "genuine_agreement_correct", 5), "p", ["a", "b"]) == {"a": 0.5, "b": 0.5}
