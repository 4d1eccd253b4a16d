"""``fcb board``: one self-contained HTML page over many runs (per data set: leaderboard, heatmap, case table)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import EXIT_OK
from harness.cli.options import non_negative_int, positive_int, seed


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "board", help="one HTML page over many runs: leaderboards, a category heatmap and the cases across detectors"
    )
    p.add_argument("dir", metavar="DIR", help="a folder of run folders (searched 3 levels down: a suite's runs/)")
    p.add_argument("runs", nargs="*", metavar="RUN_DIR", help="more run folders (or folders of them)")
    p.add_argument("-o", "--out", metavar="PATH", help="the page (default: DIR/board.html)")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N", help="paired bootstrap resamples")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--strongest", type=positive_int, default=3, metavar="K", help="fcb cases --strongest (default 3)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.errors import RunLoadError
    from harness.leaderboard.board_page import BOARD_HTML, write_board
    from harness.leaderboard.runs import find_runs, read_run

    folders = find_runs([args.dir, *args.runs])  # the one finder: fcb leaderboard DIR ranks the same runs
    if not folders:
        raise RunLoadError(f"no run folders (with metrics.json) in {' '.join([args.dir, *args.runs])}")
    runs = [read_run(p) for p in folders]
    out = Path(args.out or Path(args.dir) / BOARD_HTML)
    path, notes = write_board(runs, out, n_boot=args.bootstrap, seed=args.seed, strongest=args.strongest)
    for note in notes:
        print(f"fcb board: {note}", file=sys.stderr)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {len(runs)} runs)", file=sys.stderr)
    return EXIT_OK
