"""The ``fcb`` command: parses arguments and calls the modules that do the work.

Each command is a module of this package with ``add_parser(subparsers)`` (its arguments) and ``run(args) -> int``
(its action, importing what it needs only when it runs, so that ``fcb --help`` starts fast); `COMMANDS` lists them
in the order of ``fcb --help``. What they share is in `harness.cli.common` (exit codes, printing) and
`harness.cli.options` (argument types and choices).

Command modules (``fcb NAME``; ``build_dataset`` is ``build-dataset``):
- ``eval``: run a detector over a cases file and report; ``merge``: combine the shard runs of one evaluation
- ``validate``: check cases files; ``stats``: a cases file's balance
- ``view``: (re)write a run's report.html and open it; ``schema``: the JSON Schema of an output document
- ``compare``: a run against a baseline; ``baseline``: save a run as a baseline
- ``leaderboard``: rank detectors from run folders; ``history``: each run's metric over time
- ``export``: a run for other tools (``--to parquet``)
- ``suite``: detectors x data sets from a TOML file, run or resumed, then leaderboards and case analyses per data set
- ``cases``: case-level analysis over several detectors' runs (difficulty, discrimination, suspect labels); its old
  name ``items`` still works
- ``board``: one HTML page over many runs: leaderboards, a category heatmap, the cases across detectors
- ``serve``: serve a detector over HTTP
- ``audit_dataset``: check a benchmark for shortcuts; ``build_dataset``: build the real-data benchmark
- ``scenario``: ``fcb scenario validate|analyze|score``

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

from harness.cli import (
    audit_dataset,
    baseline,
    board,
    build_dataset,
    cases,
    compare,
    export,
    history,
    leaderboard,
    merge,
    power,
    scenario,
    schema,
    serve,
    stats,
    suite,
    threshold,
    validate,
    view,
)
from harness.cli import eval as eval_command  # not ``eval``: that would hide the built-in in this module
from harness.cli.common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE
from harness.errors import FcbError, exit_code
from harness.files import drop_output_on_broken_pipe

COMMANDS = [
    validate,
    stats,
    eval_command,
    view,
    serve,
    leaderboard,
    compare,
    power,
    threshold,
    history,
    cases,
    board,
    export,
    suite,
    merge,
    build_dataset,
    audit_dataset,
    scenario,
    baseline,
    schema,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="fcb", description="Evaluate false-consensus detectors.")
    parser.add_argument("--version", action="version", version=f"fcb {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _version() -> str:
    from harness._version import __version__

    return __version__


def _command(args: argparse.Namespace) -> str:
    """``fcb eval``, ``fcb baseline save``...: the prefix of a command's error lines."""
    names = (args.command, getattr(args, "baseline_command", None), getattr(args, "scenario_command", None))
    return " ".join(["fcb", *(name for name in names if name)])


def main(argv: Sequence[str] | None = None) -> int:
    drop_output_on_broken_pipe()  # a reader of the output that goes away (`| head -1`) never stops the command
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except FcbError as exc:  # a refusal the message explains; the tree in harness.errors gives the exit code
        print(f"{_command(args)}: {exc}", file=sys.stderr)
        return exit_code(exc)
    except OSError as exc:  # a file the user named that cannot be read or written: said once, here, for every command
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"{_command(args)}: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except Exception:  # a bug in the harness: say so, with the trace, and an exit code of its own
        traceback.print_exc()
        print("fcb: internal error (a bug in fcb-harness; please report it with the trace above)", file=sys.stderr)
        return EXIT_INTERNAL
