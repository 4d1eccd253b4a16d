"""The Python API: evaluate() with a detector object, and the per-case DataFrame."""

from __future__ import annotations

from pathlib import Path

from casegen import write_cases
from conftest import read_jsonl

import harness
from harness.types import Prediction


class ByAnswerCount:
    """High when more than four answers, else low: its per-case results are known in advance."""

    name = "by-answer-count"

    async def assess(self, request):
        return Prediction("high" if len(request["answers"]) > 4 else "low", 0.9)

    async def aclose(self):
        return None


def test_evaluate_with_a_detector_object(tmp_path: Path) -> None:
    cases_path = write_cases(tmp_path / "cases.jsonl", 48)
    result = harness.evaluate(str(cases_path), ByAnswerCount(), results_root=str(tmp_path / "results"), n_boot=50)
    cases = read_jsonl(cases_path)
    expected_pred = {c["id"]: "high" if len(c["answers"]) > 4 else "low" for c in cases}
    frame = result.frame()
    assert len(frame) == 48 and set(frame["id"]) == set(expected_pred)
    assert dict(zip(frame["id"], frame["predicted_risk"], strict=True)) == expected_pred
    correct = sum(expected_pred[c["id"]] == c["expected_risk"] for c in cases)
    assert frame["correct"].sum() == correct
    assert result.metrics["metrics"]["accuracy"] == correct / 48
    assert result.complete and Path(result.run_dir, "metrics.json").exists()
    assert result.metrics["detector"]["spec"] == "by-answer-count"
