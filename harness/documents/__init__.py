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
| audit       | ``fcb audit-dataset --format json``         | `AuditDocument` (its parts in `harness.documents.audit`) |
| case-analysis | ``fcb cases --format json``             | `CaseAnalysisDocument` (harness.documents.case_analysis) |
| suite       | the suite file of ``fcb suite`` (TOML)      | `Suite` (pydantic, in `harness.documents.suite`) |

Constraints and descriptions ride on the types as small markers (`Limits`, `Doc`) that pydantic reads when it builds
a schema; this module imports no pydantic itself, so the contract costs no start-up time. Fields a document of an
older version lacks are ``NotRequired``: readers accept every version still in use (committed baselines among
them). Undefined figures are None in Python and null in JSON, never 0 or NaN (see `harness.metrics`).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import orjson

from harness.documents.audit import AuditDocument
from harness.documents.boards import (
    BaselineCases,
    BaselineDocument,
    BoardCard,
    BoardDataset,
    BoardMethod,
    CategoryDelta,
    CompareDocument,
    CompareRun,
    CompareSettings,
    EceDelta,
    Flipped,
    FlippedCase,
    Gate,
    GateEpochs,
    LeaderboardBoard,
    LeaderboardRow,
    MetricDelta,
    error_rate,
)
from harness.documents.case_analysis import (
    CaseAnalysisCase,
    CaseAnalysisDetector,
    CaseAnalysisDocument,
    CaseAnalysisMethod,
    CaseAnalysisSummary,
    CaseAnalysisSuspect,
)
from harness.documents.fields import Doc, Limits
from harness.documents.operating import (
    OperatingPoint,
    OperatingPoints,
    RiskCoverage,
    ScoreOperatingPoint,
    ThresholdCheck,
    ThresholdDev,
    ThresholdDocument,
)
from harness.documents.repeats import (
    EpochHeadline,
    Epochs,
    EpochSpread,
    FallRate,
    Falls,
    FlipRate,
    Probe,
    Probes,
    SelfAgreement,
)
from harness.documents.run import (
    Bootstrap,
    Calibration,
    CategoryAccuracy,
    ClassScores,
    Clusters,
    ConfusionMatrix,
    Consensus,
    Dataset,
    DesignEffects,
    DetectorInfo,
    ErrorMessage,
    GroupAccuracy,
    Headline,
    HeadlineReal,
    Identity,
    JournalError,
    JournalRecord,
    Metrics,
    MetricsDocument,
    Operational,
    PerClass,
    Predicted,
    ReliabilityBin,
    RunManifest,
    ScopeDocument,
    ScoreMetrics,
    Session,
    Settings,
    Subset,
    Tokens,
)

__all__ = [  # the documents and their parts, imported from here
    "SCHEMAS",
    "BaselineCases",
    "BaselineDocument",
    "BoardCard",
    "BoardDataset",
    "BoardMethod",
    "Bootstrap",
    "Calibration",
    "CaseAnalysisCase",
    "CaseAnalysisDetector",
    "CaseAnalysisDocument",
    "CaseAnalysisMethod",
    "CaseAnalysisSummary",
    "CaseAnalysisSuspect",
    "CategoryAccuracy",
    "CategoryDelta",
    "ClassScores",
    "Clusters",
    "CompareDocument",
    "CompareRun",
    "CompareSettings",
    "ConfusionMatrix",
    "Consensus",
    "Dataset",
    "DesignEffects",
    "DetectorInfo",
    "Doc",
    "EceDelta",
    "EpochHeadline",
    "EpochSpread",
    "Epochs",
    "ErrorMessage",
    "FallRate",
    "Falls",
    "FlipRate",
    "Flipped",
    "FlippedCase",
    "Gate",
    "GateEpochs",
    "GroupAccuracy",
    "Headline",
    "HeadlineReal",
    "Identity",
    "JournalError",
    "JournalRecord",
    "LeaderboardBoard",
    "LeaderboardRow",
    "Limits",
    "MetricDelta",
    "Metrics",
    "MetricsDocument",
    "OperatingPoint",
    "OperatingPoints",
    "Operational",
    "PerClass",
    "Predicted",
    "Probe",
    "Probes",
    "ReliabilityBin",
    "RiskCoverage",
    "RunManifest",
    "ScopeDocument",
    "ScoreMetrics",
    "ScoreOperatingPoint",
    "SelfAgreement",
    "Session",
    "Settings",
    "Subset",
    "ThresholdCheck",
    "ThresholdDev",
    "ThresholdDocument",
    "Tokens",
    "check",
    "error_rate",
    "generated",
    "schema",
    "schema_file_text",
    "schema_text",
    "validator",
]

SCHEMAS: tuple[str, ...] = (
    "metrics",
    "journal",
    "run",
    "scope",
    "baseline",
    "leaderboard",
    "compare",
    "audit",
    "case-analysis",
    "suite",
    "threshold",
)
"""The documents that have a shipped JSON Schema, by the name ``fcb schema`` takes."""


# ---- definitions, schemas and checks -------------------------------------------------------------------------------

DEFINITIONS: dict[str, Any] = {
    "metrics": MetricsDocument,
    "journal": JournalRecord,
    "run": RunManifest,
    "scope": ScopeDocument,
    "baseline": BaselineDocument,
    "leaderboard": list[LeaderboardBoard],
    "compare": CompareDocument,
    "audit": AuditDocument,
    "case-analysis": CaseAnalysisDocument,
    "threshold": ThresholdDocument,
}
"""Each generated document's definition, by name."""


@cache
def _adapter(name: str) -> Any:
    from pydantic import TypeAdapter  # imported on use: only readers of a run folder and schema tools need it

    if name == "suite":  # pydantic models: imported on use, as pydantic itself
        from harness.documents.suite import Suite

        return TypeAdapter(Suite)
    return TypeAdapter(DEFINITIONS[name])


def generated(name: str) -> dict[str, Any]:
    """The JSON Schema that document ``name`` (one of `SCHEMAS`) has by its definition."""
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
