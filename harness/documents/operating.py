"""The ``operating_points`` block of ``metrics.json``: what a detector's verdicts cost and catch when they decide
which cases go to a person (`harness.operating`), and the ``threshold`` block of a run asked with ``fcb eval
--threshold FILE`` (`harness.threshold`). docs/reports.md gives each figure's formula."""

from __future__ import annotations

from typing import Annotated, Literal

from typing_extensions import TypedDict

from harness.documents.fields import Count, Doc, Interval, Rate, Share


class OperatingPoint(TypedDict):
    """One escalation policy's figures, each with a percentile bootstrap interval over cases."""

    escalated: Annotated[Count, Doc("cases escalated (an error never is)")]
    escalation_rate: Annotated[Rate, Doc("escalated / cases: the share a person reviews")]
    escalation_rate_ci95: Interval | None
    false_consensus_caught: Annotated[Rate, Doc("escalated cases labelled high / cases labelled high")]
    false_consensus_caught_ci95: Interval | None
    right_consensus_escalated: Annotated[Rate, Doc("escalated cases labelled low / cases labelled low")]
    right_consensus_escalated_ci95: Interval | None


class RiskCoverage(TypedDict):
    """The cases let through from the lowest risk up, and the share of false consensus among them."""

    by: Annotated[Literal["risk_score", "verdict"], Doc("what ranks the cases: risk_score, or the verdict when the "
                                                        "run has no score")]  # fmt: skip
    aurc: Annotated[Rate, Doc("area under the risk-coverage curve: the sum over its steps of coverage gained x risk; "
                              "lower is better; null without cases")]  # fmt: skip
    curve: Annotated[list[Interval], Doc("[coverage, risk] after each group of tied cases (at most 101, evenly "
                                         "spaced, both ends kept)")]  # fmt: skip


class ScoreOperatingPoint(TypedDict):
    """Escalating the cases scored ``threshold`` or more."""

    threshold: float
    escalation_rate: Share
    false_consensus_caught: Rate
    right_consensus_escalated: Rate


class OperatingPoints(TypedDict):
    """Escalation policies on the verdicts, the risk-coverage curve, and the policies along risk_score."""

    n_cases: Count
    n_false_consensus: Annotated[Count, Doc("cases labelled high")]
    n_right_consensus: Annotated[Count, Doc("cases labelled low")]
    n_errors: Annotated[Count, Doc("cases without a verdict: never escalated")]
    policies: Annotated[
        dict[Literal["high", "high_or_medium"], OperatingPoint],
        Doc("high: escalate the cases called high; high_or_medium: those called medium or high"),
    ]
    risk_coverage: RiskCoverage
    by_score: Annotated[list[ScoreOperatingPoint], Doc("one point a distinct risk_score, highest first (at most 101); "
                                                       "empty without scores")]  # fmt: skip


class ThresholdDev(TypedDict):
    """The dev run a threshold was chosen on, and what the threshold did there."""

    run: Annotated[str, Doc("the dev run's folder, as given")]
    dataset: str
    sha256: Annotated[str, Doc("of the dev run's cases")]
    n_cases: Count
    n_false_consensus: Annotated[Count, Doc("dev cases labelled high: the sample the promise rests on")]
    missed: Annotated[Count, Doc("of them, not escalated at the threshold")]
    miss_rate: Rate
    bound: Annotated[
        Share, Doc("the bound the method put on the miss rate at the threshold (at most miss_rate_target)")
    ]
    escalated: Count
    escalation_rate: Rate


class ThresholdDocument(TypedDict):
    """``fcb threshold DEV_RUN --miss-rate A``: a threshold on risk_score (or on the verdict) and its promise: on new
    cases from the dev run's population, escalating the cases at or above it misses at most A of the false
    consensus (``probable``: with the stated confidence; ``expected``: on average over dev sets)."""

    fcb_threshold: Literal[1]
    basis: Annotated[
        Literal["risk_score", "verdict"],
        Doc("what the threshold is on: risk_score, or the verdict (2 high, 1 medium, 0 low) without scores"),
    ]
    threshold: Annotated[float | None, Doc("escalate the cases whose basis is this or more; null: escalate none")]
    miss_rate_target: Share
    method: Annotated[Literal["probable", "expected"], Doc("probable: the Clopper-Pearson upper bound of the miss "
                                                           "rate at the confidence is at most the target; expected: "
                                                           "conformal risk control, (missed + 1) / (n + 1) at most "
                                                           "the target")]  # fmt: skip
    confidence: Annotated[Share | None, Doc("probable: the confidence of the bound; null for expected")]
    detector: Annotated[str, Doc("the dev run's detector spec: a threshold holds for that detector alone")]
    fingerprint: Annotated[str, Doc("the dev run's detector fingerprint id (empty when it kept none)")]
    created: str
    dev: ThresholdDev
    promise: Annotated[str, Doc("the promise in words")]


class ThresholdCheck(TypedDict):
    """``fcb eval --threshold FILE``: the threshold's miss and escalation rates on this run, beside its promise."""

    file: str
    promise: str
    miss_rate_target: Share
    basis: Literal["risk_score", "verdict"]
    threshold: float | None
    n_cases: Count
    n_false_consensus: Count
    missed: Annotated[Count, Doc("cases labelled high not escalated (an error or a missing score is not escalated)")]
    miss_rate: Rate
    miss_rate_ci95: Annotated[Interval | None, Doc("Clopper-Pearson 95% interval of this run's miss rate")]
    escalated: Count
    escalation_rate: Rate
    within: Annotated[bool | None, Doc("whether this run's miss rate is at most the target; null without a case "
                                       "labelled high")]  # fmt: skip
