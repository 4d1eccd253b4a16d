"""The label scheme's cross-field rules, and the compact label record a case leaves for metrics.

Every function here takes a case that already passed the JSON Schema; none of them reads files.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from harness.cases.agent_ids import agent_id_problems
from harness.types import CATEGORY_RISK, CaseLabels
from harness.vocabulary import ORIGINS, Origin

HIGH_RISK_CATEGORIES = frozenset(c for c, r in CATEGORY_RISK.items() if r == "high")
NEEDS_MAJORITY_TRUE = frozenset({"genuine_agreement_correct", "correct_but_unsupported"})

REAL_ORIGINS: frozenset[Origin] = frozenset({"natural", "assembled"})
"""The origins whose answers are all real: the subset on which the second headline is computed."""
UNKNOWN_ORIGIN = "unknown"


@dataclass(frozen=True, slots=True)
class Rule:
    """One broken rule: the field it concerns, a message, and whether it is only a warning."""

    field: str
    message: str
    warning: bool = False


def _meets(count: int, total: int) -> bool:
    """True when count/total >= 0.6, in integers so that 3 of 5 is exactly 60%."""
    return 5 * count >= 3 * total


def majority_rules(case: dict[str, Any]) -> list[Rule]:
    """Check ``majority_correct`` against the share of correct answers."""
    answers = case["answers"]
    n, correct = len(answers), sum(a["correct"] for a in answers)
    mc = case["majority_correct"]
    share = f"{correct} of {n} answers correct"
    if mc is True and not _meets(correct, n):
        return [Rule("majority_correct", f"true needs at least 60% correct answers; {share}")]
    if mc is False and not _meets(n - correct, n):
        return [Rule("majority_correct", f"false needs at least 60% wrong answers; {share}")]
    if mc is None and _meets(correct, n):
        return [Rule("majority_correct", f"null needs fewer than 60% correct answers; {share}")]
    return []


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text.strip().replace(",", "")))
    except ValueError:
        return False


def category_rules(case: dict[str, Any]) -> list[Rule]:
    """Check what each category demands of its labels and answers."""
    cat, answers, mc = case["category"], case["answers"], case["majority_correct"]
    meta = [a.get("metadata", {}) for a in answers]
    rules: list[Rule] = []
    if cat in HIGH_RISK_CATEGORIES and mc is not False:
        rules.append(Rule("majority_correct", f"{cat} needs majority_correct false, not {_json(mc)}"))
    if cat in NEEDS_MAJORITY_TRUE and mc is not True:
        rules.append(Rule("majority_correct", f"{cat} needs majority_correct true, not {_json(mc)}"))
    if cat == "genuine_disagreement" and mc is not None:
        rules.append(Rule("majority_correct", f"{cat} needs majority_correct null, not {_json(mc)}"))
    if cat == "lone_correct_dissenter" and (k := sum(a["correct"] for a in answers)) != 1:
        rules.append(Rule("answers", f"{cat} needs exactly one correct answer, found {k}"))
    if cat == "echo_cascade" and not any(m.get("saw_other_answers") is True for m in meta):
        rules.append(Rule("answers", f"{cat} needs an answer with metadata.saw_other_answers true"))
    if cat == "anchoring_injected_premise":
        for i, m in enumerate(meta):
            if m.get("shared_context") is not True:
                rules.append(Rule(f"answers[{i}].metadata.shared_context", f"{cat} needs true on every answer"))
    if cat == "numeric_consensus_error" and not _is_number(case["ground_truth"]):
        rules.append(Rule("ground_truth", f"{cat} needs a numeric ground_truth, got {case['ground_truth']!r:.60}"))
    expected = CATEGORY_RISK[cat]
    if case["expected_risk"] != expected:
        msg = f"{case['expected_risk']} departs from {expected}, the risk of category {cat}"
        rules.append(Rule("expected_risk", msg, warning=True))
    return rules


def agent_id_rules(case: dict[str, Any]) -> list[Rule]:
    """Agent ids must be unique within a case, and visibly so (`harness.cases.agent_ids`)."""
    ids = [str(a["agent_id"]) for a in case["answers"]]
    return [Rule(f"answers[{i}].agent_id", message) for i, message in agent_id_problems(ids)]


def check_case(case: dict[str, Any]) -> list[Rule]:
    """Every cross-field rule of the label scheme, for one schema-valid case."""
    return majority_rules(case) + category_rules(case) + agent_id_rules(case)


def _json(value: Any) -> str:
    return json.dumps(value)  # majority_correct as the case writes it: true, false or null


def origin_of(tags: tuple[str, ...] | list[str]) -> str:
    """A case's origin from its tags (``origin_natural``, ``origin_assembled``, ``origin_constructed``).

    A case with no such tag is ``unknown``. A case with several counts as the least real of them, so that a
    mislabelled constructed case can never enter the real subset.
    """
    found = [o for o in ORIGINS if f"origin_{o}" in tags]
    return found[-1] if found else UNKNOWN_ORIGIN


def case_labels(case: dict[str, Any], line: int, content_hash: str) -> CaseLabels:
    """The compact record of one schema-valid case that metrics and stats need."""
    answers = case["answers"]
    metas = [a.get("metadata") or {} for a in answers]
    families = [m["model_family"] for m in metas if "model_family" in m]
    source = case["source"]
    return CaseLabels(
        line=line,
        case_id=case["id"],
        content_hash=content_hash,
        category=case["category"],
        expected_risk=case["expected_risk"],
        majority_correct=case["majority_correct"],
        n_answers=len(answers),
        has_evidence=bool(case.get("evidence")),
        families=tuple(sorted(set(families))),
        families_complete=len(families) == len(answers),
        any_saw_other_answers=any(m.get("saw_other_answers") is True for m in metas),
        any_shared_context=any(m.get("shared_context") is True for m in metas),
        tags=tuple(case.get("tags", ())),
        source_dataset=source if isinstance(source, str) else source["dataset"],
        source_item=case["id"] if isinstance(source, str) else f"{source['dataset']}:{source['item']}",
    )
