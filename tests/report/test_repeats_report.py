"""The epochs and probes in the reports (`harness.report.repeats`): report.md's sections for a run with them and
none for a plain run, and the case explorer's view of a case that flipped: the variant, its epoch, both verdicts
and the order sent, checked against what a detector that reads only the first answer must have said."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from casegen import write_cases

from harness import evaluate
from harness.report.html import explorer_cases
from harness.report.repeats import annotate, item_views
from harness.runfolder.read import case_records, item_records

RISKS = ("low", "medium", "high")


def verdict(text: str) -> str:
    return RISKS[int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 3]


def first_only(request: dict) -> str:
    return verdict(request["answers"][0]["text"])


def _cases(path: Path) -> list[dict]:
    write_cases(path, 16)
    cases = [json.loads(line) for line in path.read_text().splitlines()]
    for case in cases:
        for k, answer in enumerate(case["answers"]):
            answer["text"] += f" ({k})"  # every answer its own text: every case has an order variant
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return cases


def test_a_probed_run_s_report_and_explorer_show_the_flips(tmp_path: Path) -> None:
    cases = _cases(tmp_path / "cases.jsonl")
    run = tmp_path / "run"
    evaluate(tmp_path / "cases.jsonl", first_only, out=str(run), epochs=2, probes=("order", "names"), n_boot=50)
    answers = {c["id"]: [a["text"] for a in c["answers"]] for c in cases}
    expected = set()  # (case, epoch) whose order variant's first answer gives another verdict than the case's own
    for line in (run / "predictions.jsonl").read_text().splitlines():
        rec = json.loads(line)
        if rec.get("variant") == "order":
            texts = answers[rec["id"]]
            if verdict(texts[rec["permutation"][0]]) != verdict(texts[0]):
                expected.add((rec["id"], rec["epoch"]))
    assert expected  # the fixture flips somewhere

    views = item_views(item_records(run))
    shown = {(cid, f["e"]) for cid, v in views.items() for f in v["fl"]}
    assert shown == expected
    for cid, view in views.items():
        assert view["ep"] == [verdict(answers[cid][0])] * 2  # each epoch's verdict
        for flip in view["fl"]:
            assert flip["v"] == "order"
            assert (flip["from"], flip["to"]) == (verdict(answers[cid][0]), verdict(answers[cid][flip["perm"][0]]))
    rows, _ = explorer_cases([case_records(run)], None)
    annotate(rows, views)
    flipped = {row["id"] for row in rows if row["p"][0].get("fl")}
    assert flipped == {cid for cid, _ in expected}

    report = (run / "report.md").read_text()
    assert "## Epochs" in report and "## Probes" in report and "Flip rate per category" in report
    order = json.loads((run / "metrics.json").read_text())["metrics"]["probes"]["order"]
    assert (order["flips"], order["n"]) == (len(expected), 32)
    assert re.search(rf"\| order +\| +16 +\| +32 +\| +{order['flips']} +\|", report)  # cases, pairs, flips
    assert "items run" in report
    page = (run / "report.html").read_text()
    assert "<h2>Epochs</h2>" in page and "<h2>Probes</h2>" in page and "<h3>Self-agreement</h3>" in page


def test_a_plain_run_s_report_has_no_epochs_or_probes(tmp_path: Path) -> None:
    _cases(tmp_path / "cases.jsonl")
    evaluate(tmp_path / "cases.jsonl", first_only, out=str(tmp_path / "run"), n_boot=50)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Epochs" not in report and "## Probes" not in report and "cases run" in report
    assert item_views(item_records(tmp_path / "run")) == {}
    assert "<h2>Probes</h2>" not in (tmp_path / "run" / "report.html").read_text()


def test_a_flip_rate_within_the_epochs_noise_is_said_to_be_no_evidence() -> None:
    """Issue 45, item 16: with --epochs 3 --probe all the summary printed an order flip rate beside the epochs'
    disagreement and no line saying that flips within that noise are not sensitivity to order."""
    from harness.report.repeats import noise_lines

    def probe(rate: float | None, ci: list[float] | None, noise: float | None) -> dict:
        return {"flip_rate": rate, "ci95": ci, "epoch_disagreement": noise}

    m = {"probes": {
        "order": probe(0.12, [0.05, 0.20], 0.14),  # its interval reaches below the noise: no evidence
        "names": probe(0.50, [0.40, 0.60], 0.10),  # wholly above it
        "evidence-order": probe(0.20, None, 0.10),  # no interval (no resamples): not claimed as evidence
    }}  # fmt: skip
    lines = noise_lines(m)  # type: ignore[arg-type]
    assert lines == [
        "order: flip rate 12.0% against epochs disagreeing on 14.0%, within the detector's own noise: no evidence of "
        "sensitivity to it",
        "names: flip rate 50.0% against epochs disagreeing on 10.0%, above the detector's own noise: the verdict "
        "depends on it",
        "evidence-order: flip rate 20.0% against epochs disagreeing on 10.0%, within the detector's own noise: no "
        "evidence of sensitivity to it",
    ]
    assert noise_lines({"probes": {"order": probe(0.3, [0.2, 0.4], None)}}) == []  # type: ignore[arg-type]  # one epoch
