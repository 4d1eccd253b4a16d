"""``fcb export``: a finished run for other tools: ``--to parquet`` (predictions joined with the cases)."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("export", help="export a run: --to parquet (predictions joined with the cases)")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--to", choices=["parquet"], required=True, help="parquet: one row per case (pip extra: parquet)")
    p.add_argument("--out", metavar="FILE", help="where to write (default RUN_DIR/predictions.parquet)")
    p.add_argument("--cases", metavar="PATH", help="read the cases from here (the cases file has moved)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.leaderboard.export import export_parquet

    path, rows = export_parquet(args.run_dir, args.out, args.cases)
    print(f"wrote {path} ({rows} rows)", file=sys.stderr)
    return EXIT_OK
