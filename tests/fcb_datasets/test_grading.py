"""Reading final values the way each source writes them, math-verify's equivalence, and the categories that panels
and debates show. Every expected value below was worked out by hand from the text it is read from."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from fcb_datasets.realdata.cases import Source, answer, make_case
from fcb_datasets.realdata.dylan import Turn, debate_category
from fcb_datasets.realdata.grading import Gold, one_of_several
from fcb_datasets.realdata.models import label_of
from fcb_datasets.realdata.panels import Reading, panel_category, too_unreadable
from fcb_datasets.realdata.splits import families, gsm8k_key, math_key, split_of
from harness.final_answer import (
    Value,
    debate_final,
    gsm8k_final,
    mmlu_letter,
    names_no_option,
    plain_number,
    reply_answer,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("18", Fraction(18)), ("$18", Fraction(18)), ("\\$18", Fraction(18)), ("10,000", Fraction(10000)),
        ("-2.50", Fraction(-5, 2)), ("18.", Fraction(18)), (".5", Fraction(1, 2)), ("3/4", Fraction(3, 4)),
        ("\\boxed{\\frac{3}{2}}", Fraction(3, 2)), ("$-\\frac{8}{5}$", Fraction(-8, 5)), ("\\boxed{26}", Fraction(26)),
        ("x", None), ("1,2", None), ("\\frac{1}{0}", None), ("12 dollars", None), ("9" * 70, None),
    ],
)  # fmt: skip
def test_plain_numbers_are_read_exactly(text: str, value: Fraction | None) -> None:
    assert plain_number(text) == value


@pytest.mark.parametrize(
    ("gold", "segment", "correct"),
    [
        ("\\frac{1}{2}", "0.5", True),  # 1/2 = 0.5
        ("0.75", "\\boxed{\\dfrac{3}{4}}", True),  # 3/4 = 0.75
        ("26", "$26$", True),
        ("18", "18 dollars", True),  # the unit is no part of the value
        ("2\\sqrt{2}", "\\boxed{\\sqrt{8}}", True),  # sqrt(8) = sqrt(4 * 2) = 2 sqrt(2)
        ("(-\\infty, 3]", "\\boxed{(-\\infty,3]}", True),
        ("(-\\infty, 3]", "\\boxed{(-\\infty,3)}", False),  # open at 3 is another set
        ("3", "4", False),
        ("-15", "\\boxed{-21}", False),
        # an infinite sum left as such is never equal to a closed form: sympy may take longer than any timeout
        ("\\frac{\\pi^2}{6}", "\\boxed{\\sum_{k=1}^\\infty \\frac{1}{k^2}}", False),
        ("p - q", "\\boxed{\\sum_{k = 1}^\\infty \\frac{1}{k^2} \\sum_{k = 1}^\\infty \\frac{1}{k^3}}", False),
        ("\\frac{\\pi^2}{6}", "\\boxed{\\frac{\\pi^2}{6}}", True),
        # unicode mathematics as LaTeX: math-verify alone reads "90π" as 90 and "2√3" as 2
        ("90\\pi", "90π", True),
        ("90", "90π", False),
        ("2\\sqrt{3}", "2√3", True),
        ("2", "2√3", False),
        ("\\sqrt{x+1}", "√(x+1)", True),
        ("-5", "−5", True),  # a minus sign, not a hyphen
        ("\\frac{\\pi}{2}", "π/2", True),
        # a bare expression (a JSON answer, "the answer is 2\\sqrt{3}") is read whole: outside $...$ math-verify
        # picks one number out of it ("-1 + i" as -1, "26\\sqrt{2}" as 26, "10^{5}" as 10)
        ("-1", "-1 + i", False),
        ("i - 1", "-1 + i", True),
        ("26", "26\\sqrt{2}", False),
        ("26\\sqrt{2}", "26\\sqrt{2}", True),
        ("10", "10^{5}", False),
        ("100000", "10^{5}", True),
        ("\\frac{1}{2}", "1/2", True),
        ("5", "x = 5", True),
        ("7", "7 dozens", True),  # a bare answer in words is its one number
    ],
)
def test_values_are_compared_by_math_verify(gold: str, segment: str, correct: bool) -> None:
    value, ok = Gold(gold).grade((segment, "test"))
    assert value is not None and ok is correct


@pytest.mark.parametrize(
    ("gold", "segment", "letter", "correct"),
    [
        ("\\text{C}", "\\boxed{\\textbf{(C)}\\ 34\\ \\text{dollars}}", "C", True),  # the letter, whatever follows
        ("\\text{C}", "$\\boxed{\\textbf{(C)} 34}$", "C", True),
        ("\\text{(E)}", "\\boxed{E}", "E", True),
        ("\\text{C}", "\\boxed{\\textbf{(D)}\\ 35}", "D", False),
    ],
)
def test_an_option_letter_meets_the_same_letter_only(gold: str, segment: str, letter: str, correct: bool) -> None:
    value, ok = Gold(gold).grade((segment, "test"))
    assert ok is correct and value is not None and value.key == f"c:{letter}"


def test_a_gold_with_an_array_is_left_out_and_an_unreadable_answer_is_never_correct() -> None:
    assert not Gold("\\begin{pmatrix}11\\\\44\\end{pmatrix}").readable
    assert not Gold("10\\sqrt{}2").readable and Gold("10\\sqrt{2}").readable  # an argument lost upstream
    assert Gold("26").grade(None) == (None, False)
    assert Gold("26").grade(("no value here at all", "test")) == (None, False)
    assert Gold("18").grade(("123 remainder 18", "test")) == (None, False)  # two numbers in words: which?


def test_a_word_problems_gold_in_another_unit_is_no_value() -> None:
    # "How much time ...?" with a gold of 34 (hours): 2040 (minutes) is neither right nor wrong
    words = Gold("34", units=True)
    assert [words.grade((v, "json"))[1] for v in ("34", "35")] == [True, False]
    assert [words.grade((v, "json"))[0] for v in ("2040", "0.34", "3400", "68")][:3] == [None, None, None]
    assert words.grade(("68", "json"))[0] is not None  # twice the gold is a wrong number, not a unit
    # a MATH problem has no units: 1 for a gold of 12 is wrong
    assert Gold("12").grade(("1", "json")) == (Value("1", "n:1", "json"), False)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("We get $x = 3$, so the answer is \\boxed{5}.", ("\\boxed{5}", "boxed")),
        ("First \\boxed{4} was wrong. The answer is 6.", ("6", "answer-is")),  # the later statement wins
        ("The answer is $\\frac{1}{2}$.", ("$\\frac{1}{2}$", "answer-is")),
        ("So the value of $3\\ast10$ is 26.", ("26", "last-sentence")),
        ("The probability of NOT green is 7/12.", ("7/12", "last-sentence")),
        ("So x = 8. The integers would be 8, 10, 12, 14, and 16.", None),  # a list ends it: no one value
        ("(t,u) is either \\boxed{(4/5,1/5)} or \\boxed{(5/4,-1/4)}.", None),  # two values
        ("The answer is 3 or 4.", None),
        ("If it means a segment, then the answer is 2. If it means a side, then the answer is 10.", None),  # hedged
        ("Therefore, there are 41 teachers in the school.", None),  # the value is not where the sentence ends
        ("It equals 3125 when $a=5$.", None),  # "when" is no "is", "=" or ":" before the value
        # "the answer is" that goes on in words states no value; the sentence that ends the answer may
        ("So the answer is somewhere between 2 and 3. Taking logs, $x = \\log_6 64 \\approx 2.77$.", None),
        ("Hence the answer is incorrect because 14 fails.\n\nSo the rope is \\boxed{13}.", ("\\boxed{13}", "boxed")),
        ("So the answer is: The probability is 13/45.", ("13/45", "last-sentence")),
        ("The answer is odd.", ("odd", "answer-is")),  # a short rest stays a value
        ("The answer is indeed $5$.", ("indeed $5$", "answer-is")),  # a filler word is no prose
        # a last sentence that states two values says neither
        ("Thus the center is at $(2,1)$, and the semi-major axis is $\\sqrt{5}$.", None),
    ],
)
def test_a_debate_answer_is_read_at_the_sources_own_anchors(text: str, found: tuple[str, str] | None) -> None:
    assert debate_final(text) == found


def test_a_gsm8k_solution_ends_on_its_a_line() -> None:
    assert gsm8k_final("She has 3 + 4 = 7.\nA: 7") == ("7", "a-line")
    value, ok = Gold("1000").grade(gsm8k_final("Total 1,000\nA: 1,000"))
    assert ok and value is not None
    assert gsm8k_final("no final line") is None


@pytest.mark.parametrize(
    ("reply", "answer_text"),
    [
        ('```json\n{"reasoning": "3 + 4", "answer": "7"}\n```', "7"),
        ('{"reasoning": "line one\nline two", "answer": "7"}', "7"),  # a raw newline inside a string
        ('{"reasoning": "we use \\(x\\) here", "answer": "\\frac{3}{4}"}', "\\frac{3}{4}"),  # LaTeX, no JSON escape
        ('{"reasoning": "so 12", "answer": 12}', "12"),
        ('{"reasoning": "it is 9",\n  answer: "9"\n', "9"),  # broken JSON that json_repair still reads
        ('{"reasoning": "...", "answer": {"blue": 4, "red": 6}}', None),  # two values
        ('{"reasoning": "...", "answer": "4 blue and 6 red"}', None),
        ('{"reasoning": "...", "answer": "3 or 4"}', None),
        ('{"reasoning": "no answer field"}', None),
        ("no JSON at all", None),
    ],
)
def test_zeroeval_replies_are_read_leniently_and_one_value_only(reply: str, answer_text: str | None) -> None:
    assert reply_answer(reply) == answer_text


@pytest.mark.parametrize(
    ("text", "pred", "letter", "how"),
    [
        ("Reasoning. The answer is (B).", "B", "B", "agrees"),
        ("Answer: C", None, "C", "pred-none"),
        ("The answer is (B). The answer is (B).", "D", "B", "pred-differs"),
        ("The answer is (B) or (D).", "B", None, "conflicting"),
        ("The answer is (C) and (D).", "C", None, "conflicting"),
        ("The answer is (I) Bill Clinton and (J) Margaret Thatcher", "I", None, "conflicting"),  # one sentence
        ("The answer is (E) 4 N. (A) was ruled out above.", "E", "E", "agrees"),
        ("Answer: A. Rely on force. B. Undermine the army.", "A", None, "conflicting"),  # two options listed
        ("Answer: D. True, True", "D", "D", "agrees"),
        ("The answer is (I) mode, but the closest answer would be (H) mean.", "I", None, "conflicting"),
        ("The answer is (J).\n\nFinal Answer: The answer is (F).", "J", None, "conflicting"),
        ("It must be fat emboli (C).", "C", None, "none-stated"),  # upstream's pred alone is no statement
        ("The answer is:\nEach of them. So (D).", "D", None, "none-stated"),  # "Each" opens with no letter E
        ("The correct answer is:\nE. To determine the hardware address", "E", "E", "agrees"),
        # every anchor on a line counts, not only the first: a response that runs on states two letters
        ("The answer is (D). The treaty was signed. The answer is (H). The answer is (H).", "D", None, "conflicting"),
        # a choice named outside the anchors, or in bold, is stated too
        ("The value is 4.2 m, so the closest option is (E).", None, "E", "pred-none"),
        ("Therefore, the most accurate statement is (C) The plaintiff will prevail.", "C", "C", "agrees"),
        ("The answer is **B. No, because the street was open to the public.**", "B", "B", "agrees"),
        ("The answer is (B). None fits exactly; the closest option is (C).", "B", None, "conflicting"),
        ("The best option is not listed.", None, None, "none-stated"),
        # a choice named and taken back, or "none of the above", states no option
        (
            "The closest option is (E) $255, but this is not the correct answer.\nAnswer: None of the above.",
            "E",
            None,
            "conflicting",
        ),
        ("The answer is (B).\n\nAnswer: None of the above.", "B", None, "conflicting"),
        ("The correct answer is (B), not (C) as argued above.", "B", None, "conflicting"),
        ("The answer is (C), none of the options fits exactly.", "C", None, "conflicting"),
        # ...unless "None of the above" is the text of the option named
        ("The answer is (D) None of the above.", "D", "D", "agrees"),
        # a response that runs on, listing letters (answers to questions nobody asked), states several
        ("The answer is (G).\n\nNow:\n\nThe answer is ... I, B, J, G, F, G.", "G", None, "conflicting"),
        ("The answer is C or D.", "C", None, "conflicting"),
        (
            "The answer is (J).\n\nNow, let's summarize all the answers:\nA. $85.10, 30.9%\nB. $65.10, 23.7%",
            "J",
            None,
            "conflicting",
        ),
        (
            "The answer is (F).\n\nNow, let's summarize:\n\nThe answer is ... F. Barbara, because she had notice.",
            "F",
            "F",
            "agrees",
        ),
        ("The answer is A, because the law says so.", "A", "A", "agrees"),
        ("The answer is: D. none of the above", "D", "D", "agrees"),
    ],
)
def test_mmlu_pro_letters_are_the_ones_a_response_states(text: str, pred: str | None, letter: str | None,
                                                         how: str) -> None:  # fmt: skip
    value, read = mmlu_letter(text, pred)
    assert (value.text if value else None, read) == (letter, how)


def _panel(*keys: str | None, gold: str = "A") -> list[Reading]:
    return [Reading("m", "text", k, k == gold) for k in keys]


@pytest.mark.parametrize(
    ("keys", "numeric", "category"),
    [
        (("A", "A", "A", "B", "C"), False, "genuine_agreement_correct"),  # 3 of 5 correct: 60%
        (("A", "A", "B", "C", "D"), False, "genuine_disagreement"),  # 2 of 5: no value at 60%
        (("B", "B", "B", "C", "D"), False, "majority_wrong_fact"),
        (("B", "B", "B", "C", "D"), True, "numeric_consensus_error"),
        (("B", "B", "B", "A", "D"), False, "lone_correct_dissenter"),  # exactly one correct
        (("B", "B", "C", "A", "D", "E", "F", "G", "H", None), False, "genuine_disagreement"),  # no reading reaches 60%
        (("A", "A", "A", "A", None), False, "genuine_agreement_correct"),  # 4 of 5 right however None reads
        (("B", "B", "B", "B", "B", "A", "C", "D"), False, "lone_correct_dissenter"),  # B 5/8
        # one right answer never survives an unreadable one: read as right, two are right (majority_wrong_fact)
        (("B", "B", "B", "B", "B", "A", "C", None), False, None),
        # the category hangs on the unreadable answer: read as B it is 3/5 (lone_correct_dissenter), as A 2/5
        (("B", "B", None, "A", "C"), False, None),
        (("A", "A", None, "B", "C"), False, None),  # as A: 3/5 right (agreement); as B: no value at 60%
        (("B", "B", "B", "C", None), True, None),  # as A: one right, lone_correct_dissenter; as B or D: numeric
    ],
)
def test_a_panel_shows_its_category_by_the_60_percent_rule(keys: tuple, numeric: bool, category: str | None) -> None:
    assert panel_category(_panel(*keys), numeric) == category


def test_an_answer_that_names_no_value_leaves_no_doubt() -> None:
    # B 3/5 against one right A: read as right, the unreadable answer would make two right; silent, it cannot
    silent = [*_panel("B", "B", "B", "A"), Reading("m", "The cutoff is f = c/2a. The cutoff is", None, False, True)]
    assert panel_category(silent, numeric=False) == "lone_correct_dissenter"
    assert panel_category([*silent[:4], Reading("m", "text", None, False)], numeric=False) is None
    assert names_no_option("The key is subjected to a torque of 1250 lb-ft. The key is subjected to a torque")
    for named in ("so the closest option is (C).", "Therefore, the accurate statement is:\n\nD. The occurrence",
                  "This corresponds to a pH of (H)."):  # fmt: skip
        assert not names_no_option(named)


def test_a_panel_more_than_a_quarter_unreadable_gives_no_case() -> None:
    assert not too_unreadable(_panel("A", "A", "A", None))  # 1 of 4
    assert too_unreadable(_panel("A", "A", None, None, "B"))  # 2 of 5


def _t(key: str | None, gold: str = "7") -> Turn:
    return Turn(f"value {key}", key, key == gold, "boxed" if key else None)


@pytest.mark.parametrize(
    ("first", "final", "everyone", "category"),
    [
        # round 1 split, everyone converges on a wrong value a peer gave: an echo cascade
        (["5", "7", "9"], ["5", "5", "5"], None, "echo_cascade"),
        # the same with the right value, held by one agent alone: the consensus has nothing independent behind it
        (["7", "5", "9"], ["7", "7", "7"], None, "correct_but_unsupported"),
        # right value held alone by 2 of 3 (67%) before the third adopted it: independent agreement
        (["7", "7", "9"], ["7", "7", "7"], None, "genuine_agreement_correct"),
        # the final agents all had it in round 1: agreement, no adoption
        (["7", "7", "7"], ["7", "7", "7"], None, "genuine_agreement_correct"),
        (["5", "5", "5"], ["5", "5", "5"], None, "numeric_consensus_error"),
        (["5", "7", "9"], ["5", "7", "9"], None, "genuine_disagreement"),
        # everyone moved to a value nobody gave in round 1: no category
        (["5", "6", "9"], ["8", "8", "8"], None, None),
        # an unreadable round-1 answer: who held what is a guess
        (["7", None, "9"], ["7", "7", "7"], None, None),
        # an agent the case does not hold also had the right value: 2 of 4 (50%) versus 1 of 3, same verdict: cbu
        (["7", "5", "9"], ["7", "7", "7"], ["7", "5", "9", "7"], "correct_but_unsupported"),
        # ... but 2 of 3 shown (agreement) against 2 of 4 in all (no 60% majority): the case cannot say
        (["7", "7", "9"], ["7", "7", "7"], ["7", "7", "9", "5"], None),
    ],
)
def test_a_debate_shows_its_category_from_its_rounds(first: list, final: list, everyone: list | None,
                                                     category: str | None) -> None:  # fmt: skip
    turns = [_t(k) for k in first]
    all_first = [_t(k) for k in everyone] if everyone else None
    got = debate_category(turns, [_t(k) for k in final], list(range(len(final))), True, None, all_first)
    assert got == category


def test_item_keys_are_the_sources_own() -> None:
    # the problem_id DyLAN's ATTRIBUTION.md gives for this problem
    assert math_key("If $a\\ast b = 2a+5b-ab$, what is the value of $3\\ast10$?") == "df02460a7504938c"
    assert gsm8k_key("  Janet has  3 ducks. ") == gsm8k_key("janet has 3 ducks.")
    assert split_of("x", 0) in ("dev", "test") and split_of("x", 0) == split_of("x", 0)


def test_one_question_in_two_sources_and_near_duplicates_are_one_family() -> None:
    questions = {
        "math:a": "What is $1+1$?", "gsm-zero:b": "what is 1+1?",  # the same text, normalised: one family
        "q:1": "Brits are taller than which places on average?",
        "q:2": "Americans are taller than which places on average?",
        "q:3": "Name a river in France that flows into the Atlantic.",
    }  # fmt: skip
    fam = families(questions)
    assert fam["math:a"] == fam["gsm-zero:b"]
    assert fam["q:1"] == fam["q:2"] != fam["q:3"]


def test_model_labels_join_the_same_weights() -> None:
    assert label_of("Llama-3.1-405B-Inst@sambanova") == label_of("Meta-Llama-3.1-405B-Instruct@hyperbolic")
    assert label_of("Llama-3.1-405B-Instruct-Turbo") == "llama-3.1-405b-instruct"
    assert label_of("Meta-Llama-3_1-70B-Instruct") == label_of("Meta-Llama-3.1-70B-Instruct")
    assert label_of("Meta-Llama-3-8B-Instruct-quantized") == label_of("Meta-Llama-3-8B-Instruct")
    assert label_of("gemma-2-27b-it@together") == label_of("gemma-2-27b-it")
    assert label_of("Llama-2-7b-hf") != label_of("Llama-2-13b-hf")


def test_debate_agents_keep_their_rounds_and_one_shuffle_for_every_round() -> None:
    source = Source("t", "T", "MIT", "c", "https://example.org")
    answers = [answer(f"r1-a{i} value", i == 0) for i in range(3)] + [answer(f"final-a{i}", True, saw=True)
                                                                        for i in range(3)]  # fmt: skip
    answers[0]["correct"] = True
    seats = [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]
    for seed in range(5):
        case = make_case(source, "correct_but_unsupported", "Q?", answers, "7", "t:1", "how", "origin_natural", "6",
                         random.Random(seed), seats=seats).case  # fmt: skip
        ids = [a["agent_id"] for a in case["answers"]]
        assert all(i.endswith("(round 1)") for i in ids[:3]) and all(i.endswith("(final round)") for i in ids[3:])
        for a, b in zip(case["answers"][:3], case["answers"][3:], strict=True):  # agent k in both rounds
            assert a["agent_id"].split()[0] == b["agent_id"].split()[0]
            assert a["text"].split("-")[1].split()[0] == b["text"].split("-")[1]


def test_a_right_value_is_one_value_however_it_is_written() -> None:
    # sqrt(3)/3 and 1/sqrt(3) print differently (two keys) but both equal the gold: two agents had it alone
    first = [Turn("a", "e:sqrt(3)/3", True, "boxed"), Turn("b", "e:1/sqrt(3)", True, "boxed"),
             Turn("c", "n:5", False, "boxed")]  # fmt: skip
    final = [Turn("d", "e:sqrt(3)/3", True, "boxed")] * 3
    assert debate_category(first, final, [0, 1, 2], False) == "genuine_agreement_correct"


def test_a_problem_asking_for_any_one_of_several_answers_is_known() -> None:
    assert one_of_several("Find one of the foci. (Enter only one of the foci, not both.)")
    assert one_of_several("Enter the coordinates of one of the vertices, not both.")
    assert not one_of_several("If one of the endpoints is $(1, 6)$, what is the other endpoint?")
