"""``fcb cases`` (formerly ``fcb items``, a name that still works): case-level analysis over several detectors'
runs on one data set (difficulty, discrimination, suspect labels)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import EXIT_OK
from harness.cli.options import non_negative_int, positive_int

JSON_FILE, MARKDOWN_FILE = "case-analysis.json", "case-analysis.md"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "cases",
        aliases=["items"],  # its name before: an item is one unit of a run (a case, an epoch, a variant)
        help="per-case difficulty, discrimination and suspect labels over several detectors' runs",
    )
    p.add_argument(
        "runs", nargs="+", metavar="RUN_DIR_OR_GLOB", help="complete runs of different detectors, one data set"
    )
    p.add_argument("--format", choices=["md", "json"], default="md", help="what is printed (default md)")
    p.add_argument("--out", metavar="DIR", help=f"write {JSON_FILE} and {MARKDOWN_FILE} into DIR instead of printing")
    p.add_argument(
        "--strongest",
        type=positive_int,
        default=3,
        metavar="K",
        help="how many of the best detectors by macro-F1 must all make the same wrong prediction for a suspect "
        "label (default 3; more when detectors tie at the K-th place)",
    )
    p.add_argument("--top", type=non_negative_int, default=20, metavar="N", help="rows of each Markdown table (20)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.errors import RunLoadError
    from harness.files import atomic_write
    from harness.leaderboard.case_analysis import case_analysis
    from harness.leaderboard.case_analysis_render import to_json, to_markdown
    from harness.leaderboard.runs import find_runs, read_run

    runs = [read_run(p) for p in find_runs(args.runs)]
    if not runs:
        raise RunLoadError(f"no runs found in {' '.join(args.runs)}")
    doc = case_analysis(runs, k=args.strongest)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for name, text in ((JSON_FILE, to_json(doc)), (MARKDOWN_FILE, to_markdown(doc, args.top))):
            atomic_write(out / name, (text + "\n").encode())
            print(f"wrote {out / name}", file=sys.stderr)
    else:
        print(to_json(doc) if args.format == "json" else to_markdown(doc, args.top))
    return EXIT_OK
