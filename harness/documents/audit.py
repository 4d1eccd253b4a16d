"""``fcb audit-dataset --format json``: what a benchmark's own wording, sizes and sources give away. Written by
``fcb_datasets/audit/`` (one part per module there: surface baselines, exact rules, count leakage, shape tells,
overlap, composition, verdict)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, NotRequired

from typing_extensions import TypedDict

from harness.documents.fields import Count, Doc, Interval, Limits, Positive, Sha256, Share, configure
from harness.documents.run import Consensus
from harness.vocabulary import Origin

AnswerCounts = dict[Annotated[str, Limits(pattern="^[0-9]+$")], Count]
"""Cases by how many answers they hold (the count as a decimal key)."""
Listed = Annotated[int, Limits(ge=0)]
Side = Literal["train", "test"]
"""The audit's two files: the one its models learn from, and the one they are scored on."""
CaseOrigin = Literal[Origin, "unknown"]
"""A case's origin_* tag, or unknown without one."""
Similarity = Annotated[float, Limits(ge=0, le=1.0001)]  # a cosine may round a hair above 1


class AuditFile(TypedDict):
    path: str
    sha256: Sha256
    cases: Count


class AuditFiles(TypedDict):
    train: AuditFile
    test: AuditFile
    split_by: Literal["source-item"] | None
    seconds: Annotated[float, Limits(ge=0)]


class AuditSettings(TypedDict):
    max_surface_f1: Share
    seed: int
    bootstrap: Positive
    max_shape_auc: Share
    max_structure_auc: Share
    search: Annotated[
        NotRequired[bool],
        Doc(
            "false: each surface model at one setting, without the grouped cross-validated grid search "
            "(fcb audit-dataset --quick); absent in audits written before the setting existed: searched"
        ),
    ]


# ---- surface baselines: models fitted on TRAIN's wording and sizes alone -------------------------------------------


class SurfaceBaseline(TypedDict):
    name: str
    description: str
    params: dict[str, Any]
    cv_macro_f1: float | None
    macro_f1: Share
    ci: Interval
    risk_macro_f1: Share
    risk_ci: Interval
    per_category: dict[str, Share]


class Surface(TypedDict):
    baselines: Annotated[list[SurfaceBaseline], Limits(min_length=8)]
    test_cases: Count
    train_cases: Count


# ---- exact rules and count leakage ---------------------------------------------------------------------------------

RuleKind = Literal["question n-gram", "answer n-gram", "question prefix", "answer prefix", "answer count"]


class Rule(TypedDict):
    kind: RuleKind
    text: str
    longest_equivalent: str
    equivalent_features: Positive
    target: Annotated[list[str], Limits(min_length=1, max_length=2)]
    in_target: Count
    with_feature: Count
    target_size: Count
    precision: Annotated[float, Limits(ge=0.95, le=1)]
    recall: Annotated[float, Limits(ge=0.3, le=1)]


class RuleTarget(TypedDict):
    distinct_rules: Count
    features: Count


class TopNgram(TypedDict):
    ngram: str
    weight: float


class RuleThresholds(TypedDict):
    precision: float
    recall: float
    listed_per_target: Count


class Rules(TypedDict):
    rules: list[Rule]
    total: Count
    by_target: dict[str, RuleTarget]
    min_cases: Count
    top_ngrams: dict[str, list[TopNgram]]
    thresholds: RuleThresholds


class CountLeakage(TypedDict):
    by_category: dict[str, AnswerCounts]
    by_source: dict[str, AnswerCounts]
    count_only_macro_f1: Share


# ---- shape tells: constructed cases found, truth inside a shape, answer position -----------------------------------


class OriginTell(TypedDict):
    source: str
    constructed: Count
    real: Count
    rules: list[Rule]
    auc: Annotated[
        Share | None,
        Doc("ROC-AUC on TEST of a TF-IDF classifier for constructed cases; null when either side has too few cases"),
    ]


class TruthInside(TypedDict):
    source: str
    origin: str
    train_cases: Count
    test_cases: Count
    wrong_majorities_test: Count
    auc: Share
    auc_low: Annotated[Share, Doc("lower end of a 95% bootstrap interval of auc")]
    text_auc: Annotated[Share, Doc("ROC-AUC of a TF-IDF model over question and answers")]
    text_auc_low: Annotated[Share, Doc("lower end of a 95% bootstrap interval of text_auc")]
    finding: bool


class Position(TypedDict):
    source: str
    category: str
    cases: Count
    gap: Annotated[float, Limits(ge=-1, le=1)]
    z: float | None
    finding: bool


class ShapeThresholds(TypedDict):
    max_shape_auc: Share
    origin_auc_warning: Share
    position_effect: Share
    position_z: float
    min_side: int


class Shape(TypedDict):
    """Tells shared by several categories (fcb_datasets/audit/shape.py): constructed cases found by a rule or a
    classifier, truth inside a shape, answer position."""

    origin: list[OriginTell]
    truth_inside: list[TruthInside]
    positions: list[Position]
    thresholds: ShapeThresholds


# ---- structure baselines: what counting votes is worth -------------------------------------------------------------


class StructureBaseline(TypedDict):
    """One structure-only baseline scored on TEST: its risk macro-F1 over every case, and on the cases with a
    consensus (majority_correct true or false) the same block a run's metrics.json holds; a finding when either
    ROC-AUC is over max_structure_auc."""

    name: str
    description: str
    risk_macro_f1: Share
    risk_ci: Interval
    consensus: Consensus | None
    high_vs_low: Annotated[
        Consensus | None,
        Doc("the same block on the cases labelled high or low alone (high: a wrong consensus, low: a right one)"),
    ]


class Unread(TypedDict):
    answers: Count
    unread: Count


class Structure(TypedDict):
    """Baselines that read each answer's final value (harness/final_answer.py) and count them, and know nothing of
    the truth (fcb_datasets/audit/structure.py)."""

    baselines: list[StructureBaseline]
    max_structure_auc: Annotated[Share, Doc("a finding when a structure model's consensus ROC-AUC on TEST is over it")]
    unread: Annotated[
        dict[str, Unread], Doc("per source data set, TEST's answers and those no final value was read in")
    ]


# ---- overlap and composition ---------------------------------------------------------------------------------------


class CaseRef(TypedDict):
    file: Side
    line: Positive
    id: str
    source_item: str
    question: str


class CasePair(TypedDict):
    """Two cases and the one measure that paired them."""

    a: CaseRef
    b: CaseRef
    similarity: NotRequired[Similarity]
    cosine: NotRequired[Similarity]
    shared_share: NotRequired[Similarity]


class Pairs(TypedDict):
    pairs: Count
    cases: Count
    listed: Annotated[list[CasePair], Limits(max_length=20)]


class PairSet(TypedDict):
    across_files: Pairs
    within_train_different_source: Pairs
    within_test_different_source: Pairs
    within_train_same_source: Pairs
    within_test_same_source: Pairs


class SharedItems(TypedDict):
    count: Count
    test_cases: Count
    listed: Annotated[list[str], Limits(max_length=20)]


class OverlapThresholds(TypedDict):
    near_duplicate_cosine: float
    answer_reuse_share: float


class Overlap(TypedDict):
    shared_source_items: SharedItems
    identical_questions: PairSet
    near_duplicate_questions: PairSet
    answer_reuse: PairSet
    thresholds: OverlapThresholds


class CompositionRow(TypedDict):
    category: str
    source: str
    origin: CaseOrigin
    train: Count
    test: Count


class PerFile(TypedDict):
    train: Share
    test: Share


class CountsPerFile(TypedDict):
    train: AnswerCounts
    test: AnswerCounts


class Composition(TypedDict):
    rows: list[CompositionRow]
    evidence_share: PerFile
    answers_per_case: CountsPerFile
    origins: list[str]


# ---- the verdict ---------------------------------------------------------------------------------------------------


class Finding(TypedDict):
    kind: str
    message: str


class Verdict(TypedDict):
    status: Literal["pass", "fail"]
    findings: list[Finding]
    warnings: list[Finding]


class AuditDocument(TypedDict):
    audit_version: Literal[4]
    files: AuditFiles
    settings: AuditSettings
    categories: Annotated[list[str], Limits(min_length=2)]
    surface: Surface
    rules: Rules
    count_leakage: CountLeakage
    shape: Shape
    structure: Structure
    overlap: Overlap
    composition: Composition
    verdict: Verdict


for _part in (AuditFile, AuditFiles, AuditSettings, SurfaceBaseline, Surface, Rule, RuleTarget, TopNgram,
              RuleThresholds, Rules, CountLeakage, Shape, StructureBaseline, Unread, Structure, OriginTell, TruthInside,
              Position, ShapeThresholds, CaseRef,
              CasePair, Pairs, PairSet, SharedItems, OverlapThresholds, Overlap, CompositionRow, PerFile,
              CountsPerFile, Composition, Finding, Verdict):  # fmt: skip
    configure(_part, extra="forbid")
configure(
    AuditDocument,
    extra="forbid",
    title="fcb audit-dataset output",
    json_schema_extra={
        "description": "The document `fcb audit-dataset --format json` prints: surface baselines, exact rules, count "
        "leakage, overlap, composition and the verdict. Written by fcb_datasets/audit/ "
        "(harness.documents.AuditDocument)."
    },
)
