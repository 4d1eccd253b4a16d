"""``fcb schema``: print the JSON Schema of an output document."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("schema", help="print the JSON Schema of an output document (metrics, journal, run, ...)")
    p.add_argument(
        "document",
        metavar="NAME",
        help="metrics, journal, run, scope, baseline, leaderboard, compare, audit, case-analysis (items, its old "
        "name), suite (fcb suite's file) or threshold (fcb threshold's file)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.documents import SCHEMAS, schema_text

    name = {"items": "case-analysis"}.get(args.document, args.document)  # the name it had before
    if name not in SCHEMAS:
        raise UsageError(f"no document {args.document!r}; one of: {', '.join(SCHEMAS)}")
    sys.stdout.write(schema_text(name))
    return EXIT_OK
