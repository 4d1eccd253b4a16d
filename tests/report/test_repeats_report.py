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
from harness.report.html import explorer_rows
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
    made, _ = explorer_rows([case_records(run)], None)
    rows = list(made)
    annotate(rows, views)
    flipped = {row["id"] for row in rows if row["p"][0].get("fl")}
    assert flipped == {cid for cid, _ in expected}

    report = (run / "report.md").read_text()
    assert "## Epochs" in report and "## Probes: the robustness card" in report
    assert "Each probe's figure per category" in report
    order = json.loads((run / "metrics.json").read_text())["metrics"]["probes"]["order"]
    assert (order["flips"], order["n"]) == (len(expected), 32)
    # the card's row: the figure, flips of pairs, then (after the moves) the cases
    flips = order["flips"]
    assert re.search(rf"\| order +\| not move +\| flip rate +\| [0-9.]+% \({flips}/32\) +\|.*\| +16 +\| +0 +\|", report)
    assert "items run" in report
    page = (run / "report.html").read_text()
    assert "<h2>Epochs</h2>" in page and "<h3>Self-agreement</h3>" in page
    assert "<h2>Probes: the robustness card</h2>" in page


def test_a_plain_run_s_report_has_no_epochs_or_probes(tmp_path: Path) -> None:
    _cases(tmp_path / "cases.jsonl")
    evaluate(tmp_path / "cases.jsonl", first_only, out=str(tmp_path / "run"), n_boot=50)
    report = (tmp_path / "run" / "report.md").read_text()
    assert "## Epochs" not in report and "## Probes" not in report and "cases run" in report
    assert item_views(item_records(tmp_path / "run")) == {}
    assert "<h2>Probes: the robustness card</h2>" not in (tmp_path / "run" / "report.html").read_text()


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


# --- every column of the epochs and probes tables read back against the figures (issue 46) -----------------------

from harness.report.repeats import (  # noqa: E402
    AGREEMENT_HEADER,
    EPOCH_HEADER,
    PROBE_HEADER,
    PROBES_NOTE,
    agreement_rows,
    epoch_rows,
    epochs_note,
    noise_lines,
    probe_category_rows,
    probe_rows,
    style_rows,
)
from harness.types import ItemKey  # noqa: E402


def epochs_block(reducer: str = "mode") -> dict:
    """Two epochs with figures chosen apart so that a column taken from the wrong figure shows."""
    e1 = {"epoch": 1, "n_cases": 16, "accuracy": 0.5, "macro_f1": 0.25, "high_risk_recall": 0.75,
          "false_alarm_rate": 0.125, "error_rate": 0.0625}  # fmt: skip
    e2 = {"epoch": 2, "n_cases": 15, "accuracy": 0.625, "macro_f1": 0.375, "high_risk_recall": 0.875,
          "false_alarm_rate": 0.0, "error_rate": 0.1875}  # fmt: skip
    # mean of the two and the sd (n - 1): |difference| / sqrt(2); accuracy: mean 0.5625, sd 0.125 / 1.41421 = 0.0884
    spread = {name: {"mean": (e1[name] + e2[name]) / 2, "sd": abs(e1[name] - e2[name]) / 2**0.5}
              for name in ("accuracy", "macro_f1", "high_risk_recall", "false_alarm_rate", "error_rate")}  # fmt: skip
    return {
        "n": 2,
        "reducer": reducer,
        "per_epoch": [e1, e2],
        "spread": spread,
        "self_agreement": {
            "n_cases": 14,
            "all_agree": 0.8125,
            "all_agree_ci95": [0.625, 0.9375],
            "pairwise": 0.875,
            "fleiss_kappa": 0.6,
        },
    }


def test_the_epochs_table_reads_back_every_figure() -> None:
    assert EPOCH_HEADER == ["epoch", "cases", "accuracy", "macro_f1", "high_risk_recall", "false_alarm_rate",
                            "error_rate"]  # fmt: skip
    rows = epoch_rows({"epochs": epochs_block()})  # type: ignore[arg-type, typeddict-item]
    assert rows == [
        ["1", "16", "0.500", "0.250", "0.750", "0.125", "0.062"],  # 0.0625 to three decimals: half to even, 0.062
        ["2", "15", "0.625", "0.375", "0.875", "0.000", "0.188"],
        # means: 0.5625, 0.3125, 0.8125, 0.0625, 0.125; their three-decimal forms
        ["mean", "", "0.562", "0.312", "0.812", "0.062", "0.125"],
        # sd: each pair differs by 0.125 (0.125 / 1.41421 = 0.0884) but error rate, 0.125 too: all 0.088
        ["sd", "", "0.088", "0.088", "0.088", "0.088", "0.088"],
    ]
    block = epochs_block()
    block["spread"]["error_rate"] = {"mean": None, "sd": None}  # one epoch without a figure: n/a, never 0
    assert epoch_rows({"epochs": block})[2:] == [  # type: ignore[arg-type, typeddict-item]
        ["mean", "", "0.562", "0.312", "0.812", "0.062", "n/a"],
        ["sd", "", "0.088", "0.088", "0.088", "0.088", "n/a"],
    ]
    assert epoch_rows({}) == [] and agreement_rows({}) == [] and epochs_note({}) == ""  # type: ignore[typeddict-item]


def test_the_self_agreement_row() -> None:
    assert AGREEMENT_HEADER == ["cases", "all epochs agree", "95% CI", "pairwise agreement", "Fleiss' kappa"]
    rows = agreement_rows({"epochs": epochs_block()})  # type: ignore[arg-type, typeddict-item]
    assert rows == [["14", "81.2%", "[62.5%, 93.8%]", "87.5%", "0.600"]]
    block = epochs_block()
    block["self_agreement"] |= {"all_agree_ci95": None, "fleiss_kappa": None}
    assert agreement_rows({"epochs": block}) == [["14", "81.2%", "", "87.5%", "n/a"]]  # type: ignore[arg-type, typeddict-item]


def test_the_epochs_note_names_the_reducer() -> None:
    note = epochs_note({"epochs": epochs_block("mode")})  # type: ignore[arg-type, typeddict-item]
    assert note == (
        "Every case was asked 2 times. The headline counts one verdict a case: the most frequent verdict of the "
        "answered epochs, a tie going to the earliest epoch's (--epoch-reducer mode); its risk_score is the mean of "
        "the epochs' scores. An error counts as a verdict of its own in the agreement figures."
    )
    note = epochs_note({"epochs": epochs_block("first")})  # type: ignore[arg-type, typeddict-item]
    assert "counts one verdict a case: epoch 1's verdict as it is (--epoch-reducer first)" in note


def probe(flips: int, n: int, ci: list[float] | None, noise: float | None, **more: object) -> dict:
    block = {
        "n_cases": 16,
        "n": n,
        "flips": flips,
        "flip_rate": flips / n if n else None,
        "ci95": ci,
        "order_informative": {
            "saw_other_answers": {"flip_rate": 0.3, "flips": 3, "n": 10},
            "independent": {"flip_rate": 1 / 6, "flips": 1, "n": 6},
        },
        "mean_score_change": -0.046875,  # -3/64, exact: -0.047
        "epoch_disagreement": noise,
        "not_possible": 2,
        "per_category": {"copied": {"flip_rate": 0.5, "flips": 2, "n": 4}, "sound": {"flip_rate": 0.0, "flips": 0,
                                                                                      "n": 3}},
    }  # fmt: skip
    return block | more


MOVES = {"low": {"low": 5, "medium": 1, "high": 2}, "medium": {"low": 0, "medium": 3, "high": 0},
         "high": {"low": 3, "medium": 1, "high": 1}}  # fmt: skip


def test_the_probes_table_reads_back_every_column() -> None:
    assert PROBE_HEADER == ["probe", "the verdict should", "figure", "rate", "95% CI", "lowered", "raised",
                            "high to low", "low to high", "cases", "no variant", "epochs disagree"]  # fmt: skip
    m = {"probes": {
        "order": probe(4, 16, [0.0625, 0.5], 0.125, transitions=MOVES, lowered=5, raised=3, expectation="unchanged"),
        "names": probe(0, 32, None, None, n_cases=12, not_possible=0, mean_score_change=None),
        # inject's figure is its fall rate (3 of 8 lowered), not its flip rate (4 of 16)
        "inject": probe(4, 16, [0.1, 0.4], None, expectation="not lower", falls={
            "n": 8, "falls": 3, "fall_rate": 0.375, "ci95": [0.125, 0.625], "per_category": {}, "per_style": {}}),
    }}  # fmt: skip
    rows = probe_rows(m)  # type: ignore[arg-type]
    assert [dict(zip(PROBE_HEADER, row, strict=True)) for row in rows] == [
        # order: 4 flips of 16 pairs, 25.0%, [6.2%, 50.0%]; high to low 3, low to high 2 (MOVES)
        {"probe": "order", "the verdict should": "not move", "figure": "flip rate", "rate": "25.0% (4/16)",
         "95% CI": "[6.2%, 50.0%]", "lowered": "5", "raised": "3", "high to low": "3", "low to high": "2",
         "cases": "16", "no variant": "2", "epochs disagree": "12.5%"},
        # names: no flip of 32 pairs; no noise figure (one epoch): an empty cell, not 0.0%; no moves recorded
        {"probe": "names", "the verdict should": "not move", "figure": "flip rate", "rate": "0.0% (0/32)",
         "95% CI": "", "lowered": "", "raised": "", "high to low": "", "low to high": "", "cases": "12",
         "no variant": "0", "epochs disagree": ""},
        {"probe": "inject", "the verdict should": "not be lowered", "figure": "attack success rate",
         "rate": "37.5% (3/8)", "95% CI": "[12.5%, 62.5%]", "lowered": "", "raised": "", "high to low": "",
         "low to high": "", "cases": "16", "no variant": "2", "epochs disagree": ""},
    ]  # fmt: skip
    # a noise of exactly 0 is a figure: 0.0%
    assert probe_rows({"probes": {"order": probe(1, 4, None, 0.0)}})[0][11] == "0.0%"  # type: ignore[arg-type]
    assert probe_rows({}) == [] and probe_rows({"probes": None}) == []  # type: ignore[arg-type, typeddict-item]


def test_the_rows_per_tone_and_template() -> None:
    tone = probe(4, 16, None, None, per_style={"confident": {"n": 8, "flips": 1, "flip_rate": 0.125, "ci95": None},
                                               "hedging": {"n": 8, "flips": 3, "flip_rate": 0.375,
                                                           "ci95": [0.125, 0.625]}})  # fmt: skip
    plain = {"n": 4, "falls": 1, "fall_rate": 0.25, "ci95": [0.0, 0.5]}
    inject = probe(0, 4, None, None, per_style={"plain": {"n": 4, "flips": 0, "flip_rate": 0.0, "ci95": None}},
                   falls={"per_style": {"plain": plain}, "per_category": {}})  # fmt: skip
    rows = style_rows({"probes": {"tone": tone, "inject": inject, "order": probe(0, 4, None, None)}})  # type: ignore[arg-type]
    assert rows == [
        ["tone", "confident", "flip rate", "12.5% (1/8)", ""],
        ["tone", "hedging", "flip rate", "37.5% (3/8)", "[12.5%, 62.5%]"],
        ["inject", "plain", "attack success rate", "25.0% (1/4)", "[0.0%, 50.0%]"],  # the falls, not the flips
    ]
    assert style_rows({}) == []  # type: ignore[arg-type]


def test_the_flip_rate_per_category() -> None:
    order = probe(4, 16, None, None)
    names = probe(1, 8, None, None, per_category={"bias": {"flip_rate": 0.25, "flips": 1, "n": 4},
                                                  "copied": {"flip_rate": 0.0, "flips": 0, "n": 5}})  # fmt: skip
    duplicate = probe(1, 8, None, None, falls={"per_category": {"copied": {"fall_rate": 0.5, "falls": 1, "n": 2,
                                                                           "ci95": None}}})  # fmt: skip
    header, rows = probe_category_rows({"probes": {"order": order, "names": names, "duplicate": duplicate}})  # type: ignore[arg-type]
    assert header == ["category", "order", "names", "duplicate"]
    # categories sorted; a category a probe did not see: an empty cell; duplicate's cells are its falls
    assert rows == [
        ["bias", "", "25.0% (1/4)", ""],
        ["copied", "50.0% (2/4)", "0.0% (0/5)", "50.0% (1/2)"],
        ["sound", "0.0% (0/3)", "", ""],
        # then the split by whether an agent saw the others' answers (the fixture's 3/10 and 1/6), not for falls
        ["(an agent saw others' answers)", "30.0% (3/10)", "30.0% (3/10)", ""],
        ["(independent answers)", "16.7% (1/6)", "16.7% (1/6)", ""],
    ]
    assert probe_category_rows({}) == (["category"], [])  # type: ignore[arg-type]


def test_the_noise_line_at_its_boundary() -> None:
    # the interval's lower bound exactly at the noise (0.25 <= 0.25): within the noise; just above it: above
    at = noise_lines({"probes": {"order": probe(8, 16, [0.25, 0.75], 0.25)}})  # type: ignore[arg-type]
    assert at == ["order: flip rate 50.0% against epochs disagreeing on 25.0%, within the detector's own noise: no "
                  "evidence of sensitivity to it"]  # fmt: skip
    above = noise_lines({"probes": {"order": probe(8, 16, [0.2501, 0.75], 0.25)}})  # type: ignore[arg-type]
    assert above == ["order: flip rate 50.0% against epochs disagreeing on 25.0%, above the detector's own noise: "
                     "the verdict depends on it"]  # fmt: skip
    # no pairs (flip rate None): no line; a noise of exactly 0 is a figure: a line
    assert noise_lines({"probes": {"order": probe(0, 0, None, 0.1)}}) == []  # type: ignore[arg-type]
    zero = noise_lines({"probes": {"order": probe(2, 16, [0.0625, 0.25], 0.0)}})  # type: ignore[arg-type]
    assert zero == ["order: flip rate 12.5% against epochs disagreeing on 0.0%, above the detector's own noise: the "
                    "verdict depends on it"]  # fmt: skip
    assert noise_lines({}) == []  # type: ignore[typeddict-item]
    # a probe without pairs before one with them: the second's line is still written
    both = {"order": probe(0, 0, None, 0.1), "names": probe(8, 16, [0.25, 0.75], 0.25)}
    assert [line[:6] for line in noise_lines({"probes": both})] == ["names:"]  # type: ignore[arg-type]


def test_the_probes_note_names_each_probe() -> None:
    assert PROBES_NOTE.startswith("Besides each request as it is, each probe asked a variant of it: order, its "
                                  "answers in another order; names, its agent ids renamed; evidence-order, its "
                                  "passages in another order; format, its answers reformatted; tone, ")  # fmt: skip
    for probe_name in ("length", "restate", "inject", "duplicate"):
        assert f"; {probe_name}, " in PROBES_NOTE
    assert "inject's attack success rate is the share of its pairs" in PROBES_NOTE
    assert "'epochs disagree' is the share of pairs of epochs of the unchanged request that differ" in PROBES_NOTE


def rec(risk: str | None, **more: object) -> dict:
    return {"risk": risk, **more}


def test_item_views_of_epochs_and_flips() -> None:
    records = {
        ItemKey("a", 2): rec("high"),
        ItemKey("a", 1): rec("low"),
        ItemKey("a", 1, "order"): rec("high", permutation=[1, 0]),  # a flip in epoch 1
        ItemKey("a", 2, "order"): rec("high", permutation=[1, 0]),  # the same verdict as epoch 2's: no flip
        ItemKey("a", 2, "names"): rec("medium"),  # a flip without a permutation
        ItemKey("b", 1): rec(None),  # an error: its epoch shows None
        ItemKey("b", 1, "order"): rec("low"),  # against an error: no flip
        ItemKey("b", 2): rec("low"),
        ItemKey("b", 2, "order"): rec(None),  # an error of the variant: no flip
        ItemKey("c", 1, "order"): rec("low"),  # no plain record to compare with
    }
    views = item_views(records)  # type: ignore[arg-type]
    assert views == {
        "a": {"ep": ["low", "high"],
              "fl": [{"v": "order", "e": 1, "from": "low", "to": "high", "perm": [1, 0]},
                     {"v": "names", "e": 2, "from": "high", "to": "medium"}]},
        "b": {"ep": [None, "low"], "fl": []},
        "c": {"ep": [], "fl": []},
    }  # fmt: skip
    # one epoch, no variant: a plain run, no view; epoch 2 alone is not plain
    assert item_views({ItemKey("a"): rec("low"), ItemKey("b"): rec("high")}) == {}  # type: ignore[arg-type]
    assert item_views({ItemKey("a", 2): rec("low")}) == {"a": {"ep": ["low"], "fl": []}}  # type: ignore[arg-type]
    assert item_views({}) == {}


def test_annotate_adds_non_empty_views_to_the_first_prediction() -> None:
    rows = [
        {"id": "a", "p": [{"r": "low"}, {"r": "high"}]},
        {"id": "b", "p": [{"r": "low"}]},
        {"id": "c", "p": [None]},  # no prediction in the first run: left alone
        {"id": "d", "p": []},
        {"id": "e", "p": [{"r": "low"}]},  # no view
    ]
    views = {"a": {"ep": ["low", "high"], "fl": []}, "b": {"ep": [], "fl": [{"v": "order"}]},
             "c": {"ep": ["low"], "fl": []}, "d": {"ep": ["low"], "fl": []}}  # fmt: skip
    annotate(rows, views)
    assert rows == [
        {"id": "a", "p": [{"r": "low", "ep": ["low", "high"]}, {"r": "high"}]},
        {"id": "b", "p": [{"r": "low", "fl": [{"v": "order"}]}]},
        {"id": "c", "p": [None]},
        {"id": "d", "p": []},
        {"id": "e", "p": [{"r": "low"}]},
    ]
