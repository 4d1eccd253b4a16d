"""fcb scenario analyze: results checked against figures worked out by hand for small scenarios (two and three
resources; divisible, indivisible, shared; assets and liabilities; with and without BATNAs), the frontier checked
against an independent mixed-integer program, and external_value_usd shown to move nothing.

Notation: A = Alice, B = Bob; a resource written (a, b) is worth a to A and b to B (whole resource); u = (u_A, u_B).
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.optimize import LinearConstraint, milp

from harness.scenario.analyze import Analysis, analyze, analyze_model
from harness.scenario.pareto import (
    Piece,
    _Translates,
    chain,
    distance,
    egalitarian,
    indivisible_front,
    nash,
    point_to_piece,
    polylines,
    undominated,
    utilitarian,
)
from harness.scenario.pareto import frontier as frontier_pieces
from harness.scenario.render import analysis_json
from harness.scenario.utility import Model, Resource, build_model, feasibility_problem, normalised_weights, utilities

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "tests" / "data" / "scenarios"
approx = pytest.approx


def load(name: str) -> dict[str, Any]:
    return json.loads((SCENARIOS / name).read_text())


def run(name: str | dict[str, Any]) -> Analysis:
    a = analyze(load(name) if isinstance(name, str) else name)
    assert a is not None
    _check_solutions_are_reached(a)
    return a


def _check_solutions_are_reached(a: Analysis) -> None:
    """Every reported solution's allocation is feasible, lands on the frontier and has the criterion's value."""
    d = a.model.batna
    criteria = {
        "nash": lambda u: (u[0] - d[0]) * (u[1] - d[1]),
        "utilitarian": lambda u: u[0] + u[1],
        "egalitarian": lambda u: min(u[0] - d[0], u[1] - d[1]),
        "best_for_first": lambda u: u[0],
        "best_for_second": lambda u: u[1],
    }
    solutions = [a.nash, a.utilitarian, a.egalitarian, *a.best_for]
    for (name, value_of), s in zip(criteria.items(), solutions, strict=True):
        if s is None:
            continue
        for r in a.model.resources:
            assert feasibility_problem(r, s.shares[r.id]) is None, (name, r)
        u = utilities(a.model, s.shares)
        assert distance(a.geometry.pieces, u) == approx(0.0, abs=1e-9), name
        assert value_of(u) == approx(s.value, abs=1e-9), name


def frontier(a: Analysis) -> list[list[tuple[float, float]]]:
    return [[(round(x, 9), round(y, 9)) for x, y in line] for line in a.frontier]


def test_two_divisible_assets_without_batnas() -> None:
    # ovens (0.8, 0.2), catering_clients (0.2, 0.8), both divisible, BATNAs 0.
    # Frontier: start with everything at B, (0, 1); hand over the resource with the larger a/b first: ovens (4)
    # gives (0.8, 0.8), then catering (0.25) gives (1, 0).
    # Nash on (0,1)-(0.8,0.8): u = (0.8s, 1 - 0.2s), d/ds of the product = 0.8 - 0.32s > 0 on [0,1] -> s = 1;
    # on (0.8,0.8)-(1,0): u = (0.8 + 0.2s, 0.8 - 0.8s), derivative at 0 = 0.16 - 0.64 < 0 -> s = 0.
    # NBS = (0.8, 0.8), product 0.64; utilitarian 1.6 there; egalitarian min gain 0.8 there.
    # Fixed pie: split both in one proportion: u = (l, 1 - l), joint 1 -> integrativeness 1.6 - 1 = 0.6.
    a = run("logroll_two.json")
    assert frontier(a) == [[(0.0, 1.0), (0.8, 0.8), (1.0, 0.0)]]
    assert a.nash is not None
    assert a.nash.utilities == approx((0.8, 0.8)) and a.nash.value == approx(0.64)
    assert a.nash.shares == {"ovens": (1.0, 0.0), "catering_clients": (0.0, 1.0)}
    assert a.utilitarian.value == approx(1.6) and a.egalitarian.value == approx(0.8)
    assert a.zopa and a.comfortable and a.zopa_margin == approx(0.8)
    assert a.integrativeness == approx(0.6) and a.fixed_pie_joint_max == approx(1.0)
    assert a.best_for[0].utilities == approx((1.0, 0.0)) and a.best_for[1].utilities == approx((0.0, 1.0))
    assert a.warnings == []


def test_two_divisible_assets_with_a_high_batna() -> None:
    # The same with A's BATNA 0.9, B's 0: only the segment (0.8,0.8)-(1,0) has u_A > 0.9, for s > 0.5.
    # Nash: (0.8 + 0.2s - 0.9)(0.8 - 0.8s) = 0.16 (s - 0.5)(1 - s), largest at s = 0.75: u = (0.95, 0.2),
    # product 0.16 * 0.25 * 0.25 = 0.01; catering goes 0.75 to A.
    # Egalitarian: -0.1 + 0.2s = 0.8 - 0.8s at s = 0.9: u = (0.98, 0.08), smaller gain 0.08 < 0.10: a weak ZOPA.
    doc = load("logroll_two.json")
    doc["participants"][0]["batna_config"] = {"utility": 0.9, "description": "A better offer elsewhere."}
    a = run(doc)
    assert a.nash is not None
    assert a.nash.utilities == approx((0.95, 0.2)) and a.nash.value == approx(0.01)
    assert a.nash.shares["catering_clients"] == approx((0.75, 0.25))
    assert a.egalitarian.utilities == approx((0.98, 0.08)) and a.zopa_margin == approx(0.08)
    assert a.zopa and not a.comfortable
    assert a.utilitarian.utilities == approx((0.8, 0.8))  # BATNAs do not move the utilitarian optimum


def test_three_resources_mixed_with_batnas() -> None:
    # ovens (0.5, 0.2) divisible asset; hospital_contract (0.2, 0.5) indivisible asset; supplier_debt (0.3, 0.3)
    # divisible liability. BATNAs 0.1 and 0.1.
    # The debt is a fixed (-0.3, -0.3) plus "being spared it", a good worth (0.3, 0.3).
    # Divisible chain from (0, 0.5): ovens (a/b 2.5) -> (0.5, 0.3), spared debt (1) -> (0.8, 0).
    # Contract to B: translate (0, 0.5) - 0.3 -> (-0.3, 0.7), (0.2, 0.5), (0.5, 0.2).
    # Contract to A: translate (0.2, 0) - 0.3 -> (-0.1, 0.2), (0.4, 0), (0.7, -0.3); it lies under the first up to
    # u_A = 0.5, where the first ends; beyond, (0.5, -0.1) to (0.7, -0.3) is on the frontier.
    # Nash: on (0.2,0.5)-(0.5,0.2), (0.1 + 0.3s)(0.4 - 0.3s) is largest at s = 0.5: u = (0.35, 0.35), product
    # 0.0625 (the other pieces give at most 0.1 * 0.4 = 0.04, or leave B under 0.1): ovens to A, contract to B,
    # the debt borne half each. Utilitarian: joint 0.7 along that whole piece (the debt is worth the same to both);
    # ties go to the most even gains: (0.35, 0.35). Egalitarian: smaller gain 0.25 there: comfortable.
    # Fixed pie: A gets l of each good and is spared l of the debt: u = (l - 0.3, 0.7 - l) (goods sum to 1 for each),
    # joint 0.4; integrativeness 0.7 - 0.4 = 0.3.
    a = run("three_mixed.json")
    assert frontier(a) == [[(-0.3, 0.7), (0.2, 0.5), (0.5, 0.2)], [(0.5, -0.1), (0.7, -0.3)]]
    assert a.nash is not None
    assert a.nash.utilities == approx((0.35, 0.35)) and a.nash.value == approx(0.0625)
    assert a.nash.shares == {"ovens": (1, 0), "hospital_contract": (0, 1), "supplier_debt": approx((0.5, 0.5))}
    assert a.utilitarian.value == approx(0.7) and a.utilitarian.utilities == approx((0.35, 0.35))
    assert a.zopa_margin == approx(0.25) and a.comfortable
    assert a.integrativeness == approx(0.3) and a.fixed_pie_joint_max == approx(0.4)
    assert a.best_for[0].shares == {"ovens": (1.0, 0.0), "hospital_contract": (1.0, 0.0), "supplier_debt": (0.0, 1.0)}
    assert len(a.warnings) == 1 and "difficulty 'expert' but the ZOPA is comfortable" in a.warnings[0]


def test_three_resources_mixed_without_batnas() -> None:
    # As above with BATNAs 0. Nash on (-0.3,0.7)-(0.2,0.5): (-0.3 + 0.5s)(0.7 - 0.2s) rises on [0.6, 1]
    # (derivative 0.41 - 0.2s > 0): 0.2 * 0.5 = 0.1 at s = 1. On (0.2,0.5)-(0.5,0.2): (0.2 + 0.3s)(0.5 - 0.3s),
    # largest at s = 0.5: 0.35 * 0.35 = 0.1225. The last piece has u_B < 0. NBS (0.35, 0.35), product 0.1225.
    doc = load("three_mixed.json")
    for p in doc["participants"]:
        del p["batna_config"]
    a = run(doc)
    assert a.nash is not None
    assert a.nash.utilities == approx((0.35, 0.35)) and a.nash.value == approx(0.1225)
    assert a.zopa_margin == approx(0.35)
    assert a.model.batna_given == (False, False)


def test_shared_resources_and_raw_valuations() -> None:
    # Raw valuations A: ovens 0.6, brand 0.3, bank_loan 0.3 (sum 1.2); B: 0.2, 0.4, 0.4 (sum 1). Renormalised:
    # A 0.5, 0.25, 0.25; B 0.2, 0.4, 0.4. brand is both_benefit (kept shared: +0.25, +0.4); bank_loan a
    # joint_obligation liability: a fixed (-0.25, -0.4) plus being spared it, worth (0.25, 0.4). Offset (0, 0).
    # Chain from (0, 0.6): ovens (2.5) -> (0.5, 0.4); spared loan (0.625) -> (0.75, 0).
    # Nash: on the first piece (0.5s)(0.6 - 0.2s) rises on [0, 1] (0.3 - 0.2s > 0): (0.5, 0.4), 0.2; on the second,
    # the derivative at 0 is 0.25 * 0.4 - 0.4 * 0.5 < 0. NBS (0.5, 0.4): ovens to A, brand shared, A bears the loan.
    # Egalitarian: 0.5s = 0.6 - 0.2s at s = 6/7: u = (3/7, 3/7). Utilitarian: 0.9 at (0.5, 0.4).
    # Fixed pie: goods (0.5, 0.2) and (0.25, 0.4) split in one proportion: joint 0 + max(0.75, 0.6) = 0.75;
    # integrativeness 0.9 - 0.75 = 0.15.
    a = run("shared_raw.json")
    assert [r.weights for r in a.model.resources] == [approx((0.5, 0.2)), approx((0.25, 0.4)), approx((0.25, 0.4))]
    assert frontier(a) == [[(0.0, 0.6), (0.5, 0.4), (0.75, 0.0)]]
    assert a.nash is not None
    assert a.nash.utilities == approx((0.5, 0.4)) and a.nash.value == approx(0.2)
    assert a.nash.shares == {"ovens": (1.0, 0.0), "brand": (1.0, 1.0), "bank_loan": (1.0, 0.0)}
    assert a.egalitarian.utilities == approx((3 / 7, 3 / 7)) and a.zopa_margin == approx(3 / 7)
    assert a.utilitarian.value == approx(0.9)
    assert a.integrativeness == approx(0.15) and a.fixed_pie_joint_max == approx(0.75)


def test_two_indivisible_assets_with_batnas_and_no_zopa() -> None:
    # ovens (0.6, 0.5), van (0.4, 0.5), both indivisible. Outcomes: both to A (1, 0); ovens A, van B (0.6, 0.5);
    # ovens B, van A (0.4, 0.5), dominated by (0.6, 0.5); both to B (0, 1). Frontier: three isolated points.
    # BATNAs (0.7, 0.6): u_A > 0.7 only at (1, 0), where B has 0 < 0.6: no ZOPA, though each BATNA is below that
    # party's best (1): the best smaller gain is at (0.6, 0.5): min(-0.1, -0.1) = -0.1. No NBS.
    # Utilitarian 1.1 at (0.6, 0.5); the fixed pie's 1: integrativeness 0.1.
    a = run("indivisible_impasse.json")
    assert frontier(a) == [[(0.0, 1.0)], [(0.6, 0.5)], [(1.0, 0.0)]]
    assert a.nash is None and not a.zopa and a.zopa_margin == approx(-0.1)
    assert a.utilitarian.value == approx(1.1) and a.integrativeness == approx(0.1)
    assert any("difficulty 'intermediate' but there is no ZOPA" in w for w in a.warnings)


def test_two_indivisible_assets_without_batnas() -> None:
    # Products at the three points: 0, 0.6 * 0.5 = 0.3, 0: NBS (0.6, 0.5), ovens to A, van to B.
    doc = load("indivisible_impasse.json")
    for p in doc["participants"]:
        del p["batna_config"]
    a = run(doc)
    assert a.nash is not None
    assert a.nash.utilities == approx((0.6, 0.5)) and a.nash.value == approx(0.3)
    assert a.nash.shares == {"ovens": (1.0, 0.0), "van": (0.0, 1.0)}
    assert a.warnings == []


def test_a_fixed_pie_is_not_integrative() -> None:
    # cash (0.5, 0.5) divisible, van (0.5, 0.5) indivisible: every outcome has u_A + u_B = 1; the frontier is the
    # line from (0, 1) to (1, 0) and the fixed pie's joint utility is 1: integrativeness 0. NBS (0.5, 0.5), 0.25.
    a = run("distributive.json")
    assert frontier(a) == [[(0.0, 1.0), (1.0, 0.0)]]
    assert a.integrativeness == approx(0.0)
    assert a.nash is not None and a.nash.value == approx(0.25)
    assert any("not integrative" in w for w in a.warnings)


def test_external_value_usd_and_quantity_never_move_a_figure() -> None:
    doc = load("logroll_two.json")
    before = analysis_json(run(doc), "x")
    changed = copy.deepcopy(doc)
    for r in changed["resources"]:
        r["external_value_usd"] = 987654321.0
        r["quantity"] = 7
    assert changed != doc
    assert analysis_json(run(changed), "x") == before
    for r in changed["resources"]:
        del r["external_value_usd"]
    assert analysis_json(run(changed), "x") == before


def test_no_resources_means_no_analysis() -> None:
    assert analyze(load("no_resources.json")) is None


KINDS = [("divisible", 1), ("divisible", -1), ("indivisible", 1), ("indivisible", -1)]
KINDS += [("both_benefit", 1), ("both_benefit", -1), ("joint_obligation", -1), ("joint_obligation", 1)]


def random_model(rng: random.Random) -> Model:
    n = rng.randint(2, 5)
    raw = [[rng.choice([0.0, rng.random()]) + 1e-3 * (i + 1) for i in range(n)] for _ in (0, 1)]
    weights = [[w / sum(row) for w in row] for row in raw]
    resources = tuple(Resource(f"r{i}", *rng.choice(KINDS), (weights[0][i], weights[1][i])) for i in range(n))
    batna = (round(rng.random() * 0.5, 2), round(rng.random() * 0.5, 2))
    return Model("random", "novice", ("A", "B"), batna, (True, True), resources)


def random_shares(model: Model, rng: random.Random) -> dict[str, tuple[float, float]]:
    """A random feasible allocation: any split of what may be split, the rest whole to one party (or to neither
    where that is allowed)."""
    out = {}
    for r in model.resources:
        if r.kind == "both_benefit":
            out[r.id] = (1.0, 1.0) if r.sign < 0 else (rng.random(), rng.random())
        elif r.kind == "indivisible":
            out[r.id] = rng.choice([(1.0, 0.0), (0.0, 1.0), *([(0.0, 0.0)] if r.sign > 0 else [])])
        else:
            f = rng.random()
            out[r.id] = (f, 1 - f if r.must_assign else rng.random() * (1 - f))
    return out


def best_second_given_first(model: Model, t: float) -> float | None:
    """max u_B subject to u_A >= t, as a mixed-integer program over the fractions themselves (no relief form)."""
    n = len(model.resources)
    c = np.zeros(2 * n)  # variables: f_rA (0..n-1), f_rB (n..2n-1)
    lo, hi, integral = np.zeros(2 * n), np.ones(2 * n), np.zeros(2 * n)
    rows, lbs, ubs = [], [], []
    u_a = np.zeros(2 * n)
    for i, r in enumerate(model.resources):
        u_a[i] = r.sign * r.weights[0]
        c[n + i] = -r.sign * r.weights[1]
        if r.kind == "indivisible":
            integral[[i, n + i]] = 1
        if r.kind == "both_benefit" and r.sign < 0:
            lo[[i, n + i]] = 1
        elif r.kind != "both_benefit":
            row = np.zeros(2 * n)
            row[[i, n + i]] = 1
            rows.append(row)
            lbs.append(1.0 if r.must_assign else 0.0)
            ubs.append(1.0)
    rows.append(u_a)
    lbs.append(t)
    ubs.append(np.inf)
    from scipy.optimize import Bounds

    constraints = LinearConstraint(np.array(rows), lbs, ubs)
    options = {"mip_rel_gap": 1e-12}  # HiGHS stops within 1e-4 of the optimum by default
    res = milp(c, constraints=constraints, integrality=integral, bounds=Bounds(lo, hi), options=options)
    return -res.fun if res.success else None


def frontier_value(a: Analysis, t: float) -> float | None:
    """The same from the computed frontier: on each piece, the highest point with u_A >= t."""
    best = None
    for piece in a.geometry.pieces:
        (x0, y0), (x1, y1) = piece.start, piece.end
        if x1 < t - 1e-12:
            continue
        y = y0 if t <= x0 or x1 == x0 else y0 + (y1 - y0) * (t - x0) / (x1 - x0)
        best = y if best is None else max(best, y)
    return best


@pytest.mark.parametrize("seed", range(40))
def test_frontier_matches_an_independent_integer_program(seed: int) -> None:
    rng = random.Random(seed)
    model = random_model(rng)
    a = analyze_model(model)
    _check_solutions_are_reached(a)
    xs = [p[0] for line in a.frontier for p in line]
    ts = sorted({*xs, *np.linspace(min(xs) - 0.1, max(xs) + 0.1, 13)})
    for t in ts:
        expected, got = best_second_given_first(model, t), frontier_value(a, t)
        assert (expected is None) == (got is None), (t, expected, got)
        if expected is not None:
            assert got == approx(expected, abs=1e-7), (t, a.frontier)
    assert_no_piece_point_is_dominated(model, a)
    # distances of random feasible allocations, against the nearest of 10001 points sampled along each piece
    samples = np.concatenate([np.linspace(p.start, p.end, 10001) for p in a.geometry.pieces])
    for _ in range(3):
        shares = random_shares(model, rng)
        assert all(feasibility_problem(r, shares[r.id]) is None for r in model.resources)
        u = utilities(model, shares)
        nearest = float(np.min(np.hypot(samples[:, 0] - u[0], samples[:, 1] - u[1])))
        assert distance(a.geometry.pieces, u) == approx(nearest, abs=2e-4), (u, a.frontier)


def test_nash_solution_is_the_best_product_over_a_fine_sample() -> None:
    # brute force over the fractions of a 3-resource model: nothing beats the NBS's product
    model = Model(
        "m",
        "novice",
        ("A", "B"),
        (0.1, 0.05),
        (True, True),
        (
            Resource("x", "divisible", 1, (0.6, 0.1)),
            Resource("y", "divisible", 1, (0.1, 0.5)),
            Resource("z", "indivisible", 1, (0.3, 0.4)),
        ),
    )
    a = analyze_model(model)
    assert a.nash is not None
    grid = np.linspace(0, 1, 41)
    best = 0.0
    for fx in grid:
        for fy in grid:
            for hz in (0.0, 1.0):
                u = utilities(model, {"x": (fx, 1 - fx), "y": (fy, 1 - fy), "z": (hz, 1 - hz)})
                if u[0] > 0.1 and u[1] > 0.05:
                    best = max(best, (u[0] - 0.1) * (u[1] - 0.05))
    assert best <= a.nash.value + 1e-12
    assert best == approx(a.nash.value, rel=2e-2)


def test_cli_analyze_text_json_and_plot(tmp_path: Path) -> None:
    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "harness.scenario.commands", "analyze", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )

    text = cli(str(SCENARIOS / "three_mixed.json"))
    assert text.returncode == 0, text.stderr
    assert "integrativeness: 0.300" in text.stdout and "Nash product:    0.0625" in text.stdout
    assert "(-0.300, 0.700) - (0.200, 0.500) - (0.500, 0.200) | (0.500, -0.100) - (0.700, -0.300)" in text.stdout
    png = tmp_path / "set.png"
    js = cli(str(SCENARIOS / "three_mixed.json"), "--format", "json", "--plot", str(png))
    assert js.returncode == 0, js.stderr
    data = json.loads(js.stdout)
    assert data["nash"]["allocation"] == {
        "ovens": "Alice",
        "hospital_contract": "Bob",
        "supplier_debt": {"Alice": 0.5, "Bob": 0.5},
    }
    assert data["zopa"] == {"exists": True, "margin": 0.25, "comfortable": True, "comfortable_threshold": 0.1}
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert cli(str(SCENARIOS / "no_resources.json")).returncode == 0
    assert cli(str(SCENARIOS / "bad_cross_rules.json")).returncode == 1
    assert cli(str(tmp_path / "missing.json")).returncode == 2
    assert cli(str(SCENARIOS / "logroll_two.json"), "--plot", str(tmp_path / "no" / "dir.png")).returncode == 2


# --- The frontier sweep, one branch at a time -------------------------------------------------------------------
# Translates of one chain D; F_j(t) = y_j + D(t - x_j) is flat left of x_j and ends at x_j + (the chain's width).


def pieces_of(pieces: list[Piece]) -> list[tuple[tuple[float, float], tuple[float, float], int]]:
    return [(p.start, p.end, p.curve) for p in pieces]


def test_a_translate_that_covers_two_translates_pops_both_and_stops_at_the_third() -> None:
    # D: (0, 1) -> (1, 0), so F_j(t) = y_j + 1 for t <= x_j, then y_j + 1 - (t - x_j) up to t = x_j + 1.
    # T0 at (0, 0): 1 - t on [0, 1]. T1 at (0.25, -0.5): flat 0.5 (below T0 there: 1 - 0.25 = 0.75), then
    # 0.75 - t, always 0.25 below T0: it takes over only where T0 ends, t = 1 (value -0.25).
    # T2 at (0.5, -0.8): flat 0.2 (under T0's 0.5 at 0.5), then 0.7 - t, below T1 (0.75 - t) until T1 ends at 1.25.
    # So before T3 the envelope is T0 on (-inf, 1], T1 on [1, 1.25], T2 on [1.25, 1.5].
    # T3 at (1.1, -0.9): flat 0.1 up to 1.1. It meets T2 (0.7 - t) at t = 0.6 <= 1.25: T2 is covered, popped;
    # it meets T1 (0.75 - t) at 0.65 <= 1: popped too; it meets T0 (1 - t) at 0.9 > -inf: T3 holds [0.9, ...].
    # The frontier: T0 from (0, 1) to (0.9, 0.1), then T3's decreasing part (1.1, 0.1) -> (2.1, -0.9) (its flat
    # stretch [0.9, 1.1] is no piece). Popping one translate only would leave T1 on [1, -inf), empty, and T3 from
    # its own start; ending T0 at its own end would keep the dominated stretch (0.9, 0.1) - (1, 0).
    points = [(0.0, 0.0), (0.25, -0.5), (0.5, -0.8), (1.1, -0.9)]
    got = pieces_of(frontier_pieces(points, [(0.0, 1.0), (1.0, 0.0)]))
    assert got == [(approx((0.0, 1.0)), approx((0.9, 0.1)), 0), (approx((1.1, 0.1)), approx((2.1, -0.9)), 3)]


def staircase() -> Model:
    """One divisible good and three indivisible ones; weights sum to 1 for each party."""
    resources = (
        Resource("workshop", "divisible", 1, (0.2, 0.35)),
        Resource("van", "indivisible", 1, (0.05, 0.1)),
        Resource("kiln", "indivisible", 1, (0.1, 0.25)),
        Resource("shop", "indivisible", 1, (0.65, 0.3)),
    )
    return Model("staircase", "novice", ("A", "B"), (0.0, 0.0), (False, False), resources)


def assert_no_piece_point_is_dominated(model: Model, a: Analysis) -> None:
    """Every point of every piece but its first is undominated: no allocation gives A at least as much and B more
    (the integer program above, over the fractions themselves). A piece's first point may lie under the end of the
    piece before it (where the envelope drops), so it is left out."""
    for piece in a.geometry.pieces:
        for s in (0.25, 0.5, 0.75, 1.0):
            x, y = piece.at(s)
            best = best_second_given_first(model, x)
            assert best is not None and best == approx(y, abs=1e-7), (piece, s, best)


def test_a_staircase_of_indivisible_outcomes_where_one_translate_covers_two() -> None:
    # Chain of the workshop (0.2, 0.35): (0, 0.35) -> (0.2, 0); F_j(t) = y_j + 0.35 - 1.75 (t - x_j) on its slope.
    # Indivisible outcomes (A holds): {} (0, 0.65), {van} (0.05, 0.55), {kiln} (0.1, 0.4), {van, kiln} (0.15, 0.3)
    # (dominated by {shop} (0.65, 0.35)), {shop} (0.65, 0.35), {van, shop} (0.7, 0.25), {kiln, shop} (0.75, 0.1),
    # all (0.8, 0): translates T0..T6 at those seven points.
    # On their slopes F_j = c_j + 0.35 - 1.75 t with c_j = y_j + 1.75 x_j: 0.65, 0.6375, 0.575, 1.4875, 1.475,
    # 1.4125, 1.4. T1's flat top 0.9 is under T0 at 0.05 (0.9125) and c1 < c0: T1 takes over where T0 ends, 0.2.
    # T2's top 0.75 is under T1 at 0.1 (0.8125), c2 < c1: T2 takes over where T1 ends, 0.25.
    # T3's top 0.7 (to 0.65) meets T2 (0.925 - 1.75t) at 9/70 <= 0.25 and T1 (0.9875 - 1.75t) at 23/140 <= 0.2:
    # both popped; it meets T0 (1 - 1.75t) at 6/35: T3 holds [6/35, ...].
    # T4's top 0.6 is under T3 at 0.7 (0.6125), c4 < c3: takes over where T3 ends, 0.85 (value 1.825 - 1.4875 =
    # 0.3375); likewise T5 at T4's end 0.9 (1.7625 - 1.575 = 0.1875) and T6 at T5's end 0.95 (1.75 - 1.6625 =
    # 0.0875).
    model = staircase()
    a = analyze_model(model)
    assert frontier(a) == [
        [(0.0, 1.0), (round(6 / 35, 9), 0.7)],
        [(0.65, 0.7), (0.85, 0.35)],
        [(0.85, 0.3375), (0.9, 0.25)],
        [(0.9, 0.1875), (0.95, 0.1)],
        [(0.95, 0.0875), (1.0, 0.0)],
    ]
    assert [p.curve for p in a.geometry.pieces] == [0, 3, 4, 5, 6]
    assert_no_piece_point_is_dominated(model, a)
    _check_solutions_are_reached(a)


def test_distance_to_a_piece_clamps_to_its_ends() -> None:
    # The piece (1, 2) -> (5, 5): direction (4, 3), length 5. For a point p, s = (p - start) . (4, 3) / 25.
    piece = Piece((1.0, 2.0), (5.0, 5.0), 0)
    # p = (2, 5): s = (4 + 9) / 25 = 0.52, inside: |cross((1, 3), (4, 3))| / 5 = |3 - 12| / 5 = 1.8
    assert point_to_piece((2.0, 5.0), piece) == approx(1.8)
    # p = (9, 3): s = (32 + 3) / 25 = 1.4, past the end: to (5, 5), sqrt(16 + 4) (the line is only 4 away)
    assert point_to_piece((9.0, 3.0), piece) == approx(np.sqrt(20))
    # p = (13, 6): s = (48 + 12) / 25 = 2.4: to (5, 5), sqrt(64 + 1)
    assert point_to_piece((13.0, 6.0), piece) == approx(np.sqrt(65))
    # p = (-2, 3): s = (-12 + 3) / 25 < 0: to (1, 2), sqrt(9 + 1)
    assert point_to_piece((-2.0, 3.0), piece) == approx(np.sqrt(10))
    # a lone point: the distance to it
    assert point_to_piece((4.0, -2.0), Piece((1.0, 2.0), (1.0, 2.0), 0)) == approx(5.0)
    # the frontier's distance is the nearest piece's. Second piece (10, 1) -> (12, 0): from (9, 3), s = ((-1, 2) .
    # (2, -1)) / 5 < 0, so sqrt(1 + 4) to its start, nearer than sqrt(20) to the first piece
    second = Piece((10.0, 1.0), (12.0, 0.0), 1)
    assert distance([piece, second], (9.0, 3.0)) == approx(np.sqrt(5))
    assert distance([piece, second], (2.0, 5.0)) == approx(1.8)


def test_distance_from_inside_a_notch_of_the_frontier() -> None:
    # The staircase's frontier has a notch between (6/35, 0.7) (end of the first piece) and (0.65, 0.7). The point
    # (0.27, 0.44) (van and kiln to A, 0.6 of the workshop to A, the shop to B: A 0.05 + 0.1 + 0.6 * 0.2, B 0.3 +
    # 0.4 * 0.35): along the first piece (0, 1) -> (6/35, 0.7), s = ((0.27, -0.56) . (6/35, -0.3)) / (36/1225 + 0.09)
    # = (3/14) / (1170/9800) ~ 1.79: past its end, so the nearest point is the end (6/35, 0.7):
    # sqrt((0.27 - 6/35)^2 + 0.26^2) = sqrt((69/700)^2 + (13/50)^2). The next piece (0.65, 0.7) -> (0.85, 0.35) is
    # |cross((-0.38, -0.26), (0.2, -0.35))| / sqrt(0.1625) = 0.185 / 0.4031 ~ 0.459 away, farther.
    model = staircase()
    a = analyze_model(model)
    shares = {"workshop": (0.6, 0.4), "van": (1.0, 0.0), "kiln": (1.0, 0.0), "shop": (0.0, 1.0)}
    u = utilities(model, shares)
    assert u == approx((0.27, 0.44))
    assert distance(a.geometry.pieces, u) == approx(np.hypot(69 / 700, 13 / 50))


RANGE = "fractions must lie in [0, 1]"
WHOLE = "an indivisible resource goes whole to one party or to neither (fractions 0 or 1)"
BOTH = "a both_benefit liability is borne by both parties in full"


@pytest.mark.parametrize(
    ("kind", "sign", "f", "why"),
    [
        # fractions outside [0, 1] (beyond the 1e-9 rounding allowance), whatever else they break
        ("divisible", 1, (1.5, 0.0), RANGE),
        ("divisible", 1, (0.0, 1.0 + 2e-9), RANGE),
        ("divisible", 1, (-2e-9, 0.5), RANGE),
        ("both_benefit", 1, (1.5, 1.0), RANGE),
        ("both_benefit", 1, (1.0, 1.9), RANGE),
        ("both_benefit", -1, (1.0, 1.25), RANGE),
        ("indivisible", 1, (0.0, 2.0), RANGE),
        ("joint_obligation", -1, (-0.5, 1.5), RANGE),
        # within rounding of the range
        ("divisible", 1, (1.0 + 5e-10, 0.0), None),
        ("divisible", 1, (-5e-10, 0.25), None),
        # indivisible: 0 or 1 (within 1e-9) only
        ("indivisible", 1, (0.5, 0.0), WHOLE),
        ("indivisible", 1, (0.0, 2e-9), WHOLE),
        ("indivisible", 1, (1.0 - 2e-9, 0.0), WHOLE),
        ("indivisible", 1, (5e-10, 1.0 - 5e-10), None),
        ("indivisible", 1, (0.0, 0.0), None),
        ("indivisible", -1, (0.0, 1.0), None),
        ("indivisible", -1, (0.0, 0.0), "a liability is borne in full: the fractions must add up to 1, not 0"),
        # both_benefit: an asset's fractions are each party's own; a liability is borne by both in full
        ("both_benefit", 1, (0.75, 0.5), None),
        ("both_benefit", 1, (0.0, 0.0), None),
        ("both_benefit", -1, (1.0, 1.0 - 5e-10), None),
        ("both_benefit", -1, (1.0, 0.5), BOTH),
        ("both_benefit", -1, (1.0 - 2e-9, 1.0), BOTH),
        # a divisible asset: at most the whole (within 1e-6)
        ("divisible", 1, (0.7, 0.6), "the fractions add up to 1.3, more than the whole resource"),
        ("divisible", 1, (0.5, 0.5 + 2e-6), "the fractions add up to 1, more than the whole resource"),
        ("divisible", 1, (0.5, 0.5 + 5e-7), None),
        ("divisible", 1, (0.2, 0.3), None),
        (
            "joint_obligation",
            1,
            (0.2, 0.3),
            "a joint obligation is assigned in full: the fractions must add up to 1, not 0.5",
        ),
        ("joint_obligation", 1, (0.25, 0.75), None),
        ("joint_obligation", -1, (0.3, 0.3), "a liability is borne in full: the fractions must add up to 1, not 0.6"),
        ("divisible", -1, (0.4, 0.45), "a liability is borne in full: the fractions must add up to 1, not 0.85"),
        (
            "divisible",
            -1,
            (0.5, 0.5 - 2e-6),
            "a liability is borne in full: the fractions must add up to 1, not 0.999998",
        ),
        ("divisible", -1, (0.5, 0.5 - 5e-7), None),
        ("divisible", -1, (0.5, 0.5 + 5e-7), None),
    ],
)
def test_feasibility_of_fractions(kind: str, sign: int, f: tuple[float, float], why: str | None) -> None:
    assert feasibility_problem(Resource("r", kind, sign, (0.3, 0.7)), f) == why


@pytest.mark.parametrize(
    ("kind", "sign", "f", "why"),
    [
        # exactly at the allowances: 1e-9 for each fraction, 1e-6 for their sum
        ("divisible", 1, (-1e-9, 0.5), None),
        ("both_benefit", 1, (0.25, 1 + 1e-9), None),
        ("indivisible", 1, (1e-9, 0.0), None),
        ("indivisible", 1, (0.0, -1e-9), None),
        ("both_benefit", -1, (1 - 1e-9, 1.0), None),
    ],
)
def test_feasibility_at_the_allowances(kind: str, sign: int, f: tuple[float, float], why: str | None) -> None:
    assert feasibility_problem(Resource("r", kind, sign, (0.3, 0.7)), f) == why


def test_a_sum_exactly_at_the_allowance_is_the_whole_resource() -> None:
    f = (0.5, (1 + 1e-6) - 0.5)
    assert f[0] + f[1] == 1 + 1e-6  # exact in binary floating point: both halves are multiples of 2**-53
    assert feasibility_problem(Resource("r", "divisible", 1, (0.3, 0.7)), f) is None


@pytest.mark.parametrize(
    ("kind", "sign", "rival", "must_assign"),
    [
        ("divisible", 1, True, False),
        ("divisible", -1, True, True),
        ("indivisible", 1, True, False),
        ("indivisible", -1, True, True),
        ("joint_obligation", 1, True, True),
        ("joint_obligation", -1, True, True),
        ("both_benefit", 1, False, False),
        ("both_benefit", -1, False, False),
    ],
)
def test_which_resources_are_rival_and_assigned_in_full(kind: str, sign: int, rival: bool, must_assign: bool) -> None:
    r = Resource("r", kind, sign, (0.3, 0.7))
    assert (r.rival, r.must_assign) == (rival, must_assign)


def test_the_resources_to_allocate_in_full_read_from_a_document() -> None:
    """Issue 46: which resources must be allocated in full (``Resource.must_assign``, a property mutmut leaves alone).

    The schema: a liability "is always borne in full" (whoever bears it, the two shares add up to 1) and a
    joint_obligation is "a cost/burden to assign", split like a divisible resource whose fractions add up to exactly
    1; an asset may be left over (divisible: shares adding up to at most 1; indivisible: to neither party); a
    both_benefit resource is not split at all (each party's fraction is its own). So, of the eight kinds below, the
    divisible and indivisible liabilities and both joint obligations are allocated in full, nothing else."""

    def res(rid: str, divisibility: str, polarity: str = "asset", mode: str | None = None) -> dict[str, Any]:
        out = {
            "id": rid,
            "divisibility": divisibility,
            "polarity": polarity,
            "valuations": {"Ann": 0.125, "Ben": 0.125},
        }
        return out | ({"shared_mode": mode} if mode else {})

    doc = {
        "id": "full",
        "difficulty": "novice",
        "participants": [participant("Ann"), participant("Ben")],
        "resources": [
            res("van", "divisible"),
            res("debt", "divisible", "liability"),
            res("shop", "indivisible"),
            res("lease", "indivisible", "liability"),
            res("audit", "shared", "asset", "joint_obligation"),
            res("loan", "shared", "liability", "joint_obligation"),
            res("brand", "shared", "asset", "both_benefit"),
            res("noise", "shared", "liability", "both_benefit"),
        ],
    }
    model = build_model(doc)
    assert [r.id for r in model.resources if r.must_assign] == ["debt", "lease", "audit", "loan"]
    by_id = {r.id: r for r in model.resources}
    # left to nobody, (0, 0): fine for an asset, not for what must be allocated in full (0 is not 1)
    liability, joint = "a liability is borne in full", "a joint obligation is assigned in full"
    nobody = {rid: feasibility_problem(r, (0.0, 0.0)) for rid, r in by_id.items()}
    assert nobody == {
        "van": None,
        "debt": f"{liability}: the fractions must add up to 1, not 0",
        "shop": None,
        "lease": f"{liability}: the fractions must add up to 1, not 0",
        "audit": f"{joint}: the fractions must add up to 1, not 0",
        "loan": f"{liability}: the fractions must add up to 1, not 0",
        "brand": None,
        "noise": "a both_benefit liability is borne by both parties in full",
    }
    # a half and a quarter, 0.75 of the whole: fine for a divisible asset only (the indivisible ones need 0 or 1)
    part = {rid: feasibility_problem(r, (0.5, 0.25)) for rid, r in by_id.items() if r.kind != "indivisible"}
    assert part == {
        "van": None,
        "debt": f"{liability}: the fractions must add up to 1, not 0.75",
        "audit": f"{joint}: the fractions must add up to 1, not 0.75",
        "loan": f"{liability}: the fractions must add up to 1, not 0.75",
        "brand": None,
        "noise": "a both_benefit liability is borne by both parties in full",
    }
    # whole to one party, or split 0.25 / 0.75: feasible for every rival resource
    assert all(feasibility_problem(by_id[rid], (0.0, 1.0)) is None for rid in ("van", "debt", "shop", "lease"))
    assert all(feasibility_problem(by_id[rid], (0.25, 0.75)) is None for rid in ("van", "debt", "audit", "loan"))
    # both in full: a both_benefit resource kept shared, whatever its polarity; more than the whole of a rival one
    assert (
        feasibility_problem(by_id["noise"], (1.0, 1.0)) is None
        and feasibility_problem(by_id["brand"], (1.0, 1.0)) is None
    )
    over = "the fractions add up to 2, more than the whole resource"
    assert feasibility_problem(by_id["van"], (1.0, 1.0)) == over
    assert feasibility_problem(by_id["loan"], (1.0, 1.0)) == f"{liability}: the fractions must add up to 1, not 2"


def participant(name: str, batna: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name}
    if batna is not None:
        out["batna_config"] = {"utility": batna, "description": "elsewhere"}
    return out


def test_build_model_reads_names_kinds_polarities_weights_and_batnas() -> None:
    doc = {
        "id": "wind_up",
        "difficulty": "expert",
        "participants": [participant("Ann", 0.15), participant("Ben")],
        "resources": [
            {"id": "van", "divisibility": "divisible", "valuations": {"Ann": 0.5, "Ben": 0.25}},
            {"id": "lease", "divisibility": "indivisible", "polarity": "liability",
             "valuations": {"Ben": 0.375, "Ann": 0.125}},
            {"id": "loan", "divisibility": "shared", "shared_mode": "joint_obligation", "polarity": "liability",
             "valuations": {"Ann": 0.0625, "Ben": 0.1875}},
            {"id": "brand", "divisibility": "shared", "shared_mode": "both_benefit", "polarity": "asset",
             "valuation_basis": "normalized_share", "valuations": {"Ann": 0.25, "Ben": 0.125}},
            # not valid against the schema (no shared_mode; no valuation for Ben, then none for Ann): read as
            # both_benefit, and a missing valuation as 0
            {"id": "name", "divisibility": "shared", "valuations": {"Ann": 0.0625}},
            {"id": "sign", "divisibility": "divisible", "valuations": {"Ben": 0.3125}},
        ],
    }  # fmt: skip
    m = build_model(doc)
    assert (m.scenario_id, m.difficulty, m.parties) == ("wind_up", "expert", ("Ann", "Ben"))
    assert m.batna == (0.15, 0.0) and m.batna_given == (True, False)
    assert m.resources == (
        Resource("van", "divisible", 1, (0.5, 0.25)),
        Resource("lease", "indivisible", -1, (0.125, 0.375)),
        Resource("loan", "joint_obligation", -1, (0.0625, 0.1875)),
        Resource("brand", "both_benefit", 1, (0.25, 0.125)),
        Resource("name", "both_benefit", 1, (0.0625, 0.0)),
        Resource("sign", "divisible", 1, (0.0, 0.3125)),
    )
    assert m.resource("loan") is m.resources[2] and m.resource("van") is m.resources[0]
    # BATNAs the other way round; no resources at all
    doc = {"id": "talk", "difficulty": "novice", "participants": [participant("Ann"), participant("Ben", 0.3)]}
    m = build_model(doc)
    assert m.batna == (0.0, 0.3) and m.batna_given == (False, True) and m.resources == ()


def test_raw_valuations_are_renormalised_per_party_over_all_resources() -> None:
    # One raw resource makes all raw. Ann: 0.6, 0.2 (sum 0.8) -> 0.75, 0.25; Ben: 0.3, 0.9 (sum 1.2) -> 0.25, 0.75.
    resources = [
        {"id": "a", "divisibility": "divisible", "valuations": {"Ann": 0.6, "Ben": 0.3}},
        {"id": "b", "divisibility": "divisible", "valuations": {"Ann": 0.2, "Ben": 0.9}, "valuation_basis": "raw"},
    ]
    doc = {"id": "x", "difficulty": "novice", "participants": [participant("Ann"), participant("Ben")]}
    assert normalised_weights({**doc, "resources": resources}) == [approx((0.75, 0.25)), approx((0.25, 0.75))]
    # a party that values nothing keeps weights 0; Ann's sum 0.5 (below 1) still divides: 0.1 / 0.5, 0.4 / 0.5
    resources = [
        {"id": "a", "divisibility": "divisible", "valuations": {"Ann": 0.1, "Ben": 0.0}, "valuation_basis": "raw"},
        {"id": "b", "divisibility": "divisible", "valuations": {"Ann": 0.4, "Ben": 0.0}, "valuation_basis": "raw"},
    ]
    assert normalised_weights({**doc, "resources": resources}) == [approx((0.2, 0.0)), approx((0.8, 0.0))]
    # all normalized_share: used as given, even when they do not sum to 1
    resources = [{"id": "a", "divisibility": "divisible", "valuations": {"Ann": 0.1, "Ben": 0.7}}]
    assert normalised_weights({**doc, "resources": resources}) == [(0.1, 0.7)]


def test_utilities_add_signed_weighted_fractions() -> None:
    model = Model(
        "m",
        "novice",
        ("Ann", "Ben"),
        (0.0, 0.0),
        (False, False),
        (
            Resource("van", "divisible", 1, (0.5, 0.25)),
            Resource("lease", "indivisible", -1, (0.125, 0.375)),
            Resource("brand", "both_benefit", 1, (0.25, 0.125)),
        ),
    )
    # van 0.2 / 0.8, lease borne by Ben, brand Ann in full, Ben half:
    # u_A = 0.5 * 0.2 - 0 + 0.25 = 0.35; u_B = 0.25 * 0.8 - 0.375 + 0.125 * 0.5 = -0.1125
    shares = {"van": (0.2, 0.8), "lease": (0.0, 1.0), "brand": (1.0, 0.5)}
    assert utilities(model, shares) == approx((0.35, -0.1125))


# --- Pareto geometry, function by function (hand-worked figures; scales other than 0..1 on purpose) --------------


def test_a_point_along_a_piece() -> None:
    piece = Piece((1.0, 2.0), (5.0, -4.0), 0)
    # start + s (end - start) = (1 + 4s, 2 - 6s)
    assert piece.at(0.25) == approx((2.0, 0.5)) and piece.at(0.0) == (1.0, 2.0) and piece.at(1.0) == (5.0, -4.0)


def test_the_divisible_chain() -> None:
    # items (a, b): 0 (0.3, 0) only the first values it: held by the first from the start (x starts at 0.3);
    # 3 (0, 0.25) only the second: stays with the second; 4 (0, 0) nobody: stays with the second too;
    # 1 (0.2, 0.5) a/b = 0.4 and 2 (0.4, 0.1) a/b = 4 move, 2 first (a product a * b would order them 1, 2).
    # y starts at 0.5 + 0.1 + 0.25 + 0 = 0.85; then (0.3 + 0.4, 0.85 - 0.1), (0.7 + 0.2, 0.75 - 0.5).
    vertices, moving, start_first = chain([(0.3, 0.0), (0.2, 0.5), (0.4, 0.1), (0.0, 0.25), (0.0, 0.0)])
    assert vertices == [approx((0.3, 0.85)), approx((0.7, 0.75)), approx((0.9, 0.25))]
    assert moving == [2, 1] and start_first == [0]
    assert chain([]) == ([(0, 0)], [], [])


def test_undominated_points_keep_one_of_each_duplicate() -> None:
    points = [
        ((0.2, 0.5), "a"),
        ((0.2, 0.5), "b"),  # a's duplicate: dropped (the first kept)
        ((0.2, 0.4), "c"),  # same x as a, lower: dominated
        ((0.1, 0.5), "d"),  # same y as a, left of it: dominated
        ((0.5, 0.1), "e"),
        ((0.3, 0.3), "f"),
        ((0.25, 0.2), "g"),  # under f
        ((0.4, 0.1 + 5e-13), "h"),  # left of e and higher by less than the 1e-12 allowance: dropped
    ]
    assert undominated(points) == [((0.2, 0.5), "a"), ((0.3, 0.3), "f"), ((0.5, 0.1), "e")]
    # higher by exactly the allowance (1e-12) is still within rounding: dominated
    assert undominated([((0.2, 0.5 + 1e-12), "x"), ((0.3, 0.5), "y")]) == [((0.3, 0.5), "y")]
    assert undominated([]) == []


def brute_force_front(items: list[tuple[float, float]]) -> list[tuple[tuple[float, float], tuple[int, ...]]]:
    """Every holder combination (0: the item to the first party, 1: to the second), the undominated kept by x."""
    outcomes = []
    for holders in itertools.product((0, 1), repeat=len(items)):
        x = sum(a for (a, _), h in zip(items, holders, strict=True) if h == 0)
        y = sum(b for (_, b), h in zip(items, holders, strict=True) if h == 1)
        outcomes.append(((x, y), holders))
    kept = [(p, h) for p, h in outcomes if not any(q[0] >= p[0] and q[1] >= p[1] and q != p for q, _ in outcomes)]
    return sorted(kept)


def test_the_indivisible_front() -> None:
    # (0.125, 0.25), (0.25, 0.125), (0.5, 0.375), all dyadic so the sums are exact. By hand, holders (x, y):
    # 111 (0, 0.75), 011 (0.125, 0.5) under 101 (0.25, 0.625), 001 (0.375, 0.375) left of 110 (0.5, 0.375),
    # 010 (0.625, 0.125) under 100 (0.75, 0.25), 000 (0.875, 0).
    items = [(0.125, 0.25), (0.25, 0.125), (0.5, 0.375)]
    expected = [
        ((0.0, 0.75), (1, 1, 1)),
        ((0.25, 0.625), (1, 0, 1)),
        ((0.5, 0.375), (1, 1, 0)),
        ((0.75, 0.25), (1, 0, 0)),
        ((0.875, 0.0), (0, 0, 0)),
    ]
    assert brute_force_front(items) == expected
    assert indivisible_front(items) == expected
    assert indivisible_front([]) == [((0.0, 0.0), ())]


def test_translates_of_the_chain() -> None:
    # chain (0, 2) -> (1, 1.5) -> (3, 0.5). Translate 0 at (0, 0): 2 up to t = 0, then the chain, ending at t = 3.
    # Translate 1 at (2, 1): flat 3 up to t = 2, 3 - 0.5 (t - 2) to t = 3, 2.5 - 0.5 (t - 3) to t = 5, minus
    # infinity after; a t within 1e-12 past the end still counts as the end (float rounding).
    tr = _Translates([(0.0, 0.0), (2.0, 1.0)], [(0.0, 2.0), (1.0, 1.5), (3.0, 0.5)])
    assert tr.end(1) == 5.0 and tr.end(0) == 3.0
    ts = np.array([-1.0, 2.0, 2.5, 4.0, 5.0, 5.0 + 5e-13, 5.0 + 1e-9])
    assert tr.value(1, ts).tolist() == approx([3.0, 3.0, 2.75, 2.0, 1.5, 1.5, -np.inf])
    assert tr.value(0, np.array([-2.0, 0.5, 2.0, 3.0 + 1e-12, 3.0 + 2e-12])).tolist() == approx(
        [2.0, 1.75, 1.0, 0.5, -np.inf]
    )
    # translate 1's point dominates translate 0's: it is at least as high from the first breakpoint on
    assert tr.crossing(0, 1) == 0.0


def test_where_translates_cross() -> None:
    # chain (0, 1) -> (1, 0); translates at (0, 0), (0.5, -0.25), (0.75, -0.6), (1.5, -0.75):
    # F0 = 1 - t on [0, 1]; F1 = 0.75 up to 0.5, then 1.25 - t to 1.5; F2 = 0.4 up to 0.75, then 1.15 - t to
    # 1.75; F3 = 0.25 up to 1.5, then 1.75 - t to 2.5.
    tr = _Translates([(0.0, 0.0), (0.5, -0.25), (0.75, -0.6), (1.5, -0.75)], [(0.0, 1.0), (1.0, 0.0)])
    assert tr.crossing(0, 1) == approx(0.25)  # 1 - t = 0.75
    assert tr.crossing(0, 3) == approx(0.75)  # 1 - t = 0.25
    assert tr.crossing(1, 3) == approx(1.0)  # 1.25 - t = 0.25, between the breakpoints 0.5 and 1.5
    assert tr.crossing(2, 3) == approx(0.9)  # 1.15 - t = 0.25, between 0.75 and 1.5
    # F2 stays 0.1 under F1 along their slopes; F1 ends at 1.5 while still higher: the envelope drops there
    assert tr.crossing(1, 2) == 1.5
    # chain (0, 1) -> (1, 0.5) -> (2, -1) (slopes -0.5, -1.5); T0 at (0, 0), T1 at (0.4, -0.3): F1 = 0.9 - 0.5t on
    # its first segment [0.4, 1.4] meets F0 = 2 - 1.5t on its second [1, 2] at t = 1.1 (between T0's breakpoint 1
    # and T1's 1.4)
    bent = _Translates([(0.0, 0.0), (0.4, -0.3)], [(0.0, 1.0), (1.0, 0.5), (2.0, -1.0)])
    assert bent.crossing(0, 1) == approx(1.1)
    # a translate never as high: its point within rounding of the other's x and lower
    near = _Translates([(0.3, 0.25), (0.30000000000000004, 0.2)], [(0.0, 0.0)])
    assert near.crossing(0, 1) == np.inf


def test_a_frontier_whose_pieces_start_and_end_inside_chain_segments() -> None:
    # chain (0, 1) -> (0.5, 0.75) -> (1, 0): slopes -0.5 then -1.5. T0 at (0, 0): 1 - 0.5t to 0.5, then
    # 0.75 - 1.5 (t - 0.5) to 1. T1 at (0.8, -0.05): flat 0.95 to 0.8, then 0.95 - 0.5 (t - 0.8) to 1.3 (0.7),
    # 0.7 - 1.5 (t - 1.3) to 1.8. T2 at (1.5, -0.4): flat 0.6 to 1.5, then (2, 0.35), (2.5, -0.4).
    # T1 meets T0 at 1 - 0.5t = 0.95, t = 0.1 (inside T0's first segment); T2 meets T1 at 0.7 - 1.5 (t - 1.3) =
    # 0.6, t = 1.3 + 1/15 = 41/30 (inside T1's second segment).
    got = pieces_of(frontier_pieces([(0.0, 0.0), (0.8, -0.05), (1.5, -0.4)], [(0.0, 1.0), (0.5, 0.75), (1.0, 0.0)]))
    assert got == [
        (approx((0.0, 1.0)), approx((0.1, 0.95)), 0),
        (approx((0.8, 0.95)), approx((1.3, 0.7)), 1),
        (approx((1.3, 0.7)), approx((41 / 30, 0.6)), 1),
        (approx((1.5, 0.6)), approx((2.0, 0.35)), 2),
        (approx((2.0, 0.35)), approx((2.5, -0.4)), 2),
    ]


def test_a_frontier_with_a_repeated_point() -> None:
    # chain (0, 0.2) -> (0.1, 0); T0 and T1 both at (0, 0.5): the later copy holds the whole chain (0, 0.7) -
    # (0.1, 0.5); T2 at (0.5, 0.1) (flat 0.3) takes over where T1 ends and descends from (0.5, 0.3) to (0.6, 0.1).
    got = pieces_of(frontier_pieces([(0.0, 0.5), (0.0, 0.5), (0.5, 0.1)], [(0.0, 0.2), (0.1, 0.0)]))
    assert got == [(approx((0.0, 0.7)), approx((0.1, 0.5)), 1), (approx((0.5, 0.3)), approx((0.6, 0.1)), 2)]


def test_a_frontier_of_lone_points_with_one_within_rounding_of_another() -> None:
    # No divisible resources (the chain is one point): the frontier is the points themselves, each a piece
    # whose start is its end. 0.1 + 0.2 is 0.30000000000000004: that outcome lies within rounding of (0.3, 0.25)
    # and lower, so it is no part of the frontier, whether last or followed by another point.
    lone = [(0.0, 0.5), (0.3, 0.25), (0.1 + 0.2, 0.2)]
    expected = [((0.0, 0.5), (0.0, 0.5), 0), ((0.3, 0.25), (0.3, 0.25), 1)]
    assert pieces_of(frontier_pieces(lone, [(0.0, 0.0)])) == expected
    got = pieces_of(frontier_pieces([*lone, (0.5, 0.1)], [(0.0, 0.0)]))
    assert got == [*expected, ((0.5, 0.1), (0.5, 0.1), 3)]
    # the same outcome from three indivisible goods: holders 110 give (0.1 + 0.2, 0.2), 001 give (0.3, 0.25)
    front = indivisible_front([(0.1, 0.15), (0.2, 0.1), (0.3, 0.2)])
    assert ((0.1 + 0.2, 0.2), (0, 0, 1)) in front and ((0.3, 0.25), (1, 1, 0)) in front
    points = [p for p, _ in front]
    assert [p.start for p in frontier_pieces(points, [(0.0, 0.0)])] == [p for p in points if p != (0.1 + 0.2, 0.2)]


def test_a_lone_point_as_high_as_the_next_within_rounding_is_left_out() -> None:
    # (0.5, 0.5) and (1, 0.5 - 5e-13): the first is no higher than the second within the 1e-12 allowance, so it is
    # (within rounding) dominated and left out, whether the pair comes last or first
    got = pieces_of(frontier_pieces([(0.0, 0.8), (0.5, 0.5), (1.0, 0.5 - 5e-13)], [(0.0, 0.0)]))
    assert got == [((0.0, 0.8), (0.0, 0.8), 0), ((1.0, 0.5 - 5e-13), (1.0, 0.5 - 5e-13), 2)]
    got = pieces_of(frontier_pieces([(0.0, 0.5), (0.5, 0.5 - 5e-13), (1.0, 0.2)], [(0.0, 0.0)]))
    assert got == [((0.5, 0.5 - 5e-13), (0.5, 0.5 - 5e-13), 1), ((1.0, 0.2), (1.0, 0.2), 2)]
    # higher by exactly the allowance: still left out
    got = pieces_of(frontier_pieces([(0.0, 0.5 + 1e-12), (1.0, 0.5)], [(0.0, 0.0)]))
    assert got == [((1.0, 0.5), (1.0, 0.5), 1)]


def test_a_chain_segment_no_longer_than_the_allowance_leaves_its_end_point() -> None:
    # chain (0, 1) -> (1e-12, 0.5): a segment exactly 1e-12 wide is no piece; the translate's end point, where
    # the envelope drops, is. T0 at (0, 0): the lone point (1e-12, 0.5); T1 at (0.5, -0.75) (flat 0.25) takes
    # over there (what is left of T1 depends on how 0.5 + 1e-12 rounds: not checked).
    chain_ = [(0.0, 1.0), (1e-12, 0.5)]
    assert pieces_of(frontier_pieces([(0.0, 0.0)], chain_)) == [((1e-12, 0.5), (1e-12, 0.5), 0)]
    got = pieces_of(frontier_pieces([(0.0, 0.0), (0.5, -0.75)], chain_))
    assert got[0] == ((1e-12, 0.5), (1e-12, 0.5), 0) and [p[2] for p in got] == [0, 1]


def test_the_nash_point_on_pieces() -> None:
    # d = (0.2, 0.1). Piece 0, (0, 1) -> (0.5, 0.8): gains (-0.2 + 0.5s, 0.9 - 0.2s): both positive for s > 0.4;
    # the product's vertex is at s = 2.45 > 1, so s = 1: (0.3, 0.7), 0.21.
    # Piece 1, (0.5, 0.8) -> (0.9, 0.2): gains (0.3 + 0.4s, 0.7 - 0.6s); d/ds = 0.4 (0.7 - 0.6s) - 0.6 (0.3 + 0.4s)
    # = 0.1 - 0.48s = 0 at s = 5/24: gains (23/60, 23/40), product 529/2400 ~ 0.2204 > 0.21, at (7/12, 0.675).
    # Piece 2, the lone point (1, 0.1): B gains nothing.
    pieces = [Piece((0.0, 1.0), (0.5, 0.8), 0), Piece((0.5, 0.8), (0.9, 0.2), 1), Piece((1.0, 0.1), (1.0, 0.1), 2)]
    best = nash(pieces, (0.2, 0.1))
    assert best is not None and best.piece == 1
    assert best.value == approx(529 / 2400) and best.point == approx((7 / 12, 0.675))
    # the first piece alone: its end
    best = nash(pieces[:1], (0.2, 0.1))
    assert best is not None and (best.value, best.point, best.piece) == (approx(0.21), approx((0.5, 0.8)), 0)
    # (0, 0.5) -> (1, 0) with d = 0: s (0.5 - 0.5s), largest at s = 0.5: (0.5, 0.25), 0.125
    best = nash([Piece((0.0, 0.5), (1.0, 0.0), 0)], (0.0, 0.0))
    assert best is not None and best.value == approx(0.125) and best.point == approx((0.5, 0.25))
    # wider than 1: (0, 4) -> (4, 0), d = (1, 0): (4s - 1)(4 - 4s), largest at s = 5/8: (2.5, 1.5), 2.25
    best = nash([Piece((0.0, 4.0), (4.0, 0.0), 0)], (1.0, 0.0))
    assert best is not None and best.value == approx(2.25) and best.point == approx((2.5, 1.5))
    # a lone point where both gain: its product
    best = nash([Piece((0.6, 0.5), (0.6, 0.5), 0)], (0.1, 0.2))
    assert best is not None and (best.value, best.point) == (approx(0.15), (0.6, 0.5))
    # nobody gains on both counts: no Nash point (a lone point, a piece wholly left of A's BATNA, one under B's)
    assert nash([Piece((0.6, 0.5), (0.6, 0.5), 0)], (0.6, 0.2)) is None
    assert nash([Piece((0.6, 0.5), (0.6, 0.5), 0)], (0.1, 0.5)) is None
    assert nash([Piece((0.0, 1.0), (0.5, 0.8), 0)], (0.5, 0.1)) is None
    assert nash([Piece((0.0, 1.0), (0.5, 0.8), 0)], (0.1, 1.0)) is None
    # a piece that only touches the corner of the BATNAs: (0, 1) -> (1, 0) with d = (0.5, 0.5)
    assert nash([Piece((0.0, 1.0), (1.0, 0.0), 0)], (0.5, 0.5)) is None
    # ties go to the first piece along the frontier: 0.2 * 0.6 = 0.6 * 0.2; so does a product larger by no more
    # than the 1e-12 allowance (0.25 against 1 * (0.25 + 1e-12))
    tie = [Piece((0.2, 0.6), (0.2, 0.6), 0), Piece((0.6, 0.2), (0.6, 0.2), 1)]
    best = nash(tie, (0.0, 0.0))
    assert best is not None and (best.point, best.piece) == ((0.2, 0.6), 0)
    tie = [Piece((0.5, 0.5), (0.5, 0.5), 0), Piece((1.0, 0.25 + 1e-12), (1.0, 0.25 + 1e-12), 1)]
    best = nash(tie, (0.0, 0.0))
    assert best is not None and (best.value, best.point, best.piece) == (0.25, (0.5, 0.5), 0)
    # a gain of exactly the allowance is no gain
    assert nash([Piece((1e-12, 0.5), (1e-12, 0.5), 0)], (0.0, 0.0)) is None
    assert nash([Piece((0.5, 1e-12), (0.5, 1e-12), 0)], (0.0, 0.0)) is None


def test_the_nash_point_needs_each_gain_above_the_rounding_allowance() -> None:
    # (0, 1) -> (0.001, 0), d chosen so that both gain only for s in (0.5, 0.5 + 1e-9): at the product's vertex
    # A gains 0.001 * 5e-10 = 5e-13, under the 1e-12 allowance (B gains 5e-10): no Nash point
    d = (0.0005, 0.5 - 1e-9)
    assert nash([Piece((0.0, 1.0), (0.001, 0.0), 0)], d) is None
    # the same the other way round: B's gain is the tiny one
    assert nash([Piece((0.0, 0.001), (1.0, 0.0), 0)], (0.5 - 1e-9, 0.0005)) is None


def test_the_egalitarian_point_on_pieces() -> None:
    # d = (0.2, 0.1), the pieces above. Piece 0: min(-0.2 + 0.5s, 0.9 - 0.2s), equal at s = 11/7 > 1: at s = 1,
    # 0.3. Piece 1: min(0.3 + 0.4s, 0.7 - 0.6s), equal at s = 0.4: 0.46 at (0.66, 0.56). Lone point: min(0.8, 0).
    pieces = [Piece((0.0, 1.0), (0.5, 0.8), 0), Piece((0.5, 0.8), (0.9, 0.2), 1), Piece((1.0, 0.1), (1.0, 0.1), 2)]
    best = egalitarian(pieces, (0.2, 0.1))
    assert (best.value, best.point, best.piece) == (approx(0.46), approx((0.66, 0.56)), 1)
    # slope -1: (0, 1) -> (1, 0), d = (0.1, 0.3): min(s - 0.1, 0.7 - s), equal at s = 0.4: 0.3 at (0.4, 0.6)
    best = egalitarian([Piece((0.0, 1.0), (1.0, 0.0), 0)], (0.1, 0.3))
    assert best.value == approx(0.3) and best.point == approx((0.4, 0.6))
    # the gains would be equal only past the piece's end (s = 2): its end, (0.25, 0.75), min(-0.25, 0.25)
    best = egalitarian([Piece((0.0, 1.0), (0.25, 0.75), 0)], (0.5, 0.5))
    assert best.value == approx(-0.25) and best.point == approx((0.25, 0.75))
    # ... or before its start: its start
    best = egalitarian([Piece((0.5, 0.5), (1.0, 0.0), 0)], (0.0, 0.3))
    assert best.value == approx(0.2) and best.point == approx((0.5, 0.5))
    # ties go to the first piece along the frontier
    tie = [Piece((0.2, 0.6), (0.2, 0.6), 0), Piece((0.6, 0.2), (0.6, 0.2), 1)]
    best = egalitarian(tie, (0.0, 0.0))
    assert (best.value, best.point, best.piece) == (approx(0.2), (0.2, 0.6), 0)
    # ... and a smaller gain larger by no more than the 1e-12 allowance
    tie = [Piece((0.5, 0.9), (0.5, 0.9), 0), Piece((0.9, 0.5 + 1e-12), (0.9, 0.5 + 1e-12), 1)]
    best = egalitarian(tie, (0.0, 0.0))
    assert (best.value, best.point, best.piece) == (0.5, (0.5, 0.9), 0)


def test_the_utilitarian_point_breaks_ties_by_the_smaller_gain() -> None:
    # Joint utilities at the ends: piece 0 1 and 1.15; piece 1 (slope -1) 1.15 at both ends; piece 2 1.1 and 1;
    # the lone point 3, 1.15. The largest is 1.15: tied are piece 0's end, all of piece 1 and point 3.
    pieces = [
        Piece((0.0, 1.0), (0.25, 0.9), 0),
        Piece((0.25, 0.9), (0.65, 0.5), 1),
        Piece((0.7, 0.4), (0.9, 0.1), 2),
        Piece((1.2, -0.05), (1.2, -0.05), 3),
    ]
    # d = (0.2, 0.3): on piece 1 the gains (0.05 + 0.4s, 0.6 - 0.4s) are equal at s = 0.6875: (0.525, 0.625),
    # smaller gain 0.325; piece 0's end gives min(0.05, 0.6), point 3 min(1, -0.35)
    best = utilitarian(pieces, (0.2, 0.3))
    assert (best.value, best.point, best.piece) == (approx(1.15), approx((0.525, 0.625)), 1)
    # d = (0.6, 0.2): on piece 1 the gains (-0.35 + 0.4s, 0.7 - 0.4s) are equal past its end: (0.65, 0.5), 0.05;
    # piece 2 would give more (0.14 at s = 0.2) but is not tied
    best = utilitarian(pieces, (0.6, 0.2))
    assert (best.value, best.point, best.piece) == (approx(1.15), approx((0.65, 0.5)), 1)
    # d = (0, 0.85): piece 0's end (0.25, 0.9), min(0.25, 0.05), ties with piece 1's start (the same point; on
    # piece 1 the gains (0.25 + 0.4s, 0.05 - 0.4s) are equal before its start): the first piece
    best = utilitarian(pieces, (0.0, 0.85))
    assert (best.point, best.piece) == (approx((0.25, 0.9)), 0)
    # d = (1.1, -0.2): the lone point (1.2, -0.05): min(0.1, 0.15) = 0.1
    best = utilitarian(pieces, (1.1, -0.2))
    assert (best.point, best.piece) == (approx((1.2, -0.05)), 3)
    # a joint utility short of the largest by exactly the 1e-9 allowance is tied: (0.5, y) with 0.5 + y exactly
    # 1.5 - 1e-9 against (1, 0.5); with d = (0, 0.3) the first has the larger smaller gain, min(0.5, 0.7 - 1e-9)
    y = (1.5 - 1e-9) - 0.5
    assert 0.5 + y == 1.5 - 1e-9
    best = utilitarian([Piece((0.5, y), (0.5, y), 0), Piece((1.0, 0.5), (1.0, 0.5), 1)], (0.0, 0.3))
    assert (best.value, best.point, best.piece) == (1.5, (0.5, y), 0)


def test_polylines_join_pieces_that_meet_and_drop_collinear_vertices() -> None:
    pieces = [
        Piece((0.0, 1.0), (0.25, 0.875), 0),
        Piece((0.25, 0.875), (0.5, 0.75), 0),  # collinear with the first: (0.25, 0.875) dropped
        Piece((0.5, 0.75), (0.75, 0.25), 1),
        Piece((0.75, 0.125), (1.0, 0.0), 2),  # starts under the last end (a drop): a new line
        Piece((1.25, -0.5), (1.25, -0.5), 3),  # a lone point
    ]
    assert polylines(pieces) == [[(0.0, 1.0), (0.5, 0.75), (0.75, 0.25)], [(0.75, 0.125), (1.0, 0.0)], [(1.25, -0.5)]]
    # ends within 1e-9 of each other meet (then the vertex is collinear too)
    assert polylines([Piece((-0.5, 0.5), (0.0, 0.0), 0), Piece((1e-9, -1e-9), (0.5, -0.5), 1)]) == [
        [(-0.5, 0.5), (0.5, -0.5)]
    ]
    # a point repeated, then a piece from it: one line of two vertices
    again = [Piece((0.0, 1.0), (0.0, 1.0), 0), Piece((0.0, 1.0), (0.0, 1.0), 1), Piece((0.0, 1.0), (0.5, 0.5), 2)]
    assert polylines(again) == [[(0.0, 1.0), (0.5, 0.5)]]
    assert polylines(again[:2]) == [[(0.0, 1.0)]]
    # a bend whose cross product (edge by edge) is 1e-12, the allowance, counts as straight; 4e-12 does not
    assert polylines([Piece((0.0, 0.0), (1.0, 0.0), 0), Piece((1.0, 0.0), (2.0, 1e-12), 0)]) == [
        [(0.0, 0.0), (2.0, 1e-12)]
    ]
    bent = [Piece((0.0, 0.0), (1.0, 0.0), 0), Piece((1.0, 0.0), (2.0, 4e-12), 0)]
    assert polylines(bent) == [[(0.0, 0.0), (1.0, 0.0), (2.0, 4e-12)]]
    # same x, different y: not the same point
    assert polylines([Piece((0.0, 1.0), (0.5, 0.5), 0), Piece((0.5, 0.25), (1.0, 0.0), 1)]) == [
        [(0.0, 1.0), (0.5, 0.5)],
        [(0.5, 0.25), (1.0, 0.0)],
    ]
