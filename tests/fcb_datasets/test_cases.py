"""One candidate case (`fcb_datasets.realdata.cases`): its answers and labels, the majority label of each category,
the agents' shuffled order (rounds kept in a debate) and the refusal of a case that breaks the label scheme. The
expected orders come from `random.Random` drawn here, the way the docstrings say the builder draws them."""

from __future__ import annotations

import random

import pytest

from fcb_datasets.realdata.cases import Candidate, Source, _order, answer, majority_label, make_case, valid

SOURCE = Source("gsm8k", "GSM8K", "MIT", "Cobbe et al. 2021", "https://example.org/gsm8k")


def test_an_answer_carries_its_labels_and_its_family_first() -> None:
    assert answer("A: 7", True) == {
        "text": "A: 7",
        "correct": True,
        "metadata": {"saw_other_answers": False, "shared_context": False},
    }
    found = answer("A: 8", False, family="llama", saw=True, shared=True)
    assert found == {
        "text": "A: 8",
        "correct": False,
        "metadata": {"model_family": "llama", "saw_other_answers": True, "shared_context": True},
    }
    assert list(found["metadata"]) == ["model_family", "saw_other_answers", "shared_context"]


@pytest.mark.parametrize(
    ("category", "label"),
    [
        ("majority_wrong_fact", False),  # high risk: the majority is wrong
        ("echo_cascade", False),
        ("lone_correct_dissenter", False),
        ("numeric_consensus_error", False),
        ("anchoring_injected_premise", False),
        ("genuine_agreement_correct", True),  # low: right
        ("correct_but_unsupported", True),  # medium, but the consensus is right
        ("genuine_disagreement", None),  # medium, and no majority at all
    ],
)
def test_the_majority_label_of_each_category(category: str, label: bool | None) -> None:
    assert majority_label(category) is label


def test_a_candidates_unit_is_its_source_or_source_and_recipe() -> None:
    assert Candidate("echo_cascade", "gsm8k", "3", "q1", {}).unit == "gsm8k"
    assert Candidate("echo_cascade", "gsm8k", "3", "q1", {}, recipe="echo").unit == "gsm8k/echo"


def test_agents_are_shuffled_and_numbered_in_their_new_order() -> None:
    answers = [{"text": t} for t in ("a", "b", "c", "d")]
    expected = random.Random(7).sample(answers, 4)  # the draw the builder makes with the same stream
    ordered, ids = _order(answers, random.Random(7), None)
    assert ordered == expected
    assert ids == ["agent-1", "agent-2", "agent-3", "agent-4"]


def test_a_debate_keeps_its_rounds_and_shuffles_agents_the_same_way_in_each() -> None:
    # two rounds of agents 0 and 1; seed 0 swaps them (checked here), so agent 1 sits first in both rounds
    assert random.Random(0).sample([0, 1], 2) == [1, 0]
    seats = [(1, 0), (1, 1), (2, 0), (2, 1)]
    answers = [{"text": t} for t in ("r1-a0", "r1-a1", "r2-a0", "r2-a1")]
    ordered, ids = _order(answers, random.Random(0), seats)
    assert [a["text"] for a in ordered] == ["r1-a1", "r1-a0", "r2-a1", "r2-a0"]
    assert ids == ["agent-1 (round 1)", "agent-2 (round 1)", "agent-1 (final round)", "agent-2 (final round)"]
    # a seat for every answer: seats that do not match the answers are refused, never cut short
    with pytest.raises(ValueError):
        _order(answers, random.Random(0), seats[:3])
    # three rounds: only the last is the final round, the middle one keeps its number
    seats3 = [(1, 0), (2, 0), (3, 0)]
    _, ids3 = _order([{"text": "x"}] * 3, random.Random(0), seats3)
    assert ids3 == ["agent-1 (round 1)", "agent-1 (round 2)", "agent-1 (final round)"]


def _agreement(rng: random.Random, recipe: str = "") -> Candidate | None:
    answers = [answer("A: 7", True), answer("A: 7", True), answer("A: 7", True)]
    return make_case(SOURCE, "genuine_agreement_correct", "What is 3 + 4?", answers, "7", "q-17", "as given",
                     "origin_natural", "3", rng, recipe=recipe, difficulty="2 steps")  # fmt: skip


def test_a_case_is_made_with_its_labels_provenance_and_tags() -> None:
    made = _agreement(random.Random(0))
    assert made is not None
    assert (made.category, made.source, made.stratum, made.item, made.recipe, made.difficulty) == (
        "genuine_agreement_correct", "gsm8k", "3", "q-17", "", "2 steps",
    )  # fmt: skip
    case = made.case
    assert case["expected_risk"] == "low" and case["majority_correct"] is True and case["ground_truth"] == "7"
    assert case["rationale"] == "Answers reached independently agree on the correct answer."
    provenance = {"dataset": "GSM8K", "license": "MIT", "citation": "Cobbe et al. 2021"}
    assert case["source"] == {**provenance, "url": SOURCE.url, "item": "q-17", "modification": "as given"}
    assert case["tags"] == ["gsm8k", "origin_natural"]
    assert [a["agent_id"] for a in case["answers"]] == ["agent-1", "agent-2", "agent-3"]
    assert case["question"] == "What is 3 + 4?" and case["id"] == ""


def test_a_recipe_is_tagged_as_staged() -> None:
    made = _agreement(random.Random(0), recipe="echo")
    assert made is not None and made.case["tags"] == ["gsm8k", "origin_natural", "staged_echo"]


def test_a_case_that_breaks_the_label_scheme_is_refused() -> None:
    # "agreement on the correct answer" with two of three answers wrong: check_case refuses it
    answers = [answer("A: 7", True), answer("A: 8", False), answer("A: 8", False)]
    made = make_case(SOURCE, "genuine_agreement_correct", "What is 3 + 4?", answers, "7", "q-1", "as given",
                     "origin_natural", "3", random.Random(0))  # fmt: skip
    assert made is None
    # the same answers under the category they show are a case
    made = make_case(SOURCE, "lone_correct_dissenter", "What is 3 + 4?", answers, "7", "q-1", "as given",
                     "origin_natural", "3", random.Random(0))  # fmt: skip
    assert made is not None and made.case["expected_risk"] == "high" and made.case["majority_correct"] is False


def test_valid_checks_the_schema_with_a_placeholder_id() -> None:
    made = _agreement(random.Random(0))
    assert made is not None and valid(made.case)
    assert not valid({**made.case, "expected_risk": "extreme"})  # not a risk level: the schema refuses it
    assert not valid({**made.case, "answers": []})


def test_a_debate_case_keeps_its_seats_and_no_difficulty_is_empty() -> None:
    # agent 0 right in both rounds, agent 1 wrong then right; seed 0 swaps the two agents (see above)
    answers = [answer("A: 7", True), answer("A: 8", False), answer("A: 7", True, saw=True), answer("A: 7", True)]
    made = make_case(SOURCE, "genuine_agreement_correct", "What is 3 + 4?", answers, "7", "q-2", "as run",
                     "origin_natural", "3", random.Random(0), seats=[(1, 0), (1, 1), (2, 0), (2, 1)])  # fmt: skip
    assert made is not None and made.difficulty == "" and made.recipe == ""
    found = [(a["agent_id"], a["text"]) for a in made.case["answers"]]
    assert found == [("agent-1 (round 1)", "A: 8"), ("agent-2 (round 1)", "A: 7"),
                     ("agent-1 (final round)", "A: 7"), ("agent-2 (final round)", "A: 7")]  # fmt: skip
    assert [a["metadata"]["saw_other_answers"] for a in made.case["answers"]] == [False, False, False, True]


def test_having_seen_other_answers_and_sharing_a_note_are_two_flags() -> None:
    assert answer("x", True, saw=True)["metadata"] == {"saw_other_answers": True, "shared_context": False}
    assert answer("x", True, shared=True)["metadata"] == {"saw_other_answers": False, "shared_context": True}
