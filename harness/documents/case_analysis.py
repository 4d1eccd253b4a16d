"""``fcb cases --format json``: case-level analysis over several detectors' runs on one data set. Written by
``harness/leaderboard/case_analysis.py``: how many detectors get each case right (difficulty), how well being right
on it tracks a detector's overall score (discrimination), and the cases whose label the strongest detectors all
dispute the same way (suspect labels)."""

from __future__ import annotations

from typing import Annotated, Literal, NotRequired

from typing_extensions import TypedDict

from harness.documents.boards import BoardDataset
from harness.documents.fields import Count, Doc, Limits, Positive, Share, Text, configure, titled
from harness.vocabulary import Origin, Risk

Correlation = Annotated[float, Limits(ge=-1.0000001, le=1.0000001)]  # a correlation may round a hair past 1


class CaseAnalysisDetector(TypedDict):
    detector: Annotated[Text, Doc("the run's --name, or its detector spec")]
    spec: Text
    run: Annotated[str, Doc("the run folder")]
    macro_f1: Annotated[Share, Doc("the run's headline macro-F1 over all its cases (metrics.json): its score here")]
    errors: Annotated[Count, Doc("cases on which the run's detector failed (counted as wrong)")]
    strongest: Annotated[bool, Doc("one of the strongest detectors that decide suspect labels")]
    complete: Annotated[bool, Doc("the run finished every case of its data set (false: a --limit run)")]


configure(CaseAnalysisDetector, extra="forbid")


class CaseAnalysisCase(TypedDict):
    id: Text
    category: Text
    origin: NotRequired[Origin]
    expected: Risk
    predicted: Annotated[
        str,
        Limits(pattern="^[lmhe]+$"),
        Doc("one letter per detector, in the order of detectors: l, m, h, or e for an errored prediction"),
    ]
    right: Annotated[Count, Doc("detectors whose prediction equals the label")]
    errored: Annotated[Count, Doc("detectors that failed on the case (counted as wrong in difficulty)")]
    difficulty: Annotated[Share, Doc("the share of detectors right: right / detectors (low: a hard case)")]
    discrimination: Annotated[
        Correlation | None,
        Doc(
            "point-biserial correlation between being right on the case (1/0, an error is 0) and the detectors' "
            "macro-F1; null when every detector is right, every one is wrong, or all macro-F1 are equal"
        ),
    ]
    suspect: Annotated[bool, Doc("listed in suspects")]


configure(CaseAnalysisCase, extra="forbid")


class CaseAnalysisSuspect(TypedDict):
    id: Text
    category: Text
    origin: NotRequired[Origin]
    expected: Risk
    predicted: Annotated[Risk, Doc("the prediction every strongest detector made, which is not the label")]
    distance: Annotated[int, Limits(ge=1, le=2), Doc("how many risk levels the prediction is from the label")]
    agreeing: Annotated[Positive, Doc("detectors, strongest or not, that made the same prediction")]
    difficulty: Share
    discrimination: Correlation | None


configure(CaseAnalysisSuspect, extra="forbid")


class CaseAnalysisSummary(TypedDict):
    cases: Annotated[Count, Doc("cases analysed: every run holds these (dataset.cases when the runs are complete)")]
    detectors: Positive
    strongest: Annotated[Positive, Doc("detectors counted as strongest (more than --strongest on a tie)")]
    errored_predictions: Annotated[Count, Doc("(detector, case) pairs that errored, counted as wrong")]
    cases_with_errors: Count
    all_right: Count
    all_wrong: Count
    discrimination_undefined: Count
    negative_discrimination: Annotated[Count, Doc("cases that the weaker detectors get right more often")]
    suspects: Count
    mean_difficulty: Share | None


configure(CaseAnalysisSummary, extra="forbid")


class CaseAnalysisMethod(TypedDict):
    score: Literal["macro_f1"]
    strongest_requested: Annotated[Positive, Doc("--strongest: how many of the best detectors decide a suspect")]
    difficulty: str
    discrimination: str
    suspect: str
    errors: str


configure(CaseAnalysisMethod, extra="forbid")


class CaseAnalysisDocument(TypedDict):
    """``fcb cases --format json``: the case-level analysis of runs of several detectors on one data set."""

    dataset: BoardDataset
    method: CaseAnalysisMethod
    summary: CaseAnalysisSummary
    detectors: Annotated[list[CaseAnalysisDetector], Limits(min_length=2)]
    suspects: Annotated[list[CaseAnalysisSuspect], Doc("most suspect first: more detectors agreeing, then farther off")]
    cases: Annotated[list[CaseAnalysisCase], Doc("every case, in id order")]


titled(
    CaseAnalysisDocument,
    "fcb cases --format json: per-case difficulty, discrimination and suspect labels over several detectors' runs",
    "Written by harness/leaderboard/case_analysis.py (harness.documents.CaseAnalysisDocument). All runs are on one "
    "data set (one sha256) and hold the same cases (summary.cases: all of the data set's, or the same --limit in "
    "each). An undefined figure is null.",
)
