"""``fcb validate``: check cases files against the schema and the label scheme."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_INVALID, EXIT_OK, EXIT_USAGE, print_problems


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("validate", help="check cases files against the schema and the label scheme")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.cases.reader import scan

    failed = empty = False
    for path in args.paths:
        result = scan(path, strict=args.strict)  # unreadable: the CLI's entry point says which, exit 2
        if result.empty:
            print(f"fcb validate: {result.empty}", file=sys.stderr)
            empty = True
            continue
        print_problems(result.problems, file=sys.stdout)  # the findings are the output; the exit code says failure
        n_err, n_warn = len(result.errors), len(result.problems) - len(result.errors)
        print(
            f"{path}: {len(result.labels)} valid case(s), {result.invalid_lines} invalid line(s), "
            f"{n_err} error(s), {n_warn} warning(s)"
        )
        failed |= bool(n_err)
    return EXIT_USAGE if empty else EXIT_INVALID if failed else EXIT_OK
