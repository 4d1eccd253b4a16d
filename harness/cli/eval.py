"""``fcb eval``: run a detector over a cases file and report.

The settings come from the flags, then a detector config file, then the resumed run's record (`_settings`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from harness.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    default_cases,
    print_problems,
)
from harness.cli.options import (
    fraction,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
    probe_list,
    seed,
)
from harness.documents import error_rate
from harness.errors import InvalidCasesError, UsageError
from harness.files import shell_path
from harness.types import BUDGET_STOP, PROVIDER_STOP, RunResult
from harness.vocabulary import ENGINES, REDUCERS

if TYPE_CHECKING:  # the settings' modules are imported when a run starts: `fcb --help` stays fast
    from harness.run.settings import EvalSettings
    from harness.spec import DetectorSpec


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser("eval", help="run a detector over a cases file and report")
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
    p.add_argument("--rpm", type=positive_int, metavar="N", help="send at most N requests a minute (HTTP and llm:)")
    p.add_argument("--tpm", type=positive_int, metavar="N", help="send at most N tokens a minute (llm:, at their most)")
    p.add_argument("--max-requests", type=positive_int, metavar="N", help="stop cleanly before request N+1 (resumable)")
    p.add_argument(
        "--max-cost", type=positive_float, metavar="USD", help="stop cleanly before a request could pass USD (llm:)"
    )
    p.add_argument("--price-prompt", dest="price_prompt_per_mtok", type=non_negative_float, metavar="USD",
                   help="USD per million prompt tokens, for the cost and --max-cost (llm:)")  # fmt: skip
    p.add_argument("--price-completion", dest="price_completion_per_mtok", type=non_negative_float, metavar="USD",
                   help="USD per million completion tokens, for the cost and --max-cost (llm:)")  # fmt: skip
    p.add_argument("--risk-field", metavar="A.B.C", help="where the risk is in the detector's reply")
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=ENVVAR",
        help="send header NAME with the value of environment variable ENVVAR",
    )
    p.add_argument("--anonymize-agents", action="store_const", const=True, help="send agent ids as agent-1..n")
    p.add_argument(
        "--skip-invalid", action="store_const", const=True, help="run the valid cases of a file with invalid ones"
    )
    p.add_argument("--strict", action="store_const", const=True, help="treat label-scheme warnings as errors")
    p.add_argument("--limit", type=positive_int, metavar="N", help="only the first N valid cases")
    p.add_argument(
        "--category", dest="categories", action="append", metavar="C", help="only cases of category C (repeatable)"
    )
    p.add_argument("--tag", dest="tags", action="append", metavar="T", help="only cases tagged T (repeatable)")
    p.add_argument(
        "--no-preflight",
        dest="preflight",
        action="store_const",
        const=False,
        help="do not call the first case alone before the others",
    )
    p.add_argument(
        "--max-consecutive-errors",
        type=non_negative_int,
        metavar="N",
        help="stop after N errors of one kind in a row, resumable (default 25; 0: never)",
    )
    p.add_argument("--shard", metavar="K/N", help="only the K-th of N deterministic parts of the cases (fcb merge)")
    p.add_argument(
        "--batch-size", type=positive_int, metavar="N", help="a detector class with assess_batch gets up to N at once"
    )
    p.add_argument(
        "--engine",
        choices=ENGINES,
        help="where a Python detector runs: this process (default), N worker processes, or N Ray actors",
    )
    p.add_argument("--workers", type=positive_int, metavar="N", help="worker processes or Ray actors (default: CPUs)")
    p.add_argument("--ray-address", metavar="ADDR", help="a Ray cluster to join (default: start a local Ray)")
    p.add_argument("--num-cpus", type=float, metavar="C", help="CPUs each Ray actor reserves (default 1)")
    p.add_argument("--num-gpus", type=float, metavar="G", help="GPUs each Ray actor reserves (default 0)")
    p.add_argument("--fail-on-error", type=fraction, metavar="RATE", help="exit 1 if the error share exceeds RATE")
    p.add_argument("--out", metavar="DIR", help="run folder (default: results/<time>-<detector>)")
    p.add_argument("--results", dest="results_root", metavar="DIR", help="where new run folders go (default: results)")
    p.add_argument(
        "--resume", dest="resume_dir", metavar="RUN_DIR", help="continue an interrupted run from its journal"
    )
    p.add_argument(
        "--retry-errors",
        action="store_const",
        const=True,
        help="with --resume: ask the cases that ended in an error again (after an outage, a fixed service)",
    )
    p.add_argument(
        "--overwrite", action="store_const", const=True, help="replace the run that --out holds (not with --resume)"
    )
    p.add_argument(
        "--bootstrap", dest="n_boot", type=non_negative_int, metavar="N", help="bootstrap resamples (default 1000)"
    )
    p.add_argument("--seed", type=seed, help="bootstrap seed (default 0)")
    p.add_argument(
        "--ece-bins",
        type=positive_int,
        metavar="N",
        help="equal-width bins of the expected calibration error of risk_score (default 15, as Guo et al. 2017)",
    )
    p.add_argument(
        "--epochs", type=positive_int, metavar="N", help="ask every case N times; the headline on one verdict a case"
    )
    p.add_argument(
        "--epoch-reducer",
        choices=REDUCERS,
        help="how a case's epochs make its verdict: mode (default; a tie to the earliest epoch's) or first",
    )
    p.add_argument(
        "--probe",
        dest="probes",
        type=probe_list,
        metavar="P[,P]",
        help="also ask variants of each request and report how often the verdict moves: order, names, "
        "evidence-order, format, tone, length, restate, inject, duplicate; robust (the last six) or all",
    )
    p.add_argument("--probe-seed", type=seed, metavar="S", help="seed of the probes' variants (default 0)")
    p.add_argument("--threshold", metavar="FILE", help="report this threshold's miss and escalation rates (fcb "
                   "threshold DEV_RUN writes one) beside its promise")  # fmt: skip
    p.add_argument("--cluster-by", metavar="KEY", help="what every interval resamples: source.item (default: the "
                   "cases built from one source question together), source.dataset, tag:PREFIX (the cases whose first "
                   "tag starting with PREFIX is the same) or none (each case alone)")  # fmt: skip
    p.add_argument("-q", "--quiet", action="store_true", help="no progress and no summary")
    cache = p.add_mutually_exclusive_group()
    cache.add_argument(
        "--cache",
        dest="cache_at",
        nargs="?",
        const="",
        metavar="DIR",
        help="replay stored replies and store new ones (default DIR: $XDG_CACHE_HOME/fcb-harness); "
        "on by default for llm: detectors at temperature 0",
    )
    cache.add_argument("--no-cache", action="store_true", help="never use the response cache")
    p.add_argument(
        "--cache-refresh", action="store_const", const=True, help="ask again, ignoring stored replies, and store them"
    )
    p.set_defaults(func=run)
    _FLAGS.update({action.dest: action for action in p._actions if action.option_strings})


_FLAGS: dict[str, argparse.Action] = {}
"""``fcb eval``'s options by the setting they set (their ``dest``): a resume hint repeats a session's changed ones."""


def resume_command(run_dir: str, without: tuple[str, ...] = ()) -> str:
    """``fcb eval --resume RUN`` and the flags of the settings the run's last session changed from its first
    (``run.json`` records them), but for the settings named in ``without``: a resume must not fall back to the first
    session's ``--timeout``."""
    from harness.run.settings import STORED_AS
    from harness.runfolder.manifest import read_manifest

    words = ["fcb eval --resume", shell_path(run_dir)]
    manifest = read_manifest(run_dir)
    changed = manifest["sessions"][-1].get("settings", {}) if manifest and manifest["sessions"] else {}
    stored = {v: k for k, v in STORED_AS.items()}
    unsaid = []
    for key, value in changed.items():
        if key in without:
            continue
        action = _FLAGS.get(stored.get(key, key))
        flag = _flag_words(action, value) if action is not None else _named_words(key, value, changed)
        if flag is None:
            unsaid.append(key)
        else:
            words += flag
    text = " ".join(words)
    if unsaid:
        text += f" (and {', '.join(unsaid)} as in this session's --detector-config)"
    return text


def _named_words(key: str, value: Any, changed: dict[str, Any]) -> list[str] | None:
    """The flags of the settings whose flag sets another ``dest``: the cache's and the headers'."""
    import shlex

    if key == "cache" and not changed.get("cache_dir"):
        return ["--cache"] if value else ["--no-cache"] if value is False else []
    if key in ("cache", "cache_dir"):
        return ["--cache", shlex.quote(changed["cache_dir"])] if key == "cache_dir" and value else []
    if key == "headers" and isinstance(value, dict):
        return [w for name, env in value.items() for w in ("--header", shlex.quote(f"{name}={env}"))]
    return None


def _flag_words(action: argparse.Action, value: Any) -> list[str] | None:
    """The words that give ``value`` back through ``action``; None when no flag can say it."""
    import shlex

    flag = action.option_strings[-1]
    if isinstance(action, argparse._StoreConstAction):
        return [flag] if value == action.const else None
    if value is None or isinstance(value, dict):
        return None
    if isinstance(action, argparse._AppendAction):
        return [w for item in value for w in (flag, shlex.quote(str(item)))]
    text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
    return [flag, shlex.quote(text)]


def run(args: argparse.Namespace) -> int:
    import asyncio

    from harness.run.runner import INTERRUPTED, run

    try:
        settings = _settings(args)
        result = asyncio.run(run(settings))
    except InvalidCasesError as exc:
        print_problems(exc.problems)
        called = "no detector was called"
        if exc.asked:  # the preflight, sent while the rest of the file was read
            called = ("the first case had gone out as the preflight, or was on its way, while the rest of the file "
                      "was read; its answer was dropped and nothing was written")  # fmt: skip
        print(f"{exc}; {called} (use --skip-invalid to run the valid cases)", file=sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:  # the third Ctrl-C: no report, but the journal holds every finished case
        print("fcb eval: aborted; the report was not written (fcb eval --resume RUN_DIR writes it)", file=sys.stderr)
        return EXIT_INTERRUPTED
    print_problems(result.problems)
    if skipped := result.document["dataset"]["skipped_invalid"]:
        print(f"skipped {skipped} invalid line(s); they are listed in the report", file=sys.stderr)
    if not args.quiet:
        from harness.report.text import render_summary  # imported once the run is over, as the reports are

        print(render_summary(result.document))
    print(f"results: {result.run_dir}", file=sys.stderr)
    return _eval_exit(result, settings.detector, args.fail_on_error, INTERRUPTED)


def _eval_exit(result: RunResult, spec: DetectorSpec, fail_on_error: float | None, interrupted: str) -> int:
    """The exit code of a finished ``fcb eval``, with the line that explains it. ``run.json`` is read back (for the
    resume hint's flags) only when a line gives the hint: a clean run reads nothing back."""
    if result.stopped == interrupted or (result.stopped is None and result.figures["n_not_run"]):
        print(f"run interrupted; continue with: {resume_command(result.run_dir)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    if result.stopped and result.stopped.startswith(BUDGET_STOP):
        capped = resume_command(result.run_dir, without=("max_requests", "max_cost"))
        print(f"run stopped: {result.stopped.removeprefix(BUDGET_STOP)}; continue with a higher cap: {capped} "
              "--max-requests N or --max-cost USD", file=sys.stderr)  # fmt: skip
        return EXIT_INTERRUPTED
    if result.stopped and result.stopped.startswith(PROVIDER_STOP):
        print(f"run stopped: {result.stopped.removeprefix(PROVIDER_STOP)}; once the provider answers again, continue "
              f"with: {resume_command(result.run_dir)}", file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
    if result.stopped:
        print(f"run stopped after {result.stopped}; {_after_stop(result, spec)}", file=sys.stderr)
        return EXIT_INVALID
    ops = result.figures["operational"]
    rate = error_rate(result.figures) or 0.0  # None (no cases) passes any --fail-on-error
    if fail_on_error is not None and rate > fail_on_error:
        print(f"error rate {rate:.3f} exceeds --fail-on-error {fail_on_error}", file=sys.stderr)
        return EXIT_INVALID
    # with --epochs or --probe the operational figures count answers (a case's epochs and variants), not cases
    unit = "answer(s) (cases x epochs and probe variants)" if _repeated(result) else "case(s)"
    if ops["errors"]:  # errors count as wrong answers: say how to ask them again once the cause is fixed
        print(f"{ops['errors']} {unit} ended in an error; once their cause is fixed, ask them again with: "
              f"{resume_command(result.run_dir)} --retry-errors{_more_time(result)}", file=sys.stderr)  # fmt: skip
    if ops["cases"] and ops["errors"] == ops["cases"]:
        every = "answer" if _repeated(result) else "case"
        print(f"every {every} errored ({ops['errors']} of {ops['cases']}); see the errors in the report",
              file=sys.stderr)  # fmt: skip
        return EXIT_INVALID
    return EXIT_OK


def _more_time(result: RunResult) -> str:
    """`` --timeout 2T`` when some cases timed out after T seconds: the hint to ask them again gives them more time
    (a resume keeps the first session's --timeout otherwise); "" when none did."""
    timed_out = result.figures["operational"]["errors_by_kind"].get("timeout", 0)
    timeout = result.document["settings"]["timeout"]
    return f" --timeout {2 * timeout:g} (twice the {timeout:g} s that {timed_out} ran out of)" if timed_out else ""


def _repeated(result: RunResult) -> bool:
    """The run asked its cases more than once (--epochs N, --probe): its operational figures count answers."""
    return bool(result.figures.get("epochs") or result.figures.get("probes"))


def _after_stop(result: RunResult, spec: DetectorSpec) -> str:
    """What will work after a run stopped on a streak of errors. A service fixed behind the same URL keeps its
    fingerprint, so the run resumes; edited detector code does not (the answers so far came from the old code), so
    it needs a new run."""
    retry = f"{resume_command(result.run_dir)} --retry-errors{_more_time(result)}"
    if spec.kind == "python":
        return (
            "fix the detector, then start the run again: the run folder keeps the answers of the code as it was, "
            f"so an edited detector cannot resume it (--out {shell_path(result.run_dir)} --overwrite replaces it); "
            f"if the fault was outside the code, continue with: {retry}"
        )
    return f"fix the detector or the service, then continue with: {retry} (asks the errored cases again)"


def _headers(pairs: list[str]) -> dict[str, str]:
    headers = {}
    for pair in pairs:
        name, sep, env = pair.partition("=")
        if not sep or not name or not env:
            raise UsageError(f"--header {pair!r}: expected NAME=ENVVAR (the value is read from ENVVAR)")
        headers[name] = env
    return headers


def _settings(args: argparse.Namespace) -> EvalSettings:
    """Settings in order of precedence: flags, then a detector config file, then the resumed run's record. A flag's
    ``dest`` is its setting's name (`harness.run.settings.SETTING_NAMES`), None (or an empty text) when it was not
    given."""
    from dataclasses import replace

    from harness.detectors.builtin import BEST_BUILTIN
    from harness.detectors.config import load_detector_config
    from harness.redact import MASK
    from harness.run.settings import SETTING_NAMES, EvalSettings, resumed_settings, with_settings
    from harness.spec import parse_spec

    _refuse_a_spec_for_cases(args.cases)
    if args.retry_errors and not args.resume_dir:
        raise UsageError("--retry-errors asks a run's errored cases again: use it with --resume RUN_DIR")
    if args.overwrite and (args.resume_dir or not args.out):
        raise UsageError("--overwrite replaces the run in --out DIR; it goes with --out, not with --resume")
    if args.resume_dir:
        base = resumed_settings(args.resume_dir)
        if not args.detector and MASK in base.detector.text:
            raise UsageError(
                f"{args.resume_dir}: the run's detector spec held secrets ({base.detector.text}); pass --detector again"
            )
    else:
        base = EvalSettings(cases=default_cases(None), detector=parse_spec(BEST_BUILTIN))
    if args.detector_config:
        spec, options = load_detector_config(args.detector_config)
        base = replace(base, detector=parse_spec(spec) if spec else base.detector, options=options)
    given = {name: value for name, value in vars(args).items() if name in SETTING_NAMES and value != ""}  # "": unset
    given |= {
        "headers": {**base.options.headers, **_headers(args.header)} if args.header else None,
        "cache": True if args.cache_at is not None else (False if args.no_cache else None),
        "cache_dir": args.cache_at or None,
        "progress": False if args.quiet else ("bar" if sys.stderr.isatty() else "lines"),
        "out": args.resume_dir or args.out,  # a resumed run stays in its folder
    }
    return with_settings(base, given)


def _refuse_a_spec_for_cases(cases: str | None) -> None:
    """A detector spec given where the cases file belongs (``fcb eval builtin:agreement``) is named as such."""
    from pathlib import Path

    from harness.spec import looks_like_spec

    if cases and not Path(cases).exists() and looks_like_spec(cases):
        raise UsageError(f"{cases}: no such cases file, and it reads as a detector spec: did you mean -d {cases}?")
