"""A suite's pairs (harness/suite/pairs.py): what each pair's status and message are, by the rules of ``fcb eval``'s
exit code, on small suites run in-process with the built-in detectors (issue 46). Every status is worked out in the
comments from what each pair's folder holds before the suite runs."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from casegen import write_cases

from harness.errors import RunLoadError, UsageError
from harness.suite import pairs
from harness.suite.pairs import (
    FAILED,
    RAN,
    RESUMED,
    SKIPPED,
    STOPPED,
    STOPPED_INTERRUPTED,
    Pair,
    is_complete,
    pair_settings,
    result_status,
    run_pair,
    run_suite,
    stale,
    suite_spec,
)
from harness.suite.spec import Suite, load_suite

SUITE = """\
bootstrap = 0
seed = 3

[[detectors]]
name = "agree"
spec = "builtin:agreement"

[[detectors]]
name = "low"
spec = "builtin:always-low"

[[datasets]]
name = "small"
cases = "cases.jsonl"
"""


def suite_in(folder: Path, text: str = SUITE, n: int = 4) -> tuple[Suite, Path]:
    write_cases(folder / "cases.jsonl", n)
    (folder / "suite.toml").write_text(text)
    return load_suite(folder / "suite.toml")


# ---- status and message of one run ---------------------------------------------------------------------------------


def result(stopped: str | None = None, cases: int = 4, errors: int = 0, not_run: int = 0) -> Any:
    return SimpleNamespace(stopped=stopped, figures={"operational": {"cases": cases, "errors": errors},
                                                     "n_not_run": not_run})  # fmt: skip


def test_result_status_by_the_rules_of_the_exit_code() -> None:
    assert result_status(result()) == (RAN, "")
    assert result_status(result(errors=1)) == (RAN, "1 case(s) ended in an error")
    assert result_status(result(errors=3)) == (RAN, "3 case(s) ended in an error")  # 3 of 4: not every case
    assert result_status(result(errors=4)) == (FAILED, "every case errored (4 of 4)")
    assert result_status(result(cases=0, errors=0)) == (RAN, "")  # no case asked: nothing errored
    interrupted = (STOPPED_INTERRUPTED, "interrupted; run the suite again to resume it")
    assert result_status(result("interrupted")) == interrupted
    assert result_status(result(not_run=1)) == interrupted  # cases left and no reason given: interrupted
    assert result_status(result("budget: 10 requests spent", not_run=2)) == (STOPPED, "10 requests spent")
    assert result_status(result("provider: quota spent")) == (STOPPED, "quota spent")
    assert result_status(result("5 errors in a row", not_run=2)) == (STOPPED, "stopped after 5 errors in a row")


def test_a_pair_is_ok_when_it_completed_and_no_gate_regressed(tmp_path: Path) -> None:
    for status in (SKIPPED, RAN, RESUMED):
        assert Pair("d", "s", tmp_path, status).ok
        assert Pair("d", "s", tmp_path, status, gate="passed").ok
        assert not Pair("d", "s", tmp_path, status, gate="regressed").ok
    for status in (FAILED, STOPPED, STOPPED_INTERRUPTED, ""):
        assert not Pair("d", "s", tmp_path, status).ok


def test_the_status_names_a_user_reads() -> None:
    assert (SKIPPED, RAN, RESUMED, FAILED, STOPPED, STOPPED_INTERRUPTED) == (
        "complete (skipped)", "ran", "resumed", "failed", "stopped", "interrupted")  # fmt: skip


# ---- a suite run twice ---------------------------------------------------------------------------------------------


def test_a_suite_runs_each_pair_once_then_skips_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite, base = suite_in(tmp_path)
    done = run_suite(suite, base, tmp_path / "out")
    assert [(p.detector, p.dataset, p.status, p.message) for p in done] == [
        ("agree", "small", RAN, ""), ("low", "small", RAN, "")]  # fmt: skip
    assert [p.run_dir for p in done] == [tmp_path / "out" / "runs" / "small" / name for name in ("agree", "low")]
    assert capsys.readouterr().err.splitlines()[:1] == ["[1/2] agree on small"]
    doc = json.loads((tmp_path / "out" / "runs" / "small" / "low" / "metrics.json").read_text())
    assert doc["detector"]["label"] == "low" and doc["settings"]["seed"] == 3 and doc["complete"] is True
    assert is_complete(done[0].run_dir)
    again = run_suite(suite, base, tmp_path / "out", quiet=True)
    assert [(p.status, p.message) for p in again] == [(SKIPPED, ""), (SKIPPED, "")]
    assert "[1/2]" not in capsys.readouterr().err  # quiet: no progress lines


def test_progress_counts_pairs_across_data_sets(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = SUITE.replace('spec = "builtin:agreement"', 'config = "missing.toml"') + (
        '\n[[datasets]]\nname = "again"\ncases = "cases.jsonl"\nlimit = 1\n'
    )
    suite, base = suite_in(tmp_path, text, n=2)
    done = run_suite(suite, base, tmp_path / "out")
    # 2 detectors x 2 data sets, data set by data set; "agree" names a config file that is not there: it fails
    # alone, and the detector after it still runs
    assert [(p.detector, p.dataset, p.status) for p in done] == [
        ("agree", "small", FAILED),
        ("low", "small", RAN),
        ("agree", "again", FAILED),
        ("low", "again", RAN),
    ]
    assert str(tmp_path / "missing.toml") in done[0].message
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("[")] == [
        "[1/4] agree on small", "[2/4] low on small", "[3/4] agree on again", "[4/4] low on again"]  # fmt: skip
    assert not (tmp_path / "out" / "runs" / "small" / "agree").exists()  # nothing ran: no folder either


def test_an_interrupted_pair_stops_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite, base = suite_in(tmp_path)
    seen: list[str] = []

    def interrupted(settings: Any, pair: Pair) -> None:
        seen.append(pair.detector)
        pair.status = STOPPED_INTERRUPTED

    monkeypatch.setattr(pairs, "run_pair", interrupted)
    done = run_suite(suite, base, tmp_path / "out", quiet=True)
    assert seen == ["agree"] and [p.detector for p in done] == ["agree"]  # "low" never started


def test_an_unfinished_run_is_resumed(tmp_path: Path) -> None:
    suite, base = suite_in(tmp_path)
    det, ds = suite.detectors[0], suite.datasets[0]
    folder = tmp_path / "out" / "runs" / "small" / "agree"
    run_suite(suite, base, tmp_path / "out", quiet=True)
    doc = json.loads((folder / "metrics.json").read_text())
    doc["complete"] = False  # as a run stopped before it finished leaves it
    (folder / "metrics.json").write_text(json.dumps(doc))
    assert not is_complete(folder)
    pair = Pair("agree", "small", folder)
    settings = pair_settings(suite, base, det, ds, folder)
    assert settings.resume is True  # its journal is there
    run_pair(settings, pair)
    assert (pair.status, pair.message) == (RESUMED, "")
    assert is_complete(folder)


def test_a_complete_run_of_other_settings_is_not_this_pairs(tmp_path: Path) -> None:
    suite, base = suite_in(tmp_path)
    run_suite(suite, base, tmp_path / "out", quiet=True)
    folder = tmp_path / "out" / "runs" / "small" / "agree"
    det, ds = suite.detectors[0], suite.datasets[0]
    assert stale(pair_settings(suite, base, det, ds, folder), folder) == ""
    low = pair_settings(suite, base, suite.detectors[1], ds, folder)  # always-low's settings on agree's run
    why = stale(low, folder)
    assert why == "holds a run of builtin:agreement (limit None), not of this suite's settings"
    pair = Pair("low", "small", folder)
    run_pair(low, pair)
    assert (pair.status, pair.message) == (FAILED, f"{folder} {why}; remove it to run this pair again")
    limited = suite.model_copy(update={"datasets": [ds.model_copy(update={"limit": 2})]})
    assert stale(pair_settings(limited, base, det, limited.datasets[0], folder), folder) == (
        "holds a run of builtin:agreement (limit None), not of this suite's settings"
    )
    (tmp_path / "cases.jsonl").write_text((tmp_path / "cases.jsonl").read_text() + "\n")  # another version
    assert stale(pair_settings(suite, base, det, ds, folder), folder) == (
        f"holds a run of another version of {tmp_path / 'cases.jsonl'} (its sha256 differs)"
    )
    (folder / "run.json").unlink()
    assert stale(pair_settings(suite, base, det, ds, folder), folder) == ""  # no manifest: nothing to compare


def test_a_refused_run_fails_its_pair_alone(tmp_path: Path) -> None:
    suite, base = suite_in(tmp_path)
    det, ds = suite.detectors[0], suite.datasets[0]
    det = det.model_copy(update={"spec": "nowhere.py:assess"})  # a detector that does not load
    pair = Pair("agree", "small", tmp_path / "run")
    run_pair(pair_settings(suite, base, det, ds, tmp_path / "run"), pair)
    assert pair.status == FAILED and str(tmp_path / "nowhere.py") in pair.message


def test_is_complete_reads_metrics(tmp_path: Path) -> None:
    assert is_complete(tmp_path / "nothing") is False  # no metrics.json: it runs
    (tmp_path / "metrics.json").write_text("{not json")
    assert is_complete(tmp_path) is False
    with pytest.raises(RunLoadError):
        pairs.read_metrics(tmp_path)


# ---- settings ------------------------------------------------------------------------------------------------------


def test_a_detector_config_file_under_the_suites_keys(tmp_path: Path) -> None:
    (tmp_path / "det.toml").write_text('detector = "builtin:agreement"\nconcurrency = 7\ntimeout = 9\n')
    text = SUITE.replace('spec = "builtin:always-low"', 'config = "det.toml"\ntimeout = 4.5\ncache_dir = "c"')
    suite, base = suite_in(tmp_path, text)
    settings = pair_settings(suite, base, suite.detectors[1], suite.datasets[0], tmp_path / "run")
    assert settings.detector.text == "builtin:agreement"  # from the config file
    assert (settings.options.concurrency, settings.options.timeout) == (7, 4.5)  # the suite's timeout over its 9
    assert settings.options.cache_dir == str(tmp_path / "c") and settings.name == "low"
    assert (settings.n_boot, settings.seed, settings.out) == (0, 3, str(tmp_path / "run"))
    plain = pair_settings(suite, base, suite.detectors[0], suite.datasets[0], tmp_path / "run")
    assert plain.options.cache_dir is None


def test_a_config_naming_no_detector_and_no_spec(tmp_path: Path) -> None:
    (tmp_path / "det.toml").write_text("concurrency = 7\n")
    suite, base = suite_in(tmp_path, SUITE.replace('spec = "builtin:always-low"', 'config = "det.toml"'))
    with pytest.raises(UsageError) as info:
        pair_settings(suite, base, suite.detectors[1], suite.datasets[0], tmp_path / "run")
    assert str(info.value) == "detector low: det.toml names no detector; give spec in the suite file"


def test_the_embedded_set(tmp_path: Path) -> None:
    from harness.cases.reader import embedded_cases_path

    suite, base = suite_in(tmp_path, SUITE.replace('cases = "cases.jsonl"', 'cases = "embedded"'))
    settings = pair_settings(suite, base, suite.detectors[0], suite.datasets[0], tmp_path / "run")
    assert settings.cases == str(embedded_cases_path())


def test_a_spec_file_is_read_relative_to_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "det.py").write_text("def assess(request):\n    return 'low'\n")
    det = SimpleNamespace(name="mine", spec="det.py:assess")
    parsed = suite_spec(tmp_path / "suites", det)  # type: ignore[arg-type]
    assert parsed.kind == "python" and parsed.target == str(tmp_path / "suites" / "det.py")
    assert parsed.attribute == "assess"
    absolute = SimpleNamespace(name="abs", spec=f"{tmp_path / 'suites' / 'det.py'}:assess")
    assert suite_spec(tmp_path / "elsewhere", absolute).target == str(tmp_path / "suites" / "det.py")  # type: ignore[arg-type]
    assert suite_spec(tmp_path, SimpleNamespace(name="b", spec="builtin:agreement")).kind == "builtin"  # type: ignore[arg-type]
    module = SimpleNamespace(name="m", spec="harness.detectors.builtin:AlwaysLow")
    assert suite_spec(tmp_path / "elsewhere", module).target == "harness.detectors.builtin"  # type: ignore[arg-type]


def test_a_spec_file_found_only_from_the_current_folder_is_refused(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    (tmp_path / "det.py").write_text("def assess(request):\n    return 'low'\n")
    monkeypatch.chdir(tmp_path)
    det = SimpleNamespace(name="mine", spec="det.py:assess")
    with pytest.raises(UsageError) as info:
        suite_spec(tmp_path / "suites", det)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"detector mine: spec 'det.py:assess': {tmp_path / 'suites' / 'det.py'} does not exist; a spec's file is "
        f"read relative to the suite file, not the current folder ({tmp_path / 'det.py'}): give that path relative "
        "to the suite file, or an absolute one"
    )
    nowhere = SimpleNamespace(name="n", spec="nowhere.py:assess")  # in neither folder: left for the loader to say
    assert suite_spec(tmp_path / "suites", nowhere).target == str(tmp_path / "suites" / "nowhere.py")  # type: ignore[arg-type]


def test_a_progress_bar_only_on_a_terminal_and_not_when_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite, base = suite_in(tmp_path)
    seen: list[Any] = []

    def record(settings: Any, pair: Pair) -> None:
        seen.append(settings.progress)
        pair.status = RAN

    monkeypatch.setattr(pairs, "run_pair", record)
    monkeypatch.setattr(pairs.sys.stderr, "isatty", lambda: True)
    run_suite(suite, base, tmp_path / "a")
    run_suite(suite, base, tmp_path / "b", quiet=True)
    monkeypatch.setattr(pairs.sys.stderr, "isatty", lambda: False)
    run_suite(suite, base, tmp_path / "c")
    assert seen == ["bar", "bar", False, False, False, False]  # two pairs a suite
    assert (tmp_path / "a" / "runs" / "small").is_dir()  # each pair's data set folder made before it runs
