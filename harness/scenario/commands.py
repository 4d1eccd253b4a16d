"""``fcb scenario validate|analyze|score``: parse arguments, call the modules that do the work, return exit codes.

Exit codes: 0 done (warnings allowed); 1 problems found (an invalid scenario or allocation file); 2 bad usage or a
file that cannot be read. ``validate`` writes its findings (``PATH: /json/pointer: message``) to standard output,
as ``fcb validate`` does; ``analyze`` and ``score`` write the problems that stop them to standard error and their
analysis and scores to standard output. Run as ``python -m harness.scenario.commands`` it is the same command on
its own.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness.errors import EXIT_INVALID, EXIT_OK, EXIT_USAGE, ScenarioError

if TYPE_CHECKING:
    from harness.scenario.analyze import Analysis
    from harness.scenario.validate import Report


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _validate_one(path: str, fix: bool) -> tuple[int, int]:
    """(errors, warnings) in one file, after fixing its ASCII if asked. Raises OSError for an unreadable file.

    The findings are the command's output (standard output); the exit code says whether any is an error.
    """
    from harness.scenario.problems import errors
    from harness.scenario.validate import check_file, fix_ascii

    if fix:
        fixed, problem = fix_ascii(path)
        for issue in fixed:
            where = issue.pointer or "(root)"
            print(f"{path}: {where}: fixed {issue.char!r} -> {issue.suggestion!r} at offset {issue.offset}")
        if problem:
            print(problem.render(path))
    report = check_file(path)
    for finding in report.findings:
        print(finding.render(path))
    n_err = len(errors(report.findings))
    n_warn = len(report.findings) - n_err
    print(f"{path}: {'valid' if not n_err else 'invalid'}: {n_err} error(s), {n_warn} warning(s)")
    return n_err, n_warn


def cmd_validate(args: argparse.Namespace) -> int:
    failed = unreadable = False
    for path in args.paths:
        try:
            n_err, _ = _validate_one(path, args.fix_ascii)
        except OSError as exc:
            _say(f"fcb scenario validate: {path}: {exc.strerror or exc}")
            unreadable = True
            continue
        failed |= bool(n_err)
    return EXIT_USAGE if unreadable else EXIT_INVALID if failed else EXIT_OK


def _load_valid(path: str, command: str) -> tuple[Report | None, int]:
    """(the report of a valid scenario, EXIT_OK) or (None, the exit code), with its problems printed."""
    from harness.scenario.validate import check_file

    try:
        report = check_file(path)
    except OSError as exc:
        _say(f"fcb scenario {command}: {path}: {exc.strerror or exc}")
        return None, EXIT_USAGE
    for finding in report.findings:
        _say(finding.render(path))
    if not report.ok:
        _say(f"{path}: invalid scenario; fix it first (fcb scenario validate {path})")
        return None, EXIT_INVALID
    return report, EXIT_OK


def _analysis(path: str, command: str) -> tuple[Analysis | None, int]:
    """(the analysis of a valid scenario with resources, EXIT_OK) or (None, the exit code)."""
    from harness.scenario.analyze import analyze

    report, code = _load_valid(path, command)
    if report is None:
        return None, code
    try:
        analysis = analyze(report.doc)
    except ScenarioError as exc:
        _say(f"fcb scenario {command}: {path}: {exc}")
        return None, EXIT_USAGE
    if analysis is None:
        _say(f"{path}: no resources: a purely relational scenario has no negotiation space to {command}")
    return analysis, EXIT_OK


def _print_json(data: Any) -> None:
    import orjson

    print(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())


def cmd_analyze(args: argparse.Namespace) -> int:
    from harness.scenario.render import analysis_json, analysis_text

    analysis, code = _analysis(args.path, "analyze")
    if analysis is None:
        return code
    if args.plot:
        from harness.files import atomic_write
        from harness.scenario.plot import utility_set_png

        try:
            atomic_write(args.plot, utility_set_png(analysis, f"{analysis.model.scenario_id}: utility set"))
        except OSError as exc:
            _say(f"fcb scenario analyze: --plot {args.plot}: {exc.strerror or exc}")
            return EXIT_USAGE
        _say(f"wrote {args.plot}")
    if args.format == "json":
        _print_json(analysis_json(analysis, args.path))
    else:
        print(analysis_text(analysis))
    return EXIT_OK


def _read_allocation(path: str) -> tuple[Any, int]:
    from pathlib import Path

    import orjson

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        _say(f"fcb scenario score: {path}: {exc.strerror or exc}")
        return None, EXIT_USAGE
    try:
        return orjson.loads(raw), EXIT_OK
    except orjson.JSONDecodeError as exc:
        _say(f"{path}: (root): invalid JSON: {exc}")
        return None, EXIT_INVALID


def cmd_score(args: argparse.Namespace) -> int:
    from harness.scenario.render import score_json, score_text
    from harness.scenario.score import parse_allocation, score

    analysis, code = _analysis(args.path, "score")
    if analysis is None:
        return code if code != EXIT_OK else EXIT_INVALID
    data, code = _read_allocation(args.allocation)
    if code != EXIT_OK:
        return code
    shares, findings = parse_allocation(data, analysis.model)
    for finding in findings:
        _say(finding.render(args.allocation))
    if shares is None:
        return EXIT_INVALID
    result = score(analysis, shares)
    if args.format == "json":
        _print_json(score_json(analysis, result, args.path, args.allocation))
    else:
        print(score_text(analysis, result))
    return EXIT_OK


def _add_subcommands(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="scenario_command", required=True)
    p = sub.add_parser("validate", help="check scenario files against the schema and its cross-field rules")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--fix-ascii", action="store_true", help="transliterate curly quotes, dashes and accents in place")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("analyze", help="Pareto frontier, Nash solution, ZOPA and integrativeness of the resources")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.add_argument("--plot", metavar="PNG", help="write a plot of the utility set here")
    p.set_defaults(func=cmd_analyze)

    p = sub.add_parser("score", help="score an agreed allocation against the scenario's analysis")
    p.add_argument("path", metavar="PATH")
    p.add_argument("allocation", metavar="ALLOCATION.json")
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(func=cmd_score)


def add_scenario_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``scenario validate|analyze|score`` on the ``fcb`` parser's subcommands."""
    p = sub.add_parser("scenario", help="lint, analyse and score two-party mediation scenarios")
    _add_subcommands(p)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fcb scenario", description="Lint, analyse and score mediation scenarios.")
    _add_subcommands(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
