"""fcb scenario analyze: results checked against figures worked out by hand for small scenarios (two and three
resources; divisible, indivisible, shared; assets and liabilities; with and without BATNAs), the frontier checked
against an independent mixed-integer program, and external_value_usd shown to move nothing.

Notation: A = Alice, B = Bob; a resource written (a, b) is worth a to A and b to B (whole resource); u = (u_A, u_B).
"""

from __future__ import annotations

import copy
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
from harness.scenario.pareto import distance
from harness.scenario.render import analysis_json
from harness.scenario.utility import Model, Resource, feasibility_problem, utilities

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
