"""Choosing the cases, rule by rule at its edges: strata without a share, groups without a cap, a unit of one case,
difficulty bins at exactly `MIN_BIN`, risk levels summed over categories, the scarcest stratum choosing first and
the same draw for the same seed. Every count is worked out by hand in the comment beside it."""

from __future__ import annotations

import random
from collections import Counter

from fcb_datasets.realdata.cases import Candidate
from fcb_datasets.realdata.sampling import MIN_BIN, _thin, balanced, matched, possible, sample, sample_group

WRONG, RIGHT, SPLIT = "majority_wrong_fact", "genuine_agreement_correct", "genuine_disagreement"


def _many(category: str, n: int, stratum: str = "3", difficulty: str = "", prefix: str = "") -> list[Candidate]:
    return [Candidate(category, "s", stratum, f"{prefix or category}-{difficulty}-{i}", {}, "", difficulty)
            for i in range(n)]  # fmt: skip


def test_a_stratum_without_a_share_gives_no_case_and_sets_no_difficulty_target() -> None:
    # wrong majorities: 10 biology questions in stratum 3 (share 1) and 10 law questions in stratum 9, which has no
    # share (absent, or 0). Agreement is thinned to the wrong majorities' mix: only the usable 10 biology count, so
    # agreement keeps 2 x 10 biology (20 of its 20 biology allow 2x) and no law
    candidates = [*_many(WRONG, 10, "3", "bio"), *_many(WRONG, 10, "9", "law"),
                  *_many(RIGHT, 20, "3", "bio"), *_many(RIGHT, 20, "3", "law")]  # fmt: skip
    caps = {(WRONG, "s"): 100, (RIGHT, "s"): 100}
    thin = {"s": frozenset({RIGHT})}
    for shares in ({"s": {"3": 1.0}}, {"s": {"3": 1.0, "9": 0.0}}):
        kept = sample(candidates, shares, caps, 0, thinned=thin)
        # totals 10 (high) and 20 (low): within 1.5 x max(10, 30) = 45, nothing is cut
        assert Counter((c.category, c.difficulty) for c in kept) == {(WRONG, "bio"): 10, (RIGHT, "bio"): 20}


def test_a_group_without_a_cap_gives_no_case_and_a_group_of_one_is_kept() -> None:
    candidates = [*_many(WRONG, 1), *_many(SPLIT, 5)]
    kept = sample(candidates, {"s": {"3": 1.0}}, {(WRONG, "s"): 10}, 0)
    assert [(c.category, c.item) for c in kept] == [(WRONG, f"{WRONG}--0")]


def test_the_same_seed_draws_the_same_cases_and_another_seed_others() -> None:
    candidates = [*_many(WRONG, 40, difficulty="bio"), *_many(WRONG, 40, difficulty="law"),
                  *_many(RIGHT, 200, difficulty="bio"), *_many(RIGHT, 40, difficulty="law")]  # fmt: skip
    caps = {(WRONG, "s"): 20, (RIGHT, "s"): 20}
    thin = {"s": frozenset({RIGHT})}

    def draw(seed: int) -> list[str]:
        return [c.item for c in sample(candidates, {"s": {"3": 1.0}}, caps, seed, thinned=thin)]

    assert draw(0) == draw(0)
    assert draw(0) != draw(1)
    # the thinning draw follows the seed too: the target is 40 bio and 40 law, law allows 1x, so agreement keeps 40
    # of its 200 biology cases, different ones per seed
    thinned = [{c.item for c in matched(candidates, thin, seed) if c.category == RIGHT} for seed in (0, 0, 1)]
    assert len(thinned[0]) == 80 and thinned[0] == thinned[1] != thinned[2]


def test_sampling_deals_to_the_splits_through_sample() -> None:
    # 40 wrong majorities: 30 in dev, 10 in test; a cap of 20 takes 10 from each split
    candidates = _many(WRONG, 40)
    split = {c.item: "dev" if int(c.item.rsplit("-", 1)[1]) < 30 else "test" for c in candidates}
    kept = sample(candidates, {"s": {"3": 1.0}}, {(WRONG, "s"): 20}, 0, split=split)
    assert Counter(split[c.item] for c in kept) == {"dev": 10, "test": 10}


def test_by_next_reaches_the_balance_through_sample() -> None:
    # high 100, medium 80, low 2: by the next largest level every level is held to 0.9 x 80 = 72, so high and medium
    # both go to 72 (without by_next: 1.5 x max(2, 30) = 45 for both)
    candidates = [*_many(WRONG, 100), *_many(SPLIT, 80), *_many(RIGHT, 2)]
    caps = {(WRONG, "s"): 1000, (SPLIT, "s"): 1000, (RIGHT, "s"): 1000}
    kept = sample(candidates, {"s": {"3": 1.0}}, caps, 0, by_next=frozenset({"s"}))
    assert Counter(c.category for c in kept) == {WRONG: 72, SPLIT: 72, RIGHT: 2}
    kept = sample(candidates, {"s": {"3": 1.0}}, caps, 0)
    assert Counter(c.category for c in kept) == {WRONG: 45, SPLIT: 45, RIGHT: 2}


def test_a_unit_of_one_thinned_case_or_of_thinned_categories_only_is_kept_whole() -> None:
    one = _many(RIGHT, 1, difficulty="bio")
    assert matched(one, {"s": frozenset({RIGHT})}, 0) == one
    # two thinned categories and nothing else: no target to thin to, both kept whole
    both = [*_many(RIGHT, 3, difficulty="bio"), *_many(SPLIT, 4, difficulty="law")]
    kept = Counter(c.category for c in matched(both, {"s": frozenset({RIGHT, SPLIT})}, 0))
    assert kept == {RIGHT: 3, SPLIT: 4}


def test_a_source_that_tells_no_difficulty_is_kept_whole() -> None:
    # every difficulty "": the target {"": 10} says nothing, so 50 agreement cases stay 50 (not 1 x 10)
    group = [*_many(WRONG, 10), *_many(RIGHT, 50)]
    kept = Counter(c.category for c in matched(group, {"s": frozenset({RIGHT})}, 0))
    assert kept == {WRONG: 10, RIGHT: 50}


def test_a_bin_of_exactly_min_bin_of_the_target_binds() -> None:
    # target a: 19, b: 1 (b is 1/20 = MIN_BIN exactly, so it binds). The category has a: 38, b: 1: a allows 2x,
    # b allows 1x: the multiple is 1, so 19 a and 1 b are kept
    assert MIN_BIN == 0.05
    target = Counter({"a": 19, "b": 1})
    group = [*_many(RIGHT, 38, difficulty="a"), *_many(RIGHT, 1, difficulty="b")]
    assert Counter(c.difficulty for c in _thin(group, target, random.Random(0))) == {"a": 19, "b": 1}


def test_a_bin_under_min_bin_does_not_bind() -> None:
    # target a: 40, b: 1 (1/41 < 5%): only a binds, at 80 / 40 = 2x: 80 a and round(2 x 1) = 2 b, of which 1 exists
    target = Counter({"a": 40, "b": 1})
    group = [*_many(RIGHT, 80, difficulty="a"), *_many(RIGHT, 1, difficulty="b")]
    assert Counter(c.difficulty for c in _thin(group, target, random.Random(0))) == {"a": 80, "b": 1}


def test_with_nothing_binding_the_least_multiple_applies() -> None:
    # target a: 40, b: 1; the category holds no a and 5 b, and b (under 5%) does not bind: the multiple is
    # MIN_MULTIPLE = 0.25, so round(0.25 x 1) = 0 b are kept (and no a: there are none)
    target = Counter({"a": 40, "b": 1})
    assert _thin(_many(RIGHT, 5, difficulty="b"), target, random.Random(0)) == []


def test_a_stratum_with_no_share_sets_no_bound_on_what_a_group_can_give() -> None:
    group = [*_many(WRONG, 10, "3"), *_many(WRONG, 2, "4")]
    # stratum 4 has a share of 0: only stratum 3 counts, 10 items at a share of 1: 10
    assert possible(group, {"3": 1.0, "4": 0.0}) == 10


def test_a_risk_level_sums_its_categories() -> None:
    # high = echo 100 + majority wrong 100 = 200, low 80: most 1.5 x 80 = 120; each high category is cut in
    # proportion, to int(100 x 120 / 200) = 60
    totals = {("echo_cascade", "s"): 100, (WRONG, "s"): 100, (RIGHT, "s"): 80}
    assert balanced(totals) == {("echo_cascade", "s"): 60, (WRONG, "s"): 60, (RIGHT, "s"): 80}


def test_the_scarcest_stratum_chooses_first() -> None:
    # stratum a holds items i1..i4, stratum b only i1 and i2; two of each are wanted. b, the scarcer, chooses
    # first and takes i1 and i2, so a takes i3 and i4: four distinct items whatever the draw
    group = [*(Candidate("c", "s", "a", f"i{k}", {}) for k in range(1, 5)),
             *(Candidate("c", "s", "b", f"i{k}", {}) for k in (1, 2))]  # fmt: skip
    for seed in range(5):
        kept = sample_group(group, {"a": 0.5, "b": 0.5}, 4, random.Random(seed))
        assert sorted((c.stratum, c.item) for c in kept) == [("a", "i3"), ("a", "i4"), ("b", "i1"), ("b", "i2")]


def test_the_seed_reaches_the_difficulty_thinning_through_sample() -> None:
    # caps large enough to keep every case: only the thinning draws (40 of 200 agreement biology cases, as in the
    # test above), so another seed keeps other cases
    candidates = [*_many(WRONG, 40, difficulty="bio"), *_many(WRONG, 40, difficulty="law"),
                  *_many(RIGHT, 200, difficulty="bio"), *_many(RIGHT, 40, difficulty="law")]  # fmt: skip
    caps = {(WRONG, "s"): 1000, (RIGHT, "s"): 1000}
    thin = {"s": frozenset({RIGHT})}
    kept = [{c.item for c in sample(candidates, {"s": {"3": 1.0}}, caps, s, thinned=thin)} for s in (0, 1)]
    assert len(kept[0]) == len(kept[1]) == 160 and kept[0] != kept[1]


def test_thinning_rounds_each_bin_to_the_nearest_case() -> None:
    # target easy 3, hard 1; the category holds 2 easy and 2 hard: easy allows 2/3, hard 2/1, so the multiple is
    # 2/3: easy round(2/3 x 3) = 2, hard round(2/3 x 1) = round(0.667) = 1 (not cut down to 0)
    target = Counter({"easy": 3, "hard": 1})
    group = [*_many(RIGHT, 2, difficulty="easy"), *_many(RIGHT, 2, difficulty="hard")]
    assert Counter(c.difficulty for c in _thin(group, target, random.Random(0))) == {"easy": 2, "hard": 1}


def test_what_a_group_can_give_is_cut_down_to_whole_cases() -> None:
    # 5 items at a share of 0.3 allow 5 / 0.3 = 16.7 cases, so 16 (not 17); the other stratum (100 at 0.7: 142)
    # allows more
    group = [*_many(WRONG, 5, "small"), *_many(WRONG, 100, "large")]
    assert possible(group, {"small": 0.3, "large": 0.7}) == 16


def test_each_stratum_takes_its_share_of_the_total_rounded() -> None:
    # total 5 over three equal strata of 10 items: each takes round(5 / 3) = round(1.67) = 2, six in all
    group = [*_many(WRONG, 10, "a", prefix="a"), *_many(WRONG, 10, "b", prefix="b"), *_many(WRONG, 10, "c", prefix="c")]
    kept = sample_group(group, {"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, 5, random.Random(0))
    assert Counter(c.stratum for c in kept) == {"a": 2, "b": 2, "c": 2}


def test_an_odd_number_wanted_from_two_splits_is_one_from_each_and_one_more() -> None:
    # want 3 of a pool of 10 (5 dev, 5 test): 3 // 2 = 1 from each split, then one more in pool order: 3 in all
    group = _many(WRONG, 10)
    split = {c.item: "dev" if int(c.item.rsplit("-", 1)[1]) < 5 else "test" for c in group}
    kept = sample_group(group, {"3": 1.0}, 3, random.Random(0), split)
    assert len(kept) == 3 and len({c.item for c in kept}) == 3
    assert sorted(Counter(split[c.item] for c in kept).values()) == [1, 2]
