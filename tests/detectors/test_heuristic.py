"""`builtin:heuristic` unit by unit (harness/detectors/heuristic/): the text helpers (tokens, claims, shared word
sequences, written arithmetic re-checked), each feature on a small request built for it with the value worked out by
hand, and each threshold of the hand-set rule held exactly at, just above and just below its boundary."""

from __future__ import annotations

import ast
import asyncio
import math
import statistics
from typing import Any

import pytest

from harness.detectors.heuristic import FEATURE_GROUPS, Heuristic, features, rule, signals
from harness.detectors.heuristic.features import _support, _view
from harness.detectors.heuristic.text import (
    NGRAM_CAP,
    NGRAM_WORDS,
    ClaimKey,
    Ngrams,
    _close_enough,
    _safe_eval,
    arithmetic_checks,
    calculate,
    claim_key,
    content_words,
    final_number,
    group_answers,
    jaccard,
    longest_shared_ngram,
    ngrams,
    numbers,
    same_claim,
    split_task,
    words,
    written_arithmetic,
)


def _request(texts: list[str], task: str = "Q?", evidence: list[str] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"task": task, "answers": [{"agent_id": f"a{i}", "text": t} for i, t in enumerate(texts)]}
    if evidence is not None:
        request["evidence"] = evidence
    return request


def _features(texts: list[str], task: str = "Q?", evidence: list[str] | None = None) -> dict[str, float]:
    return features(_request(texts, task, evidence))  # type: ignore[arg-type]


def _pick(found: dict[str, float], expected: dict[str, float]) -> dict[str, float]:
    return {k: found[k] for k in expected}


# --- text: tokens and content words -------------------------------------------------------------------------------


def test_words_lower_case_keep_apostrophes_and_join_dates() -> None:
    assert words("It's 2019-03-07, OK!") == ["it's", "20190307", "ok"]
    assert words("12-03-07") == ["12", "03", "07"]  # not a yyyy-mm-dd date: three tokens


def test_content_words_drop_stop_words_and_one_plural_s() -> None:
    """ "cats" -> "cat", "bats" (4 letters) -> "bat"; "gas" (3 letters) and "class" ("ss") keep their s; "the",
    "were", "because", "reasoning", "understand" (the last stop word) are stop words; "a" (the first) too."""
    assert content_words("The cats were here because of reasoning") == frozenset({"cat"})
    assert content_words("bats gas class a understand") == frozenset({"bat", "gas", "class"})


# --- text: question and premise -------------------------------------------------------------------------------------


def test_split_task_by_lines() -> None:
    assert split_task("Note: the sum is 12.\nWhat is 5 + 7?") == ("What is 5 + 7?", "Note: the sum is 12.")
    # two premise lines are joined by a newline, the question lines too
    assert split_task("Note: a.\nFYI: b.\nWhat?\nWhy?") == ("What?\nWhy?", "Note: a.\nFYI: b.")
    # exactly two lines: the lines are the paragraphs (the sentences of the premise line stay together)
    assert split_task("Hint: it is 12. Really.\nWhat is 5 + 7?") == ("What is 5 + 7?", "Hint: it is 12. Really.")


def test_split_task_by_sentences_in_one_paragraph() -> None:
    assert split_task("Someone said it is 12. What is 5 + 7?") == ("What is 5 + 7?", "Someone said it is 12.")
    # a premise word in a question does not make it a premise
    assert split_task("According to the note, what is 5 + 7?") == ("According to the note, what is 5 + 7?", "")
    assert split_task("\n  \nWhat?\n") == ("What?", "")  # blank lines are not paragraphs
    assert split_task("What is 5 + 7?") == ("What is 5 + 7?", "")


# --- text: numbers and the number an answer asserts ---------------------------------------------------------------


def test_numbers_with_positions() -> None:
    """ "x -3 and 1,234.5 then 7": -3 starts at 2, 1,234.5 at 9, 7 at 22."""
    assert numbers("x -3 and 1,234.5 then 7") == [(2, -3.0), (9, 1234.5), (22, 7.0)]


@pytest.mark.parametrize(
    ("text", "question_numbers", "value"),
    [
        ("Work: 3 + 4 = 7\nA: 7", frozenset(), 7.0),  # a closing A: line
        ("I got 9.\nanswer: 12 apples", frozenset(), 12.0),  # Answer:, any case
        ("Steps 1 and 2.\nFinal answer: 5", frozenset(), 5.0),
        ("3 + 4 = 7\nA: 7", frozenset({7.0}), 7.0),  # the A: line is taken even when the question holds its number
        ("A: 2019-03-07", frozenset(), None),  # a date is no number
        ("It happened on 2019-03-07 at 5", frozenset(), None),
        ("I counted 4 cities.\nA: Canberra", frozenset(), 4.0),  # a worded A: line: the number before it
        ("5 + 7 is 12", frozenset({5.0, 7.0}), 12.0),  # the question's numbers are skipped
        ("The answer is 12, and I used 3 steps", frozenset(), 12.0),  # the cued number, not the last
        ("I used 3 steps and 4 tools", frozenset(), 4.0),  # no cue: the last fresh number
        ("5 and 7", frozenset({5.0, 7.0}), 7.0),  # all in the question: the last number
        ("Canberra", frozenset(), None),
        ("is 5 then 9", frozenset(), 5.0),  # a cue at the very start of the text
        ("it is" + " " * 12 + "5 then 9", frozenset(), 5.0),  # "is" + 12 spaces: 14 characters back, seen
        ("it is" + " " * 13 + "5 then 9", frozenset(), 9.0),  # 15 characters back: the cue is out of sight
    ],
)
def test_final_number(text: str, question_numbers: frozenset[float], value: float | None) -> None:
    assert final_number(text, question_numbers) == value


# --- text: claims ----------------------------------------------------------------------------------------------------


def test_claim_key() -> None:
    """Claim words are content words less the question's ("yes" is not a stop word here: it is also the polarity)."""
    assert claim_key("Yes, Canberra is the capital", frozenset({"capital"})) == ClaimKey(
        None, frozenset({"yes", "canberra"}), "yes"
    )
    # every content word is in the question: the claim keeps them all
    assert claim_key("The capital", frozenset({"capital"})) == ClaimKey(None, frozenset({"capital"}), None)
    assert claim_key("NO, it is 7", frozenset()) == ClaimKey(7.0, frozenset({"no", "7"}), "no")
    assert claim_key("Nothing else", frozenset()).polarity is None  # "no" must be a whole word
    assert claim_key("5 + 7 = 12", frozenset(), frozenset({5.0, 7.0})).number == 12.0
    assert claim_key("12 plus 5", frozenset(), frozenset({5.0})).number == 12.0  # 5 is the question's


def _k(*items: str, number: float | None = None, polarity: str | None = None) -> ClaimKey:
    return ClaimKey(number, frozenset(items), polarity)


def test_same_claim_numbers_polarity_and_empty_claims() -> None:
    assert same_claim(_k(number=7.0), _k(number=7.0 + 1e-12))  # within a relative 1e-9
    assert not same_claim(_k(number=7.0), _k(number=7.001))
    assert not same_claim(_k(number=7.0), _k("seven"))  # a number never matches words
    assert not same_claim(_k("seven"), _k(number=7.0))
    assert not same_claim(_k("7", number=7.0), _k("7"))  # a number against words, even the same words
    assert not same_claim(_k("x", polarity="yes"), _k("x", polarity="no"))
    assert same_claim(_k("x", polarity="yes"), _k("x"))  # one polarity alone does not decide
    assert same_claim(_k("x", polarity="no"), _k("x", polarity="no"))
    assert same_claim(_k(), _k())  # two empty claims are the same
    assert not same_claim(_k(), _k("x"))
    assert not same_claim(_k("x"), _k())


def test_same_claim_overlap_thresholds() -> None:
    """Up to three words in the smaller claim: shared over the smaller; otherwise Jaccard. Either must reach 0.5."""
    # {canberra} in a 4-word claim: 1/1 = 1.0 (Jaccard would be 1/4)
    assert same_claim(_k("canberra"), _k("canberra", "city", "capital", "australia"))
    # smaller has 3: 2 shared / 3 = 0.667 (Jaccard 2/7 = 0.29 would not reach 0.5)
    assert same_claim(_k("a", "b", "c"), _k("a", "b", "d", "e", "f", "g"))
    # smaller has 4: Jaccard 2/6 = 0.333 (2 / 4 = 0.5 would have agreed)
    assert not same_claim(_k("a", "b", "c", "d"), _k("a", "b", "e", "f"))
    # Jaccard exactly 0.5: {a..e} and {a..d, f}: 4 shared of 6 = 0.667; {a,b,c,d} and {a,b,c,e,f}: 3/6 = 0.5
    assert same_claim(_k("a", "b", "c", "d"), _k("a", "b", "c", "e", "f"))
    # overlap exactly 0.5: {a, b} and {a, c}: 1 / 2
    assert same_claim(_k("a", "b"), _k("a", "c"))
    assert not same_claim(_k("a", "b", "c"), _k("a", "d", "e"))  # 1/3


def test_group_answers_largest_first_ties_by_first_answer() -> None:
    n = [_k(number=x) for x in (8.0, 7.0, 7.0, 8.0, 9.0)]
    assert group_answers(n) == [[0, 3], [1, 2], [4]]  # two groups of 2: the one that starts first leads
    assert group_answers([_k(number=9.0), _k(number=7.0), _k(number=7.0)]) == [[1, 2], [0]]
    # greedy: {a,b,c,d} matches both {a,b} and {c,d} (Jaccard... overlap 2/2) but joins the first group only
    keys = [_k("alpha", "beta"), _k("gamma", "delta"), _k("alpha", "beta", "gamma", "delta"), _k("gamma", "delta")]
    assert group_answers(keys) == [[0, 2], [1, 3]]


# --- text: similarity and shared word sequences -------------------------------------------------------------------


def test_jaccard_and_ngrams() -> None:
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 1.0
    assert ngrams(["a", "b", "c"], 2) == frozenset({("a", "b"), ("b", "c")})
    assert ngrams(["a", "b", "c"], 3) == frozenset({("a", "b", "c")})
    assert ngrams(["a", "b", "c"], 4) == frozenset()
    grams = Ngrams(["w"] * (NGRAM_WORDS + 5))
    assert len(grams.tokens) == NGRAM_WORDS == 1000
    assert grams.of(1) is grams.of(1)  # built once


def test_longest_shared_ngram() -> None:
    """ "the cat sat on the mat" and "a cat sat on a mat" share "cat sat on" (3 words); if the task holds "cat sat
    on", every shared sequence of 2 or 3 words is the task's, and "mat" (1 word) is what is left."""
    a, b = Ngrams(words("the cat sat on the mat")), Ngrams(words("a cat sat on a mat"))
    assert longest_shared_ngram(a, b, Ngrams(["cat"])) == 3
    assert longest_shared_ngram(a, b, Ngrams(words("the cat sat on"))) == 1
    long = Ngrams([f"w{i}" for i in range(25)])
    assert longest_shared_ngram(long, long, Ngrams([])) == NGRAM_CAP == 20
    assert longest_shared_ngram(Ngrams(["x"]), Ngrams(["y"]), Ngrams([])) == 0


# --- text: arithmetic ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("12 * 3", 36.0),
        ("2 x 3", 6.0),
        ("(2)x(3)", 6.0),
        ("6 ÷ 4", 1.5),
        ("2 × 5", 10.0),
        ("$1,200 + 5", 1205.0),
        ("-3 + +2", -1.0),
        ("7 - 2", 5.0),
        ("2 * (3 + 4)", 14.0),
        ("1+" * 99 + "11", 110.0),  # 200 characters: still read (99 ones and 11)
        ("1+" * 100 + "1", None),  # 201 characters: too long
        ("1/0", None),
        ("2**3", None),  # powers are not plain arithmetic
        ("5%", None),
        ("a + 1", None),
        ("True + 1", None),
        ("True", None),
        ("3 // 2", None),
        ("", None),
    ],
)
def test_calculate(expression: str, value: float | None) -> None:
    assert calculate(expression) == value


@pytest.mark.parametrize(
    ("computed", "claimed", "close"),
    [
        (36.4, "36", True),  # whole number: within 0.5
        (36.5, "36", True),  # exactly 0.5 off
        (36.6, "36", False),
        (1 / 3, "0.33", True),  # 0.00333 <= 0.005
        (1 / 3, "0.3", True),  # 0.0333 <= 0.05
        (1 / 3, "0.34", False),  # 0.00667 > 0.005
        (1200.0, "1,200", True),
        (1e12, "1000000000500", True),  # 500 <= 0.5 + 1e-9 x 1e12 = 1000.5
        (1e12, "1000000002000", False),
        (0.348, "0.3", True),  # one decimal: 0.048 <= 0.05 (a tolerance of 0.5 / 11 would refuse it)
        # exactly at the tolerance: 21.5000000215 - 21 = 0.5 + 21.5e-9 = 0.5 + 1e-9 x 21.5000000215 (to float
        # precision, where both sides are the same double): "at most" lets it through
        (21.5000000215, "21", True),
        # below 1, the relative term is 1e-9 x 1 (not the value, not 2): 1/3 against 0.333333335 is 1.67e-9 off,
        # over 0.5e-9 + 1e-9 = 1.5e-9
        (1 / 3, "0.333333335", False),
    ],
)
def test_close_enough(computed: float, claimed: str, close: bool) -> None:
    assert _close_enough(computed, claimed) is close


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("12 * 3 = 36", [("12 * 3", "36")]),
        ("<<12*3=36>>", [("12*3", "36")]),
        ("3+4=7", [("3+4", "7")]),
        ("x = 3 * 4 = 12", [("3 * 4", "12")]),  # "= 3 * 4" goes on: a rewriting, not a result
        ("a = 2 + 3 = 5", [("2 + 3", "5")]),
        ("6 fish * 1/3 = 2", []),  # starts with an operator: its first operand carried a unit
        ("Cost: $5 + $3 = $8", [("$5 + $3", "8")]),
        ("so, 3 + 4 = 7", [("3 + 4", "7")]),  # the leading comma is dropped
        ("-3 - 2 = -5", [("-3 - 2", "-5")]),
        ("2 x 3 = 6", [("2 x 3", "6")]),
        ("total = 5", []),  # no operation
        ("7\n2 + 3 = 5", [("2 + 3", "5")]),
        ("total= 5", []),  # a word right before "=": no expression at all
        ("6 fish * 1/3 = 2, and 3 + 4 = 7", [("3 + 4", "7")]),  # a skipped run does not end the search
        ("12+" * 30 + "1=9", []),  # the 80 characters before "=" begin with "+": not the whole expression
        ("12+" * 30 + "12=9", [("12+" * 26 + "12", "9")]),  # begins "12+": the last 80 characters, read whole
    ],
)
def test_written_arithmetic(text: str, found: list[tuple[str, str]]) -> None:
    assert written_arithmetic(text) == found


def test_arithmetic_checks_counts_checked_and_wrong() -> None:
    assert arithmetic_checks("12 * 3 = 36 and 2 + 2 = 5") == (2, 1)
    assert arithmetic_checks("2 + 2 = 4, 1/0 = 3") == (1, 0)  # 1/0 cannot be checked
    assert arithmetic_checks("no sums here") == (0, 0)
    assert arithmetic_checks("1/0 = 3 and 2 + 2 = 5") == (1, 1)  # the unreadable one first: the next is still checked


def test_only_plain_arithmetic_is_evaluated() -> None:
    for text in ("2**3", "7 % 3", "f(1)", "True"):
        with pytest.raises(ValueError, match=r"^not plain arithmetic$"):
            _safe_eval(ast.parse(text, mode="eval"))


# --- features -------------------------------------------------------------------------------------------------------


def test_a_request_needs_an_answer_and_the_task_may_be_missing() -> None:
    with pytest.raises(ValueError, match=r"^a request needs at least one answer$"):
        features({"task": "Q?", "answers": []})  # type: ignore[typeddict-item]
    view = _view({"answers": [{"agent_id": "a", "text": "7"}]})  # type: ignore[typeddict-item]
    assert (view.task, view.question, view.premise, view.evidence) == ("", "", "", "")


def test_feature_names_are_the_groups_in_order() -> None:
    found = _features(["7", "8"])
    view = _view(_request(["7", "8"]))  # type: ignore[arg-type]
    names = [name for group in FEATURE_GROUPS for name in group(view)]
    assert list(found) == names and len(names) == len(set(names))


def test_agreement_features_at_the_majority_threshold() -> None:
    """7, 7, 7, 8, 9: groups [7 x3], [8], [9]; 3 of 5 = 0.6 is a majority (3 x 5 >= 5 x 3)."""
    expected = {
        "agreement": 0.6,
        "agreement_builtin": 0.6,
        "n_answers": 5.0,
        "n_groups": 3.0,
        "distinct_ratio": 0.6,  # 3 groups / 5 answers
        "largest_group": 3.0,
        "second_share": 0.2,  # the [8] group: 1 of 5
        "unanimous": 0.0,
        "has_majority": 1.0,
        "one_dissenter": 0.0,  # two answers outside the majority
        "numeric_share": 1.0,
    }
    assert _pick(_features(["7", "7", "7", "8", "9"]), expected) == expected


@pytest.mark.parametrize(
    ("texts", "has_majority", "one_dissenter", "unanimous", "second_share"),
    [
        (["7", "7", "7", "7", "8", "9", "10"], 0.0, 0.0, 0.0, 1 / 7),  # 4 of 7 = 0.571: 20 < 21, no majority
        (["7", "7", "8"], 1.0, 1.0, 0.0, 1 / 3),  # one answer outside a group of 2
        (["7", "8"], 0.0, 0.0, 0.0, 0.5),  # one outside, but the "group" is a single answer
        (["7"], 1.0, 0.0, 1.0, 0.0),  # one answer: unanimous, nobody outside
    ],
)
def test_agreement_features_around_the_boundaries(
    texts: list[str], has_majority: float, one_dissenter: float, unanimous: float, second_share: float
) -> None:
    found = _features(texts)
    assert (found["has_majority"], found["one_dissenter"], found["unanimous"]) == (
        has_majority,
        one_dissenter,
        unanimous,
    )
    assert found["second_share"] == pytest.approx(second_share)


def test_agreement_features_on_words() -> None:
    """ "Canberra." and "I think Canberra" claim {canberra}; "7" a number: numeric share 1 of 3. The built-in share
    (last number or all content words): {canberra}, {canberra}, 7: 2 of 3."""
    found = _features(["Canberra.", "I think Canberra", "7"])
    assert found["numeric_share"] == pytest.approx(1 / 3)
    assert found["agreement"] == pytest.approx(2 / 3) and found["agreement_builtin"] == pytest.approx(2 / 3)


def test_vote_features() -> None:
    """A: 12, A: 12, A: 9 and a text with no value: n 4, top 2 (50%, no 60% consensus), 2 distinct, 1 unread, only 3
    of 4 anchored."""
    expected = {
        "vote_top_share": 0.5,  # 2 of 4
        "vote_distinct_ratio": 0.5,  # 2 values over 4 answers
        "vote_unanimous": 0.0,
        "vote_consensus": 0.0,  # 2 x 5 = 10 < 4 x 3 = 12
        "vote_unread_share": 0.25,
        "vote_anchored": 0.0,
    }
    assert _pick(_features(["A: 12", "A: 12", "A: 9", "word " * 100]), expected) == expected
    found = _features(["A: 12", "A: 12", "A: 12"])
    assert (found["vote_top_share"], found["vote_distinct_ratio"]) == (1.0, pytest.approx(1 / 3))
    assert (found["vote_unanimous"], found["vote_consensus"], found["vote_anchored"]) == (1.0, 1.0, 1.0)
    assert found["vote_unread_share"] == 0.0


def test_similarity_features() -> None:
    """ "red blue green" twice and "I agree: red". Pairs: (0, 1) Jaccard 3/3 = 1 (both near duplicates), shared
    "red blue green" (3 words, 3/3 of the shorter); (0, 2) and (1, 2): {red} of {red, blue, green, i, agree} = 0.2.
    Mean (1 + 0.2 + 0.2) / 3 = 0.4667. "I agree" is a copy phrase: 1 of 3. Later answers: the 2nd has no copy phrase,
    the 3rd has one and claims {red}, which the 1st's {red, blue, green} contains (overlap 1/1): 1 of 2."""
    found = _features(["red blue green", "red blue green", "I agree: red"], task="Pick colours?")
    assert found["mean_jaccard"] == pytest.approx(1.4 / 3)
    assert found["max_jaccard"] == 1.0
    assert found["near_duplicate_share"] == pytest.approx(2 / 3)
    assert found["max_shared_ngram"] == 3.0
    assert found["shared_ngram_ratio"] == 1.0
    assert found["copy_phrase_share"] == pytest.approx(1 / 3)
    assert found["later_copy_share"] == 0.5


def test_similarity_near_duplicate_threshold_and_ratio() -> None:
    """Ten words and the first nine of them: Jaccard 9/10 = 0.9, exactly the threshold: both near duplicates. Shared
    run "w0 .. w8" of 9 words over the shorter answer's 9 words: 1.0. Adding an 11th word: 9/11 = 0.818, neither."""
    ten = " ".join(f"w{i}" for i in range(10))
    nine = " ".join(f"w{i}" for i in range(9))
    found = _features([ten, nine])
    assert (found["near_duplicate_share"], found["max_jaccard"]) == (1.0, 0.9)
    assert (found["max_shared_ngram"], found["shared_ngram_ratio"]) == (9.0, 1.0)
    found = _features([ten + " w10", nine])
    assert found["near_duplicate_share"] == 0.0 and found["max_jaccard"] == pytest.approx(9 / 11)
    # "x y" against "x z w": shared "x" (1 word) over the shorter (2 words): 0.5
    assert _features(["x y", "x z w"])["shared_ngram_ratio"] == 0.5


def test_similarity_of_one_answer_and_of_copies_that_claim_something_else() -> None:
    """One answer: no pairs, every similarity 0. A copy phrase with a different claim is no later copy."""
    one = _features(["red"])
    assert (one["mean_jaccard"], one["max_jaccard"], one["later_copy_share"]) == (0.0, 0.0, 0.0)
    found = _features(["7", "Same as the others: 8"])
    assert (found["copy_phrase_share"], found["later_copy_share"]) == (0.5, 0.0)
    found = _features(["7", "Same as the others: 7", "9"])  # the 2nd copies the 1st; the 3rd neither
    assert (found["copy_phrase_share"], found["later_copy_share"]) == (pytest.approx(1 / 3), 0.5)


def test_premise_features() -> None:
    """Premise "Note: the capital is Sydney." ({capital, sydney}); question words {capital, australia}. Claims
    {sydney}, {sydney}, {canberra}: majority {sydney} is fully stated (1/1), the dissenter's {canberra} not at all.
    "per the" in the first answer points at the note: 1 of 3."""
    task = "Note: the capital is Sydney.\nWhat is the capital of Australia?"
    found = _features(["Sydney, per the note.", "Sydney.", "Canberra."], task=task)
    expected = {"has_premise": 1.0, "premise_majority_support": 1.0, "premise_minority_support": 0.0}
    assert _pick(found, expected) == expected
    assert found["note_mention_share"] == pytest.approx(1 / 3)
    # the dissenter's claim is the premise's: majority 0, minority 1
    found = _features(["Canberra.", "Canberra.", "Sydney."], task=task)
    assert (found["premise_majority_support"], found["premise_minority_support"]) == (0.0, 1.0)
    # no premise: zeros, but mentions are still counted ("as given" in 1 of 2)
    found = _features(["As given, 5", "5"], task="What is 2 + 3?")
    assert (found["has_premise"], found["premise_majority_support"], found["premise_minority_support"]) == (0, 0, 0)
    assert found["note_mention_share"] == 0.5


def test_support_of_a_claim() -> None:
    """A number claim: whether the text holds it. A word claim: shared words over min(2, claim size), at most 1."""
    assert _support(_k(number=12.0), "it is 12 apples", frozenset()) == 1.0
    assert _support(_k(number=12.0), "it is 13", frozenset()) == 0.0
    assert _support(_k(), "anything", frozenset({"anything"})) == 0.0
    assert _support(_k("a", "b", "c"), "", frozenset({"a"})) == 0.5  # 1 / min(2, 3)
    assert _support(_k("a", "b", "c"), "", frozenset({"a", "b", "c"})) == 1.0  # 3 / 2, capped
    assert _support(_k("a"), "", frozenset({"a"})) == 1.0  # 1 / min(2, 1)


def test_stance_features() -> None:
    """ "Maybe 7." (hedged, 2 words, bare), "7 because 3 + 4 = 7." (reasoned, 5 words), "Actually it is 8, definitely."
    (dissent, certainty, 5 words, bare). Majority [0, 1] claim 7, minority [2] claims 8."""
    found = _features(["Maybe 7.", "7 because 3 + 4 = 7.", "Actually it is 8, definitely."])
    expected = {
        "hedge_share": 1 / 3,
        "majority_hedge_share": 0.5,
        "minority_hedge_share": 0.0,
        "first_hedged": 1.0,
        "dissent_share": 1 / 3,
        "minority_dissent": 1.0,
        "reason_share": 1 / 3,
        "majority_reason_share": 0.5,
        "minority_reason_share": 0.0,
        "certainty_share": 1 / 3,
        "bare_share": 2 / 3,
    }
    assert _pick(found, expected) == pytest.approx(expected)


def test_stance_features_of_the_minority_and_the_length_boundaries() -> None:
    """ "7", "7", "Perhaps 8 because of the carry" (hedged, reasoned, dissenting? no): the minority's shares are 1.
    A 41-word answer with no reason word counts as reasoned, a 40-word one does not; six words with no reason are
    bare, seven are not."""
    found = _features(["7", "7", "Perhaps 8 because of the carry"])
    assert (found["minority_hedge_share"], found["minority_reason_share"], found["first_hedged"]) == (1.0, 1.0, 0.0)
    assert found["minority_dissent"] == 0.0
    forty = " ".join(["word"] * 40)
    assert _features([forty])["reason_share"] == 0.0
    assert _features([forty + " word"])["reason_share"] == 1.0
    assert _features(["one two three four five six"])["bare_share"] == 1.0
    assert _features(["one two three four five six seven"])["bare_share"] == 0.0


def test_evidence_features() -> None:
    """Evidence "The capital is Canberra" / "It is in the ACT" ({capital, canberra, act}); claims {sydney} x2 and
    {canberra}: majority support 0, minority 1, margin -1, and the worded majority claim is not in the evidence at
    all: silent."""
    found = _features(
        ["Sydney.", "Sydney.", "Canberra."],
        task="What is the capital of Australia?",
        evidence=["The capital is Canberra", "It is in the ACT"],
    )
    assert (found["has_evidence"], found["evidence_majority_support"]) == (1.0, 0.0)
    assert (found["evidence_minority_support"], found["evidence_margin"], found["evidence_silent"]) == (1.0, -1.0, 1.0)


def test_evidence_features_for_the_majority_and_numbers() -> None:
    found = _features(["Sydney.", "Sydney."], evidence=["Sydney is the largest city"])
    # unanimous: no minority, support 1 - 0
    assert (found["evidence_majority_support"], found["evidence_minority_support"], found["evidence_margin"]) == (
        1.0,
        0.0,
        1.0,
    )
    assert found["evidence_silent"] == 0.0
    # a numeric majority the evidence does not state is not "silent": evidence gives a method, not the result
    found = _features(["12", "12", "13"], evidence=["Add them up."])
    assert (found["evidence_majority_support"], found["evidence_silent"]) == (0.0, 0.0)
    # two minority groups: the best supported counts ({b} 1.0 over {c} 0)
    found = _features(["alpha", "alpha", "alpha", "beta", "gamma"], evidence=["beta"])
    assert (found["evidence_minority_support"], found["evidence_margin"]) == (1.0, -1.0)
    none = _features(["Sydney."])
    assert [none[k] for k in ("has_evidence", "evidence_majority_support", "evidence_margin", "evidence_silent")] == [
        0.0
    ] * 4
    assert none["evidence_minority_support"] == 0.0


def test_arithmetic_features() -> None:
    """ "3 + 4 = 7" (right), "2 * 3 = 7, so 7" (wrong: 6) both claim 7; "9 - 1 = 8" (right) claims 8. Three checked,
    one wrong; 1 of 3 answers wrong; 1 of the 2 majority answers; none of the minority."""
    found = _features(["3 + 4 = 7", "2 * 3 = 7, so 7", "9 - 1 = 8"])
    expected = {
        "arith_checked": 3.0,
        "arith_mismatches": 1.0,
        "arith_wrong_share": 1 / 3,
        "majority_arith_wrong": 0.5,
        "minority_arith_wrong": 0.0,
    }
    assert _pick(found, expected) == pytest.approx(expected)
    found = _features(["3 + 4 = 7", "3 + 4 = 7", "9 - 1 = 7 and 2 + 2 = 5"])  # the dissenter has both wrong
    assert (found["arith_mismatches"], found["minority_arith_wrong"], found["majority_arith_wrong"]) == (2.0, 1.0, 0.0)


def test_length_features() -> None:
    """Lengths 2, 4, 6 words ("it 7" and "so it is 7" claim 7; "no it is not 7 8" claims its last number, 8):
    mean 4, population sd sqrt((4 + 0 + 4) / 3) = 1.633, cv 0.408; minority mean 6 over majority mean 3 = 2.0."""
    found = _features(["it 7", "so it is 7", "no it is not 7 8"])
    assert found["mean_words"] == 4.0
    assert found["length_cv"] == pytest.approx(math.sqrt(8 / 3) / 4)
    assert found["length_cv"] == pytest.approx(statistics.pstdev([2, 4, 6]) / 4)
    assert found["minority_length_ratio"] == 2.0
    unanimous = _features(["7", "it is 7"])
    assert unanimous["minority_length_ratio"] == 0.0
    assert _features([""])["length_cv"] == 0.0  # no words at all: mean 0


# --- rule: signals and the hand-set rule --------------------------------------------------------------------------

QUIET: dict[str, float] = {
    "vote_anchored": 0.0,
    "vote_consensus": 0.0,
    "vote_unanimous": 0.0,
    "has_majority": 1.0,
    "unanimous": 1.0,
    "distinct_ratio": 0.25,
    "has_evidence": 0.0,
    "evidence_margin": 0.0,
    "evidence_silent": 0.0,
    "majority_arith_wrong": 0.0,
    "minority_arith_wrong": 0.0,
    "later_copy_share": 0.0,
    "copy_phrase_share": 0.0,
    "has_premise": 0.0,
    "premise_majority_support": 0.0,
    "note_mention_share": 0.0,
    "minority_dissent": 0.0,
    "majority_hedge_share": 0.0,
    "first_hedged": 0.0,
}
"""Features of an independent, unanimous, unchecked consensus read from claims: no signal on. (The vote fields
disagree with the claim fields on purpose: read while `vote_anchored` is 0, they would switch signals on.)"""


def _on(**changes: float) -> list[str]:
    return [name for name, value in signals({**QUIET, **changes}).items() if value]


def test_quiet_features_switch_no_signal_on() -> None:
    assert _on() == []
    assert rule(QUIET) == ("low", 0.2, [])


def test_majority_and_dissent_are_read_from_votes_only_when_every_answer_is_anchored() -> None:
    assert _on(has_majority=0.0) == ["no_majority"]
    assert _on(unanimous=0.0) == ["dissent"]
    assert _on(vote_anchored=1.0) == ["no_majority", "dissent"]  # votes: no consensus, not unanimous
    assert _on(vote_anchored=1.0, vote_consensus=1.0, vote_unanimous=1.0, has_majority=0.0, unanimous=0.0) == []


@pytest.mark.parametrize(
    ("changes", "on"),
    [
        ({"has_evidence": 1.0}, []),  # margin exactly 0, not silent: neither for nor against
        ({"has_evidence": 1.0, "evidence_margin": 0.5}, ["evidence_for"]),
        ({"evidence_margin": 0.5}, []),  # no evidence: the margin means nothing
        ({"has_evidence": 1.0, "evidence_margin": -0.5}, ["evidence_against"]),
        ({"evidence_margin": -0.5, "evidence_silent": 1.0}, []),
        ({"has_evidence": 1.0, "evidence_silent": 1.0}, ["evidence_against"]),
        ({"majority_arith_wrong": 0.5}, ["arithmetic_slip"]),
        ({"minority_arith_wrong": 0.5}, ["dissenter_slip"]),
        ({"minority_arith_wrong": 0.5, "majority_arith_wrong": 0.5}, ["arithmetic_slip"]),
        ({"later_copy_share": 0.5}, ["copying"]),
        ({"copy_phrase_share": 0.25}, ["copying"]),  # exactly the threshold
        ({"copy_phrase_share": 0.2499}, []),
        ({"has_premise": 1.0}, []),
        ({"has_premise": 1.0, "premise_majority_support": 0.5}, ["premise_echo"]),  # exactly the threshold
        ({"has_premise": 1.0, "premise_majority_support": 0.4999}, []),
        ({"has_premise": 1.0, "note_mention_share": 0.25}, ["premise_echo"]),
        ({"premise_majority_support": 1.0, "note_mention_share": 1.0}, []),  # no premise to echo
        ({"minority_dissent": 1.0}, ["rebuttal"]),
        ({"majority_hedge_share": 0.5}, ["hedged_majority"]),  # exactly the threshold
        ({"majority_hedge_share": 0.4999}, []),
        ({"first_hedged": 1.0}, []),  # a hedged first answer nobody repeated
        ({"first_hedged": 1.0, "later_copy_share": 0.5}, ["copying", "hedged_source"]),
    ],
)
def test_each_signal_at_its_boundary(changes: dict[str, float], on: list[str]) -> None:
    assert _on(**changes) == on


def test_no_majority_is_medium_scored_by_distinct_claims() -> None:
    """0.45 - 0.1 x distinct ratio: 0.6 -> 0.39; with the evidence against the majority, + 0.1 -> 0.49. It comes
    first: a majority arithmetic slip does not make it high."""
    f = {**QUIET, "has_majority": 0.0, "distinct_ratio": 0.6}
    assert rule(f) == ("medium", 0.39, ["no_majority"])
    f_against = {**f, "has_evidence": 1.0, "evidence_margin": -1.0, "majority_arith_wrong": 1.0}
    assert rule(f_against) == ("medium", 0.49, ["no_majority", "evidence_against", "arithmetic_slip"])
    assert rule({**f, "distinct_ratio": 2 / 3}) == ("medium", 0.3833, ["no_majority"])  # 0.45 - 0.0667 = 0.38333


def test_high_scores_count_the_alarms_up_to_095() -> None:
    """0.6 + 0.07 per alarm on: 1 -> 0.67, 2 -> 0.74, 5 -> 0.95, 6 -> 0.6 + 0.42 = 1.02, held at 0.95."""
    risk, score, on = rule({**QUIET, "majority_arith_wrong": 1.0})
    assert (risk, on) == ("high", ["arithmetic_slip"]) and score == pytest.approx(0.67)
    risk, score, _ = rule({**QUIET, "majority_arith_wrong": 1.0, "minority_dissent": 1.0})
    assert (risk, score) == ("high", pytest.approx(0.74))
    five = {"majority_arith_wrong": 1.0, "minority_dissent": 1.0, "unanimous": 0.0, "majority_hedge_share": 1.0}
    risk, score, _ = rule({**QUIET, **five, "later_copy_share": 0.5})  # + copying = 5
    assert (risk, score) == ("high", pytest.approx(0.95))
    six = {**five, "later_copy_share": 0.5, "first_hedged": 1.0}  # + hedged_source = 6
    risk, score, _ = rule({**QUIET, **six})
    assert (risk, score) == ("high", 0.95)
    risk, score, _ = rule({**QUIET, **six, "has_evidence": 1.0, "evidence_margin": -1.0})  # 7 alarms
    assert (risk, score) == ("high", 0.95)


def test_evidence_against_is_high_before_copying_and_support() -> None:
    f = {**QUIET, "has_evidence": 1.0, "evidence_silent": 1.0, "later_copy_share": 0.5}
    risk, score, on = rule(f)
    assert (risk, on) == ("high", ["evidence_against", "copying"]) and score == pytest.approx(0.74)


def test_copying_or_an_echoed_note_is_medium_without_a_sign_of_error() -> None:
    assert rule({**QUIET, "later_copy_share": 0.5}) == ("medium", 0.5, ["copying"])
    assert rule({**QUIET, "has_premise": 1.0, "note_mention_share": 0.5}) == ("medium", 0.5, ["premise_echo"])
    # copying outranks supporting evidence
    assert rule({**QUIET, "later_copy_share": 0.5, "has_evidence": 1.0, "evidence_margin": 1.0})[0:2] == ("medium", 0.5)


@pytest.mark.parametrize(
    ("sign", "alarms", "echo"),
    [
        ({"unanimous": 0.0}, 2, "high"),  # a dissenter
        ({"minority_dissent": 1.0}, 2, "high"),  # a rebuttal
        ({"majority_hedge_share": 0.5}, 2, "high"),  # a hedged majority
        # a hedged first answer that the copy repeated; an echoed note with no copy repeats no hedged first answer
        ({"first_hedged": 1.0}, 2, "medium"),
    ],
)
def test_copying_with_a_sign_of_error_is_high(sign: dict[str, float], alarms: int, echo: str) -> None:
    """Copying plus one sign: two alarms, 0.6 + 0.14 = 0.74. An echoed note plus the same sign: high too (but a
    hedged first answer is a sign only when a later answer copied it)."""
    risk, score, _ = rule({**QUIET, "later_copy_share": 0.5, **sign})
    assert risk == "high" and score == pytest.approx(0.6 + 0.07 * alarms)
    risk, _, _ = rule({**QUIET, "has_premise": 1.0, "premise_majority_support": 1.0, **sign})
    assert risk == echo


def test_support_is_low_and_dissent_alone_is_high() -> None:
    """Evidence for the majority: low 0.1, 0.2 with a dissenter. A dissenter's own arithmetic slip: the same. A
    dissenter with nothing else: high 0.67 (one alarm)."""
    assert rule({**QUIET, "has_evidence": 1.0, "evidence_margin": 1.0}) == ("low", 0.1, ["evidence_for"])
    risk, score, on = rule({**QUIET, "has_evidence": 1.0, "evidence_margin": 1.0, "unanimous": 0.0})
    assert (risk, on) == ("low", ["evidence_for", "dissent"]) and score == pytest.approx(0.2)
    risk, score, on = rule({**QUIET, "minority_arith_wrong": 1.0, "unanimous": 0.0})
    assert (risk, on) == ("low", ["dissenter_slip", "dissent"]) and score == pytest.approx(0.2)
    risk, score, on = rule({**QUIET, "unanimous": 0.0})
    assert (risk, on) == ("high", ["dissent"]) and score == pytest.approx(0.67)


def test_heuristic_detector_reports_its_signals_and_agreement() -> None:
    """ "7", "7", "8": claims 7, 7, 8 (no anchor: claims decide); 2 of 3 is a majority (10 >= 9) with a dissenter:
    high, 0.6 + 0.07 = 0.67, agreement 0.6667."""
    detector = Heuristic()
    assert detector.name == "builtin:heuristic"
    found = asyncio.run(detector.assess(_request(["7", "7", "8"])))  # type: ignore[arg-type]
    assert (found.risk, found.score) == ("high", 0.67)
    assert dict(found.extra) == {"signals": ["dissent"], "agreement": 0.6667}
    assert asyncio.run(detector.aclose()) is None


# --- features: more boundaries -------------------------------------------------------------------------------------


def test_shares_of_an_empty_minority_are_zero() -> None:
    """Two hedged answers on one claim: no minority, so its shares are 0 (not 1), the majority's are 1."""
    found = _features(["Maybe 7", "Maybe 7"])
    assert (found["majority_hedge_share"], found["minority_hedge_share"]) == (1.0, 0.0)
    assert (found["minority_reason_share"], found["minority_dissent"], found["minority_arith_wrong"]) == (0.0, 0.0, 0.0)


def test_the_majority_claim_is_its_most_concise_member() -> None:
    """ "Sydney." ({sydney}) and "Sydney, the largest city." ({sydney, largest, city}) agree (overlap 1/1). The core
    claim is {sydney}: the evidence "Sydney" states all of it (1/1 = 1.0); the longer claim would get 1/2 = 0.5."""
    found = _features(["Sydney, the largest city.", "Sydney."], evidence=["Sydney"])
    assert found["evidence_majority_support"] == 1.0


def test_a_date_claim_the_evidence_does_not_state_is_not_silent() -> None:
    """ "2019-03-07" is claimed as the word "20190307" (a date is no number), which has no letter: not "silent"."""
    found = _features(["2019-03-07", "2019-03-07"], evidence=["Some other day"])
    assert (found["evidence_majority_support"], found["evidence_silent"]) == (0.0, 0.0)


def test_ratios_of_one_word_answers_and_empty_majorities() -> None:
    """ "x" and "x y" share "x": 1 word over the shorter's 1 = 1.0. Two empty answers (the same empty claim) against
    "seven": the majority has no words, so the length ratio is 0, not a division by zero."""
    assert _features(["x", "x y"])["shared_ngram_ratio"] == 1.0
    found = _features(["", "", "seven"])
    assert (found["minority_length_ratio"], found["largest_group"]) == (0.0, 2.0)


def test_claims_leave_out_the_question_words_and_numbers() -> None:
    """ "Canberra is the capital" / "The capital is Sydney" on "What is the capital of Australia?": less the question's
    {capital, australia}, the claims are {canberra} and {sydney}: two groups, 1 of 2. (With "capital" kept they would
    share 1 of 2 words and agree.) "5 + 7 is 12" / "12 plus 5" on "What is 5 + 7?": the question's 5 and 7 are not
    claims, so both claim 12: one group."""
    task = "What is the capital of Australia?"
    assert _features(["Canberra is the capital", "The capital is Sydney"], task=task)["agreement"] == 0.5
    assert _features(["5 + 7 is 12", "12 plus 5"], task="What is 5 + 7?")["agreement"] == 1.0


def test_premise_support_of_number_claims() -> None:
    """Premise "Note: the total is 12." holds 12: the majority's 12 is supported (1.0), the dissenter's 13 not (0);
    the other way round when the dissenter says 12. A unanimous answer set has no minority: its support is 0."""
    task = "Note: the total is 12.\nWhat is 5 + 7?"
    found = _features(["12", "12", "13"], task=task)
    assert (found["premise_majority_support"], found["premise_minority_support"]) == (1.0, 0.0)
    found = _features(["13", "13", "12"], task=task)
    assert (found["premise_majority_support"], found["premise_minority_support"]) == (0.0, 1.0)
    found = _features(["12", "12"], task=task)
    assert (found["has_premise"], found["premise_minority_support"]) == (1.0, 0.0)


def test_no_pair_shares_no_words() -> None:
    assert _features(["red"])["max_shared_ngram"] == 0.0  # one answer: no pair at all
    assert _features(["x", "y"])["max_shared_ngram"] == 0.0


def test_heuristic_detector_keeps_four_decimals_of_its_score() -> None:
    """7, 7, 7, 8, 8, 9, 9: claims in groups of 3, 2 and 2, 3 of 7 (0.4286) is no majority: medium, scored
    0.45 - 0.1 x 3/7 = 0.45 - 0.042857 = 0.407143, reported as 0.4071 (four decimals, as every risk_score)."""
    found = asyncio.run(Heuristic().assess(_request(["7", "7", "7", "8", "8", "9", "9"])))  # type: ignore[arg-type]
    assert (found.risk, found.score) == ("medium", 0.4071)


def test_the_minority_is_every_answer_outside_the_majority_however_many_groups() -> None:
    """ "7", "7", "7", "8", "Perhaps 9 because of the carry": groups [0, 1, 2], [3], [4]; the minority is answers 3 and
    4, not only the second group. Hedged: "8" no, "Perhaps ..." yes: 1/2 = 0.5; reasoned the same, 0.5. Lengths: the
    majority 1, 1, 1 (mean 1), the minority 1 and 6 (perhaps, 9, because, of, the, carry; mean 3.5): ratio 3.5."""
    found = _features(["7", "7", "7", "8", "Perhaps 9 because of the carry"])
    expected = {"minority_hedge_share": 0.5, "minority_reason_share": 0.5, "minority_length_ratio": 3.5}
    assert _pick(found, expected) == expected


def test_a_result_cue_counts_for_a_number_at_the_start_of_an_answer() -> None:
    """ "Total: 12 apples, not 15 as some said": 12 stands 7 characters in, after "Total: " (the cue ":"), so it is
    the number asserted; 15 follows no cue. Looking back 14 characters from 12 must stop at the start of the text,
    not wrap round to its end (which would find no cue and fall back to the last number, 15)."""
    assert final_number("Total: 12 apples, not 15 as some said") == 12.0


def test_the_second_share_is_the_second_largest_group() -> None:
    """Paris x3, Lyon x2, Nice x1 (6 answers): the second group is Lyon's, 2 / 6 = 0.3333, not the last one (1 / 6)."""
    found = _features(["Paris.", "Paris.", "Paris.", "Lyon.", "Lyon.", "Nice."])
    assert found["second_share"] == pytest.approx(2 / 6)
