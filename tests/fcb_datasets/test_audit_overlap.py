"""What TRAIN and TEST share, and what each file is made of (fcb_datasets/audit/overlap.py), on a few hand-made cases.

Shared source items, identical questions and reused answers are counted by hand in each test; near-duplicate
questions are held to a TF-IDF cosine computed here from its definition (1-2-grams, sublinear tf, smoothed idf, L2
rows), with the pairs over 0.8 named by hand.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import pytest

from fcb_datasets.audit.overlap import ANSWER_REUSE, LISTED, NEAR_DUPLICATE, _ref, composition, overlap
from fcb_datasets.audit.view import CaseView

_serial = itertools.count(1)


def view(file: str, question: str, item: str, answers: tuple[str, ...] = ("yes", "no"), category: str = "echo_cascade",
         source: str = "src", origin: str = "natural", evidence: bool = False) -> CaseView:  # fmt: skip
    i = next(_serial)
    return CaseView(file=file, line=i, case_id=f"c{i}", category=category, question=question, answers=answers,  # type: ignore[arg-type]
                    source_dataset=source, source_identity=f"{source}:{item}", origin=origin,  # type: ignore[arg-type]
                    has_evidence=evidence)  # fmt: skip


def cosines(questions: list[str]) -> dict[tuple[int, int], float]:
    """TF-IDF cosine of every pair, from the definition: terms are words and word pairs; weight (1 + ln tf) *
    (ln((1 + n) / (1 + df)) + 1); rows scaled to length 1."""
    docs = []
    for q in questions:
        w = re.findall(r"\w+", q.lower())
        docs.append(Counter(w + [f"{a} {b}" for a, b in itertools.pairwise(w)]))
    n, df = len(docs), Counter(t for d in docs for t in d)
    vecs = []
    for d in docs:
        v = {t: (1 + math.log(c)) * (math.log((1 + n) / (1 + df[t])) + 1) for t, c in d.items()}
        norm = math.sqrt(sum(x * x for x in v.values()))
        vecs.append({t: x / norm for t, x in v.items()})
    return {(i, j): sum(x * vecs[j].get(t, 0.0) for t, x in vecs[i].items())
            for i in range(n) for j in range(i + 1, n)}  # fmt: skip


BOIL = "what is the boiling point of water at sea level"


def sample() -> tuple[list[CaseView], list[CaseView]]:
    train = [
        view("train", BOIL, "1", ("100 C", "90 C")),  # 0
        view("train", "who wrote hamlet", "2", ("Shakespeare", "Marlowe")),  # 1
        view("train", "Who  wrote HAMLET", "3", ("shakespeare ", "Bacon")),  # 2: identical to 1 once normalised
        view("train", "how far is the moon", "4", ("far", "near")),  # 3
    ]
    test = [
        view("test", BOIL + " today", "5", ("100 c", "90 c", "80 c", "70 c")),  # 4
        view("test", BOIL + " in kelvin", "1", ("373 K", "300 K")),  # 5: the same source item as 0
        view("test", "who wrote hamlet?!", "6", ("Kyd", "Jonson")),  # 6: hamlet again, punctuation apart
    ]
    return train, test


def test_the_thresholds() -> None:
    assert (NEAR_DUPLICATE, ANSWER_REUSE, LISTED) == (0.8, 0.5, 20)


def test_shared_source_items_count_items_and_their_test_cases() -> None:
    # source item src:1 is in TRAIN (case 0) and TEST (case 5): one item, one TEST case
    train, test = sample()
    got = overlap(train, test)
    assert got["shared_source_items"] == {"count": 1, "test_cases": 1, "listed": ["src:1"]}
    # a second TEST case of src:1 and one of src:2: two items, three TEST cases, listed by name
    test += [view("test", "a new question", "1"), view("test", "another one", "2")]
    assert overlap(train, test)["shared_source_items"] == {"count": 2, "test_cases": 3, "listed": ["src:1", "src:2"]}
    assert got["thresholds"] == {"near_duplicate_cosine": 0.8, "answer_reuse_share": 0.5}


def test_identical_questions_by_where_they_sit() -> None:
    # "who wrote hamlet" and "Who  wrote HAMLET" (cases 1, 2; TRAIN, items 2 and 3): one pair within TRAIN,
    # different source. "who wrote hamlet?!" keeps its punctuation: not identical to them.
    train, test = sample()
    got = overlap(train, test)["identical_questions"]
    within = got["within_train_different_source"]
    assert (within["pairs"], within["cases"]) == (1, 2)
    assert [(p["a"]["id"], p["b"]["id"], p["similarity"]) for p in within["listed"]] == [
        (train[1].case_id, train[2].case_id, 1.0)
    ]
    for kind in ("across_files", "within_test_different_source", "within_train_same_source", "within_test_same_source"):
        assert got[kind] == {"pairs": 0, "cases": 0, "listed": []}


def test_identical_questions_across_files_and_within_one_source_item() -> None:
    # three cases ask "q": TRAIN a (item 1), TRAIN b (item 1), TEST c (item 2): pairs a-b (within TRAIN, the same
    # item), a-c and b-c (across the files): 3 pairs; across, 2 pairs over 3 cases
    a, b = view("train", "q", "1"), view("train", " Q ", "1")
    c = view("test", "q", "2")
    got = overlap([a, b], [c])["identical_questions"]
    assert (got["across_files"]["pairs"], got["across_files"]["cases"]) == (2, 3)
    listed = got["across_files"]["listed"]
    assert [(p["a"]["id"], p["b"]["id"]) for p in listed] == [(a.case_id, c.case_id), (b.case_id, c.case_id)]
    assert (got["within_train_same_source"]["pairs"], got["within_train_same_source"]["cases"]) == (1, 2)
    assert got["within_train_different_source"]["pairs"] == 0
    # two TEST cases of one item asking the same: within TEST, the same source
    d, e = view("test", "r", "9"), view("test", "r", "9")
    got = overlap([a], [d, e])["identical_questions"]
    assert got["within_test_same_source"]["pairs"] == 1 and got["within_test_different_source"]["pairs"] == 0
    f = view("test", "r", "8")
    got = overlap([a], [d, f])["identical_questions"]
    assert got["within_test_different_source"]["pairs"] == 1 and got["within_test_same_source"]["pairs"] == 0


def test_near_duplicate_questions_are_the_pairs_at_cosine_0_8_or_more_that_are_not_identical() -> None:
    train, test = sample()
    questions = [it.question for it in [*train, *test]]
    cos = cosines(questions)
    # by the definition: the boiling questions 0-4 0.90 and 0-5 0.83 are over 0.8, 4-5 (0.75) is not; hamlet 1-6 and
    # 2-6 are 1.0 (the same words), 1-2 too but identical once normalised, so not a near duplicate
    over = {pair for pair, c in cos.items() if c >= 0.8}
    assert over == {(0, 4), (0, 5), (1, 2), (1, 6), (2, 6)}
    assert 0.7 < cos[(4, 5)] < 0.8
    got = overlap(train, test)["near_duplicate_questions"]
    across = got["across_files"]
    assert (across["pairs"], across["cases"]) == (4, 6)  # cases 0, 1, 2, 4, 5, 6
    # listed by cosine, highest first, then by position: 1-6 and 2-6 (1.0), 0-4, 0-5
    ids = [it.case_id for it in [*train, *test]]
    assert [(p["a"]["id"], p["b"]["id"]) for p in across["listed"]] == [
        (ids[1], ids[6]), (ids[2], ids[6]), (ids[0], ids[4]), (ids[0], ids[5])
    ]  # fmt: skip
    assert [p["cosine"] for p in across["listed"]] == pytest.approx(
        [1.0, 1.0, round(cos[(0, 4)], 4), round(cos[(0, 5)], 4)], abs=1e-12
    )
    assert [p["cosine"] for p in across["listed"]][2:] == [round(cos[(0, 4)], 4), round(cos[(0, 5)], 4)]
    for kind in ("within_train_different_source", "within_test_different_source", "within_train_same_source",
                 "within_test_same_source"):  # fmt: skip
        assert got[kind]["pairs"] == 0, kind


def test_near_duplicates_within_test() -> None:
    # the two boiling variants in TEST alone with a third unrelated: their cosine (0.75 with more documents) ...
    # computed here for this set, and a pair counted within TEST only when it reaches 0.8
    test = [view("test", BOIL, "1"), view("test", BOIL + " today", "2"), view("test", "how far is the moon", "3")]
    cos = cosines([it.question for it in test])
    assert cos[(0, 1)] >= 0.8 and cos[(0, 2)] < 0.8 and cos[(1, 2)] < 0.8
    got = overlap([], test)["near_duplicate_questions"]
    assert (got["within_test_different_source"]["pairs"], got["within_test_different_source"]["cases"]) == (1, 2)
    assert got["across_files"]["pairs"] == 0


def test_answer_reuse_is_half_or_more_of_the_smaller_set_of_distinct_answers() -> None:
    # distinct normalised answers: 0 {100 c, 90 c}; 4 {100 c, 90 c, 80 c, 70 c}: shared 2 / min(2, 4) = 1.0.
    # 1 {shakespeare, marlowe}, 2 {shakespeare, bacon}: shared 1 / 2 = 0.5, reuse (half counts). 5 {373 k, 300 k}
    # and 6 {kyd, jonson} share nothing; 3 {far, near} nothing.
    train, test = sample()
    got = overlap(train, test)["answer_reuse"]
    ids = [it.case_id for it in [*train, *test]]
    across = got["across_files"]
    assert (across["pairs"], across["cases"]) == (1, 2)
    assert [(p["a"]["id"], p["b"]["id"], p["shared_share"]) for p in across["listed"]] == [(ids[0], ids[4], 1.0)]
    within = got["within_train_different_source"]
    assert [(p["a"]["id"], p["b"]["id"], p["shared_share"]) for p in within["listed"]] == [(ids[1], ids[2], 0.5)]


def test_answer_reuse_under_half_is_not_counted() -> None:
    # {a, b, c} and {a, x, y}: 1 of 3 = 0.333 < 0.5; a repeated answer counts once: {a, a, b} is {a, b}, and with
    # {a, z}: 1 of 2 = 0.5
    one = view("train", "q1", "1", ("a", "b", "c"))
    two = view("test", "q2", "2", ("a", "x", "y"))
    assert overlap([one], [two])["answer_reuse"]["across_files"]["pairs"] == 0
    three = view("train", "q3", "3", ("a", "A ", "b"))
    four = view("test", "q4", "4", ("a", "z"))
    got = overlap([three], [four])["answer_reuse"]["across_files"]
    assert (got["pairs"], [p["shared_share"] for p in got["listed"]]) == (1, [0.5])
    # {a, b, c, d} and {a, b, x, y, z}: 2 of min(4, 5) = 0.5, counted; {a, b, c, d, e} and {a, b, x, y, z}: 2/5 = 0.4
    five, six = view("train", "q5", "5", ("a", "b", "c", "d")), view("test", "q6", "6", ("a", "b", "x", "y", "z"))
    assert overlap([five], [six])["answer_reuse"]["across_files"]["pairs"] == 1
    seven = view("train", "q7", "7", ("a", "b", "c", "d", "e"))
    assert overlap([seven], [six])["answer_reuse"]["across_files"]["pairs"] == 0


def test_the_answer_reuse_share_is_rounded_and_pairs_are_listed_by_share() -> None:
    # {a, b, c} with {a, b, c, d, e, f}: 3/3 = 1.0; {a, b, x} with {a, b, y, z, w, v, u}: 2/3 = 0.6667; both across
    p = view("train", "p", "1", ("a", "b", "x"))
    q = view("train", "q", "2", ("k", "l", "m"))
    r = view("test", "r", "3", ("k", "l", "m", "d", "e", "f"))
    s = view("test", "s", "4", ("a", "b", "y", "z", "w", "v", "u"))
    got = overlap([p, q], [r, s])["answer_reuse"]["across_files"]
    assert [(x["a"]["id"], x["b"]["id"], x["shared_share"]) for x in got["listed"]] == [
        (q.case_id, r.case_id, 1.0), (p.case_id, s.case_id, 0.6667)
    ]  # fmt: skip


def test_twenty_pairs_are_listed_and_all_are_counted() -> None:
    # 7 TRAIN and 3 TEST cases all asking "q": 7 x 3 = 21 pairs across, 20 listed; 10 cases
    train = [view("train", "q", f"t{k}") for k in range(7)]
    test = [view("test", "q", f"e{k}") for k in range(3)]
    across = overlap(train, test)["identical_questions"]["across_files"]
    assert (across["pairs"], across["cases"], len(across["listed"])) == (21, 10, 20)
    # in order of position: TRAIN 0 with TEST 0, 1, 2, then TRAIN 1 ...; the 21st (TRAIN 6 with TEST 2) left off
    assert (across["listed"][0]["a"]["id"], across["listed"][0]["b"]["id"]) == (train[0].case_id, test[0].case_id)
    assert (across["listed"][-1]["a"]["id"], across["listed"][-1]["b"]["id"]) == (train[6].case_id, test[1].case_id)


def test_twenty_shared_items_are_listed_and_all_are_counted() -> None:
    train = [view("train", f"q{k}", f"{k:02d}") for k in range(21)]
    test = [view("test", f"r{k}", f"{k:02d}") for k in range(21)]
    got = overlap(train, test)["shared_source_items"]
    assert (got["count"], got["test_cases"], got["listed"]) == (21, 21, [f"src:{k:02d}" for k in range(20)])


def test_a_case_reference_names_the_case_and_shortens_its_question() -> None:
    it = view("test", "  a   question\nover lines ", "7")
    assert _ref(it) == {"file": "test", "line": it.line, "id": it.case_id, "source_item": "src:7",
                        "question": "a question over lines"}  # fmt: skip
    # 100 characters are kept whole; from 101 on, the first 100 and "..."
    assert _ref(view("train", "x" * 100, "1"))["question"] == "x" * 100
    assert _ref(view("train", "y" * 101, "1"))["question"] == "y" * 100 + "..."


# --- composition ------------------------------------------------------------------------------------------------------


def test_composition_counts_cases_per_file_by_category_source_and_origin() -> None:
    train = [
        view("train", "a", "1", category="genuine_disagreement", source="mmlu", evidence=True),
        view("train", "b", "2", category="majority_wrong_fact", source="mmlu", answers=("x", "y", "z")),
        view("train", "c", "3", category="majority_wrong_fact", source="mmlu", answers=("x", "y", "z")),
        view("train", "d", "4", category="majority_wrong_fact", source="gsm", origin="constructed", evidence=True),
    ]
    test = [
        view("test", "e", "5", category="majority_wrong_fact", source="mmlu"),
        view("test", "f", "6", category="zz_unknown", source="gsm", evidence=True),
    ]
    got = composition(train, test)
    # rows in the order of CATEGORIES (majority_wrong_fact first, genuine_disagreement later), an unknown category
    # last; within a category by source, then origin
    assert got["rows"] == [
        {"category": "majority_wrong_fact", "source": "gsm", "origin": "constructed", "train": 1, "test": 0},
        {"category": "majority_wrong_fact", "source": "mmlu", "origin": "natural", "train": 2, "test": 1},
        {"category": "genuine_disagreement", "source": "mmlu", "origin": "natural", "train": 1, "test": 0},
        {"category": "zz_unknown", "source": "gsm", "origin": "natural", "train": 0, "test": 1},
    ]
    # evidence: TRAIN 2 of 4 = 0.5, TEST 1 of 2 = 0.5; answers per case: TRAIN 2, 3, 3, 2; TEST 2, 2
    assert got["evidence_share"] == {"train": 0.5, "test": 0.5}
    assert got["answers_per_case"] == {"train": {"2": 2, "3": 2}, "test": {"2": 2}}
    assert got["origins"] == ["constructed", "natural"]


def test_composition_shares_are_rounded_and_an_empty_file_is_zero() -> None:
    # 1 of 3 with evidence: 0.3333; 2 of 3: 0.6667; no TEST case: 0.0 and no counts
    train = [view("train", "a", "1", evidence=True), view("train", "b", "2"), view("train", "c", "3")]
    got = composition(train, [])
    assert got["evidence_share"] == {"train": 0.3333, "test": 0.0}
    assert got["answers_per_case"] == {"train": {"2": 3}, "test": {}}
    train2 = [view("train", "a", "1", evidence=True), view("train", "b", "2", evidence=True), view("train", "c", "3")]
    assert composition(train2, [])["evidence_share"]["train"] == 0.6667
    # answer counts in numeric order: 9 before 10
    many = [view("test", "a", "1", answers=tuple("abcdefghij")), view("test", "b", "2", answers=tuple("abcdefghi"))]
    assert list(composition([], many)["answers_per_case"]["test"]) == ["9", "10"]


def test_composition_orders_categories_of_one_kind_by_their_place_in_categories() -> None:
    # echo_cascade (2nd) before genuine_agreement_correct (6th) before correct_but_unsupported (8th), though not by
    # name
    cats = ["correct_but_unsupported", "genuine_agreement_correct", "echo_cascade"]
    got = composition([view("train", c, c, category=c) for c in cats], [])
    assert [r["category"] for r in got["rows"]] == ["echo_cascade", "genuine_agreement_correct",
                                                    "correct_but_unsupported"]  # fmt: skip


def test_a_word_said_three_times_weighs_one_plus_its_log() -> None:
    # "water" three times: tf weight 1 + ln 3 = 2.10 (sublinear), not 3; by the definition the cosine is 0.836, over
    # 0.8 (with the raw count it would be 0.777, under)
    questions = ["what is the boiling point of water", "what is the boiling point of water water water",
                 "how far is the moon"]  # fmt: skip
    assert cosines(questions)[(0, 1)] == pytest.approx(0.8364, abs=1e-4)
    got = overlap(
        [view("train", questions[0], "1"), view("train", questions[2], "3")], [view("test", questions[1], "2")]
    )
    near = got["near_duplicate_questions"]["across_files"]
    assert near["pairs"] == 1 and near["listed"][0]["cosine"] == pytest.approx(0.8364, abs=1e-4)


def test_a_case_never_reuses_its_own_answers() -> None:
    # every case holds all its own answers (share 1): no case is paired with itself, within any kind
    train, test = sample()
    got = overlap(train, test)["answer_reuse"]
    assert got["within_train_same_source"]["pairs"] == 0 and got["within_test_same_source"]["pairs"] == 0
    assert overlap([view("train", "q", "1")], [])["answer_reuse"]["within_train_same_source"]["pairs"] == 0


def test_composition_rows_of_one_category_are_ordered_by_source_name_not_by_counts() -> None:
    # source "a" with 2 TRAIN cases, "b" with 1: "a" first (by name), though b's counts are fewer
    train = [
        view("train", "x", "1", source="a"),
        view("train", "y", "2", source="a"),
        view("train", "z", "3", source="b"),
    ]
    assert [(r["source"], r["train"]) for r in composition(train, [])["rows"]] == [("a", 2), ("b", 1)]


def test_pairs_of_one_share_and_one_first_case_are_listed_by_the_second() -> None:
    # {c}, {c, x}, {c, y}: 0-1 and 0-2 share 1 of min(1, 2) = 1.0, 1-2 share 1 of 2 = 0.5. The sparse product finds
    # 0-2 before 0-1; the listing puts them in case order, then 1-2 (a lower share)
    cases = [
        view("train", "q0", "0", ("c",)),
        view("train", "q1", "1", ("c", "x")),
        view("train", "q2", "2", ("c", "y")),
    ]
    got = overlap(cases, [])["answer_reuse"]["within_train_different_source"]
    ids = [it.case_id for it in cases]
    assert [(p["a"]["id"], p["b"]["id"], p["shared_share"]) for p in got["listed"]] == [
        (ids[0], ids[1], 1.0), (ids[0], ids[2], 1.0), (ids[1], ids[2], 0.5)
    ]  # fmt: skip
