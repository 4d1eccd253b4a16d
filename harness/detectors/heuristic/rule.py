"""The hand-set rule of `builtin:heuristic` (`rule`) and the detector that applies it to the `features`."""

from __future__ import annotations

from harness.detectors.heuristic.features import features
from harness.types import Prediction, Request, Risk


def signals(f: dict[str, float]) -> dict[str, bool]:
    """The yes/no readings of the features that the hand-set rule (`rule`) combines. Majority and dissent are read
    from the answers' final values when every answer states one at an anchor (`vote_features`), else from their
    claims (numbers and content words)."""
    votes = f["vote_anchored"] > 0
    return {
        "no_majority": (f["vote_consensus"] if votes else f["has_majority"]) == 0,
        "evidence_for": f["has_evidence"] > 0 and f["evidence_margin"] > 0,
        "evidence_against": f["has_evidence"] > 0 and (f["evidence_margin"] < 0 or f["evidence_silent"] > 0),
        "arithmetic_slip": f["majority_arith_wrong"] > 0,
        "dissenter_slip": f["minority_arith_wrong"] > 0 and f["majority_arith_wrong"] == 0,
        "copying": f["later_copy_share"] > 0 or f["copy_phrase_share"] >= 0.25,
        "premise_echo": f["has_premise"] > 0 and (f["premise_majority_support"] >= 0.5 or f["note_mention_share"] > 0),
        "dissent": (f["vote_unanimous"] if votes else f["unanimous"]) == 0,
        "rebuttal": f["minority_dissent"] > 0,
        "hedged_majority": f["majority_hedge_share"] >= 0.5,
        "hedged_source": f["first_hedged"] > 0 and f["later_copy_share"] > 0,
    }


_ALARMS = (
    "evidence_against",
    "arithmetic_slip",
    "copying",
    "premise_echo",
    "dissent",
    "rebuttal",
    "hedged_majority",
    "hedged_source",
)


def rule(f: dict[str, float]) -> tuple[Risk, float, list[str]]:
    """The hand-set rule of `Heuristic`: (risk, risk_score, the signals that were on), first match wins.

    1. No claim held by 60% of the answers: ``medium`` (there is no consensus to trust or distrust).
    2. The evidence sides against the majority (states a dissenter's claim more than the majority's, or says nothing
       of a worded majority claim), or a majority answer's written arithmetic is wrong: ``high``.
    3. The answers copy one another or repeat a note in the question: ``high`` if there is also a sign of error (a
       dissenter, a rebuttal among the dissenters, a hedged majority, a hedged first answer that others repeated),
       else ``medium`` (a consensus with nothing independent behind it, right or wrong).
    4. The evidence supports the majority, or the only re-checked arithmetic slips are the dissenters': ``low``.
    5. A 60% majority with dissenters: ``high`` (a dissenter may be the one who is right).
    6. Independent unanimity: ``low``.

    Scores: ``high`` 0.6 + 0.07 per alarm signal on (`_ALARMS`), at most 0.95; ``medium`` 0.5 for an unsupported
    consensus and 0.45 - 0.1 x distinct-claim ratio (+0.1 with evidence against) without a majority; ``low`` 0.2
    for independent unanimity, 0.1 with supporting evidence (0.2 with dissenters).
    """
    s = signals(f)
    on = [name for name, value in s.items() if value]
    high = min(0.95, 0.6 + 0.07 * sum(s[k] for k in _ALARMS))
    if s["no_majority"]:
        return "medium", round(0.45 - 0.1 * f["distinct_ratio"] + 0.1 * s["evidence_against"], 4), on
    if s["evidence_against"] or s["arithmetic_slip"]:
        return "high", high, on
    if s["copying"] or s["premise_echo"]:
        error_sign = s["dissent"] or s["rebuttal"] or s["hedged_majority"] or s["hedged_source"]
        return ("high", high, on) if error_sign else ("medium", 0.5, on)
    if s["evidence_for"] or s["dissenter_slip"]:
        return "low", 0.1 + 0.1 * s["dissent"], on
    if s["dissent"]:
        return "high", high, on
    return "low", 0.2, on


class Heuristic:
    """Risk from the structure of the answers alone, by the hand-set `rule` on the structural `features`.

    No world knowledge: it never knows which answer is right, only whether the agreement looks independent
    (copying, an echoed note), contested (dissenters, rebuttals, hedges) or checkable (evidence, arithmetic).
    """

    name = "builtin:heuristic"

    async def assess(self, request: Request) -> Prediction:
        f = features(request)
        risk, score, on = rule(f)
        return Prediction(risk, round(score, 4), {"signals": on, "agreement": round(f["agreement"], 4)})

    async def aclose(self) -> None:
        return None
