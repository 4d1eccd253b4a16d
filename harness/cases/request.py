"""Turn a case into the request a detector sees, built from a whitelist so that no label can leak."""

from __future__ import annotations

from typing import Any

from harness.types import Answer, Request


def build_request(case: dict[str, Any], *, anonymize_agents: bool = False) -> Request:
    """The detector's view of a case: the question as ``task``, each answer's id and text, and the evidence.

    Nothing else of the case is copied: not the correct flags, metadata, ground truth, risk, category, id, tags,
    rationale or source. With ``anonymize_agents`` agent ids become ``agent-1`` .. ``agent-n`` in answer order.
    """
    answers: list[Answer] = [
        {"agent_id": f"agent-{i}" if anonymize_agents else str(a["agent_id"]), "text": str(a["text"])}
        for i, a in enumerate(case["answers"], start=1)
    ]
    request: Request = {"task": str(case["question"]), "answers": answers}
    if case.get("evidence"):
        request["evidence"] = [str(e) for e in case["evidence"]]
    return request
