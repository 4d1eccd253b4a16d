"""Detector names are shown as written in plots (issue 15, item 16): matplotlib would read ``$...$`` as mathematics
and fail on most of it, stopping the HTML leaderboard and ``fcb history``."""

from __future__ import annotations

from pathlib import Path

from casegen import write_cases
from conftest import run_cli
from runkit import ids, make_run

PNG = b"\x89PNG\r\n\x1a\n"
NAME = "$x^$ and $\\frac{1}$"  # mathtext that does not parse


def test_a_dollar_in_a_detector_name_cannot_break_the_leaderboard_or_history(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    results = tmp_path / "results"
    for last in (20, 30):
        make_run(cases, results, ids(1, last), NAME)
    board = run_cli("leaderboard", str(results), "--format", "html")
    assert board.returncode == 0, board.stderr
    assert board.stdout.count('src="data:image/png;base64,') >= 2  # the heatmap and the bars of the run
    history = run_cli("history", str(results), "--metric", "accuracy")
    assert history.returncode == 0, history.stderr
    assert (results / "history-accuracy.png").read_bytes()[:8] == PNG
