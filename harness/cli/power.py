"""``fcb power RUN [RUN2] --effect X``: the smallest difference a comparison on these cases could detect, and the
cases it would take to detect X (`harness.leaderboard.power`)."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_OK, write_or_print
from harness.cli.options import fraction, non_negative_int, seed
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("power", help="how large a difference these cases can detect, and how many cases X needs")
    p.add_argument("runs", nargs="+", metavar="RUN", help="one run (the difference's spread estimated from it) or two "
                   "runs on the same cases (their paired difference)")  # fmt: skip
    p.add_argument("--effect", type=fraction, required=True, metavar="X", help="the difference to detect (absolute)")
    p.add_argument("--alpha", type=fraction, default=0.05, help="the one-sided test's level (default 0.05)")
    p.add_argument("--power", type=fraction, default=0.8, help="the chance of detecting X (default 0.8)")
    p.add_argument("--bootstrap", type=non_negative_int, default=2000, metavar="N")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import orjson

    from harness.leaderboard.power import power_table
    from harness.leaderboard.runs import read_run
    from harness.tables import figure
    from harness.tables import table as text_table

    if len(args.runs) > 2:
        raise UsageError(f"fcb power takes one run or two, not {len(args.runs)}")
    for name in ("effect", "alpha", "power"):
        if not 0 < getattr(args, name) < 1:
            raise UsageError(f"--{name} {getattr(args, name)}: a value between 0 and 1 (exclusive)")
    if args.bootstrap < 2:
        raise UsageError(f"--bootstrap {args.bootstrap}: at least 2 resamples to estimate a spread")
    table = power_table([read_run(r) for r in args.runs], effect=args.effect, alpha=args.alpha, power=args.power,
                        n_boot=args.bootstrap, seed=args.seed)  # fmt: skip
    if args.format == "json":
        write_or_print(orjson.dumps(table, option=orjson.OPT_INDENT_2).decode(), None)
        return EXIT_OK
    rows = [[name, figure(m["se"]), figure(m["mde"]), "" if m["cases_needed"] is None else f"{m['cases_needed']:,}"]
            for name, m in table["metrics"].items()]  # fmt: skip
    how = "the paired difference of the two runs" if table["paired"] else "sqrt(2) x this run's own spread"
    print(text_table(rows, headers=["metric", "se of a difference", f"MDE at {table['cases']} cases",
                                    f"cases to detect {args.effect:g}"], tablefmt="simple"))  # fmt: skip
    print(f"\nOne-sided at alpha = {args.alpha:g} with power {args.power:g}; the standard error from {how} "
          f"({args.bootstrap} resamples, seed {args.seed}). Cases needed scale as 1 / effect^2.")  # fmt: skip
    return EXIT_OK
