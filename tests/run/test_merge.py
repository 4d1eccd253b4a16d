"""``fcb merge`` in process (`harness.run.merge.merge_runs`): shard runs made here by the Python API in a few
milliseconds, their run.json sessions then set by hand, so that the merged run's counts, wall time and throughput
are worked out in each test: the wall time of shards run side by side is the longest shard's (its sessions summed),
whatever their start times, and the throughput the merged cases over it. Also what merge refuses and warns of, in
the words a user reads. tests/run/test_merge_journals.py and tests/run/test_shards.py drive ``fcb merge`` end to
end."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from casegen import write_cases

from harness.errors import RunError, RunLoadError, RunMismatchError
from harness.run.api import evaluate
from harness.run.merge import SAME, merge_runs

N = 10


def _shard_of(case_id: str, n: int) -> int:
    """The shard (1..n) of a case, by hand: the first 12 hex digits of sha256(id), mod n, plus one."""
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % n + 1


def _cases(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = write_cases(tmp_path / "cases.jsonl", N)
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def _high(request: Any) -> str:
    return "high"


_BASE: dict[tuple[int, int | None], Path] = {}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cases file for the module; shard runs are made once for each (N, limit) and copied into each test."""
    _BASE.clear()
    root = tmp_path_factory.mktemp("merge")
    _cases(root)
    return root


def _shards(tmp_path: Path, n: int, **settings: Any) -> tuple[Path, list[Path]]:
    """Shards 1/n .. n/n of the module's cases (every answer "high"), fresh copies in ``tmp_path``."""
    root = _ROOT[0]
    cases = root / "cases.jsonl"
    key = (n, settings.get("limit"))
    if key not in _BASE:
        made = root / f"n{n}-limit{key[1]}"
        for k in range(1, n + 1):
            evaluate(cases, _high, out=str(made / f"part-{k}"), n_boot=10, shard=(k, n), **settings)
        _BASE[key] = made
    dirs = []
    for k in range(1, n + 1):
        copy = tmp_path / f"part-{k}"
        shutil.copytree(_BASE[key] / f"part-{k}", copy)
        dirs.append(copy)
    return cases, dirs


_ROOT: list[Path] = []


@pytest.fixture(autouse=True)
def _root(base: Path) -> None:
    _ROOT[:] = [base]


def _sessions(run: Path, walls: list[float], created: str | None = None, started: list[str] | None = None) -> None:
    """Set a shard's sessions by hand: one a wall time (a resumed shard has several)."""
    path = run / "run.json"
    manifest = json.loads(path.read_text())
    manifest["sessions"] = [
        {"started": (started or [f"2026-01-01T00:00:0{i}+00:00" for i in range(len(walls))])[i], "wall_s": w,
         "cases": 1}
        for i, w in enumerate(walls)
    ]  # fmt: skip
    if created:
        manifest["created"] = created
    path.write_text(json.dumps(manifest))


def _no_warnings(message: str) -> None:
    raise AssertionError(f"unexpected warning: {message}")


# --- counts, wall time, throughput --------------------------------------------------------------------------------


def test_two_unequal_shards_merge_to_every_case_and_the_longest_shards_time(tmp_path: Path) -> None:
    """Shard 1: two sessions, 2.0 + 1.5 = 3.5 s; shard 2: one of 4.0 s. Side by side: wall = max(3.5, 4.0) = 4.0 s,
    throughput 10 cases / 4.0 s = 2.5 a second. Every case answered high: accuracy = the share expected high."""
    _, (one, two) = _shards(tmp_path, 2)
    _, docs = _cases(tmp_path)
    sizes = [sum(1 for d in docs if _shard_of(d["id"], 2) == k) for k in (1, 2)]
    assert sizes[0] != sizes[1] and sum(sizes) == N  # unequal shards
    _sessions(one, [2.0, 1.5])
    _sessions(two, [4.0])
    doc = merge_runs([one, two], tmp_path / "all", warn=_no_warnings)
    m = doc["metrics"]
    assert (m["n_cases"], m["n_not_run"]) == (N, 0)
    assert m["operational"]["cases"] == N and m["operational"]["errors"] == 0
    assert m["operational"]["wall_s"] == 4.0 and m["operational"]["cases_per_s"] == 2.5
    n_high = sum(1 for d in docs if d["expected_risk"] == "high")
    assert m["accuracy"] == pytest.approx(n_high / N)
    assert doc["complete"] is True
    assert json.loads((tmp_path / "all" / "metrics.json").read_text())["metrics"]["operational"]["wall_s"] == 4.0


def test_a_resumed_shard_whose_sessions_sum_past_the_other_sets_the_wall_time(tmp_path: Path) -> None:
    """Shard 1: 3.0 + 3.0 = 6.0 s (no session longer than 5.0); shard 2: 5.0 s. Wall = max(6.0, 5.0) = 6.0 s,
    not the longest session (5.0) nor the sum of all (11.0); throughput 10 / 6.0 = 1.666... a second."""
    _, (one, two) = _shards(tmp_path, 2)
    _sessions(one, [3.0, 3.0])
    _sessions(two, [5.0])
    m = merge_runs([one, two], tmp_path / "all", warn=_no_warnings)["metrics"]
    assert m["operational"]["wall_s"] == 6.0 and m["operational"]["cases_per_s"] == pytest.approx(10 / 6)


@pytest.mark.parametrize(
    ("starts_1", "starts_2"),
    [
        (["2026-01-01T10:00:00+00:00"], ["2026-01-01T10:00:01+00:00"]),  # overlapping spans
        (["2026-01-01T10:00:00+00:00"], ["2026-01-02T10:00:00+00:00"]),  # a day apart: no overlap
    ],
)
def test_the_start_times_do_not_enter_the_wall_time(tmp_path: Path, starts_1: list[str], starts_2: list[str]) -> None:
    """Shards 1.25 s and 0.5 s long, whether their spans overlap or not: the merge counts shards as run side by side
    (on machines of their own), wall = max(1.25, 0.5) = 1.25 s, throughput 10 / 1.25 = 8.0 a second."""
    _, (one, two) = _shards(tmp_path, 2)
    _sessions(one, [1.25], started=starts_1)
    _sessions(two, [0.5], started=starts_2)
    m = merge_runs([two, one], tmp_path / "all", warn=_no_warnings)["metrics"]
    assert (m["operational"]["wall_s"], m["operational"]["cases_per_s"]) == (1.25, 8.0)


def test_one_shard_of_one_is_the_run_itself(tmp_path: Path) -> None:
    """Shard 1/1 holds every case; its sessions 0.75 + 0.25 = 1.0 s: wall 1.0, 10 a second."""
    cases, (only,) = _shards(tmp_path, 1)
    _sessions(only, [0.75, 0.25])
    doc = merge_runs([only], tmp_path / "all", warn=_no_warnings)
    m = doc["metrics"]
    assert (m["n_cases"], m["operational"]["wall_s"], m["operational"]["cases_per_s"]) == (N, 1.0, 10.0)
    single = evaluate(cases, _high, out=str(tmp_path / "single"), n_boot=10).document["metrics"]
    for key in ("accuracy", "macro_f1", "confusion_matrix", "per_category", "high_risk_recall"):
        assert m[key] == single[key], key


def test_three_shards_zero_wall_time_gives_no_throughput(tmp_path: Path) -> None:
    """Three shards of 0.0 s each (a clock that did not move): wall 0.0, throughput None, never a division by 0."""
    _, dirs = _shards(tmp_path, 3)
    for d in dirs:
        _sessions(d, [0.0])
    m = merge_runs(dirs, tmp_path / "all", warn=_no_warnings)["metrics"]
    assert m["n_cases"] == N and m["operational"]["wall_s"] == 0.0 and m["operational"]["cases_per_s"] is None


# --- what the merged folder holds -----------------------------------------------------------------------------------


def test_the_merged_folder_holds_every_line_every_session_and_its_origins(tmp_path: Path) -> None:
    """run.json: created = the earlier of the two; sessions = shard 2's then shard 1's (the order named); no shard;
    merged_from the folders named. The journal: every shard's lines; scope.json: all 10 cases."""
    _, (one, two) = _shards(tmp_path, 2)
    _sessions(one, [1.0, 2.0], created="2026-03-02T00:00:00+00:00")
    _sessions(two, [3.0], created="2026-03-01T00:00:00+00:00")
    out = tmp_path / "all"
    merge_runs([two, one], out, warn=_no_warnings)
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["created"] == "2026-03-01T00:00:00+00:00"
    assert [s["wall_s"] for s in manifest["sessions"]] == [3.0, 1.0, 2.0]
    assert manifest["merged_from"] == [str(two), str(one)]
    assert manifest["identity"]["shard"] is None and manifest["settings"]["shard"] is None
    assert manifest["cases"] == json.loads((one / "run.json").read_text())["cases"]
    lines = (out / "predictions.jsonl").read_text().splitlines()
    shard_lines = (two / "predictions.jsonl").read_text().splitlines() + (
        one / "predictions.jsonl"
    ).read_text().splitlines()
    assert lines == shard_lines and len(lines) == N
    assert len(json.loads((out / "scope.json").read_text())["cases"]) == N
    assert (out / "report.md").exists() and (out / "report.html").exists()
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["merged_from"] == [str(two), str(one)]


def test_a_limit_counts_only_the_cases_under_it(tmp_path: Path) -> None:
    """--limit 2 on each of 2 shards: each shard runs its first 2 cases (4 lines in all); the merged run counts the
    first 2 cases of the whole file that are in scope; the others journaled are in their shard but not counted."""
    _, (one, two) = _shards(tmp_path, 2, limit=2)
    doc = merge_runs([one, two], tmp_path / "all", warn=_no_warnings)
    assert doc["metrics"]["n_cases"] == 2 and doc["metrics"]["operational"]["cases"] == 2
    assert doc["metrics"]["n_not_run"] == 0
    assert doc["complete"] is False  # the limit left 8 of the 10 cases out: counted 2 of 10 in scope


# --- refusals and warnings ------------------------------------------------------------------------------------------


def test_the_shards_must_be_one_to_n_each_once(tmp_path: Path) -> None:
    _, (one, two, three) = _shards(tmp_path, 3)
    with pytest.raises(RunMismatchError) as err:
        merge_runs([one, three], tmp_path / "a")
    assert str(err.value) == "the runs must be shards 1/N .. N/N of one evaluation, each once; found 1/3, 3/3"
    with pytest.raises(RunMismatchError, match=r"found 1/3, 1/3, 2/3$"):
        merge_runs([one, two, one], tmp_path / "b")
    with pytest.raises(RunMismatchError, match=r"found 1/3, 2/3, 3/3, 3/3$"):
        merge_runs([one, two, three, three], tmp_path / "b2")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_an_unsharded_run_is_no_shard(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path)
    evaluate(cases, _high, out=str(tmp_path / "whole"), n_boot=10)
    with pytest.raises(RunMismatchError) as err:
        merge_runs([tmp_path / "whole"], tmp_path / "out")
    assert str(err.value).endswith("each once; found unsharded")  # said "found 0/0" before the fix
    (tmp_path / "s").mkdir()
    _, (one, _) = _shards(tmp_path / "s", 2)
    with pytest.raises(RunMismatchError) as err:
        merge_runs([one, tmp_path / "whole"], tmp_path / "out")
    assert str(err.value).endswith("each once; found unsharded, 1/2")


def test_a_shard_of_another_evaluation_is_refused_naming_what_differs(tmp_path: Path) -> None:
    assert SAME[:2] == ("dataset_sha256", "detector")
    _, (one, two) = _shards(tmp_path, 2)
    manifest = json.loads((two / "run.json").read_text())
    manifest["identity"]["anonymize_agents"] = True
    (two / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(RunMismatchError) as err:
        merge_runs([one, two], tmp_path / "out")
    assert str(err.value) == f"{two}: not a shard of the same evaluation as {one} (differs in anonymize_agents)"


def test_a_folder_without_run_json_is_not_a_run(tmp_path: Path) -> None:
    _, (one, _) = _shards(tmp_path, 2)
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunError) as err:
        merge_runs([one, tmp_path / "empty"], tmp_path / "out")
    assert str(err.value) == f"{tmp_path / 'empty'}: not a run folder (no run.json)"


def test_another_cases_file_is_refused(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    other = write_cases(tmp_path / "other.jsonl", N, seed=99)
    with pytest.raises(RunMismatchError) as err:
        merge_runs([one, two], tmp_path / "out", cases=str(other))
    assert str(err.value) == f"{other}: not the data set the shards ran on (sha256 differs); pass --cases"


def test_cases_moved_are_found_with_cases(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    for k, out in ((1, one), (2, two)):
        evaluate(cases, _high, out=str(out), n_boot=10, shard=(k, 2))
    moved = tmp_path / "moved.jsonl"
    cases.rename(moved)
    doc = merge_runs([one, two], tmp_path / "out", cases=str(moved), warn=_no_warnings)
    assert doc["metrics"]["n_cases"] == N
    assert json.loads((tmp_path / "out" / "run.json").read_text())["cases"] == str(cases)  # as the shards ran


def test_an_output_that_holds_a_run_is_refused(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "predictions.jsonl").write_text("")
    with pytest.raises(RunMismatchError) as err:
        merge_runs([one, two], tmp_path / "out")
    assert str(err.value) == f"{tmp_path / 'out'} already holds a run"


def test_a_foreign_line_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    """Shard 1's journal gets a copy of shard 2's first line as its line k+1 (k its own lines): refused, naming it;
    nothing is written."""
    _, (one, two) = _shards(tmp_path, 2)
    own = (one / "predictions.jsonl").read_text().splitlines()
    foreign = (two / "predictions.jsonl").read_text().splitlines()[0]
    (one / "predictions.jsonl").write_text("\n".join([*own, foreign]) + "\n")
    rec = json.loads(foreign)
    with pytest.raises(RunMismatchError) as err:
        merge_runs([one, two], tmp_path / "out")
    assert str(err.value) == (
        f"{one / 'predictions.jsonl'}:{len(own) + 1}: id: {rec['id']!r} (content hash {rec['hash']}) is not one of "
        "the cases of shard 1/2 (its scope.json and the data set); refusing to merge a journal with lines from "
        "outside its shard"
    )
    assert not (tmp_path / "out").exists()


def test_a_line_outside_a_forged_scope_is_refused_too(tmp_path: Path) -> None:
    """scope.json of shard 1 also lists shard 2's first case: the line is still not of shard 1/2."""
    _, (one, two) = _shards(tmp_path, 2)
    foreign = (two / "predictions.jsonl").read_text().splitlines()[0]
    rec = json.loads(foreign)
    scope = json.loads((one / "scope.json").read_text())
    scope["cases"].append([rec["id"], rec["hash"]])
    (one / "scope.json").write_text(json.dumps(scope))
    with (one / "predictions.jsonl").open("a") as f:
        f.write(foreign + "\n")
    with pytest.raises(RunMismatchError, match="is not one of the cases of shard 1/2"):
        merge_runs([one, two], tmp_path / "out")


def test_a_line_of_its_shard_outside_its_scope_is_refused(tmp_path: Path) -> None:
    """A shard's own case dropped from its scope.json: its line is refused."""
    _, (one, two) = _shards(tmp_path, 2)
    scope = json.loads((one / "scope.json").read_text())
    dropped = scope["cases"].pop(0)
    (one / "scope.json").write_text(json.dumps(scope))
    with pytest.raises(RunMismatchError, match=rf"id: '{dropped[0]}'"):
        merge_runs([one, two], tmp_path / "out")


def test_a_shard_without_scope_json_is_checked_against_its_shard(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    (one / "scope.json").unlink()
    doc = merge_runs([one, two], tmp_path / "out", warn=_no_warnings)
    assert doc["metrics"]["n_cases"] == N


def test_a_torn_last_line_is_left_out_with_a_warning_and_its_case_not_run(tmp_path: Path) -> None:
    """Shard 2's last line cut short: merged, 10 - 1 = 9 cases answered, 1 not run, the run incomplete; the
    merged journal has the complete lines only."""
    _, (one, two) = _shards(tmp_path, 2)
    journal = two / "predictions.jsonl"
    data = journal.read_bytes()
    journal.write_bytes(data[:-20])
    warnings: list[str] = []
    doc = merge_runs([one, two], tmp_path / "out", warn=warnings.append)
    assert warnings == [
        f"{journal}: its last line is cut short (the shard was killed while writing it); it is left out, as a "
        "resume leaves it out, and its case counts as not run"
    ]
    m = doc["metrics"]
    assert (m["n_not_run"], m["operational"]["cases"]) == (1, N - 1) and doc["complete"] is False
    assert len((tmp_path / "out" / "predictions.jsonl").read_text().splitlines()) == N - 1


def test_an_unfinished_shard_is_merged_with_a_warning(tmp_path: Path) -> None:
    """Shard 1 has no metrics.json (killed) and lost its last line: the detector is shard 2's record; 1 case not
    run. Named first or second, the same."""
    _, (one, two) = _shards(tmp_path, 2)
    (one / "metrics.json").unlink()
    lines = (one / "predictions.jsonl").read_text().splitlines()
    (one / "predictions.jsonl").write_text("".join(line + "\n" for line in lines[:-1]))
    for order, out in (([one, two], "a"), ([two, one], "b")):
        warnings: list[str] = []
        doc = merge_runs(order, tmp_path / out, warn=warnings.append)
        assert warnings == [
            f"{one}: the shard has not finished (no metrics.json); the cases its journal lacks count as not run "
            f"(fcb eval --resume {one} finishes it)"
        ]
        assert doc["metrics"]["n_not_run"] == 1 and doc["complete"] is False
        assert doc["detector"] == json.loads((two / "metrics.json").read_text())["detector"]


def test_no_finished_shard_is_refused(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    (one / "metrics.json").unlink()
    (two / "metrics.json").unlink()
    with pytest.raises(RunLoadError) as err:
        merge_runs([one, two], tmp_path / "out", warn=lambda m: None)
    assert str(err.value).startswith(f"{one / 'metrics.json'}: no such file")


def test_a_missing_journal_is_refused(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    (two / "predictions.jsonl").unlink()
    with pytest.raises(RunLoadError) as err:
        merge_runs([one, two], tmp_path / "out")
    path = two / "predictions.jsonl"
    assert str(err.value) == f"{path}: no such file; not a shard run, or one whose run never started"
    path.mkdir()
    with pytest.raises(RunLoadError) as err:
        merge_runs([one, two], tmp_path / "out")
    assert str(err.value) == f"{path}: Is a directory"


def test_warnings_go_to_stderr_by_default(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    journal = two / "predictions.jsonl"
    journal.write_bytes(journal.read_bytes()[:-5])
    merge_runs([one, two], tmp_path / "out")
    err = capsys.readouterr().err
    assert err.startswith(f"warning: {journal}: its last line is cut short") and err.endswith("not run\n")


# --- epochs and probes, strict files, where the merged run goes ------------------------------------------------------


def test_shards_with_epochs_and_a_probe_merge_to_every_item(tmp_path: Path) -> None:
    """2 epochs and the order probe: a case whose answers are not all the same text (k of the 10, counted here) has
    an order variant: 2 x 10 + 2 x k items in all, counted in the operational figures; the probe's block says k
    and 10 - k not possible; complete. Then the last item of shard 2 torn: one item fewer, no case without a
    verdict (its epoch 1 stands), yet incomplete (one item unasked)."""
    cases, docs = _cases(tmp_path)
    k = sum(1 for d in docs if len({a["text"] for a in d["answers"]}) > 1)
    items = 2 * N + 2 * k
    dirs = []
    for part in (1, 2):
        out = tmp_path / f"part-{part}"
        evaluate(cases, _high, out=str(out), n_boot=10, shard=(part, 2), epochs=2, probes=("order",))
        dirs.append(out)
    n_lines = sum(len((d / "predictions.jsonl").read_text().splitlines()) for d in dirs)
    doc = merge_runs(dirs, tmp_path / "all", warn=_no_warnings)
    m = doc["metrics"]
    assert m["operational"]["cases"] == n_lines == items and m["n_cases"] == N and doc["complete"] is True
    assert m["probes"]["order"]["not_possible"] == N - k and m["epochs"]["n"] == 2
    journal = dirs[1] / "predictions.jsonl"
    journal.write_bytes(journal.read_bytes()[:-3])
    warnings: list[str] = []
    doc = merge_runs(dirs, tmp_path / "torn", warn=warnings.append)
    m = doc["metrics"]
    assert len(warnings) == 1 and m["operational"]["cases"] == items - 1
    assert m["n_not_run"] == 0 and doc["complete"] is False


def test_a_strict_evaluation_merges_on_its_strict_reading_of_the_file(tmp_path: Path) -> None:
    """One case's expected risk departs from its category's (a warning; under --strict an error, its line skipped
    with --skip-invalid): the shards count 9 cases; so does the merge, and it is incomplete (1 invalid line), with
    no case not run."""
    cases, docs = _cases(tmp_path)
    odd = next(d for d in docs if d["expected_risk"] == "high")
    odd["expected_risk"] = "low"
    cases.write_text("".join(json.dumps(d) + "\n" for d in docs))
    dirs = []
    for k in (1, 2):
        out = tmp_path / f"part-{k}"
        evaluate(cases, _high, out=str(out), n_boot=10, shard=(k, 2), strict=True, skip_invalid=True)
        dirs.append(out)
    doc = merge_runs(dirs, tmp_path / "all", warn=_no_warnings)
    assert (doc["metrics"]["n_cases"], doc["metrics"]["n_not_run"]) == (N - 1, 0)
    assert doc["complete"] is False


def test_a_malformed_line_is_refused_naming_the_file(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    lines = (one / "predictions.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["risk"] = "huge"
    (one / "predictions.jsonl").write_text("\n".join([json.dumps(rec), *lines[1:]]) + "\n")
    with pytest.raises(RunLoadError) as err:
        merge_runs([one, two], tmp_path / "out")
    assert str(err.value).startswith(f"{one / 'predictions.jsonl'}:1: risk: ")


def test_the_merged_folder_may_be_deep_or_already_made(tmp_path: Path) -> None:
    _, (one, two) = _shards(tmp_path, 2)
    deep = tmp_path / "a" / "b" / "all"
    assert merge_runs([one, two], deep, warn=_no_warnings)["metrics"]["n_cases"] == N
    assert (deep / "metrics.json").exists()
    made = tmp_path / "made"
    made.mkdir()
    assert merge_runs([one, two], made, warn=_no_warnings)["metrics"]["n_cases"] == N
