"""``fcb export --to parquet`` on a real run: the CLI against a detector server on 127.0.0.1 that fails on some
cases, exported by the CLI, read back with pandas and compared field by field with the journal and the cases file;
the figures counted again from the file."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from casegen import write_cases
from conftest import Server, read_jsonl, run_cli, run_fcb_process
from known_detectors import KNOWN

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
pd = pytest.importorskip("pandas")
pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow (the parquet extra) is not installed")


def plain(value: Any) -> Any:
    """A value as pandas gives it back, with its missing markers (None, NaN, NA) as None."""
    return None if value is None or (not isinstance(value, list | dict) and pd.isna(value)) else value


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, detector_server_module: Callable[..., Server]) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("export")
    cases = write_cases(tmp / "cases.jsonl", 40, origins=True)
    server = detector_server_module("--fault-rate", "0.25", "--faults", "badrisk", "--fault-every-attempt")
    args = ("-d", server.url, "--name", "served", "--out", str(tmp / "run"), "--bootstrap", "0", "-q")
    proc = run_cli("eval", str(cases), *args, "--no-preflight", "--max-consecutive-errors", "0")
    assert proc.returncode == 0, proc.stderr
    return {"cases": cases, "run": tmp / "run", "tmp": tmp}


@pytest.fixture(scope="module")
def detector_server_module() -> Any:
    """A module-scoped detector server starter (the conftest fixture is per test)."""
    import subprocess
    import sys

    from conftest import SERVER

    started: list[subprocess.Popen] = []

    def start(*args: str) -> Server:
        proc = subprocess.Popen([sys.executable, str(SERVER), *args], stdout=subprocess.PIPE, text=True)
        started.append(proc)
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("PORT "), line
        return Server(proc, int(line.split()[1]))

    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_parquet_file_reads_back_as_the_journal_and_the_cases(run: dict[str, Path]) -> None:
    out = run["tmp"] / "out" / "served.parquet"
    (run["tmp"] / "out").mkdir()
    proc = run_cli("export", str(run["run"]), "--to", "parquet", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    journal = {r["id"]: r for r in read_jsonl(run["run"] / "predictions.jsonl")}
    cases = {c["id"]: c for c in read_jsonl(run["cases"])}
    assert f"wrote {out} ({len(journal)} rows)" in proc.stderr

    frame = pd.read_parquet(out)
    assert list(frame["id"]) == sorted(journal) == sorted(cases)  # one row per case, in id order
    for row in frame.to_dict("records"):
        rec, case = journal[row["id"]], cases[row["id"]]
        assert plain(row["predicted_risk"]) == rec["risk"]
        assert plain(row["risk_score"]) == rec["score"]
        assert plain(row["error_kind"]) == (rec["error"] or {}).get("kind")
        assert plain(row["error_message"]) == (rec["error"] or {}).get("message")
        reply = plain(row["response_json"])
        assert (None if reply is None else json.loads(reply)) == rec.get("response")  # none for an error
        assert (row["attempts"], row["latency_s"], bool(row["cached"])) == (rec["attempts"], rec["latency_s"], False)
        assert (row["content_hash"], row["origin"], row["detector"]) == (rec["hash"], rec["origin"], "served")
        for field in ("category", "question", "ground_truth", "rationale", "expected_risk"):
            assert row[field] == case[field], field
        assert plain(row["majority_correct"]) == case["majority_correct"]
        assert row["n_answers"] == len(case["answers"])
        assert json.loads(row["answers_json"]) == case["answers"]
        assert json.loads(row["tags_json"]) == case["tags"] and json.loads(row["source_json"]) == case["source"]
        evidence = plain(row["evidence_json"])
        assert (None if evidence is None else json.loads(evidence)) == case.get("evidence")
        assert bool(row["correct"]) == (rec["risk"] == case["expected_risk"])

    # the figures, counted again: from the journal lines, and against the run's own metrics.json
    errors = sum(r["error"] is not None for r in journal.values())
    assert 0 < errors < len(journal)  # the server failed on some cases: both kinds of row are exported
    assert int(frame["error_kind"].notna().sum()) == errors
    assert int(frame["evidence_json"].notna().sum()) == sum("evidence" in c for c in cases.values()) == 10
    metrics = json.loads((run["run"] / "metrics.json").read_text())["metrics"]
    assert frame["correct"].mean() == pytest.approx(metrics["accuracy"])
    assert int(frame["majority_correct"].isna().sum()) == sum(c["majority_correct"] is None for c in cases.values())

    meta = json.loads(pq.read_schema(out).metadata[b"fcb"])
    doc = json.loads((run["run"] / "metrics.json").read_text())
    assert meta["dataset"]["sha256"] == doc["dataset"]["sha256"] and meta["detector"]["label"] == "served"
    assert meta["complete"] is True and "answers_json" in meta["json_columns"]


def test_the_default_path_and_a_moved_or_changed_cases_file(run: dict[str, Path]) -> None:
    copy = run["tmp"] / "copy"
    shutil.copytree(run["run"], copy)
    proc = run_cli("export", str(copy), "--to", "parquet")
    assert proc.returncode == 0, proc.stderr
    assert len(pd.read_parquet(copy / "predictions.parquet")) == 40

    moved = run["tmp"] / "moved.jsonl"
    changed = run["tmp"] / "changed.jsonl"
    shutil.copy(run["cases"], moved)
    changed.write_text(run["cases"].read_text().replace("synthetic test case", "edited"))
    refused = run_cli("export", str(copy), "--to", "parquet", "--cases", str(changed))
    assert refused.returncode == 2
    assert "is not the cases file this run read" in refused.stderr and "--cases PATH" in refused.stderr
    again = run_cli("export", str(copy), "--to", "parquet", "--cases", str(moved), "--out", str(copy / "b.parquet"))
    assert again.returncode == 0, again.stderr
    assert pd.read_parquet(copy / "b.parquet").equals(pd.read_parquet(copy / "predictions.parquet"))


def test_without_pyarrow_the_export_says_how_to_install_it(run: dict[str, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "block" / "pyarrow"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('pyarrow is blocked in this test')\n")
    proc = run_fcb_process("export", str(run["run"]), "--to", "parquet", "--out", str(tmp_path / "x.parquet"),
                           env={"PYTHONPATH": str(tmp_path / "block")})  # fmt: skip
    assert proc.returncode == 2 and not (tmp_path / "x.parquet").exists()
    assert "needs pyarrow" in proc.stderr and "pip install 'fcb-harness[parquet]'" in proc.stderr


def test_without_mlflow_the_export_says_how_to_install_it(run: dict[str, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "block" / "mlflow"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('mlflow is blocked in this test')\n")
    proc = run_fcb_process("export", str(run["run"]), "--to", "mlflow", "--tracking-uri", f"file:{tmp_path / 'store'}",
                           env={"PYTHONPATH": str(tmp_path / "block")})  # fmt: skip
    assert proc.returncode == 2 and not (tmp_path / "store").exists()
    assert "needs MLflow" in proc.stderr and "pip install 'fcb-harness[mlflow]'" in proc.stderr


def test_a_run_with_epochs_and_probes_exports_by_case_or_by_item(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    run_dir = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", f"{KNOWN}:fresh", "--out", str(run_dir), "--epochs", "3",
                   "--probe", "order,names", "--bootstrap", "0", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    journal = read_jsonl(run_dir / "predictions.jsonl")
    asked = Counter(r.get("variant") for r in journal)  # order only where the answers' texts allow another order
    assert asked[None] == asked["names"] == 30 * 3 and 0 < asked["order"] <= 30 * 3

    proc = run_cli("export", str(run_dir), "--to", "parquet", "--items", "--out", str(tmp_path / "items.parquet"))
    assert proc.returncode == 0, proc.stderr
    items = pd.read_parquet(tmp_path / "items.parquet")
    assert len(items) == len(journal)  # every answer the journal holds, once
    by_key = {(r["id"], r["epoch"], r.get("variant")): r for r in journal}
    for row in items.to_dict("records"):
        rec = by_key.pop((row["id"], int(row["epoch"]), plain(row["variant"])))
        assert (row["predicted_risk"], row["risk_score"]) == (rec["risk"], rec["score"])
        permutation = plain(row["permutation_json"])
        assert (None if permutation is None else json.loads(permutation)) == rec.get("permutation")
    assert not by_key
    keys = [(row["id"], row["epoch"], plain(row["variant"]) or "") for row in items.to_dict("records")]
    assert keys == sorted(keys)  # by case, then epoch, the request as it is before its variants

    proc = run_cli("export", str(run_dir), "--to", "parquet", "--out", str(tmp_path / "cases.parquet"))
    assert proc.returncode == 0, proc.stderr
    frame = pd.read_parquet(tmp_path / "cases.parquet")
    assert len(frame) == 30 and frame["epoch"].isna().all() and frame["variant"].isna().all()
    ties = 0
    for row in frame.to_dict("records"):  # the reduced verdict: the most frequent, a tie to the earliest epoch's
        asked = sorted((r for r in journal if r["id"] == row["id"] and "variant" not in r), key=lambda r: r["epoch"])
        verdicts = [r["risk"] for r in asked]
        top = max(Counter(verdicts).values())
        ties += top == 1
        assert row["predicted_risk"] == next(v for v in verdicts if verdicts.count(v) == top)
        assert row["risk_score"] == pytest.approx(sum(r["score"] for r in asked) / 3)
    assert 0 < ties < 30  # both rules were exercised
    metrics = json.loads((run_dir / "metrics.json").read_text())["metrics"]
    assert frame["correct"].mean() == pytest.approx(metrics["accuracy"])

    refused = run_cli("export", str(run_dir), "--to", "mlflow", "--items")
    assert refused.returncode == 2 and "--items" in refused.stderr
