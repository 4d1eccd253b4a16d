"""``fcb history``: each run's metric over time, and a trend plot."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK
from harness.cli.options import METRICS
from harness.errors import UsageError

REPEATS = {
    "epoch_sd": "epochs.spread.macro_f1.sd",
    "self_agreement": "epochs.self_agreement.all_agree",
    "order_flip_rate": "probes.order.flip_rate",
    "names_flip_rate": "probes.names.flip_rate",
    "evidence_order_flip_rate": "probes.evidence-order.flip_rate",
    "format_flip_rate": "probes.format.flip_rate",
    "tone_flip_rate": "probes.tone.flip_rate",
    "length_flip_rate": "probes.length.flip_rate",
    "restate_flip_rate": "probes.restate.flip_rate",
    "inject_attack_success": "probes.inject.falls.fall_rate",
    "duplicate_fall_rate": "probes.duplicate.falls.fall_rate",
    "escalation_rate_high": "operating_points.policies.high.escalation_rate",
    "escalation_rate_medium_high": "operating_points.policies.high_or_medium.escalation_rate",
    "caught_medium_high": "operating_points.policies.high_or_medium.false_consensus_caught",
    "aurc": "operating_points.risk_coverage.aurc",
}
"""harness.leaderboard.rank.REPEATS, kept here so that ``fcb --help`` imports no leaderboard code; a test holds them
equal."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("history", help="each run's metric over time, and a trend plot")
    p.add_argument("results_dir", metavar="RESULTS_DIR")
    p.add_argument("--detector", metavar="NAME", help="only runs of this detector: its --name, or its spec")
    p.add_argument(
        "--metric",
        choices=[*METRICS, "ece", *REPEATS],
        default="macro_f1",
        help="a headline metric, ece: the expected calibration error of risk_score, or a figure of runs with "
        "--epochs or --probe: epoch_sd, self_agreement, PROBE_flip_rate, inject_attack_success, "
        "duplicate_fall_rate; escalation_rate_high, escalation_rate_medium_high, caught_medium_high, aurc (default "
        "macro_f1)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from harness.files import atomic_write
    from harness.leaderboard.runs import Run, find_runs, read_run
    from harness.report.plots import trend_png
    from harness.tables import figure, table

    runs = [read_run(p) for p in find_runs([args.results_dir])]
    wanted = args.detector
    runs = sorted((r for r in runs if not wanted or wanted in (r.label, r.detector)), key=lambda r: r.created)
    if not runs:
        raise UsageError(f"no runs{' of ' + args.detector if args.detector else ''} in {args.results_dir}")

    def value(r: Run) -> float | None:
        if args.metric == "ece":  # checked against the run's journal, as a leaderboard shows it
            return ece[0] if (ece := r.ece()) else None
        return r.metric(REPEATS.get(args.metric, args.metric))

    def shown(r: Run) -> str:
        ece = r.ece() if args.metric == "ece" else None
        # four places: a trend's small steps show (a leaderboard shows three); an ECE says over how many bins
        return f"{figure(ece[0], 4)} ({ece[1]} bins)" if ece else figure(value(r), 4)

    extra = [k for k, path in REPEATS.items() if k != args.metric and any(r.metric(path) is not None for r in runs)]
    rows = [
        [
            r.created,
            r.label,
            shown(r),
            *(figure(r.metric(REPEATS[k]), 4) for k in extra),  # shown only when some run has the figure
            f"{r.dataset['name']} {r.sha256[:12]}",
            "" if r.complete else "incomplete",
            str(r.path),
        ]
        for r in runs
    ]
    headers = ["created", "detector", args.metric, *extra, "data set", "status", "run"]
    print(table(rows, headers=headers, tablefmt="simple"))
    series: dict[str, list[tuple[str, float]]] = {}
    for r in runs:
        if (v := value(r)) is not None:
            series.setdefault(f"{r.label} @ {r.sha256[:8]}", []).append((r.created, v))
    png = Path(args.results_dir) / f"history-{args.metric}.png"
    atomic_write(png, trend_png(series, args.metric))
    print(f"wrote {png}", file=sys.stderr)
    return EXIT_OK
