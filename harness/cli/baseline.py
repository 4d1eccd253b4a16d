"""``fcb baseline save``: save a run as a committed baseline file."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("baseline", help="manage committed baselines")
    bsub = p.add_subparsers(dest="baseline_command", required=True)
    b = bsub.add_parser("save", help="save a run as results/baselines/NAME.json")
    b.add_argument("run", metavar="RUN")
    b.add_argument("--name", required=True)
    b.add_argument("--dir", default="results/baselines", help="where baselines live (default results/baselines)")
    b.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """``baseline save``, the one subcommand."""
    import re
    from pathlib import Path

    import orjson

    from harness.files import atomic_write
    from harness.leaderboard.runs import baseline_document, read_run

    if not re.fullmatch(r"[A-Za-z0-9._-]+", args.name):
        raise UsageError(f"--name {args.name!r}: use letters, digits, '.', '_' and '-'")
    saved = read_run(args.run)
    out = Path(args.dir) / f"{args.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, orjson.dumps(baseline_document(saved, args.name)))
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK
