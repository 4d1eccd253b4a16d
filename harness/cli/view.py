"""``fcb view``: (re)write a run's report.html and open it."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("view", help="(re)write a run's report.html and open it (or print its path)")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--no-open", action="store_true", help="only write the page and print its path")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.report.html import open_in_browser, write_html

    path = write_html(args.run_dir)
    if args.no_open or not open_in_browser(path):
        print(path)
    return EXIT_OK
