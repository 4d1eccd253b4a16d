"""``fcb export``: a finished run for other tools: ``--to parquet`` (predictions joined with the cases), ``--to
mlflow`` (params, metrics and report files logged as an MLflow run)."""

from __future__ import annotations

import argparse
import shlex
import sys

from harness.cli.common import EXIT_OK


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("export", help="export a run: --to parquet (predictions with the cases) or mlflow")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument(
        "--to",
        choices=["parquet", "mlflow"],
        required=True,
        help="parquet: one row per case (pip extra: parquet); mlflow: an MLflow run (pip extra: mlflow)",
    )
    p.add_argument("--out", metavar="FILE", help="parquet: where to write (default RUN_DIR/predictions.parquet)")
    p.add_argument("--cases", metavar="PATH", help="parquet: read the cases from here (the cases file has moved)")
    p.add_argument(
        "--items",
        action="store_true",
        help="parquet: a row per case, epoch and probe variant (runs with --epochs, --probe); default a row per case",
    )
    p.add_argument("--tracking-uri", metavar="URI", help="mlflow: file:DIR, a server... (default: MLflow's own)")
    p.add_argument("--experiment", default="fcb", metavar="NAME", help="mlflow: the experiment (default fcb)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from harness.errors import UsageError

    if args.to == "mlflow":
        from harness.leaderboard.export_mlflow import export_mlflow

        if args.out or args.cases or args.items:
            raise UsageError(
                "--out, --cases and --items are for --to parquet; --to mlflow takes --tracking-uri, --experiment"
            )
        run_id, experiment_id, logged = export_mlflow(args.run_dir, args.tracking_uri, args.experiment)
        done = "logged" if logged else "already exported (the same metrics.json) as"
        print(f"{done} MLflow run {run_id} in experiment {args.experiment} ({experiment_id})", file=sys.stderr)
        store = f" --backend-store-uri {shlex.quote(args.tracking_uri)}" if args.tracking_uri else ""
        print(f"browse it with: mlflow ui{store} (the whole mlflow package, pip install mlflow: the [mlflow] extra "
              "holds only the tracking client)", file=sys.stderr)  # fmt: skip
        print(run_id)
        return EXIT_OK
    from harness.leaderboard.export import export_parquet

    if args.tracking_uri:
        raise UsageError("--tracking-uri is for --to mlflow")
    path, rows = export_parquet(args.run_dir, args.out, args.cases, items=args.items)
    print(f"wrote {path} ({rows} rows)", file=sys.stderr)
    return EXIT_OK
