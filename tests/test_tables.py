"""Tables show each figure as the code formatted it: "0.500" stays "0.500", never "0.5"; "0.000" never "0"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_cli

from harness.tables import figure, interval, percent, table


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def test_the_one_formatter_writes_figures_shares_and_intervals() -> None:
    assert [figure(0.5), figure(0.12345), figure(1), figure(None)] == ["0.500", "0.123", "1.000", "n/a"]
    assert [figure(0.01234, 4), figure(0.012, signed=True), figure(-0.5, signed=True)] == ["0.0123", "+0.012", "-0.500"]
    assert [percent(0.5361), percent(0.0), percent(1), percent(None)] == ["53.6%", "0.0%", "100.0%", "n/a"]
    assert interval([0.508, 0.5491]) == "[0.508, 0.549]" and interval(None) == "" and interval([]) == ""
    assert interval((0.1, 0.25), percent) == "[10.0%, 25.0%]"
    assert interval([-0.02, 0.031], lambda b: figure(b, signed=True)) == "[-0.020, +0.031]"


def test_formatted_figures_are_printed_as_given() -> None:
    rows = [["low", "0.500", "1.000", "0.000", 30], ["medium", "0.125", "n/a", "12.50%", 7]]
    out = table(rows, ["risk", "precision", "recall", "kappa", "n"], tablefmt="github")
    body = [_cells(line) for line in out.splitlines()[2:]]
    assert body == [["low", "0.500", "1.000", "0.000", "30"], ["medium", "0.125", "n/a", "12.50%", "7"]]


def test_numbers_are_right_aligned_and_text_left() -> None:
    out = table([["a", "0.5", "x"], ["bbbbbb", "10.250", "yy"]], ["name", "figure", "text"])
    lines = out.splitlines()
    widths = [len(part) for part in lines[1].split()]
    first, second = lines[2], lines[3]
    # the figure column: both cells end where the column ends (right-aligned)
    end = widths[0] + 2 + widths[1]
    assert first[:end].endswith("0.5") and second[:end].endswith("10.250")
    # the text columns start where the column starts (left-aligned)
    assert first.startswith("a ") and first[end + 2 :].startswith("x")


def test_a_column_with_any_text_is_text_and_none_reads_n_a() -> None:
    out = table([["1", None], ["2.0", "3"], ["many", "4"]], ["mixed", "with none"])
    lines = out.splitlines()
    assert lines[2].startswith("1 ") and "n/a" in lines[2]
    assert lines[2].rstrip().endswith("n/a") and lines[3].rstrip().endswith("3")


def test_an_empty_table_has_its_header() -> None:
    assert "metric" in table([], ["metric", "value"])


@pytest.mark.slow
def test_report_leaderboard_and_suite_keep_three_places(tmp_path: Path) -> None:
    """always-low on the embedded set: recall of medium is exactly 0 and weighted kappa is 0."""
    run = tmp_path / "runs" / "always-low"
    proc = run_cli("eval", "-d", "builtin:always-low", "--out", str(run), "--quiet", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    report = (run / "report.md").read_text(encoding="utf-8")
    per_class = report.split("## Per class", 1)[1].split("##", 1)[0]
    medium = next(_cells(line) for line in per_class.splitlines() if line.startswith("| medium"))
    assert medium[2] == "0.000", medium  # recall: nothing is called medium
    board = run_cli("leaderboard", str(tmp_path / "runs"), "--format", "md", "--bootstrap", "50")
    assert board.returncode == 0, board.stderr
    lines = [line for line in board.stdout.splitlines() if line.startswith("|")]
    header, row = _cells(lines[0]), _cells(lines[2])
    assert row[header.index("weighted kappa")] == "0.000"
    assert re.fullmatch(r"0\.\d{3} \[0\.\d{3}, 0\.\d{3}\]", row[header.index("macro_f1 [95% CI]")])
