"""``fcb suite``: run many detectors on many data sets from one TOML file, then write a board folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "suite", help="run detectors x data sets from a suite file (resumable), then write leaderboards and analysis"
    )
    p.add_argument("suite", metavar="SUITE.toml", help="the suite file (configs/suites/*.toml)")
    p.add_argument("--out", metavar="DIR", help="the suite's folder (default: results/suites/<file name>)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.suite.board import SUMMARY_HEADER, check_gates, summary_rows, write_board
    from harness.suite.pairs import STOPPED_INTERRUPTED, run_suite
    from harness.suite.spec import load_suite
    from harness.tables import table

    suite, base = load_suite(args.suite)
    out = Path(args.out or Path("results") / "suites" / Path(args.suite).stem)
    pairs = run_suite(suite, base, out, quiet=args.quiet)
    if pairs and pairs[-1].status == STOPPED_INTERRUPTED:
        print(f"suite interrupted; run `fcb suite {args.suite} --out {out}` again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    gate_lines = check_gates(suite, base, pairs)
    index, notes = write_board(suite, pairs, out)
    print(table(summary_rows(pairs), SUMMARY_HEADER, tablefmt="simple"))
    for line in [*gate_lines, *notes]:
        print(line)
    for p in pairs:
        if p.message and not p.ok:
            print(f"{p.detector} on {p.dataset}: {p.message}", file=sys.stderr)
    print(f"board: {index}", file=sys.stderr)
    failed = [p for p in pairs if not p.ok]
    if failed:
        print(f"{len(failed)} of {len(pairs)} pair(s) failed or regressed", file=sys.stderr)
        return EXIT_INVALID
    return EXIT_OK
