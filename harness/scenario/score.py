"""Score an agreed allocation: each party's utility, whether it beats its BATNA, how far it is from the Pareto
frontier, and its Nash product against the Nash bargaining solution's.

The allocation file (also what ``fcb scenario analyze --format json`` prints for each solution)::

    {"scenario": "<scenario id, optional; checked when given>",
     "allocation": {"<resource id>": <spec>, ...}}   # every resource, once

where a spec is ``{"<party>": fraction, ...}`` (a party left out has 0; for a liability the fraction is the share
that party bears), ``"<party>"`` (the whole resource to, or borne by, that party), ``null`` (an asset kept by
neither), or ``"shared"`` (a both_benefit resource kept shared). The fractions must be feasible for the resource
(`harness.scenario.utility.feasibility_problem`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.scenario.analyze import Analysis
from harness.scenario.pareto import distance, egalitarian
from harness.scenario.problems import Finding, join, pointer
from harness.scenario.utility import Model, Resource, Shares, feasibility_problem, utilities

SHARED = "shared"


@dataclass(frozen=True, slots=True)
class Score:
    """The figures a value-efficiency score would use."""

    shares: Shares
    utilities: tuple[float, float]
    beats_batna: tuple[bool, bool]
    distance_to_frontier: float  # Euclidean, in utility units; 0 on the frontier
    pareto_gap: float  # the largest gain both parties could still make at once (0 when Pareto-optimal)
    nash_product: float  # (u1 - d1)(u2 - d2) when both beat their BATNA, else 0
    nbs_ratio: float | None  # nash_product / the NBS's product; None when there is no NBS (no ZOPA)


def _spec(model: Model, r: Resource, spec: Any, where: str) -> tuple[tuple[float, float] | None, Finding | None]:
    """The fractions a spec stands for, or why it stands for none."""
    parties = model.parties
    if spec is None:
        return (0.0, 0.0), None
    if isinstance(spec, str):
        if spec == SHARED and r.kind == "both_benefit":
            return (1.0, 1.0), None
        if spec in parties:
            return ((1.0, 0.0) if spec == parties[0] else (0.0, 1.0)), None
        allowed = " or ".join(repr(x) for x in (*parties, *((SHARED,) if r.kind == "both_benefit" else ())))
        return None, Finding(where, f"{spec!r} is not {allowed}")
    if not isinstance(spec, dict):
        return None, Finding(where, "expected {party: fraction}, a party's name, null or 'shared'")
    unknown = [k for k in spec if k not in parties]
    if unknown:
        return None, Finding(join(where, unknown[0]), f"{unknown[0]!r} is not a participant")
    values = [spec.get(p, 0) for p in parties]
    if any(isinstance(v, bool) or not isinstance(v, int | float) for v in values):
        return None, Finding(where, "fractions must be numbers")
    return (float(values[0]), float(values[1])), None


def parse_allocation(data: Any, model: Model) -> tuple[Shares | None, list[Finding]]:
    """The shares an allocation document stands for, or the findings that say why it is not a valid allocation."""
    if not isinstance(data, dict) or not isinstance(data.get("allocation"), dict):
        return None, [Finding("", "expected an object with an 'allocation' object (resource id -> spec)")]
    found = []
    if "scenario" in data and data["scenario"] != model.scenario_id:
        found.append(Finding("/scenario", f"allocation is for {data['scenario']!r}, not {model.scenario_id!r}"))
    found += [Finding(pointer("allocation", k), "no such resource") for k in data["allocation"] if not _known(model, k)]
    shares: Shares = {}
    for r in model.resources:
        where = pointer("allocation", r.id)
        if r.id not in data["allocation"]:
            found.append(Finding(where, "no allocation for this resource"))
            continue
        f, problem = _spec(model, r, data["allocation"][r.id], where)
        problem = problem or (Finding(where, why) if f is not None and (why := feasibility_problem(r, f)) else None)
        if problem:
            found.append(problem)
        elif f is not None:
            shares[r.id] = f
    return (None if found else shares), found


def _known(model: Model, rid: str) -> bool:
    return any(r.id == rid for r in model.resources)


def score(analysis: Analysis, shares: Shares) -> Score:
    """Score a feasible allocation against a scenario's analysis."""
    model, pieces = analysis.model, analysis.geometry.pieces
    u = utilities(model, shares)
    d = model.batna
    beats = (u[0] > d[0] + 1e-9, u[1] > d[1] + 1e-9)
    product = (u[0] - d[0]) * (u[1] - d[1]) if all(beats) else 0.0
    nbs = analysis.nash
    return Score(
        shares=shares,
        utilities=u,
        beats_batna=beats,
        distance_to_frontier=distance(pieces, u),
        pareto_gap=max(egalitarian(pieces, u).value, 0.0),
        nash_product=product,
        nbs_ratio=product / nbs.value if nbs and nbs.value > 0 else None,
    )
