"""The cross-field rules that JSON Schema cannot check, each a pure function of a schema-shaped document.

From the schema's description: (a) each ``sample_turns[].speaker`` is exactly a participant's name or
``Moderator``; (b) each resource's ``valuations`` keys are exactly the two participant names; (c) ``held_by`` names a
participant; (d) a ``latent`` resource is stated by exactly one hidden fact of its holder and appears in
``evaluation_criteria.expected_revelations`` (see `harness.scenario.latent` for the match). And, from the field
descriptions: ``id`` matches the file name's stem; participant names differ; resource ids are unique; turn numbers
start at 1 and increase; ``min_turns <= max_turns``; with ``normalized_share`` each party's valuations sum to 1
(within `SUM_TOLERANCE`; a warning naming the sum); resources that form a single fixed pie are flagged.

(``unit: other`` without ``unit_label``, ``shared`` without ``shared_mode`` and ``latent`` without ``held_by`` are the
schema's own if/then rules, reported by `harness.scenario.schema`.)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.scenario import latent
from harness.scenario.problems import Finding, pointer

SUM_TOLERANCE = 1e-6
MODERATOR = "Moderator"
Rule = Callable[[dict[str, Any]], list[Finding]]


def names(doc: dict[str, Any]) -> list[str]:
    return [p["name"] for p in doc["participants"]]


def check_id(doc: dict[str, Any], stem: str) -> list[Finding]:
    if doc["id"] == stem:
        return []
    return [Finding("/id", f"id {doc['id']!r} does not match the file name's stem {stem!r}")]


def check_participants(doc: dict[str, Any]) -> list[Finding]:
    first, second = names(doc)
    out = []
    if first == second:
        out.append(Finding("/participants/1/name", f"both participants are named {first!r}; names must differ"))
    out += [
        Finding(
            pointer("participants", i, "name"), f"a participant named {MODERATOR!r} makes sample_turns ambiguous", True
        )
        for i, n in enumerate((first, second))
        if n == MODERATOR
    ]
    return out


def check_speakers(doc: dict[str, Any]) -> list[Finding]:
    """Rule (a)."""
    allowed = names(doc)
    out = []
    for i, turn in enumerate(doc["sample_turns"]):
        speaker = turn["speaker"]
        if speaker in allowed or speaker == MODERATOR:
            continue
        hint = next((n for n in [*allowed, MODERATOR] if n.casefold() == speaker.casefold()), None)
        message = f"speaker {speaker!r} is neither a participant ({', '.join(map(repr, allowed))}) nor {MODERATOR!r}"
        out.append(
            Finding(pointer("sample_turns", i, "speaker"), message + (f"; did you mean {hint!r}?" if hint else ""))
        )
    return out


def check_turn_numbers(doc: dict[str, Any]) -> list[Finding]:
    out, previous = [], 0
    for i, turn in enumerate(doc["sample_turns"]):
        number, where = turn["turn_number"], pointer("sample_turns", i, "turn_number")
        if i == 0 and number != 1:
            out.append(Finding(where, f"turn numbers start at 1, not {number}"))
        elif i > 0 and number <= previous:
            out.append(Finding(where, f"turn number {number} does not increase on the previous one ({previous})"))
        previous = number
    return out


def check_turn_limits(doc: dict[str, Any]) -> list[Finding]:
    crit = doc["evaluation_criteria"]
    if crit["min_turns"] <= crit["max_turns"]:
        return []
    return [Finding("/evaluation_criteria/min_turns", f"min_turns {crit['min_turns']} > max_turns {crit['max_turns']}")]


def check_resource_ids(doc: dict[str, Any]) -> list[Finding]:
    seen: dict[str, int] = {}
    out = []
    for i, r in enumerate(doc.get("resources", [])):
        if r["id"] in seen:
            first = pointer("resources", seen[r["id"]])
            out.append(Finding(pointer("resources", i, "id"), f"duplicate resource id {r['id']!r} (first at {first})"))
        seen.setdefault(r["id"], i)
    return out


def check_valuation_keys(doc: dict[str, Any]) -> list[Finding]:
    """Rule (b), and (c) for valuation keys."""
    parties, out = names(doc), []
    for i, r in enumerate(doc.get("resources", [])):
        keys = r["valuations"]
        out += [
            Finding(pointer("resources", i, "valuations", k), f"{k!r} is not a participant ({' or '.join(parties)})")
            for k in keys
            if k not in parties
        ]
        out += [
            Finding(pointer("resources", i, "valuations"), f"no valuation for participant {p!r}")
            for p in dict.fromkeys(parties)
            if p not in keys
        ]
    return out


def check_held_by(doc: dict[str, Any]) -> list[Finding]:
    """Rule (c)."""
    parties = names(doc)
    return [
        Finding(
            pointer("resources", i, "held_by"),
            f"held_by {r['held_by']!r} is not a participant ({' or '.join(parties)})",
        )
        for i, r in enumerate(doc.get("resources", []))
        if "held_by" in r and r["held_by"] not in parties
    ]


def check_latent(doc: dict[str, Any]) -> list[Finding]:
    """Rule (d): each latent resource against its holder's hidden facts and the expected revelations."""
    parties, out = names(doc), []
    for i, r in enumerate(doc.get("resources", [])):
        if r["visibility"] == "latent" and r.get("held_by") in parties:
            out += _latent_resource(doc, i, r)
    return out


def _latent_resource(doc: dict[str, Any], i: int, r: dict[str, Any]) -> list[Finding]:
    holder = names(doc).index(r["held_by"])
    facts = doc["participants"][holder]["hidden_facts"]
    found = latent.matches(r, facts)
    strong = [m for m in found if m.strong]
    where = pointer("resources", i)

    def fact_at(match: latent.Match) -> str:
        return pointer("participants", holder, "hidden_facts", match.index)

    out = []
    if len(strong) > 1:
        listed = ", ".join(fact_at(m) for m in strong)
        out.append(
            Finding(where, f"latent resource is stated by {len(strong)} hidden facts ({listed}); expected one", True)
        )
    elif not strong and found:
        best = found[0]
        message = f"latent resource only weakly matches hidden fact {fact_at(best)} (score {best.score:.2f} < 0.5)"
        out.append(Finding(where, message + "; name the resource in that fact", True))
    elif not found:
        message = f"latent resource is stated by no hidden fact of {r['held_by']!r}"
        out.append(Finding(where, message + _other_party_hint(doc, holder, r)))
    out += _revelation(doc, i, r, [facts[m.index] for m in strong or found])
    return out


def _other_party_hint(doc: dict[str, Any], holder: int, r: dict[str, Any]) -> str:
    other = 1 - holder
    found = [m for m in latent.matches(r, doc["participants"][other]["hidden_facts"]) if m.strong]
    if not found:
        return ""
    return f" (but {pointer('participants', other, 'hidden_facts', found[0].index)} does: is held_by right?)"


def _revelation(doc: dict[str, Any], i: int, r: dict[str, Any], facts: list[str]) -> list[Finding]:
    revelations = doc["evaluation_criteria"].get("expected_revelations", [])
    found = latent.revelation_matches(r, revelations, facts)
    where = pointer("resources", i)
    if any(m.strong for m in found):
        return []
    if found:
        at = pointer("evaluation_criteria", "expected_revelations", found[0].index)
        return [
            Finding(
                where,
                f"latent resource only weakly matches expected revelation {at} (score {found[0].score:.2f})",
                True,
            )
        ]
    return [Finding(where, "latent resource does not appear in evaluation_criteria.expected_revelations")]


def check_shared_mode(doc: dict[str, Any]) -> list[Finding]:
    out = []
    for i, r in enumerate(doc.get("resources", [])):
        mode, polarity = r.get("shared_mode"), r.get("polarity", "asset")
        if mode and r["divisibility"] != "shared":
            out.append(
                Finding(
                    pointer("resources", i, "shared_mode"), "shared_mode is ignored: divisibility is not 'shared'", True
                )
            )
        elif mode == "joint_obligation" and polarity != "liability":
            message = 'a joint_obligation is "a cost/burden to assign" but polarity is asset'
            message += " (the default): it is scored as a positive value; set polarity: liability if it is a burden"
            out.append(Finding(pointer("resources", i, "polarity"), message, True))
        elif mode == "both_benefit" and polarity == "liability":
            message = 'a both_benefit resource is a "non-rival good" but polarity is liability: scored as a burden'
            message += " both parties bear in full, whatever the allocation"
            out.append(Finding(pointer("resources", i, "polarity"), message, True))
    return out


def check_units(doc: dict[str, Any]) -> list[Finding]:
    return [
        Finding(pointer("resources", i, "unit"), "unit 'percent' without a description: say percent of what", True)
        for i, r in enumerate(doc.get("resources", []))
        if r["unit"] == "percent" and "description" not in r
    ]


def check_valuation_sums(doc: dict[str, Any]) -> list[Finding]:
    """With normalized_share each party's valuations sum to 1; raw ones are renormalised, which needs a positive sum."""
    resources = doc.get("resources", [])
    if not resources:
        return []
    bases = [r.get("valuation_basis", "normalized_share") for r in resources]
    out = []
    if len(set(bases)) > 1:
        raw = ", ".join(pointer("resources", i) for i, b in enumerate(bases) if b == "raw")
        message = f"valuation_basis is mixed (raw at {raw}): every party's weights are renormalised over all resources"
        out.append(Finding("/resources", message, True))
    for party in dict.fromkeys(names(doc)):
        total = sum(r["valuations"].get(party, 0.0) for r in resources)
        if "raw" in bases and total <= 0:
            out.append(Finding("/resources", f"{party} values no resource: raw valuations cannot be renormalised"))
        elif "raw" not in bases and abs(total - 1.0) > SUM_TOLERANCE:
            message = f"{party}'s valuations sum to {total:.6g}; normalized_share expects 1 (within {SUM_TOLERANCE:g})"
            out.append(Finding("/resources", message, True))
    return out


def check_fixed_pie(doc: dict[str, Any]) -> list[Finding]:
    """Resources that are divided (not kept shared) and all valued in the same proportion form one fixed pie."""
    parties = names(doc)
    pairs = [
        (r["valuations"].get(parties[0], 0.0), r["valuations"].get(parties[1], 0.0))
        for r in doc.get("resources", [])
        if r.get("shared_mode") != "both_benefit" or r["divisibility"] != "shared"
    ]
    pairs = [(a, b) for a, b in pairs if a > 0 or b > 0]
    if not pairs or parties[0] == parties[1]:
        return []
    a0, b0 = pairs[0]
    if any(abs(a * b0 - b * a0) > 1e-12 for a, b in pairs[1:]):
        return []
    kind = "a lone divided resource" if len(pairs) == 1 else "every divided resource valued in the same proportion"
    message = f"the resources form a single fixed pie ({kind}): no trade can make both parties better off"
    return [Finding("/resources", message, True)]


RULES: tuple[Rule, ...] = (
    check_participants,
    check_speakers,
    check_turn_numbers,
    check_turn_limits,
    check_resource_ids,
    check_valuation_keys,
    check_held_by,
    check_latent,
    check_shared_mode,
    check_units,
    check_valuation_sums,
    check_fixed_pie,
)


def check_rules(doc: dict[str, Any], stem: str) -> list[Finding]:
    """Every cross-field rule on a document whose shape the schema accepted."""
    out = check_id(doc, stem)
    for rule in RULES:
        out += rule(doc)
    return out
