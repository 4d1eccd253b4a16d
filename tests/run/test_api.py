"""The Python API: evaluate() with a detector object, and the per-case DataFrame."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

import harness
from harness.errors import FcbError, UsageError
from harness.run.runner import RunError
from harness.types import Prediction

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


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
    assert result.document["metrics"]["accuracy"] == correct / 48
    assert result.complete and Path(result.run_dir, "metrics.json").exists()
    assert result.document["detector"]["spec"] == "by-answer-count"


def _expected(cases_path: Path) -> dict[str, str]:
    return {c["id"]: "high" if len(c["answers"]) > 4 else "low" for c in read_jsonl(cases_path)}


def plain_function(request):
    return {"false_consensus_risk": "high" if len(request["answers"]) > 4 else "low", "risk_score": 0.5}


async def async_function(request):
    return "high" if len(request["answers"]) > 4 else "low"


class SyncAssess:
    """A plain ``assess`` method returning the documented reply dict."""

    def __init__(self) -> None:
        self.closed = False

    def assess(self, request):
        return {"false_consensus_risk": "high" if len(request["answers"]) > 4 else "low"}

    def aclose(self):
        self.closed = True


@pytest.mark.parametrize("form", ["plain function", "async function", "sync assess object", "spec string"])
def test_every_documented_detector_form_runs_through_the_adapters(tmp_path: Path, form: str) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 24)
    det = tmp_path / "det.py"
    det.write_text(
        "def assess(request):\n    return 'high' if len(request['answers']) > 4 else 'low'\n", encoding="utf-8"
    )
    detectors = {
        "plain function": plain_function,
        "async function": async_function,
        "sync assess object": SyncAssess(),
        "spec string": f"{det}:assess",
    }
    detector = detectors[form]
    result = harness.evaluate(
        cases, detector, name="mine", concurrency=4, timeout=5, retries=0, results_root=str(tmp_path / "r"), n_boot=50
    )
    frame = result.frame()
    assert dict(zip(frame["id"], frame["predicted_risk"], strict=True)) == _expected(cases)
    assert result.complete and result.document["detector"]["label"] == "mine"
    assert result.document["settings"]["concurrency"] == 4
    if form == "sync assess object":
        assert detector.closed  # the object's aclose ran at the end
    loaded = harness.load_run(result.run_dir)
    assert loaded.document == result.document and loaded.complete
    assert loaded.frame().equals(frame)


def test_anything_else_is_refused_at_once(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 4)

    def two_arguments(request, extra):
        return "low"

    for bad, words in [
        (42, "got int"),
        (SyncAssess, "is a class"),
        (two_arguments, "must take one argument"),
    ]:
        with pytest.raises(TypeError, match=words):
            harness.evaluate(cases, bad, results_root=str(tmp_path / "r"))
    with pytest.raises(TypeError, match="no setting 'concurrencyy'"):
        harness.evaluate(cases, "builtin:agreement", concurrencyy=4, results_root=str(tmp_path / "r"))
    assert not (tmp_path / "r").exists()


def test_a_function_that_always_raises_stops_at_the_preflight(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 8)

    def broken(request):
        raise ValueError("boom")

    with pytest.raises(RunError, match=r"preflight.*ValueError: boom"):
        harness.evaluate(cases, broken, results_root=str(tmp_path / "r"))


def test_category_and_tag_subsets_are_data_sets_of_their_own(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 48)
    rows = read_jsonl(cases)
    chosen = [c for c in rows if c["category"] in ("echo_cascade", "genuine_disagreement") and "group_1" in c["tags"]]
    out = tmp_path / "subset"
    proc = run_cli(
        "eval", str(cases), "-d", "builtin:agreement", "--category", "echo_cascade",
        "--category", "genuine_disagreement", "--tag", "group_1", "--out", str(out), "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["metrics"]["n_cases"] == len(chosen) > 0 and doc["complete"]
    assert {r["id"] for r in read_jsonl(out / "predictions.jsonl")} == {c["id"] for c in chosen}
    whole = hashlib.sha256(cases.read_bytes()).hexdigest()
    assert doc["dataset"]["file_sha256"] == whole and doc["dataset"]["sha256"] != whole
    assert doc["dataset"]["name"] == "cases.jsonl [category=echo_cascade,genuine_disagreement; tag=group_1]"
    bad = run_cli("eval", str(cases), "--category", "nonsense", "-q", "--results", str(tmp_path / "r"))
    assert bad.returncode == 2 and "not a category" in bad.stderr


def test_a_missing_cases_file_is_an_fcb_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(FcbError, match=r"missing\.jsonl"):
        harness.evaluate(missing, "builtin:always-low", out=str(tmp_path / "run"))


def test_the_lazy_api_is_listed_by_dir() -> None:
    assert {"evaluate", "evaluate_async", "load_run", "EvalSettings"} <= set(dir(harness))


def test_evaluate_inside_a_running_loop_points_to_evaluate_async(tmp_path: Path) -> None:
    import asyncio
    import warnings

    cases = write_cases(tmp_path / "cases.jsonl", 4)

    async def notebook_cell() -> None:
        harness.evaluate(cases, "builtin:always-low", out=str(tmp_path / "run"))

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a coroutine left never awaited warns: it must not exist at all
        with pytest.raises(UsageError, match="evaluate_async"):
            asyncio.run(notebook_cell())
    assert not (tmp_path / "run").exists()


def test_the_frame_holds_question_reply_reason_and_origin(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    rows = read_jsonl(cases)
    rows[0]["tags"] = [*rows[0].get("tags", []), "origin_natural"]
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))

    def explain(request: dict) -> dict:
        return {"false_consensus_risk": "low", "reason": f"{len(request['answers'])} answers", "seen": request["task"]}

    result = harness.evaluate(cases, explain, out=str(tmp_path / "run"))
    for frame in (result.frame(), harness.load_run(tmp_path / "run").frame()):
        by_id = frame.set_index("id")
        for case in rows:
            row = by_id.loc[case["id"]]
            assert row["question"] == case["question"]
            assert row["reason"] == f"{len(case['answers'])} answers"
            assert row["reply"]["seen"] == case["question"]  # the reply as the detector gave it
        assert by_id.loc[rows[0]["id"], "origin"] == "natural"
        assert by_id["origin"].isna().sum() == len(rows) - 1


def test_the_frame_shows_no_question_from_a_cases_file_changed_since_the_run(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 6)
    result = harness.evaluate(cases, lambda request: "low", out=str(tmp_path / "run"))
    assert result.frame()["question"].notna().all()
    rows = read_jsonl(cases)
    rows[2]["question"] = "another question"  # the file is no longer the one the run read
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows))
    frame = result.frame()  # (load_run refuses the changed file outright)
    assert "question" not in frame or frame["question"].isna().all()
    assert len(frame) == 6 and (frame["predicted_risk"] == "low").all()  # the figures stand
