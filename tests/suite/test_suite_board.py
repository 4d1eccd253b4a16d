"""What ``fcb suite`` writes after its runs (harness/suite/board.py): the gate lines, the board folder and its index,
read back cell by cell against figures worked out by hand (``builtin:always-low`` on eight cases) or counted again
with sklearn from the run's own journal (issue 46). The runs are made once, in-process, by `run_suite`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from casegen import write_cases
from sklearn.metrics import f1_score

from harness.errors import FcbError
from harness.leaderboard.runs import read_run
from harness.suite import board
from harness.suite.board import (
    MIN_ANALYSED,
    SUMMARY_HEADER,
    check_gates,
    index_markdown,
    summary_rows,
    write_board,
)
from harness.suite.pairs import FAILED, RAN, SKIPPED, Pair, run_suite
from harness.suite.spec import Suite, load_suite

SUITE = """\
bootstrap = 0
seed = 1
strongest = 5

[[detectors]]
name = "agree"
spec = "builtin:agreement"

[[detectors]]
name = "low"
spec = "builtin:always-low"

[[detectors]]
name = "vote"
spec = "builtin:vote"

[[datasets]]
name = "small"
cases = "cases.jsonl"

[[datasets]]
name = "pair"
cases = "cases.jsonl"
"""
RISK = {"low": 0, "medium": 1, "high": 2}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Three runs on ``small`` (8 cases: FCB-0001..0005 expect high, 0006 low, 0007 and 0008 medium)."""
    tmp = tmp_path_factory.mktemp("suite")
    write_cases(tmp / "cases.jsonl", 8)
    (tmp / "suite.toml").write_text(SUITE)
    suite, base = load_suite(tmp / "suite.toml")
    only_small = suite.model_copy(update={"datasets": suite.datasets[:1]})
    done = run_suite(only_small, base, tmp / "out", quiet=True)
    assert [p.status for p in done] == [RAN, RAN, RAN]
    return {"tmp": tmp, "suite": suite, "base": base, "out": tmp / "out", "runs": {p.detector: p.run_dir for p in done}}


def pairs_of(made: dict[str, Any], statuses: dict[tuple[str, str], str]) -> list[Pair]:
    """Pairs on the made runs: ``pair``'s pairs point at ``small``'s folders (the same cases)."""
    return [Pair(det, ds, made["runs"][det], status) for (det, ds), status in statuses.items()]


def macro_f1(run_dir: Path) -> float:
    """Macro-F1 counted again from the journal, over the classes the cases expect (an error: wrong)."""
    lines = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    truth = [RISK[r["expected"]] for r in lines]
    pred = [3 if r["risk"] is None else RISK[r["risk"]] for r in lines]
    return float(f1_score(truth, pred, labels=sorted(set(truth)), average="macro", zero_division=0))


# ---- the summary ---------------------------------------------------------------------------------------------------


def test_summary_rows_show_each_runs_macro_f1_and_cases(made: dict[str, Any]) -> None:
    pairs = pairs_of(made, {("low", "small"): RAN, ("agree", "small"): SKIPPED, ("vote", "small"): FAILED})
    pairs[2].message = "it broke\nsecond line"
    pairs[1].gate = "passed"
    rows = summary_rows(pairs)
    # always-low on 8 cases (5 high, 1 low, 2 medium): low's precision 1/8, recall 1/1, F1 = 2 * (1/8) / (9/8) = 2/9;
    # medium and high: 0. Macro over the three expected classes: (2/9) / 3 = 2/27 = 0.0741
    assert rows[0] == ["small", "low", RAN, "0.074", "8", "-", ""]
    assert rows[1] == ["small", "agree", SKIPPED, f"{macro_f1(made['runs']['agree']):.3f}", "8", "passed", ""]
    assert rows[2] == ["small", "vote", FAILED, "", "", "-", "it broke"]  # not read: no figures; its first line
    assert SUMMARY_HEADER == ["data set", "detector", "status", "macro-F1", "cases", "gate", "note"]


def test_summary_of_an_unreadable_run_says_why(tmp_path: Path) -> None:
    pair = Pair("low", "small", tmp_path / "gone", RAN)
    (row,) = summary_rows([pair])
    assert row[:6] == ["small", "low", RAN, "", "", "-"]  # nothing read: no figures
    assert str(tmp_path / "gone") in pair.message and row[6] == pair.message.splitlines()[0] != ""


def test_summary_shows_n_a_for_an_undefined_figure(made: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    run = read_run(made["runs"]["low"])
    monkeypatch.setattr(board, "read_run", lambda path: run)
    monkeypatch.setattr(type(run), "metric", lambda self, name: None)
    assert summary_rows([Pair("low", "small", made["runs"]["low"], RAN)])[0][3:5] == ["n/a", "8"]


# ---- gates ---------------------------------------------------------------------------------------------------------


def gated(made: dict[str, Any], gates: list[dict[str, Any]]) -> Suite:
    return Suite.model_validate({**made["suite"].model_dump(), "gates": gates})


def test_a_gate_against_the_same_run_passes(made: dict[str, Any]) -> None:
    runs = made["runs"]
    suite = gated(made, [{"detector": "agree", "dataset": "small", "baseline": str(runs["agree"])}])
    pairs = pairs_of(made, {("agree", "small"): RAN})
    assert check_gates(suite, made["base"], pairs) == ["gate agree on small: passed"]  # no change: no drop
    assert pairs[0].gate == "passed" and pairs[0].ok


def test_a_regressed_gate_names_the_figures_that_dropped(made: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    runs = made["runs"]
    calls: list[tuple[Path, Path, dict[str, Any]]] = []

    def compare(base: Any, new: Any, **kwargs: Any) -> Any:
        calls.append((base.path, new.path, kwargs))
        dropped = {"macro_f1": {"regression": True}, "accuracy": {"regression": False},
                   "high_risk_recall": {"regression": True}}  # fmt: skip
        return {"regression": True, "metrics": dropped}

    monkeypatch.setattr(board, "compare_runs", compare)
    suite = gated(made, [{"detector": "low", "dataset": "small", "baseline": str(runs["agree"]), "max_drop": 0.2,
                          "alpha": 0.1}])  # fmt: skip
    pairs = pairs_of(made, {("low", "small"): SKIPPED})
    assert check_gates(suite, made["base"], pairs) == ["gate low on small: regressed (macro_f1, high_risk_recall)"]
    assert calls == [(runs["agree"], runs["low"], {"max_drop": 0.2, "alpha": 0.1, "seed": 1})]  # the suite's seed
    assert pairs[0].gate == "regressed" and not pairs[0].ok


def test_a_gate_on_a_pair_that_did_not_complete_or_is_absent(made: dict[str, Any]) -> None:
    suite = gated(made, [{"detector": "vote", "dataset": "small", "baseline": "x.json"},
                         {"detector": "low", "dataset": "pair", "baseline": "x.json"}])  # fmt: skip
    pairs = pairs_of(made, {("vote", "small"): FAILED})
    assert check_gates(suite, made["base"], pairs) == [
        "gate vote on small: not checked (the run did not complete)",
        "gate low on pair: not checked (the run did not complete)",
    ]
    assert pairs[0].gate == ""


def test_a_gate_whose_baseline_cannot_be_read_regresses_its_pair(made: dict[str, Any]) -> None:
    suite = gated(made, [{"detector": "low", "dataset": "small", "baseline": "missing.json"}])
    pairs = pairs_of(made, {("low", "small"): RAN})
    (line,) = check_gates(suite, made["base"], pairs)
    missing = made["base"] / "missing.json"  # read from the suite file's folder
    assert line.startswith(f"gate low on small: {missing}")
    assert pairs[0].gate == "regressed" and pairs[0].message == f"gate not checked: {line.split(': ', 1)[1]}"


def refuse(*args: Any, **kwargs: Any) -> Any:
    raise FcbError("refused")


# ---- the board folder ----------------------------------------------------------------------------------------------


def test_the_board_folder_per_data_set(made: dict[str, Any], tmp_path: Path) -> None:
    statuses = {(d, "small"): RAN for d in ("agree", "low", "vote")} | {("agree", "pair"): RAN, ("low", "pair"): RAN}
    pairs = pairs_of(made, statuses)
    index, notes = write_board(made["suite"], pairs, tmp_path)
    folder = tmp_path / "board"
    assert index == folder / "index.md"
    assert MIN_ANALYSED == 3
    # small: three runs, the case analysis too; pair: two runs, a leaderboard alone
    assert sorted(p.name for p in (folder / "small").iterdir()) == [
        "case-analysis.json", "case-analysis.md", "leaderboard.json", "leaderboard.md"]  # fmt: skip
    assert sorted(p.name for p in (folder / "pair").iterdir()) == ["leaderboard.json", "leaderboard.md"]
    assert (folder / "board.html").is_file()
    assert all(n.startswith("board.html: ") for n in notes)
    ranked = json.loads((folder / "small" / "leaderboard.json").read_text())
    assert "builtin:always-low" in json.dumps(ranked) or "low" in json.dumps(ranked)
    for name in ("leaderboard.md", "leaderboard.json", "case-analysis.md"):
        text = (folder / "small" / name).read_text()
        assert text.endswith("\n") and not text.endswith("\n\n")  # one final newline
    text = index.read_text()
    assert text.splitlines()[:4] == [
        "# Suite board",
        "",
        "[board.html](board.html): every data set's leaderboard, accuracy by category and the cases across "
        "detectors, in one page (as `fcb board`).",
        "",
    ]
    section = text.split("## small\n\n", 1)[1].split("## ", 1)[0]
    assert section.splitlines()[:4] == [
        "- [leaderboard.md](small/leaderboard.md)",
        "- [leaderboard.json](small/leaderboard.json)",
        "- [case-analysis.md](small/case-analysis.md)",
        "- [case-analysis.json](small/case-analysis.json)",
    ]
    # the board is tmp_path/board, the run made["tmp"]/out/runs/small/agree: both folders in pytest's base folder
    assert made["tmp"].parent == tmp_path.parent
    assert f"- [agree](../../{made['tmp'].name}/out/runs/small/agree/report.html): ran" in section.splitlines()
    analysis = json.loads((folder / "small" / "case-analysis.json").read_text())
    assert isinstance(analysis, dict) and analysis
    pair_section = text.split("## pair\n\n", 1)[1].split("## ", 1)[0]
    assert pair_section.splitlines()[:2] == ["- [leaderboard.md](pair/leaderboard.md)",
                                             "- [leaderboard.json](pair/leaderboard.json)"]  # fmt: skip


def test_the_analysis_takes_the_strongest_it_can(made: dict[str, Any], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    seen: list[int] = []
    real = board.case_analysis

    def spy(runs: Any, k: int) -> Any:
        seen.append(k)
        return real(runs, k=k)

    monkeypatch.setattr(board, "case_analysis", spy)
    pairs = pairs_of(made, {(d, "small"): RAN for d in ("agree", "low", "vote")})
    write_board(made["suite"], pairs, tmp_path)  # strongest = 5, three runs: k = 3
    three = made["suite"].model_copy(update={"strongest": 2})
    write_board(three, pairs, tmp_path)  # strongest = 2 of three runs: k = 2
    assert seen == [3, 2]


def test_what_could_not_be_written_is_noted(made: dict[str, Any], tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    pairs = pairs_of(made, {(d, "small"): RAN for d in ("agree", "low", "vote")})
    monkeypatch.setattr(board, "case_analysis", refuse)
    monkeypatch.setattr(board, "write_board_page", refuse)
    index, notes = write_board(made["suite"], pairs, tmp_path)
    assert notes == ["small: no case analysis: refused", "no board.html: refused"]
    assert not (tmp_path / "board" / "small" / "case-analysis.md").exists()
    text = index.read_text()
    assert "[board.html]" not in text and "- [case-analysis.md]" not in text
    assert text.endswith("- small: no case analysis: refused\n- no board.html: refused\n")
    monkeypatch.setattr(board, "build_boards", refuse)
    index, notes = write_board(made["suite"], pairs, tmp_path / "again")
    assert notes == ["small: no leaderboard: refused"]  # no run read: no page either
    assert "## small\n\n- no board (no run completed)\n" in index.read_text()


def test_no_completed_run_no_board(made: dict[str, Any], tmp_path: Path) -> None:
    pairs = pairs_of(made, {("agree", "small"): FAILED})
    index, notes = write_board(made["suite"], pairs, tmp_path)
    assert notes == [] and not (tmp_path / "board" / "board.html").exists()
    text = index.read_text()
    assert "## small\n\n- no board (no run completed)\n\n" in text and "## pair\n\n- no board" in text
    assert "board.html" not in text  # no page: no link to one


# ---- the index -----------------------------------------------------------------------------------------------------


def table_row(text: str, detector: str) -> list[str]:
    """The summary table's row of ``detector``, its cells stripped."""
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) > 1 and cells[1] == detector:
            return cells
    raise AssertionError(f"no row for {detector}")


def test_the_index_links_each_report_and_shows_each_status(made: dict[str, Any], tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("agree", "low", "vote"):
        shutil.copytree(made["runs"][name], runs / name)
    (runs / "low" / "report.html").unlink()  # report.md only
    (runs / "vote" / "report.html").unlink()
    (runs / "vote" / "report.md").unlink()  # no report
    pairs = [Pair("agree", "small", runs / "agree", RAN, gate="passed"), Pair("low", "small", runs / "low", SKIPPED),
             Pair("vote", "small", runs / "vote", FAILED, "no detector")]  # fmt: skip
    text = index_markdown(made["suite"], pairs, tmp_path / "out" / "board", {"small": ["small/leaderboard.md"]}, ["n1"])
    lines = text.splitlines()
    assert lines[:2] == ["# Suite board", ""] and "[board.html]" not in text  # no page
    section = text.split("## small\n\n", 1)[1].split("\n## ", 1)[0].splitlines()
    assert section == [
        "- [leaderboard.md](small/leaderboard.md)",
        "",
        "- [agree](../../runs/agree/report.html): ran, gate passed",
        "- [low](../../runs/low/report.md): complete (skipped)",
        "- vote: failed",
    ]
    assert "## pair\n\n- no board (no run completed)\n\n\n## Summary" in text  # no pair on it: two blank lines
    assert table_row(text, "agree")[2:] == ["ran", f"{macro_f1(made['runs']['agree']):.3f}", "8", "passed", ""]
    assert table_row(text, "low")[2:] == ["complete (skipped)", "0.074", "8", "-", ""]  # 2/27, as above
    assert table_row(text, "vote")[2:] == ["failed", "", "", "-", "no detector"]
    header = next(line for line in lines if line.startswith("| data set"))
    assert [c.strip() for c in header.strip("|").split("|")] == SUMMARY_HEADER
    summary = lines.index("## Summary")
    assert lines[summary + 1] == "" and lines[summary + 2].startswith("| data set")
    assert lines[-2:] == ["", "- n1"]  # a blank line after the table, then the notes
    deep = index_markdown(made["suite"], [], tmp_path, {"small": ["small/sub/leaderboard.md"]}, [])
    assert "- [leaderboard.md](small/sub/leaderboard.md)" in deep.splitlines()  # the file's own name


def test_write_keeps_one_final_newline_and_makes_the_folder(tmp_path: Path) -> None:
    board._write(tmp_path / "a" / "b.md", "x  \n\n\n")
    assert (tmp_path / "a" / "b.md").read_bytes() == b"x  \n"  # trailing spaces on the line stay
    board._write(tmp_path / "c.md", "endX")
    assert (tmp_path / "c.md").read_text() == "endX\n"


def test_a_later_gate_is_checked_after_one_that_could_not_be(made: dict[str, Any]) -> None:
    runs = made["runs"]
    suite = gated(made, [{"detector": "low", "dataset": "small", "baseline": "missing.json"},
                         {"detector": "agree", "dataset": "small", "baseline": str(runs["agree"])}])  # fmt: skip
    pairs = pairs_of(made, {("low", "small"): RAN, ("agree", "small"): RAN})
    lines = check_gates(suite, made["base"], pairs)
    assert len(lines) == 2 and lines[1] == "gate agree on small: passed"
    assert [p.gate for p in pairs] == ["regressed", "passed"]


def test_each_data_set_after_one_without_a_board(made: dict[str, Any], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    boards: list[tuple[int, dict[str, Any]]] = []
    pages: list[tuple[int, dict[str, Any]]] = []
    real_boards = board.build_boards

    def spy_boards(runs: Any, **kwargs: Any) -> Any:
        boards.append((len(runs), kwargs))
        return real_boards(runs, **kwargs)

    def spy_page(runs: Any, out: Path, **kwargs: Any) -> Any:
        pages.append((len(runs), kwargs))
        return out, ["n1"]

    monkeypatch.setattr(board, "build_boards", spy_boards)
    monkeypatch.setattr(board, "write_board_page", spy_page)
    suite = made["suite"].model_copy(update={"bootstrap": 7, "seed": 11, "strongest": 2})
    # small: no run completed; pair: two runs
    pairs = pairs_of(made, {("vote", "small"): FAILED, ("agree", "pair"): RAN, ("low", "pair"): RAN})
    _, notes = write_board(suite, pairs, tmp_path)
    assert boards == [(2, {"n_boot": 7, "seed": 11})]
    assert pages == [(2, {"n_boot": 7, "seed": 11, "strongest": 2})]
    assert notes == ["board.html: n1"]
    assert (tmp_path / "board" / "pair" / "leaderboard.md").is_file()
    # both data sets with runs: the page shows all of them (3 + 2 = 5), after any earlier note
    boards.clear()
    pages.clear()
    monkeypatch.setattr(board, "case_analysis", refuse)
    pairs = pairs_of(made, {(d, "small"): RAN for d in ("agree", "low", "vote")})
    pairs += [Pair(d, "pair", made["runs"][d], RAN) for d in ("agree", "low")]
    _, notes = write_board(suite, pairs, tmp_path / "both")
    assert [n for n, _ in boards] == [3, 2] and [n for n, _ in pages] == [5]
    assert notes == ["small: no case analysis: refused", "board.html: n1"]


def test_a_data_set_whose_runs_cannot_be_ranked_leaves_the_next(
    made: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = board.build_boards
    calls: list[int] = []

    def first_refused(runs: Any, **kwargs: Any) -> Any:
        calls.append(len(runs))
        if len(calls) == 1:
            raise FcbError("refused")
        return real(runs, **kwargs)

    monkeypatch.setattr(board, "build_boards", first_refused)
    pairs = pairs_of(made, {(d, "small"): RAN for d in ("agree", "low", "vote")})
    pairs += [Pair(d, "pair", made["runs"][d], RAN) for d in ("agree", "low")]
    _, notes = write_board(made["suite"], pairs, tmp_path)
    assert calls == [3, 2] and notes[0] == "small: no leaderboard: refused"
    assert (tmp_path / "board" / "pair" / "leaderboard.json").is_file()
    assert not (tmp_path / "board" / "small").exists()
