"""``fcb build-dataset``: build the real-data benchmark from public model answers and multi-agent debates."""

from __future__ import annotations

import argparse
import sys

from harness.cli.common import EXIT_OK, extra_needed
from harness.cli.options import positive_int, seed
from harness.errors import UsageError

SOURCES = (
    ("--gsm8k", "PATH", "GSM8K model solutions (example_model_solutions.jsonl)"),
    ("--truthfulqa", "DIR", "TruthfulQA folder (TruthfulQA.csv, finetune_truth.jsonl, finetune_info.jsonl)"),
    ("--dylan", "DIR", "DyLAN debates folder (math_cot.jsonl.gz, math_complex.jsonl.gz)"),
    ("--mmlu-pro", "DIR", "MMLU-Pro model outputs folder (outputs/<model>.jsonl.gz)"),
    ("--zeroeval", "DIR", "ZeroEval results folder (gsm/, math-l5/, numersense-v2/)"),
)


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("build-dataset", help="build the real-data benchmark from public model answers")
    for flag, metavar, what in SOURCES:
        p.add_argument(flag, metavar=metavar, help=f"{what}; a source not given is left out")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--seed", type=seed, default=0)
    p.add_argument(
        "--test-wording",
        choices=("test", "heldout"),
        default="test",
        help="wording families for the test split: its own (default) or the held-back ones (template-shift check)",
    )
    p.add_argument(
        "--audit",
        nargs="?",
        const="full",
        choices=("full", "quick"),
        help="also run fcb audit-dataset on the splits (--audit quick: as fcb audit-dataset --quick): audit.json "
        "beside them, its figures in card.json",
    )
    p.add_argument("--workers", type=positive_int, default=None, help="grading processes (default: one per core)")
    p.set_defaults(func=run)


def _stage_line(text: str) -> None:
    print(f"fcb build-dataset: {text}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    with extra_needed("datasets"):  # the builder lives in fcb_datasets, with math-verify and json-repair
        from fcb_datasets.realdata import import_extra
        from fcb_datasets.realdata.build import Paths, build

        import_extra()

    paths = Paths(args.gsm8k, args.truthfulqa, args.dylan, args.mmlu_pro, args.zeroeval)
    if not paths.given():
        raise UsageError("give at least one source (" + ", ".join(f for f, *_ in SOURCES) + ")")
    card = build(paths, args.out, seed=args.seed, test_wording=args.test_wording, progress=_stage_line,
                 audit=args.audit, workers=args.workers)  # fmt: skip
    for name, info in card["outputs"].items():
        print(f"{args.out}/{name}: {info['cases']} cases, sha256 {info['sha256'][:12]}", file=sys.stderr)
    if "audit" not in card:
        return EXIT_OK
    verdict = card["audit"]["verdict"]
    print(f"audit: {verdict.upper()} ({args.out}/audit.json)", file=sys.stderr)
    for finding in card["audit"]["findings"]:
        print(f"  finding: {finding}", file=sys.stderr)
    # the build stands either way (a part-built or small benchmark fails the audit by design); fcb audit-dataset
    # gives the verdict as an exit code, for a gate
    return EXIT_OK
