"""`harness.scenario.analyze` held to hand-worked figures at its boundaries: the ZOPA and comfortable thresholds, the
label warnings and their messages, why there is no ZOPA, the relief form and the fixed pie.

Notation as in test_scenario_analysis.py: a resource written (a, b) is worth a to the first party and b to the
second; u = (u_1, u_2); d the BATNAs.
"""

from __future__ import annotations

import dataclasses

import pytest

from harness.errors import ScenarioError
from harness.scenario.analyze import (
    COMFORTABLE,
    MAX_INDIVISIBLE,
    ZOPA_EPS,
    Analysis,
    analyze_model,
    fixed_pie_joint_max,
    geometry,
    label_warnings,
    no_zopa_reason,
    relief,
)
from harness.scenario.utility import Model, Resource

approx = pytest.approx


def model(*resources: Resource, batna: tuple[float, float] = (0.0, 0.0), difficulty: str = "novice") -> Model:
    return Model("s", difficulty, ("Ann", "Ben"), batna, (batna[0] > 0, batna[1] > 0), tuple(resources))


def logroll(batna: tuple[float, float] = (0.0, 0.0), difficulty: str = "novice") -> Analysis:
    """ovens (0.8, 0.2) and clients (0.2, 0.8), both divisible assets.

    The chain starts with both at Ben, (0, 1); ovens move first (a/b = 4): (0.8, 0.8); then clients: (1, 0).
    The smaller gain over d = (0, 0) is largest at (0.8, 0.8): 0.8. The largest u_1 + u_2 is 1.6 there; the fixed
    pie (both split at one λ) gives at most max(0.8 + 0.2, 0.2 + 0.8) = 1: integrativeness 0.6.
    """
    ovens = Resource("ovens", "divisible", 1, (0.8, 0.2))
    clients = Resource("clients", "divisible", 1, (0.2, 0.8))
    return analyze_model(model(ovens, clients, batna=batna, difficulty=difficulty))


def test_the_logroll_figures() -> None:
    a = logroll()
    assert a.zopa_margin == approx(0.8) and a.joint_max == approx(1.6)
    assert a.fixed_pie_joint_max == approx(1.0) and a.integrativeness == approx(0.6)
    assert a.best_attainable == approx((1.0, 1.0))
    # best for Ann: ovens and clients both hers, (1, 0), value u_1 = 1; best for Ben the other way, value u_2 = 1
    assert a.best_for[0].utilities == approx((1.0, 0.0)) and a.best_for[0].value == approx(1.0)
    assert a.best_for[1].utilities == approx((0.0, 1.0)) and a.best_for[1].value == approx(1.0)
    assert a.best_for[0].shares == {"ovens": (1.0, 0.0), "clients": (1.0, 0.0)}
    assert a.best_for[1].shares == {"ovens": (0.0, 1.0), "clients": (0.0, 1.0)}
    assert a.warnings == []


@pytest.mark.parametrize(
    ("margin", "zopa", "comfortable"),
    [
        (-0.1, False, False),
        (0.0, False, False),
        (ZOPA_EPS, False, False),  # a ZOPA needs a smaller gain strictly above the rounding allowance
        (2 * ZOPA_EPS, True, False),
        (0.0999, True, False),
        (COMFORTABLE, True, True),  # exactly a tenth is comfortable
        (0.1001, True, True),
    ],
)
def test_zopa_and_comfortable_at_their_thresholds(margin: float, zopa: bool, comfortable: bool) -> None:
    assert COMFORTABLE == 0.10 and ZOPA_EPS == 1e-9
    a = dataclasses.replace(logroll(), zopa_margin=margin)
    assert (a.zopa, a.comfortable) == (zopa, comfortable)


EXPERT = (
    "difficulty 'expert' but the ZOPA is comfortable (both parties can gain {:.3f} >= 0.10 over their BATNAs); the "
    "schema: \"'expert' scenarios should generally have weak or no ZOPA\""
)


def test_an_expert_scenario_with_a_comfortable_zopa_is_warned() -> None:
    a = logroll(difficulty="expert")  # margin 0.8 >= 0.10
    assert a.warnings == [EXPERT.format(0.8)]
    # BATNAs (0.7, 0.7): the smaller gain is 0.8 - 0.7 = 0.1 at (0.8, 0.8): comfortable, still warned
    a = logroll(batna=(0.7, 0.7), difficulty="expert")
    assert a.zopa_margin == approx(0.1)
    # BATNAs (0.75, 0.75): 0.05, a weak ZOPA: no warning for an expert scenario
    a = logroll(batna=(0.75, 0.75), difficulty="expert")
    assert a.zopa_margin == approx(0.05) and a.zopa and not a.comfortable
    assert a.warnings == []
    # the same margins for another difficulty: never the expert warning
    assert logroll(difficulty="advanced").warnings == []
    assert label_warnings(dataclasses.replace(logroll(difficulty="expert"), zopa_margin=COMFORTABLE)) == [
        EXPERT.format(0.1)
    ]
    assert label_warnings(dataclasses.replace(logroll(difficulty="expert"), zopa_margin=0.0999)) == []


def test_an_intermediate_scenario_without_a_zopa_is_warned_with_the_reason() -> None:
    # BATNAs (1.0, 0.0): Ann's best attainable is 1 (both resources hers), not below her BATNA 1.0
    a = logroll(batna=(1.0, 0.0), difficulty="intermediate")
    assert not a.zopa
    reason = "Ann's BATNA 1.000 is not below the best utility Ann can attain, 1.000"
    assert no_zopa_reason(a) == reason
    assert a.warnings == [
        f"difficulty 'intermediate' but there is no ZOPA ({reason}); the schema: \"a comfortably solvable "
        "integrative scenario is usually 'intermediate'\""
    ]
    # the same with a ZOPA (d = 0): no warning; an expert scenario without a ZOPA: no intermediate warning
    assert logroll(difficulty="intermediate").warnings == []
    assert logroll(batna=(1.0, 0.0), difficulty="expert").warnings == []


def test_why_there_is_no_zopa() -> None:
    base = logroll()  # best attainable (1, 1)
    # Ben's BATNA exactly at his best (1.0): named, the other party not
    a = dataclasses.replace(base, model=model(batna=(0.5, 1.0)))
    assert no_zopa_reason(a) == "Ben's BATNA 1.000 is not below the best utility Ben can attain, 1.000"
    # both over: both named, joined by "; ", first party first
    a = dataclasses.replace(base, model=model(batna=(1.25, 1.5)))
    assert no_zopa_reason(a) == (
        "Ann's BATNA 1.250 is not below the best utility Ann can attain, 1.000; "
        "Ben's BATNA 1.500 is not below the best utility Ben can attain, 1.000"
    )
    # within the allowance below the best (1 - 1e-9 >= 1 - 1e-9) still counts as not below; 2e-9 below does not
    a = dataclasses.replace(base, model=model(batna=(1 - ZOPA_EPS, 0.0)))
    assert no_zopa_reason(a).startswith("Ann's BATNA 1.000 is not below")
    a = dataclasses.replace(base, model=model(batna=(1 - 4 * ZOPA_EPS, 0.0)), zopa_margin=-0.25)
    assert no_zopa_reason(a) == "no allocation beats both BATNAs at once: the best smaller gain is -0.250"
    # each BATNA below its party's best, yet no allocation beats both: (0.9, 0.9) against the logroll
    a = logroll(batna=(0.9, 0.9), difficulty="intermediate")
    # on (0, 1)-(0.8, 0.8) u_1 <= 0.8 < 0.9; on (0.8, 0.8)-(1, 0) u = (0.8 + 0.2s, 0.8 - 0.8s): gains
    # (-0.1 + 0.2s, -0.1 - 0.8s), both negative; the smaller is largest at s = 0: -0.1
    assert a.zopa_margin == approx(-0.1) and not a.zopa
    assert no_zopa_reason(a) == "no allocation beats both BATNAs at once: the best smaller gain is -0.100"


def test_the_relief_form_and_the_fixed_pie() -> None:
    """van (0.5, 0.25) divisible asset; debt (0.25, 0.5) divisible liability; lease (0.125, 0.25) indivisible
    liability; shop (0.25, 0.125) indivisible asset; brand (0.0625, 0.125) both_benefit asset; noise (0.125, 0.0625)
    both_benefit liability.

    Offset: each liability's -(a, b) and each both_benefit's signed (a, b): debt (-0.25, -0.5), lease
    (-0.125, -0.25), brand (+0.0625, +0.125), noise (-0.125, -0.0625): (-0.4375, -0.6875).
    Rival: van, debt (divisible, indexes 0 and 1), lease and shop (indivisible, 2 and 3); brand and noise are not.
    Fixed pie: offset sum -1.125, plus the larger of sum a over rival (0.5 + 0.25 + 0.125 + 0.25 = 1.125) and sum b
    (0.25 + 0.5 + 0.25 + 0.125 = 1.125): 0. With van at (0.75, 0.25) instead: sum a 1.375 > sum b: 0.25.
    """
    resources = [
        Resource("van", "divisible", 1, (0.5, 0.25)),
        Resource("debt", "divisible", -1, (0.25, 0.5)),
        Resource("lease", "indivisible", -1, (0.125, 0.25)),
        Resource("shop", "indivisible", 1, (0.25, 0.125)),
        Resource("brand", "both_benefit", 1, (0.0625, 0.125)),
        Resource("noise", "both_benefit", -1, (0.125, 0.0625)),
    ]
    off, divisible, indivisible = relief(model(*resources))
    assert off == (-0.4375, -0.6875) and divisible == [0, 1] and indivisible == [2, 3]
    assert fixed_pie_joint_max(model(*resources)) == 0.0
    resources[0] = Resource("van", "divisible", 1, (0.75, 0.25))
    assert fixed_pie_joint_max(model(*resources)) == 0.25
    # the second party's side the larger: van (0.25, 0.75): sum a 0.875, sum b 1.625: -1.125 + 1.625 = 0.5
    resources[0] = Resource("van", "divisible", 1, (0.25, 0.75))
    assert fixed_pie_joint_max(model(*resources)) == 0.5
    # a joint obligation asset is rival and divisible, with no offset
    assert relief(model(Resource("j", "joint_obligation", 1, (0.5, 0.5)))) == ((0.0, 0.0), [0], [])


def test_the_frontier_of_one_indivisible_liability_and_one_divisible_asset() -> None:
    """lease (0.25, 0.5) indivisible liability, van (0.5, 0.25) divisible asset; d = (0, 0).

    Relief form: offset (-0.25, -0.5); "being spared the lease" is worth (0.25, 0.5) (Ann spared: Ben bears it).
    Lease outcomes: Ann spared (0.25 - 0.25, -0.5) = (0, -0.5); Ben spared (-0.25, 0). The van's chain from Ben
    holding it: +(0, 0.25) -> +(0.5, 0). Translates: Ben bears the lease, (0, -0.25) to (0.5, -0.5); Ann bears it,
    (-0.25, 0.25) to (0.25, 0). Best for Ann: u_1 = 0.5 (Ben bears the lease, Ann has the van); for Ben: u_2 = 0.25
    (Ann bears it, Ben has the van). Joint best: 0.25 at (0.25, 0), Ann bearing the lease and holding the van; the
    fixed pie: offset -0.75 + max(0.25 + 0.5, 0.5 + 0.25) = 0: integrativeness 0.25.
    Along Ann's translate u = (-0.25 + 0.5s, 0.25 - 0.25s): the gains are equal at s = 2/3, u = (1/12, 1/12): a ZOPA
    of margin 1/12 = 0.083, not comfortable. Nash: 0.5(s - 0.5) * 0.25(1 - s), largest at s = 0.75: u = (0.125,
    0.0625), product 0.125 * 0.25 * 0.25 = 0.0078125; the van 0.75 to Ann. Ben's translate has u_2 < 0 throughout.
    """
    lease = Resource("lease", "indivisible", -1, (0.25, 0.5))
    van = Resource("van", "divisible", 1, (0.5, 0.25))
    a = analyze_model(model(lease, van))
    assert a.best_attainable == approx((0.5, 0.25))
    assert a.best_for[0].shares == {"lease": (0.0, 1.0), "van": (1.0, 0.0)}
    assert a.best_for[1].shares == {"lease": (1.0, 0.0), "van": (0.0, 1.0)}
    assert a.best_for[0].utilities == approx((0.5, -0.5)) and a.best_for[1].utilities == approx((-0.25, 0.25))
    assert a.joint_max == approx(0.25) and a.fixed_pie_joint_max == approx(0.0) and a.integrativeness == approx(0.25)
    assert a.utilitarian.utilities == approx((0.25, 0.0)) and a.utilitarian.shares == {
        "lease": (1.0, 0.0),
        "van": (1.0, 0.0),
    }
    assert a.zopa_margin == approx(1 / 12) and a.zopa and not a.comfortable
    assert a.egalitarian.utilities == approx((1 / 12, 1 / 12))
    assert a.egalitarian.shares["lease"] == (1.0, 0.0) and a.egalitarian.shares["van"] == approx((2 / 3, 1 / 3))
    assert a.nash is not None and a.nash.value == approx(0.0078125) and a.nash.utilities == approx((0.125, 0.0625))
    assert a.nash.shares["van"] == approx((0.75, 0.25)) and a.nash.shares["lease"] == (1.0, 0.0)
    assert a.warnings == []
    # both parties' BATNAs at 0.1: the margin 1/12 - 0.1 < 0, no ZOPA; an intermediate scenario is warned
    a = analyze_model(model(lease, van, batna=(0.1, 0.1), difficulty="intermediate"))
    assert a.zopa_margin == approx(1 / 12 - 0.1) and not a.zopa and a.nash is None
    assert a.warnings[0].startswith("difficulty 'intermediate' but there is no ZOPA (no allocation beats both BATNAs")


def test_integrativeness_at_the_allowance() -> None:
    a = logroll()
    assert label_warnings(dataclasses.replace(a, integrativeness=ZOPA_EPS)) == [
        "not integrative: the frontier is no better than a single fixed pie (no trade helps both)"
    ]
    assert label_warnings(dataclasses.replace(a, integrativeness=2 * ZOPA_EPS)) == []


def test_at_most_24_indivisible_resources_are_enumerated() -> None:
    assert MAX_INDIVISIBLE == 24
    many = [Resource(f"r{i}", "indivisible", 1, (1 / 25, 1 / 25)) for i in range(25)]
    with pytest.raises(ScenarioError, match=r"^25 indivisible resources: at most 24 can be enumerated$"):
        geometry(model(*many))
    # 24, and 25 resources of which one is divisible: enumerated (all valued by Ann alone: one undominated point)
    alone = [Resource(f"r{i}", "indivisible", 1, (1 / 25, 0.0)) for i in range(24)]
    assert len(geometry(model(*alone)).fronts) == 1
    mixed = geometry(model(*alone, Resource("d", "divisible", 1, (1 / 25, 0.0))))
    assert mixed.indivisible == list(range(24)) and mixed.divisible == [24]


def test_resources_that_never_move_along_the_chain_keep_their_holder() -> None:
    """ovens (0.8, 0.2), clients (0.2, 0.8) as in the logroll; sign (0.25, 0) only Ann values: hers from the chain's
    start; hall (0, 0.25) only Ben values and dust (0, 0) nobody: Ben's throughout; tax (0.5, 0) a divisible
    liability only Ann minds: in relief form being spared it is worth (0.5, 0) to Ann, so she is spared it from the
    start and Ben bears it (shares (0, 1)). None of them moves along the chain, whichever point is chosen."""
    resources = [
        Resource("ovens", "divisible", 1, (0.8, 0.2)),
        Resource("clients", "divisible", 1, (0.2, 0.8)),
        Resource("sign", "divisible", 1, (0.25, 0.0)),
        Resource("hall", "divisible", 1, (0.0, 0.25)),
        Resource("dust", "divisible", 1, (0.0, 0.0)),
        Resource("tax", "divisible", -1, (0.5, 0.0)),
    ]
    a = analyze_model(model(*resources))
    fixed = {"sign": (1.0, 0.0), "hall": (0.0, 1.0), "dust": (0.0, 1.0), "tax": (0.0, 1.0)}
    for s in (a.best_for[0], a.best_for[1], a.utilitarian, a.egalitarian):
        assert {k: v for k, v in s.shares.items() if k in fixed} == fixed
    # the utilitarian point: ovens to Ann, clients to Ben: u = (0.8 + 0.25, 0.8 + 0.25) = (1.05, 1.05); the tax
    # costs Ann nothing there (Ben bears it, at 0 to him)
    assert a.utilitarian.utilities == approx((1.05, 1.05))
    assert a.utilitarian.shares["ovens"] == (1.0, 0.0) and a.utilitarian.shares["clients"] == (0.0, 1.0)
