"""``fcb merge`` takes from each shard's journal only that shard's own cases, and a killed shard's torn last line
the way resume takes it (issue 24, item 6): a forged line is refused, a torn one left out, never merged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 40


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("shards")
    cases = write_cases(tmp / "cases.jsonl", N)
    for k in (1, 2):
        proc = run_cli(
            "eval", str(cases), "-d", "builtin:agreement", "--shard", f"{k}/2", "-q", "--out", str(tmp / f"s{k}")
        )
        assert proc.returncode == 0, proc.stderr
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "-q", "--out", str(tmp / "single"))
    assert proc.returncode == 0, proc.stderr
    return tmp


def _copy(shards: Path, name: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(shards / name, tmp_path / name))


def _figures(run: Path) -> dict:
    metrics = json.loads((run / "metrics.json").read_text())["metrics"]
    metrics.pop("operational")
    return metrics


@pytest.mark.parametrize("forge_scope", [False, True])
def test_merge_refuses_a_journal_line_outside_its_shard(shards: Path, tmp_path: Path, forge_scope: bool) -> None:
    # lines for the other shard's cases, all answered right, appended to shard 1: merged, they moved accuracy
    s1 = _copy(shards, "s1", tmp_path)
    own = read_jsonl(s1 / "predictions.jsonl")
    foreign = [{**r, "risk": r["expected"], "score": None} for r in read_jsonl(shards / "s2" / "predictions.jsonl")]
    with open(s1 / "predictions.jsonl", "a") as f:
        f.writelines(json.dumps(r) + "\n" for r in foreign)
    if forge_scope:  # its scope.json claiming every case does not make them its own
        scope = json.loads((s1 / "scope.json").read_text())
        scope["cases"] += [[r["id"], r["hash"]] for r in foreign]
        (s1 / "scope.json").write_text(json.dumps(scope))
    out = tmp_path / "merged"
    proc = run_cli("merge", str(shards / "s2"), str(s1), "--out", str(out), "-q")
    assert proc.returncode == 2, proc.stderr
    line = len(own) + 1
    assert f"{s1 / 'predictions.jsonl'}:{line}: id: '{foreign[0]['id']}'" in proc.stderr
    assert "is not one of the cases of shard 1/2" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists()  # nothing written


def test_merge_leaves_out_a_torn_last_line_and_the_merged_run_resumes(shards: Path, tmp_path: Path) -> None:
    # a shard killed mid-write: its last line has no newline. Merged as it was, the merged journal was unreadable
    # by compare, leaderboard and resume
    s2 = _copy(shards, "s2", tmp_path)
    journal = s2 / "predictions.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    torn_id = json.loads(lines[-1])["id"]
    journal.write_bytes(b"".join(lines[:-1]) + lines[-1][:40])
    (s2 / "metrics.json").unlink()  # killed: it never wrote its report
    out = tmp_path / "merged"
    proc = run_cli("merge", str(s2), str(shards / "s1"), "--out", str(out), "-q")  # named first or last alike
    assert proc.returncode == 0, proc.stderr
    assert f"warning: {journal}: its last line is cut short" in proc.stderr
    assert f"warning: {s2}: the shard has not finished" in proc.stderr
    assert journal.read_bytes().endswith(lines[-1][:40])  # the shard is left as it was
    merged = read_jsonl(out / "predictions.jsonl")
    assert torn_id not in {r["id"] for r in merged} and len(merged) == N - 1
    doc = json.loads((out / "metrics.json").read_text())
    right = sum(r["risk"] == r["expected"] for r in merged)  # counted by hand from the journals
    assert doc["complete"] is False and doc["metrics"]["n_not_run"] == 1
    assert doc["metrics"]["n_cases"] == N - 1 and doc["metrics"]["accuracy"] == pytest.approx(right / (N - 1))
    for args in (("leaderboard", str(out), "--include-incomplete"), ("compare", str(shards / "single"), str(out))):
        proc = run_cli(*args)
        assert proc.returncode in (0, 1) and "predictions.jsonl" not in proc.stderr, proc.stderr
    # the merged run resumes like any run: its one missing case runs, and it ends as the uninterrupted run did
    proc = run_cli("eval", "--resume", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    assert _figures(out) == _figures(shards / "single")
