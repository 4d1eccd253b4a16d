"""The documents the harness writes, typed: the output half of the contract in `harness.types`.

Each document has a typed record here and a JSON Schema shipped in ``harness/data/NAME.schema.json``
(``fcb schema NAME`` prints one). The records describe what the code builds and reads back; the schemas are what a
tool outside Python can check. A test validates the files of a real run against the schemas.

| name        | file                                        | record              |
|-------------|---------------------------------------------|---------------------|
| metrics     | RUN/metrics.json                            | `MetricsDocument`   |
| journal     | one line of RUN/predictions.jsonl           | `JournalRecord`     |
| run         | RUN/run.json                                | `RunManifest`       |
| baseline    | results/baselines/NAME.json                 | `BaselineDocument`  |
| leaderboard | ``fcb leaderboard --format json`` (a list)  | `LeaderboardBoard`  |
| audit       | ``fcb audit-dataset --format json``         | (a plain dict)      |

The output half of the contract sits in the lowest layer: `harness.types` imports these records, never the
other way round. Undefined figures are None in Python and null in JSON, never 0 or NaN (see `harness.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import Any, Literal, NotRequired, TypedDict, cast

import orjson

Risk = Literal["low", "medium", "high"]  # harness.types.Risk; this module sits below the contract, imports none

SCHEMAS: tuple[str, ...] = ("metrics", "journal", "run", "baseline", "leaderboard", "audit")
"""The documents that have a shipped JSON Schema, by the name ``fcb schema`` takes."""


# ---- predictions.jsonl: one record per finished case -------------------------------------------------------------


class JournalError(TypedDict):
    kind: str  # one of harness.types.ERROR_KINDS
    message: str
    raw: NotRequired[str]  # the detector's reply, when it could not be read
    traceback: NotRequired[str]  # a Python detector's own traceback, secrets scrubbed


class JournalRecord(TypedDict):
    """One line of ``predictions.jsonl``: a prediction (``risk``) or the error that stands for it."""

    id: str
    hash: str
    category: str
    expected: Risk
    origin: NotRequired[str]  # only for cases with an origin_* tag
    attempts: int
    latency_s: float
    cached: NotRequired[bool]
    risk: Risk | None
    score: float | None
    response: NotRequired[dict[str, Any]]  # whatever else the detector returned (absent on errors)
    error: JournalError | None


# ---- metrics.json ----------------------------------------------------------------------------------------------


class ClassScores(TypedDict):
    precision: float
    recall: float
    f1: float
    support: int


class GroupAccuracy(TypedDict):
    n: int
    correct: int
    accuracy: float | None
    ci95: list[float] | None


class CategoryAccuracy(GroupAccuracy):
    expected_risk: str  # a risk, or "mixed"
    predicted: dict[str, int]  # low, medium, high, error


class ScoreMetrics(TypedDict):
    n_scored: int
    roc_auc: float | None
    average_precision: float | None
    brier: float | None


class Operational(TypedDict):
    cases: int
    errors: int
    errors_by_kind: dict[str, int]
    error_messages: list[dict[str, Any]]
    retries: int
    wall_s: float
    cases_per_s: float | None
    latency_s: dict[str, float]  # p50, p90, p95, p99; empty when no case was asked
    tokens: dict[str, Any] | None
    cached: int


class Headline(TypedDict):
    """The headline figures, as `harness.metrics.headline` builds them (for all cases, or the real ones)."""

    accuracy: float | None
    macro_f1: float | None
    macro_f1_classes: list[str]
    per_class: dict[str, ClassScores]
    weighted_kappa: float | None
    high_risk_recall: float | None
    false_alarm_rate: float | None
    error_rate: NotRequired[float | None]  # absent from documents written before it was part of the headline
    accuracy_ci95: NotRequired[list[float]]
    macro_f1_ci95: NotRequired[list[float]]
    bootstrap: NotRequired[dict[str, Any]]


class HeadlineReal(Headline):
    origins: list[str]
    n_cases: int
    n_not_run: int


class Metrics(Headline):
    """The ``metrics`` block of ``metrics.json``: every figure of a run (`harness.metrics.compute`)."""

    n_cases: int
    n_not_run: int
    confusion_matrix: dict[str, Any]
    headline_real: HeadlineReal | None
    scores: ScoreMetrics | None
    per_category: dict[str, CategoryAccuracy]
    breakdowns: dict[str, dict[str, GroupAccuracy]]
    operational: Operational


class Dataset(TypedDict):
    path: str
    name: str
    sha256: str  # of the cases in scope: a subset is its own data set
    file_sha256: NotRequired[str]
    subset: dict[str, list[str]] | None
    cases: int
    lines: int
    skipped_invalid: int
    problems: list[str]


class DetectorInfo(TypedDict):
    spec: str
    name: str
    label: str | None
    fingerprint: NotRequired[dict[str, Any]]


class MetricsDocument(TypedDict):
    """``metrics.json``: what was run, on what, with which settings, and every figure."""

    metrics_version: int
    harness_version: str
    created: str
    complete: bool
    dataset: Dataset
    detector: DetectorInfo
    settings: dict[str, Any]  # `harness.run.settings.settings_record`
    metrics: Metrics
    stopped: NotRequired[str | None]
    merged_from: NotRequired[list[str]]


# ---- run.json ----------------------------------------------------------------------------------------------------


class Session(TypedDict):
    started: NotRequired[str]
    wall_s: float
    cases: int


class RunManifest(TypedDict):
    """``run.json``: the run's identity (checked on resume and merge), settings and sessions."""

    identity: dict[str, Any]
    cases: str
    settings: dict[str, Any]
    created: str
    sessions: list[Session]
    merged_from: NotRequired[list[str]]


# ---- results/baselines/NAME.json ---------------------------------------------------------------------------------


class BaselineCases(TypedDict):
    ids: list[str]
    categories: list[str]
    expected: str  # one letter per case: l, m, h
    predicted: str  # l, m, h, or e for an error
    origins: NotRequired[str]  # n, a, c or u per case; only when some case carries an origin tag


class BaselineDocument(TypedDict):
    """A committed baseline: a run's metrics document and one letter per case, what ``fcb compare`` needs."""

    baseline_version: int
    name: str
    source_run: str
    doc: MetricsDocument
    cases: BaselineCases


# ---- fcb leaderboard --format json: a list of boards, one per data set -------------------------------------------


class LeaderboardRow(TypedDict):
    rank: int | None
    rank_label: str
    detector: str
    fingerprint: str
    note: str
    incomplete: bool
    runs: list[str]
    incomplete_runs_left_out: int
    cases: int
    date: str
    ci95: list[float] | None
    ci95_by_metric: dict[str, list[float] | None]
    values: dict[str, float | None]


class LeaderboardBoard(TypedDict):
    dataset: dict[str, Any]
    metric: str
    method: dict[str, Any]
    card: dict[str, Any]
    real_cases: int | None
    rows: list[LeaderboardRow]


def error_rate(block: Mapping[str, Any]) -> float | None:
    """A headline block's error rate: the stored figure, or for documents written before it was stored (baselines
    committed earlier), errors over cases from ``operational``. None without cases."""
    if "error_rate" in block:
        return cast("float | None", block["error_rate"])
    ops = block.get("operational")
    return ops["errors"] / ops["cases"] if isinstance(ops, dict) and ops["cases"] else None


# ---- the schemas -------------------------------------------------------------------------------------------------


def schema_text(name: str) -> str:
    """The shipped JSON Schema of document ``name`` (one of `SCHEMAS`), as text. KeyError for another name."""
    if name not in SCHEMAS:
        raise KeyError(name)
    return (resources.files("harness") / "data" / f"{name}.schema.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    """The shipped JSON Schema of document ``name`` (one of `SCHEMAS`)."""
    loaded: dict[str, Any] = orjson.loads(schema_text(name))
    return loaded


@cache
def validator(name: str) -> Any:
    """A jsonschema validator for document ``name``; references between the shipped schemas resolve offline."""
    from jsonschema import Draft202012Validator  # imported here: only tests and tools validate whole documents
    from referencing import Registry, Resource

    registry: Registry[Any] = Registry().with_resources(
        (schema(n)["$id"], Resource.from_contents(schema(n))) for n in SCHEMAS
    )
    return Draft202012Validator(schema(name), registry=registry)
