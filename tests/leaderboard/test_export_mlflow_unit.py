"""``fcb export --to mlflow`` (harness/leaderboard/export_mlflow.py) at unit level: the metrics, params and tags it
builds from a metrics document written here by hand, and what it sends to MLflow, held against a recording client.

MLflow itself is not imported: its import takes 6 to 12 s on a shared machine, and this file runs hundreds of times
under mutation testing. A stand-in ``mlflow`` package (its client, ``Metric``, ``Param``, ``MlflowException``) is
put in ``sys.modules`` for the tests of `export_mlflow` and `_client`; the real client against a file store is
tests/leaderboard/test_export_mlflow.py (end to end)."""

from __future__ import annotations

import hashlib
import json
import sys
import types
from collections import namedtuple
from pathlib import Path
from typing import Any

import pytest

from harness.errors import UsageError
from harness.leaderboard import export_mlflow as em
from harness.leaderboard.export_mlflow import flattened, mlflow_metrics, mlflow_params

BLOCK = {
    "n_cases": 10,
    "accuracy": 0.6,
    "macro_f1": 0.5,
    "weighted_kappa": None,
    "high_risk_recall": 0.75,
    "false_alarm_rate": 0.25,
    "error_rate": 0.1,
    "accuracy_ci95": [0.3, 0.8],
    "macro_f1_ci95": [0.2, 0.7],
    "per_class": {
        "low": {"precision": 0.5, "recall": 1.0, "f1": 2 / 3, "support": 2},
        "high": {"precision": None, "recall": 0, "f1": 0.0, "support": 3},
    },
}


def document(**metrics: Any) -> dict[str, Any]:
    return {
        "complete": True,
        "harness_version": "9.9",
        "detector": {"spec": "builtin:vote", "label": "voter"},
        "dataset": {"name": "cases.jsonl", "sha256": "ab" * 32, "cases": 10},
        "settings": {"seed": 3, "categories": ["a"], "engine": "local", "prompt": None},
        "metrics": {**BLOCK, "per_category": {}, **metrics},
    }


# ---- metrics -------------------------------------------------------------------------------------------------------


def test_the_headline_its_intervals_and_per_class_scores() -> None:
    got = mlflow_metrics(document())  # type: ignore[arg-type]
    assert got == {
        "n_cases": 10.0,
        "accuracy": 0.6,
        "macro_f1": 0.5,
        "high_risk_recall": 0.75,
        "false_alarm_rate": 0.25,
        "error_rate": 0.1,  # weighted_kappa: null, left out
        "accuracy_ci95_low": 0.3,
        "accuracy_ci95_high": 0.8,
        "macro_f1_ci95_low": 0.2,
        "macro_f1_ci95_high": 0.7,
        "precision_low": 0.5,
        "recall_low": 1.0,
        "f1_low": 2 / 3,  # support is no score
        "recall_high": 0.0,
        "f1_high": 0.0,  # precision null: left out; recall 0 (an int) kept as 0.0
    }
    assert all(type(v) is float for v in got.values())


def test_the_headline_on_real_cases_ends_real() -> None:
    real = {"n_cases": 4, "accuracy": 0.25, "accuracy_ci95": [0.0, 0.5], "per_class": {"low": {"f1": 1}}}
    got = mlflow_metrics(document(headline_real=real))  # type: ignore[arg-type]
    assert {k: v for k, v in got.items() if k.endswith("_real")} == {
        "n_cases_real": 4.0,
        "accuracy_real": 0.25,
        "accuracy_ci95_low_real": 0.0,
        "accuracy_ci95_high_real": 0.5,
        "f1_low_real": 1.0,
    }
    assert (got["accuracy"], got["n_cases"], got["f1_low"]) == (0.6, 10.0, 2 / 3)  # the whole set's, kept beside
    assert not any(k.endswith("_real") for k in mlflow_metrics(document(headline_real=None)))  # type: ignore[arg-type]


def test_an_interval_that_is_not_a_pair_is_left_out() -> None:
    got = mlflow_metrics(document(accuracy_ci95=[0.1, 0.2, 0.3], macro_f1_ci95=None))  # type: ignore[arg-type]
    assert not any("ci95" in k for k in got)
    one = mlflow_metrics(document(accuracy_ci95=[0.1]))  # type: ignore[arg-type]
    assert not any("ci95" in k for k in one if k.startswith("accuracy"))


def test_score_metrics_and_calibration() -> None:
    scores = {
        "n_scored": 8,
        "roc_auc": 0.9,
        "average_precision": None,
        "brier": 0.125,
        "flag": True,
        "calibration": {"bins": 15, "ece": 0.05, "ece_ci95": [0.01, 0.09], "diagram": [{"count": 1}]},
    }
    got = mlflow_metrics(document(scores=scores))  # type: ignore[arg-type]
    # n_scored is a count, not a score; a bool is no number; ece keeps its bare name, bins is named ece_bins
    assert {k: got[k] for k in ("roc_auc", "brier", "ece", "ece_bins", "ece_ci95_low", "ece_ci95_high")} == {
        "roc_auc": 0.9,
        "brier": 0.125,
        "ece": 0.05,
        "ece_bins": 15.0,
        "ece_ci95_low": 0.01,
        "ece_ci95_high": 0.09,
    }
    assert "n_scored" not in got and "average_precision" not in got and "flag" not in got
    assert not any("diagram" in k or k.startswith("calibration") for k in got)
    assert em.CALIBRATION_NAMES == {"calibration.bins": "ece_bins"}


def test_per_category_latency_and_the_nested_blocks() -> None:
    got = mlflow_metrics(
        document(  # type: ignore[arg-type]
            per_category={"echo": {"accuracy": 0.5, "n": 2}, "odd": {"accuracy": None}},
            operational={"latency_s": {"p50": 0.25, "p95": 1, "p99": None}},
            epochs={"self_agreement": {"all_agree": 0.75, "n": 4}},
            probes={"order": {"flip_rate": 0.125, "flip_rate_ci95": [0.0, 0.25]}},
            consensus={"balanced_accuracy": 0.5, "why": "text"},
        )
    )
    assert got["per_category.echo.accuracy"] == 0.5 and "per_category.odd.accuracy" not in got
    assert "per_category.echo.n" not in got
    assert (got["latency_p50_s"], got["latency_p95_s"]) == (0.25, 1.0) and "latency_p99_s" not in got
    assert got["epochs.self_agreement.all_agree"] == 0.75 and got["epochs.self_agreement.n"] == 4.0
    assert got["probes.order.flip_rate"] == 0.125
    assert (got["probes.order.flip_rate_ci95_low"], got["probes.order.flip_rate_ci95_high"]) == (0.0, 0.25)
    assert got["consensus.balanced_accuracy"] == 0.5 and "consensus.why" not in got
    assert not any(k.startswith("epochs") for k in mlflow_metrics(document(epochs=[1, 2])))  # type: ignore[arg-type]


def test_flattened_takes_numbers_and_pairs_of_numbers() -> None:
    block = {
        "a": 1,
        "b": {"c": 0.5, "d_ci95": [1, 2]},
        "e_ci95": [1, None],
        "f": [1, 2],
        "g": True,
        "h_ci95": [1],
        "i": None,
        "j_ci95": [True, 1],
    }
    assert flattened(block, "p") == {"p.a": 1.0, "p.b.c": 0.5, "p.b.d_ci95_low": 1.0, "p.b.d_ci95_high": 2.0}
    assert flattened({}, "p") == {}


# ---- params --------------------------------------------------------------------------------------------------------


def test_params_name_the_run_and_its_settings_as_text() -> None:
    assert mlflow_params(document()) == {  # type: ignore[arg-type]
        "detector": "voter",
        "detector_spec": "builtin:vote",
        "dataset": "cases.jsonl",
        "dataset_sha256": "ab" * 32,
        "dataset_cases": "10",
        "complete": "true",
        "harness_version": "9.9",
        "settings.seed": "3",
        "settings.categories": '["a"]',
        "settings.engine": "local",
        "settings.prompt": "null",
    }
    unnamed = document()
    unnamed["detector"]["label"] = None
    assert mlflow_params(unnamed)["detector"] == "builtin:vote"  # type: ignore[arg-type]


# ---- what reaches MLflow -------------------------------------------------------------------------------------------

Metric = namedtuple("Metric", "key value timestamp step")
Param = namedtuple("Param", "key value")


class MlflowException(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class Client:
    """Records every call; ``found``: the runs its search returns."""

    def __init__(self, uri: str | None = None, found: list[Any] | None = None, fail: str = "") -> None:
        self.uri, self.found, self.fail = uri, found or [], fail
        self.calls: list[tuple[Any, ...]] = []
        self.experiments: dict[str, str] = {"have": "7"}

    def get_experiment_by_name(self, name: str) -> Any:
        if self.fail == "store":
            raise MlflowException("store refused")
        got = self.experiments.get(name)
        return types.SimpleNamespace(experiment_id=got) if got else None

    def create_experiment(self, name: str) -> str:
        self.calls.append(("create_experiment", name))
        return "new-exp"

    def search_runs(self, ids: list[str], query: str) -> list[Any]:
        self.calls.append(("search_runs", ids, query))
        return self.found

    def create_run(self, experiment_id: str, run_name: str, tags: dict[str, str]) -> Any:
        self.calls.append(("create_run", experiment_id, run_name, tags))
        return types.SimpleNamespace(info=types.SimpleNamespace(run_id="run-1", start_time=1234))

    def log_batch(self, run_id: str, metrics: list[Any], params: list[Any]) -> None:
        if self.fail == "log":
            raise RuntimeError("log refused")
        self.calls.append(("log_batch", run_id, metrics, params))

    def set_tag(self, run_id: str, key: str, value: str) -> None:
        self.calls.append(("set_tag", run_id, key, value))

    def log_artifact(self, run_id: str, path: str) -> None:
        self.calls.append(("log_artifact", run_id, Path(path).name))

    def set_terminated(self, run_id: str, status: str) -> None:
        self.calls.append(("set_terminated", run_id, status))


@pytest.fixture
def fake_mlflow(monkeypatch: pytest.MonkeyPatch) -> list[Client]:
    """A stand-in mlflow package in sys.modules; the clients made through it, in order."""
    made: list[Client] = []

    def client(uri: str | None = None) -> Client:
        made.append(Client(uri))
        return made[-1]

    modules = {
        "mlflow": types.ModuleType("mlflow"),
        "mlflow.tracking": types.SimpleNamespace(MlflowClient=client),
        "mlflow.entities": types.SimpleNamespace(Metric=Metric, Param=Param),
        "mlflow.exceptions": types.SimpleNamespace(MlflowException=MlflowException),
    }
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return made


def a_run(tmp_path: Path, doc: dict[str, Any], monkeypatch: pytest.MonkeyPatch, complete: bool = True) -> Path:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "metrics.json").write_text(json.dumps(doc))
    (folder / "report.md").write_text("# report")
    (folder / "run.json").write_text("{}")
    run = types.SimpleNamespace(doc=doc, label="voter", complete=complete)
    read: list[Any] = []
    monkeypatch.setattr(em, "read_run", lambda path: read.append(path) or run)
    run.read = read  # the paths read_run was given
    return folder


def test_a_run_is_logged_once_with_its_figures_params_tags_and_files(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = document()
    folder = a_run(tmp_path, doc, monkeypatch, complete=False)
    client = Client()
    uris: list[Any] = []
    monkeypatch.setattr(em, "_client", lambda uri: uris.append(uri) or client)
    assert em.export_mlflow(folder, "file:/x", "have") == ("run-1", "7", True)
    assert uris == ["file:/x"] and em.read_run(None).read[0] == folder  # the store given; the folder given
    digest = hashlib.sha256((folder / "metrics.json").read_bytes()).hexdigest()
    names = [c[0] for c in client.calls]
    assert names == [
        "search_runs",
        "create_run",
        "log_batch",
        "set_tag",
        "log_artifact",
        "log_artifact",
        "log_artifact",
        "set_terminated",
    ]
    assert client.calls[0] == (
        "search_runs",
        ["7"],
        f"tags.`fcb.metrics_sha256` = '{digest}' and attributes.status = 'FINISHED'",
    )
    tags = {"fcb.run_dir": str(folder.resolve()), "fcb.harness_version": em.__version__, "fcb.metrics_sha256": digest}
    assert client.calls[1] == ("create_run", "7", "voter", tags)
    _, run_id, metrics, params = client.calls[2]
    assert run_id == "run-1"
    assert {m.key: m.value for m in metrics} == mlflow_metrics(doc)  # type: ignore[arg-type]
    assert {(m.timestamp, m.step) for m in metrics} == {(1234, 0)}  # the run's start, step 0
    assert {p.key: p.value for p in params} == mlflow_params(doc)  # type: ignore[arg-type]
    assert client.calls[3] == ("set_tag", "run-1", "fcb.complete", "false")
    # the files there, in ARTIFACTS order (no report.html in this folder)
    assert client.calls[4:] == [
        ("log_artifact", "run-1", "report.md"),
        ("log_artifact", "run-1", "metrics.json"),
        ("log_artifact", "run-1", "run.json"),
        ("set_terminated", "run-1", "FINISHED"),
    ]
    assert em.ARTIFACTS == ("report.md", "report.html", "metrics.json", "run.json")


def test_metrics_json_is_logged_as_a_file_too(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = a_run(tmp_path, document(), monkeypatch)
    (folder / "report.html").write_text("<html>")
    client = Client()
    monkeypatch.setattr(em, "_client", lambda uri: client)
    em.export_mlflow(folder)
    assert [c[2] for c in client.calls if c[0] == "log_artifact"] == [
        "report.md",
        "report.html",
        "metrics.json",
        "run.json",
    ]
    assert ("set_tag", "run-1", "fcb.complete", "true") in client.calls


def test_a_new_experiment_is_created_and_the_default_is_fcb(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = a_run(tmp_path, document(), monkeypatch)
    client = Client()
    monkeypatch.setattr(em, "_client", lambda uri: client)
    assert em.export_mlflow(folder) == ("run-1", "new-exp", True)
    assert client.calls[0] == ("create_experiment", "fcb") and em.DEFAULT_EXPERIMENT == "fcb"


def test_figures_exported_already_are_not_logged_twice(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = a_run(tmp_path, document(), monkeypatch)
    earlier = types.SimpleNamespace(info=types.SimpleNamespace(run_id="old-run"))
    client = Client(found=[earlier, types.SimpleNamespace(info=types.SimpleNamespace(run_id="older"))])
    monkeypatch.setattr(em, "_client", lambda uri: client)
    assert em.export_mlflow(folder, None, "have") == ("old-run", "7", False)
    assert [c[0] for c in client.calls] == ["search_runs"]  # nothing created


def test_more_than_a_batch_of_metrics_goes_in_batches_of_100(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 150 categories with an accuracy each + the 15 figures of BLOCK = 165 metrics; 11 params: two batches,
    # metrics 0..99 and 100..164, params all in the first
    doc = document(per_category={f"c{i:03d}": {"accuracy": i / 150} for i in range(150)})
    folder = a_run(tmp_path, doc, monkeypatch)
    client = Client()
    monkeypatch.setattr(em, "_client", lambda uri: client)
    em.export_mlflow(folder, None, "have")
    batches = [(len(c[2]), len(c[3])) for c in client.calls if c[0] == "log_batch"]
    assert batches == [(100, 11), (65, 0)] and em.BATCH == 100
    sent = [m.key for c in client.calls if c[0] == "log_batch" for m in c[2]]
    assert sent == list(mlflow_metrics(doc))  # type: ignore[arg-type]  # each once, in order


def test_params_beyond_a_batch(tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch) -> None:
    # 7 params of the run + 200 settings = 207 params; 15 metrics: three batches, (15, 100), (0, 100), (0, 7)
    doc = document()
    doc["settings"] = {f"s{i:03d}": i for i in range(200)}
    folder = a_run(tmp_path, doc, monkeypatch)
    client = Client()
    monkeypatch.setattr(em, "_client", lambda uri: client)
    em.export_mlflow(folder, None, "have")
    assert [(len(c[2]), len(c[3])) for c in client.calls if c[0] == "log_batch"] == [(15, 100), (0, 100), (0, 7)]


def test_a_failure_while_logging_marks_the_mlflow_run_failed(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = a_run(tmp_path, document(), monkeypatch)
    client = Client(fail="log")
    monkeypatch.setattr(em, "_client", lambda uri: client)
    with pytest.raises(RuntimeError, match="log refused"):
        em.export_mlflow(folder, None, "have")
    assert client.calls[-1] == ("set_terminated", "run-1", "FAILED")
    assert ("set_terminated", "run-1", "FINISHED") not in client.calls


def test_a_store_mlflow_refuses_is_said_as_a_usage_error(
    tmp_path: Path, fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = a_run(tmp_path, document(), monkeypatch)
    monkeypatch.setattr(em, "_client", lambda uri: Client(fail="store"))
    with pytest.raises(UsageError) as info:
        em.export_mlflow(folder, "sqlite:///x.db")
    assert str(info.value) == "MLflow tracking store sqlite:///x.db: store refused"
    with pytest.raises(UsageError) as info:
        em.export_mlflow(folder)
    assert str(info.value) == "MLflow tracking store (default): store refused"


# ---- the client ----------------------------------------------------------------------------------------------------


def test_a_file_uri_is_consent_to_mlflows_file_store(
    fake_mlflow: list[Client], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    client = em._client("http://127.0.0.1:5000")
    assert client.uri == "http://127.0.0.1:5000" and "MLFLOW_ALLOW_FILE_STORE" not in em.os.environ
    assert em._client(None).uri is None and "MLFLOW_ALLOW_FILE_STORE" not in em.os.environ
    em._client("file:/tmp/mlruns")
    assert em.os.environ["MLFLOW_ALLOW_FILE_STORE"] == "true"
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "false")  # the user's own word stands
    em._client("file:/tmp/mlruns")
    assert em.os.environ["MLFLOW_ALLOW_FILE_STORE"] == "false"


def test_without_mlflow_the_user_is_told_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mlflow", None)
    monkeypatch.setitem(sys.modules, "mlflow.tracking", None)
    with pytest.raises(UsageError) as info:
        em.export_mlflow("/nowhere")  # said before anything is read
    assert str(info.value) == "--to mlflow needs MLflow, which is not installed: pip install 'fcb-harness[mlflow]'"


def test_blocks_that_are_absent_or_null_add_nothing() -> None:
    base = set(mlflow_metrics(document()))  # type: ignore[arg-type]
    for extra in (
        {"scores": None},
        {"scores": {"roc_auc": 0.5, "calibration": None}},
        {"operational": None},
        {"operational": {"latency_s": None}},
        {"per_class": None},
        {"headline_real": {"n_cases": 2, "per_class": None}},
    ):
        got = set(mlflow_metrics(document(**extra)))  # type: ignore[arg-type]
        added = got - base
        assert added <= {"roc_auc", "n_cases_real"}, extra
        if "per_class" in extra:
            assert not any(k.startswith(("precision_", "recall_", "f1_")) for k in got)


def test_the_operating_points_and_threshold_are_logged_without_their_curves() -> None:
    block = {"n_cases": 10, "policies": {"high": {"escalation_rate": 0.4, "escalation_rate_ci95": [0.2, 0.6],
                                                  "false_consensus_caught": None}},
             "risk_coverage": {"by": "risk_score", "aurc": 0.3, "curve": [[0.1, 0.5], [1.0, 0.4]]},
             "by_score": [{"threshold": 0.9, "escalation_rate": 0.1}]}  # fmt: skip
    got = mlflow_metrics(
        document(operating_points=block, threshold={"miss_rate": 0.05, "within": True, "promise": "text"})
    )  # type: ignore[arg-type]
    assert got["operating_points.policies.high.escalation_rate"] == 0.4
    assert got["operating_points.policies.high.escalation_rate_ci95_low"] == 0.2
    assert got["operating_points.risk_coverage.aurc"] == 0.3 and got["operating_points.n_cases"] == 10
    assert "operating_points.policies.high.false_consensus_caught" not in got
    assert not [k for k in got if "curve" in k or "by_score" in k]
    assert got["threshold.miss_rate"] == 0.05 and "threshold.within" not in got
