"""fcb scenario score: utilities, BATNA checks, distance to the frontier and the Nash-product ratio of an agreed
allocation, against figures worked out by hand; the allocation file format and its errors."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.scenario.analyze import analyze, analyze_model
from harness.scenario.score import Score, parse_allocation, score
from harness.scenario.utility import Model, Resource, utilities

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "data" / "scenarios"
approx = pytest.approx


def scored(name: str, allocation: dict[str, Any]) -> Score:
    a = analyze(json.loads((SCENARIOS / name).read_text()))
    assert a is not None
    shares, findings = parse_allocation({"allocation": allocation}, a.model)
    assert findings == [] and shares is not None
    return score(a, shares)


def problems(name: str, document: Any) -> list[tuple[str, str]]:
    a = analyze(json.loads((SCENARIOS / name).read_text()))
    assert a is not None
    shares, findings = parse_allocation(document, a.model)
    assert shares is None
    return [(f.pointer, f.message) for f in findings]


def test_an_even_split_of_a_logroll() -> None:
    # logroll_two, each resource split 50/50: u = (0.5 * 0.8 + 0.5 * 0.2, same) = (0.5, 0.5); BATNAs 0: both beat.
    # Nash product 0.25; the NBS's is 0.64: ratio 0.390625.
    # Distance to the frontier (0,1)-(0.8,0.8)-(1,0): to the first piece, |cross((0.5,-0.5), (0.8,-0.2))| / |(0.8,
    # -0.2)| = 0.3 / sqrt(0.68); the same to the second. Both could still gain 0.3 at once, at (0.8, 0.8).
    s = scored(
        "logroll_two.json", {"ovens": {"Alice": 0.5, "Bob": 0.5}, "catering_clients": {"Alice": 0.5, "Bob": 0.5}}
    )
    assert s.utilities == approx((0.5, 0.5)) and s.beats_batna == (True, True)
    assert s.nash_product == approx(0.25) and s.nbs_ratio == approx(0.390625)
    assert s.distance_to_frontier == approx(0.3 / math.sqrt(0.68))
    assert s.pareto_gap == approx(0.3)


def test_the_nbs_allocation_scores_one() -> None:
    s = scored("logroll_two.json", {"ovens": "Alice", "catering_clients": "Bob"})
    assert s.utilities == approx((0.8, 0.8)) and s.nbs_ratio == approx(1.0)
    assert s.distance_to_frontier == approx(0.0, abs=1e-12) and s.pareto_gap == approx(0.0, abs=1e-12)


def test_a_deal_one_party_should_refuse() -> None:
    # three_mixed: ovens halved (A 0.25, B 0.1), contract to B (0.5), debt borne half each (-0.15 each):
    # u = (0.1, 0.45). A's BATNA is 0.1: not beaten (strictly), so the Nash product counts as 0 and the ratio is 0.
    # Nearest frontier piece (-0.3,0.7)-(0.2,0.5): |cross((0.4,-0.25), (0.5,-0.2))| / sqrt(0.29) = 0.045 / sqrt(0.29).
    # Equal gains along it: -0.4 + 0.5s = 0.25 - 0.2s at s = 13/14, a gain of 0.9/14 for both.
    s = scored(
        "three_mixed.json",
        {"ovens": {"Alice": 0.5, "Bob": 0.5}, "hospital_contract": "Bob", "supplier_debt": {"Alice": 0.5, "Bob": 0.5}},
    )
    assert s.utilities == approx((0.1, 0.45)) and s.beats_batna == (False, True)
    assert s.nash_product == 0.0 and s.nbs_ratio == 0.0
    assert s.distance_to_frontier == approx(0.045 / math.sqrt(0.29))
    assert s.pareto_gap == approx(0.9 / 14)


def test_shared_and_liability_specs() -> None:
    # shared_raw (weights A 0.5, 0.25, 0.25; B 0.2, 0.4, 0.4): ovens to A, brand shared, A bears the loan:
    # u = (0.5 + 0.25 - 0.25, 0.4) = (0.5, 0.4), the NBS. The brand to Bob alone instead: A loses 0.25.
    s = scored("shared_raw.json", {"ovens": "Alice", "brand": "shared", "bank_loan": {"Alice": 1}})
    assert s.utilities == approx((0.5, 0.4)) and s.nbs_ratio == approx(1.0)
    s = scored("shared_raw.json", {"ovens": "Alice", "brand": "Bob", "bank_loan": "Alice"})
    assert s.utilities == approx((0.25, 0.4))


def test_no_zopa_means_no_ratio() -> None:
    s = scored("indivisible_impasse.json", {"ovens": "Alice", "van": "Bob"})
    assert s.utilities == approx((0.6, 0.5)) and s.beats_batna == (False, False) and s.nbs_ratio is None


def test_invalid_allocations() -> None:
    assert problems("shared_raw.json", {"allocation": {"ovens": "Alice"}}) == [
        ("/allocation/brand", "no allocation for this resource"),
        ("/allocation/bank_loan", "no allocation for this resource"),
    ]
    found = problems(
        "shared_raw.json",
        {
            "scenario": "other",
            "allocation": {
                "ovens": {"Alice": 0.7, "Bob": 0.7},
                "brand": "Carol",
                "bank_loan": {"Alice": 0.5},
                "extra": 1,
            },
        },
    )
    assert found == [
        ("/scenario", "allocation is for 'other', not 'shared_raw'"),
        ("/allocation/extra", "no such resource"),
        ("/allocation/ovens", "the fractions add up to 1.4, more than the whole resource"),
        ("/allocation/brand", "'Carol' is not 'Alice' or 'Bob' or 'shared'"),
        ("/allocation/bank_loan", "a liability is borne in full: the fractions must add up to 1, not 0.5"),
    ]
    allocation = {"ovens": "shared", "hospital_contract": {"Alice": 0.5}, "supplier_debt": {"Zed": 1}}
    indivisible = "an indivisible resource goes whole to one party or to neither (fractions 0 or 1)"
    assert problems("three_mixed.json", {"allocation": allocation}) == [
        ("/allocation/ovens", "'shared' is not 'Alice' or 'Bob'"),
        ("/allocation/hospital_contract", indivisible),
        ("/allocation/supplier_debt/Zed", "'Zed' is not a participant"),
    ]
    assert problems("three_mixed.json", [1]) == [
        ("", "expected an object with an 'allocation' object (resource id -> spec)")
    ]


def test_cli_score(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "harness.scenario.commands", "score", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )

    good = tmp_path / "deal.json"
    good.write_text('{"scenario": "logroll_two", "allocation": {"ovens": "Alice", "catering_clients": "Bob"}}')
    text = cli(str(SCENARIOS / "logroll_two.json"), str(good))
    assert text.returncode == 0, text.stderr
    assert "distance to the Pareto frontier: 0.000 (Pareto-optimal: yes)" in text.stdout
    js = cli(str(SCENARIOS / "logroll_two.json"), str(good), "--format", "json")
    data = json.loads(js.stdout)
    assert data["utilities"] == {"Alice": 0.8, "Bob": 0.8} and data["nbs_ratio"] == 1.0
    assert data["beats_batna"] == {"Alice": True, "Bob": True} and data["pareto_optimal"] is True
    broken = tmp_path / "broken.json"
    broken.write_text('{"allocation": ')
    proc = cli(str(SCENARIOS / "logroll_two.json"), str(broken))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and "invalid JSON" in proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"allocation": {"ovens": 2}}')
    assert cli(str(SCENARIOS / "logroll_two.json"), str(bad)).returncode == 1
    assert cli(str(SCENARIOS / "logroll_two.json"), str(tmp_path / "missing.json")).returncode == 2
    assert cli(str(SCENARIOS / "bad_cross_rules.json"), str(good)).returncode == 1
    assert cli(str(SCENARIOS / "no_resources.json"), str(good)).returncode == 1


def staircase(batna: tuple[float, float]) -> Model:
    """A divisible workshop and three indivisible goods (weights sum to 1 for each party); its frontier, worked out
    in test_scenario_analysis: (0, 1) - (6/35, 0.7) | (0.65, 0.7) - (0.85, 0.35) | (0.85, 0.3375) - (0.9, 0.25) |
    (0.9, 0.1875) - (0.95, 0.1) | (0.95, 0.0875) - (1, 0)."""
    resources = (
        Resource("workshop", "divisible", 1, (0.2, 0.35)),
        Resource("van", "indivisible", 1, (0.05, 0.1)),
        Resource("kiln", "indivisible", 1, (0.1, 0.25)),
        Resource("shop", "indivisible", 1, (0.65, 0.3)),
    )
    return Model("staircase", "novice", ("Ann", "Ben"), batna, (True, True), resources)


def scored_model(model: Model, allocation: dict[str, Any]) -> Score:
    shares, findings = parse_allocation({"scenario": model.scenario_id, "allocation": allocation}, model)
    assert findings == [] and shares is not None
    return score(analyze_model(model), shares)


def test_a_deal_in_a_notch_of_the_frontier() -> None:
    # Ann gets the van, the kiln and 0.6 of the workshop, Ben the shop and 0.4 of the workshop:
    # u = (0.05 + 0.1 + 0.6 * 0.2, 0.3 + 0.4 * 0.35) = (0.27, 0.44). BATNAs (0.2, 0.3): both beat them;
    # Nash product 0.07 * 0.14 = 0.0098.
    # The NBS: on the piece (0.65, 0.7) - (0.85, 0.35) the gains are (0.45 + 0.2s, 0.4 - 0.35s), whose product
    # falls from s = 0 (derivative 0.08 - 0.1575 < 0): 0.45 * 0.4 = 0.18 at (0.65, 0.7). Elsewhere Ben gains at most
    # 0.0375 (products under 0.03) or Ann gains nothing. Ratio 0.0098 / 0.18 = 49/900.
    # Distance: along (0, 1) - (6/35, 0.7) the nearest point lies past the end (s ~ 1.79), so it is that end:
    # sqrt((0.27 - 6/35)^2 + 0.26^2) = sqrt((69/700)^2 + (13/50)^2); the next piece is 0.185 / sqrt(0.1625) ~ 0.459
    # away. Pareto gap: on the piece (0.65 + 0.2s, 0.7 - 0.35s) the gains over u are (0.38 + 0.2s, 0.26 - 0.35s),
    # smaller one largest at s = 0: 0.26 (Ann the shop, Ben everything else: (0.65, 0.7)).
    s = scored_model(
        staircase((0.2, 0.3)),
        {"workshop": {"Ann": 0.6, "Ben": 0.4}, "van": "Ann", "kiln": {"Ann": 1}, "shop": {"Ben": 1.0, "Ann": 0}},
    )
    assert s.shares == {"workshop": (0.6, 0.4), "van": (1.0, 0.0), "kiln": (1.0, 0.0), "shop": (0.0, 1.0)}
    assert s.utilities == approx((0.27, 0.44)) and s.beats_batna == (True, True)
    assert s.nash_product == approx(0.0098) and s.nbs_ratio == approx(49 / 900)
    assert s.distance_to_frontier == approx(math.hypot(69 / 700, 13 / 50))
    assert s.pareto_gap == approx(0.26)


def test_a_utility_level_with_a_batna_does_not_beat_it() -> None:
    # u = (0.27, 0.44) as above (Ben's 0.3 + 0.4 * 0.35 is 0.44 up to rounding); Ben's BATNA 0.44: not beaten, so the
    # Nash product is 0; there is still an NBS (at (0.65, 0.7) Ann gains 0.45, Ben 0.26): the ratio is 0.
    allocation = {"workshop": {"Ann": 0.6, "Ben": 0.4}, "van": "Ann", "kiln": "Ann", "shop": "Ben"}
    s = scored_model(staircase((0.2, 0.44)), allocation)
    assert s.beats_batna == (True, False) and s.nash_product == 0.0 and s.nbs_ratio == 0.0
    s = scored_model(staircase((0.27, 0.1)), allocation)
    assert s.beats_batna == (False, True) and s.nash_product == 0.0 and s.nbs_ratio == 0.0
    # just above both BATNAs (by 1e-6): both beat them
    s = scored_model(staircase((0.27 - 1e-6, 0.44 - 1e-6)), allocation)
    assert s.beats_batna == (True, True) and s.nash_product == approx(1e-12)


def test_a_party_beats_its_batna_only_by_more_than_the_rounding_allowance() -> None:
    allocation = {"workshop": {"Ann": 0.6, "Ben": 0.4}, "van": "Ann", "kiln": "Ann", "shop": "Ben"}
    shares, _ = parse_allocation({"allocation": allocation}, staircase((0.0, 0.0)))
    assert shares is not None
    u = utilities(staircase((0.0, 0.0)), shares)
    at = (u[0] - 1e-9, u[1] - 1e-9)
    assert at[0] + 1e-9 == u[0] and at[1] + 1e-9 == u[1]  # the BATNAs plus the allowance are exactly u
    s = scored_model(staircase(at), allocation)
    assert s.beats_batna == (False, False) and s.nash_product == 0.0
    s = scored_model(staircase((u[0] - 2e-9, u[1] - 2e-9)), allocation)
    assert s.beats_batna == (True, True) and s.nash_product == approx(4e-18)


def test_specs_null_shared_and_a_party_left_out() -> None:
    # shared_raw (weights Alice 0.5, 0.25, 0.25; Bob 0.2, 0.4, 0.4): ovens kept by neither (null), the brand kept
    # shared (both enjoy it: +0.25, +0.4), the loan: Bob named alone bears 0.75, so Alice 0.25:
    # u = (0.25 - 0.25 * 0.25, 0.4 - 0.75 * 0.4) = (0.1875, 0.1).
    s = scored("shared_raw.json", {"ovens": None, "brand": "shared", "bank_loan": {"Bob": 0.75, "Alice": 0.25}})
    assert s.shares == {"ovens": (0.0, 0.0), "brand": (1.0, 1.0), "bank_loan": (0.25, 0.75)}
    assert s.utilities == approx((0.1875, 0.1))
    # half the brand to Bob, none to Alice (left out); the loan borne half each:
    # u = (-0.5 * 0.25, 0.2 + 0.5 * 0.4 - 0.5 * 0.4) = (-0.125, 0.2)
    s = scored("shared_raw.json", {"ovens": "Bob", "brand": {"Bob": 0.5}, "bank_loan": {"Alice": 0.5, "Bob": 0.5}})
    assert s.shares == {"ovens": (0.0, 1.0), "brand": (0.0, 0.5), "bank_loan": (0.5, 0.5)}
    assert s.utilities == approx((-0.125, 0.2)) and s.beats_batna == (False, True) and s.nash_product == 0.0


def test_more_invalid_allocations() -> None:
    numbers = "fractions must be numbers"
    found = problems(
        "shared_raw.json",
        {
            "scenario": "shared_raw",
            "allocation": {"ovens": 0.5, "brand": {"Alice": True}, "bank_loan": {"Alice": "0.5", "Bob": 0.5}},
        },
    )
    assert found == [
        ("/allocation/ovens", "expected {party: fraction}, a party's name, null or 'shared'"),
        ("/allocation/brand", numbers),
        ("/allocation/bank_loan", numbers),
    ]
    found = problems(
        "shared_raw.json",
        {"allocation": {"ovens": ["Alice"], "brand": {"Alice": 1.5}, "bank_loan": {"Bob": None}}},
    )
    assert found == [
        ("/allocation/ovens", "expected {party: fraction}, a party's name, null or 'shared'"),
        ("/allocation/brand", "fractions must lie in [0, 1]"),
        ("/allocation/bank_loan", numbers),
    ]
    # the first unknown name is the one named; a problem in one resource leaves the next ones checked
    found = problems(
        "three_mixed.json",
        {
            "allocation": {
                "ovens": {"Alice": 0.5, "Zed": 0.1, "Amy": 0.2},
                "hospital_contract": 1,
                "supplier_debt": "Bob",
            }
        },
    )
    assert found == [
        ("/allocation/ovens/Zed", "'Zed' is not a participant"),
        ("/allocation/hospital_contract", "expected {party: fraction}, a party's name, null or 'shared'"),
    ]
    assert problems("three_mixed.json", {"allocation": ["ovens"]}) == [
        ("", "expected an object with an 'allocation' object (resource id -> spec)")
    ]
    assert problems("three_mixed.json", {"alloc": {}}) == [
        ("", "expected an object with an 'allocation' object (resource id -> spec)")
    ]
    # a missing resource, an unknown one, and a mismatched scenario together
    assert problems("three_mixed.json", {"scenario": "logroll_two", "allocation": {"ovens": "Bob", "oven": "Bob"}}) == [
        ("/scenario", "allocation is for 'logroll_two', not 'three_mixed'"),
        ("/allocation/oven", "no such resource"),
        ("/allocation/hospital_contract", "no allocation for this resource"),
        ("/allocation/supplier_debt", "no allocation for this resource"),
    ]
