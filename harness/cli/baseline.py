"""``fcb baseline save``: save a run as a committed baseline file; ``fcb baseline check``: is a baseline file
readable, and made on the cases a run would use (``make regress`` asks before it evaluates anything)."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK, default_cases
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("baseline", help="manage committed baselines")
    bsub = p.add_subparsers(dest="baseline_command", required=True)
    b = bsub.add_parser("save", help="save a run as results/baselines/NAME.json")
    b.add_argument("run", metavar="RUN")
    b.add_argument("--name", required=True)
    b.add_argument("--dir", default="results/baselines", help="where baselines live (default results/baselines)")
    b.set_defaults(func=run)
    c = bsub.add_parser("check", help="check a baseline file, and that it was made on CASES, before a long run")
    c.add_argument("baseline", metavar="BASELINE")
    c.add_argument("cases", nargs="?", metavar="CASES", help="the cases a run will use (default: the embedded set)")
    c.set_defaults(func=check)


def run(args: argparse.Namespace) -> int:
    """``baseline save``."""
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


def check(args: argparse.Namespace) -> int:
    """``baseline check``: exit 2, naming the file and field, when the baseline cannot be read or was made on other
    cases than CASES (the whole file: a baseline of a subset names its file's digest too)."""
    from harness.cases.lines import file_sha256
    from harness.runfolder.baseline import read_baseline

    doc = read_baseline(args.baseline)  # RunLoadError names the file and field: exit 2
    dataset = doc["doc"]["dataset"]
    cases = default_cases(args.cases)
    made_on = dataset.get("file_sha256", dataset["sha256"])
    if file_sha256(cases) != made_on:
        raise UsageError(
            f"{args.baseline}: made on {dataset['name']} (sha256 {made_on[:12]}), not on {cases} "
            f"(sha256 {file_sha256(cases)[:12]}): a comparison would refuse them; pass the baseline's cases"
        )
    n = len(doc["cases"]["ids"])
    print(f"{args.baseline}: baseline {doc['name']!r}, {n} cases of {dataset['name']}", file=sys.stderr)
    return EXIT_OK
