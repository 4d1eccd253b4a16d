"""``fcb history``: each run's metric over time, and a trend plot."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK
from harness.cli.options import METRICS
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("history", help="each run's metric over time, and a trend plot")
    p.add_argument("results_dir", metavar="RESULTS_DIR")
    p.add_argument("--detector", metavar="NAME", help="only runs of this detector: its --name, or its spec")
    p.add_argument("--metric", choices=METRICS, default="macro_f1")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tabulate import tabulate

    from harness.files import atomic_write
    from harness.leaderboard.runs import find_runs, read_run
    from harness.report.plots import trend_png

    runs = [read_run(p) for p in find_runs([args.results_dir])]
    wanted = args.detector
    runs = sorted((r for r in runs if not wanted or wanted in (r.label, r.detector)), key=lambda r: r.created)
    if not runs:
        raise UsageError(f"no runs{' of ' + args.detector if args.detector else ''} in {args.results_dir}")
    rows = [
        [
            r.created,
            r.label,
            r.metric(args.metric),
            f"{r.dataset['name']} {r.sha256[:12]}",
            "" if r.complete else "incomplete",
            str(r.path),
        ]
        for r in runs
    ]
    print(tabulate(rows, headers=["created", "detector", args.metric, "data set", "", "run"], tablefmt="simple"))
    series: dict[str, list[tuple[str, float]]] = {}
    for r in runs:
        if (value := r.metric(args.metric)) is not None:
            series.setdefault(f"{r.label} @ {r.sha256[:8]}", []).append((r.created, value))
    png = Path(args.results_dir) / f"history-{args.metric}.png"
    atomic_write(png, trend_png(series, args.metric))
    print(f"wrote {png}", file=sys.stderr)
    return EXIT_OK
