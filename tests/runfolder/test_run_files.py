"""Run folders read back (issue 15, item 14): ``fcb compare`` counts only the journal lines the run itself
counted, and a hand-edited journal line or ``run.json`` field is an error naming the file, the line and the field,
never a traceback and never silently taken."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 40


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    cases = write_cases(tmp_path / "cases.jsonl", N)
    base = tmp_path / "base"
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(base), "-q", "--bootstrap", "100")
    assert proc.returncode == 0, proc.stderr
    twin = tmp_path / "twin"
    shutil.copytree(base, twin)
    return base, twin


def _lines(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "predictions.jsonl").read_text().splitlines()]


def _append(run: Path, records: list[dict]) -> None:
    with open(run / "predictions.jsonl", "a") as f:
        f.writelines(json.dumps(r) + "\n" for r in records)


def test_compare_counts_only_the_journal_lines_the_run_counts(runs: tuple[Path, Path]) -> None:
    base, twin = runs
    first = _lines(twin)[0]
    foreign = [dict(first, id=f"FOREIGN-{i:04d}", risk="low", error=None) for i in range(200)]  # not in the file
    stale = [dict(r, hash="0" * 16, risk="low") for r in _lines(twin)]  # an older content of every case
    _append(twin, foreign + stale)
    proc = run_cli("compare", str(base), str(twin), "--format", "json", "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    cmp = json.loads(proc.stdout)
    assert cmp["dataset"]["cases"] == N  # not N + 200
    assert all(m["delta"] == 0 for m in cmp["metrics"].values() if m["delta"] is not None)
    assert cmp["flipped"] == {"right_to_wrong": [], "wrong_to_right": []} and not cmp["regression"]


BAD_LINES = [  # (field set on journal line 3, value, the field the error names)
    ("risk", "critical", "risk"),
    ("score", 7, "score"),
    ("attempts", "many", "attempts"),
    ("latency_s", -1, "latency_s"),
    ("expected", "maybe", "expected"),
    ("id", 12, "id"),
    ("error", {"kind": "gremlins", "message": "x"}, "error.kind"),
]


@pytest.mark.parametrize(("key", "value", "field"), BAD_LINES)
def test_a_hand_edited_journal_field_names_file_line_and_field(
    runs: tuple[Path, Path], key: str, value: object, field: str
) -> None:
    base, twin = runs
    records = _lines(twin)
    records[2][key] = value
    if key == "error":
        records[2]["risk"] = None
    (twin / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    for command in (["compare", str(base), str(twin)], ["eval", "--resume", str(twin), "-q"]):
        proc = run_cli(*command)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert f"{twin / 'predictions.jsonl'}:3: {field}: " in proc.stderr, proc.stderr


BAD_MANIFESTS = [  # (path in run.json, value, the field the error names)
    (("settings", "concurrency"), -3, "settings.concurrency"),
    (("settings", "timeout"), "fast", "settings.timeout"),
    (("settings", "retries"), 1.5, "settings.retries"),
    (("settings", "seed"), None, "settings.seed"),
    (("identity", "limit"), "ten", "identity.limit"),
    (("identity", "shard"), "0/4", "identity.shard"),
    (("identity", "strict"), "no", "identity.strict"),
]


@pytest.mark.parametrize(("where", "value", "field"), BAD_MANIFESTS)
def test_a_hand_edited_run_json_field_names_file_and_field(
    runs: tuple[Path, Path], where: tuple[str, str], value: object, field: str
) -> None:
    _, twin = runs
    manifest = json.loads((twin / "run.json").read_text())
    manifest[where[0]][where[1]] = value
    (twin / "run.json").write_text(json.dumps(manifest, indent=2))
    proc = run_cli("eval", "--resume", str(twin), "-q")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{twin / 'run.json'}: {field}: " in proc.stderr, proc.stderr
