"""The item stage (`harness.run.items`): one item a case for a plain run, with no item fields; with epochs and
probes, every (case, epoch, variant) in the file's order, the variants only where the case allows one, counted
apart otherwise; each item's request and journal fields."""

from __future__ import annotations

import json
from pathlib import Path

from harness.cases.reader import scan
from harness.run.items import build_item, plan_items
from harness.run.settings import EvalSettings
from harness.spec import parse_spec
from harness.types import ItemKey


def _case(i: int, texts: list[str], evidence: list[str] | None = None) -> dict:
    case = {
        "id": f"FCB-{i:04d}",
        "category": "genuine_agreement_correct",
        "question": f"Question {i}?",
        "answers": [{"agent_id": f"agent-{k}", "text": t, "correct": True} for k, t in enumerate(texts)],
        "ground_truth": "x",
        "expected_risk": "low",
        "majority_correct": True,
        "rationale": "r",
        "source": "original",
        "tags": [],
    }
    if evidence:
        case["evidence"] = evidence
    return case


def _scanned(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "cases.jsonl"
    cases = [_case(1, ["a", "b"], ["e1", "e2"]), _case(2, ["same", "same"]), _case(3, ["c", "d"], ["only"])]
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    scanned = scan(str(path), spool=True)
    assert not scanned.errors, scanned.problems
    return path, scanned


def test_a_plain_run_plans_one_item_a_case_and_writes_no_item_field(tmp_path: Path) -> None:
    path, scanned = _scanned(tmp_path)
    settings = EvalSettings(cases=str(path), detector=parse_spec("builtin:agreement"))
    plan = plan_items(settings, scanned.labels, scanned)
    assert [key for _, key in plan.items] == [ItemKey("FCB-0001"), ItemKey("FCB-0002"), ItemKey("FCB-0003")]
    request, fields = build_item(settings, scanned.case(scanned.labels[0].line), ItemKey("FCB-0001"))
    assert fields == {} and request["answers"][0] == {"agent_id": "agent-0", "text": "a"}
    scanned.close()


def test_epochs_and_probes_plan_every_possible_item_and_count_the_others_apart(tmp_path: Path) -> None:
    path, scanned = _scanned(tmp_path)
    settings = EvalSettings(
        cases=str(path), detector=parse_spec("builtin:agreement"), epochs=2, probes=("order", "evidence-order")
    )
    plan = plan_items(settings, scanned.labels, scanned)
    keys = [key for _, key in plan.items]
    assert keys == [
        ItemKey("FCB-0001", 1), ItemKey("FCB-0001", 1, "order"), ItemKey("FCB-0001", 1, "evidence-order"),
        ItemKey("FCB-0001", 2), ItemKey("FCB-0001", 2, "order"), ItemKey("FCB-0001", 2, "evidence-order"),
        ItemKey("FCB-0002", 1), ItemKey("FCB-0002", 2),  # every answer the same, no passages: no variant
        ItemKey("FCB-0003", 1), ItemKey("FCB-0003", 1, "order"),  # one passage: no evidence-order
        ItemKey("FCB-0003", 2), ItemKey("FCB-0003", 2, "order"),
    ]  # fmt: skip
    assert plan.not_possible == {"order": 1, "evidence-order": 2}
    case = scanned.case(scanned.labels[0].line)
    request, fields = build_item(settings, case, ItemKey("FCB-0001", 2, "evidence-order"))
    assert fields == {"epoch": 2, "variant": "evidence-order", "permutation": [1, 0]}
    assert request["evidence"] == ["e2", "e1"] and [a["text"] for a in request["answers"]] == ["a", "b"]
    _, plain_fields = build_item(settings, case, ItemKey("FCB-0001", 2))
    assert plain_fields == {"epoch": 2}
    scanned.close()


def test_one_epoch_with_a_probe_writes_the_variant_but_no_epoch(tmp_path: Path) -> None:
    path, scanned = _scanned(tmp_path)
    settings = EvalSettings(
        cases=str(path), detector=parse_spec("builtin:agreement"), probes=("names",), anonymize_agents=True
    )
    case = scanned.case(scanned.labels[0].line)
    request, fields = build_item(settings, case, ItemKey("FCB-0001", 1, "names"))
    assert fields == {"variant": "names"}
    assert sorted(a["agent_id"] for a in request["answers"]) == ["member-1", "member-2"]
    _, plain = build_item(settings, case, ItemKey("FCB-0001"))
    assert plain == {}
    scanned.close()
