"""``fcb compare``: compare a run with a baseline; exit 1 on a significant regression."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_INVALID, EXIT_OK, write_or_print
from harness.cli.options import non_negative_int, seed
from harness.errors import UsageError
from harness.types import PROBES


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("compare", help="compare a run with a baseline; exit 1 on a significant regression")
    p.add_argument("baseline", metavar="BASELINE", help="a run folder or a baseline file (results/baselines/*.json)")
    p.add_argument("new", metavar="NEW", nargs="?", help="a run folder or a baseline file")
    p.add_argument(
        "--probe",
        metavar="P",
        choices=PROBES,
        help="with one run: compare its plain verdicts (base) with its P variants' (new), paired by (case, epoch); "
        "with two: gate probe P's figure alone (two runs that both asked probes gate every shared probe's "
        "figure by default)",
    )
    p.add_argument(
        "--max-drop",
        type=float,
        default=0.01,
        help="largest tolerated drop of a headline metric (and rise of a probe's flip, attack success or fall rate)",
    )
    p.add_argument(
        "--alpha",
        type=float,
        default=0.05,
        help="significance level: of each metric's paired bootstrap for runs of one epoch; of all the "
        "metrics together (Holm) for runs with epochs or --probe",
    )
    p.add_argument("--format", choices=["text", "md", "json", "html"], default="text")
    p.add_argument("--out", metavar="PATH")
    p.add_argument("--bootstrap", type=non_negative_int, default=2000, metavar="N")
    p.add_argument("--seed", type=seed, default=0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.leaderboard.compare import compare_runs
    from harness.leaderboard.compare_render import RENDERERS
    from harness.leaderboard.runs import read_run

    if not 0 < args.alpha < 1:
        raise UsageError(f"--alpha {args.alpha}: a significance level between 0 and 1")
    settings = {"max_drop": args.max_drop, "alpha": args.alpha, "n_boot": args.bootstrap, "seed": args.seed}
    if args.probe and args.new is not None:
        base, new = read_run(args.baseline), read_run(args.new)
        for r in (base, new):
            if args.probe not in r.variants:
                raise UsageError(f"{r.path}: --probe {args.probe}: the run asked no {args.probe} variants; "
                                 f"fcb eval --probe {args.probe} asks them")  # fmt: skip
        cmp = compare_runs(base, new, probes=[args.probe], **settings)
    elif args.probe:
        from harness.leaderboard.probe_compare import compare_probe

        if args.format == "html":  # the page's case explorer shows two runs' verdicts a case, not a run's variants
            raise UsageError("--probe: --format html is not available (its case explorer would show the plain "
                             "verdicts on both sides); use text, md or json")  # fmt: skip
        cmp = compare_probe(read_run(args.baseline), args.probe, **settings)
    elif args.new is None:
        raise UsageError("fcb compare needs two runs (BASELINE NEW), or one run and --probe P")
    else:
        cmp = compare_runs(read_run(args.baseline), read_run(args.new), **settings)
    if args.format == "html":
        from harness.leaderboard.compare_render import to_html

        write_or_print(to_html(cmp), args.out)
    else:
        write_or_print(RENDERERS[args.format](cmp), args.out)
    return EXIT_INVALID if cmp["regression"] else EXIT_OK
