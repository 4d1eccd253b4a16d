"""Issue 45, items 9 and 13: every command that reads a results folder finds the same runs (one finder, three levels
down), and ``fcb board`` accepts a run with ``--epochs`` or ``--probe``, showing its reduced verdicts and saying so.
Real runs in tmp_path, the real CLI; the expected verdicts are derived from the detector's rule, not the board."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli

from harness.leaderboard.board import board_views
from harness.leaderboard.runs import find_runs, read_run

pytestmark = pytest.mark.e2e

# answers each task high, low, high on its first, second and third call: whatever order the epochs are sent in, the
# mode of a case's three answers is high; epoch 1 alone (--epoch-reducer first) would give low for some cases
FLIP = """
SEEN = {}


def assess(request):
    n = SEEN[request["task"]] = SEEN.get(request["task"], 0) + 1
    return {"false_consensus_risk": "low" if n == 2 else "high"}
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("finder")
    cases = write_cases(tmp / "cases.jsonl", 12)
    (tmp / "flip.py").write_text(FLIP)
    root = tmp / "results"
    plain = run_cli(
        "eval", str(cases), "-d", "builtin:agreement", "--out", str(root / "plain"), "-q", "--bootstrap", "0"
    )
    assert plain.returncode == 0, plain.stderr
    deep = root / "suite" / "runs" / "flip"  # three levels down, as a suite writes its runs
    repeated = run_cli("eval", str(cases), "-d", f"{tmp / 'flip.py'}:assess", "--epochs", "3", "--probe", "order",
                       "--out", str(deep), "-q", "--bootstrap", "0")  # fmt: skip
    assert repeated.returncode == 0, repeated.stderr
    return root


def test_board_and_leaderboard_rank_the_same_runs_three_levels_down(results: Path, tmp_path: Path) -> None:
    board = run_cli("board", str(results), "-o", str(tmp_path / "board.html"), "--bootstrap", "0")
    assert board.returncode == 0, board.stderr  # was exit 2: the --epochs run refused the whole folder
    assert "2 runs" in board.stderr
    table = run_cli("leaderboard", str(results), "--format", "json", "--bootstrap", "0")
    assert table.returncode == 0, table.stderr
    ranked = json.loads(table.stdout)
    text = json.dumps(ranked)
    assert "builtin:agreement" in text and "flip.py" in text  # the leaderboard looked one level down only


def test_the_board_shows_a_repeated_runs_reduced_verdicts_and_says_so(results: Path, tmp_path: Path) -> None:
    page = tmp_path / "board.html"
    assert run_cli("board", str(results), "-o", str(page), "--bootstrap", "0").returncode == 0
    html = page.read_text()
    assert "3 epochs, mode, probe order" in html and "each case shows one verdict" in html
    runs = [read_run(path) for path in find_runs([str(results)])]
    (view,) = board_views(runs, tmp_path, n_boot=0, seed=0, strongest=3)
    flip = next(k for k, run in enumerate(view.runs) if "flip" in run.detector)
    assert view.data["pred"][flip] == "h" * 12  # the mode of high, low, high for every case
