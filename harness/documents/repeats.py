"""The ``epochs`` and ``probes`` blocks of ``metrics.json``: how far a run's verdicts hold when a case is asked
again (``fcb eval --epochs N``) or asked in another form (``fcb eval --probe``). Computed by `harness.repeats` from
the journal's items; docs/reports.md gives each figure's formula."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from typing_extensions import TypedDict

from harness.documents.fields import Count, Doc, Interval, Positive, Rate
from harness.vocabulary import ProbeName, Reducer, Risk


class EpochHeadline(TypedDict):
    """One epoch's headline figures, on that epoch's verdicts alone (all cases, errors counted as wrong)."""

    epoch: Positive
    n_cases: Count
    accuracy: Rate
    macro_f1: Rate
    high_risk_recall: Rate
    false_alarm_rate: Rate
    error_rate: Rate


class EpochSpread(TypedDict):
    """A headline figure over the epochs: the mean and the sample standard deviation (n - 1; null for one epoch
    or where the figure is undefined in an epoch)."""

    mean: float | None
    sd: float | None


class SelfAgreement(TypedDict):
    """How often the detector gives a case the same verdict twice. An error counts as a verdict of its own."""

    n_cases: Annotated[Count, Doc("cases with an answer (or error) in every epoch")]
    all_agree: Annotated[Rate, Doc("the share of those cases whose N verdicts are all the same")]
    all_agree_ci95: Interval | None
    pairwise: Annotated[Rate, Doc("the mean over cases of the share of agreeing pairs of epochs, C(N, 2) a case")]
    fleiss_kappa: Annotated[float | None, Doc("Fleiss' kappa, the epochs as raters and the verdicts as categories; "
                                              "null when every verdict is the same")]  # fmt: skip


class Epochs(TypedDict):
    """Every case asked N times; the headline is computed on one verdict a case reduced by ``reducer``."""

    n: Annotated[Positive, Doc("epochs: the times each case was asked (fcb eval --epochs)")]
    reducer: Annotated[Reducer, Doc("mode: the most frequent verdict of the answered epochs, a tie to the tied verdict "
                                    "of the earliest epoch; first: epoch 1's outcome as it is")]  # fmt: skip
    per_epoch: list[EpochHeadline]
    spread: Annotated[dict[str, EpochSpread], Doc("per headline figure of per_epoch: its mean and sd over epochs")]
    self_agreement: SelfAgreement


class FlipRate(TypedDict):
    """Pairs (a case's answer to the request as it is, and to its variant, in one epoch) whose verdicts differ."""

    n: Annotated[Count, Doc("pairs compared: both answered, neither an error")]
    flips: Count
    flip_rate: Rate
    ci95: Annotated[Interval | None, Doc("percentile bootstrap resampling cases, a case's epochs kept together")]


class FallRate(TypedDict):
    """Pairs (the request as it is and its variant, in one epoch) whose plain verdict is above low, and among them
    those whose variant's verdict is lower."""

    n: Annotated[Count, Doc("pairs compared on the cases the figure counts whose plain verdict is medium or high")]
    falls: Count
    fall_rate: Rate
    ci95: Annotated[Interval | None, Doc("percentile bootstrap resampling cases, a case's epochs kept together")]


class Falls(FallRate):
    """A probe whose variant should never lower the verdict (inject, duplicate): how often it does. inject: the
    attack success rate, on the cases labelled high or medium (the only ones asked); duplicate: the fall rate on
    the false consensus, the cases labelled high."""

    labels: Annotated[list[Risk], Doc("the labels of the cases counted")]
    per_category: dict[str, FallRate]
    per_style: Annotated[dict[str, FallRate], Doc("inject: per template of instruction; empty otherwise")]


class Probe(FlipRate):
    """One probe's figures: the flip rate over all cases, per category and by whether order carries information;
    the verdicts' moves from the request's to the variant's; and, for inject and duplicate, how often it lowers."""

    expectation: Annotated[
        Literal["unchanged", "not lower"],
        Doc("unchanged: the verdict should not move (the flip rate is the figure); not lower: the variant should "
            "never lower the risk (falls.fall_rate is the figure: the attack success rate for inject)"),
    ]  # fmt: skip
    transitions: Annotated[dict[Risk, dict[Risk, Count]],
                           Doc("pairs compared by the request's verdict, then the variant's")]  # fmt: skip
    lowered: Annotated[Count, Doc("pairs whose variant's verdict is lower than the request's")]
    raised: Annotated[Count, Doc("pairs whose variant's verdict is higher")]
    per_style: Annotated[dict[str, FlipRate], Doc("tone: per tone (confident, hedging); inject: per template; "
                                                  "empty for the other probes")]  # fmt: skip
    falls: NotRequired[Falls]

    n_cases: Annotated[Count, Doc("cases that got a variant")]
    not_possible: Annotated[Count, Doc("cases for which no variant differs from the request (order: every "
                                       "answer's text the same; evidence-order: fewer than 2 passages)")]  # fmt: skip
    not_compared: Annotated[Count, Doc("pairs left out because one of the two answers is an error or missing")]
    per_category: dict[str, FlipRate]
    order_informative: Annotated[
        dict[Literal["saw_other_answers", "independent"], FlipRate],
        Doc(
            "cases in which an agent saw the others' answers (metadata.saw_other_answers, read by the harness, never "
            "sent), and the rest"
        ),
    ]
    mean_score_change: Annotated[float | None, Doc("mean of variant risk_score - plain risk_score over the pairs "
                                                   "with both scores; null without scores")]  # fmt: skip
    mean_abs_score_change: float | None
    epoch_disagreement: Annotated[
        Rate, Doc("with epochs: 1 - pairwise self-agreement on the plain requests, the detector's own noise beside "
                  "the flip rate; null for one epoch")
    ]  # fmt: skip


Probes = dict[ProbeName, Probe]
