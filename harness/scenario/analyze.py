"""A scenario's negotiation space, from its ``resources`` and its participants' ``batna_config`` alone.

Method. Every rival resource is rewritten in "relief form": an asset is a good worth ``(a, b)`` to the two parties; a
liability worth ``(a, b)`` of disutility becomes a fixed ``(-a, -b)`` plus a good worth ``(a, b)``, "being spared
it", of which the first party's fraction is the share the second party bears. A both_benefit resource is a
constant (kept shared, or borne by both). The divisible goods' frontier is then the closed-form chain, the
indivisible goods are enumerated exactly, and `harness.scenario.pareto.frontier` gives the exact Pareto frontier of
the union (see there). On that frontier, with ``d`` the BATNAs (0 where none is given):

- the Nash bargaining solution maximises ``(u1 - d1)(u2 - d2)`` over outcomes where both gain strictly (none when
  there is no ZOPA);
- the utilitarian optimum maximises ``u1 + u2`` (among ties, the most even gains over ``d``);
- the egalitarian optimum maximises the smaller gain ``min(u1 - d1, u2 - d2)`` (Kalai's egalitarian solution);
- the ZOPA margin is that largest smaller gain: a ZOPA exists when it is above 0 (some allocation gives both parties
  strictly more than their BATNA; the schema's own test, "a party's BATNA above their best attainable allocation
  utility means there is no ZOPA", is a special case), and it is **comfortable** when the margin is at least
  `COMFORTABLE` = 0.10: both can gain a tenth of their whole valuation over walking away;
- integrativeness = (the largest ``u1 + u2`` on the frontier) - (the largest ``u1 + u2`` over the splits of a single
  fixed pie). The single fixed pie splits every rival resource in one proportion λ in [0, 1]: the first party gets
  λ of every asset and is spared λ of every liability (bears 1 - λ of it), the second party the rest; both_benefit
  resources stay as they are. On the pie what one party gains the other loses in the same proportion everywhere,
  so its best joint utility is at λ = 0 or 1. The difference is the joint gain that only trading resources against
  one another (logrolling) can reach: 0 for a purely distributive scenario, at most 1 with normalised weights.

Label checks (the schema: "'expert' scenarios should generally have weak or no ZOPA (impasse-prone); a comfortably
solvable integrative scenario is usually 'intermediate'"): an ``expert`` scenario with a comfortable ZOPA and an
``intermediate`` one with no ZOPA get a warning.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.errors import ScenarioError
from harness.scenario.pareto import Piece, Point, chain, egalitarian, frontier, indivisible_front, nash, polylines
from harness.scenario.pareto import utilitarian as utilitarian_optimum
from harness.scenario.utility import Model, Shares, build_model, utilities

COMFORTABLE = 0.10
ZOPA_EPS = 1e-9
MAX_INDIVISIBLE = 24


@dataclass(frozen=True, slots=True)
class Geometry:
    """The model in relief form and its exact frontier."""

    offset: Point
    divisible: list[int]  # the divisible rival resources
    chain: list[Point]
    moving: list[int]  # resource index handed to the first party along each chain segment
    start_first: list[int]  # divisible resources the first party holds from the chain's start
    indivisible: list[int]  # resource indexes, in the order of the holders in `fronts`
    fronts: list[tuple[Point, tuple[int, ...]]]  # undominated indivisible outcomes (offset included) and holders
    pieces: list[Piece]


@dataclass(frozen=True, slots=True)
class Solution:
    """A point of the frontier: each party's utility, an allocation that reaches it, and the criterion's value."""

    utilities: tuple[float, float]
    shares: Shares
    value: float


@dataclass(slots=True)
class Analysis:
    model: Model
    geometry: Geometry
    frontier: list[list[Point]]
    best_for: tuple[Solution, Solution]
    nash: Solution | None
    utilitarian: Solution
    egalitarian: Solution
    zopa_margin: float
    integrativeness: float
    joint_max: float
    fixed_pie_joint_max: float
    best_attainable: tuple[float, float]
    warnings: list[str] = field(default_factory=list)

    @property
    def zopa(self) -> bool:
        return self.zopa_margin > ZOPA_EPS

    @property
    def comfortable(self) -> bool:
        return self.zopa_margin >= COMFORTABLE


def relief(model: Model) -> tuple[Point, list[int], list[int]]:
    """(the constant offset, the divisible rival resources, the indivisible ones), as indexes into the resources."""
    off = [0.0, 0.0]
    divisible: list[int] = []
    indivisible: list[int] = []
    for i, r in enumerate(model.resources):
        if not r.rival or r.sign < 0:
            off = [off[p] + r.sign * r.weights[p] for p in (0, 1)]
        if r.rival:
            (indivisible if r.kind == "indivisible" else divisible).append(i)
    return (off[0], off[1]), divisible, indivisible


def geometry(model: Model) -> Geometry:
    """The exact frontier of a model. Raises `ScenarioError` when there are too many indivisible resources."""
    off, divisible, indivisible = relief(model)
    if len(indivisible) > MAX_INDIVISIBLE:
        raise ScenarioError(f"{len(indivisible)} indivisible resources: at most {MAX_INDIVISIBLE} can be enumerated")
    vertices, moving, start_first = chain([model.resources[i].weights for i in divisible])
    raw_fronts = indivisible_front([model.resources[i].weights for i in indivisible])
    fronts = [((x + off[0], y + off[1]), h) for (x, y), h in raw_fronts]
    return Geometry(
        offset=off,
        divisible=divisible,
        chain=vertices,
        moving=[divisible[k] for k in moving],
        start_first=[divisible[k] for k in start_first],
        indivisible=indivisible,
        fronts=fronts,
        pieces=frontier([p for p, _ in fronts], vertices),
    )


def shares_at(model: Model, geo: Geometry, curve: int, x: float) -> Shares:
    """An allocation reaching the frontier point of translate ``curve`` whose first coordinate is ``x``."""
    (px, _), holders = geo.fronts[curve]
    u = x - px
    spared = dict.fromkeys(range(len(model.resources)), 0.0)  # relief-form fraction of the first party
    spared.update(dict.fromkeys(geo.start_first, 1.0))
    for k, i in enumerate(geo.moving):
        (x0, _), (x1, _) = geo.chain[k], geo.chain[k + 1]
        spared[i] = min(max((u - x0) / (x1 - x0), 0.0), 1.0)
    spared.update({i: 1.0 if h == 0 else 0.0 for i, h in zip(geo.indivisible, holders, strict=True)})
    out: Shares = {}
    for i, r in enumerate(model.resources):
        f = spared[i]
        out[r.id] = (1.0, 1.0) if not r.rival else ((f, 1 - f) if r.sign > 0 else (1 - f, f))
    return out


def _solution(model: Model, geo: Geometry, piece: int, point: Point, value: float) -> Solution:
    shares = shares_at(model, geo, geo.pieces[piece].curve, point[0])
    return Solution(utilities(model, shares), shares, value)


def fixed_pie_joint_max(model: Model) -> float:
    """The best ``u1 + u2`` over splits of a single fixed pie (see the module's docstring)."""
    off, divisible, indivisible = relief(model)
    rival = [model.resources[i].weights for i in divisible + indivisible]
    return off[0] + off[1] + max(sum(a for a, _ in rival), sum(b for _, b in rival))


def analyze(doc: dict[str, Any]) -> Analysis | None:
    """The analysis of a valid scenario document, or None when it has no resources."""
    model = build_model(doc)
    return analyze_model(model) if model.resources else None


def analyze_model(model: Model) -> Analysis:
    geo = geometry(model)
    pieces, d = geo.pieces, model.batna
    first, last = pieces[0], pieces[-1]
    ega = egalitarian(pieces, d)
    uti = utilitarian_optimum(pieces, d)
    nbs = nash(pieces, d)
    pie = fixed_pie_joint_max(model)
    result = Analysis(
        model=model,
        geometry=geo,
        frontier=polylines(pieces),
        best_for=(
            _solution(model, geo, len(pieces) - 1, last.end, last.end[0]),
            _solution(model, geo, 0, first.start, first.start[1]),
        ),
        nash=_solution(model, geo, nbs.piece, nbs.point, nbs.value) if nbs else None,
        utilitarian=_solution(model, geo, uti.piece, uti.point, uti.value),
        egalitarian=_solution(model, geo, ega.piece, ega.point, ega.value),
        zopa_margin=ega.value,
        integrativeness=max(uti.value - pie, 0.0),
        joint_max=uti.value,
        fixed_pie_joint_max=pie,
        best_attainable=(last.end[0], first.start[1]),
    )
    result.warnings = label_warnings(result)
    return result


def no_zopa_reason(a: Analysis) -> str:
    """Why there is no ZOPA, in the schema's terms when they apply."""
    m = a.model
    over = [
        f"{m.parties[p]}'s BATNA {m.batna[p]:.3f} is not below the best utility {m.parties[p]} can attain, "
        f"{a.best_attainable[p]:.3f}"
        for p in (0, 1)
        if m.batna[p] >= a.best_attainable[p] - ZOPA_EPS
    ]
    if over:
        return "; ".join(over)
    return f"no allocation beats both BATNAs at once: the best smaller gain is {a.zopa_margin:.3f}"


def label_warnings(a: Analysis) -> list[str]:
    out = []
    if a.model.difficulty == "expert" and a.comfortable:
        out.append(
            f"difficulty 'expert' but the ZOPA is comfortable (both parties can gain {a.zopa_margin:.3f} >= "
            f"{COMFORTABLE:.2f} over their BATNAs); the schema: \"'expert' scenarios should generally have weak or no "
            'ZOPA"'
        )
    if a.model.difficulty == "intermediate" and not a.zopa:
        out.append(
            f"difficulty 'intermediate' but there is no ZOPA ({no_zopa_reason(a)}); the schema: \"a comfortably "
            "solvable integrative scenario is usually 'intermediate'\""
        )
    if a.integrativeness <= ZOPA_EPS:
        out.append("not integrative: the frontier is no better than a single fixed pie (no trade helps both)")
    return out
