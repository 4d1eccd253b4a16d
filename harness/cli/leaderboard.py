"""``fcb leaderboard``: rank detectors from run folders."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_OK, write_or_print
from harness.cli.options import METRICS, non_negative_int, seed
from harness.errors import RunLoadError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("leaderboard", help="rank detectors from run folders")
    p.add_argument("runs", nargs="+", metavar="RESULT_DIR_OR_GLOB")
    p.add_argument("--format", choices=["md", "html", "csv", "json"], default="md")
    p.add_argument("--out", metavar="PATH", help="write here instead of standard output")
    p.add_argument(
        "--metric",
        choices=METRICS,
        default="macro_f1",
        help="the ranking metric (default macro_f1); NAME_real ranks on the natural + assembled cases",
    )
    p.add_argument("--include-incomplete", action="store_true", help="rank interrupted or partial runs too")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N", help="paired bootstrap resamples")
    p.add_argument("--seed", type=seed, default=0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.leaderboard.rank import build_boards
    from harness.leaderboard.render import RENDERERS
    from harness.leaderboard.runs import find_runs, read_run

    runs = [read_run(p) for p in find_runs(args.runs)]
    if not runs:
        raise RunLoadError(f"no runs found in {' '.join(args.runs)}")
    boards = build_boards(
        runs, metric=args.metric, include_incomplete=args.include_incomplete, n_boot=args.bootstrap, seed=args.seed
    )
    write_or_print(RENDERERS[args.format](boards), args.out)
    return EXIT_OK
