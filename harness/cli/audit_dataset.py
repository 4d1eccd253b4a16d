"""``fcb audit-dataset``: check a benchmark for shortcuts (surface baselines, exact rules, overlap)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from harness.cli.common import EXIT_INVALID, EXIT_OK, extra_needed, print_problems, write_or_print
from harness.cli.options import fraction, positive_int, seed
from harness.documents.audit import AuditFile, Side
from harness.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "audit-dataset", help="check a benchmark for shortcuts: surface baselines, exact rules, overlap"
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="TRAIN.jsonl TEST.jsonl, or one file with --split-by")
    p.add_argument("--format", choices=["text", "md", "json"], default="text")
    p.add_argument("--out", metavar="PATH", help="write here instead of standard output")
    p.add_argument(
        "--max-surface-f1",
        type=fraction,
        default=0.45,
        metavar="F",
        help="exit 1 when a surface baseline's macro-F1 on TEST exceeds F (default 0.45)",
    )
    p.add_argument(
        "--max-shape-auc",
        type=fraction,
        default=0.60,
        metavar="A",
        help="exit 1 when shape features tell wrong majorities from right ones in built cases at ROC-AUC over A (0.60)",
    )
    p.add_argument(
        "--max-structure-auc",
        type=fraction,
        default=0.60,
        metavar="A",
        help="exit 1 when a model over the vote count tells wrong consensus from right at ROC-AUC over A (0.60)",
    )
    p.add_argument("--split-by", choices=["source-item"], help="split one file in halves by source item")
    p.add_argument("--seed", type=seed, default=0, help="seed of the models, the bootstrap and --split-by")
    p.add_argument("--bootstrap", type=positive_int, default=1000, metavar="N", help="bootstrap resamples (1000)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="fit each surface model at one setting instead of choosing it by grouped cross-validation: a planted "
        "shortcut still shows, in under a third of the time (a check while building, not a verdict to publish)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=run)


def _audit_items(path: str, name: Side) -> tuple[list[Any], AuditFile] | None:
    """The audit's view of a file's cases, or None (problems printed) when the file has invalid lines."""
    from fcb_datasets.audit.view import case_view
    from harness.cases.reader import iter_cases, scan

    result = scan(path, spool=True)  # read once; the items come from the spool
    if result.errors:
        print_problems(result.problems)
        print(f"{path}: {result.invalid_lines} invalid line(s); fix them first (fcb validate {path})", file=sys.stderr)
        return None
    lines = [lab.line for lab in result.labels]
    items = [case_view(case, name, line) for line, case in iter_cases(result, lines)]
    result.close()
    return items, AuditFile(path=path, sha256=result.sha256, cases=len(items))


class _Progress:
    """Stage lines on stderr once the audit has run a couple of seconds; on a terminal each replaces the last."""

    def __init__(self, quiet: bool) -> None:
        import time

        self.quiet, self.tty, self.started, self.clock = (
            quiet,
            sys.stderr.isatty(),
            time.perf_counter(),
            time.perf_counter,
        )

    def __call__(self, message: str) -> None:
        elapsed = self.clock() - self.started
        if self.quiet or elapsed < 2.0:
            return
        line = f"audit-dataset: {elapsed:5.1f} s  {message}"
        print(f"\r{line}\033[K" if self.tty else line, end="" if self.tty else "\n", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.tty and not self.quiet and self.clock() - self.started >= 2.0:
            print(file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    import orjson

    with extra_needed("datasets"):  # the audit lives in fcb_datasets
        from fcb_datasets.audit import audit
        from fcb_datasets.audit.view import Settings, split_by_source_item
        from fcb_datasets.audit_report import RENDERERS

    if args.split_by and len(args.paths) != 1:
        raise UsageError("--split-by takes one file (it splits it into TRAIN and TEST)")
    if not args.split_by and len(args.paths) != 2:
        raise UsageError("give TRAIN.jsonl and TEST.jsonl, or one file with --split-by source-item")
    loaded = []
    sides: tuple[Side, Side] = ("train", "test")
    for path, name in zip(args.paths, sides, strict=False):
        found = _audit_items(path, name)  # unreadable: the CLI's entry point says which, exit 2
        if found is None:
            return EXIT_INVALID
        loaded.append(found)
    if args.split_by:
        ((items, info),) = loaded
        train, test = split_by_source_item(items, args.seed)
        files = (AuditFile(path=info["path"], sha256=info["sha256"], cases=len(train)),
                 AuditFile(path=info["path"], sha256=info["sha256"], cases=len(test)))  # fmt: skip
    else:
        (train, train_info), (test, test_info) = loaded
        files = (train_info, test_info)
    if not train or not test or len({it.category for it in train}) < 2:
        raise UsageError("TRAIN needs cases of two categories or more, and TEST at least one case")
    progress = _Progress(args.quiet)
    settings = Settings(max_surface_f1=args.max_surface_f1, seed=args.seed, n_boot=args.bootstrap,
                        max_shape_auc=args.max_shape_auc, max_structure_auc=args.max_structure_auc,
                        search=not args.quick)  # fmt: skip
    document = audit(train, test, files, settings, progress, split_by=args.split_by)
    progress.done()
    if args.format == "json":
        text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
    else:
        text = RENDERERS[args.format](document)
    write_or_print(text, args.out)
    return EXIT_INVALID if document["verdict"]["status"] == "fail" else EXIT_OK
