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
