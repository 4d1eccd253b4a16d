"""``fcb export --to mlflow``: a real run (the CLI, a built-in detector on the embedded set) logged by the CLI into a
local MLflow file store, read back with MLflow's own client, and each figure compared with one counted here from
the run's journal. Skips, saying so, where MLflow (the mlflow extra) is not installed; fails so under CI."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli
from known_detectors import KNOWN

pytestmark = [pytest.mark.slow, pytest.mark.e2e]
try:
    import mlflow.tracking as mlflow_tracking
except ImportError:  # a user's clone without the extra; CI installs dev, which holds it
    if os.environ.get("CI"):
        raise
    pytest.skip("MLflow (pip install 'fcb-harness[mlflow]') is absent", allow_module_level=True)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mlflow-run") / "run"
    proc = run_cli("eval", "-d", "builtin:heuristic", "--name", "heur", "--out", str(out), "--bootstrap", "100", "-q")
    assert proc.returncode == 0, proc.stderr
    return out


def test_the_mlflow_run_reads_back_with_the_runs_figures(
    run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)  # a file: URI given is consent enough for fcb
    store = f"file:{tmp_path / 'mlruns'}"
    proc = run_cli("export", str(run_dir), "--to", "mlflow", "--tracking-uri", store, "--experiment", "items-test")
    assert proc.returncode == 0, proc.stderr
    run_id = proc.stdout.strip()
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow's own client, reading the store back, asks too
    client = mlflow_tracking.MlflowClient(store)
    logged = client.get_run(run_id)
    assert logged.info.status == "FINISHED" and logged.info.run_name == "heur"
    assert client.get_experiment(logged.info.experiment_id).name == "items-test"

    doc = json.loads((run_dir / "metrics.json").read_text())
    params = logged.data.params
    assert params["detector"] == "heur" and params["detector_spec"] == "builtin:heuristic"
    assert params["dataset_sha256"] == doc["dataset"]["sha256"] and params["dataset_cases"] == "240"
    assert params["settings.bootstrap_resamples"] == "100" and params["complete"] == "true"

    # the figures, counted again from the journal: accuracy overall and per category, cases
    journal = read_jsonl(run_dir / "predictions.jsonl")
    right = [r["risk"] == r["expected"] for r in journal]
    metrics = logged.data.metrics
    assert metrics["n_cases"] == len(journal) == 240
    assert metrics["accuracy"] == pytest.approx(sum(right) / len(right))
    totals, hits = (
        Counter(r["category"] for r in journal),
        Counter(r["category"] for r in journal if r["risk"] == r["expected"]),
    )
    assert {k.split(".")[1]: v for k, v in metrics.items() if k.startswith("per_category.")} == pytest.approx(
        {cat: hits[cat] / n for cat, n in totals.items()}
    )
    high = [r for r in journal if r["expected"] == "high"]
    assert metrics["high_risk_recall"] == pytest.approx(sum(r["risk"] == "high" for r in high) / len(high))
    assert metrics["macro_f1"] == pytest.approx(doc["metrics"]["macro_f1"])
    assert metrics["roc_auc"] == pytest.approx(doc["metrics"]["scores"]["roc_auc"])
    consensus = doc["metrics"]["consensus"]  # its figures are checked against the journal in tests/test_consensus.py
    assert metrics["consensus.n_wrong"] == consensus["n_wrong"] > 0
    assert metrics["consensus.balanced_accuracy"] == pytest.approx(consensus["balanced_accuracy"])
    assert (metrics["macro_f1_ci95_low"], metrics["macro_f1_ci95_high"]) == pytest.approx(
        doc["metrics"]["macro_f1_ci95"]
    )
    assert not any(k.endswith("_real") for k in metrics)  # the embedded set has no origin tags: no such figures

    artifacts = {a.path for a in client.list_artifacts(run_id)}
    assert artifacts == {"report.md", "report.html", "metrics.json", "run.json"}
    local = Path(client.download_artifacts(run_id, "report.md", str(tmp_path / "down")))
    assert local.read_bytes() == (run_dir / "report.md").read_bytes()

    # issue 45, item 16: a second export of the same run made a second MLflow run of it; it now names the first
    again = run_cli("export", str(run_dir), "--to", "mlflow", "--tracking-uri", store, "--experiment", "items-test")
    assert again.returncode == 0 and "already exported (the same metrics.json)" in again.stderr, again.stderr
    assert f"browse it with: mlflow ui --backend-store-uri {store} (the whole mlflow package" in again.stderr
    assert again.stdout.strip() == run_id
    runs = client.search_runs([logged.info.experiment_id])
    assert [r.info.run_id for r in runs] == [run_id]  # the experiment reused, the run logged once


def test_a_broken_run_reaches_no_mlflow_store(run_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("metrics.json", "predictions.jsonl", "run.json", "scope.json"):
        (broken / name).write_bytes((run_dir / name).read_bytes())
    doc = json.loads((broken / "metrics.json").read_text())
    doc["metrics"]["accuracy"] = 0.99  # a figure its journal does not give
    (broken / "metrics.json").write_text(json.dumps(doc))
    store = tmp_path / "mlruns"
    proc = run_cli("export", str(broken), "--to", "mlflow", "--tracking-uri", f"file:{store}")
    assert proc.returncode == 2 and "accuracy" in proc.stderr
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = mlflow_tracking.MlflowClient(f"file:{store}")
    found = client.get_experiment_by_name("fcb")
    assert found is None or client.search_runs([found.experiment_id]) == []


def test_repeats_probes_and_calibration_reach_mlflow_as_the_journal_gives_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_dir = tmp_path / "run"
    proc = run_cli("eval", "-d", f"{KNOWN}:swayed", "--out", str(run_dir), "--epochs", "3",
                   "--probe", "order,names", "--bootstrap", "100", "-q")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    store = f"file:{tmp_path / 'mlruns'}"
    proc = run_cli("export", str(run_dir), "--to", "mlflow", "--tracking-uri", store)
    assert proc.returncode == 0, proc.stderr
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    metrics = mlflow_tracking.MlflowClient(store).get_run(proc.stdout.strip()).data.metrics

    # counted here from the journal: one record per case, epoch and variant (none for the request as it is)
    journal = read_jsonl(run_dir / "predictions.jsonl")
    plain = {(r["id"], r["epoch"]): r for r in journal if "variant" not in r}
    cases = sorted({case_id for case_id, _ in plain})
    verdicts = {c: [plain[c, e]["risk"] for e in (1, 2, 3)] for c in cases}
    all_agree = sum(len(set(v)) == 1 for v in verdicts.values()) / len(cases)
    assert 0 < all_agree < 1
    assert metrics["epochs.n"] == 3 and metrics["epochs.self_agreement.all_agree"] == pytest.approx(all_agree)
    for probe in ("order", "names"):
        pairs = [(plain[r["id"], r["epoch"]]["risk"], r["risk"]) for r in journal if r.get("variant") == probe]
        rate = sum(a != b for a, b in pairs) / len(pairs)
        assert metrics[f"probes.{probe}.n"] == len(pairs)
        assert metrics[f"probes.{probe}.flip_rate"] == pytest.approx(rate)
        assert metrics[f"probes.{probe}.ci95_low"] <= rate <= metrics[f"probes.{probe}.ci95_high"]
    assert metrics["probes.order.flip_rate"] > 0 and metrics["probes.names.flip_rate"] > 0  # noise flips names too

    # ECE, high against the rest, each case's score the mean of its epochs', 15 bins as calibration_curve cuts them
    import numpy as np

    scores = np.array([np.mean([plain[c, e]["score"] for e in (1, 2, 3)]) for c in cases])
    high = np.array([plain[c, 1]["expected"] == "high" for c in cases], dtype=float)
    bins = np.searchsorted(np.linspace(0, 1, 16)[1:-1], scores)
    ece = sum(abs(high[bins == b].sum() - scores[bins == b].sum()) for b in range(15)) / len(cases)
    assert metrics["ece_bins"] == 15 and metrics["ece"] == pytest.approx(ece)
    assert metrics["ece_ci95_low"] <= metrics["ece"] <= metrics["ece_ci95_high"]
