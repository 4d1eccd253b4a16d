"""Matching agreement structure: the right-consensus cases of a cell take the shapes of its wrong-consensus ones.
Every expectation below is worked out by hand from the cases written here (each answer four characters long, so
every case falls in one length bin)."""

from __future__ import annotations

from collections import Counter

from fcb_datasets.realdata.cases import Candidate, majority_label
from fcb_datasets.realdata.structure import match, shape

SPLIT: dict[str, str] = {}


def _case(category: str, values: list[int], item: str, split: str = "test", stratum: str = "3") -> Candidate:
    SPLIT[item] = split
    answers = [{"text": f"A: {v}"} for v in values]
    case = {"answers": answers, "id": item, "majority_correct": majority_label(category)}
    return Candidate(category, "src", stratum, item, case)


def _shapes(kept: list[Candidate], category: str) -> Counter[str]:
    return Counter(shape(c) for c in kept if c.category == category)


def test_shape_counts_answers_top_distinct_and_unread() -> None:
    assert shape(_case("genuine_agreement_correct", [1, 1, 2], "i0")) == "3:2:2:0"
    assert shape(_case("genuine_agreement_correct", [1, 1, 1], "i1")) == "3:3:1:0"


def test_right_consensus_takes_the_shapes_of_wrong_consensus() -> None:
    high = [_case("lone_correct_dissenter", [1, 1, 2], f"h{i}") for i in range(2)]
    high.append(_case("majority_wrong_fact", [5, 5, 5], "h2"))
    low = [_case("genuine_agreement_correct", [1, 1, 1], f"l{i}") for i in range(3)]  # all unanimous
    spare = [_case("genuine_agreement_correct", [3, 3, 4], f"s{i}") for i in range(4)]
    spare += [_case("genuine_agreement_correct", [3, 3, 3], f"u{i}") for i in range(4)]
    medium = [_case("genuine_disagreement", [1, 2, 3], "m0")]
    kept = match([*high, *low, *medium], [*high, *low, *medium, *spare], SPLIT, seed=0)
    # three high, three low (ratio 1): two with one dissenter, one unanimous, on each side
    assert _shapes(kept, "lone_correct_dissenter") + _shapes(kept, "majority_wrong_fact") == Counter(
        {"3:2:2:0": 2, "3:3:1:0": 1}
    )
    assert _shapes(kept, "genuine_agreement_correct") == Counter({"3:2:2:0": 2, "3:3:1:0": 1})
    kept_low = [c.item for c in kept if c.category == "genuine_agreement_correct" and shape(c) == "3:3:1:0"]
    assert kept_low[0].startswith("l")  # a case already kept is kept before a spare one of the same shape
    assert [c.item for c in kept if c.category == "genuine_disagreement"] == ["m0"]  # medium untouched


def test_a_wrong_consensus_shape_without_enough_mirrors_is_cut_to_what_they_allow() -> None:
    high = [_case("lone_correct_dissenter", [1, 1, 2], f"h{i}") for i in range(3)]
    low = [_case("genuine_agreement_correct", [1, 1, 1], f"l{i}") for i in range(3)]
    spare = [_case("genuine_agreement_correct", [3, 3, 4], "s0")]  # one mirror only
    kept = match([*high, *low], [*high, *low, *spare], SPLIT, seed=0)
    # ratio 1: one high case of the shape for its one mirror; the unanimous low cases have no high case to mirror
    assert _shapes(kept, "lone_correct_dissenter") == Counter({"3:2:2:0": 1})
    assert _shapes(kept, "genuine_agreement_correct") == Counter({"3:2:2:0": 1})


def test_cells_are_matched_apart_by_split_and_an_item_is_used_once_per_category() -> None:
    dev_high = _case("lone_correct_dissenter", [1, 1, 2], "a", "dev")
    dev_low = _case("genuine_agreement_correct", [1, 1, 1], "b", "dev")  # no mirror in its cell: both go
    high3 = _case("lone_correct_dissenter", [1, 1, 2], "h3")
    low3 = _case("genuine_agreement_correct", [3, 3, 4], "x")  # mirrors h3 in the panel of three
    high4 = _case("lone_correct_dissenter", [1, 1, 1, 2], "h4", stratum="4")
    low4 = _case("genuine_agreement_correct", [3, 3, 3, 3], "y", stratum="4")
    other_panel = _case("genuine_agreement_correct", [3, 3, 3, 4], "x", stratum="4")  # item x again: not usable
    kept = [dev_high, dev_low, high3, low3, high4, low4]
    assert sorted(c.item for c in match(kept, [*kept, other_panel], SPLIT, seed=0)) == ["h3", "x"]


def test_a_right_consensus_on_a_note_is_a_mirror_and_no_consensus_is_left_alone() -> None:
    """correct_but_unsupported is a right consensus (medium risk): it stands on the right side."""
    wrong = [_case("anchoring_injected_premise", [1, 1, 2], "w0"), _case("echo_cascade", [4, 4, 4], "w1")]
    right = [_case("correct_but_unsupported", [1, 1, 2], "r0"), _case("genuine_agreement_correct", [3, 3, 3], "r1")]
    medium = [_case("genuine_disagreement", [1, 2, 3], "m0")]
    kept = match([*wrong, *right, *medium], [*wrong, *right, *medium], SPLIT, seed=0)
    assert sorted(c.item for c in kept) == ["m0", "r0", "r1", "w0", "w1"]  # already matched: nothing moves


def test_a_category_short_of_mirrors_leaves_its_share_to_another() -> None:
    wrong = [_case("lone_correct_dissenter", [1, 1, 2], f"w{i}") for i in range(2)]
    right = [_case("genuine_agreement_correct", [3, 3, 3], "a0"), _case("correct_but_unsupported", [3, 3, 3], "b0")]
    spare = [_case("genuine_agreement_correct", [3, 3, 4], f"a{i}") for i in (1, 2)]  # no such note case
    kept = match([*wrong, *right], [*wrong, *right, *spare], SPLIT, seed=0)
    # ratio 1, each category owed half of the two mirrors; correct_but_unsupported has none of the shape, so both
    # come from genuine_agreement_correct; the unanimous right cases mirror no wrong case and go
    assert sorted(c.item for c in kept) == ["a1", "a2", "w0", "w1"]
