"""Matching agreement structure, rule by rule: the length bins and their cuts, the cells we wrote left alone, cells
with one side only, and the arithmetic that shares a shape's mirrors out (`_cell`, `_share_out`), driven directly with
shapes given by hand so that every count can be worked out in the comment beside it."""

from __future__ import annotations

import random
from collections import Counter

from fcb_datasets.realdata.cases import Candidate, majority_label
from fcb_datasets.realdata.structure import _cell, _distinct, _length, _length_cuts, _share_out, match, shape

RIGHT, NOTE, WRONG, SPLIT = (
    "genuine_agreement_correct", "correct_but_unsupported", "lone_correct_dissenter", "genuine_disagreement",
)  # fmt: skip
UNREAD = "y " * 200  # longer than a short answer read whole (300 characters), and no number in it: no value


def _case(category: str, values: list[int], item: str, pad: int = 0, recipe: str = "", unread: int = 0,
          split: dict[str, str] | None = None, part: str = "test") -> Candidate:  # fmt: skip
    """A case whose answers state ``values`` ("A: v" lines, each after ``pad`` characters), ``unread`` more with
    no value; its item goes to ``part`` of ``split``."""
    answers = [{"text": "w" * pad + f"\nA: {v}"} for v in values] + [{"text": UNREAD}] * unread
    if split is not None:
        split[item] = part
    case = {"answers": answers, "id": item, "majority_correct": majority_label(category)}
    return Candidate(category, "src", "3", item, case, recipe)


def test_any_number_of_answers_without_a_value_is_one_flag() -> None:
    # 1, 1 and two with no value: 4 answers, 2 on the top value, 1 distinct, unread flagged 1 (not 2)
    assert shape(_case(RIGHT, [1, 1], "i", unread=2)) == "4:2:1:1"


def test_a_cases_length_is_the_mean_of_its_answers() -> None:
    # answers of 4 + 1 + 4 = 9 and 6 + 1 + 4 = 11 characters ("w" * pad, a newline, "A: 7"): mean 10
    case = Candidate(RIGHT, "src", "3", "i", {"answers": [{"text": "wwww\nA: 7"}, {"text": "wwwwww\nA: 7"}]})
    assert _length(case) == 10.0


def test_length_cuts_come_from_real_consensus_cases_only() -> None:
    split: dict[str, str] = {}
    # real consensus cases of mean length 10, 20 and 30 (pad 5, 15, 25 plus "\nA: 1"): sorted [10, 20, 30],
    # cuts at found[3 * 1 // 3] = 20 and found[3 * 2 // 3] = 30
    kept = [_case(WRONG, [1, 1, 2], "w", pad=5, split=split), _case(RIGHT, [1, 1, 1], "r1", pad=15, split=split),
            _case(RIGHT, [1, 1, 1], "r2", pad=25, split=split),
            _case(SPLIT, [1, 2, 3], "m", pad=995, split=split),  # no consensus: not counted
            _case(NOTE, [1, 1, 1], "n", pad=4995, recipe="note", split=split)]  # ours: not counted  # fmt: skip
    cuts = _length_cuts(kept, split)
    assert cuts[("src", "test")] == [20.0, 30.0]
    assert cuts[("src", "dev")] == []  # a source and split with no real consensus case: no cut


def test_a_case_exactly_on_a_cut_falls_in_the_bin_below() -> None:
    split: dict[str, str] = {}
    # kept: a wrong case of mean length 20 and a unanimous right one of 30: cuts [found[0], found[1]] = [20, 30].
    # The wrong case sits on the cut 20: bin 0 (a bin counts the cuts a length is above). Its mirrors: s1 of length
    # 15 (bin 0) and s2 of length 25 (bin 1): s1 is its mirror
    wrong = _case(WRONG, [1, 1, 2], "w", pad=15, split=split)
    right = _case(RIGHT, [3, 3, 3], "r", pad=25, split=split)
    s1 = _case(RIGHT, [3, 3, 4], "s1", pad=10, split=split)
    s2 = _case(RIGHT, [3, 3, 4], "s2", pad=20, split=split)
    kept = match([wrong, right], [wrong, right, s1, s2], split, seed=0)
    assert sorted(c.item for c in kept) == ["s1", "w"]


def test_the_cells_we_wrote_are_left_as_sampling_chose_them() -> None:
    split: dict[str, str] = {}
    # a recipe's cells (dev and test): a wrong and a right claim of other shapes, which real cells would cut;
    # they stay. A real cell after them (test) is matched as usual: its unanimous right case mirrors nothing
    ours = [_case("echo_cascade", [1, 1, 2], "e1", recipe="echo", split=split, part="dev"),
            _case(NOTE, [4, 4, 4], "e2", recipe="echo", split=split, part="dev"),
            _case("echo_cascade", [1, 1, 2], "e3", recipe="echo", split=split),
            _case(NOTE, [4, 4, 4], "e4", recipe="echo", split=split)]  # fmt: skip
    real = [_case(WRONG, [1, 1, 2], "w", split=split), _case(RIGHT, [3, 3, 3], "r", split=split)]
    spare = _case(RIGHT, [3, 3, 4], "s", split=split)
    kept = match([*ours, *real], [*ours, *real, spare], split, seed=0)
    assert sorted(c.item for c in kept) == ["e1", "e2", "e3", "e4", "s", "w"]


def test_a_cell_with_one_side_only_is_left_as_it_is() -> None:
    split: dict[str, str] = {}
    # dev holds a wrong case and no right one; test a right case and no wrong one; the global ratio is 1 (one
    # of each): each cell has nothing to match against, and both stay
    wrong = _case(WRONG, [1, 1, 2], "w", split=split, part="dev")
    right = _case(RIGHT, [3, 3, 3], "r", split=split)
    assert sorted(c.item for c in match([wrong, right], [wrong, right], split, seed=0)) == ["r", "w"]


def test_no_wrong_consensus_at_all_leaves_everything() -> None:
    split: dict[str, str] = {}
    kept = [_case(RIGHT, [3, 3, 3], "r", split=split), _case(SPLIT, [1, 2, 3], "m", split=split)]
    assert sorted(c.item for c in match(kept, kept, split, seed=0)) == ["m", "r"]


def test_the_same_candidate_offered_twice_is_chosen_once() -> None:
    split: dict[str, str] = {}
    wrong = [_case(WRONG, [1, 1, 2], f"w{i}", split=split) for i in range(2)]
    right = [_case(RIGHT, [3, 3, 3], f"r{i}", split=split) for i in range(2)]
    spare = _case(RIGHT, [3, 3, 4], "s", split=split)
    # ratio 1, two wrong cases of one shape and one mirror (offered twice): one wrong case and the mirror once
    kept = match([*wrong, *right], [*wrong, *right, spare, spare], split, seed=0)
    assert Counter(c.category for c in kept) == {WRONG: 1, RIGHT: 1}
    assert [c.item for c in kept if c.category == RIGHT] == ["s"]
    assert _distinct([spare, spare], set()) == [spare]
    assert _distinct([spare], {(RIGHT, "src", "s")}) == []  # already used


def _given(category: str, item: str, shape_name: str) -> Candidate:
    return Candidate(category, "src", "3", item, {"shape": shape_name, "majority_correct": majority_label(category)})


def _by_shape(c: Candidate) -> str:
    return str(c.case["shape"])


def test_a_cell_keeps_what_the_mirrors_allow_at_the_ratio_and_carries_the_rest() -> None:
    """Ratio 1.5. Wrong: two of shape A, two of shape B; one right case kept (shape Z, which mirrors nothing).
    Spare right cases: two of shape A, five of shape B.
    - A: 2 mirrors allow int(2 / 1.5) = 1 wrong case; due 1 x 1.5 = 1.5, take min(2, round(1.5) = 2) = 2, due -0.5.
    - B: 5 mirrors allow int(5 / 1.5) = 3, so both wrong cases; due -0.5 + 2 x 1.5 = 2.5, take round(2.5) = 2
      (round half to even), due 0.5.
    Kept: 1 + 2 wrong, 2 + 2 right; the right case of shape Z goes."""
    wrong = [_given(WRONG, f"a{i}", "A") for i in range(2)] + [_given(WRONG, f"b{i}", "B") for i in range(2)]
    kept = [*wrong, _given(RIGHT, "z", "Z")]
    spare = [_given(RIGHT, f"sa{i}", "A") for i in range(2)] + [_given(RIGHT, f"sb{i}", "B") for i in range(5)]
    out = _cell(kept, spare, _by_shape, set(), random.Random(0), 1.5)
    assert Counter((c.category, _by_shape(c)) for c in out) == {
        (WRONG, "A"): 1, (WRONG, "B"): 2, (RIGHT, "A"): 2, (RIGHT, "B"): 2,
    }  # fmt: skip


def test_a_cell_shares_mirrors_by_the_categories_weights() -> None:
    """Ratio 1; right kept: three agreement cases and one on a note (shape Z): weights 3/4 and 1/4. Wrong: four of
    shape A. Spare of shape A: four agreement, four note cases. keep = min(4, int(8 / 1)) = 4, take 4: agreement is
    owed 4 x 3/4 = 3, the note 4 x 1/4 = 1: three and one."""
    kept = [*(_given(WRONG, f"w{i}", "A") for i in range(4)), *(_given(RIGHT, f"r{i}", "Z") for i in range(3)),
            _given(NOTE, "n", "Z")]  # fmt: skip
    spare = [*(_given(RIGHT, f"sr{i}", "A") for i in range(4)), *(_given(NOTE, f"sn{i}", "A") for i in range(4))]
    out = _cell(kept, spare, _by_shape, set(), random.Random(0), 1.0)
    assert Counter(c.category for c in out) == {WRONG: 4, RIGHT: 3, NOTE: 1}


def test_share_out_gives_what_each_is_owed_and_carries_the_remainder() -> None:
    mirrors = {"a": list(range(5)), "b": list(range(5))}
    owed = {"a": 0.0, "b": 0.0}
    # take 3, weights 1/2: each owed 1.5; a tie, so by name: a gets round(1.5) = 2, b what is left, 1
    assert _share_out(3, mirrors, {"a": 0.5, "b": 0.5}, owed) == {"a": 2, "b": 1}  # type: ignore[arg-type]
    assert owed == {"a": -0.5, "b": 0.5}
    # take 2 more: a owed -0.5 + 1 = 0.5, b 0.5 + 1 = 1.5: b first gets 2, a round(0.5) = 0 of nothing left
    assert _share_out(2, mirrors, {"a": 0.5, "b": 0.5}, owed) == {"a": 0, "b": 2}  # type: ignore[arg-type]
    assert owed == {"a": 0.5, "b": -0.5}


def test_share_out_serves_the_most_owed_first() -> None:
    mirrors = {"a": list(range(5)), "b": list(range(5))}
    # owed before: a 0, b 0.5; take 2 at 1/2 each: a 1.0, b 1.5. b first: round(1.5) = 2, a nothing left
    owed = {"a": 0.0, "b": 0.5}
    assert _share_out(2, mirrors, {"a": 0.5, "b": 0.5}, owed) == {"a": 0, "b": 2}  # type: ignore[arg-type]
    # owed before: a 0.5, b 0; a 1.5, b 1.0: a first gets 2, b nothing left (served the other way, 1 and 1)
    owed = {"a": 0.5, "b": 0.0}
    assert _share_out(2, mirrors, {"a": 0.5, "b": 0.5}, owed) == {"a": 2, "b": 0}  # type: ignore[arg-type]


def test_share_out_makes_up_a_shortfall_from_those_with_mirrors_left() -> None:
    # take 4, owed 2 each; a has one mirror: a 1, b round(2) = 2; 1 short, made up by b (3 left): a 1, b 3
    owed = {"a": 0.0, "b": 0.0}
    given = _share_out(4, {"a": [0], "b": list(range(5))}, {"a": 0.5, "b": 0.5}, owed)  # type: ignore[arg-type]
    assert given == {"a": 1, "b": 3}
    assert owed == {"a": 1.0, "b": -1.0}
    # nobody is given more than it has: take 4 from one mirror and two mirrors
    owed = {"a": 0.0, "b": 0.0}
    given = _share_out(4, {"a": [0], "b": [0, 1]}, {"a": 0.5, "b": 0.5}, owed)  # type: ignore[arg-type]
    assert given == {"a": 1, "b": 2}


def test_share_out_never_counts_mirrors_a_category_lacks() -> None:
    # take 3; owed before a 0, b 0.2, so a 1.5 and b 1.7 after: b first gets round(1.7) = 2, a (no mirror) 0,
    # and the one short comes from b: b 3. Counting a as given round(1.5) it lacks would leave b at 2 and the
    # take one short
    owed = {"a": 0.0, "b": 0.2}
    given = _share_out(3, {"a": [], "b": list(range(5))}, {"a": 0.5, "b": 0.5}, owed)  # type: ignore[arg-type]
    assert given == {"a": 0, "b": 3}


def test_the_same_seed_matches_the_same_cases() -> None:
    split: dict[str, str] = {}
    wrong = [_case(WRONG, [1, 1, 2], f"w{i}", split=split) for i in range(3)]
    right = [_case(RIGHT, [3, 3, 3], f"r{i}", split=split) for i in range(3)]
    spare = [_case(RIGHT, [3, 3, 4], f"s{i}", split=split) for i in range(20)]
    # three mirrors wanted of twenty spare: which three is the seed's draw, the same every time
    runs = [[c.item for c in match([*wrong, *right], [*wrong, *right, *spare], split, seed=s)] for s in (0, 0, 1)]
    assert len(runs[0]) == 6 and runs[0] == runs[1] != runs[2]


def test_the_ratio_is_right_over_wrong() -> None:
    split: dict[str, str] = {}
    # one cell: 2 wrong and 4 right cases, all of one shape. The ratio is 4 / 2 = 2: the four right cases mirror
    # 4 / 2 = 2 wrong ones, so both stay (keep 2), due 2 x 2 = 4, and all four right cases stay
    wrong = [_case(WRONG, [1, 1, 2], f"w{i}", split=split) for i in range(2)]
    right = [_case(RIGHT, [3, 3, 4], f"r{i}", split=split) for i in range(4)]
    kept = match([*wrong, *right], [*wrong, *right], split, seed=0)
    assert Counter(c.category for c in kept) == {WRONG: 2, RIGHT: 4}
