"""The documents the harness writes, defined once: the output half of the contract in `harness.types`.

Each document is a TypedDict here, and only here. The static types come from it (mypy checks every key a producer
writes and a renderer reads), and so does its JSON Schema: pydantic generates it from the definition (`generated`),
and the shipped copy in ``harness/data/NAME.schema.json`` (``fcb schema NAME`` prints it) must equal what it
generates (a test checks; ``python -m harness.documents`` rewrites them). Readers of the run folder check files
against the same definitions (`check`, used by `harness.runfolder.read`).

| name        | file                                        | definition          |
|-------------|---------------------------------------------|---------------------|
| metrics     | RUN/metrics.json                            | `MetricsDocument`   |
| journal     | one line of RUN/predictions.jsonl           | `JournalRecord`     |
| run         | RUN/run.json                                | `RunManifest`       |
| scope       | RUN/scope.json                              | `ScopeDocument`     |
| baseline    | results/baselines/NAME.json                 | `BaselineDocument`  |
| leaderboard | ``fcb leaderboard --format json`` (a list)  | `LeaderboardBoard`  |
| compare     | ``fcb compare --format json``               | `CompareDocument`   |
| audit       | ``fcb audit-dataset --format json``         | kept by hand still (`harness.datasets.audit.document`) |

Constraints and descriptions ride on the types as small markers (`Limits`, `Doc`) that pydantic reads when it builds
a schema; this module imports no pydantic itself, so the contract costs no start-up time. Fields a document of an
older version lacks are ``NotRequired``: readers accept every version still in use (committed baselines among
them). Undefined figures are None in Python and null in JSON, never 0 or NaN (see `harness.metrics`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,  # pydantic reads these on Python 3.11 (typing's from 3.12)
    cast,
)

import orjson
from typing_extensions import TypedDict

Risk = Literal["low", "medium", "high"]  # harness.types.Risk; this module sits below the contract, imports none
ErrorKind = Literal["invalid_response", "timeout", "connection", "http_status", "detector_exception"]
"""harness.types.ERROR_KINDS, as a type."""

SCHEMAS: tuple[str, ...] = ("metrics", "journal", "run", "scope", "baseline", "leaderboard", "compare", "audit")
"""The documents that have a shipped JSON Schema, by the name ``fcb schema`` takes."""
GENERATED: tuple[str, ...] = SCHEMAS[:-1]
"""The documents whose schema is generated from their definition here (the audit's is still kept by hand)."""


# ---- markers: what a field allows beyond its type ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds, a least length or a pattern on one value: checked by pydantic and written into the JSON Schema."""

    ge: float | None = None
    le: float | None = None
    gt: float | None = None
    lt: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        schema = handler(source)
        for key in ("ge", "le", "gt", "lt", "min_length", "max_length", "pattern"):
            if (value := getattr(self, key)) is not None:
                schema[key] = value
        return schema


@dataclass(frozen=True, slots=True)
class Doc:
    """A field's description in the JSON Schema."""

    text: str

    def __get_pydantic_json_schema__(self, core_schema: Any, handler: Any) -> Any:
        schema = handler(core_schema)
        schema["description"] = self.text
        return schema


Count = Annotated[int, Limits(ge=0)]
Positive = Annotated[int, Limits(ge=1)]
Seconds = Annotated[float, Limits(ge=0)]
Share = Annotated[float, Limits(ge=0, le=1)]
Rate = Share | None
"""A rate in [0, 1], or null where it is undefined (no case to count it on)."""
Interval = Annotated[list[float], Limits(min_length=2, max_length=2)]
Sha256 = Annotated[str, Limits(pattern="^[0-9a-f]{64}$")]
Text = Annotated[str, Limits(min_length=1)]
Shard = Annotated[str, Limits(pattern="^[1-9][0-9]*/[1-9][0-9]*$")]


def _shape(document: type, **config: Any) -> None:
    """What pydantic reads of a definition besides its fields (title, extra keys, forbidden extras): its config."""
    setattr(document, "__pydantic_config__", config)  # noqa: B010 - a TypedDict class takes no class attributes


def _titled(document: type, title: str, description: str, **extra: Any) -> None:
    """A shipped document's title and description (its ``$id`` is set on the shipped schema alone, `generated`: an
    ``$id`` inside a schema that another one nests would move the base of its references)."""
    _shape(document, title=title, json_schema_extra={"description": description, **extra})


# ---- predictions.jsonl: one record per finished case ---------------------------------------------------------------


class JournalError(TypedDict):
    kind: ErrorKind
    message: str
    raw: NotRequired[str]  # the detector's reply, when it could not be read
    traceback: NotRequired[str]  # a Python detector's own traceback, secrets scrubbed


_shape(JournalError, extra="forbid")


class JournalRecord(TypedDict):
    """One line of ``predictions.jsonl``: a prediction (``risk``) or the error that stands for it."""

    id: Text
    hash: Text
    category: Text
    expected: Risk
    origin: NotRequired[Literal["natural", "assembled", "constructed"]]  # only for cases with an origin_* tag
    attempts: Annotated[Count, Doc("0 only for a reply replayed from the response cache (cached: true)")]
    latency_s: Seconds
    cached: NotRequired[bool]
    risk: Risk | None
    score: Share | None
    response: NotRequired[dict[str, Any]]  # whatever else the detector returned (absent on errors)
    error: JournalError | None


_titled(
    JournalRecord,
    "One line of predictions.jsonl: a finished case's prediction, or the error that stands for it",
    "Written by harness/runfolder/journal.py (harness.documents.JournalRecord). A record with an error has a null "
    "risk and score; a record without one has a risk.",
    allOf=[
        {"if": {"not": {"required": ["cached"], "properties": {"cached": {"const": True}}}},
         "then": {"properties": {"attempts": {"minimum": 1}}}},
        {"oneOf": [{"properties": {"error": {"type": "null"}, "risk": {"enum": ["low", "medium", "high"]}}},
                   {"properties": {"error": {"type": "object"}, "risk": {"type": "null"}, "score": {"type": "null"}}}]},
    ],
)  # fmt: skip


# ---- metrics.json --------------------------------------------------------------------------------------------------


class ClassScores(TypedDict):
    precision: Share
    recall: Share
    f1: Share
    support: Count


class PerClass(TypedDict):
    low: ClassScores
    medium: ClassScores
    high: ClassScores


class Bootstrap(TypedDict):
    resamples: Positive
    seed: int
    method: str


class GroupAccuracy(TypedDict):
    n: Count
    correct: Count
    accuracy: Rate
    ci95: Interval | None


class Predicted(TypedDict):
    low: Count
    medium: Count
    high: Count
    error: Count


class CategoryAccuracy(GroupAccuracy):
    expected_risk: Literal["low", "medium", "high", "mixed"]
    predicted: Predicted


class ScoreMetrics(TypedDict):
    n_scored: Positive
    roc_auc: Rate
    average_precision: Rate
    brier: Rate


class ErrorMessage(TypedDict):
    kind: str
    message: str
    count: Positive
    case_id: str


class Tokens(TypedDict):
    prompt: Count
    completion: Count
    total: Count
    cost_usd: NotRequired[Annotated[float, Limits(ge=0)]]


class Operational(TypedDict):
    cases: Count
    errors: Count
    errors_by_kind: dict[ErrorKind, Positive]
    error_messages: NotRequired[list[ErrorMessage]]  # absent from documents written before they were kept
    retries: Count
    wall_s: Seconds
    cases_per_s: Annotated[float, Limits(ge=0)] | None
    latency_s: dict[str, Seconds]  # p50, p90, p95, p99; empty when no case was asked
    tokens: NotRequired[Tokens | None]  # absent before token counts were kept
    cached: NotRequired[Count]  # absent before the response cache


class ConfusionMatrix(TypedDict):
    rows: list[Risk]  # low, medium, high
    columns: list[str]  # low, medium, high, error
    counts: Annotated[list[Annotated[list[Count], Limits(min_length=4, max_length=4)]],
                      Limits(min_length=3, max_length=3)]  # fmt: skip


class Headline(TypedDict):
    """The headline figures, as `harness.metrics.headline` builds them (for all cases, or the real ones)."""

    accuracy: Rate
    macro_f1: Rate
    macro_f1_classes: list[Risk]
    per_class: PerClass
    weighted_kappa: Annotated[float, Limits(ge=-1, le=1)] | None
    high_risk_recall: Rate
    false_alarm_rate: Rate
    error_rate: NotRequired[Rate]  # absent from documents written before it was part of the headline
    accuracy_ci95: NotRequired[Interval]
    macro_f1_ci95: NotRequired[Interval]
    bootstrap: NotRequired[Bootstrap]


class HeadlineReal(Headline):
    origins: list[str]
    n_cases: Count
    n_not_run: Count


class Metrics(Headline):
    """The ``metrics`` block of ``metrics.json``: every figure of a run (`harness.metrics.compute`)."""

    n_cases: Count
    n_not_run: Count
    confusion_matrix: ConfusionMatrix
    headline_real: NotRequired[HeadlineReal | None]  # absent from documents of version 1
    scores: NotRequired[ScoreMetrics | None]  # absent from documents of version 1 without scores
    per_category: dict[str, CategoryAccuracy]
    breakdowns: dict[str, dict[str, GroupAccuracy]]
    operational: Operational


class Subset(TypedDict):
    categories: NotRequired[list[str]]
    tags: NotRequired[list[str]]


class Dataset(TypedDict):
    path: str
    name: str
    sha256: Annotated[Sha256, Doc("of the cases in scope: a subset is its own data set")]
    file_sha256: NotRequired[Sha256]
    subset: NotRequired[Subset | None]
    cases: Count
    lines: NotRequired[Count]
    skipped_invalid: NotRequired[Count]
    problems: NotRequired[list[str]]


class DetectorInfo(TypedDict):
    spec: Text
    name: str
    label: NotRequired[str | None]  # the run's --name; absent from documents written before it
    fingerprint: NotRequired[dict[str, Any] | None]


class MetricsDocument(TypedDict):
    """``metrics.json``: what was run, on what, with which settings, and every figure."""

    metrics_version: Positive
    harness_version: str
    created: str
    complete: bool
    dataset: Dataset
    detector: DetectorInfo
    settings: Settings  # `harness.run.settings.settings_record` (run.json's settings)
    metrics: Metrics
    stopped: NotRequired[str | None]
    merged_from: NotRequired[list[str]]


_titled(
    MetricsDocument,
    "metrics.json: what was run, on what, with which settings, and every figure of the run",
    "Written by harness/run/outputs.py (harness.documents.MetricsDocument). An undefined figure is null, never 0 "
    "or NaN.",
)


# ---- run.json ------------------------------------------------------------------------------------------------------


class Identity(TypedDict):
    """What a resume or a merge must match."""

    dataset_sha256: Sha256
    detector: Text
    limit: Positive | None
    shard: Shard | None
    anonymize_agents: bool
    strict: bool
    risk_field: Text
    fingerprint: NotRequired[dict[str, Any]]
    subset: NotRequired[Subset]


class Settings(TypedDict):
    """The settings as ``run.json`` and ``metrics.json`` store them (`harness.run.settings.settings_record`)."""

    limit: Positive | None
    shard: NotRequired[Shard | None]  # absent from documents written before shards
    anonymize_agents: bool
    skip_invalid: bool
    strict: bool
    bootstrap_resamples: Count
    seed: int
    name: NotRequired[str | None]
    categories: NotRequired[list[str]]
    tags: NotRequired[list[str]]
    concurrency: Positive
    timeout: Annotated[float, Limits(gt=0)]
    retries: Count
    risk_field: Text
    headers: NotRequired[dict[str, str]]
    token_env: NotRequired[str]
    max_response_bytes: NotRequired[Positive]
    backoff_initial: NotRequired[Seconds]
    backoff_max: NotRequired[Seconds]
    temperature: NotRequired[Annotated[float, Limits(ge=0)]]
    max_tokens: NotRequired[Positive]
    prompt: NotRequired[str | None]
    samples: NotRequired[Positive]
    json_mode: NotRequired[bool]
    price_prompt_per_mtok: NotRequired[Annotated[float, Limits(ge=0)] | None]
    price_completion_per_mtok: NotRequired[Annotated[float, Limits(ge=0)] | None]
    cache: NotRequired[bool | None]  # the response cache: None means on for llm: detectors at temperature 0
    cache_dir: NotRequired[str | None]
    cache_refresh: NotRequired[bool]
    batch_size: NotRequired[Positive]
    engine: NotRequired[Literal["local", "processes", "ray"]]  # where a Python detector runs: no result changes
    workers: NotRequired[Positive | None]
    ray_address: NotRequired[str | None]
    num_cpus: NotRequired[Annotated[float, Limits(ge=0)] | None]
    num_gpus: NotRequired[Annotated[float, Limits(ge=0)] | None]


class Session(TypedDict):
    started: NotRequired[str]
    wall_s: Seconds
    cases: Count


class RunManifest(TypedDict):
    """``run.json``: the run's identity (checked on resume and merge), settings and sessions."""

    identity: Identity
    cases: Text
    settings: Settings
    created: str
    sessions: list[Session]
    merged_from: NotRequired[list[str]]


_titled(
    RunManifest,
    "run.json: a run folder's manifest (identity, settings, sessions), checked when a run is resumed or merged",
    "Written by harness/runfolder/manifest.py (harness.documents.RunManifest).",
)


# ---- scope.json ----------------------------------------------------------------------------------------------------


class ScopeDocument(TypedDict):
    """``scope.json``: the (id, content hash) of every case a run counts."""

    cases: list[Annotated[list[Text], Limits(min_length=2, max_length=2)]]


_titled(
    ScopeDocument,
    "scope.json: the (id, content hash) of every case a run counts",
    "Written by harness/runfolder/scope.py (harness.documents.ScopeDocument): readers of the run folder count the "
    "journal lines the run itself counts and no other.",
)


# ---- results/baselines/NAME.json -----------------------------------------------------------------------------------


class BaselineCases(TypedDict):
    ids: list[Text]
    categories: list[str]
    expected: Annotated[str, Limits(pattern="^[lmh]*$"), Doc("one letter per case: l, m, h")]
    predicted: Annotated[str, Limits(pattern="^[lmhe]*$"), Doc("l, m, h, or e for an error")]
    origins: NotRequired[Annotated[str, Limits(pattern="^[nacu]*$"), Doc("n, a, c or u per case")]]


_shape(BaselineCases, extra="forbid")


class BaselineDocument(TypedDict):
    """A committed baseline: a run's metrics document and one letter per case, what ``fcb compare`` needs."""

    baseline_version: Literal[1]
    name: Annotated[str, Limits(pattern="^[A-Za-z0-9._-]+$")]
    source_run: str
    doc: MetricsDocument
    cases: BaselineCases


_titled(
    BaselineDocument,
    "A baseline file (results/baselines/NAME.json): a run's metrics document and one letter per case",
    "Written by `fcb baseline save` (harness/leaderboard/runs.py, harness.documents.BaselineDocument); read by "
    "`fcb compare`. The case strings have one letter per case, in the order of ids.",
)


# ---- fcb leaderboard --format json: a list of boards, one per data set ---------------------------------------------


class LeaderboardRow(TypedDict):
    rank: Positive | None
    rank_label: Annotated[str, Limits(pattern="^(-|[1-9][0-9]*=?)$")]
    detector: Text
    fingerprint: str
    note: str
    incomplete: bool
    runs: Annotated[list[str], Limits(min_length=1)]
    incomplete_runs_left_out: Count
    cases: Count
    date: str
    ci95: list[float] | None
    ci95_by_metric: dict[str, list[float] | None]
    values: dict[str, float | None]


_shape(LeaderboardRow, extra="forbid")


class BoardDataset(TypedDict):
    name: str
    sha256: Sha256
    cases: Count


class BoardMethod(TypedDict):
    bootstrap_resamples: Count
    seed: int
    alpha: Annotated[float, Limits(gt=0, lt=1)]
    include_incomplete: bool
    note: NotRequired[str]


class BoardCard(TypedDict):
    """The data set's make-up, as the leaderboard shows it beside the ranking."""

    cases: Count
    by_category: dict[str, dict[str, Count]]
    by_origin: NotRequired[dict[str, Count]]
    real_cases: NotRequired[Count]


class LeaderboardBoard(TypedDict):
    dataset: BoardDataset
    metric: str
    method: BoardMethod
    card: BoardCard
    real_cases: Count | None
    rows: list[LeaderboardRow]


# ---- fcb compare --format json -------------------------------------------------------------------------------------


class CompareRun(TypedDict):
    path: str
    detector: str
    created: str


class MetricDelta(TypedDict):
    base: float | None
    new: float | None
    delta: float | None
    ci: list[float] | None
    higher_is_better: bool
    regression: bool


class CategoryDelta(TypedDict):
    n: Count
    base: Share
    new: Share
    delta: float


class FlippedCase(TypedDict):
    id: str
    category: str


class Flipped(TypedDict):
    right_to_wrong: list[FlippedCase]
    wrong_to_right: list[FlippedCase]


class CompareSettings(TypedDict):
    max_drop: float
    alpha: Annotated[float, Limits(gt=0, lt=1)]
    bootstrap_resamples: Count
    seed: int


class CompareDocument(TypedDict):
    """``fcb compare --format json``: the new run against the base, metric by metric, on the cases they share."""

    base: CompareRun
    new: CompareRun
    dataset: BoardDataset
    settings: CompareSettings
    metrics: dict[str, MetricDelta]
    per_category: dict[str, CategoryDelta]
    flipped: Flipped
    regression: Annotated[bool, Doc("true when any metric regressed significantly: what a CI gate reads")]


_titled(
    CompareDocument,
    "fcb compare --format json: a new run against a base run, metric by metric, on the cases they share",
    "Written by harness/leaderboard/compare.py (harness.documents.CompareDocument). A metric regresses when it got "
    "worse by more than max_drop and its paired-bootstrap interval excludes zero.",
)


def error_rate(block: Mapping[str, Any]) -> float | None:
    """A headline block's error rate: the stored figure, or for documents written before it was stored (baselines
    committed earlier), errors over cases from ``operational``. None without cases."""
    if "error_rate" in block:
        return cast("float | None", block["error_rate"])
    ops = block.get("operational")
    return ops["errors"] / ops["cases"] if isinstance(ops, dict) and ops["cases"] else None


# ---- definitions, schemas and checks -------------------------------------------------------------------------------

DEFINITIONS: dict[str, Any] = {
    "metrics": MetricsDocument,
    "journal": JournalRecord,
    "run": RunManifest,
    "scope": ScopeDocument,
    "baseline": BaselineDocument,
    "leaderboard": list[LeaderboardBoard],
    "compare": CompareDocument,
}
"""Each generated document's definition, by name."""


@cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter  # imported on use: only readers of a run folder and schema tools need it

    return TypeAdapter(DEFINITIONS[name])


def generated(name: str) -> dict[str, Any]:
    """The JSON Schema that document ``name`` (one of `GENERATED`) has by its definition."""
    schema: dict[str, Any] = _adapter(name).json_schema()
    if name == "leaderboard":  # a list of boards: the list carries the document's title
        schema = {"title": "fcb leaderboard --format json: a list of boards, one per data set",
                  "description": "Written by harness/leaderboard/render.py (harness.documents.LeaderboardBoard). Row "
                  "values are medians over a detector's runs; null where a figure is undefined.", **schema}  # fmt: skip
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"https://fcb-harness/{name}.schema.json", **schema}  # fmt: skip


RULED = frozenset({"journal"})
"""Documents whose definition carries rules across fields (``allOf`` in its schema: a record with an error has no
risk) that the field types alone do not state: `check` applies its generated schema too."""


def check(name: str, data: Any) -> list[tuple[str, str]]:
    """(field, message) for every way ``data`` breaks document ``name``'s definition (strict: no value is converted);
    empty when it holds. A field is a dotted path (``metrics.per_class.low.f1``; list positions as numbers)."""
    from pydantic import ValidationError

    try:
        _adapter(name).validate_python(data, strict=True)
    except ValidationError as exc:
        return [(".".join(str(p) for p in err["loc"]) or "(document)", err["msg"]) for err in exc.errors()]
    if name in RULED:
        errors = _rules(name).iter_errors(data)
        return [(".".join(map(str, e.absolute_path)) or "(document)", e.message) for e in errors]
    return []


@cache
def _rules(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(generated(name))


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
    """A jsonschema validator for document ``name``'s shipped schema (what a tool outside Python checks)."""
    from jsonschema import Draft202012Validator  # imported here: only tests and tools validate whole documents

    return Draft202012Validator(schema(name))


def schema_file_text(name: str) -> str:
    """The text a generated schema is shipped as (2-space JSON, keys in the order pydantic writes them)."""
    return orjson.dumps(generated(name), option=orjson.OPT_INDENT_2).decode() + "\n"


if __name__ == "__main__":  # python -m harness.documents: rewrite the shipped schemas from the definitions
    from pathlib import Path

    for doc_name in GENERATED:
        target = Path(__file__).parent / "data" / f"{doc_name}.schema.json"
        target.write_text(schema_file_text(doc_name), encoding="utf-8")
        print(target)
