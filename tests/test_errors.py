"""One error tree (harness.errors): the drawn tree is the real one, and the CLI's exit codes follow it.

The exit codes expected here are the documented ones (the CLI's docstring and the README), written out by hand;
a bug, even a ``ValueError``, is exit 3, never "bad usage".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli

import harness.errors as errors
from harness import cli
from harness.runfolder.lock import run_lock

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

# a line of the drawn tree: the box-drawing prefix, a class name, its exit code, what it means
_TREE_LINE = re.compile(r"^(?P<indent>[ │├└─]*)(?P<name>[A-Z]\w+)\s+(?P<code>\d+)\s")


def _drawn_tree() -> dict[str, tuple[str | None, int]]:
    """{class name: (parent name, exit code)} as drawn in the module docstring."""
    block = (errors.__doc__ or "").split("::", 1)[1].split("\n\n")[1]
    tree: dict[str, tuple[str | None, int]] = {}
    stack: list[tuple[int, str]] = []  # (column of the name, name) of the open ancestors
    for line in block.splitlines():
        found = _TREE_LINE.match(line.strip("\n")[4:])  # the block is indented by four spaces
        if not found:
            continue  # a continuation line of a description
        column = len(found["indent"])
        while stack and stack[-1][0] >= column:
            stack.pop()
        tree[found["name"]] = (stack[-1][1] if stack else None, int(found["code"]))
        stack.append((column, found["name"]))
    return tree


def _defined_errors() -> set[str]:
    return {
        name
        for name, value in vars(errors).items()
        if isinstance(value, type) and issubclass(value, errors.FcbError) and value.__module__ == errors.__name__
    }


def test_the_drawn_tree_is_the_class_tree() -> None:
    tree = _drawn_tree()
    assert len(tree) == 14  # counted by hand in the docstring
    assert set(tree) == _defined_errors()
    for name, (parent, _) in tree.items():
        cls = getattr(errors, name)
        if parent is None:
            assert name == "FcbError" and cls.__bases__ == (Exception,)
        else:
            assert cls.__bases__ == (getattr(errors, parent),), name


def test_the_drawn_exit_codes_are_the_cli_s() -> None:
    for name, (_, code) in _drawn_tree().items():
        assert errors.exit_code(getattr(errors, name)("x")) == code, name


def test_every_error_is_exported() -> None:
    tree = _drawn_tree()
    leaves = set(tree) - {parent for parent, _ in tree.values() if parent}
    assert {"DetectorLoadError", "IncomparableRuns", "RunInterrupted"} <= leaves
    assert set(tree) <= set(errors.__all__)
    for name in errors.__all__:
        assert hasattr(errors, name)


def test_old_names_still_import() -> None:
    from harness.leaderboard.compare import IncomparableRuns
    from harness.leaderboard.runs import RunLoadError
    from harness.report.html import ReportError
    from harness.run.runner import InvalidCases, PreflightFailed, RunError
    from harness.run.signals import RunInterrupted
    from harness.runfolder.lock import RunLocked

    assert InvalidCases is errors.InvalidCasesError and RunError is errors.RunError
    assert PreflightFailed is errors.PreflightFailed and RunInterrupted is errors.RunInterrupted
    assert (IncomparableRuns, RunLocked, ReportError, RunLoadError) == (
        errors.IncomparableRuns,
        errors.RunLocked,
        errors.ReportError,
        errors.RunLoadError,
    )


def test_a_per_case_detector_error_is_not_a_run_error() -> None:
    from harness.types import DetectorError

    assert not issubclass(DetectorError, errors.FcbError)


def _bug(*_args: object, **_kwargs: object) -> None:
    raise ValueError("a bug in fcb-harness")


# the commands that used to catch ValueError as "bad usage", and the function each calls to do its work
_BUGGY = [
    ("harness.run.runner", "run", ["eval", "--limit", "1", "-q"]),
    ("harness.run.merge", "merge_runs", ["merge", "a", "b", "--out", "c"]),
    ("harness.leaderboard.rank", "build_boards", ["leaderboard", "RESULTS"]),
    ("harness.detectors.service", "serve", ["serve"]),
    ("fcb_datasets.realdata.build", "build", ["build-dataset", "--gsm8k", "g", "--truthfulqa", "t", "--out", "o"]),
]


@pytest.mark.parametrize(("module", "name", "argv"), _BUGGY, ids=[argv[0] for _, _, argv in _BUGGY])
def test_a_value_error_from_a_bug_is_an_internal_error(
    module: str, name: str, argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import importlib

    if argv[0] == "leaderboard":  # one finished run for the board, so that the command gets to build_boards
        out = tmp_path / "run"
        proc = run_cli("eval", str(write_cases(tmp_path / "c.jsonl", 4)), "-d", "builtin:always-low", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        argv = ["leaderboard", str(out)]
    monkeypatch.setattr(importlib.import_module(module), name, _bug)
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 3
    err = capsys.readouterr().err
    assert "ValueError: a bug in fcb-harness" in err and "internal error" in err


def _run_dir(tmp_path: Path, name: str, cases: Path) -> Path:
    out = tmp_path / name
    proc = run_cli("eval", str(cases), "-d", "builtin:always-low", "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    return out


def _many_indivisible(tmp_path: Path) -> Path:
    """A valid scenario with 25 indivisible resources, one more than the analysis enumerates."""
    doc = json.loads((ROOT / "tests/data/scenarios/indivisible_impasse.json").read_text(encoding="utf-8"))
    template = doc["resources"][0]
    doc["id"] = "many"  # the file name
    doc["resources"] = [
        {**template, "id": f"r{i}", "name": f"Item {i}", "valuations": {"Alice": 0.04, "Bob": 0.04}} for i in range(25)
    ]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_user_mistakes_get_their_documented_exit_codes(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    other = write_cases(tmp_path / "other.jsonl", 4, seed=8)
    bad_cases = tmp_path / "bad.jsonl"
    bad_cases.write_text(cases.read_text().splitlines()[0] + "\nnot json\n", encoding="utf-8")
    raising = tmp_path / "raising.py"
    raising.write_text("def assess(request):\n    raise ValueError('boom')\n", encoding="utf-8")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n", encoding="utf-8")
    run_a, run_b = _run_dir(tmp_path, "a", cases), _run_dir(tmp_path, "b", other)
    locked = tmp_path / "locked"
    locked.mkdir()
    (tmp_path / "empty").mkdir()
    # (the mistake's class, the arguments, the documented exit code, a phrase of its message)
    mistakes = [
        ("UsageError", ["eval", str(cases), "--shard", "0/2"], 2, "fcb eval: --shard '0/2'"),
        ("UsageError", ["eval", str(cases), "--header", "nonsense"], 2, "fcb eval: --header 'nonsense'"),
        ("DetectorLoadError", ["eval", str(cases), "-d", "builtin:nope"], 2, "unknown built-in detector"),
        ("DetectorLoadError", ["serve", "-d", "builtin:nope"], 2, "fcb serve: unknown built-in detector"),
        (
            "SourceDataError",
            ["build-dataset", "--gsm8k", str(garbage), "--truthfulqa", str(tmp_path), "--out", str(tmp_path / "built")],
            2,
            "fcb build-dataset: ",
        ),
        ("ScenarioError", ["scenario", "analyze", str(_many_indivisible(tmp_path))], 2, "25 indivisible resources"),
        ("InvalidCasesError", ["eval", str(bad_cases)], 1, "no detector was called"),
        ("PreflightFailed", ["eval", str(cases), "-d", f"{raising}:assess"], 2, "ValueError: boom"),
        ("RunError", ["eval", "--resume", str(tmp_path / "nowhere")], 2, "not a run folder"),
        (
            "RunMismatchError",
            ["eval", str(cases), "-d", "builtin:always-low", "--out", str(run_a)],
            2,
            "already holds a finished run",
        ),
        ("RunMismatchError", ["merge", str(run_a), str(run_b), "--out", str(tmp_path / "m")], 2, "fcb merge: "),
        ("IncomparableRuns", ["compare", str(run_a), str(run_b)], 2, "fcb compare: "),
        ("RunLoadError", ["leaderboard", str(tmp_path / "empty")], 2, "fcb leaderboard: no runs found"),
        ("RunLoadError", ["baseline", "save", str(tmp_path / "nowhere"), "--name", "x"], 2, "fcb baseline save: "),
        ("ReportError", ["view", str(tmp_path / "nowhere"), "--no-open"], 2, "fcb view: "),
    ]
    kinds = {kind for kind, *_ in mistakes}
    assert kinds | {"FcbError", "RunLocked", "RunInterrupted"} == _defined_errors()  # RunLocked: below
    for kind, argv, code, phrase in mistakes:
        proc = run_cli(*argv)
        assert (proc.returncode, phrase in proc.stderr) == (code, True), (kind, proc.stderr)
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, kind
    with run_lock(locked):  # another process holds the run folder
        proc = run_cli("eval", str(cases), "-d", "builtin:always-low", "--out", str(locked))
    assert proc.returncode == 2 and "is in use by" in proc.stderr, proc.stderr


@pytest.mark.parametrize("command", [["eval"], ["leaderboard", "RUN"], ["compare", "A", "B"]])
def test_a_negative_bootstrap_is_bad_usage(command: list[str]) -> None:
    """Once hidden by ``except ValueError`` (numpy's "negative dimensions"), now checked where the flag is read."""
    proc = run_cli(*command, "--bootstrap", "-1")
    assert proc.returncode == 2 and "-1 is not a whole number of 0 or more" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("validate", "{missing}"),
        ("stats", "{missing}"),
        ("eval", "{missing}", "-d", "builtin:agreement"),
        ("audit-dataset", "{missing}", "{missing}"),
        ("build-dataset", "--gsm8k", "{missing}", "--out", "{out}"),
        ("scenario", "validate", "{missing}"),
    ],
)
def test_a_file_that_cannot_be_read_is_said_once_the_same_way_by_every_command(args: tuple, tmp_path: Path) -> None:
    # the mapping of OSError to exit 2 lives in the CLI's entry point alone (it was in six commands, worded apart)
    missing = tmp_path / "nowhere.jsonl"
    proc = run_cli(*(a.format(missing=missing, out=tmp_path / "o") for a in args))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"{missing}: No such file or directory" in proc.stderr and "Traceback" not in proc.stderr


def test_exit_codes_are_defined_in_one_place() -> None:
    from harness.cli import common
    from harness.scenario import commands

    codes = ("EXIT_OK", "EXIT_INVALID", "EXIT_USAGE", "EXIT_INTERNAL", "EXIT_INTERRUPTED")
    assert tuple(getattr(errors, c) for c in codes) == (0, 1, 2, 3, 130)  # the documented codes
    for module in (common, commands, cli):
        for code in codes:
            assert getattr(module, code, getattr(errors, code)) is getattr(errors, code), (module.__name__, code)
    sources = [p.read_text() for p in (ROOT / "harness").rglob("*.py") if p.name != "errors.py"]
    assert not [s for s in sources if re.search(r"^EXIT_\w+(, EXIT_\w+)* = ", s, re.M)]
