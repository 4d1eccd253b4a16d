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
    p.add_argument(
        "--metric",
        choices=[*METRICS, "ece"],
        default="macro_f1",
        help="a headline metric, or ece: the expected calibration error of risk_score (default macro_f1)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tabulate import tabulate

    from harness.files import atomic_write
    from harness.leaderboard.runs import Run, find_runs, read_run
    from harness.report.plots import trend_png

    runs = [read_run(p) for p in find_runs([args.results_dir])]
    wanted = args.detector
    runs = sorted((r for r in runs if not wanted or wanted in (r.label, r.detector)), key=lambda r: r.created)
    if not runs:
        raise UsageError(f"no runs{' of ' + args.detector if args.detector else ''} in {args.results_dir}")

    def value(r: Run) -> float | None:
        if args.metric == "ece":  # checked against the run's journal, as a leaderboard shows it
            return ece[0] if (ece := r.ece()) else None
        return r.metric(args.metric)

    def shown(r: Run) -> float | str | None:
        ece = r.ece() if args.metric == "ece" else None
        return f"{ece[0]:.4f} ({ece[1]} bins)" if ece else value(r)  # an ECE always says over how many bins

    rows = [
        [
            r.created,
            r.label,
            shown(r),
            f"{r.dataset['name']} {r.sha256[:12]}",
            "" if r.complete else "incomplete",
            str(r.path),
        ]
        for r in runs
    ]
    print(tabulate(rows, headers=["created", "detector", args.metric, "data set", "", "run"], tablefmt="simple"))
    series: dict[str, list[tuple[str, float]]] = {}
    for r in runs:
        if (figure := value(r)) is not None:
            series.setdefault(f"{r.label} @ {r.sha256[:8]}", []).append((r.created, figure))
    png = Path(args.results_dir) / f"history-{args.metric}.png"
    atomic_write(png, trend_png(series, args.metric))
    print(f"wrote {png}", file=sys.stderr)
    return EXIT_OK
