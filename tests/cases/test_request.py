"""No label can reach a detector: requests are built from a whitelist, proved over generated valid cases."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cases.request import build_request
from harness.cases.validate import schema_errors

SENTINEL = "\u00a7"  # never produced for question, answer or evidence text below; planted in every label field
TEXT = st.text(st.characters(blacklist_characters=SENTINEL, blacklist_categories=("Cs",)), min_size=1, max_size=40)
LABEL_TEXT = TEXT.map(lambda s: SENTINEL + s)
CATEGORIES = [
    "majority_wrong_fact",
    "echo_cascade",
    "anchoring_injected_premise",
    "lone_correct_dissenter",
    "genuine_agreement_correct",
    "genuine_disagreement",
    "correct_but_unsupported",
    "numeric_consensus_error",
]

metadata = st.fixed_dictionaries(
    {},
    optional={
        "model_family": LABEL_TEXT,
        "saw_other_answers": st.booleans(),
        "shared_context": st.booleans(),
    },
)
answer = st.fixed_dictionaries(
    {"agent_id": TEXT, "text": TEXT, "correct": st.booleans()}, optional={"metadata": metadata}
)
source = st.one_of(
    st.just("original"),
    st.fixed_dictionaries(
        {
            "dataset": LABEL_TEXT,
            "license": st.sampled_from(["MIT", "Apache-2.0"]),
            "citation": LABEL_TEXT,
            "url": st.just("https://example.org/" + SENTINEL),
            "item": LABEL_TEXT,
        },
        optional={"modification": LABEL_TEXT},
    ),
)
case = st.fixed_dictionaries(
    {
        "id": st.from_regex(r"\AFCB-[0-9]{4}\Z"),
        "category": st.sampled_from(CATEGORIES),
        "question": TEXT,
        "answers": st.lists(answer, min_size=2, max_size=16, unique_by=lambda a: a["agent_id"]),
        "ground_truth": LABEL_TEXT,
        "expected_risk": st.sampled_from(["low", "medium", "high"]),
        "majority_correct": st.sampled_from([True, False, None]),
        "rationale": LABEL_TEXT,
        "source": source,
    },
    optional={
        "evidence": st.lists(TEXT, min_size=1, max_size=20),
        "tags": st.lists(st.from_regex(r"\A[a-z0-9_]{1,12}\Z"), unique=True, max_size=4),
    },
)


@settings(max_examples=300, deadline=None)
@given(case, st.booleans())
def test_request_holds_only_the_whitelist(c: dict, anonymize: bool) -> None:
    assert schema_errors(c) == []  # the strategy makes schema-valid cases
    request = build_request(c, anonymize_agents=anonymize)
    expected = {
        "task": c["question"],
        "answers": [
            {"agent_id": f"agent-{i}" if anonymize else a["agent_id"], "text": a["text"]}
            for i, a in enumerate(c["answers"], start=1)
        ],
    }
    if "evidence" in c:
        expected["evidence"] = c["evidence"]
    assert request == expected
    wire = orjson.dumps(request).decode()
    assert SENTINEL not in wire  # nothing of ground_truth, rationale, source or metadata
    assert set(request) <= {"task", "answers", "evidence"}
    assert all(set(a) == {"agent_id", "text"} for a in request["answers"])


def _case(**extra: object) -> dict:
    """A schema-valid case of three answers whose agent ids are not agent-1..3, with every label field filled."""
    case = {
        "id": "FCB-0101",
        "category": "lone_correct_dissenter",
        "question": "What is the capital of Australia?",
        "answers": [
            {"agent_id": "sydney-fan", "text": "Sydney.", "correct": False, "metadata": {"model_family": "fam-x"}},
            {"agent_id": "echo", "text": "It is Sydney.", "correct": False},
            {"agent_id": "loner", "text": "Canberra.", "correct": True},
        ],
        "ground_truth": "Canberra",
        "expected_risk": "high",
        "majority_correct": False,
        "rationale": "Two agents repeat a common mistake.",
        "source": "original",
        **extra,
    }
    assert schema_errors(case) == []
    return case


def test_agent_ids_are_kept_by_default() -> None:
    request = build_request(_case())  # no anonymize_agents: the case's own agent ids reach the detector
    assert request == {
        "task": "What is the capital of Australia?",
        "answers": [
            {"agent_id": "sydney-fan", "text": "Sydney."},
            {"agent_id": "echo", "text": "It is Sydney."},
            {"agent_id": "loner", "text": "Canberra."},
        ],
    }


def test_anonymized_agent_ids_count_from_one_in_answer_order() -> None:
    request = build_request(
        _case(evidence=["Canberra is the capital.", "Sydney is the largest city."]), anonymize_agents=True
    )
    assert request == {
        "task": "What is the capital of Australia?",
        "answers": [
            {"agent_id": "agent-1", "text": "Sydney."},
            {"agent_id": "agent-2", "text": "It is Sydney."},
            {"agent_id": "agent-3", "text": "Canberra."},
        ],
        "evidence": ["Canberra is the capital.", "Sydney is the largest city."],
    }
