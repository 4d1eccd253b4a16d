"""Exact rules and count leakage (fcb_datasets/audit/rules.py) on tiny hand-made benchmarks.

Every question starts with a word of its own (``u<i>``) and every answer is a word of its own, so the only features
shared by several cases are the ones a test plants; the rule each planted feature makes (or does not make) is worked
out in the test from the thresholds: precision >= 0.95, recall >= 0.30, on at least ``RULE_MIN_CASES`` (5) cases of
a category of at least 5 cases (issue 46: the answer-count rules went unchecked).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fcb_datasets.audit import rules as R
from fcb_datasets.audit.rules import (
    _answer_matrix,
    _count_block,
    _prefixes,
    _rule,
    count_leakage,
    exact_rules,
    rule_features,
)
from fcb_datasets.audit.view import CaseView

A, B, C = "echo_cascade", "genuine_disagreement", "majority_wrong_fact"
CATS = [A, B, C]
_serial = itertools.count()


def view(category: str, question: str = "", n: int = 2, answers: tuple[str, ...] | None = None,
         source: str = "src", lead: bool = True) -> CaseView:  # fmt: skip
    """A case whose question starts (``lead``, else ends) with a word of its own, and whose answers are words of
    their own."""
    i = next(_serial)
    own = f"u{i} {question}" if lead else f"{question} u{i}"
    return CaseView(
        file="train", line=i + 1, case_id=f"c{i}", category=category, question=own.strip(),
        answers=answers if answers is not None else tuple(f"a{i}x{j}" for j in range(n)), source_dataset=source,
        source_identity=f"{source}:{i}", origin="natural", has_evidence=False,
    )  # fmt: skip


def plain(category: str, k: int, **kw: object) -> list[CaseView]:
    return [view(category, **kw) for _ in range(k)]  # type: ignore[arg-type]


def test_the_thresholds() -> None:
    assert (R.RULE_PRECISION, R.RULE_RECALL, R.RULE_MIN_CASES, R.RULES_LISTED) == (0.95, 0.30, 5, 20)


# --- features -------------------------------------------------------------------------------------------------------


def test_prefixes_are_the_first_one_to_six_words_lowered() -> None:
    words = "What IS the capital, of France today now?"
    assert _prefixes(words) == ["what", "what is", "what is the", "what is the capital", "what is the capital of",
                                "what is the capital of france"]  # fmt: skip
    assert _prefixes("Two words") == ["two", "two words"]
    assert _prefixes("") == []


def test_the_answer_matrix_maps_each_answer_to_its_case() -> None:
    items = [view(A, n=2), view(A, n=3), view(A, n=1)]
    m = _answer_matrix(items).toarray()
    # answers 0-1 belong to case 0, 2-4 to case 1, 5 to case 2
    assert m.tolist() == [[1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 0], [0, 0, 0, 0, 0, 1]]


def test_the_answer_matrix_keeps_a_last_case_without_answers() -> None:
    # three cases, the last with no answer: still three rows (the third all zero), three answer columns
    m = _answer_matrix([view(A, n=2), view(A, n=1), view(A, n=0)])
    assert m.shape == (3, 3)
    assert m.toarray().tolist() == [[1, 1, 0], [0, 0, 1], [0, 0, 0]]


def test_count_conditions_skip_those_every_case_meets() -> None:
    # answers per case 3, 3, 4, 5. v=3: "= 3" and "<= 3" pick cases 0-1; ">= 3" holds for all (skipped).
    # v=4: "= 4" case 2; "<= 4" cases 0-2; ">= 4" cases 2-3. v=5: "= 5" case 3; "<= 5" all (skipped); ">= 5" case 3.
    items = [view(A, n=3), view(A, n=3), view(A, n=4), view(A, n=5)]
    kind, x, names = _count_block(items)
    assert kind == "answer count"
    assert names == ["answers = 3", "answers <= 3", "answers = 4", "answers <= 4", "answers >= 4", "answers = 5",
                     "answers >= 5"]  # fmt: skip
    assert x.toarray().T.tolist() == [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 0], [1, 1, 1, 0], [0, 0, 1, 1],
                                      [0, 0, 0, 1], [0, 0, 0, 1]]  # fmt: skip


def test_one_answer_count_for_every_case_gives_no_condition() -> None:
    kind, x, names = _count_block([view(A, n=3), view(B, n=3)])
    assert (kind, names, x.shape) == ("answer count", [], (2, 0))


def test_rule_features_count_a_case_once_and_drop_kinds_under_min_df() -> None:
    # five cases: "yes" in both answers of each of the first four, in one answer of the fifth; questions all differ
    # past their own first word. Answer 1-grams at min_df 5: only "yes" (5 cases; counted once per case, not 9
    # times). Question n-grams and prefixes: every word is a case's own, none reaches 5: both kinds are dropped.
    items = [view(A, answers=("yes", "yes")) for _ in range(4)] + [view(A, answers=("yes", "no"))]
    blocks = rule_features(items, min_df=5)
    assert [kind for kind, _, _ in blocks] == ["answer n-gram", "answer prefix", "answer count"]
    _, x, names = blocks[0]
    assert names == ["yes"] and x.toarray().ravel().tolist() == [1, 1, 1, 1, 1]
    assert blocks[1][2] == ["yes"]
    assert blocks[2][2] == []  # two answers each: no count condition
    # at min_df 1 every kind is there, and the question n-grams hold each case's own word
    kinds = [kind for kind, _, _ in rule_features(items, min_df=1)]
    assert kinds == ["question n-gram", "answer n-gram", "question prefix", "answer prefix", "answer count"]


def test_rule_features_read_questions_for_question_kinds_and_answers_for_answer_kinds() -> None:
    items = [view(A, question="zebra", answers=("lion",)) for _ in range(5)]
    blocks = {kind: names for kind, _, names in rule_features(items, min_df=5)}
    assert blocks == {"question n-gram": ["zebra"], "answer n-gram": ["lion"], "answer prefix": ["lion"],
                      "answer count": []}  # fmt: skip


# --- exact rules: precision, recall and size at their boundaries ------------------------------------------------------


def only(rules: dict, target: list[str]) -> list[dict]:
    return [r for r in rules["rules"] if r["target"] == target]


def test_precision_exactly_0_95_is_a_rule_one_step_under_is_not() -> None:
    # A: 20 cases, 19 asking about a "zebra"; B: 20 cases, one asking about it. "zebra": 19 of 20 cases in A,
    # precision 19/20 = 0.95 (>= 0.95), recall 19/20 = 0.95 (>= 0.30): a rule for A.
    items = plain(A, 19, question="zebra") + plain(A, 1) + plain(B, 1, question="zebra") + plain(B, 19)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["target"]) for r in got["rules"]] == [("zebra", [A])]
    rule = got["rules"][0]
    assert (rule["in_target"], rule["with_feature"], rule["target_size"]) == (19, 20, 20)
    assert (rule["precision"], rule["recall"]) == (0.95, 0.95)
    # a second "zebra" in B: 19 of 21, precision 0.905 < 0.95; no pair either (B's 2 of 20 < 0.30 recall)
    items = plain(A, 19, question="zebra") + plain(A, 1) + plain(B, 2, question="zebra") + plain(B, 18)
    assert exact_rules(items, CATS, {})["rules"] == []


def test_recall_exactly_0_30_is_a_rule_one_step_under_is_not() -> None:
    # A 20 cases, B 40: min_df = max(5, ceil(0.3 * 20)) = 6. "kiwi" in 12 of B's 40: recall 12/40 = 0.30, a rule;
    # in 11 (over min_df 6, but 11/40 = 0.275 < 0.30): none.
    items = plain(A, 20) + plain(B, 12, question="kiwi") + plain(B, 28)
    rule = only(exact_rules(items, CATS, {}), [B])[0]
    assert (rule["text"], rule["in_target"], rule["target_size"], rule["precision"], rule["recall"]) == (
        "kiwi", 12, 40, 1.0, 0.3)  # fmt: skip
    items = plain(A, 20) + plain(B, 11, question="kiwi") + plain(B, 29)
    assert exact_rules(items, CATS, {})["rules"] == []


def test_min_df_is_30_percent_of_the_smallest_category_present() -> None:
    # A 20 cases, B 30: min_df = max(5, ceil(0.3 * 20)) = 6 (not ceil(0.3 * 30) = 9). "fig" on 6 of A's 20 cases:
    # recall 0.30, a rule; had min_df come from the larger category, no feature of 6 cases would be read.
    items = plain(A, 6, question="fig") + plain(A, 14) + plain(B, 30)
    assert [(r["text"], r["in_target"], r["recall"]) for r in exact_rules(items, CATS, {})["rules"]] == [
        ("fig", 6, 0.3)
    ]


def test_a_category_needs_five_cases() -> None:
    # C has 5 cases, all with "plum": a rule (precision 1, recall 1). Four cases would make C absent.
    items = plain(A, 10) + plain(C, 5, question="plum")
    assert [(r["text"], r["target"], r["recall"]) for r in exact_rules(items, CATS, {})["rules"]] == [
        ("plum", [C], 1.0)
    ]
    # C of 4 cases with "plum" plus a fifth "plum" in A: 5 cases reach min_df 5, but C is not present and A holds
    # 1 of 5: nothing
    items = plain(A, 9) + plain(A, 1, question="plum") + plain(C, 4, question="plum")
    assert exact_rules(items, CATS, {})["rules"] == []


def test_no_category_of_five_cases_means_no_rules() -> None:
    items = plain(A, 4, question="plum") + plain(B, 4, question="plum")
    got = exact_rules(items, CATS, {"x": []})
    assert got == {"rules": [], "total": 0, "by_target": {}, "min_cases": 5, "top_ngrams": {"x": []},
                   "thresholds": {"precision": 0.95, "recall": 0.3, "listed_per_target": 20}}  # fmt: skip


def test_a_feature_shared_by_two_categories_is_a_pair_rule() -> None:
    # A, B, C of 10 each; "fern" on 5 of A and 5 of B. Alone: 5 of 10 in A, precision 0.5. Together: 10 of 10
    # (precision 1.0), recall 10 / (10 + 10) = 0.5, and each holds 5 >= 0.3 * 10 = 3.
    items = plain(A, 5, question="fern") + plain(A, 5) + plain(B, 5, question="fern") + plain(B, 5) + plain(C, 10)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["target"]) for r in got["rules"]] == [("fern", [A, B])]
    rule = got["rules"][0]
    assert (rule["in_target"], rule["with_feature"], rule["target_size"], rule["precision"], rule["recall"]) == (
        10, 10, 20, 1.0, 0.5)  # fmt: skip
    assert got["by_target"] == {f"{A} + {B}": {"distinct_rules": 1, "features": 1}}
    assert got["total"] == 1


def test_a_pair_rule_needs_precision_and_each_side_s_recall() -> None:
    # "fern" on 5 of A, 5 of B and 1 of C: 10 of 11 = 0.909 < 0.95, no pair
    items = plain(A, 5, question="fern") + plain(A, 5) + plain(B, 5, question="fern") + plain(B, 5)
    items += plain(C, 1, question="fern") + plain(C, 9)
    assert exact_rules(items, CATS, {})["rules"] == []
    # 19 of 20 (precision exactly 0.95): A 17 of 20, B 2 of 20 (0.1 < 0.3 recall), C 1: no pair, and A alone is
    # 17 of 20 = 0.85: nothing
    items = plain(A, 17, question="fern") + plain(A, 3) + plain(B, 2, question="fern") + plain(B, 18)
    items += plain(C, 1, question="fern") + plain(C, 19)
    assert exact_rules(items, CATS, {})["rules"] == []
    # B with 6 of 20 (recall exactly 0.3), A 13, C 1: pair precision 19/20 = 0.95, both recalls >= 0.3: a pair
    items = plain(A, 13, question="fern") + plain(A, 7) + plain(B, 6, question="fern") + plain(B, 14)
    items += plain(C, 1, question="fern") + plain(C, 19)
    got = exact_rules(items, CATS, {})
    assert [(r["target"], r["in_target"], r["with_feature"], r["precision"], r["recall"]) for r in got["rules"]] == [
        ([A, B], 19, 20, 0.95, 0.475)  # recall 19 / 40
    ]
    # and A's side at exactly 0.3 (6 of 20) with B 13: the same pair
    items = plain(A, 6, question="fern") + plain(A, 14) + plain(B, 13, question="fern") + plain(B, 7)
    items += plain(C, 1, question="fern") + plain(C, 19)
    assert [r["target"] for r in exact_rules(items, CATS, {})["rules"]] == [[A, B]]
    # A with 5 of 20 (0.25) and B 14: no pair
    items = plain(A, 5, question="fern") + plain(A, 15) + plain(B, 14, question="fern") + plain(B, 6)
    items += plain(C, 1, question="fern") + plain(C, 19)
    assert exact_rules(items, CATS, {})["rules"] == []


def test_a_feature_that_is_a_rule_for_one_category_is_not_also_a_pair_rule() -> None:
    # A 40 cases all with "moth", B 6 cases, 2 with "moth", C 10. For A: 40 of 42 = 0.952 >= 0.95, recall 1: a rule.
    # As the pair A + B it would qualify too (42 of 42; B's 2 >= 0.3 * 6 = 1.8), but a single rule comes first.
    items = plain(A, 40, question="moth") + plain(B, 2, question="moth") + plain(B, 4) + plain(C, 10)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["target"], r["in_target"], r["with_feature"]) for r in got["rules"]] == [
        ("moth", [A], 40, 42)
    ]
    assert got["rules"][0]["precision"] == round(40 / 42, 4) == 0.9524


def test_both_single_and_pair_rules_are_found_for_other_features() -> None:
    # "moth" as above (A alone); "fern" on 5 of B and 5 of C (a pair B + C): the single rule of one feature does not
    # stop the pair rule of another
    items = plain(A, 40, question="moth") + plain(B, 5, question="fern") + plain(B, 5)
    items += plain(C, 5, question="fern") + plain(C, 5)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["target"]) for r in got["rules"]] == [("moth", [A]), ("fern", [B, C])]
    assert list(got["by_target"]) == [A, f"{B} + {C}"]


# --- one rule per set of cases ----------------------------------------------------------------------------------------


def test_features_on_one_set_of_cases_collapse_to_the_shortest_naming_the_longest() -> None:
    # A: 10 cases asking "zebra stripes", 4 answers each; B and C: 10 each, 3 answers. On A's ten cases exactly:
    # question n-grams "stripes", "zebra", "zebra stripes" (no question prefix: each question starts with a word of
    # its own); answer counts "answers = 4" and "answers >= 4". One rule: n-grams before counts, then the fewest
    # words, then the kind's order, then the text: "stripes"; the longest non-count feature "zebra stripes".
    # B + C: "answers <= 3" and "answers = 3" (20 of 20, recall 20/20): one rule, "<" sorting before "=".
    items = plain(A, 10, question="zebra stripes", n=4) + plain(B, 10, n=3) + plain(C, 10, n=3)
    got = exact_rules(items, CATS, {})
    assert [(r["kind"], r["text"], r["longest_equivalent"], r["equivalent_features"], r["target"])
            for r in got["rules"]] == [
        ("question n-gram", "stripes", "zebra stripes", 5, [A]),
        ("answer count", "answers <= 3", "answers <= 3", 2, [B, C]),
    ]  # fmt: skip
    assert got["by_target"] == {A: {"distinct_rules": 1, "features": 5},
                                f"{B} + {C}": {"distinct_rules": 1, "features": 2}}  # fmt: skip
    assert got["total"] == 2


def test_an_answer_count_rule_alone_names_itself() -> None:
    # A: 10 cases of 4 answers, B: 10 of 3 (C absent). For A: "answers = 4" and "answers >= 4" (the same cases;
    # "=" sorts first); for B: "answers <= 3" and "answers = 3". No n-gram: each names itself as longest.
    items = plain(A, 10, n=4) + plain(B, 10, n=3)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["longest_equivalent"], r["equivalent_features"], r["target"], r["precision"],
             r["recall"]) for r in got["rules"]] == [
        ("answers = 4", "answers = 4", 2, [A], 1.0, 1.0),
        ("answers <= 3", "answers <= 3", 2, [B], 1.0, 1.0),
    ]  # fmt: skip


def test_an_answer_prefix_and_a_question_prefix_are_read() -> None:
    # A: 6 cases whose answers start "in my view ..." (each its own last word); B 10 plain. Answer n-grams "in",
    # "my", "view", "in my", "my view", "in my view" and answer prefixes "in", "in my", "in my view": nine features,
    # all on A's six cases (one answer a case everywhere: no count condition): one rule, "in" (the answer n-gram
    # before the answer prefix of the same text), longest "in my view"
    items = [view(A, answers=(f"in my view w{k}",)) for k in range(6)] + plain(B, 10, n=1)
    got = exact_rules(items, CATS, {})
    assert [(r["kind"], r["text"], r["longest_equivalent"], r["equivalent_features"]) for r in got["rules"]] == [
        ("answer n-gram", "in", "in my view", 9)
    ]


def test_rules_of_one_target_are_ordered_by_recall_then_precision_then_words_then_text() -> None:
    # A 20 cases, B 20 (min_df 6). Planted on A's cases (i = 0..19 within A), each chunk followed by a word of the
    # case's own, so no n-gram spans two chunks:
    #   "beta" on 0-9 (recall 0.5, precision 1), "alpha" on 0-5 (0.3, 1), "gamma delta" on 10-19 (0.5, 1), and
    #   "omega" on A 0-18 plus B 0 (19 of 20: recall 0.95, precision 0.95).
    # "gamma", "delta" and "gamma delta" share the same cases: one rule, "delta" (one word, text before "gamma").
    # Order: omega (0.95), then recall 0.5: beta and delta, precision 1 both, one word both, by text; alpha last.
    a = []
    for i in range(20):
        chunks = ["omega"] * (i < 19) + ["beta"] * (i < 10) + ["alpha"] * (i < 6) + ["gamma delta"] * (i >= 10)
        a.append(view(A, question=" ".join(f"{w} s{i}x{k}" for k, w in enumerate(chunks))))
    items = a + plain(B, 1, question="omega") + plain(B, 19)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["recall"], r["precision"]) for r in got["rules"]] == [
        ("omega", 0.95, 0.95), ("beta", 0.5, 1.0), ("delta", 0.5, 1.0), ("alpha", 0.3, 1.0)
    ]  # fmt: skip
    assert got["by_target"] == {A: {"distinct_rules": 4, "features": 6}}  # delta, gamma, gamma delta: 3 features


def test_ties_in_recall_and_precision_go_to_fewer_words() -> None:
    # A 20 cases, B 20 (min_df 6). A 0-3 ask "zz aa", A 4-9 "zz", A 10-19 "aa bb"; B 0-3 "bb".
    # "zz": A 0-9, recall 0.5. "aa": A 0-3 and 10-19, recall 14/20 = 0.7. "aa bb": A 10-19, recall 0.5.
    # "bb": 10 of A, 4 of B, precision 10/14 < 0.95 (and as a pair, B's 4 < 6). "zz aa": 4 cases, under min_df.
    # Order: aa (0.7), then zz and "aa bb" (0.5, 1.0 both): one word before two.
    a = [view(A, question="zz aa" if i < 4 else "zz") for i in range(10)]
    a += [view(A, question="aa bb") for _ in range(10)]
    items = a + plain(B, 4, question="bb") + plain(B, 16)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["recall"]) for r in got["rules"]] == [("aa", 0.7), ("zz", 0.5), ("aa bb", 0.5)]


def test_twenty_rules_are_listed_per_target_and_all_are_counted() -> None:
    # A 10 cases; 21 words, each on its own 5-set of A's cases (two 5-sets share at most 4 cases, under min_df 5,
    # so no two-word feature reaches a rule): 21 distinct rules for A, all recall 0.5 and precision 1, listed by
    # text, the first 20 of them.
    subsets = list(itertools.combinations(range(10), 5))[:21]
    words = [f"w{k:02d}" for k in range(21)]
    a = [view(A, question=" ".join(w for w, s in zip(words, subsets, strict=True) if i in s)) for i in range(10)]
    got = exact_rules(a + plain(B, 10), CATS, {})
    assert got["by_target"] == {A: {"distinct_rules": 21, "features": 21}}
    assert got["total"] == 21
    assert [r["text"] for r in got["rules"]] == words[:20]


def test_the_rules_document_carries_the_thresholds_and_the_top_ngrams() -> None:
    top = {A: [{"ngram": "answer: x", "weight": 1.5}]}
    got = exact_rules(plain(A, 10, question="zebra") + plain(B, 10), CATS, top)
    assert got["top_ngrams"] is top
    assert (got["min_cases"], got["thresholds"]) == (5, {"precision": 0.95, "recall": 0.3, "listed_per_target": 20})


# --- count leakage ----------------------------------------------------------------------------------------------------


def test_count_leakage_counts_answers_per_case_by_category_and_source() -> None:
    # A: 3, 3, 5 answers (mmlu, mmlu, gsm); B: 4 (gsm); C none: absent from by_category
    items = [view(A, n=3, source="mmlu"), view(A, n=5, source="gsm"), view(A, n=3, source="mmlu"),
             view(B, n=4, source="gsm")]  # fmt: skip
    got = count_leakage(items, CATS, 0.375)
    assert got == {
        "by_category": {A: {"3": 2, "5": 1}, B: {"4": 1}},
        "by_source": {"gsm": {"4": 1, "5": 1}, "mmlu": {"3": 2}},
        "count_only_macro_f1": 0.375,
    }
    # keys in order: counts ascending (10 after 9, as numbers), sources by name
    items = [view(A, n=10, source="z"), view(A, n=9, source="a")]
    got = count_leakage(items, CATS, 0.0)
    assert list(got["by_category"][A]) == ["9", "10"] and list(got["by_source"]) == ["a", "z"]


def test_rule_figures_are_plain_python_numbers() -> None:
    # every figure in a rule is a plain Python number (the document is JSON)
    rule = exact_rules(plain(A, 10, question="zebra") + plain(B, 10), CATS, {})["rules"][0]
    for key in ("in_target", "with_feature", "target_size"):
        assert type(rule[key]) is int
    assert type(rule["precision"]) is float and not isinstance(rule["precision"], np.floating)


@pytest.mark.parametrize("cats", [[A, B, C], [B, A, C]])
def test_a_pair_is_named_in_the_order_of_the_categories(cats: list[str]) -> None:
    items = plain(A, 5, question="fern") + plain(A, 5) + plain(B, 5, question="fern") + plain(B, 5) + plain(C, 10)
    got = exact_rules(items, cats, {})
    assert got["rules"][0]["target"] == [c for c in cats if c != C]


def test_a_rule_of_one_feature_is_its_own_longest_equivalent() -> None:
    # feature column 1 holds cases 0 and 2: 2 of 3 with the feature in the target, a target of 4:
    # precision 2/3 = 0.6667, recall 2/4 = 0.5
    from scipy import sparse

    x = sparse.csc_matrix(np.array([[1, 1], [0, 0], [1, 1], [0, 1]]))
    words, cases, order, text, rule = _rule("question n-gram", 3, "big red", x, 1, [A], 2, 3, 4)
    assert (words, order, text) == (2, 3, "big red")
    assert rule == {"kind": "question n-gram", "text": "big red", "longest_equivalent": "big red",
                    "equivalent_features": 1, "target": [A], "in_target": 2, "with_feature": 3, "target_size": 4,
                    "precision": 0.6667, "recall": 0.5}  # fmt: skip
    # the cases are named by the rows of the column: column 0 holds cases 0 and 2 too (the same name), not column 1's
    assert _rule("question n-gram", 0, "x", x, 0, [A], 2, 2, 4)[1] != cases
    assert _rule("answer n-gram", 1, "y", sparse.csc_matrix(np.array([[1], [0], [1], [0]])), 0, [A], 2, 2, 4)[1] == (
        _rule("question n-gram", 0, "x", x, 0, [A], 2, 2, 4)[1])  # fmt: skip


def test_recall_is_rounded_to_four_decimals() -> None:
    # A 30 cases, 13 with "yak": recall 13/30 = 0.43333..., written 0.4333
    items = plain(A, 13, question="yak") + plain(A, 17) + plain(B, 30)
    rule = exact_rules(items, CATS, {})["rules"][0]
    assert (rule["text"], rule["recall"]) == ("yak", 0.4333)


@pytest.mark.parametrize(("letter", "digit"), [("x", "7")])
def test_one_letter_and_one_digit_are_words(letter: str, digit: str) -> None:
    # single letters and digits count as words (TOKEN_PATTERN): "x" in A's questions, "7" in B's answers
    items = plain(A, 10, question=letter) + [view(B, answers=(f"w{k} {digit}", f"v{k}")) for k in range(10)]
    got = exact_rules(items, CATS, {})
    assert [(r["kind"], r["text"], r["target"]) for r in got["rules"]] == [
        ("question n-gram", letter, [A]), ("answer n-gram", digit, [B])
    ]  # fmt: skip


@pytest.mark.parametrize("where", ["question", "answer"])
def test_n_grams_run_to_four_words_not_five(where: str) -> None:
    # A's 10 cases hold "one two three four five" after a word of their own: every n-gram of it is on A's cases
    # alone; the longest read is four words, "one two three four" (first in the sorted order of the 4-grams)
    phrase = "one two three four five"
    if where == "question":
        a = plain(A, 10, question=phrase)
    else:
        a = [view(A, answers=(f"w{k} {phrase}", f"v{k}")) for k in range(10)]
    rule = exact_rules(a + plain(B, 10), CATS, {})["rules"][0]
    assert (rule["text"], rule["longest_equivalent"]) == ("five", "one two three four")
    # 1-grams 5, 2-grams 4, 3-grams 3, 4-grams 2: 14 features
    assert rule["equivalent_features"] == 14


def test_an_answer_prefix_alone_is_a_rule_read_per_case() -> None:
    # A's 6 cases (two answers each) have one answer starting "perhaps"; B's 10 have "perhaps" inside an answer.
    # The n-gram "perhaps" is on 16 cases (6 of A: no rule); the answer prefix "perhaps" on A's 6 alone: a rule
    # (precision 1, recall 1), counted once per case (6, not per answer).
    a = [view(A, answers=(f"perhaps w{k}", f"v{k}")) for k in range(6)]
    b = [view(B, answers=(f"w{k} perhaps", f"v{k}")) for k in range(10)]
    got = exact_rules(a + b, CATS, {})
    # As a pair A + B, the n-gram is on 16 of 16 (A 6 >= 0.3 * 6, B 10 >= 0.3 * 10): a pair rule after it.
    assert [(r["kind"], r["text"], r["in_target"], r["with_feature"], r["target"]) for r in got["rules"]] == [
        ("answer prefix", "perhaps", 6, 6, [A]),
        ("answer n-gram", "perhaps", 16, 16, [A, B]),
    ]
    assert [r for r in got["rules"] if r["target"] == [A]] == [
        {"kind": "answer prefix", "text": "perhaps", "longest_equivalent": "perhaps", "equivalent_features": 1,
         "target": [A], "in_target": 6, "with_feature": 6, "target_size": 6, "precision": 1.0, "recall": 1.0}
    ]  # fmt: skip


@pytest.mark.parametrize("pair", [False, True])
def test_on_one_set_of_cases_an_n_gram_comes_before_a_prefix_of_as_many_words(pair: bool) -> None:
    # A's 6 cases (or 3 of A and 3 of B, for a pair rule) answer "aardvark zebra ..."; B's other cases (or C's)
    # answer "... aardvark": the n-gram "aardvark" is not exact, but on the planted cases alone are the n-gram
    # "zebra", the n-gram "aardvark zebra", and the prefixes "aardvark", "aardvark zebra". One word each: the n-gram
    # "zebra" (answer n-grams before answer prefixes) beats the prefix "aardvark" though its text sorts after.
    if pair:
        planted = [view(A, answers=(f"aardvark zebra w{k}", f"v{k}")) for k in range(5)]
        planted += [view(B, answers=(f"aardvark zebra x{k}", f"v{k}")) for k in range(5)]
        rest = plain(A, 5) + plain(B, 5) + [view(C, answers=(f"w{k} aardvark", f"v{k}")) for k in range(10)]
    else:
        planted = [view(A, answers=(f"aardvark zebra w{k}", f"v{k}")) for k in range(6)]
        rest = [view(B, answers=(f"w{k} aardvark", f"v{k}")) for k in range(10)]
    got = exact_rules(planted + rest, CATS, {})
    target = [A, B] if pair else [A]
    rule = next(r for r in got["rules"] if r["target"] == target)
    assert (rule["kind"], rule["text"], rule["longest_equivalent"], rule["equivalent_features"]) == (
        "answer n-gram", "zebra", "aardvark zebra", 4)  # fmt: skip


def test_on_one_set_of_cases_fewer_words_beat_an_earlier_kind() -> None:
    # A's 10 questions start "zebra stripes"; B's 5 hold "zebra" inside, C's 5 "stripes". On A's cases alone: the
    # n-gram "zebra stripes" (2 words), the prefixes "zebra" (1 word) and "zebra stripes": the one-word prefix
    # comes first, though question n-grams come before question prefixes of as many words.
    items = plain(A, 10, question="zebra stripes", lead=False) + plain(B, 5, question="zebra") + plain(B, 5)
    items += plain(C, 5, question="stripes") + plain(C, 5)
    rule = next(r for r in exact_rules(items, CATS, {})["rules"] if r["target"] == [A])
    assert (rule["kind"], rule["text"], rule["longest_equivalent"], rule["equivalent_features"]) == (
        "question prefix", "zebra", "zebra stripes", 3)  # fmt: skip


def test_an_n_gram_of_four_words_comes_before_a_count_condition_of_three() -> None:
    # A's 10 cases ask "big red fox ran" and have 4 answers (B and C 3): every shorter n-gram of it is also asked
    # by B ("big red fox", "red fox ran" cover every 1-3-gram), so on A's cases alone are the 4-gram and the counts
    # "answers = 4", "answers >= 4". Count conditions last, whatever their words: the 4-gram.
    items = plain(A, 10, question="big red fox ran", n=4) + plain(B, 5, question="big red fox s red fox ran", n=3)
    items += plain(B, 5, n=3) + plain(C, 10, n=3)
    rule = next(r for r in exact_rules(items, CATS, {})["rules"] if r["target"] == [A])
    assert (rule["kind"], rule["text"], rule["longest_equivalent"], rule["equivalent_features"]) == (
        "question n-gram", "big red fox ran", "big red fox ran", 3)  # fmt: skip


def test_the_longest_equivalent_is_the_first_of_the_longest_in_order() -> None:
    # A's 10 ask "zebra stripes" and "lion mane" apart: 1-grams lion, mane, stripes, zebra and 2-grams
    # "lion mane", "zebra stripes" on A's cases alone. The rule: "lion" (first one-word text); the longest: of the
    # two 2-grams, the first by text, "lion mane".
    items = [view(A, question=f"zebra stripes s{k} lion mane") for k in range(10)] + plain(B, 10)
    rule = exact_rules(items, CATS, {})["rules"][0]
    assert (rule["text"], rule["longest_equivalent"], rule["equivalent_features"]) == ("lion", "lion mane", 6)


def test_single_targets_are_listed_before_pairs() -> None:
    # "yak" on C's 10 of 10: a single rule, target (2,); "kiwi" on 5 of A and 5 of B: a pair, target (0, 1).
    # Singles are listed before pairs, though (0, 1) < (2,) as tuples.
    items = plain(A, 5, question="kiwi") + plain(A, 5) + plain(B, 5, question="kiwi") + plain(B, 5)
    items += plain(C, 10, question="yak")
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["target"]) for r in got["rules"]] == [("yak", [C]), ("kiwi", [A, B])]
    assert list(got["by_target"]) == [C, f"{A} + {B}"]


def test_of_two_rules_with_one_recall_the_more_precise_comes_first() -> None:
    # A 38 cases, B 20 (min_df 6). "beta" on A 19-37 (19 of 19: precision 1, recall 19/38 = 0.5); "omega" on A 0-18
    # and B 0 (19 of 20: precision 0.95, recall 0.5). Same recall: beta (1.0) before omega (0.95).
    items = plain(A, 19, question="omega") + plain(A, 19, question="beta") + plain(B, 1, question="omega")
    items += plain(B, 19)
    got = exact_rules(items, CATS, {})
    assert [(r["text"], r["recall"], r["precision"]) for r in got["rules"]] == [
        ("beta", 0.5, 1.0),
        ("omega", 0.5, 0.95),
    ]
