"""``fcb merge``: combine the shard runs of one evaluation into one run."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("merge", help="combine the shard runs of one evaluation into one run")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", required=True, metavar="RUN")
    p.add_argument("--cases", metavar="PATH", help="the cases file, if it moved since the shards ran")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.report.text import render_summary
    from harness.run.merge import merge_runs

    def warn(message: str) -> None:
        print(f"fcb merge: warning: {message}", file=sys.stderr)

    document = merge_runs(args.runs, args.out, cases=args.cases, warn=warn)
    if not args.quiet:
        print(render_summary(document))
    print(f"results: {args.out}", file=sys.stderr)
    return EXIT_OK
