"""The utility model, exactly as the schema defines it, as pure functions.

The schema's words, and how each is read here:

- "utility = sum over resources of valuations[party][resource] * fraction_of_quantity_allocated_to_party"; "Per-party
  utility from this resource = valuations[party] * fraction_of_quantity allocated to that party (linear, additive
  across resources). For 'indivisible' resources the fraction is binary (whole quantity or none)." So
  ``u_p = sum_r sign_r * w_rp * f_rp``, with ``f_rp`` the fraction of resource r allocated to party p.
- divisibility: "'divisible' = any fraction f in [0,1] to a party" (the two fractions add up to at most 1; what is
  left over goes to nobody); "'indivisible' = whole quantity to one party or neither (never fractional)";
  "'shared' = both parties may derive value simultaneously or it is a joint obligation (see 'shared_mode')".
- shared_mode: "'both_benefit' = non-rival good both can enjoy (add both valuations if kept shared)": each party's
  fraction is its own, in [0, 1], not taken from the other's; kept shared, both are 1. "'joint_obligation' = a
  cost/burden to assign": split like a divisible resource whose fractions add up to exactly 1.
- polarity: "'asset' (default) = positive value" (``sign = +1``). "'liability' = a cost/burden; valuations express the
  disutility a party suffers from being assigned it (the allocation question is who bears it)" (``sign = -1``; the
  fraction of a party is the share it bears, and a liability is always borne in full: fractions add up to 1, an
  indivisible one by exactly one party). A both_benefit liability (a non-rival burden) is borne by both in full.
- valuation_basis: "'normalized_share' (default) = per-party weights already normalized to sum to 1.0 across
  resources" (used as given); "'raw' = scorer must renormalize": when any resource is raw, each party's valuations
  are divided by that party's sum over all of the scenario's resources (assets and liabilities alike), so that
  they sum to 1.
- BATNA: "'utility' is normalized 0..1, directly comparable to resource-derived utilities"; a party without
  ``batna_config`` has a BATNA of 0.
- "'external_value_usd' is a display/realism anchor and must never enter any score": it is never read here, and
  neither is ``quantity`` (utilities depend on fractions of the whole only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TOLERANCE = 1e-9
Shares = dict[str, tuple[float, float]]  # resource id -> (fraction of the first party, fraction of the second)


@dataclass(frozen=True, slots=True)
class Resource:
    """One resource as the utility model sees it: a kind, a sign and each party's normalised weight."""

    id: str
    kind: str  # divisible | indivisible | both_benefit | joint_obligation
    sign: int  # +1 asset, -1 liability
    weights: tuple[float, float]

    @property
    def rival(self) -> bool:
        """True when what one party gets the other does not (everything but a both_benefit resource)."""
        return self.kind != "both_benefit"

    @property
    def must_assign(self) -> bool:
        """True when the fractions must add up to exactly 1: liabilities and joint obligations."""
        return self.rival and (self.sign < 0 or self.kind == "joint_obligation")


@dataclass(frozen=True, slots=True)
class Model:
    """The negotiation space of a scenario: two parties, their BATNAs, the resources."""

    scenario_id: str
    difficulty: str
    parties: tuple[str, str]
    batna: tuple[float, float]
    batna_given: tuple[bool, bool]
    resources: tuple[Resource, ...]

    def resource(self, rid: str) -> Resource:
        return next(r for r in self.resources if r.id == rid)


def kind_of(resource: dict[str, Any]) -> str:
    if resource["divisibility"] == "shared":
        return str(resource.get("shared_mode", "both_benefit"))
    return str(resource["divisibility"])


def normalised_weights(doc: dict[str, Any]) -> list[tuple[float, float]]:
    """Each resource's (first party, second party) weight, renormalised per party when any basis is raw."""
    parties = [p["name"] for p in doc["participants"]]
    resources = doc.get("resources", [])
    raw = [
        (float(r["valuations"].get(parties[0], 0.0)), float(r["valuations"].get(parties[1], 0.0))) for r in resources
    ]
    if all(r.get("valuation_basis", "normalized_share") == "normalized_share" for r in resources):
        return raw
    first, second = (sum(w[p] for w in raw) for p in (0, 1))
    return [(_share(a, first), _share(b, second)) for a, b in raw]


def _share(weight: float, total: float) -> float:
    return weight / total if total > 0 else 0.0


def batna(participant: dict[str, Any]) -> float:
    config = participant.get("batna_config")
    return float(config["utility"]) if config else 0.0


def build_model(doc: dict[str, Any]) -> Model:
    """The model of a valid scenario document (only resources and batna_config are read, plus names and labels)."""
    first, second = doc["participants"]
    resources = tuple(
        Resource(r["id"], kind_of(r), -1 if r.get("polarity") == "liability" else 1, w)
        for r, w in zip(doc.get("resources", []), normalised_weights(doc), strict=True)
    )
    return Model(
        scenario_id=doc["id"],
        difficulty=doc["difficulty"],
        parties=(first["name"], second["name"]),
        batna=(batna(first), batna(second)),
        batna_given=("batna_config" in first, "batna_config" in second),
        resources=resources,
    )


def utilities(model: Model, shares: Shares) -> tuple[float, float]:
    """Each party's utility of an allocation: ``sum_r sign_r * w_rp * f_rp`` (the schema's formula)."""
    totals = [0.0, 0.0]
    for r in model.resources:
        f = shares[r.id]
        for p in (0, 1):
            totals[p] += r.sign * r.weights[p] * f[p]
    return totals[0], totals[1]


def feasibility_problem(r: Resource, f: tuple[float, float]) -> str | None:
    """Why fractions ``f`` are not a feasible allocation of resource ``r``, or None when they are."""
    if any(not -TOLERANCE <= x <= 1 + TOLERANCE for x in f):
        return "fractions must lie in [0, 1]"
    if r.kind == "indivisible" and any(min(abs(x), abs(x - 1)) > TOLERANCE for x in f):
        return "an indivisible resource goes whole to one party or to neither (fractions 0 or 1)"
    if r.kind == "both_benefit":
        if r.sign < 0 and min(f) < 1 - TOLERANCE:
            return "a both_benefit liability is borne by both parties in full"
        return None
    total = f[0] + f[1]
    if r.must_assign and abs(total - 1) > 1e-6:
        what = "a liability is borne in full" if r.sign < 0 else "a joint obligation is assigned in full"
        return f"{what}: the fractions must add up to 1, not {total:.6g}"
    if total > 1 + 1e-6:
        return f"the fractions add up to {total:.6g}, more than the whole resource"
    return None
