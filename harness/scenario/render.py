"""Text and JSON for ``fcb scenario analyze`` and ``fcb scenario score``. Numbers in JSON are rounded to 9 decimals
(the float noise of the exact computation lies below that); text shows 3."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from harness.scenario.analyze import COMFORTABLE, Analysis, Solution, no_zopa_reason
from harness.scenario.score import SHARED, Score
from harness.scenario.utility import Model, Resource, Shares

DIGITS = 9


def _r(x: float) -> float:
    return round(x, DIGITS) + 0.0  # + 0.0 turns -0.0 into 0.0


def allocation_json(model: Model, shares: Shares) -> dict[str, Any]:
    """An allocation in the allocation file's format (so that analyze's output can be scored)."""
    return {r.id: _spec_json(model, r, shares[r.id]) for r in model.resources}


def _spec_json(model: Model, r: Resource, f: tuple[float, float]) -> Any:
    if r.kind == "both_benefit" and f == (1.0, 1.0):
        return SHARED
    if r.kind == "indivisible" or f in ((1.0, 0.0), (0.0, 1.0)):
        return model.parties[0] if f[0] > 0.5 else (model.parties[1] if f[1] > 0.5 else None)
    return {model.parties[p]: _r(f[p]) for p in (0, 1)}


def _spec_text(model: Model, r: Resource, f: tuple[float, float]) -> str:
    spec = _spec_json(model, r, f)
    verb = "borne by " if r.sign < 0 and r.kind != "both_benefit" else ""
    if isinstance(spec, dict):
        return f"{r.id}: {verb}" + " / ".join(f"{p} {v:.3g}" for p, v in spec.items())
    return f"{r.id}: {verb}{'neither' if spec is None else spec}"


def allocation_text(model: Model, shares: Shares) -> str:
    return "; ".join(_spec_text(model, r, shares[r.id]) for r in model.resources)


def _solution_json(model: Model, s: Solution, value_name: str) -> dict[str, Any]:
    return {
        "utilities": {model.parties[p]: _r(s.utilities[p]) for p in (0, 1)},
        value_name: _r(s.value),
        "allocation": allocation_json(model, s.shares),
    }


def analysis_json(a: Analysis, path: str) -> dict[str, Any]:
    m = a.model
    return {
        "path": path,
        "scenario": m.scenario_id,
        "difficulty": m.difficulty,
        "parties": list(m.parties),
        "batna": {m.parties[p]: {"utility": m.batna[p], "given": m.batna_given[p]} for p in (0, 1)},
        "resources": [
            {
                "id": r.id,
                "kind": r.kind,
                "polarity": "liability" if r.sign < 0 else "asset",
                "weights": {m.parties[p]: _r(r.weights[p]) for p in (0, 1)},
            }
            for r in m.resources
        ],
        "frontier": [[[_r(x), _r(y)] for x, y in line] for line in a.frontier],
        "nash": _solution_json(m, a.nash, "nash_product") if a.nash else None,
        "utilitarian": _solution_json(m, a.utilitarian, "joint_utility"),
        "egalitarian": _solution_json(m, a.egalitarian, "smaller_gain"),
        "best_for": {m.parties[p]: _solution_json(m, a.best_for[p], "utility") for p in (0, 1)},
        "zopa": {
            "exists": a.zopa,
            "margin": _r(a.zopa_margin),
            "comfortable": a.comfortable,
            "comfortable_threshold": COMFORTABLE,
        },
        "integrativeness": {
            "value": _r(a.integrativeness),
            "joint_max": _r(a.joint_max),
            "fixed_pie_joint_max": _r(a.fixed_pie_joint_max),
        },
        "warnings": a.warnings,
    }


def _resource_rows(m: Model) -> list[list[Any]]:
    return [[r.id, r.kind, "liability" if r.sign < 0 else "asset", r.weights[0], r.weights[1]] for r in m.resources]


def _zopa_line(a: Analysis) -> str:
    if not a.zopa:
        return f"no: {no_zopa_reason(a)}"
    kind = "comfortable" if a.comfortable else "weak"
    return (
        f"yes, {kind}: both parties can gain {a.zopa_margin:.3f} over their BATNAs (comfortable: >= {COMFORTABLE:.2f})"
    )


def _frontier_text(a: Analysis) -> str:
    return " | ".join(" - ".join(f"({x:.3f}, {y:.3f})" for x, y in line) for line in a.frontier)


def _solution_row(m: Model, label: str, s: Solution | None) -> list[str]:
    if s is None:
        return [label, "-", "-", "none: no ZOPA"]
    return [label, f"{s.utilities[0]:.3f}", f"{s.utilities[1]:.3f}", allocation_text(m, s.shares)]


def analysis_text(a: Analysis) -> str:
    m = a.model
    a_name, b_name = m.parties
    batna = ", ".join(f"{m.parties[p]} {m.batna[p]:.3f}{'' if m.batna_given[p] else ' (none given)'}" for p in (0, 1))
    solutions = [
        ("Nash (NBS)", a.nash),
        ("utilitarian", a.utilitarian),
        ("egalitarian", a.egalitarian),
        (f"best for {a_name}", a.best_for[0]),
        (f"best for {b_name}", a.best_for[1]),
    ]
    rows = [_solution_row(m, label, s) for label, s in solutions]
    lines = [
        f"{m.scenario_id}: {a_name} vs {b_name}, {len(m.resources)} resources, difficulty {m.difficulty}",
        "",
        tabulate(
            _resource_rows(m),
            headers=["resource", "kind", "polarity", a_name, b_name],
            tablefmt="simple",
            floatfmt=".3f",
        ),
        "",
        f"BATNA:           {batna}",
        f"ZOPA:            {_zopa_line(a)}",
        f"integrativeness: {a.integrativeness:.3f} (joint utility {a.joint_max:.3f} on the frontier vs "
        f"{a.fixed_pie_joint_max:.3f} for the best split of a single fixed pie)",
        f"Nash product:    {a.nash.value:.4f}" if a.nash else "Nash product:    - (no ZOPA)",
        "",
        tabulate(
            rows,
            headers=["solution", a_name, b_name, "allocation"],
            tablefmt="simple",
            disable_numparse=True,
            colalign=("left", "right", "right", "left"),
        ),
        "",
        f"Pareto frontier ({a_name}, {b_name}): {_frontier_text(a)}",
    ]
    lines += [f"warning: {w}" for w in a.warnings]
    return "\n".join(lines)


def score_json(a: Analysis, s: Score, path: str, allocation_path: str) -> dict[str, Any]:
    m = a.model
    return {
        "path": path,
        "allocation_path": allocation_path,
        "scenario": m.scenario_id,
        "allocation": allocation_json(m, s.shares),
        "utilities": {m.parties[p]: _r(s.utilities[p]) for p in (0, 1)},
        "batna": {m.parties[p]: m.batna[p] for p in (0, 1)},
        "beats_batna": {m.parties[p]: s.beats_batna[p] for p in (0, 1)},
        "distance_to_frontier": _r(s.distance_to_frontier),
        "pareto_gap": _r(s.pareto_gap),
        "pareto_optimal": s.pareto_gap <= 1e-9,
        "nash_product": _r(s.nash_product),
        "nbs_product": _r(a.nash.value) if a.nash else None,
        "nbs_ratio": None if s.nbs_ratio is None else _r(s.nbs_ratio),
    }


def score_text(a: Analysis, s: Score) -> str:
    m = a.model
    rows = [[m.parties[p], s.utilities[p], m.batna[p], "yes" if s.beats_batna[p] else "no"] for p in (0, 1)]
    ratio = "- (no NBS: no ZOPA)"
    if s.nbs_ratio is not None and a.nash is not None:
        ratio = f"{s.nbs_ratio:.3f} ({s.nash_product:.4f} / {a.nash.value:.4f})"
    optimal = "yes" if s.pareto_gap <= 1e-9 else f"no: both could still gain {s.pareto_gap:.3f}"
    return "\n".join(
        [
            f"{m.scenario_id}: {allocation_text(m, s.shares)}",
            "",
            tabulate(rows, headers=["party", "utility", "BATNA", "beats BATNA"], tablefmt="simple", floatfmt=".3f"),
            "",
            f"distance to the Pareto frontier: {s.distance_to_frontier:.3f} (Pareto-optimal: {optimal})",
            f"Nash product / NBS product:      {ratio}",
        ]
    )
