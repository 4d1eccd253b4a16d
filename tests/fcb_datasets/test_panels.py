"""The category a panel's answers show (the label scheme's 60% rule) and when an unreadable answer leaves it in
doubt, held to counts worked out by hand: 3 of 5 is exactly 60%, 5 of 10 is below it."""

from __future__ import annotations

import pytest

from fcb_datasets.realdata.panels import Panel, Reading, meets, panel_category, too_unreadable


def right() -> Reading:
    return Reading("m", "18", "n:18", True)


def wrong(key: str) -> Reading:
    return Reading("m", key, key, False)


def unread(silent: bool = False) -> Reading:
    return Reading("m", "...", None, False, silent)


@pytest.mark.parametrize(
    ("count", "total", "held"),
    [(3, 5, True), (2, 5, False), (6, 10, True), (5, 10, False), (3, 4, True), (2, 4, False), (1, 1, True),
     (0, 1, False), (0, 0, True)],
)  # fmt: skip
def test_sixty_percent_in_whole_numbers(count: int, total: int, held: bool) -> None:
    # 5 * count >= 3 * total: 15 >= 15 for 3 of 5; 25 < 30 for 5 of 10; 10 < 12 for 2 of 4
    assert meets(count, total) is held


def test_more_than_a_quarter_unreadable_is_too_many() -> None:
    assert not too_unreadable([unread(), right(), right(), right()])  # 1 of 4: exactly a quarter
    assert too_unreadable([unread(), unread(), right(), right(), right(), right(), right()])  # 2 of 7 > 1/4
    assert not too_unreadable([unread(), unread(), *[right()] * 6])  # 2 of 8: exactly a quarter
    assert not too_unreadable([])
    assert too_unreadable([unread(silent=True)])  # silent or not, it states no value


@pytest.mark.parametrize(
    ("readings", "numeric", "category"),
    [
        ([right(), right(), right(), wrong("a"), wrong("b")], True, "genuine_agreement_correct"),  # 3 of 5 right
        ([right(), right(), wrong("a"), wrong("a"), wrong("a")], True, "numeric_consensus_error"),  # 3 of 5 on a
        ([right(), right(), wrong("a"), wrong("a"), wrong("a")], False, "majority_wrong_fact"),  # not a number
        ([right(), wrong("a"), wrong("a"), wrong("a")], True, "lone_correct_dissenter"),  # one right, 3 of 4 on a
        ([right(), wrong("a"), wrong("a"), wrong("a")], False, "lone_correct_dissenter"),
        ([wrong("a"), wrong("a"), wrong("a"), wrong("b"), wrong("c")], True, "numeric_consensus_error"),  # none right
        ([right(), right(), wrong("a"), wrong("a"), wrong("b")], True, "genuine_disagreement"),  # 2, 2, 1 of 5
        ([right(), wrong("a"), wrong("a"), wrong("b"), wrong("b")], True, "genuine_disagreement"),
        # 5 of 10 right is below 60%, and 5 on one wrong value too
        ([*[right()] * 5, *[wrong("a")] * 5], True, "genuine_disagreement"),
        ([*[right()] * 6, *[wrong("a")] * 4], True, "genuine_agreement_correct"),  # 6 of 10
        ([right()], True, "genuine_agreement_correct"),  # one answer, right
    ],
)
def test_the_category_by_the_sixty_percent_rule(readings: list[Reading], numeric: bool, category: str) -> None:
    assert panel_category(readings, numeric) == category


def test_an_unreadable_answer_leaves_the_category_only_when_no_reading_changes_it() -> None:
    # 3 of 5 right already: read as right (4 of 5) or as joining a (a: 2 of 5) it stays agreement
    assert panel_category([right(), right(), right(), wrong("a"), unread()], True) == "genuine_agreement_correct"
    # 4 of 5 on a, none right: numeric_consensus_error; read as right, the unreadable answer is the one right
    # answer against 4 of 5 on a: lone_correct_dissenter, a change, so no category
    assert panel_category([wrong("a"), wrong("a"), wrong("a"), wrong("a"), unread()], True) is None


def test_an_unreadable_answer_that_would_tip_the_category_gives_no_category() -> None:
    # 2 right, 2 on a: disagreement; read as right it makes 3 of 5 (agreement), read as a, 3 of 5 on a
    assert panel_category([right(), right(), wrong("a"), wrong("a"), unread()], True) is None


def test_a_silent_answer_is_no_doubt() -> None:
    # the same panel with a silent answer (cut off, looping): it names no value, so it counts as an answer but
    # reads as nothing else: 2, 2, 1 of 5 is disagreement
    assert panel_category([right(), right(), wrong("a"), wrong("a"), unread(silent=True)], True) == (
        "genuine_disagreement"
    )


def test_an_unreadable_answer_read_as_a_wrong_value_of_its_own() -> None:
    # 2 right, a, b, and one unreadable: disagreement. Read right: 3 of 5 (agreement): in doubt
    assert panel_category([right(), right(), wrong("a"), wrong("b"), unread()], True) is None
    # 1 right, a, b, c, unreadable (n=5): read right, 2 of 5; read as a, 2 of 5 on a; no reading reaches 60%
    assert panel_category([right(), wrong("a"), wrong("b"), wrong("c"), unread()], True) == "genuine_disagreement"


def test_two_unreadable_answers_together_can_make_a_wrong_majority() -> None:
    # 1 right, a, b, and two unreadable (n=5): disagreement as read. Both read as a: a holds 3 of 5 with one
    # right answer: lone_correct_dissenter, so the category hangs on them
    assert panel_category([right(), wrong("a"), wrong("b"), unread(), unread()], True) is None
    # with no wrong value read at all (1 right, 4 unreadable would be too unreadable; here 3 right, 2 unreadable
    # of 5): read as one new wrong value both make 2 of 5, read right 5 of 5: agreement stays
    assert panel_category([right(), right(), right(), unread(), unread()], True) == "genuine_agreement_correct"


def test_unreadable_answers_with_no_wrong_value_can_form_a_wrong_value_together() -> None:
    # 2 right and 3 unreadable of 5, no wrong value read (top 0): as read, disagreement; the three read as one
    # new wrong value hold 3 of 5: numeric_consensus_error, so in doubt
    assert panel_category([right(), right(), unread(), unread(), unread()], True) is None


def test_a_panels_size_is_its_models() -> None:
    assert Panel("p", ("a", "b", "c")).size == 3
    assert Panel("empty", ()).size == 0


def test_silent_answers_are_never_a_wrong_value_of_their_own() -> None:
    # one right, one on a, three silent (n=5): 1, 1 and nothing else: disagreement, not three "no value" answers
    # holding 60% against a lone right one
    silent = [unread(silent=True)] * 3
    assert panel_category([right(), wrong("a"), *silent], True) == "genuine_disagreement"
    # one silent answer alone: no value at all, nothing held: disagreement
    assert panel_category([unread(silent=True)], True) == "genuine_disagreement"


def test_an_unreadable_answer_joining_the_largest_wrong_value_is_a_reading_too() -> None:
    # 1 right, 2 on a, 1 on b, one unreadable (n=5): disagreement. Read as right: 2 of 5, still disagreement; read as
    # a: 3 of 5 on a against one right answer, a lone correct dissenter: in doubt
    assert panel_category([right(), wrong("a"), wrong("a"), wrong("b"), unread()], True) is None


def test_a_wrong_majority_stays_when_no_reading_of_an_unreadable_answer_moves_it() -> None:
    # 2 right, 6 on a, one unreadable (n=9): 6 of 9 on a is 60% or more (30 >= 27), two right: numeric error.
    # Read as right: 3 right (15 < 27), a still 6: numeric error; read as a: 7 of 9, numeric error. It stays; a
    # reading that counted fewer on a than the panel holds (as if a's answers were unread) would call it in doubt
    panel = [*[wrong("a")] * 6, right(), right(), unread()]
    assert panel_category(panel, True) == "numeric_consensus_error"


def test_unreadable_answers_all_read_as_right_are_a_reading_too() -> None:
    # 2 right, 2 silent, one unreadable (n=5), no wrong value: disagreement as read; the unreadable one read as
    # right makes 3 of 5: agreement, so in doubt
    assert panel_category([right(), right(), unread(silent=True), unread(silent=True), unread()], True) is None
