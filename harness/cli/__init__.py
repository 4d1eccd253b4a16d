"""The ``fcb`` command: parses arguments and calls the modules that do the work.

Exit codes: 0 success; 1 invalid cases, an error rate above ``--fail-on-error``, or (compare) a regression;
2 bad usage or settings; 3 an internal error (a bug); 130 a run interrupted (its partial report is written and
marked incomplete). A command's refusals are the `harness.errors.FcbError` tree, whose exit codes `main` takes
from `harness.errors.exit_code`; any other exception is a bug, exit 3, even a ``ValueError``.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import Any

from harness.errors import FcbError, InvalidCasesError, RunLoadError, UsageError, exit_code

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _print_problems(problems: Sequence[Any], limit: int | None = None, file: Any = None) -> None:
    out = file or sys.stderr
    for p in problems[:limit]:
        print(p, file=out)
    if limit is not None and len(problems) > limit:
        print(f"... and {len(problems) - limit} more", file=out)


def _default_cases(path: str | None) -> str:
    if path:
        return path
    from harness.cases.reader import embedded_cases_path

    return str(embedded_cases_path())


def cmd_validate(args: argparse.Namespace) -> int:
    from harness.cases.reader import scan

    failed = False
    for path in args.paths:
        try:
            result = scan(path, strict=args.strict)
        except OSError as exc:
            print(f"fcb validate: {path}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
        _print_problems(result.problems, file=sys.stdout)  # the findings are the output; the exit code says failure
        n_err, n_warn = len(result.errors), len(result.problems) - len(result.errors)
        print(
            f"{path}: {len(result.labels)} valid case(s), {result.invalid_lines} invalid line(s), "
            f"{n_err} error(s), {n_warn} warning(s)"
        )
        failed |= bool(n_err)
    return EXIT_INVALID if failed else EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    import orjson

    from harness.cases.reader import scan
    from harness.datasets.stats import balance, render

    path = _default_cases(args.path)
    try:
        result = scan(path)
    except OSError as exc:
        print(f"fcb stats: {path}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    counts = balance(result.labels)
    if args.format == "json":
        print(
            orjson.dumps(
                {"path": path, "cases": len(result.labels), "counts": counts}, option=orjson.OPT_INDENT_2
            ).decode()
        )
    else:
        print(render(path, len(result.labels), counts))
    if result.errors:
        print(f"{path}: {result.invalid_lines} invalid line(s) left out; run fcb validate for details", file=sys.stderr)
    return EXIT_OK


def _headers(pairs: list[str]) -> dict[str, str]:
    headers = {}
    for pair in pairs:
        name, sep, env = pair.partition("=")
        if not sep or not name or not env:
            raise UsageError(f"--header {pair!r}: expected NAME=ENVVAR (the value is read from ENVVAR)")
        headers[name] = env
    return headers


def _settings(args: argparse.Namespace) -> Any:
    """Settings in order of precedence: flags, then a detector config file, then the resumed run's record."""
    from dataclasses import replace

    from harness.detectors.builtin import BEST_BUILTIN
    from harness.detectors.config import load_detector_config, override
    from harness.detectors.reply import parse_risk_field
    from harness.redact import MASK
    from harness.run.settings import EvalSettings, parse_shard, resumed_settings

    if args.resume:
        base = resumed_settings(args.resume)
        if not args.detector and MASK in base.detector:
            raise UsageError(
                f"{args.resume}: the run's detector spec held secrets ({base.detector}); pass --detector again"
            )
    else:
        base = EvalSettings(cases=_default_cases(None), detector=BEST_BUILTIN)
    if args.detector_config:
        spec, options = load_detector_config(args.detector_config)
        base = replace(base, detector=spec or base.detector, options=options)
    options = override(
        base.options,
        concurrency=args.concurrency,
        timeout=args.timeout,
        retries=args.retries,
        risk_field=parse_risk_field(args.risk_field) if args.risk_field else None,
        headers={**base.options.headers, **_headers(args.header)} if args.header else None,
        cache=True if args.cache is not None else (False if args.no_cache else None),
        cache_dir=args.cache or None,
        cache_refresh=args.cache_refresh or None,
        batch_size=args.batch_size,
    )
    return replace(
        base,
        cases=args.cases or base.cases,
        detector=args.detector or base.detector,
        options=options,
        out=args.resume or args.out,
        results_root=args.results,
        limit=args.limit if args.limit is not None else base.limit,
        shard=parse_shard(args.shard) if args.shard else base.shard,
        anonymize_agents=args.anonymize_agents or base.anonymize_agents,
        skip_invalid=args.skip_invalid or base.skip_invalid,
        strict=args.strict or base.strict,
        progress=False if args.quiet else ("bar" if sys.stderr.isatty() else "lines"),
        n_boot=args.bootstrap if args.bootstrap is not None else base.n_boot,
        seed=args.seed if args.seed is not None else base.seed,
        name=args.name or base.name,
        categories=tuple(args.category) or base.categories,
        tags=tuple(args.tag) or base.tags,
        preflight=not args.no_preflight,
        max_consecutive_errors=args.max_consecutive_errors,
        **_engine_flags(args, base),
    )


def _engine_flags(args: argparse.Namespace, base: Any) -> dict[str, Any]:
    """--engine, --workers, --ray-address, --num-cpus, --num-gpus: flags given, else the resumed run's."""
    keys = ("engine", "workers", "ray_address", "num_cpus", "num_gpus")
    return {key: getattr(args, key) if getattr(args, key) is not None else getattr(base, key) for key in keys}


def cmd_eval(args: argparse.Namespace) -> int:
    import asyncio

    from harness.report.text import render_summary
    from harness.run.runner import INTERRUPTED, run

    try:
        settings = _settings(args)
        result = asyncio.run(run(settings))
    except InvalidCasesError as exc:
        _print_problems(exc.problems)
        print(f"{exc}; no detector was called (use --skip-invalid to run the valid cases)", file=sys.stderr)
        return EXIT_INVALID
    except OSError as exc:
        print(f"fcb eval: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:  # the third Ctrl-C: no report, but the journal holds every finished case
        print("fcb eval: aborted; the report was not written (fcb eval --resume RUN_DIR writes it)", file=sys.stderr)
        return EXIT_INTERRUPTED
    _print_problems(result.problems)
    if skipped := result.metrics["dataset"]["skipped_invalid"]:
        print(f"skipped {skipped} invalid line(s); they are listed in the report", file=sys.stderr)
    if not args.quiet:
        print(render_summary(result.metrics))
    print(f"results: {result.run_dir}", file=sys.stderr)
    return _eval_exit(result, args.fail_on_error, INTERRUPTED)


def _eval_exit(result: Any, fail_on_error: float | None, interrupted: str) -> int:
    """The exit code of a finished ``fcb eval``, with the line that explains it."""
    resume = f"fcb eval --resume {result.run_dir}"
    if result.stopped == interrupted or (result.stopped is None and result.metrics["metrics"]["n_not_run"]):
        print(f"run interrupted; continue with: {resume}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.stopped:
        print(f"run stopped after {result.stopped}; fix the detector, then continue with: {resume}", file=sys.stderr)
        return EXIT_INVALID
    ops = result.metrics["metrics"]["operational"]
    rate = ops["errors"] / ops["cases"] if ops["cases"] else 0.0
    if fail_on_error is not None and rate > fail_on_error:
        print(f"error rate {rate:.3f} exceeds --fail-on-error {fail_on_error}", file=sys.stderr)
        return EXIT_INVALID
    if ops["cases"] and ops["errors"] == ops["cases"]:
        print(f"every case errored ({ops['errors']} of {ops['cases']}); see the errors in the report", file=sys.stderr)
        return EXIT_INVALID
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    from harness.detectors.service import serve

    serve(
        args.detector,
        host=args.host,
        port=args.port,
        workers=args.workers,
        max_body=args.max_body,
        body_timeout=args.body_timeout,
        max_connections=args.max_connections,
    )
    return EXIT_OK


def _write_or_print(text: str, out: str | None) -> None:
    if out:
        from harness.files import atomic_write

        atomic_write(out, text.encode())
        print(f"wrote {out}", file=sys.stderr)
    else:
        print(text)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from harness.leaderboard.rank import build_boards
    from harness.leaderboard.render import RENDERERS
    from harness.leaderboard.runs import find_runs, load_run

    runs = [load_run(p) for p in find_runs(args.runs)]
    if not runs:
        raise RunLoadError(f"no runs found in {' '.join(args.runs)}")
    boards = build_boards(
        runs, metric=args.metric, include_incomplete=args.include_incomplete, n_boot=args.bootstrap, seed=args.seed
    )
    _write_or_print(RENDERERS[args.format](boards), args.out)
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from harness.leaderboard.compare import compare_runs
    from harness.leaderboard.compare_render import RENDERERS
    from harness.leaderboard.runs import load_run

    cmp = compare_runs(
        load_run(args.baseline),
        load_run(args.new),
        max_drop=args.max_drop,
        alpha=args.alpha,
        n_boot=args.bootstrap,
        seed=args.seed,
    )
    if args.format == "html":
        from harness.leaderboard.compare_render import to_html

        _write_or_print(to_html(cmp), args.out)
    else:
        _write_or_print(RENDERERS[args.format](cmp), args.out)
    return EXIT_INVALID if cmp["regression"] else EXIT_OK


def cmd_view(args: argparse.Namespace) -> int:
    from harness.report.html import open_in_browser, write_html

    path = write_html(args.run_dir)
    if args.no_open or not open_in_browser(path):
        print(path)
    return EXIT_OK


def cmd_history(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tabulate import tabulate

    from harness.leaderboard.runs import find_runs, load_run
    from harness.report.plots import trend_png

    runs = [load_run(p) for p in find_runs([args.results_dir])]
    runs = sorted((r for r in runs if not args.detector or r.detector == args.detector), key=lambda r: r.created)
    if not runs:
        print(
            f"fcb history: no runs{' of ' + args.detector if args.detector else ''} in {args.results_dir}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    rows = [
        [
            r.created,
            r.detector,
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
            series.setdefault(f"{r.detector} @ {r.sha256[:8]}", []).append((r.created, value))
    png = Path(args.results_dir) / f"history-{args.metric}.png"
    from harness.files import atomic_write

    atomic_write(png, trend_png(series, args.metric))
    print(f"wrote {png}", file=sys.stderr)
    return EXIT_OK


def cmd_baseline_save(args: argparse.Namespace) -> int:
    import re
    from pathlib import Path

    import orjson

    from harness.files import atomic_write
    from harness.leaderboard.runs import baseline_document, load_run

    if not re.fullmatch(r"[A-Za-z0-9._-]+", args.name):
        print(f"fcb baseline save: --name {args.name!r}: use letters, digits, '.', '_' and '-'", file=sys.stderr)
        return EXIT_USAGE
    run = load_run(args.run)
    out = Path(args.dir) / f"{args.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, orjson.dumps(baseline_document(run, args.name)))
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK


def cmd_merge(args: argparse.Namespace) -> int:
    from harness.report.text import render_summary
    from harness.run.merge import merge_runs

    try:
        document = merge_runs(args.runs, args.out, cases=args.cases)
    except OSError as exc:
        print(f"fcb merge: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if not args.quiet:
        print(render_summary(document))
    print(f"results: {args.out}", file=sys.stderr)
    return EXIT_OK


def _stage_line(text: str) -> None:
    print(f"fcb build-dataset: {text}", file=sys.stderr, flush=True)


def cmd_build_dataset(args: argparse.Namespace) -> int:
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


def _audit_items(path: str, name: str) -> tuple[list[Any], dict[str, Any]] | None:
    """The audit's view of a file's cases, or None (problems printed) when the file has invalid lines."""
    from harness.cases.reader import iter_cases, scan
    from harness.datasets.audit.items import item_from_case

    result = scan(path, spool=True)  # read once; the items come from the spool
    if result.errors:
        _print_problems(result.problems)
        print(f"{path}: {result.invalid_lines} invalid line(s); fix them first (fcb validate {path})", file=sys.stderr)
        return None
    lines = [lab.line for lab in result.labels]
    items = [item_from_case(case, name, line) for line, case in iter_cases(result, lines)]
    result.close()
    return items, {"path": path, "sha256": result.sha256, "cases": len(items)}


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


def cmd_audit_dataset(args: argparse.Namespace) -> int:
    import orjson

    from harness.datasets.audit import audit
    from harness.datasets.audit.items import Settings, split_by_source_item
    from harness.datasets.audit_report import RENDERERS

    if args.split_by and len(args.paths) != 1:
        print("fcb audit-dataset: --split-by takes one file (it splits it into TRAIN and TEST)", file=sys.stderr)
        return EXIT_USAGE
    if not args.split_by and len(args.paths) != 2:
        print(
            "fcb audit-dataset: give TRAIN.jsonl and TEST.jsonl, or one file with --split-by source-item",
            file=sys.stderr,
        )
        return EXIT_USAGE
    loaded = []
    for path, name in zip(args.paths, ("train", "test"), strict=False):
        try:
            found = _audit_items(path, name)
        except OSError as exc:
            print(f"fcb audit-dataset: {path}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
        if found is None:
            return EXIT_INVALID
        loaded.append(found)
    if args.split_by:
        ((items, info),) = loaded
        train, test = split_by_source_item(items, args.seed)
        files = {
            "train": {**info, "cases": len(train)},
            "test": {**info, "cases": len(test)},
            "split_by": args.split_by,
        }
    else:
        (train, train_info), (test, test_info) = loaded
        files = {"train": train_info, "test": test_info, "split_by": None}
    if not train or not test or len({it.category for it in train}) < 2:
        print(
            "fcb audit-dataset: TRAIN needs cases of two categories or more, and TEST at least one case",
            file=sys.stderr,
        )
        return EXIT_USAGE
    progress = _Progress(args.quiet)
    settings = Settings(max_surface_f1=args.max_surface_f1, seed=args.seed, n_boot=args.bootstrap)
    document = audit(train, test, files, settings, progress)
    progress.done()
    if args.format == "json":
        text = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
    else:
        text = RENDERERS[args.format](document)
    _write_or_print(text, args.out)
    return EXIT_INVALID if document["verdict"]["status"] == "fail" else EXIT_OK


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 1 or more")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is not a whole number of 0 or more")
    return value


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate between 0 and 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fcb", description="Evaluate false-consensus detectors.")
    parser.add_argument("--version", action="version", version=f"fcb {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("validate", help="check cases files against the schema and the label scheme")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("stats", help="print a cases file's balance (default: the embedded data set)")
    p.add_argument("path", nargs="?", metavar="PATH")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("eval", help="run a detector over a cases file and report")
    p.add_argument("cases", nargs="?", metavar="CASES", help="cases.jsonl (default: the embedded data set)")
    p.add_argument(
        "-d",
        "--detector",
        metavar="SPEC",
        help="http(s)://host[:port][/path] (several, comma-separated, for replicas), llm:MODEL@BASE_URL, "
        "builtin:NAME, package.module:function or path/to/file.py:function (default builtin:heuristic)",
    )
    p.add_argument("--name", help="the detector's name in reports and leaderboards (default: the spec)")
    p.add_argument("--detector-config", metavar="TOML", help="detector settings file (configs/detectors/*.toml)")
    p.add_argument("--concurrency", type=int, help="requests in flight at once (default 8)")
    p.add_argument("--timeout", type=float, help="seconds per request (default 30)")
    p.add_argument("--retries", type=int, help="retries after a transient failure (default 3)")
    p.add_argument("--risk-field", metavar="A.B.C", help="where the risk is in the detector's reply")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=ENVVAR",
        help="send header NAME with the value of environment variable ENVVAR",
    )
    p.add_argument("--anonymize-agents", action="store_true", help="send agent ids as agent-1..n")
    p.add_argument("--skip-invalid", action="store_true", help="run the valid cases of a file with invalid ones")
    p.add_argument("--strict", action="store_true", help="treat label-scheme warnings as errors")
    p.add_argument("--limit", type=_positive, metavar="N", help="only the first N valid cases")
    p.add_argument("--category", action="append", default=[], metavar="C", help="only cases of category C (repeatable)")
    p.add_argument("--tag", action="append", default=[], metavar="T", help="only cases tagged T (repeatable)")
    p.add_argument("--no-preflight", action="store_true", help="do not call the first case alone before the others")
    p.add_argument(
        "--max-consecutive-errors",
        type=_non_negative,
        default=25,
        metavar="N",
        help="stop after N errors of one kind in a row, resumable (default 25; 0: never)",
    )
    p.add_argument("--shard", metavar="K/N", help="only the K-th of N deterministic parts of the cases (fcb merge)")
    p.add_argument(
        "--batch-size", type=_positive, metavar="N", help="a detector class with assess_batch gets up to N at once"
    )
    p.add_argument(
        "--engine",
        choices=["local", "processes", "ray"],
        help="where a Python detector runs: this process (default), N worker processes, or N Ray actors",
    )
    p.add_argument("--workers", type=_positive, metavar="N", help="worker processes or Ray actors (default: CPUs)")
    p.add_argument("--ray-address", metavar="ADDR", help="a Ray cluster to join (default: start a local Ray)")
    p.add_argument("--num-cpus", type=float, metavar="C", help="CPUs each Ray actor reserves (default 1)")
    p.add_argument("--num-gpus", type=float, metavar="G", help="GPUs each Ray actor reserves (default 0)")
    p.add_argument("--fail-on-error", type=_rate, metavar="RATE", help="exit 1 if the error share exceeds RATE")
    p.add_argument("--out", metavar="DIR", help="run folder (default: results/<time>-<detector>)")
    p.add_argument("--results", default="results", metavar="DIR", help="where new run folders go")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue an interrupted run from its journal")
    p.add_argument("--bootstrap", type=_non_negative, metavar="N", help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, help="bootstrap seed (default 0)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache",
        nargs="?",
        const="",
        metavar="DIR",
        help="replay stored replies and store new ones (default DIR: $XDG_CACHE_HOME/fcb-harness); "
        "on by default for llm: detectors at temperature 0",
    )
    cache.add_argument("--no-cache", action="store_true", help="never use the response cache")
    p.add_argument("--cache-refresh", action="store_true", help="ask again, ignoring stored replies, and store them")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("view", help="(re)write a run's report.html and open it (or print its path)")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--no-open", action="store_true", help="only write the page and print its path")
    p.set_defaults(func=cmd_view)

    p = sub.add_parser(
        "serve",
        help="serve a detector over HTTP at POST /v1/consensus",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    p.add_argument(
        "-d",
        "--detector",
        default="builtin:agreement",
        help="builtin:NAME, package.module:function or file.py:function",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on")
    p.add_argument("--port", type=int, default=8765, help="port to listen on")
    p.add_argument("--workers", type=int, default=1, help="worker processes")
    p.add_argument("--max-body", type=int, default=1024 * 1024, metavar="BYTES", help="larger bodies get 413")
    p.add_argument(
        "--body-timeout", type=float, default=10.0, metavar="S", help="a body not received within S seconds gets 408"
    )
    p.add_argument(
        "--max-connections",
        type=_positive,
        default=64,
        metavar="N",
        help="requests served at once, per worker; more get 503 (body bytes in flight <= N x --max-body)",
    )
    p.set_defaults(func=cmd_serve)

    metrics = ["accuracy", "macro_f1", "weighted_kappa", "high_risk_recall", "false_alarm_rate", "error_rate"]
    metrics += [f"{name}_real" for name in metrics]  # the same on the natural + assembled cases (origin tags)
    p = sub.add_parser("leaderboard", help="rank detectors from run folders")
    p.add_argument("runs", nargs="+", metavar="RESULT_DIR_OR_GLOB")
    p.add_argument("--format", choices=["md", "html", "csv", "json"], default="md")
    p.add_argument("--out", metavar="PATH", help="write here instead of standard output")
    p.add_argument(
        "--metric",
        choices=metrics,
        default="macro_f1",
        help="the ranking metric (default macro_f1); NAME_real ranks on the natural + assembled cases",
    )
    p.add_argument("--include-incomplete", action="store_true", help="rank interrupted or partial runs too")
    p.add_argument("--bootstrap", type=_non_negative, default=1000, metavar="N", help="paired bootstrap resamples")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser("compare", help="compare a run with a baseline; exit 1 on a significant regression")
    p.add_argument("baseline", metavar="BASELINE", help="a run folder or a baseline file (results/baselines/*.json)")
    p.add_argument("new", metavar="NEW", help="a run folder or a baseline file")
    p.add_argument("--max-drop", type=float, default=0.01, help="largest tolerated drop of a headline metric")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the paired bootstrap")
    p.add_argument("--format", choices=["text", "md", "json", "html"], default="text")
    p.add_argument("--out", metavar="PATH")
    p.add_argument("--bootstrap", type=_non_negative, default=2000, metavar="N")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("history", help="each run's metric over time, and a trend plot")
    p.add_argument("results_dir", metavar="RESULTS_DIR")
    p.add_argument("--detector", help="only runs of this detector spec")
    p.add_argument("--metric", choices=metrics, default="macro_f1")
    p.set_defaults(func=cmd_history)

    p = sub.add_parser("merge", help="combine the shard runs of one evaluation into one run")
    p.add_argument("runs", nargs="+", metavar="RUN_DIR")
    p.add_argument("--out", required=True, metavar="RUN")
    p.add_argument("--cases", metavar="PATH", help="the cases file, if it moved since the shards ran")
    p.add_argument("-q", "--quiet", action="store_true")
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("build-dataset", help="build the real-data benchmark from GSM8K and TruthfulQA answers")
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
    p.set_defaults(func=cmd_build_dataset)

    p = sub.add_parser("audit-dataset", help="check a benchmark for shortcuts: surface baselines, exact rules, overlap")
    p.add_argument("paths", nargs="+", metavar="PATH", help="TRAIN.jsonl TEST.jsonl, or one file with --split-by")
    p.add_argument("--format", choices=["text", "md", "json"], default="text")
    p.add_argument("--out", metavar="PATH", help="write here instead of standard output")
    p.add_argument(
        "--max-surface-f1",
        type=_rate,
        default=0.45,
        metavar="F",
        help="exit 1 when a surface baseline's macro-F1 on TEST exceeds F (default 0.45)",
    )
    p.add_argument("--split-by", choices=["source-item"], help="split one file in halves by source item")
    p.add_argument("--seed", type=int, default=0, help="seed of the models, the bootstrap and --split-by")
    p.add_argument("--bootstrap", type=_positive, default=1000, metavar="N", help="bootstrap resamples (1000)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_audit_dataset)

    from harness.scenario.commands import add_scenario_parser  # argparse only; the work is imported on use

    add_scenario_parser(sub)

    p = sub.add_parser("baseline", help="manage committed baselines")
    bsub = p.add_subparsers(dest="baseline_command", required=True)
    b = bsub.add_parser("save", help="save a run as results/baselines/NAME.json")
    b.add_argument("run", metavar="RUN")
    b.add_argument("--name", required=True)
    b.add_argument("--dir", default="results/baselines", help="where baselines live (default results/baselines)")
    b.set_defaults(func=cmd_baseline_save)

    p = sub.add_parser("schema", help="print the JSON Schema of an output document (metrics, journal, run, ...)")
    p.add_argument("document", metavar="NAME", help="metrics, journal, run, baseline, leaderboard or audit")
    p.set_defaults(func=cmd_schema)
    return parser


def cmd_schema(args: argparse.Namespace) -> int:
    from harness.documents import SCHEMAS, schema_text

    if args.document not in SCHEMAS:
        print(f"fcb schema: no document {args.document!r}; one of: {', '.join(SCHEMAS)}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(schema_text(args.document))
    return EXIT_OK


def _version() -> str:
    from harness._version import __version__

    return __version__


def _command(args: argparse.Namespace) -> str:
    """``fcb eval``, ``fcb baseline save``...: the prefix of a command's error lines."""
    names = (args.command, getattr(args, "baseline_command", None), getattr(args, "scenario_command", None))
    return " ".join(["fcb", *(name for name in names if name)])


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except FcbError as exc:  # a refusal the message explains; the tree in harness.errors gives the exit code
        print(f"{_command(args)}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except Exception:  # a bug in the harness: say so, with the trace, and an exit code of its own
        traceback.print_exc()
        print("fcb: internal error (a bug in fcb-harness; please report it with the trace above)", file=sys.stderr)
        return EXIT_INTERNAL
