"""A finished run logged as an MLflow run: its identity and settings as params, its figures as metrics, its report
files as artifacts. MLflow is an optional dependency (the ``mlflow`` extra: ``mlflow-skinny``, the tracking client),
imported here on use only.

What is logged is read from the run folder through `harness.leaderboard.runs.read_run`, so a run whose
``metrics.json`` states a figure its journal does not give is refused before anything reaches MLflow. A figure that
is undefined (null in ``metrics.json``) is not logged: MLflow has no null.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson

from harness._version import __version__
from harness.documents import MetricsDocument
from harness.errors import UsageError
from harness.leaderboard.runs import read_run
from harness.runfolder.names import MANIFEST, METRICS, REPORT, REPORT_HTML

HEADLINE = ("n_cases", "accuracy", "macro_f1", "weighted_kappa", "high_risk_recall", "false_alarm_rate", "error_rate")
ARTIFACTS = (REPORT, REPORT_HTML, METRICS, MANIFEST)
"""The run folder's files logged as artifacts (the journal, the run's largest file, stays in the folder)."""
CALIBRATION_NAMES = {"calibration.bins": "ece_bins"}
"""A calibration figure whose bare name would not say what it is."""
DEFAULT_EXPERIMENT = "fcb"
BATCH = 100
DIGEST_TAG = "fcb.metrics_sha256"  # the run's figures: exported once into an experiment


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _headline(block: Mapping[str, Any], suffix: str) -> dict[str, float]:
    """A headline block's figures (``metrics`` or ``metrics.headline_real``), each name ending ``suffix``."""
    out: dict[str, Any] = {f"{name}{suffix}": block.get(name) for name in HEADLINE}
    for name in ("accuracy", "macro_f1"):
        interval = block.get(f"{name}_ci95")
        if isinstance(interval, list) and len(interval) == 2:
            out[f"{name}_ci95_low{suffix}"], out[f"{name}_ci95_high{suffix}"] = interval
    for risk, scores in (block.get("per_class") or {}).items():
        for name in ("precision", "recall", "f1"):
            out[f"{name}_{risk}{suffix}"] = scores.get(name)
    return {k: float(v) for k, v in out.items() if _number(v)}


def flattened(block: Mapping[str, Any], prefix: str) -> dict[str, float]:
    """Every number in a nested block of metrics.json under its dotted path (``probes.order.flip_rate``), an
    interval ``NAME.ci95: [low, high]`` as ``NAME.ci95_low`` and ``NAME.ci95_high``; lists of another kind (a
    reliability diagram's bins) and undefined figures are left out."""
    out: dict[str, float] = {}
    for key, value in block.items():
        name = f"{prefix}.{key}"
        if isinstance(value, Mapping):
            out |= flattened(value, name)
        elif _number(value):
            out[name] = float(value)
        elif key.endswith("ci95") and isinstance(value, list) and len(value) == 2 and all(map(_number, value)):
            out[f"{name}_low"], out[f"{name}_high"] = float(value[0]), float(value[1])
    return out


def mlflow_metrics(doc: MetricsDocument) -> dict[str, float]:
    """The figures of a metrics document as MLflow metrics: the headline (and ``NAME_real`` on the natural and
    assembled cases), per-class scores, the score metrics with the expected calibration error (``ece``,
    ``ece_ci95_low``...), accuracy per category (``per_category.CATEGORY.accuracy``; not ``accuracy/CATEGORY``, which
    MLflow's file store cannot hold beside ``accuracy``), latency, and a run's repeats, probes, consensus, operating
    points and threshold figures under their metrics.json paths (``epochs.self_agreement.all_agree``,
    ``probes.order.flip_rate``, ``consensus.balanced_accuracy``, ``operating_points.policies.high.escalation_rate``,
    ``threshold.miss_rate``...; curves are left out). Undefined figures are left out."""
    metrics: Mapping[str, Any] = doc["metrics"]
    out = _headline(metrics, "")
    if isinstance(real := metrics.get("headline_real"), dict):
        out |= _headline(real, "_real")
    for name, value in (metrics.get("scores") or {}).items():
        if name != "n_scored" and _number(value):
            out[name] = float(value)
    calibration = flattened((metrics.get("scores") or {}).get("calibration") or {}, "calibration")
    out |= {CALIBRATION_NAMES.get(name, name.removeprefix("calibration.")): v for name, v in calibration.items()}
    for block in ("epochs", "probes", "consensus", "operating_points", "threshold"):
        if isinstance(metrics.get(block), Mapping):
            out |= flattened(metrics[block], block)
    for category, block in metrics["per_category"].items():
        if _number(block.get("accuracy")):
            out[f"per_category.{category}.accuracy"] = float(block["accuracy"])  # as in metrics.json
    for quantile, value in ((metrics.get("operational") or {}).get("latency_s") or {}).items():
        if _number(value):
            out[f"latency_{quantile}_s"] = float(value)
    return out


def mlflow_params(doc: MetricsDocument) -> dict[str, str]:
    """What identifies the run and its settings, as MLflow params (text; other values as JSON)."""
    detector, dataset = doc["detector"], doc["dataset"]
    params: dict[str, Any] = {
        "detector": detector.get("label") or detector["spec"],
        "detector_spec": detector["spec"],
        "dataset": dataset["name"],
        "dataset_sha256": dataset["sha256"],
        "dataset_cases": dataset["cases"],
        "complete": doc["complete"],
        "harness_version": doc["harness_version"],
        **{f"settings.{key}": value for key, value in doc["settings"].items()},
    }
    return {key: value if isinstance(value, str) else orjson.dumps(value).decode() for key, value in params.items()}


def _client(tracking_uri: str | None) -> Any:
    try:
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise UsageError(
            "--to mlflow needs MLflow, which is not installed: pip install 'fcb-harness[mlflow]'"
        ) from None
    if tracking_uri and urlsplit(tracking_uri).scheme == "file":
        # MLflow 3 keeps its file store in maintenance mode and refuses it unless told otherwise: a file: URI given
        # on purpose is that consent
        os.environ["MLFLOW_ALLOW_FILE_STORE"] = os.environ.get("MLFLOW_ALLOW_FILE_STORE") or "true"
    return MlflowClient(tracking_uri)


def export_mlflow(
    run_dir: str | Path, tracking_uri: str | None = None, experiment: str = DEFAULT_EXPERIMENT
) -> tuple[str, str, bool]:
    """Log the run into ``experiment`` (created when missing) at ``tracking_uri`` (default: MLflow's own, from
    ``MLFLOW_TRACKING_URI``); returns (the MLflow run id, the experiment id, whether it was logged now). A run whose
    figures were exported already (the experiment holds a finished MLflow run tagged with the digest of its
    ``metrics.json``) is not logged twice: that MLflow run's id comes back. A resumed run has new figures, and a new
    MLflow run."""
    client = _client(tracking_uri)  # first: a missing MLflow is said before anything is read
    from mlflow.entities import Metric, Param
    from mlflow.exceptions import MlflowException

    run = read_run(run_dir)  # every file checked, and its figures against its journal
    try:  # a store MLflow refuses (a bad URI, a store it will not open) is the user's to fix: said, not a trace
        found = client.get_experiment_by_name(experiment)
        experiment_id = found.experiment_id if found else client.create_experiment(experiment)
    except MlflowException as exc:
        raise UsageError(f"MLflow tracking store {tracking_uri or '(default)'}: {exc.message}") from None
    digest = hashlib.sha256((Path(run_dir) / METRICS).read_bytes()).hexdigest()
    same = client.search_runs([experiment_id], f"tags.`{DIGEST_TAG}` = '{digest}' and attributes.status = 'FINISHED'")
    if same:
        return same[0].info.run_id, experiment_id, False
    tags = {"fcb.run_dir": str(Path(run_dir).resolve()), "fcb.harness_version": __version__, DIGEST_TAG: digest}
    created = client.create_run(experiment_id, run_name=run.label, tags=tags)
    run_id = created.info.run_id
    try:
        at = created.info.start_time
        metrics = [Metric(k, v, at, 0) for k, v in mlflow_metrics(run.doc).items()]
        params = [Param(k, v) for k, v in mlflow_params(run.doc).items()]
        for start in range(0, max(len(metrics), len(params)), BATCH):  # MLflow takes at most 100 params a batch
            client.log_batch(run_id, metrics=metrics[start : start + BATCH], params=params[start : start + BATCH])
        client.set_tag(run_id, "fcb.complete", str(run.complete).lower())
        for name in ARTIFACTS:
            if (Path(run_dir) / name).is_file():
                client.log_artifact(run_id, str(Path(run_dir) / name))
    except BaseException:
        client.set_terminated(run_id, "FAILED")
        raise
    client.set_terminated(run_id, "FINISHED")
    return run_id, experiment_id, True
