"""Shape-level tells (fcb_datasets/audit/shape.py): answer positions, shape features, the ROC-AUC and its lower end,
constructed-vs-real and truth inside a shape, on hand-made cases whose figures are worked out in each test."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from fcb_datasets.audit.shape import (
    MIN_SIDE,
    ORIGIN_AUC_WARNING,
    POSITION_EFFECT,
    POSITION_P,
    _auc,
    _auc_low,
    _position_gap,
    origin_tells,
    position_z,
    positions,
    shape_features,
    shape_tells,
    truth_inside,
)
from fcb_datasets.audit.view import CaseView, Settings

_serial = itertools.count(1)


def view(file: str = "train", question: str = "q", answers: tuple[str, ...] = ("a", "b"), *, source: str = "s",
         category: str = "echo_cascade", origin: str = "natural", correct: tuple[bool, ...] = (),
         saw: tuple[bool, ...] = (), majority_correct: bool | None = None) -> CaseView:  # fmt: skip
    i = next(_serial)
    return CaseView(file=file, line=i, case_id=f"c{i}", category=category, question=question, answers=answers,  # type: ignore[arg-type]
                    source_dataset=source, source_identity=f"{source}:{i}", origin=origin,  # type: ignore[arg-type]
                    has_evidence=False, answers_correct=correct, answers_saw=saw or (False,) * len(answers),
                    majority_correct=majority_correct)  # fmt: skip


def test_the_thresholds() -> None:
    assert (MIN_SIDE, ORIGIN_AUC_WARNING, POSITION_EFFECT, POSITION_P) == (20, 0.9, 0.2, 0.001)


# --- answer position -------------------------------------------------------------------------------------------------


def gap_case(correct: tuple[bool, ...], saw: tuple[bool, ...] = (), **kw: object) -> CaseView:
    return view(answers=tuple(f"x{k}" for k in range(len(correct))), correct=correct, saw=saw, **kw)  # type: ignore[arg-type]


def test_the_position_gap_of_one_group() -> None:
    # three answers, correct first: right at 0, wrong at 1 and 2 (mean 1.5): (0 - 1.5) / (3 - 1) = -0.75
    assert _position_gap(gap_case((True, False, False))) == -0.75
    # correct last of four: 3 - mean(0, 1, 2) = 2, over 3: 0.6667
    assert _position_gap(gap_case((False, False, False, True))) == pytest.approx(2 / 3)
    # two right (0, 3), two wrong (1, 2): 1.5 - 1.5 = 0
    assert _position_gap(gap_case((True, False, False, True))) == 0.0


def test_the_position_gap_averages_groups_of_one_kind() -> None:
    # saw F: answers 0, 1 (wrong, right): (1 - 0) / 1 = 1. saw T: answers 2, 3 (right, wrong), positions 0 and 1
    # within the group: (0 - 1) / 1 = -1. Mean of the groups: 0.0.
    # Second case: saw F: 0, 1, 2 (wrong, wrong, right): (2 - 0.5) / 2 = 0.75; saw T: 3, 4 (right, wrong): -1; mean
    # -0.125 (read as one group it would be right 2, 3 against wrong 0, 1, 4: (2.5 - 5/3) / 4 = 0.2083).
    assert _position_gap(gap_case((False, True, True, False), (False, False, True, True))) == 0.0
    got = _position_gap(gap_case((False, False, True, True, False), (False, False, False, True, True)))
    assert got == pytest.approx(-0.125)


def test_a_group_without_both_kinds_is_left_out_and_none_without_any() -> None:
    # saw F: answers 0, 1, both right: left out. saw T: answers 2, 3, 4 (wrong, wrong, right): (2 - 0.5) / 2 = 0.75
    assert _position_gap(gap_case((True, True, False, False, True), (False, False, True, True, True))) == 0.75
    assert _position_gap(gap_case((True, True, True))) is None
    assert _position_gap(gap_case((False, False))) is None
    assert _position_gap(gap_case((True,))) is None
    # one right and one wrong, but in two groups of one: None
    assert _position_gap(gap_case((True, False), (False, True))) is None


def test_position_z_is_the_two_sided_bonferroni_line() -> None:
    # one test: z with two-sided p 0.001, 3.2905 -> 3.29; no test counts as one; ten tests: p 0.0001 each: 3.8906;
    # two: 3.4808; three: 3.5888
    assert position_z(1) == 3.29 and position_z(0) == 3.29
    assert (position_z(2), position_z(3), position_z(10)) == (3.48, 3.59, 3.89)


UP = (False, True)  # gap +1
DOWN = (True, False)  # gap -1
EVEN = (False, True, False)  # right at 1, wrong at 0 and 2: gap 0


def stratum(patterns: list[tuple[bool, ...]], category: str = "echo_cascade", source: str = "s") -> list[CaseView]:
    return [gap_case(p, category=category, source=source) for p in patterns]


def test_a_gap_every_case_shares_is_a_finding_from_0_2_with_no_z() -> None:
    # a case of 8 answers: saw F at 0, 1 (wrong, right): +1; saw T at 2-7 (right first, five wrong): (0 - 3) / 5 =
    # -0.6. Mean (1 - 0.6) / 2 = 0.2, in every one of 20 cases: |gap| 0.2 >= 0.2, and no spread (z infinite, or
    # huge where the mean of twenty 0.2s rounds a hair off 0.2): a finding
    edge = (False, True, True, False, False, False, False, False)
    saw = (False, False, True, True, True, True, True, True)
    items = [gap_case(edge, saw) for _ in range(20)]
    (got,) = positions(items)
    assert (got["cases"], got["gap"], got["finding"]) == (20, 0.2, True)
    # saw T at 2-6 (right first, four wrong): -2.5 / 4 = -0.625; mean 0.1875: no finding, sure as it is
    under = (False, True, True, False, False, False, False)
    items = [gap_case(under, saw[:7]) for _ in range(20)]
    assert positions(items) == [{"source": "s", "category": "echo_cascade", "cases": 20, "gap": 0.1875, "z": None,
                                 "finding": False}]  # fmt: skip
    # every gap 0: mean 0, sd 0: z 0, no finding
    assert positions(stratum([EVEN] * 20)) == [{"source": "s", "category": "echo_cascade", "cases": 20, "gap": 0.0,
                                                "z": 0.0, "finding": False}]  # fmt: skip


def test_a_gap_must_pass_the_z_line_of_the_pairs_tested() -> None:
    # 7 gaps of 1 and 13 of 0: mean 0.35; sd (ddof 1) sqrt(7 * 13 / (20 * 19)) = 0.4894; z = 0.35 / (0.4894 /
    # sqrt 20) = 3.198 -> 3.2 < 3.29 (one pair tested): no finding though 0.35 >= 0.2.
    got = positions(stratum([UP] * 7 + [EVEN] * 13))
    assert got == [{"source": "s", "category": "echo_cascade", "cases": 20, "gap": 0.35, "z": 3.2, "finding": False}]
    # 8 of 1: mean 0.4, sd sqrt(8 * 12 / 380) = 0.5026, z = 0.4 * sqrt 20 / 0.5026 = 3.559 -> 3.56 >= 3.29: a finding
    got = positions(stratum([UP] * 8 + [EVEN] * 12))
    assert got == [{"source": "s", "category": "echo_cascade", "cases": 20, "gap": 0.4, "z": 3.56, "finding": True}]
    # the same beside two more pairs (three tested, line 3.59): 3.56 < 3.59, no finding
    items = stratum([UP] * 8 + [EVEN] * 12) + stratum([EVEN] * 20, "genuine_disagreement")
    items += stratum([EVEN] * 20, source="t")
    got = positions(items)
    assert [(p["source"], p["category"], p["z"], p["finding"]) for p in got] == [
        ("s", "echo_cascade", 3.56, False), ("s", "genuine_disagreement", 0.0, False), ("t", "echo_cascade", 0.0, False)
    ]  # fmt: skip


def test_a_negative_gap_counts_by_its_size() -> None:
    # 8 gaps of -1 and 12 of 0: mean -0.4, z -3.56: |z| over 3.29, |gap| over 0.2: a finding
    got = positions(stratum([DOWN] * 8 + [EVEN] * 12))
    assert got == [{"source": "s", "category": "echo_cascade", "cases": 20, "gap": -0.4, "z": -3.56, "finding": True}]
    # every gap -1: z -infinite, written None; a finding
    assert positions(stratum([DOWN] * 20))[0] | {} == {"source": "s", "category": "echo_cascade", "cases": 20,
                                                       "gap": -1.0, "z": None, "finding": True}  # fmt: skip


def test_a_pair_needs_twenty_cases_with_a_gap() -> None:
    # 19 cases of gap 1 and any number without a gap (all right): not tested
    items = stratum([UP] * 19 + [(True, True)] * 5)
    assert positions(items) == []
    assert len(positions(stratum([UP] * 20))) == 1


def test_pairs_are_kept_apart_by_source_and_category() -> None:
    # 10 + 10 gaps of 1 in two categories: neither has 20
    items = stratum([UP] * 10) + stratum([UP] * 10, "genuine_disagreement")
    assert positions(items) == []
    items = stratum([UP] * 10) + stratum([UP] * 10, source="t")
    assert positions(items) == []


def test_the_shape_document_gives_the_z_line_of_the_pairs_found() -> None:
    # two pairs tested: line 3.48; no case of a constructed origin, no majority: no origin or truth entries
    items = stratum([UP] * 20) + stratum([EVEN] * 20, "genuine_disagreement")
    got = shape_tells(items[:20], items[20:], Settings(max_shape_auc=0.65))
    assert got["origin"] == [] and got["truth_inside"] == []
    assert [p["category"] for p in got["positions"]] == ["echo_cascade", "genuine_disagreement"]
    assert got["thresholds"] == {"max_shape_auc": 0.65, "origin_auc_warning": 0.9, "position_effect": 0.2,
                                 "position_z": 3.48, "min_side": 20}  # fmt: skip


# --- shape features and the ROC-AUC ---------------------------------------------------------------------------------


def test_shape_features_by_hand() -> None:
    # answers "Paris", "paris " and "Lyon 2"; question "Capital?" (8 characters)
    # chars 5, 6, 6: mean 17/3, min 5, max 6, std sqrt(((5 - 17/3)^2 + 2 (6 - 17/3)^2) / 3) = sqrt(2/9) = 0.4714
    # words 1, 1, 2: mean 4/3. Normalised texts paris, paris, "lyon 2": 2 distinct of 3; 2 of 3 identical to another
    # word sets {paris}, {paris}, {lyon, 2}: Jaccard 1, 0, 0: mean 1/3, max 1. One of 3 holds a digit.
    got = shape_features([view(question="Capital?", answers=("Paris", "paris ", "Lyon 2"))])
    want = [3, 17 / 3, 5, 6, math.sqrt(2 / 9), 4 / 3, 8, 2 / 3, 2 / 3, 1 / 3, 1.0, 1 / 3]
    assert got.shape == (1, 12)
    assert got[0] == pytest.approx(want)


def test_shape_features_of_one_answer_and_of_partly_alike_answers() -> None:
    # one answer "a b": no pair, Jaccard 0 and 0; one distinct, none repeated, no digit
    got = shape_features([view(question="", answers=("a b",))])
    assert got[0] == pytest.approx([1, 3, 3, 3, 0, 2, 0, 1, 0, 0, 0, 0])
    # "a b c" and "b c d": Jaccard |{b, c}| / |{a, b, c, d}| = 0.5; "x1" and "x1": both identical, both digits
    got = shape_features([view(question="qq", answers=("a b c", "b c d")), view(answers=("x1", "X1"))])
    assert got[0][7:] == pytest.approx([1.0, 0.0, 0.5, 0.5, 0.0])
    assert got[1][7:] == pytest.approx([0.5, 1.0, 1.0, 1.0, 1.0])


@pytest.mark.parametrize(
    ("y", "score"),
    [([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]), ([1, 0, 1, 0, 1], [0.5, 0.5, 0.2, 0.9, 0.9]), ([0, 1], [0.3, 0.3]),
     ([1, 1, 0, 0, 0], [0.9, 0.1, 0.4, 0.4, 0.2])],
)  # fmt: skip
def test_the_rank_sum_auc_is_scikit_learns(y: list[int], score: list[float]) -> None:
    assert _auc(np.array(y), np.array(score)) == pytest.approx(roc_auc_score(y, score))


def test_the_auc_by_hand() -> None:
    # positives 0.35, 0.8; negatives 0.1, 0.4. Pairs won: 0.35 > 0.1; 0.8 > both: 3 of 4 = 0.75
    assert _auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8])) == 0.75
    # a tie counts a half: positive 0.5 against negative 0.5: 0.5
    assert _auc(np.array([1, 0]), np.array([0.5, 0.5])) == 0.5


def test_the_lower_end_of_a_perfect_score_is_1_and_of_one_class_0() -> None:
    y = np.array([0, 1] * 10)
    assert _auc_low(y, y.astype(float), Settings(n_boot=50)) == 1.0
    # every resample of a single class is skipped: no value, 0.0
    assert _auc_low(np.ones(6, dtype=int), np.arange(6.0), Settings(n_boot=50)) == 0.0


def test_the_lower_end_of_one_resample_is_that_resample_s_auc() -> None:
    # one resample (n_boot 1): the cases numpy's generator (seeded 7) picks, and their AUC by scikit-learn
    y = np.array([0, 1, 0, 1, 1, 0, 0, 1])
    score = np.array([0.1, 0.7, 0.6, 0.3, 0.9, 0.2, 0.5, 0.4])
    pick = np.random.default_rng(7).integers(0, 8, 8)
    assert 0 < y[pick].sum() < 8
    assert _auc_low(y, score, Settings(n_boot=1, seed=7)) == pytest.approx(roc_auc_score(y[pick], score[pick]))


def test_the_lower_end_is_the_2_5th_percentile_of_at_most_400_resamples() -> None:
    y = np.array([0, 1, 0, 1, 1, 0, 0, 1, 1, 0])
    score = np.array([0.1, 0.7, 0.6, 0.3, 0.9, 0.2, 0.5, 0.4, 0.8, 0.65])
    rng = np.random.default_rng(3)
    values = []
    for _ in range(400):
        pick = rng.integers(0, 10, 10)
        if 0 < y[pick].sum() < 10:
            pos, neg = score[pick][y[pick] == 1], score[pick][y[pick] == 0]
            values.append(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg]))  # pairs won, ties half
    want = float(np.percentile(values, 2.5))
    assert _auc_low(y, score, Settings(n_boot=1000, seed=3)) == pytest.approx(want)
    assert _auc_low(y, score, Settings(n_boot=400, seed=3)) == pytest.approx(want)
    assert want < _auc(y, score)


# --- origin tells ----------------------------------------------------------------------------------------------------


def built(file: str, k: int, source: str = "s") -> list[CaseView]:
    return [view(file, f"built query q{file}{i}", ("yes", "no"), source=source, origin="constructed") for i in range(k)]


def real(file: str, k: int, source: str = "s", origin: str = "natural") -> list[CaseView]:
    return [view(file, f"plain ask r{file}{i}", ("yes", "no"), source=source, origin=origin) for i in range(k)]


def test_origin_tells_find_the_constructed_cases_by_rule_and_classifier() -> None:
    # 20 constructed and 20 real cases in each file: "built", "query", "built query" and the prefixes pick out the
    # 40 constructed (precision 1, recall 1); "plain", "ask" the 40 real. "yes", "no" are on every case: a rule for
    # both targets together, left out. A classifier on those words ranks every constructed case first: AUC 1.0.
    train, test = built("train", 20) + real("train", 20), built("test", 20) + real("test", 20, origin="assembled")
    got = origin_tells(train, test)
    assert len(got) == 1
    tell = got[0]
    assert (tell["source"], tell["constructed"], tell["real"], tell["auc"]) == ("s", 40, 40, 1.0)
    assert [(r["text"], r["target"], r["precision"], r["recall"]) for r in tell["rules"]] == [
        ("built", ["constructed"], 1.0, 1.0), ("ask", ["real"], 1.0, 1.0)
    ]  # fmt: skip


def test_origin_tells_need_twenty_of_each_kind_in_each_file_for_a_classifier() -> None:
    # 19 constructed in TEST: rules still, no AUC
    got = origin_tells(built("train", 20) + real("train", 20), built("test", 19) + real("test", 20))
    assert got[0]["auc"] is None and got[0]["constructed"] == 39 and len(got[0]["rules"]) == 2
    got = origin_tells(built("train", 20) + real("train", 19), built("test", 20) + real("test", 20))
    assert got[0]["auc"] is None and got[0]["real"] == 39
    got = origin_tells(built("train", 19) + real("train", 20), built("test", 20) + real("test", 20))
    assert got[0]["auc"] is None
    got = origin_tells(built("train", 20) + real("train", 20), built("test", 20) + real("test", 19))
    assert got[0]["auc"] is None


def test_a_source_without_both_kinds_is_left_out() -> None:
    # source "a": constructed only; "b": real only; "c": both (5 and 5, no AUC); by source name
    train = built("train", 5, "a") + real("train", 5, "b") + built("train", 5, "c") + real("test", 5, "c")
    got = origin_tells(train[:15], train[15:])
    assert [(t["source"], t["constructed"], t["real"], t["auc"]) for t in got] == [("c", 5, 5, None)]


def test_origin_tells_read_the_words_of_question_and_answers() -> None:
    # the questions alike; the constructed cases answer "made up", the real "found": AUC 1.0 from the answers alone
    def case(file: str, i: int, constructed: bool) -> CaseView:
        answers = (f"made up {i}", "made") if constructed else (f"found {i}", "found")
        return view(file, f"same ask {i}", answers, origin="constructed" if constructed else "natural")

    train = [case("train", i, i % 2 == 0) for i in range(40)]
    test = [case("test", i, i % 2 == 0) for i in range(40, 80)]
    assert origin_tells(train, test)[0]["auc"] == 1.0


# --- truth inside a shape ------------------------------------------------------------------------------------------


def majorities(file: str, wrong: int, right: int, origin: str = "constructed", source: str = "s") -> list[CaseView]:
    """Wrong majorities answer in five long "false claim" answers, right ones in three short: told apart by shape
    and by words."""
    out = [view(file, f"ask w{file}{i}", tuple(f"false claim {k} indeed" for k in range(5)), source=source,
                origin=origin, majority_correct=False) for i in range(wrong)]  # fmt: skip
    out += [view(file, f"ask r{file}{i}", ("ok", "ok", "no"), source=source, origin=origin, majority_correct=True)
            for i in range(right)]  # fmt: skip
    return out


def test_truth_inside_a_constructed_shape_told_apart_is_a_finding() -> None:
    # 20 wrong and 20 right majorities in each file, and 3 cases with no majority (left out): every model ranks the
    # wrong majorities first: AUC 1 and every resample 1, by shape and by words; 1.0 > 0.6: a finding
    none = [view("train", "x", ("a", "b"), origin="constructed", majority_correct=None) for _ in range(3)]
    train, test = majorities("train", 20, 20) + none, majorities("test", 20, 20)
    got = truth_inside(train, test, Settings(n_boot=50, max_shape_auc=0.6))
    assert got == [{"source": "s", "origin": "constructed", "train_cases": 40, "test_cases": 40,
                    "wrong_majorities_test": 20, "auc": 1.0, "auc_low": 1.0, "text_auc": 1.0, "text_auc_low": 1.0,
                    "finding": True}]  # fmt: skip


def test_truth_inside_is_a_finding_only_over_the_line_and_not_for_natural_cases() -> None:
    train, test = majorities("train", 20, 20), majorities("test", 20, 20)
    # the line at 1.0: a lower end of 1.0 is not over it
    assert truth_inside(train, test, Settings(n_boot=20, max_shape_auc=1.0))[0]["finding"] is False
    assert truth_inside(train, test, Settings(n_boot=20, max_shape_auc=0.999))[0]["finding"] is True
    # natural cases: the same figures, never a finding
    train, test = majorities("train", 20, 20, "natural"), majorities("test", 20, 20, "natural")
    got = truth_inside(train, test, Settings(n_boot=20, max_shape_auc=0.6))
    assert (got[0]["origin"], got[0]["auc"], got[0]["finding"]) == ("natural", 1.0, False)


def test_truth_inside_needs_twenty_of_each_in_each_file() -> None:
    s = Settings(n_boot=20)
    assert truth_inside(majorities("train", 19, 20), majorities("test", 20, 20), s) == []
    assert truth_inside(majorities("train", 20, 19), majorities("test", 20, 20), s) == []
    assert truth_inside(majorities("train", 20, 20), majorities("test", 19, 20), s) == []
    assert truth_inside(majorities("train", 20, 20), majorities("test", 20, 19), s) == []
    got = truth_inside(majorities("train", 20, 20), majorities("test", 20, 21), s)
    assert (got[0]["test_cases"], got[0]["wrong_majorities_test"]) == (41, 20)


def test_truth_inside_keeps_strata_of_source_and_origin_apart() -> None:
    # "s" constructed has 20 + 20 per file; "s" assembled and "t" constructed have 10 + 10: too few, left out
    train = majorities("train", 20, 20) + majorities("train", 10, 10, "assembled") + majorities("train", 10, 10,
                                                                                                source="t")  # fmt: skip
    test = majorities("test", 20, 20) + majorities("test", 10, 10, "assembled") + majorities("test", 10, 10, source="t")
    got = truth_inside(train, test, Settings(n_boot=20))
    assert [(t["source"], t["origin"], t["train_cases"], t["test_cases"]) for t in got] == [("s", "constructed", 40,
                                                                                              40)]  # fmt: skip


def paired(file: str, constructed: bool, k: int) -> list[CaseView]:
    """20 cases of one kind whose only tell is a word each shares with one other case of its file ("cw3" on two
    constructed cases, "rw3" on two real ones); every other word is on every case."""
    word, origin = ("cw", "constructed") if constructed else ("rw", "natural")
    return [view(file, f"ask {word}{i // 2}", ("yes", "no"), origin=origin) for i in range(k)]


def test_origin_tells_read_words_found_on_two_train_cases() -> None:
    # each tell word is on exactly two TRAIN cases: with words read from 2 cases on (min_df 2) the classifier ranks
    # every constructed TEST case first, AUC 1.0; nothing else tells them apart
    train = paired("train", True, 20) + paired("train", False, 20)
    test = paired("test", True, 20) + paired("test", False, 20)
    assert origin_tells(train, test)[0]["auc"] == 1.0


def test_origin_tells_read_word_pairs() -> None:
    # constructed cases ask "red blue", real ones "blue red": the same words, told apart by their order alone
    def case(file: str, constructed: bool) -> CaseView:
        return view(file, "red blue" if constructed else "blue red", ("yes", "no"),
                    origin="constructed" if constructed else "natural")  # fmt: skip

    train = [case("train", i % 2 == 0) for i in range(40)]
    test = [case("test", i % 2 == 0) for i in range(40)]
    assert origin_tells(train, test)[0]["auc"] == 1.0


def alike(file: str, wrong: int, right: int, tell: str = "pair") -> list[CaseView]:
    """Wrong and right majorities of the same shape (counts, lengths, word sets): only the words' order ("red blue"
    against "blue red"), or a word on two cases each ("tell" "two"), tells them apart."""
    out = []
    for i in range(wrong + right):
        is_wrong = i < wrong
        if tell == "pair":
            answers = ("red blue", "red blue", "x") if is_wrong else ("blue red", "blue red", "x")
            question = "ask"
        else:
            answers = ("yes", "yes", "no")
            question = f"ask {'w' if is_wrong else 'r'}{i // 2:02d}"
        correct = (False, False, True) if is_wrong else (True, True, False)
        out.append(view(file, question, answers, origin="constructed", correct=correct, majority_correct=not is_wrong))
    return out


def test_truth_inside_told_by_words_alone_is_a_finding() -> None:
    # the shape features are the same for every case: trees give one score, AUC 0.5 in every resample (low 0.5).
    # The words tell: AUC 1.0, low 1.0. max(0.5, 1.0) = 1.0 > 0.6: a finding, from the words
    got = truth_inside(alike("train", 20, 20), alike("test", 20, 20), Settings(n_boot=20, max_shape_auc=0.6))
    assert [(t["auc"], t["auc_low"], t["text_auc"], t["text_auc_low"], t["finding"]) for t in got] == [
        (0.5, 0.5, 1.0, 1.0, True)
    ]


def test_truth_inside_words_found_on_two_train_cases_are_read() -> None:
    # question lengths differ by nothing ("w03", "r03"); each tell word on exactly two TRAIN cases: read (min_df 2)
    got = truth_inside(alike("train", 20, 20, "two"), alike("test", 20, 20, "two"), Settings(n_boot=20))
    assert (got[0]["auc"], got[0]["text_auc"]) == (0.5, 1.0)


def test_a_mean_gap_of_exactly_0_2_over_the_z_line_is_a_finding() -> None:
    # 20 gaps of 1 and 80 of 0: mean 20/100 = 0.2 exactly; sd sqrt(20 * 80 / (100 * 99)) = 0.4020; z = 0.2 * 10 /
    # 0.4020 = 4.975 -> 4.97 (one pair, line 3.29): |gap| 0.2 is at least 0.2, a finding
    (got,) = positions(stratum([UP] * 20 + [EVEN] * 80))
    assert (got["cases"], got["gap"], got["z"], got["finding"]) == (100, 0.2, 4.97, True)


def test_the_gap_is_written_with_four_decimals() -> None:
    # one gap of 2/3 (four answers, the correct last: (3 - 1) / 3) and 19 of 0: mean 0.033333 -> 0.0333
    (got,) = positions(stratum([(False, False, False, True)] + [EVEN] * 19))
    assert got["gap"] == 0.0333


def test_the_shape_document_holds_truth_inside_with_the_settings_line() -> None:
    # the words-only stratum (finding at line 0.6) read through shape_tells, with its settings
    got = shape_tells(alike("train", 20, 20), alike("test", 20, 20), Settings(n_boot=20, max_shape_auc=0.6))
    assert [(t["text_auc"], t["finding"]) for t in got["truth_inside"]] == [(1.0, True)]


# --- the fitted models, against scikit-learn pipelines written out here ---------------------------------------------

VOCAB = ("alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa", "7", "lambda")


def noisy(file: str, wrong: int, right: int, seed: int, origin: str = "constructed") -> list[CaseView]:
    """Cases whose words and lengths lean, but only lean, one way by the majority's truth: the models' scores are
    spread and near-tied, so their settings show in the ranks."""
    rng = np.random.default_rng(seed)
    out = []
    for k in range(wrong + right):
        bad = k < wrong
        answers = tuple(
            " ".join(rng.choice(VOCAB[: 8 if bad else 12], size=int(rng.integers(1, 6)))).title()
            for _ in range(int(rng.integers(2, 5)))
        )
        question = " ".join(rng.choice(VOCAB, size=int(rng.integers(2, 5))))
        out.append(view(file, question, answers, origin=origin, majority_correct=not bad))
    return out


def reference_words(train: list[CaseView], test: list[CaseView], y_train: np.ndarray) -> np.ndarray:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from fcb_datasets.audit.view import TOKEN_PATTERN

    def doc(it: CaseView) -> str:
        return it.question + "\n" + "\n".join(it.answers)

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True, token_pattern=TOKEN_PATTERN)
    model = LogisticRegression(C=3.0, solver="saga", tol=1e-3, max_iter=1000, random_state=0)
    model.fit(vec.fit_transform([doc(it) for it in train]), y_train)
    return model.predict_proba(vec.transform([doc(it) for it in test]))[:, 1]


def test_truth_inside_figures_are_the_documented_models_to_four_decimals() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    train, test = noisy("train", 23, 21, 1), noisy("test", 21, 22, 2)
    settings = Settings(n_boot=60, max_shape_auc=0.6)
    (got,) = truth_inside(train, test, settings)
    y_tr = np.array([it.majority_correct is False for it in train])
    y_te = np.array([it.majority_correct is False for it in test])
    trees = HistGradientBoostingClassifier(max_iter=60, max_depth=2, learning_rate=0.1, random_state=settings.seed)
    shape = trees.fit(shape_features(train), y_tr).predict_proba(shape_features(test))[:, 1]
    words = reference_words(train, test, y_tr)
    # 21 x 22 = 462 pairs: an AUC of k / 462 has more than four decimals, so the rounding shows
    assert got["auc"] == round(roc_auc_score(y_te, shape), 4)
    assert got["auc_low"] == round(_auc_low(y_te, shape, settings), 4)
    assert got["text_auc"] == round(roc_auc_score(y_te, words), 4)
    assert got["text_auc_low"] == round(_auc_low(y_te, words, settings), 4)
    assert isinstance(got["text_auc"], float) and isinstance(got["text_auc_low"], float)


def test_origin_auc_is_the_documented_model_to_four_decimals() -> None:
    train = noisy("train", 23, 21, 3, "constructed")
    test = noisy("test", 21, 22, 4, "constructed")
    # the wrong-majority cases become the real ones: the same lean, now between origins
    train = [c if c.majority_correct else view(c.file, c.question, c.answers) for c in train]
    test = [c if c.majority_correct else view(c.file, c.question, c.answers) for c in test]
    (got,) = origin_tells(train, test)
    y_tr = np.array([it.origin == "constructed" for it in train])
    y_te = np.array([it.origin == "constructed" for it in test])
    assert got["auc"] == round(roc_auc_score(y_te, reference_words(train, test, y_tr)), 4)
    assert isinstance(got["auc"], float)


def test_shape_features_compare_answers_case_blind_beyond_ascii() -> None:
    # "Straße" and "STRASSE": lowered, "straße" and "strasse" differ (2 distinct of 2, none repeated, Jaccard 0);
    # upper-cased both would read "STRASSE" (1 distinct, both repeated, Jaccard 1)
    (row,) = shape_features([view(answers=("Straße", "STRASSE"))])
    assert list(row[7:11]) == [1.0, 0.0, 0.0, 0.0]
