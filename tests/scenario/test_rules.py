"""The scenario lint rules (harness/scenario/rules.py), each rule's verdict at its boundary on small documents built
here: the pointer it names, the message a user reads, and whether it is a warning or an error."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from harness.scenario import rules
from harness.scenario.problems import Finding
from harness.scenario.rules import (
    RULES,
    check_fixed_pie,
    check_held_by,
    check_id,
    check_latent,
    check_participants,
    check_resource_ids,
    check_rules,
    check_shared_mode,
    check_speakers,
    check_turn_limits,
    check_turn_numbers,
    check_units,
    check_valuation_keys,
    check_valuation_sums,
)


def resource(rid: str, ann: float, ben: float, **more: Any) -> dict[str, Any]:
    return {"id": rid, "divisibility": "divisible", "visibility": "public", "unit": "units",
            "valuations": {"Ann": ann, "Ben": ben}, **more}  # fmt: skip


def doc(**more: Any) -> dict[str, Any]:
    """A clean document: two parties, two turns, two resources Ann and Ben value the other way round (0.75, 0.25)
    and (0.25, 0.75): each party's valuations sum to 1, and the proportions differ (no fixed pie)."""
    base = {
        "id": "deal",
        "participants": [{"name": "Ann", "hidden_facts": []}, {"name": "Ben", "hidden_facts": []}],
        "sample_turns": [{"turn_number": 1, "speaker": "Ann"}, {"turn_number": 2, "speaker": "Moderator"}],
        "evaluation_criteria": {"min_turns": 2, "max_turns": 4},
        "resources": [resource("van", 0.75, 0.25), resource("shop", 0.25, 0.75)],
    }
    base.update(more)
    return base


def test_a_clean_document_has_no_finding() -> None:
    assert check_rules(doc(), "deal") == []
    assert len(RULES) == 12


def test_the_id_against_the_file_name() -> None:
    assert check_id(doc(), "deal") == []
    assert check_id(doc(), "Deal") == [Finding("/id", "id 'deal' does not match the file name's stem 'Deal'")]
    assert check_rules(doc(), "other") == [Finding("/id", "id 'deal' does not match the file name's stem 'other'")]


def test_participant_names() -> None:
    d = doc(participants=[{"name": "Ann"}, {"name": "Ann"}])
    assert check_participants(d) == [
        Finding("/participants/1/name", "both participants are named 'Ann'; names must differ")
    ]
    d = doc(participants=[{"name": "Ann"}, {"name": "Moderator"}])
    assert check_participants(d) == [
        Finding("/participants/1/name", "a participant named 'Moderator' makes sample_turns ambiguous", True)
    ]
    d = doc(participants=[{"name": "Moderator"}, {"name": "Ben"}])
    assert check_participants(d) == [
        Finding("/participants/0/name", "a participant named 'Moderator' makes sample_turns ambiguous", True)
    ]
    d = doc(participants=[{"name": "Moderator"}, {"name": "Moderator"}])
    assert [f.pointer for f in check_participants(d)] == ["/participants/1/name", "/participants/0/name",
                                                          "/participants/1/name"]  # fmt: skip


def test_speakers_are_participants_or_the_moderator() -> None:
    turns = [{"turn_number": 1, "speaker": "ann"}, {"turn_number": 2, "speaker": "Ben"},
             {"turn_number": 3, "speaker": "Carl"}, {"turn_number": 4, "speaker": "MODERATOR"}]  # fmt: skip
    assert check_speakers(doc(sample_turns=turns)) == [
        Finding("/sample_turns/0/speaker", "speaker 'ann' is neither a participant ('Ann', 'Ben') nor 'Moderator'; "
                "did you mean 'Ann'?"),
        Finding("/sample_turns/2/speaker", "speaker 'Carl' is neither a participant ('Ann', 'Ben') nor 'Moderator'"),
        Finding("/sample_turns/3/speaker", "speaker 'MODERATOR' is neither a participant ('Ann', 'Ben') nor "
                "'Moderator'; did you mean 'Moderator'?"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("numbers", "findings"),
    [
        ([1, 2, 3], []),
        ([1, 3, 10], []),  # gaps are fine: only an increase is asked for
        ([0, 1], [("/sample_turns/0/turn_number", "turn numbers start at 1, not 0")]),
        ([2, 3], [("/sample_turns/0/turn_number", "turn numbers start at 1, not 2")]),
        ([1, 1], [("/sample_turns/1/turn_number", "turn number 1 does not increase on the previous one (1)")]),
        ([1, 3, 2, 4], [("/sample_turns/2/turn_number", "turn number 2 does not increase on the previous one (3)")]),
        # the previous number is the one written, even when it was itself out of order: 5 after 2 is fine
        ([1, 3, 2, 5], [("/sample_turns/2/turn_number", "turn number 2 does not increase on the previous one (3)")]),
        ([], []),
    ],
)
def test_turn_numbers_start_at_one_and_increase(numbers: list[int], findings: list[tuple[str, str]]) -> None:
    turns = [{"turn_number": n, "speaker": "Ann"} for n in numbers]
    assert check_turn_numbers(doc(sample_turns=turns)) == [Finding(p, m) for p, m in findings]


@pytest.mark.parametrize(("low", "high", "bad"), [(3, 4, False), (4, 4, False), (5, 4, True)])
def test_min_turns_at_most_max_turns(low: int, high: int, bad: bool) -> None:
    found = check_turn_limits(doc(evaluation_criteria={"min_turns": low, "max_turns": high}))
    assert found == ([Finding("/evaluation_criteria/min_turns", f"min_turns {low} > max_turns {high}")] if bad else [])


def test_duplicate_resource_ids_point_at_the_first() -> None:
    d = doc(resources=[resource("a", 0.5, 0.5), resource("b", 0.5, 0.5), resource("a", 0, 0), resource("a", 0, 0)])
    assert check_resource_ids(d) == [
        Finding("/resources/2/id", "duplicate resource id 'a' (first at /resources/0)"),
        Finding("/resources/3/id", "duplicate resource id 'a' (first at /resources/0)"),
    ]
    assert check_resource_ids({k: v for k, v in doc().items() if k != "resources"}) == []


def test_valuation_keys_are_the_two_participants() -> None:
    d = doc(resources=[{**resource("a", 0.5, 0.5), "valuations": {"Ann": 0.5, "Bob": 0.5}}])
    assert check_valuation_keys(d) == [
        Finding("/resources/0/valuations/Bob", "'Bob' is not a participant (Ann or Ben)"),
        Finding("/resources/0/valuations", "no valuation for participant 'Ben'"),
    ]
    # the same name twice asks for one valuation once
    d = doc(participants=[{"name": "Ann"}, {"name": "Ann"}], resources=[{**resource("a", 1, 1), "valuations": {}}])
    assert check_valuation_keys(d) == [Finding("/resources/0/valuations", "no valuation for participant 'Ann'")]
    assert check_valuation_keys(doc()) == []


def test_held_by_names_a_participant() -> None:
    d = doc(resources=[resource("a", 0.5, 0.5, held_by="Ann"), resource("b", 0.5, 0.5, held_by="Eve"),
                       resource("c", 0, 0)])  # fmt: skip
    assert check_held_by(d) == [Finding("/resources/1/held_by", "held_by 'Eve' is not a participant (Ann or Ben)")]


# --- rule (d): latent resources ----------------------------------------------------------------------------------


def latent_doc(facts: list[str], revelations: list[str], holder: str = "Ann", other: list[str] | None = None) -> dict:
    """One latent resource, "Warehouse lease option" (id lease_option): key terms warehouse, lease, option."""
    r = resource("lease_option", 0.5, 0.5, name="Warehouse lease option", visibility="latent", held_by=holder)
    d = doc(resources=[r])
    d["participants"][0]["hidden_facts"] = facts
    d["participants"][1]["hidden_facts"] = other or []
    d["evaluation_criteria"]["expected_revelations"] = revelations
    return d


STATED = "Ann holds a warehouse lease option until May."  # 3 of 3 key terms: score 1
REVEALED = "Ben learns of the warehouse lease option."


def test_a_latent_resource_stated_once_and_revealed() -> None:
    assert check_latent(latent_doc(["Unrelated budget note.", STATED], [REVEALED])) == []
    # two of the three key terms (2/3 >= 0.5) are still a strong match
    assert check_latent(latent_doc(["The warehouse lease is cheap."], ["The warehouse option matters."])) == []


def test_a_latent_resource_stated_by_two_facts_is_a_warning() -> None:
    found = check_latent(latent_doc([STATED, "Unrelated.", "The lease option on the warehouse lapses."], [REVEALED]))
    assert found == [
        Finding(
            "/resources/0",
            "latent resource is stated by 2 hidden facts (/participants/0/hidden_facts/0, "
            "/participants/0/hidden_facts/2); expected one",
            True,
        )
    ]


def test_a_latent_resource_only_weakly_matched() -> None:
    # "warehouse" alone: 1 of 3 key terms, 0.33 < 0.5: weak
    found = check_latent(latent_doc(["Budget first.", "The warehouse is cold."], [REVEALED]))
    assert found == [
        Finding(
            "/resources/0",
            "latent resource only weakly matches hidden fact /participants/0/hidden_facts/1 (score 0.33 < 0.5); "
            "name the resource in that fact",
            True,
        )
    ]


def test_a_latent_resource_stated_by_no_fact_of_its_holder() -> None:
    found = check_latent(latent_doc(["Budget first."], [REVEALED]))
    assert found == [Finding("/resources/0", "latent resource is stated by no hidden fact of 'Ann'")]
    # the other party states it (strongly, at index 1): a hint that held_by is wrong
    found = check_latent(latent_doc(["Budget first."], [REVEALED], other=["The warehouse is cold.", STATED]))
    assert found == [
        Finding(
            "/resources/0",
            "latent resource is stated by no hidden fact of 'Ann' (but /participants/1/hidden_facts/1 does: is "
            "held_by right?)",
        )
    ]
    # the other party only weakly: no hint
    found = check_latent(latent_doc(["Budget first."], [REVEALED], other=["The warehouse is cold."]))
    assert found == [Finding("/resources/0", "latent resource is stated by no hidden fact of 'Ann'")]


def test_the_expected_revelations_of_a_latent_resource() -> None:
    # none at all: an error
    found = check_latent(latent_doc([STATED], ["Prices rise in June."]))
    assert found == [
        Finding("/resources/0", "latent resource does not appear in evaluation_criteria.expected_revelations")
    ]
    found = check_latent(latent_doc([STATED], []))
    assert found == [
        Finding("/resources/0", "latent resource does not appear in evaluation_criteria.expected_revelations")
    ]
    # weak only (1/3), and not a restatement of the fact (1 of its 4 terms price, cold, warehouse, rise: 0.25 < 0.5):
    # a warning naming the best one
    found = check_latent(latent_doc([STATED], ["Prices rise.", "Prices of cold warehouses rise."]))
    assert found == [
        Finding(
            "/resources/0",
            "latent resource only weakly matches expected revelation /evaluation_criteria/expected_revelations/1 "
            "(score 0.33)",
            True,
        )
    ]
    # no expected_revelations key at all: as an empty list
    d = latent_doc([STATED], [])
    del d["evaluation_criteria"]["expected_revelations"]
    assert check_latent(d) == [
        Finding("/resources/0", "latent resource does not appear in evaluation_criteria.expected_revelations")
    ]


def test_only_latent_resources_held_by_a_participant_are_checked() -> None:
    d = latent_doc([], [])
    d["resources"][0]["visibility"] = "private"
    assert check_latent(d) == []
    d = latent_doc([], [], holder="Eve")  # reported by check_held_by instead
    assert check_latent(d) == []
    d = latent_doc([], [], holder="Ben")  # held by the second party: its facts are read
    d["participants"][1]["hidden_facts"] = [STATED]
    d["evaluation_criteria"]["expected_revelations"] = [REVEALED]
    assert check_latent(d) == []
    del d["resources"][0]["held_by"]
    assert check_latent(d) == []


# --- shared_mode, units, sums, fixed pie -------------------------------------------------------------------------


def test_shared_mode_and_polarity() -> None:
    d = doc(
        resources=[
            resource("a", 0.25, 0.25, shared_mode="both_benefit"),  # divisible: mode ignored
            resource("b", 0.25, 0.25, divisibility="shared", shared_mode="joint_obligation"),  # asset by default
            resource("c", 0.25, 0.25, divisibility="shared", shared_mode="joint_obligation", polarity="asset"),
            resource("d", 0.25, 0.25, divisibility="shared", shared_mode="joint_obligation", polarity="liability"),
            resource("e", 0.0, 0.25, divisibility="shared", shared_mode="both_benefit", polarity="liability"),
            resource("f", 0.0, 0.0, divisibility="shared", shared_mode="both_benefit"),
            resource("g", 0.0, 0.0, divisibility="shared"),
        ]
    )
    joint = ('a joint_obligation is "a cost/burden to assign" but polarity is asset (the default): it is scored as a '
             "positive value; set polarity: liability if it is a burden")  # fmt: skip
    assert check_shared_mode(d) == [
        Finding("/resources/0/shared_mode", "shared_mode is ignored: divisibility is not 'shared'", True),
        Finding("/resources/1/polarity", joint, True),
        Finding("/resources/2/polarity", joint, True),
        Finding(
            "/resources/4/polarity",
            'a both_benefit resource is a "non-rival good" but polarity is liability: scored as a burden both parties '
            "bear in full, whatever the allocation",
            True,
        ),
    ]


def test_percent_needs_a_description() -> None:
    d = doc(resources=[resource("a", 0.5, 0.5, unit="percent"), resource("b", 0.5, 0.5, unit="percent",
                                                                          description="of the shop")])  # fmt: skip
    assert check_units(d) == [
        Finding("/resources/0/unit", "unit 'percent' without a description: say percent of what", True)
    ]


@pytest.mark.parametrize(
    ("ann", "ben", "bad"),
    [
        ((0.75, 0.25), (0.25, 0.75), []),
        ((0.75, 0.25 + 1e-6), (0.25, 0.75), []),  # 1.000001: 1 + 0.99999999992e-6 in doubles, within
        ((0.75, 0.25 - 2e-6), (0.25, 0.75), ["Ann's valuations sum to 0.999998"]),
        ((0.75, 0.25), (0.5, 0.75), ["Ben's valuations sum to 1.25"]),
        ((0.5, 0.25), (0.125, 0.25), ["Ann's valuations sum to 0.75", "Ben's valuations sum to 0.375"]),
    ],
)
def test_normalised_valuations_sum_to_one(ann: tuple, ben: tuple, bad: list[str]) -> None:
    d = doc(resources=[resource("a", ann[0], ben[0]), resource("b", ann[1], ben[1])])
    found = check_valuation_sums(d)
    assert found == [Finding("/resources", f"{b}; normalized_share expects 1 (within 1e-06)", True) for b in bad]


def test_raw_valuations_need_a_positive_sum_and_mixed_bases_warn() -> None:
    d = doc(resources=[resource("a", 3.0, 0.0, valuation_basis="raw"), resource("b", 5.0, 0.0, valuation_basis="raw")])
    assert check_valuation_sums(d) == [
        Finding("/resources", "Ben values no resource: raw valuations cannot be renormalised")
    ]
    # a raw sum just above 0 is fine; sums far from 1 are fine when raw
    d["resources"][1]["valuations"]["Ben"] = 1e-9
    assert check_valuation_sums(d) == []
    # mixed: one raw resource among normalized_share ones (stated or by default)
    d = doc(resources=[resource("a", 0.5, 0.5), resource("b", 2.0, 0.0, valuation_basis="raw"),
                       resource("c", 0.5, 0.5, valuation_basis="normalized_share"),
                       resource("d", 0.0, 0.0, valuation_basis="raw")])  # fmt: skip
    assert check_valuation_sums(d) == [
        Finding("/resources", "valuation_basis is mixed (raw at /resources/1, /resources/3): every party's weights are "
                "renormalised over all resources", True)
    ]  # fmt: skip
    assert check_valuation_sums(doc(resources=[])) == []
    # a missing valuation counts 0: Ben's sum 0.75 is reported
    d = doc(resources=[resource("a", 0.5, 0.75), {**resource("b", 0.5, 0.0), "valuations": {"Ann": 0.5}}])
    assert check_valuation_sums(d) == [
        Finding("/resources", "Ben's valuations sum to 0.75; normalized_share expects 1 (within 1e-06)", True)
    ]


FIXED = "the resources form a single fixed pie ({}): no trade can make both parties better off"


def test_a_single_fixed_pie_is_flagged() -> None:
    # (0.5, 0.25) and (0.5, 0.25 + x): 0.5 * 0.25 - (0.25 + x) * 0.5 = -x / 2: the same proportion only for x = 0
    same = doc(resources=[resource("a", 0.5, 0.25), resource("b", 0.5, 0.25), resource("c", 0.0, 0.0)])
    assert check_fixed_pie(same) == [
        Finding("/resources", FIXED.format("every divided resource valued in the same proportion"), True)
    ]
    assert check_fixed_pie(doc(resources=[resource("a", 0.5, 0.25)])) == [
        Finding("/resources", FIXED.format("a lone divided resource"), True)
    ]
    # a lone resource only one party values is still a lone divided resource
    assert check_fixed_pie(doc(resources=[resource("a", 0.0, 0.25)])) != []
    assert check_fixed_pie(doc(resources=[resource("a", 0.5, 0.25), resource("b", 0.5, 0.25 + 1e-9)])) == []
    assert check_fixed_pie(doc()) == []  # (0.75, 0.25) and (0.25, 0.75)
    # the first party's value compared too: (0.5, 0.25) and (0.25, 0.25)
    assert check_fixed_pie(doc(resources=[resource("a", 0.5, 0.25), resource("b", 0.25, 0.25)])) == []
    # valued by nobody: no pie; with the same name twice: no check
    assert check_fixed_pie(doc(resources=[resource("a", 0.0, 0.0)])) == []
    twins = copy.deepcopy(same)
    twins["participants"][1]["name"] = "Ann"
    assert check_fixed_pie(twins) == []


def test_a_kept_shared_resource_is_not_part_of_the_pie() -> None:
    # a both_benefit resource kept shared is left out: the other two, (0.5, 0.25) and (0.25, 0.5), differ
    kept = resource("k", 0.5, 0.25, divisibility="shared", shared_mode="both_benefit")
    d = doc(resources=[kept, resource("a", 0.25, 0.5)])
    assert check_fixed_pie(d) == [Finding("/resources", FIXED.format("a lone divided resource"), True)]
    # a joint obligation is divided: with (0.25, 0.5) it makes two proportions, no fixed pie
    joint = resource("j", 0.5, 0.25, divisibility="shared", shared_mode="joint_obligation")
    assert check_fixed_pie(doc(resources=[joint, resource("a", 0.25, 0.5)])) == []
    # both_benefit but not shared (the mode is ignored): divided
    odd = resource("o", 0.5, 0.25, shared_mode="both_benefit")
    assert check_fixed_pie(doc(resources=[odd, resource("a", 0.25, 0.5)])) == []
    # shared without a mode reads as both_benefit? no: only a stated both_benefit is left out
    plain = resource("p", 0.5, 0.25, divisibility="shared")
    assert check_fixed_pie(doc(resources=[plain, resource("a", 0.25, 0.5)])) == []


def test_check_rules_runs_every_rule_after_the_id() -> None:
    d = doc(id="x", evaluation_criteria={"min_turns": 5, "max_turns": 4}, resources=[resource("a", 0.5, 0.25)])
    found = check_rules(d, "y")
    # the id, the turn limits, Ann's sum 0.5 and Ben's 0.25, then the lone pie
    assert [f.pointer for f in found] == ["/id", "/evaluation_criteria/min_turns", *["/resources"] * 3]
    assert [f.message.split(";")[0] for f in found[2:4]] == [
        "Ann's valuations sum to 0.5",
        "Ben's valuations sum to 0.25",
    ]
    assert found[-1].message == FIXED.format("a lone divided resource")
    assert rules.MODERATOR == "Moderator" and rules.SUM_TOLERANCE == 1e-6


def test_a_document_without_resources_passes_every_resource_rule() -> None:
    bare = {k: v for k, v in doc().items() if k != "resources"}
    for rule in (check_valuation_keys, check_held_by, check_latent, check_shared_mode, check_units,
                 check_valuation_sums, check_fixed_pie, check_resource_ids):  # fmt: skip
        assert rule(bare) == [], rule.__name__
    assert check_rules(bare, "deal") == []


def test_findings_of_several_resources_are_all_kept() -> None:
    d = doc(resources=[{**resource("a", 0.5, 0.5), "valuations": {"Ann": 0.5, "Bob": 0.5}},
                       {**resource("b", 0.5, 0.5), "valuations": {"Ann": 0.5, "Eve": 0.5}}])  # fmt: skip
    assert [f.pointer for f in check_valuation_keys(d)] == [
        "/resources/0/valuations/Bob", "/resources/0/valuations", "/resources/1/valuations/Eve",
        "/resources/1/valuations",
    ]  # fmt: skip
    d = latent_doc(["Budget first."], [REVEALED])
    d["resources"].append({**d["resources"][0], "id": "lease_option_2"})
    assert [f.pointer for f in check_latent(d)] == ["/resources/0", "/resources/1"]


def test_revelations_restating_a_weakly_matched_fact_are_strong() -> None:
    # the fact matches the resource weakly (warehouse: 1/3); the revelation matches the resource weakly too, but
    # restates that fact: of the fact's 4 terms (warehouse, cold, damp, night) 3 are in the revelation: 0.75 >= 0.5
    found = check_latent(
        latent_doc(["The warehouse is cold and damp at night."], ["Ben hears the warehouse is cold and damp."])
    )
    assert [f.message[:50] for f in found] == ["latent resource only weakly matches hidden fact /p"]
    # with a strong fact beside it, only the strong fact counts for the revelations: a revelation restating the weak
    # one is weak (1/3), and warned
    d = latent_doc([STATED, "The warehouse is cold and damp at night."], ["Ben hears the warehouse is cold and damp."])
    assert check_latent(d) == [
        Finding("/resources/0", "latent resource only weakly matches expected revelation "
                "/evaluation_criteria/expected_revelations/0 (score 0.33)", True)
    ]  # fmt: skip


def test_the_hint_of_a_resource_held_by_the_second_party() -> None:
    # held by Ben, stated by none of his facts but by Ann's first
    d = latent_doc([STATED], [REVEALED], holder="Ben")
    assert check_latent(d) == [
        Finding("/resources/0", "latent resource is stated by no hidden fact of 'Ben' (but "
                "/participants/0/hidden_facts/0 does: is held_by right?)")
    ]  # fmt: skip


def test_explicit_normalized_share_beside_the_default_is_not_mixed() -> None:
    d = doc(resources=[resource("van", 0.75, 0.25), resource("shop", 0.25, 0.75, valuation_basis="normalized_share")])
    assert check_valuation_sums(d) == []


def test_the_fixed_pie_with_missing_valuations_and_tiny_values() -> None:
    # Ben values neither (a missing valuation counts 0): (0.5, 0) and (0.25, 0), one proportion: a fixed pie
    only_ann = [
        {**resource("a", 0, 0), "valuations": {"Ann": 0.5}},
        {**resource("b", 0, 0), "valuations": {"Ann": 0.25}},
    ]
    assert check_fixed_pie(doc(resources=only_ann)) == [
        Finding("/resources", FIXED.format("every divided resource valued in the same proportion"), True)
    ]
    only_ben = [
        {**resource("a", 0, 0), "valuations": {"Ben": 0.5}},
        {**resource("b", 0, 0), "valuations": {"Ben": 0.25}},
    ]
    assert len(check_fixed_pie(doc(resources=only_ben))) == 1
    # (0.5, 0) is valued (by Ann): kept beside (0.25, 0.5): two proportions, no pie
    assert check_fixed_pie(doc(resources=[resource("a", 0.5, 0.0), resource("b", 0.25, 0.5)])) == []
    # (1, 0) and (0.5, 1e-12): 0.5 * 0 - 1e-12 * 1 = -1e-12, exactly the allowance: still one proportion
    assert len(check_fixed_pie(doc(resources=[resource("a", 1.0, 0.0), resource("b", 0.5, 1e-12)]))) == 1
    assert check_fixed_pie(doc(resources=[resource("a", 1.0, 0.0), resource("b", 0.5, 2e-12)])) == []
