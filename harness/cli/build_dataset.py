"""``fcb build-dataset``: build the real-data benchmark from GSM8K and TruthfulQA answers."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK, EXIT_USAGE


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("build-dataset", help="build the real-data benchmark from GSM8K and TruthfulQA answers")
    p.add_argument("--gsm8k", required=True, metavar="PATH", help="example_model_solutions.jsonl")
    p.add_argument("--truthfulqa", required=True, metavar="DIR", help="folder with TruthfulQA.csv and finetune_*.jsonl")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--test-wording",
        choices=("test", "heldout"),
        default="test",
        help="wording families for the test split: its own (default) or the held-back ones (template-shift check)",
    )
    p.add_argument(
        "--audit",
        action="store_true",
        help="also run fcb audit-dataset on the splits: audit.json beside them, its figures in card.json",
    )
    p.set_defaults(func=run)


def _stage_line(text: str) -> None:
    print(f"fcb build-dataset: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from harness.datasets.realdata.build import build

    try:
        card = build(
            args.gsm8k,
            args.truthfulqa,
            args.out,
            seed=args.seed,
            test_wording=args.test_wording,
            progress=_stage_line,
            audit=args.audit,
        )
    except OSError as exc:
        print(f"fcb build-dataset: {exc}", file=sys.stderr)
        return EXIT_USAGE
    for name, info in card["outputs"].items():
        print(f"{args.out}/{name}: {info['cases']} cases, sha256 {info['sha256'][:12]}", file=sys.stderr)
    return EXIT_OK
