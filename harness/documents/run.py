"""The run folder's documents: one journal line (``predictions.jsonl``), ``metrics.json``, ``run.json`` and
``scope.json``."""

from __future__ import annotations

from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,  # pydantic reads these on Python 3.11 (typing's from 3.12)
)

from typing_extensions import TypedDict

from harness.documents.fields import (
    Count,
    Doc,
    Interval,
    Limits,
    Positive,
    Rate,
    Seconds,
    Sha256,
    Shard,
    Share,
    Text,
    configure,
    titled,
)
from harness.documents.operating import OperatingPoints, ThresholdCheck
from harness.documents.repeats import Epochs, Probes
from harness.vocabulary import Engine, ErrorKind, Origin, ProbeName, Reducer, Risk

# ---- predictions.jsonl: one record per finished case ---------------------------------------------------------------


class JournalError(TypedDict):
    kind: ErrorKind
    message: str
    raw: NotRequired[str]  # the detector's reply, when it could not be read
    traceback: NotRequired[str]  # a Python detector's own traceback, secrets scrubbed


configure(JournalError, extra="forbid")


class Rewrite(TypedDict):
    """What a rewriting probe's variant changed (`harness.cases.rewrites`)."""

    kind: Annotated[Text, Doc("the template (inject), tone (tone), changes applied (format, joined by +), "
                              "filler (length), closing-line (restate), paraphrase or copy (duplicate)")]  # fmt: skip
    answers: Annotated[list[Count], Doc("the request's indices of the answers rewritten; duplicate: of the answer "
                                        "whose final value the added agent repeats")]  # fmt: skip
    position: NotRequired[Annotated[Count, Doc("duplicate: the added answer's index in the variant")]]


class JournalRecord(TypedDict):
    """One line of ``predictions.jsonl``: a prediction (``risk``) or the error that stands for it."""

    id: Text
    hash: Text
    category: Text
    expected: Risk
    origin: NotRequired[Origin]  # only for cases with an origin_* tag
    cluster: NotRequired[Annotated[Text, Doc("the case's cluster under the run's --cluster-by (source.item: "
                                             "dataset:item); absent for a case alone")]]  # fmt: skip
    epoch: NotRequired[Annotated[Positive, Doc("which time the case was asked (1..N); only in runs with --epochs N "
                                               "> 1, where (id, epoch, variant) keys a line")]]  # fmt: skip
    variant: NotRequired[Annotated[ProbeName, Doc("the probe whose variant of the request was asked (fcb eval "
                                                  "--probe); absent for the request as it is")]]  # fmt: skip
    rewrite: NotRequired[Annotated[Rewrite, Doc("the variants of the probes that rewrite answers (format, tone, "
                                                "length, restate, inject, duplicate): what was changed")]]  # fmt: skip
    permutation: NotRequired[Annotated[list[Count], Doc("order and evidence-order variants: the case's index of each "
                                                        "answer (passage) in the order sent")]]  # fmt: skip
    attempts: Annotated[Count, Doc("0 only for a reply replayed from the response cache (cached: true)")]
    latency_s: Seconds
    cached: NotRequired[bool]
    risk: Risk | None
    score: Share | None
    response: NotRequired[dict[str, Any]]  # whatever else the detector returned (absent on errors)
    error: JournalError | None


titled(
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


class ReliabilityBin(TypedDict):
    """One bin of the reliability diagram: scores s with lower < s <= upper (the first bin holds 0 too)."""

    lower: Share
    upper: Share
    count: Count
    mean_score: Annotated[Rate, Doc("the mean risk_score of the bin's cases; null for an empty bin")]
    share_high: Annotated[Rate, Doc("the share of high-risk cases among them; null for an empty bin")]


class Calibration(TypedDict):
    """The calibration of risk_score as the probability of high risk (`harness.calibration`)."""

    bins: Annotated[Positive, Doc("the number of equal-width bins of [0, 1] (fcb eval --ece-bins, 15 by default)")]
    ece: Annotated[Share, Doc("expected calibration error: sum over bins of count / n_scored * |share_high - "
                              "mean_score|")]  # fmt: skip
    ece_ci95: NotRequired[Interval]  # absent when the run drew no bootstrap resamples
    diagram: list[ReliabilityBin]


class ScoreMetrics(TypedDict):
    n_scored: Positive
    roc_auc: Rate
    average_precision: Rate
    brier: Rate
    calibration: NotRequired[Calibration]  # absent from documents written before calibration was reported


class ErrorMessage(TypedDict):
    kind: str
    message: str
    count: Positive
    case_id: str


class Tokens(TypedDict):
    prompt: Count
    completion: Count
    total: Count
    estimated: NotRequired[Count]  # of the total, tokens counted at their most: replies that gave no usable usage
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
    """The headline figures, as `harness.figures.headline` builds them (for all cases, or the real ones)."""

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


class Consensus(TypedDict):
    """What a false-consensus detector is for, on the cases with a consensus (an answer held by 60% of the agents or
    more: ``majority_correct`` true or false; run and answered or errored): calling a wrong consensus high, and not a
    right one. An errored case is a miss on a wrong consensus and not a clearance on a right one."""

    n_wrong: Annotated[Count, Doc("cases whose consensus is wrong (majority_correct false)")]
    n_right: Annotated[Count, Doc("cases whose consensus is right (majority_correct true)")]
    wrong_caught: Annotated[Rate, Doc("the share of wrong consensus called high")]
    wrong_caught_ci95: Interval | None
    right_alarmed: Annotated[Rate, Doc("the share of right consensus called high (false alarms)")]
    right_alarmed_ci95: Interval | None
    balanced_accuracy: Annotated[Rate, Doc("the mean of wrong_caught and the share of right consensus called low or "
                                           "medium; 0.5 for a detector that tells nothing")]  # fmt: skip
    balanced_accuracy_ci95: Interval | None
    n_scored: Annotated[Count, Doc("consensus cases with a risk_score")]
    roc_auc: Annotated[Rate, Doc("risk_score ranking wrong consensus above right; null without scores of both")]
    roc_auc_ci95: Interval | None


class DesignEffects(TypedDict):
    """Per headline figure: the variance of its cluster-bootstrap values over that of its case-bootstrap values
    (null without resamples, or where the case bootstrap does not vary)."""

    accuracy: Annotated[float, Limits(ge=0)] | None
    macro_f1: Annotated[float, Limits(ge=0)] | None
    weighted_kappa: Annotated[float, Limits(ge=0)] | None
    high_risk_recall: Annotated[float, Limits(ge=0)] | None
    false_alarm_rate: Annotated[float, Limits(ge=0)] | None
    error_rate: Annotated[float, Limits(ge=0)] | None


class Clusters(TypedDict):
    """What every interval of the run resamples (`harness.cases.clusters`): clusters of cases, a drawn cluster bringing
    all its cases."""

    by: Annotated[Text, Doc("the --cluster-by setting: source.item, source.dataset, tag:PREFIX or none")]
    n_cases: Annotated[Count, Doc("the cases with an outcome")]
    n_clusters: Count
    largest: Annotated[Count, Doc("the cases of the largest cluster")]
    design_effect: DesignEffects


configure(Clusters, extra="forbid")


class HeadlineReal(Headline):
    origins: list[str]
    n_cases: Count
    n_not_run: Count


class Metrics(Headline):
    """The ``metrics`` block of ``metrics.json``: every figure of a run (`harness.figures.compute`)."""

    n_cases: Count
    n_not_run: Count
    confusion_matrix: ConfusionMatrix
    clusters: NotRequired[Clusters]  # absent before intervals resampled clusters (they resampled cases then)
    headline_real: NotRequired[HeadlineReal | None]  # absent from documents of version 1
    headline_natural: Annotated[
        NotRequired[HeadlineReal | None],
        Doc("the headline on the origin_natural cases alone (null without origin tags; absent from older documents)"),
    ]
    consensus: NotRequired[Consensus | None]  # absent before it was reported; null without a consensus case
    operating_points: NotRequired[OperatingPoints]  # absent before it was reported
    threshold: NotRequired[ThresholdCheck]  # only in runs with --threshold FILE
    scores: NotRequired[ScoreMetrics | None]  # absent from documents of version 1 without scores
    per_category: dict[str, CategoryAccuracy]
    breakdowns: dict[str, dict[str, GroupAccuracy]]
    operational: Operational
    epochs: NotRequired[Epochs]  # only in runs with --epochs N > 1
    probes: NotRequired[Probes]  # only in runs with --probe


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


titled(
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
    epochs: NotRequired[Annotated[Positive, Limits(ge=2)]]  # the items a run asks: absent for one epoch, no probe
    probes: NotRequired[list[ProbeName]]
    probe_seed: NotRequired[int]
    cluster_by: NotRequired[Text]  # absent for source.item (the journal's cluster keys follow it)


class Settings(TypedDict):
    """The settings as ``run.json`` and ``metrics.json`` store them (`harness.run.settings.settings_record`)."""

    settings_version: NotRequired[Literal[2]]  # absent from documents written before it (version 1, read alike)
    limit: Positive | None
    shard: NotRequired[Shard | None]  # absent from documents written before shards
    anonymize_agents: bool
    skip_invalid: bool
    strict: bool
    bootstrap_resamples: Count
    seed: int
    ece_bins: NotRequired[Positive]  # absent from documents written before calibration was reported (15 then)
    epochs: NotRequired[Annotated[Positive, Limits(ge=2)]]  # absent for one epoch (and before epochs existed)
    epoch_reducer: NotRequired[Reducer]
    probes: NotRequired[list[ProbeName]]  # absent without --probe
    probe_seed: NotRequired[int]
    threshold: NotRequired[str]  # the --threshold file; absent without it
    cluster_by: NotRequired[Text]  # absent from documents written before --cluster-by (read as source.item)
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
    throttle_patience: NotRequired[Annotated[float, Limits(gt=0)]]
    stall_patience: NotRequired[Annotated[float, Limits(gt=0)]]
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
    rpm: NotRequired[Positive | None]  # limits and caps (harness.detectors.limits); absent before they existed
    tpm: NotRequired[Positive | None]
    max_requests: NotRequired[Positive | None]
    max_cost: NotRequired[Annotated[float, Limits(gt=0)] | None]
    engine: NotRequired[Engine]  # where a Python detector runs: no result changes
    workers: NotRequired[Positive | None]
    ray_address: NotRequired[str | None]
    num_cpus: NotRequired[Annotated[float, Limits(ge=0)] | None]
    num_gpus: NotRequired[Annotated[float, Limits(ge=0)] | None]


class Session(TypedDict):
    started: NotRequired[str]
    wall_s: Seconds
    cases: Count
    # requests sent (every attempt, the cases stopped mid-retry included) and their cost counted at its most, for an
    # HTTP or llm: detector: what --max-requests and --max-cost count across sessions (absent before they were kept)
    requests: NotRequired[Count]
    cost_usd: NotRequired[Annotated[float, Limits(ge=0)]]
    settings: NotRequired[dict[str, Any]]  # the settings this session ran with that differ from the first session's


class RunManifest(TypedDict):
    """``run.json``: the run's identity (checked on resume and merge), settings and sessions."""

    identity: Identity
    cases: Text
    settings: Settings
    created: str
    sessions: list[Session]
    merged_from: NotRequired[list[str]]


titled(
    RunManifest,
    "run.json: a run folder's manifest (identity, settings, sessions), checked when a run is resumed or merged",
    "Written by harness/runfolder/manifest.py (harness.documents.RunManifest).",
)


# ---- scope.json ----------------------------------------------------------------------------------------------------


class ScopeDocument(TypedDict):
    """``scope.json``: the (id, content hash) of every case a run counts."""

    cases: list[Annotated[list[Text], Limits(min_length=2, max_length=2)]]


titled(
    ScopeDocument,
    "scope.json: the (id, content hash) of every case a run counts",
    "Written by harness/runfolder/scope.py (harness.documents.ScopeDocument): readers of the run folder count the "
    "journal lines the run itself counts and no other.",
)
