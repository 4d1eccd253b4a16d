"""``fcb stats``: print a cases file's balance."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK, default_cases
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("stats", help="print a cases file's balance (default: the embedded data set)")
    p.add_argument("path", nargs="?", metavar="PATH")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from harness.cases.reader import scan
    from harness.cases.stats import balance, render

    path = default_cases(args.path)
    result = scan(path)  # a file that cannot be read: the CLI's entry point says which, exit 2
    if result.empty:
        raise UsageError(result.empty)
    counts = balance(result.labels)
    if args.format == "json":
        print(
            orjson.dumps(
                {"path": path, "cases": len(result.labels), "counts": counts}, option=orjson.OPT_INDENT_2
            ).decode()
        )
    else:
        print(render(path, len(result.labels), counts))
    if result.errors:
        print(f"{path}: {result.invalid_lines} invalid line(s) left out; run fcb validate for details", file=sys.stderr)
    return EXIT_OK
