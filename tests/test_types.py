"""The contract's types (`harness.types`) as a detector sees them."""

from __future__ import annotations


def test_a_request_requires_task_and_answers_and_evidence_is_optional() -> None:
    from harness.types import Request

    assert Request.__required_keys__ == {"task", "answers"}
    assert Request.__optional_keys__ == {"evidence"}
