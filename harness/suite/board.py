"""What ``fcb suite`` writes after its runs: the gates, and ``OUT/board/`` with, per data set, the leaderboard
(``leaderboard.md``, ``leaderboard.json``, as ``fcb leaderboard`` writes them) and, with at least 3 detectors, the
case-level analysis (``case-analysis.json``, ``case-analysis.md``, as ``fcb cases``), plus ``index.md`` linking every
run's report, and ``board.html``: the same page as ``fcb board`` over every completed run (leaderboards, heatmap, case
table)."""

from __future__ import annotations

import os
from pathlib import Path

from harness.errors import FcbError
from harness.files import atomic_write
from harness.leaderboard.board_page import BOARD_HTML
from harness.leaderboard.board_page import write_board as write_board_page
from harness.leaderboard.case_analysis import case_analysis
from harness.leaderboard.case_analysis_render import to_json as analysis_json
from harness.leaderboard.case_analysis_render import to_markdown as analysis_markdown
from harness.leaderboard.compare import compare_runs
from harness.leaderboard.rank import build_boards
from harness.leaderboard.render import to_json as board_json
from harness.leaderboard.render import to_markdown as board_markdown
from harness.leaderboard.runs import Run, read_run
from harness.runfolder.names import REPORT, REPORT_HTML
from harness.suite.pairs import GOOD, Pair
from harness.suite.spec import Suite, resolve
from harness.tables import table

MIN_ANALYSED = 3  # the case analysis needs the strongest three detectors


def check_gates(suite: Suite, base: Path, pairs: list[Pair]) -> list[str]:
    """Compare each gated pair's run with its baseline as ``fcb compare`` does; marks the pair and returns the
    lines that say what was found."""
    by_key = {(p.detector, p.dataset): p for p in pairs}
    lines = []
    for gate in suite.gates:
        pair = by_key.get((gate.detector, gate.dataset))
        if pair is None or pair.status not in GOOD:
            lines.append(f"gate {gate.detector} on {gate.dataset}: not checked (the run did not complete)")
            continue
        try:
            cmp = compare_runs(read_run(resolve(base, gate.baseline)), read_run(pair.run_dir),
                               max_drop=gate.max_drop, alpha=gate.alpha, seed=suite.seed)  # fmt: skip
        except FcbError as exc:
            pair.gate, pair.message = "regressed", f"gate not checked: {exc}"
            lines.append(f"gate {gate.detector} on {gate.dataset}: {exc}")
            continue
        pair.gate = "regressed" if cmp["regression"] else "passed"
        dropped = [name for name, m in cmp["metrics"].items() if m["regression"]]
        lines.append(
            f"gate {gate.detector} on {gate.dataset}: {pair.gate}" + (f" ({', '.join(dropped)})" if dropped else "")
        )
    return lines


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, (text.rstrip("\n") + "\n").encode())


def write_board(suite: Suite, pairs: list[Pair], out: Path) -> tuple[Path, list[str]]:
    """Write ``OUT/board/``; returns the index's path and the notes on what could not be written."""
    board = out / "board"
    notes: list[str] = []
    links: dict[str, list[str]] = {}
    every: list[Run] = []
    for ds in suite.datasets:
        done = [p for p in pairs if p.dataset == ds.name and p.status in GOOD]
        links[ds.name] = []
        if not done:
            continue
        try:
            runs = [read_run(p.run_dir) for p in done]
            boards = build_boards(runs, n_boot=suite.bootstrap, seed=suite.seed)
        except FcbError as exc:
            notes.append(f"{ds.name}: no leaderboard: {exc}")
            continue
        every += runs
        _write(board / ds.name / "leaderboard.md", board_markdown(boards))
        _write(board / ds.name / "leaderboard.json", board_json(boards))
        links[ds.name] += [f"{ds.name}/leaderboard.md", f"{ds.name}/leaderboard.json"]
        if len(runs) >= MIN_ANALYSED:
            links[ds.name] += _write_analysis(runs, suite, board / ds.name, notes, ds.name)
    page = _write_page(every, suite, board, notes)
    index = board / "index.md"
    _write(index, index_markdown(suite, pairs, board, links, notes, page))
    return index, notes


def _write_page(runs: list[Run], suite: Suite, board: Path, notes: list[str]) -> bool:
    """``board.html`` over every completed run (as ``fcb board``); False, with a note, when it cannot be written."""
    if not runs:
        return False
    try:
        _, page_notes = write_board_page(runs, board / BOARD_HTML, n_boot=suite.bootstrap, seed=suite.seed,
                                         strongest=suite.strongest)  # fmt: skip
    except FcbError as exc:
        notes.append(f"no {BOARD_HTML}: {exc}")
        return False
    notes += [f"{BOARD_HTML}: {n}" for n in page_notes]
    return True


def _write_analysis(runs: list[Run], suite: Suite, folder: Path, notes: list[str], name: str) -> list[str]:
    try:
        doc = case_analysis(runs, k=min(suite.strongest, len(runs)))
    except FcbError as exc:
        notes.append(f"{name}: no case analysis: {exc}")
        return []
    _write(folder / "case-analysis.json", analysis_json(doc))
    _write(folder / "case-analysis.md", analysis_markdown(doc))
    return [f"{name}/case-analysis.md", f"{name}/case-analysis.json"]


def summary_rows(pairs: list[Pair]) -> list[list[str]]:
    """One row per pair: data set, detector, status, macro-F1, cases, gate, message."""
    rows = []
    for p in pairs:
        f1, cases = "", ""
        if p.status in GOOD:
            try:
                run = read_run(p.run_dir)
                value = run.metric("macro_f1")
                f1, cases = ("n/a" if value is None else f"{value:.3f}"), str(len(run.ids))
            except FcbError as exc:
                p.message = str(exc)
        rows.append(
            [p.dataset, p.detector, p.status, f1, cases, p.gate or "-", p.message.splitlines()[0] if p.message else ""]
        )
    return rows


SUMMARY_HEADER = ["data set", "detector", "status", "macro-F1", "cases", "gate", "note"]


def index_markdown(
    suite: Suite, pairs: list[Pair], board: Path, links: dict[str, list[str]], notes: list[str], page: bool = False
) -> str:
    lines = ["# Suite board", ""]
    if page:
        lines += [f"[{BOARD_HTML}]({BOARD_HTML}): every data set's leaderboard, accuracy by category and the cases "
                  "across detectors, in one page (as `fcb board`).", ""]  # fmt: skip
    for ds in suite.datasets:
        lines += [f"## {ds.name}", ""]
        lines += [f"- [{link.split('/')[-1]}]({link})" for link in links.get(ds.name, [])] or [
            "- no board (no run completed)"
        ]
        lines.append("")
        for p in (p for p in pairs if p.dataset == ds.name):
            report = p.run_dir / (REPORT_HTML if (p.run_dir / REPORT_HTML).exists() else REPORT)
            target = os.path.relpath(report, board).replace(os.sep, "/")
            shown = f"[{p.detector}]({target})" if report.exists() else p.detector
            lines.append(f"- {shown}: {p.status}" + (f", gate {p.gate}" if p.gate else ""))
        lines.append("")
    lines += ["## Summary", "", table(summary_rows(pairs), SUMMARY_HEADER, tablefmt="github"), ""]
    lines += [f"- {note}" for note in notes]
    return "\n".join(lines)
