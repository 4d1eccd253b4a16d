"""Documents about runs: a committed baseline, ``fcb leaderboard --format json`` and ``fcb compare --format json``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,  # pydantic reads these on Python 3.11 (typing's from 3.12)
    cast,
)

from typing_extensions import TypedDict

from harness.documents.fields import Count, Doc, Limits, Positive, Sha256, Share, Text, configure, titled
from harness.documents.run import MetricsDocument

# ---- results/baselines/NAME.json -----------------------------------------------------------------------------------


class BaselineCases(TypedDict):
    ids: list[Text]
    categories: list[str]
    expected: Annotated[str, Limits(pattern="^[lmh]*$"), Doc("one letter per case: l, m, h")]
    predicted: Annotated[str, Limits(pattern="^[lmhe]*$"), Doc("l, m, h, or e for an error")]
    origins: NotRequired[Annotated[str, Limits(pattern="^[nacu]*$"), Doc("n, a, c or u per case")]]


configure(BaselineCases, extra="forbid")


class BaselineDocument(TypedDict):
    """A committed baseline: a run's metrics document and one letter per case, what ``fcb compare`` needs."""

    baseline_version: Literal[1]
    name: Annotated[str, Limits(pattern="^[A-Za-z0-9._-]+$")]
    source_run: str
    doc: MetricsDocument
    cases: BaselineCases


titled(
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


configure(LeaderboardRow, extra="forbid")


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
    detector: Annotated[str, Doc("the detector's name: the run's --name, or its spec when it had none")]
    spec: NotRequired[Annotated[str, Doc("the detector spec the run was given (fcb eval -d), secrets removed")]]
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


titled(
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
