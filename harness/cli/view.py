"""``fcb view``: (re)write a run's report.html and open it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("view", help="(re)write a run's report.html and open it (or print its path)")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--no-open", action="store_true", help="only write the page and print its path")
    p.add_argument("--cases", metavar="PATH", help="read the case text from here (the cases file has moved)")
    p.add_argument("--force", action="store_true", help="write the page even without the case text it had")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.errors import ReportError
    from harness.files import atomic_write
    from harness.report.html import open_in_browser, run_page
    from harness.runfolder.names import REPORT_HTML
    from harness.runfolder.read import read_metrics

    run_dir = Path(args.run_dir)
    doc = read_metrics(run_dir)  # RunLoadError (exit 2) for a folder that holds no finished run
    page, note = run_page(run_dir, doc, args.cases)
    path = run_dir / REPORT_HTML
    if note.startswith(("case text unavailable", "the run does not name")):
        if path.exists() and not args.force:
            # never silently replace a page that holds the case text with one that does not
            raise ReportError(f"{note}; {path} is left as it was (pass --cases PATH to read the cases from where "
                              "they are now, or --force to write the page without them)")  # fmt: skip
        print(f"fcb view: {note}; the page has no case text", file=sys.stderr)
    atomic_write(path, page.encode())
    if args.no_open or not open_in_browser(path):
        print(path)
    return EXIT_OK
