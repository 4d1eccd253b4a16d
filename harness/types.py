"""The whole contract of the harness in one place: read this file first.

A *case* (one line of ``cases.jsonl``) holds a question, agent answers and labels. The harness turns it into a
*request* that carries no label, hands the request to a *detector*, and records the detector's *prediction* (or
the error that stood in its place). Metrics are computed from predictions and the labels kept in `CaseLabels`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypedDict, runtime_checkable

from harness.documents import Metrics, MetricsDocument
from harness.vocabulary import (  # the contract's words, defined once there: re-exported in __all__
    CATEGORIES,
    CATEGORY_RISK,
    ERROR_KINDS,
    PROBES,
    REDUCERS,
    RISKS,
    Category,
    ErrorKind,
    ProbeName,
    Reducer,
    Risk,
)


class Answer(TypedDict):
    agent_id: str
    text: str


class _RequestRequired(TypedDict):
    task: str
    answers: list[Answer]


class Request(_RequestRequired, total=False):
    """What a detector receives: ``task`` and ``answers`` always, ``evidence`` only when the case has some.

    Written as a required base and a ``total=False`` subclass rather than with ``NotRequired``: under
    ``from __future__ import annotations`` Python 3.11 cannot see a ``NotRequired`` at run time, and counted
    ``evidence`` among ``Request.__required_keys__``."""

    evidence: list[str]


@dataclass(frozen=True, slots=True)
class Prediction:
    """A detector's answer for one request. ``extra`` keeps whatever else the detector returned."""

    risk: Risk
    score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    attempts: int = 1
    cached: bool = False  # replayed from the response cache (harness.run.cache), not asked of the detector this run


class DetectorError(Exception):
    """A detector failed on one case. ``kind`` is one of `ERROR_KINDS`; ``attempts`` counts tries made. The facts a
    caller decides on ride as fields, never to be read back out of ``message``: ``status``, the HTTP status of an
    ``http_status`` error; ``connect_failed``, no connection could be made at all (refused, unknown host, TLS);
    ``misread``, the reply was a JSON object without the risk where the run reads it (a misspelled field, another
    contract): every reply will be so, and a preflight stops the run."""

    def __init__(
        self,
        kind: str,
        message: str,
        attempts: int = 1,
        raw: str | None = None,
        traceback: str | None = None,
        *,
        status: int | None = None,
        connect_failed: bool = False,
        misread: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.attempts = attempts
        self.raw = raw
        self.traceback = traceback  # a Python detector's own traceback, secrets scrubbed
        self.status = status
        self.connect_failed = connect_failed
        self.misread = misread


class RunAborted(KeyboardInterrupt):
    """The user's third Ctrl-C: the run ends at once. The one `BaseException` that adapters let through; any other
    that detector code raises (``sys.exit()``, ``KeyboardInterrupt``) is a ``detector_exception`` for its case."""


class Detector(Protocol):
    """Anything that can assess a request. Raise `DetectorError` for a failure that belongs to one case.

    A detector may also have any of the optional abilities below (`HasSecrets`, `HasPreflight`, `HasFingerprint`,
    `HasTrainingItems`, `HasConcurrency`); the harness asks ``isinstance(detector, HasSecrets)`` and so on, and does
    without the ability when the answer is no.
    """

    name: str

    async def assess(self, request: Request) -> Prediction: ...

    async def aclose(self) -> None: ...


@runtime_checkable
class HasSecrets(Protocol):
    """Holds values that must never be written anywhere (a token, a password in a URL). The run scrubs them from
    every error message, journal line and cache entry. Without it: nothing beyond the environment's secret-looking
    variables is scrubbed."""

    def secrets(self) -> list[str]: ...


@runtime_checkable
class HasPreflight(Protocol):
    """Answers the run's first case, the preflight, its own way: the HTTP adapters fail at once on an endpoint that
    cannot be reached, instead of after every retry. Without it: the preflight calls ``assess``."""

    async def preflight(self, request: Request) -> Prediction: ...


@runtime_checkable
class HasFingerprint(Protocol):
    """Says what identifies the code behind it, for ``run.json``, the leaderboard and the response cache's key;
    plain or ``async``. Without it: `harness.detectors.fingerprint` works one out from the spec."""

    def fingerprint(self) -> dict[str, Any] | Awaitable[dict[str, Any]]: ...


@runtime_checkable
class HasTrainingItems(Protocol):
    """Was fitted on cases: the ``source_item`` of each (``dataset:item``, or the case id). A run refuses to score
    it on a file that shares one (``builtin:learned`` has it; so may a Python detector class)."""

    train_source_items: Collection[str]


@runtime_checkable
class HasConcurrency(Protocol):
    """Wants this many requests in flight, when that is more than ``--concurrency`` (to fill its batches)."""

    concurrency: int


@dataclass(frozen=True, slots=True)
class CaseLabels:
    """The compact per-case record that metrics need: labels and breakdown keys, no text."""

    line: int
    case_id: str
    content_hash: str
    category: str
    expected_risk: Risk
    majority_correct: bool | None
    n_answers: int
    has_evidence: bool
    families: tuple[str, ...]  # distinct model_family labels, sorted; empty when no answer has one
    families_complete: bool  # every answer carries a model_family
    any_saw_other_answers: bool
    any_shared_context: bool
    tags: tuple[str, ...]
    source_dataset: str
    source_item: str  # "dataset:item" for cases from a public source; the case id for original cases


@dataclass(frozen=True, slots=True)
class Outcome:
    """What happened to one case in a run: a prediction or an error, with attempts and latency."""

    case_id: str
    content_hash: str
    risk: Risk | None
    score: float | None
    error_kind: str | None
    attempts: int
    latency_s: float
    prompt_tokens: int = 0  # token usage, for detectors that report it (language models)
    completion_tokens: int = 0
    error_message: str | None = None
    cached: bool = False  # the answer came from the response cache: its latency and tokens are counted apart
    # which item of the case this is (`ItemKey`): epoch 1 and no variant for a run without --epochs or --probe; a
    # case's outcome reduced over its epochs (`harness.epochs.reduce_items`) has epoch 0
    epoch: int = 1
    variant: str | None = None
    estimated_tokens: int = 0  # of the tokens, what was counted at its most: the replies gave no usable count


class ItemKey(NamedTuple):
    """One unit of work of a run: a case, asked in epoch ``epoch`` (1..N), as it is (``variant`` None) or as a
    probe's variant (one of `PROBES`). The journal, the response cache and resume key answers by it."""

    case_id: str
    epoch: int = 1
    variant: str | None = None


BUDGET_STOP = "budget: "
"""How the reason of a run stopped by ``--max-requests`` or ``--max-cost`` begins (it resumes with a higher cap)."""
PROVIDER_STOP = "provider: "
"""How the reason of a run stopped by its provider begins: a quota spent, or nothing answered for
``stall_patience`` seconds of throttling (it resumes once the provider answers)."""


@dataclass(slots=True, repr=False)
class RunResult:
    """What `harness.run` returns: the run folder, the metrics document and the per-case records.

    ``figures`` is the metrics block (``result.figures["macro_f1"]``), ``document`` the whole ``metrics.json``.
    ``metrics``, the whole document under its first name, still works for one release and warns: it read as the
    metrics block, which it never was."""

    run_dir: str
    document: MetricsDocument  # the whole metrics.json document
    labels: list[CaseLabels]
    outcomes: list[Outcome]
    complete: bool
    problems: list[str] = field(default_factory=list)  # every problem found in the cases file, as printed
    stopped: str | None = None  # why the run stopped early: "interrupted", a `BUDGET_STOP` or `PROVIDER_STOP`, or a
    # streak of errors
    # per case id, what the run folder and the cases file hold beyond the labels (question, reply, reason): read on
    # demand by `frame`, so that a run never keeps the texts in memory (`harness.run.details` provides it)
    case_details: Callable[[], Mapping[str, Mapping[str, Any]]] | None = field(default=None, repr=False, compare=False)

    @property
    def metrics(self) -> MetricsDocument:
        """Deprecated: the whole ``metrics.json`` document; use ``document`` (or ``figures`` for its metrics)."""
        import warnings

        warnings.warn("RunResult.metrics is the whole document: use .document, or .figures for the metrics block; "
                      "it goes in the next release", DeprecationWarning, stacklevel=2)  # fmt: skip
        return self.document

    @property
    def figures(self) -> Metrics:
        """Every figure of the run (the document's ``metrics`` block): ``result.figures["accuracy"]``."""
        return self.document["metrics"]

    def __repr__(self) -> str:
        # short: asyncio's teardown reprs the finished run task (its result included) while restoring the SIGINT
        # handler, and the full per-case lists of 10,000 cases took 0.16 s to print
        state = "complete" if self.complete else f"incomplete ({self.stopped or 'partial'})"
        return f"RunResult(run_dir={self.run_dir!r}, cases={len(self.labels)}, {state})"

    def frame(self) -> Any:
        """Per-case results as a pandas DataFrame (one row per evaluated case): labels, the prediction or error,
        and the question, the detector's whole reply and its ``reason`` (None where the run folder or the cases
        file no longer holds them)."""
        import pandas as pd  # imported here: the CLI never pays for pandas

        by_id = {o.case_id: o for o in self.outcomes}
        details = self.case_details() if self.case_details is not None else {}
        rows = []
        for lab in self.labels:
            out = by_id.get(lab.case_id)
            more = details.get(lab.case_id, {})
            rows.append(
                {
                    "id": lab.case_id,
                    "category": lab.category,
                    "origin": next((t.removeprefix("origin_") for t in lab.tags if t.startswith("origin_")), None),
                    "question": more.get("question"),
                    "expected_risk": lab.expected_risk,
                    "predicted_risk": out.risk if out else None,
                    "risk_score": out.score if out else None,
                    "error": out.error_kind if out else "not_run",
                    "correct": bool(out and out.risk == lab.expected_risk),
                    "attempts": out.attempts if out else 0,
                    "latency_s": out.latency_s if out else None,
                    "n_answers": lab.n_answers,
                    "has_evidence": lab.has_evidence,
                    "families": ",".join(lab.families),
                    "tags": ",".join(lab.tags),
                    "reply": more.get("reply"),
                    "reason": more.get("reason"),
                }
            )
        return pd.DataFrame(rows)


__all__ = [  # the contract: what this module defines and the vocabulary it re-exports
    "BUDGET_STOP",
    "CATEGORIES",
    "CATEGORY_RISK",
    "ERROR_KINDS",
    "PROBES",
    "PROVIDER_STOP",
    "REDUCERS",
    "RISKS",
    "Answer",
    "CaseLabels",
    "Category",
    "Detector",
    "DetectorError",
    "ErrorKind",
    "HasConcurrency",
    "HasFingerprint",
    "HasPreflight",
    "HasSecrets",
    "HasTrainingItems",
    "ItemKey",
    "Outcome",
    "Prediction",
    "ProbeName",
    "Reducer",
    "Request",
    "Risk",
    "RunAborted",
    "RunResult",
]
