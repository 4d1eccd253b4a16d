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
    clusters: NotRequired[Annotated[list[Count], Doc("each case's cluster, a number: cases of one number are resampled "
                                                     "together (absent: each case alone)")]]  # fmt: skip


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
    natural_cases: NotRequired[Count]


class LeaderboardBoard(TypedDict):
    dataset: BoardDataset
    metric: str
    method: BoardMethod
    card: BoardCard
    real_cases: Count | None
    natural_cases: NotRequired[Count | None]
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
    p: Annotated[Share | None, Doc("one-sided bootstrap p-value of a worsening: the share of resamples whose change "
                                   "shows none; null when no resample defines the metric")]  # fmt: skip
    p_holm: Annotated[Share | None, Doc("Holm-adjusted p over the metrics gated together (gate.family); null when "
                                        "the gate tests each metric alone (runs of one epoch) or this one is not "
                                        "tested")]  # fmt: skip
    regression: bool
    mde: NotRequired[
        Annotated[
            float | None,
            Doc("the smallest worsening this comparison could detect with 80% power: (z(1 - alpha) + z(0.8)) x the "
                "bootstrap sd of the change (alpha / m, Holm's first step, for a metric gated in a family of m); "
                "null without two finite resamples"),
        ]
    ]  # fmt: skip


class CategoryDelta(TypedDict):
    n: Count
    base: Share
    new: Share
    delta: float


class FlippedCase(TypedDict):
    id: str
    category: str
    epoch: NotRequired[Annotated[Positive, Doc("fcb compare RUN --probe of a run with epochs: the pair's epoch")]]


class Flipped(TypedDict):
    right_to_wrong: list[FlippedCase]
    wrong_to_right: list[FlippedCase]


class CompareSettings(TypedDict):
    max_drop: float
    alpha: Annotated[float, Limits(gt=0, lt=1)]
    bootstrap_resamples: Count
    seed: int
    probe: NotRequired[Annotated[str, Doc("fcb compare RUN --probe P: base is the run's plain verdicts, new its "
                                          "variants' of probe P, paired by (case, epoch)")]]  # fmt: skip


class GateEpochs(TypedDict):
    base: Positive
    new: Positive


class Gate(TypedDict):
    """How ``fcb compare`` decided: which bootstrap, which test, and whether it can tell noise from change."""

    method: Annotated[
        Literal["paired", "hierarchical", "probe-pairs"],
        Doc("paired: the paired bootstrap over cases (runs of one epoch); hierarchical: cases, then each drawn "
            "case's epochs, the verdicts reduced as each run's reducer does; probe-pairs: (case, epoch) pairs of one "
            "run, resampled by case"),
    ]  # fmt: skip
    figures: Annotated[
        Literal["case verdicts", "epoch verdicts", "pairs"],
        Doc("what base and new are computed on: each case's verdict (a run with epochs: reduced by its reducer); "
            "every (case, epoch) verdict, the confusion matrix summed over the epochs (the runs' own headlines, on "
            "reduced verdicts, are in their reports); the (case, epoch) pairs of a probed run"),
    ]  # fmt: skip
    clusters: NotRequired[Annotated[Count, Doc("the clusters the bootstrap draws, when cases share one (the runs' "
                                               "journals name them; cases either run put together are drawn "
                                               "together); absent: every case alone")]]  # fmt: skip
    epochs: GateEpochs
    reducers: Annotated[list[str], Doc("each run's --epoch-reducer (base, new)")]
    multiple_testing: Annotated[Literal["none", "holm"], Doc("none: each metric alone, regression when its two-sided "
                                "(1 - alpha) interval excludes zero on the worse side; holm: Holm's step-down over "
                                "family at level alpha, on one-sided p")]  # fmt: skip
    family: Annotated[list[str], Doc("the metrics tested together (a metric that no resample can change, such as "
                                     "error_rate when neither run errs, is not tested)")]  # fmt: skip
    noise_separated: Annotated[bool, Doc("false when either run has one epoch: the detector's own randomness is "
                                         "then not measured, and a difference may be noise")]  # fmt: skip
    statement: Annotated[str, Doc("the method in one paragraph, as the text and Markdown outputs print it")]


class EceDelta(TypedDict):
    """The expected calibration error of risk_score in both runs (over the cases both scored) and its change."""

    bins: Positive
    n: Annotated[Count, Doc("cases with a risk_score in both runs")]
    base: float
    new: float
    delta: float
    ci: Annotated[list[float] | None, Doc("paired-bootstrap (1 - alpha) interval of the change, resampling cases")]


class CompareDocument(TypedDict):
    """``fcb compare --format json``: the new run against the base, metric by metric, on the cases they share."""

    base: CompareRun
    new: CompareRun
    dataset: BoardDataset
    settings: CompareSettings
    gate: Gate
    metrics: dict[str, MetricDelta]
    ece: NotRequired[Annotated[EceDelta, Doc("when both runs gave risk_score over the same bins; not gated")]]
    per_category: dict[str, CategoryDelta]
    flipped: Flipped
    regression: Annotated[bool, Doc("true when any metric regressed significantly: what a CI gate reads")]


titled(
    CompareDocument,
    "fcb compare --format json: a new run against a base run, metric by metric, on the cases they share",
    "Written by harness/leaderboard/compare.py (harness.documents.CompareDocument). A metric regresses when it got "
    "worse by more than max_drop and the gate's test (gate.method, gate.multiple_testing) finds it significant.",
)


def error_rate(block: Mapping[str, Any]) -> float | None:
    """A headline block's error rate: the stored figure, or for documents written before it was stored (baselines
    committed earlier), errors over cases from ``operational``. None without cases."""
    if "error_rate" in block:
        return cast("float | None", block["error_rate"])
    ops = block.get("operational")
    return ops["errors"] / ops["cases"] if isinstance(ops, dict) and ops["cases"] else None
