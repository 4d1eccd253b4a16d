"""The text and Markdown report of a run (harness/report/text.py) read back against the metrics it shows: a metrics
document written by hand (every figure chosen, not computed), rendered, each table parsed and each cell compared
with the figure it comes from, as the report writes it (three decimals, a share as a percentage with one decimal)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.report import text
from harness.report.text import (
    calibration_note,
    calibration_rows,
    category_rows,
    class_rows,
    confusion_rows,
    consensus_rows,
    error_message_rows,
    group_rows,
    headline_rows,
    headline_table,
    operational_rows,
    origin_rows,
    render_markdown,
    render_summary,
    write_reports,
)


def headline(n: int, acc: float, f1: float, kappa: float, recall: float, alarm: float, err: float) -> dict[str, Any]:
    return {
        "n_cases": n,
        "accuracy": acc,
        "accuracy_ci95": [acc - 0.125, acc + 0.0625],
        "macro_f1": f1,
        "macro_f1_ci95": [f1 - 0.25, f1 + 0.125],
        "weighted_kappa": kappa,
        "high_risk_recall": recall,
        "false_alarm_rate": alarm,
        "error_rate": err,
    }


def metrics() -> dict[str, Any]:
    m = headline(16, 0.625, 0.5834, 0.3125, 0.8, 0.125, 0.0625)
    m |= {
        "n_not_run": 2,
        "confusion_matrix": {
            "rows": ["low", "medium", "high"],
            "columns": ["low", "medium", "high", "error"],
            "counts": [[3, 1, 0, 1], [1, 2, 1, 0], [0, 1, 4, 0]],
        },
        "per_class": {
            "low": {"precision": 0.75, "recall": 0.6, "f1": 0.6667, "support": 5},
            "medium": {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 4},
            "high": {"precision": 0.8, "recall": 0.8, "f1": 0.8, "support": 5},
        },
        "consensus": {
            "n_wrong": 6,
            "wrong_caught": 0.5,
            "wrong_caught_ci95": [0.25, 0.75],
            "n_right": 4,
            "right_alarmed": 0.25,
            "right_alarmed_ci95": [0.05, 0.6],
            "balanced_accuracy": 0.625,
            "balanced_accuracy_ci95": [0.4, 0.8],
            "n_scored": 10,
            "roc_auc": 0.7,
            "roc_auc_ci95": [0.5, 0.9],
        },
        "scores": {
            "n_scored": 14,
            "roc_auc": 0.81,
            "average_precision": 0.77,
            "brier": 0.19,
            "calibration": {
                "bins": 3,
                "ece": 0.05,
                "ece_ci95": [0.01, 0.12],
                "diagram": [
                    {"lower": 0.0, "upper": 1 / 3, "count": 6, "mean_score": 0.25, "share_high": 1 / 6},
                    {"lower": 1 / 3, "upper": 2 / 3, "count": 0, "mean_score": None, "share_high": None},
                    {"lower": 2 / 3, "upper": 1.0, "count": 8, "mean_score": 0.8, "share_high": 0.875},
                ],
            },
        },
        "per_category": {
            "copied": {
                "expected_risk": "high",
                "n": 4,
                "accuracy": 0.75,
                "ci95": [0.3, 0.95],
                "predicted": {"low": 1, "medium": 0, "high": 3, "error": 0},
            },
            "sound": {
                "expected_risk": "low",
                "n": 5,
                "accuracy": 0.6,
                "ci95": [0.2, 0.9],
                "predicted": {"low": 3, "medium": 1, "high": 0, "error": 1},
            },
        },
        "breakdowns": {
            "model_family": {
                "gpt": {"n": 3, "accuracy": 2 / 3, "ci95": [0.2, 0.95]},
                "a|b": {"n": 1, "accuracy": 0.0, "ci95": [0.0, 0.8]},
            },
            "origin": {"origin_natural": {"n": 6, "accuracy": 0.5, "ci95": [0.2, 0.8]}},
        },
        "headline_real": headline(10, 0.7, 0.61, 0.4, 0.9, 0.1, 0.05),
        "headline_natural": headline(6, 0.5, 0.45, 0.2, 0.75, 0.25, 0.0),
        "operational": {
            "cases": 16,
            "errors": 1,
            "errors_by_kind": {"timeout": 1, "http": 2},
            "retries": 3,
            "wall_s": 12.5,
            "cases_per_s": 1.296,
            "latency_s": {"p50": 0.1234, "p90": 0.5, "p99": 1.0},
            "tokens": {"prompt": 1234, "completion": 56, "total": 1290, "cost_usd": 0.01234},
            "cached": 2,
            "error_messages": [{"count": 1, "kind": "timeout", "message": "read\n timed   out |x|", "case_id": "c|1"}],
        },
        "bootstrap": {"resamples": 1000, "seed": 7, "method": "percentile"},
    }
    return m


def document(m: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "metrics_version": 3,
        "harness_version": "9.8.7",
        "created": "2026-12-05T01:02:03Z",
        "complete": False,
        "dataset": {
            "path": "cases.jsonl",
            "name": "demo",
            "sha256": "abcdef0123456789" * 4,
            "cases": 16,
            "skipped_invalid": 3,
            "problems": ["line 3: *bad*"],
        },
        "detector": {
            "spec": "builtin:heuristic",
            "name": "heuristic",
            "label": "mine",
            "fingerprint": {
                "kind": "python",
                "module_sha256": "0123456789abcdefff",
                "version": "1.2",
                "args": {"k": 1},
            },
        },
        "settings": {},
        "metrics": metrics() if m is None else m,
    }


def md_tables(markdown: str) -> list[list[list[str]]]:
    """Every GitHub table in ``markdown``: rows of cells (header first, the --- line left out), escapes undone."""
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if current is None:
                current = []
                tables.append(current)
            if not all(re.fullmatch(r":?-+:?", c) for c in cells):
                current.append([re.sub(r"\\([!-/:-@[-`{-~])", r"\1", c) for c in cells])
        else:
            current = None
    return tables


def md_table(markdown: str, first_header: str) -> list[list[str]]:
    (found,) = [t for t in md_tables(markdown) if t[0][0] == first_header]
    return found


def simple_tables(summary: str) -> list[list[list[str]]]:
    """Every tabulate "simple" table of the summary: columns found from its dashes line."""
    out = []
    for block in summary.split("\n\n"):
        lines = block.splitlines()
        dash = next((k for k, line in enumerate(lines) if re.fullmatch(r"-+( +-+)*", line)), None)
        if dash is None:
            continue
        spans = [m.span() for m in re.finditer(r"-+", lines[dash])]
        rows = [lines[k] for k in range(len(lines)) if k != dash and not re.fullmatch(r"[- ]+", lines[k])]
        out.append([[line[a:b].strip() if k < len(spans) - 1 else line[a:].strip() for k, (a, b) in enumerate(spans)]
                    for line in rows])  # fmt: skip
    return out


def by_first(rows: list[list[str]]) -> dict[str, list[str]]:
    return {row[0]: row[1:] for row in rows}


# --- the headline ------------------------------------------------------------------------------------------------


def test_the_headline_rows_show_each_figure_of_its_block() -> None:
    rows = by_first(headline_rows(metrics()))  # type: ignore[arg-type]
    # accuracy 0.625 -> 62.5%, its interval [0.5, 0.6875] -> [50.0%, 68.8%]; macro-F1 [0.3334, 0.7084]
    assert rows["accuracy"] == ["62.5%", "[50.0%, 68.8%]"]
    assert rows["macro-F1"] == ["0.583", "[0.333, 0.708]"]
    assert rows["weighted kappa (quadratic)"] == ["0.312", ""]  # 0.3125 to three decimals, half to even
    assert rows["high-risk recall"] == ["80.0%", ""]
    assert rows["false-alarm rate (low called high)"] == ["12.5%", ""]
    assert rows["error rate"] == ["6.2%", ""]  # 0.0625 -> 6.25 -> 6.2 (the double is just below)
    # consensus: the counts in the labels, shares as percentages, balanced accuracy and ROC-AUC as figures
    assert rows["wrong consensus called high (6 cases)"] == ["50.0%", "[25.0%, 75.0%]"]
    assert rows["right consensus called high (4 cases)"] == ["25.0%", "[5.0%, 60.0%]"]
    assert rows["consensus balanced accuracy"] == ["0.625", "[0.400, 0.800]"]
    assert rows["consensus ROC-AUC, wrong vs right (n=10)"] == ["0.700", "[0.500, 0.900]"]
    # the scores of every case (n=14)
    assert rows["ROC-AUC, high vs rest (n=14)"] == ["0.810", ""]
    assert rows["average precision, high vs rest"] == ["0.770", ""]
    assert rows["Brier score, high vs rest"] == ["0.190", ""]
    assert rows["ECE, high vs rest (3 bins)"] == ["0.050", "[0.010, 0.120]"]
    # in this order: the core six, the consensus four, the scores four
    assert list(rows)[:6] == ["accuracy", "macro-F1", "weighted kappa (quadratic)", "high-risk recall",
                              "false-alarm rate (low called high)", "error rate"]  # fmt: skip
    assert len(rows) == 14


def test_the_headline_without_intervals_scores_or_consensus() -> None:
    m = metrics()
    del m["accuracy_ci95"], m["macro_f1_ci95"], m["consensus"], m["scores"]
    rows = by_first(headline_rows(m))  # type: ignore[arg-type]
    assert rows["accuracy"] == ["62.5%", ""] and rows["macro-F1"] == ["0.583", ""]
    assert len(rows) == 6
    # a stored error rate of None (no case) shows n/a; a document without one counts errors / cases: 3 / 12 = 25%
    m["error_rate"] = None
    assert by_first(headline_rows(m))["error rate"] == ["n/a", ""]  # type: ignore[arg-type]
    del m["error_rate"]
    m["operational"] = {"errors": 3, "cases": 12}
    assert by_first(headline_rows(m))["error rate"] == ["25.0%", ""]  # type: ignore[arg-type]


def test_consensus_rows_leave_out_the_roc_row_without_scored_cases() -> None:
    m = metrics()
    m["consensus"]["n_scored"] = 0
    rows = consensus_rows(m)  # type: ignore[arg-type]
    assert [r[0] for r in rows] == ["wrong consensus called high (6 cases)", "right consensus called high (4 cases)",
                                    "consensus balanced accuracy"]  # fmt: skip
    m["consensus"] = None
    assert consensus_rows(m) == []  # type: ignore[arg-type]
    del m["consensus"]
    assert consensus_rows(m) == []  # type: ignore[arg-type]


def test_an_ece_without_an_interval_shows_none() -> None:
    m = metrics()
    del m["scores"]["calibration"]["ece_ci95"]
    assert by_first(headline_rows(m))["ECE, high vs rest (3 bins)"] == ["0.050", ""]  # type: ignore[arg-type]
    del m["scores"]["calibration"]
    assert [r[0] for r in headline_rows(m)][-1] == "Brier score, high vs rest"  # type: ignore[arg-type]


def test_the_headline_table_with_the_natural_and_assembled_columns() -> None:
    header, rows = headline_table(metrics())  # type: ignore[arg-type]
    assert header == ["metric", "all cases", "95% CI", "natural + assembled", "95% CI", "natural only", "95% CI"]
    table = by_first(rows)
    assert table["cases"] == ["16", "", "10", "", "6", ""]
    # all cases 0.625; natural + assembled 0.7, [0.575, 0.7625]; natural 0.5, [0.375, 0.5625]
    assert table["accuracy"] == ["62.5%", "[50.0%, 68.8%]", "70.0%", "[57.5%, 76.2%]", "50.0%", "[37.5%, 56.2%]"]
    assert table["macro-F1"] == ["0.583", "[0.333, 0.708]", "0.610", "[0.360, 0.735]", "0.450", "[0.200, 0.575]"]
    assert table["weighted kappa (quadratic)"] == ["0.312", "", "0.400", "", "0.200", ""]
    assert table["high-risk recall"] == ["80.0%", "", "90.0%", "", "75.0%", ""]
    assert table["false-alarm rate (low called high)"] == ["12.5%", "", "10.0%", "", "25.0%", ""]
    assert table["error rate"] == ["6.2%", "", "5.0%", "", "0.0%", ""]
    # consensus and score rows: all cases only, the subset columns empty
    assert table["consensus balanced accuracy"] == ["0.625", "[0.400, 0.800]", "", "", "", ""]
    assert table["Brier score, high vs rest"] == ["0.190", "", "", "", "", ""]
    assert [r[0] for r in rows][:2] == ["cases", "accuracy"] and len(rows) == 15
    assert all(len(r) == 7 for r in rows)


def test_the_headline_table_of_a_run_without_origin_tags_or_natural_cases() -> None:
    m = metrics()
    m["headline_natural"] = None
    header, rows = headline_table(m)  # type: ignore[arg-type]
    assert header == ["metric", "all cases", "95% CI", "natural + assembled", "95% CI"]
    assert by_first(rows)["cases"] == ["16", "", "10", ""]
    assert by_first(rows)["accuracy"] == ["62.5%", "[50.0%, 68.8%]", "70.0%", "[57.5%, 76.2%]"]
    assert by_first(rows)["ROC-AUC, high vs rest (n=14)"] == ["0.810", "", "", ""]
    m["headline_real"] = None
    header, rows = headline_table(m)  # type: ignore[arg-type]
    assert header == ["metric", "value", "95% CI"] and rows == headline_rows(m)  # type: ignore[arg-type]
    assert origin_rows(m) is None  # type: ignore[arg-type]


# --- calibration -------------------------------------------------------------------------------------------------


def test_the_reliability_diagram_rows() -> None:
    rows = calibration_rows(metrics())  # type: ignore[arg-type]
    # bin 1 [0, 1/3]: 6 cases, mean 0.25, share 1/6 = 0.1667, gap |0.1667 - 0.25| = 0.0833
    # bin 2 (1/3, 2/3]: empty, n/a; bin 3 (2/3, 1]: mean 0.8, share 0.875, gap 0.075
    assert rows == [
        [1, "[0.000, 0.333]", 6, "0.250", "0.167", "0.083"],
        [2, "(0.333, 0.667]", 0, "n/a", "n/a", "n/a"],
        [3, "(0.667, 1.000]", 8, "0.800", "0.875", "0.075"],
    ]
    m = metrics()
    m["scores"]["calibration"]["diagram"][0]["share_high"] = None  # a mean without a share: no gap either
    m["scores"]["calibration"]["diagram"][2]["share_high"] = 0.5  # share below the mean: gap |0.5 - 0.8| = 0.3
    rows = calibration_rows(m)  # type: ignore[arg-type]
    assert rows[0][3:] == ["0.250", "n/a", "n/a"] and rows[2][3:] == ["0.800", "0.500", "0.300"]
    del m["scores"]["calibration"]
    assert calibration_rows(m) == []  # type: ignore[arg-type]
    m["scores"] = None
    assert calibration_rows(m) == []  # type: ignore[arg-type]


def test_the_calibration_note() -> None:
    m = metrics()
    note = calibration_note(m)  # type: ignore[arg-type]
    assert note == (
        "ECE 0.050 [0.010, 0.120] over 3 equal-width bins of the score, high risk against the rest, on the 14 cases "
        "of 16 whose reply carried a risk_score (errored cases and replies without a score are left out, as for "
        "ROC-AUC). ECE = sum over bins of cases / 14 x gap, the gap being |share high - mean score|; a bin holds the "
        "scores above its lower edge up to its upper one (the first holds 0 too). A calibrated score lies on the "
        "diagonal: share high = mean score."
    )
    del m["scores"]["calibration"]["ece_ci95"]
    assert calibration_note(m).startswith("ECE 0.050 over 3 equal-width bins")  # type: ignore[arg-type]
    del m["scores"]["calibration"]
    assert calibration_note(m) == (  # type: ignore[arg-type]
        "This run's metrics were written before calibration was reported (fcb eval --resume writes them again)."
    )
    m["scores"] = None
    assert calibration_note(m) == (  # type: ignore[arg-type]
        "No reply carried a risk_score: no ROC-AUC, average precision, Brier score or calibration (ECE) for this run."
    )


# --- the other tables --------------------------------------------------------------------------------------------


def test_confusion_class_category_and_group_rows() -> None:
    m = metrics()
    header, rows = confusion_rows(m)  # type: ignore[arg-type]
    assert header == ["expected \\ predicted", "low", "medium", "high", "error"]
    assert rows == [["low", 3, 1, 0, 1], ["medium", 1, 2, 1, 0], ["high", 0, 1, 4, 0]]
    assert class_rows(m) == [  # type: ignore[arg-type]
        ["low", "0.750", "0.600", "0.667", 5],
        ["medium", "0.500", "0.500", "0.500", 4],
        ["high", "0.800", "0.800", "0.800", 5],
    ]
    assert category_rows(m) == [  # type: ignore[arg-type]
        ["copied", "high", 4, "75.0%", "[30.0%, 95.0%]", 1, 0, 3, 0],
        ["sound", "low", 5, "60.0%", "[20.0%, 90.0%]", 3, 1, 0, 1],
    ]
    # 2/3 -> 66.7%
    assert group_rows(m["breakdowns"]["model_family"]) == [
        ["gpt", 3, "66.7%", "[20.0%, 95.0%]"],
        ["a|b", 1, "0.0%", "[0.0%, 80.0%]"],
    ]
    assert group_rows({"x": {"n": 2, "accuracy": 0.5, "ci95": None}}, str.upper)[0] == ["X", 2, "50.0%", ""]
    assert origin_rows(m) == [["origin_natural", 6, "50.0%", "[20.0%, 80.0%]"]]  # type: ignore[arg-type]


def test_the_operational_rows() -> None:
    m = metrics()
    rows = by_first(operational_rows(m))  # type: ignore[arg-type]
    assert rows == {
        "cases run": [16],
        "cases not run": [2],
        "errors": ["1 (timeout 1, http 2)"],
        "retries": [3],
        "wall time": ["12.50 s"],
        "throughput": ["1.3 cases/s"],
        "latency p50 / p90 / p99": ["123.4 ms / 500.0 ms / 1000.0 ms"],
        "tokens (prompt / completion / total)": ["1,234 / 56 / 1,290"],
        "cost": ["$0.0123"],
        "replayed from the response cache": [2],
    }
    assert next(iter(rows)) == "cases run" and len(operational_rows(m)) == 10  # type: ignore[arg-type]


def test_operational_rows_of_a_run_with_epochs_probes_or_nothing_measured() -> None:
    m = metrics()
    ops = m["operational"]
    ops |= {"errors": 0, "errors_by_kind": {}, "cases_per_s": 0.0, "latency_s": None, "wall_s": 2.0, "cached": 0}
    del ops["tokens"]
    m["epochs"] = {}
    rows = by_first(operational_rows(m))  # type: ignore[arg-type]
    assert rows == {
        "items run": [16],
        "cases not run": [2],
        "errors": ["0 (none)"],
        "retries": [3],
        "wall time": ["2.00 s"],
        "throughput": ["n/a"],
        "latency p50 / p90 / p99": ["n/a"],
    }
    del m["epochs"]
    m["probes"] = {}
    ops["cases_per_s"] = 2.25
    assert by_first(operational_rows(m))["throughput"] == ["2.2 items/s"]  # type: ignore[arg-type]  # 2.25: to even
    del m["probes"]
    assert by_first(operational_rows(m))["throughput"] == ["2.2 cases/s"]  # type: ignore[arg-type]


def test_token_rows_estimated_counts_and_cost() -> None:
    m = metrics()
    m["operational"]["tokens"] = {"prompt": 1000, "completion": 2000000, "total": 2001000, "estimated": 1500,
                                  "cost_usd": 1.5}  # fmt: skip
    rows = by_first(operational_rows(m))  # type: ignore[arg-type]
    assert rows["tokens (prompt / completion / total)"] == ["1,000 / 2,000,000 / 2,001,000"]
    assert rows["tokens counted at their most (no usage in the reply)"] == ["1,500"]
    assert rows["cost (at most)"] == ["$1.5000"] and "cost" not in rows
    del m["operational"]["tokens"]["cost_usd"]
    m["operational"]["tokens"]["estimated"] = 0
    rows = by_first(operational_rows(m))  # type: ignore[arg-type]
    assert "tokens counted at their most (no usage in the reply)" not in rows
    assert "cost" not in rows and "cost (at most)" not in rows
    assert rows["tokens (prompt / completion / total)"] == ["1,000 / 2,000,000 / 2,001,000"]


def test_error_messages_on_one_line_cut_at_the_width() -> None:
    m = metrics()
    assert error_message_rows(m) == [[1, "timeout", "read timed out |x|", "c|1"]]  # type: ignore[arg-type]
    # 160 characters are kept whole; 161 are cut to 157 and "...": 160 again
    m["operational"]["error_messages"] = [
        {"count": 4, "kind": "http", "message": "a" * 160, "case_id": "x"},
        {"count": 2, "kind": "http", "message": "b" * 161, "case_id": "y"},
        {"count": 1, "kind": "http", "message": "esc \x1b[31m red", "case_id": "z"},
        {"count": 1, "kind": "io", "message": "no file C:\\tmp\\x", "case_id": "w"},  # a backslash shown as it is
    ]
    rows = error_message_rows(m)  # type: ignore[arg-type]
    assert rows[0] == [4, "http", "a" * 160, "x"]
    assert rows[1] == [2, "http", "b" * 157 + "...", "y"]
    assert rows[2] == [1, "http", "esc \\x1b[31m red", "z"]
    assert rows[3] == [1, "io", "no file C:\\tmp\\x", "w"] and len(rows[3][2]) == 16  # 8 + 2 + 1 + 3 + 1 + 1
    assert error_message_rows(m, width=10)[1][2] == "b" * 7 + "..."  # type: ignore[arg-type]
    del m["operational"]["error_messages"]
    assert error_message_rows(m) == []  # type: ignore[arg-type]


# --- the whole summary and report.md -----------------------------------------------------------------------------


def test_the_summary_shows_the_title_and_every_table() -> None:
    summary = render_summary(document())  # type: ignore[arg-type]
    lines = summary.splitlines()
    assert lines[:5] == [
        "detector: mine (builtin:heuristic)",
        'fingerprint: python: module_sha256 0123456789ab, version 1.2, args {"k":1}',
        "data set: demo (sha256 abcdef012345, 16 valid cases)",
        "run: INCOMPLETE; harness 9.8.7; 2026-12-05T01:02:03Z",
        "skipped: 3 invalid line(s), listed in metrics.json",
    ]
    tables = simple_tables(summary)
    head = by_first(tables[0])
    assert tables[0][0] == ["metric", "all cases", "95% CI", "natural + assembled", "95% CI", "natural only", "95% CI"]
    assert head["accuracy"] == ["62.5%", "[50.0%, 68.8%]", "70.0%", "[57.5%, 76.2%]", "50.0%", "[37.5%, 56.2%]"]
    assert tables[1] == [["expected \\ predicted", "low", "medium", "high", "error"], ["low", "3", "1", "0", "1"],
                         ["medium", "1", "2", "1", "0"], ["high", "0", "1", "4", "0"]]  # fmt: skip
    assert tables[2][0] == ["category", "expected", "n", "accuracy", "95% CI", "low", "medium", "high", "error"]
    assert tables[2][1] == ["copied", "high", "4", "75.0%", "[30.0%, 95.0%]", "1", "0", "3", "0"]
    assert tables[3] == [["origin", "n", "accuracy", "95% CI"], ["origin_natural", "6", "50.0%", "[20.0%, 80.0%]"]]
    assert tables[4] == [["model_family", "n", "accuracy", "95% CI"], ["gpt", "3", "66.7%", "[20.0%, 95.0%]"],
                         ["a|b", "1", "0.0%", "[0.0%, 80.0%]"]]  # fmt: skip
    ops = by_first(tables[5])
    assert ops["errors"] == ["1 (timeout 1, http 2)"] and ops["cases run"] == ["16"]
    assert tables[6] == [["count", "kind", "message", "e.g. case"], ["1", "timeout", "read timed out |x|", "c|1"]]
    assert len(tables) == 7


def test_the_summary_title_of_a_complete_unlabelled_run() -> None:
    doc = document()
    doc["complete"] = True
    doc["detector"] = {"spec": "http://x\x1b", "name": "x"}
    del doc["dataset"]["skipped_invalid"]
    doc["metrics"]["operational"]["error_messages"] = []
    summary = render_summary(doc)  # type: ignore[arg-type]
    assert summary.splitlines()[:3] == [
        "detector: http://x\\x1b",
        "data set: demo (sha256 abcdef012345, 16 valid cases)",
        "run: complete; harness 9.8.7; 2026-12-05T01:02:03Z",
    ]
    assert "skipped:" not in summary and "e.g. case" not in summary
    # without origin tags: no origin table, the headline in one value column
    doc["metrics"]["headline_real"] = doc["metrics"]["headline_natural"] = None
    tables = simple_tables(render_summary(doc))  # type: ignore[arg-type]
    assert [t[0][0] for t in tables] == ["metric", "expected \\ predicted", "category", "model_family", "cases run"]
    assert tables[0][0] == ["metric", "value", "95% CI"]
    # only a digest (a key ending in sha256) is cut to 12 characters: a long URL stays whole
    fp = {"kind": "http", "url": "http://h.example/v1", "body_sha256": "f" * 20, "tags": ["a", "b"]}
    assert text._fingerprint_text(fp) == 'http: url http://h.example/v1, body_sha256 ffffffffffff, tags ["a","b"]'
    assert text._fingerprint_text({"x": 1}) == "?: x 1"


def test_report_md_sections_and_tables() -> None:
    report = render_markdown(document())  # type: ignore[arg-type]
    lines = report.splitlines()
    assert lines[:7] == [
        "# False-consensus detector report",
        "",
        "- detector: mine (builtin\\:heuristic)",
        '- fingerprint: python\\: module\\_sha256 0123456789ab, version 1.2, args \\{"k"\\:1\\}',
        "- data set: demo (sha256 abcdef012345, 16 valid cases)",
        "- run: INCOMPLETE; harness 9.8.7; 2026-12-05T01:02:03Z",
        "- skipped: 3 invalid line(s), listed in metrics.json",
    ]
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## Headline", "## Confusion matrix", "## Per class", "## Calibration", "## Per category",
                        "## By model_family", "## By origin", "## Operational", "## Errors (most frequent messages)",
                        "## Problems in the cases file"]  # fmt: skip
    head = by_first(md_table(report, "metric"))
    assert head["cases"] == ["16", "", "10", "", "6", ""]
    assert head["ECE, high vs rest (3 bins)"] == ["0.050", "[0.010, 0.120]", "", "", "", ""]
    assert "Intervals: 1000 bootstrap resamples (seed 7, percentile) of the cases; per-group intervals are Wilson " \
           "score intervals. Errors count as wrong." in lines  # fmt: skip
    assert (
        "The natural + assembled column counts only cases tagged `origin_natural` (a source's answer set as it is) or "
        "`origin_assembled` (real answers combined by rule); `origin_constructed` cases (text written for the "
        "benchmark) and untagged ones are left out of it. The natural only column counts the `origin_natural` cases "
        "alone. Read the columns together."
    ) in lines
    assert md_table(report, "risk") == [["risk", "precision", "recall", "F1", "support"],
                                        ["low", "0.750", "0.600", "0.667", "5"], ["medium", "0.500", "0.500", "0.500",
                                        "4"], ["high", "0.800", "0.800", "0.800", "5"]]  # fmt: skip
    assert md_table(report, "bin") == [
        ["bin", "scores", "cases", "mean score", "share high", "gap"],
        ["1", "[0.000, 0.333]", "6", "0.250", "0.167", "0.083"],
        ["2", "(0.333, 0.667]", "0", "n/a", "n/a", "n/a"],
        ["3", "(0.667, 1.000]", "8", "0.800", "0.875", "0.075"],
    ]
    assert md_table(report, "expected \\ predicted")[3] == ["high", "0", "1", "4", "0"]
    assert md_table(report, "category")[2] == ["sound", "low", "5", "60.0%", "[20.0%, 90.0%]", "3", "1", "0", "1"]
    assert md_table(report, "model_family")[2] == ["a|b", "1", "0.0%", "[0.0%, 80.0%]"]  # escaped pipe read back
    assert md_table(report, "origin") == [["origin", "n", "accuracy", "95% CI"],
                                          ["origin_natural", "6", "50.0%", "[20.0%, 80.0%]"]]  # fmt: skip
    assert md_table(report, "")[0] == ["", ""]  # the operational table has no header text
    ops = by_first(md_table(report, "")[1:])
    assert ops["wall time"] == ["12.50 s"] and ops["retries"] == ["3"] and ops["cost"] == ["$0.0123"]
    assert md_table(report, "count") == [["count", "kind", "message", "e.g. case"],
                                         ["1", "timeout", "read timed out |x|", "c|1"]]  # fmt: skip
    assert "- line 3\\: \\*bad\\*" in lines
    assert "## Epochs" not in report and "## Probes" not in report
    assert_blocks(report)
    paragraphs = [b for b in report.split("\n\n") if "\n" not in b.strip() and line_is_text(b.strip())]
    starts = ["# False-consensus detect", "## Headline", "The natural + assembled ", "Intervals: 1000 bootstra",
              "## Confusion matrix", "## Per class", "## Calibration", "ECE 0.050 [0.010, 0.120]", "## Per category",
              "## By model_family", "## By origin", "## Operational", "## Errors (most frequent",
              "## Problems in the cases"]  # fmt: skip
    assert [p.strip()[:24] for p in paragraphs] == starts


def test_report_md_of_a_plain_run_without_origin_tags_errors_problems_or_bootstrap() -> None:
    doc = document()
    m = doc["metrics"]
    m["headline_real"] = m["headline_natural"] = None
    del m["bootstrap"]
    m["operational"]["error_messages"] = []
    del doc["dataset"]["problems"]
    del doc["detector"]["label"]
    m["breakdowns"]["evidence"] = {"with": {"n": 2, "accuracy": 0.5, "ci95": None}}  # after origin: still shown
    report = render_markdown(doc)  # type: ignore[arg-type]
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings == ["## Headline", "## Confusion matrix", "## Per class", "## Calibration", "## Per category",
                        "## By model_family", "## By evidence", "## Operational"]  # fmt: skip
    assert md_table(report, "evidence") == [["evidence", "n", "accuracy", "95% CI"], ["with", "2", "50.0%", ""]]
    assert_blocks(report)
    assert md_table(report, "metric")[0] == ["metric", "value", "95% CI"]
    assert "Intervals:" not in report and "natural + assembled" not in report
    assert "- detector: builtin\\:heuristic" in report.splitlines()
    m["scores"] = None
    report = render_markdown(doc)  # type: ignore[arg-type]
    assert not [t for t in md_tables(report) if t[0][0] == "bin"]
    assert "No reply carried a risk_score" in report


def assert_blocks(report: str) -> None:
    """report.md is blocks apart by one blank line: a heading, a table, a list or a paragraph of one line, each
    alone (a line written where a blank one belongs would join two blocks), ending in one newline."""
    assert report.endswith("\n") and not report.endswith("\n\n")
    for block in report.rstrip("\n").split("\n\n"):
        lines = block.split("\n")
        assert block and (
            all(line.startswith("|") for line in lines)
            or all(line.startswith("- ") for line in lines)
            or (len(lines) == 1 and line_is_text(lines[0]))
        ), block


def line_is_text(line: str) -> bool:
    return bool(line.strip()) and not line.startswith("|") and not line.startswith("- ")


def test_write_reports_writes_the_document_and_the_markdown(tmp_path: Path) -> None:
    doc = document()
    write_reports(tmp_path, doc)  # type: ignore[arg-type]
    assert json.loads((tmp_path / "metrics.json").read_text()) == doc
    assert (tmp_path / "metrics.json").read_text().startswith('{\n  "metrics_version": 3')  # indented by two
    assert (tmp_path / "report.md").read_text() == render_markdown(doc)  # type: ignore[arg-type]


# --- epochs and probes in the summary and report.md ---------------------------------------------------------------


def repeats(m: dict[str, Any]) -> dict[str, Any]:
    m = copy.deepcopy(m)
    figures = {"accuracy": 0.5, "macro_f1": 0.4, "high_risk_recall": 0.6, "false_alarm_rate": 0.1,
               "error_rate": 0.0}  # fmt: skip
    m["epochs"] = {
        "n": 2,
        "reducer": "mode",
        "per_epoch": [{"epoch": 1, "n_cases": 16, **figures}, {"epoch": 2, "n_cases": 15, **figures}],
        "spread": {k: {"mean": v, "sd": 0.0} for k, v in figures.items()},
        "self_agreement": {
            "n_cases": 16,
            "all_agree": 0.75,
            "all_agree_ci95": [0.5, 0.9],
            "pairwise": 0.8,
            "fleiss_kappa": 0.55,
        },
    }
    rate = {"flip_rate": 0.25, "flips": 2, "n": 8}
    none = {"flip_rate": 0.0, "flips": 0, "n": 4}
    m["probes"] = {
        "order": {"n_cases": 16, "n": 32, "flips": 4, "flip_rate": 0.125, "ci95": [0.05, 0.3],
                  "order_informative": {"saw_other_answers": rate, "independent": none},
                  "mean_score_change": 0.02, "epoch_disagreement": 0.0625, "not_possible": 1,
                  "per_category": {"copied": rate}},
    }  # fmt: skip
    return m


def test_the_summary_and_report_md_of_a_run_with_epochs_and_probes() -> None:
    doc = document(repeats(metrics()))
    summary = render_summary(doc)  # type: ignore[arg-type]
    tables = simple_tables(summary)
    agreement = next(t for t in tables if t[0][0] == "epochs: cases")
    assert agreement == [["epochs: cases", "all epochs agree", "95% CI", "pairwise agreement", "Fleiss' kappa"],
                         ["16", "75.0%", "[50.0%, 90.0%]", "80.0%", "0.550"]]  # fmt: skip
    probes = next(t for t in tables if t[0][0] == "probe")
    assert probes[1][:6] == ["order", "not move", "flip rate", "12.5% (4/32)", "[5.0%, 30.0%]", ""]
    assert probes[1][9:] == ["16", "1", "6.2%"]  # cases, no variant, epochs disagree
    # order: flip rate 12.5%, its interval from 5.0% above the 6.2% noise? no: 5.0% <= 6.2%: within the noise
    assert "order: flip rate 12.5% against epochs disagreeing on 6.2%, within the detector's own noise: no evidence " \
           "of sensitivity to it" in summary  # fmt: skip
    assert by_first(next(t for t in tables if t[0][0] == "items run"))["errors"] == ["1 (timeout 1, http 2)"]

    report = render_markdown(doc)  # type: ignore[arg-type]
    assert_blocks(report)
    headings = [line for line in report.splitlines() if line.startswith("## ")]
    assert headings.index("## Epochs") == headings.index("## Calibration") + 1
    assert headings.index("## Probes: the robustness card") == headings.index("## Epochs") + 1
    assert headings.index("## Per category") == headings.index("## Probes: the robustness card") + 1
    epochs = md_table(report, "epoch")
    assert epochs[0][:2] == ["epoch", "cases"] and epochs[2][:2] == ["2", "15"]
    assert md_table(report, "cases")[1] == ["16", "75.0%", "[50.0%, 90.0%]", "80.0%", "0.550"]
    assert "Self-agreement:" in report.splitlines() and "Each probe's figure per category:" in report.splitlines()
    assert md_table(report, "probe")[1][:4] == ["order", "not move", "flip rate", "12.5% (4/32)"]
    flips, per_category = [t for t in md_tables(report) if t[0][0] == "category"]
    assert per_category[1][:4] == ["copied", "high", "4", "75.0%"]
    assert flips == [["category", "order"], ["copied", "25.0% (2/8)"],
                     ["(an agent saw others' answers)", "25.0% (2/8)"],
                     ["(independent answers)", "0.0% (0/4)"]]  # fmt: skip
    assert "- order: flip rate 12.5% against epochs disagreeing on 6.2%, within the detector's own noise: no " \
           "evidence of sensitivity to it" in report.splitlines()  # fmt: skip
    assert "Every case was asked 2 times." in report
    # with no noise figure (one epoch) the noise lines are left out, the probes table stays
    doc["metrics"]["probes"]["order"]["epoch_disagreement"] = None
    report = render_markdown(doc)  # type: ignore[arg-type]
    assert "within the detector's own noise" not in report and md_table(report, "probe")[1][0] == "order"
    assert_blocks(report)


@pytest.mark.parametrize("fmt", ["simple", "github"])
def test_no_error_table_without_error_messages(fmt: str) -> None:
    m = metrics()
    m["operational"]["error_messages"] = []
    assert text._error_table(m, fmt) == []  # type: ignore[arg-type]
    m = metrics()
    (got,) = text._error_table(m, fmt)  # type: ignore[arg-type]
    assert ("c\\|1" in got) == (fmt == "github")  # Markdown escapes the pipe; the terminal shows it as it is


def test_report_md_shows_the_figures_per_tone_and_per_template() -> None:
    m = repeats(metrics())
    m["probes"]["tone"] = {**m["probes"]["order"], "per_style": {
        "confident": {"n": 8, "flips": 2, "flip_rate": 0.25, "ci95": [0.0, 0.5]},
        "hedging": {"n": 4, "flips": 0, "flip_rate": 0.0, "ci95": None}}}  # fmt: skip
    report = render_markdown(document(m))  # type: ignore[arg-type]
    assert_blocks(report)
    lines = report.splitlines()
    at = lines.index("Per tone and per injected template:")
    assert lines[at + 1] == "" and lines[at + 2].startswith("| probe")
    card, styles = [t for t in md_tables(report) if t[0][0] == "probe"]  # the card comes first
    assert card[0][1] == "the verdict should" and [row[0] for row in card[1:]] == ["order", "tone"]
    assert styles == [["probe", "style", "figure", "rate", "95% CI"],
                      ["tone", "confident", "flip rate", "25.0% (2/8)", "[0.0%, 50.0%]"],
                      ["tone", "hedging", "flip rate", "0.0% (0/4)", ""]]  # fmt: skip
    # the card, then this table, then the per-category one, then the next section
    assert at < lines.index("Each probe's figure per category:") < lines.index("## Per category")
    assert "Per tone and per injected template:" not in render_markdown(document(repeats(metrics())))  # type: ignore[arg-type]


# ---- operating points, a threshold and the clusters in report.md and the summary ------------------------------------


def _with_decision_blocks() -> dict[str, Any]:
    """A run's metrics with an operating points block, a threshold check and clusters that some cases share."""
    import numpy as np

    from harness.operating import operating_points
    from harness.threshold import calibrate, check

    y_true = np.array([2, 2, 0, 0, 1])
    y_pred = np.array([2, 0, 2, 0, 1])
    scores = np.array([0.9, 0.2, 0.8, 0.1, 0.5])
    m = metrics()
    m["operating_points"] = operating_points(y_true, y_pred, scores, n_boot=0, seed=0)
    held = calibrate(y_true, scores, target=0.5, method="expected", confidence=None, basis="risk_score", run="dev",
                     dataset="d", sha256="f" * 64, detector="builtin:x", fingerprint="ab12")  # fmt: skip
    m["threshold"] = check(held, "dev/threshold.json", y_true, scores)
    effects = {"accuracy": 1.234, "macro_f1": 0.5, "weighted_kappa": None, "high_risk_recall": 2.0,
               "false_alarm_rate": 1.0, "error_rate": None}  # fmt: skip
    m["clusters"] = {"by": "tag:g*", "n_cases": 16, "n_clusters": 10, "largest": 4, "design_effect": effects}
    return m


def test_report_md_places_the_operating_points_the_threshold_and_the_clusters() -> None:
    from harness.report.operating import OPERATING_HEADER, operating_note, operating_rows, threshold_lines
    from harness.tables import table

    m = _with_decision_blocks()
    lines = render_markdown(document(m)).splitlines()
    start = lines.index("## Operating points")
    points = table(operating_rows(m), OPERATING_HEADER, "github").splitlines()  # type: ignore[arg-type]
    held = threshold_lines(m)  # type: ignore[arg-type]
    assert len(held) >= 2
    assert lines[start : start + 4 + len(points) + 1 + len(held) + 1] == [
        "## Operating points", "", operating_note(m), "", *points, "",  # type: ignore[arg-type]
        *(f"- {text.md_text(line)}" for line in held), "",
    ]  # fmt: skip
    assert lines[start + 4 + len(points) + 1 + len(held) + 1] == "## Confusion matrix"
    effects = ("Design effect of the 10 clusters (each figure's variance over the clusters' resamples, over its "
               "variance when every case is drawn alone; the effective sample size is the cases over it): accuracy "
               "1.23, macro-F1 0.50, weighted kappa n/a, high-risk recall 2.00, false-alarm rate 1.00, error rate "
               "n/a.")  # fmt: skip
    drawn = ("Intervals: 1000 bootstrap resamples (seed 7, percentile) of 10 clusters of the 16 cases (--cluster-by "
             "tag\\:g\\*; the largest holds 4), a drawn cluster bringing all its cases; per-group intervals are Wilson "
             "score intervals on the effective number of cases. Errors count as wrong.")  # fmt: skip
    at = lines.index(drawn)
    assert lines[at : at + 4] == [drawn, "", effects, ""]


def test_the_summary_prints_the_design_effect_under_the_headline() -> None:
    from harness.report.text import interval_lines, render_summary

    m = _with_decision_blocks()
    summary = render_summary(document(m))  # type: ignore[arg-type]
    effects = interval_lines(m)[1]  # type: ignore[arg-type]
    assert effects.startswith("Design effect of the 10 clusters") and f"\n\n{effects}\n\n" in summary
    assert "Intervals:" not in summary  # the summary keeps the headline's table; report.md says what was drawn
    m["clusters"]["by"] = "tag:\x1b[31m"
    assert "tag:\\x1b[31m" in interval_lines(m, text.printable)[0]  # type: ignore[arg-type]
    m["clusters"]["n_clusters"] = 16
    assert interval_lines(m) == [  # type: ignore[arg-type]
        "Intervals: 1000 bootstrap resamples (seed 7, percentile) of the cases (--cluster-by tag:\x1b[31m: no two "
        "cases share a cluster); per-group intervals are Wilson score intervals. Errors count as wrong."
    ]
    del m["bootstrap"]
    assert interval_lines(m) == []  # type: ignore[arg-type]


def test_report_md_without_a_threshold_adds_no_line() -> None:
    m = _with_decision_blocks()
    del m["threshold"]
    lines = render_markdown(document(m)).splitlines()
    at = lines.index("## Confusion matrix")
    assert lines[at - 2 : at] != ["", ""] and lines[at - 1] == "" and lines[at - 2].startswith("|")
