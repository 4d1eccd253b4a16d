"""The journal, ``predictions.jsonl``: one record per finished case, appended as cases finish; the run's source
of truth.

A run with ``--epochs N`` (N > 1) or ``--probe`` writes one record per *item* instead: a case asked in an epoch
(``epoch``, written only when N > 1), as it is or as a probe's variant (``variant``, absent for the request as it
is). `read_items` reads every item keyed by `ItemKey` (case id, epoch, variant); `harness.epochs.reduce_items`
reduces them to one outcome a case. `read_journal`, keyed by case id alone, refuses such a journal rather than keep
one item a case: a reader that wants one verdict a case reduces the items, it never takes epoch 1 for the case.

A run killed part-way leaves a journal whose last line may be torn; `read_journal` cuts it off so that resuming
repeats only the cases that had not finished.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, cast

import orjson

from harness.cases.labels import UNKNOWN_ORIGIN, origin_of
from harness.cases.rewrites import REWRITES
from harness.documents import JournalError, JournalRecord
from harness.documents.run import Rewrite
from harness.errors import RunError, RunLoadError
from harness.files import atomic_write
from harness.redact import scrub_json
from harness.schema_messages import preview
from harness.types import ERROR_KINDS, PROBES, RISKS, CaseLabels, DetectorError, ItemKey, Outcome, Prediction
from harness.vocabulary import ORIGINS, ErrorKind, Origin, ProbeName, Risk

_ORIGINS = frozenset((*ORIGINS, UNKNOWN_ORIGIN))
ITEM_FIELDS: tuple[Literal["epoch", "variant", "permutation", "rewrite"], ...] = (
    "epoch", "variant", "permutation", "rewrite"
)  # fmt: skip
"""The fields of a journal line that say which item of its case it is; none of them in a plain run's journal."""
_PLAIN: Mapping[str, Any] = {}


class _Placement(TypedDict, total=False):
    """The fields of a journal line between its case and its attempts: where the case comes from, which item."""

    origin: Origin
    cluster: str
    epoch: int
    variant: ProbeName
    permutation: list[int]
    rewrite: Rewrite


class _Verdict(TypedDict):
    """The last fields of a journal line: the prediction (replayed from the cache or not), or the error for it."""

    cached: NotRequired[bool]
    risk: Risk | None
    score: float | None
    response: NotRequired[dict[str, Any]]
    error: JournalError | None


def record(
    labels: CaseLabels,
    prediction: Prediction | None,
    error: DetectorError | None,
    attempts: int,
    latency_s: float,
    item: Mapping[str, Any] = _PLAIN,
    cluster: str | None = None,
) -> JournalRecord:
    """One journal line for a finished case (or item): its prediction, or the error that stands for it.

    The case's category, expected risk and origin (when it has an ``origin_*`` tag) ride along so that
    leaderboards and comparisons can pair runs case by case from their journals alone; they are written after the
    detector answered and never reach it. ``item`` holds the line's `ITEM_FIELDS` (``epoch``, ``variant``,
    ``permutation``) for a run with epochs or probes; empty, the line is what a plain run writes. ``cluster``: the
    case's cluster key under the run's ``--cluster-by`` (`harness.cases.clusters`), None for a case alone.
    """
    replayed = prediction is not None and prediction.cached
    return {
        "id": labels.case_id,
        "hash": labels.content_hash,
        "category": labels.category,
        "expected": labels.expected_risk,
        **_placement(labels, item, cluster),
        "attempts": attempts,
        "latency_s": 0.0 if replayed else round(latency_s, 6),  # a replayed answer took no detector time
        **_verdict(prediction, error),
    }


def _placement(labels: CaseLabels, item: Mapping[str, Any], cluster: str | None) -> _Placement:
    placement: _Placement = {}
    if (origin := origin_of(labels.tags)) in ORIGINS:  # untagged cases keep the journal as it was
        placement["origin"] = origin
    if cluster is not None:  # a case alone keeps the journal as it was
        placement["cluster"] = cluster
    for field in ITEM_FIELDS:
        if field in item:
            placement[field] = item[field]
    return placement


def _verdict(prediction: Prediction | None, error: DetectorError | None) -> _Verdict:
    if prediction is not None:
        answer: _Verdict = {
            "risk": prediction.risk,
            "score": prediction.score,
            "response": prediction.extra,
            "error": None,
        }
        return {"cached": True, **answer} if prediction.cached else answer
    assert error is not None
    # DetectorError.kind is a plain str: the journal keeps whatever kind a detector raised (its readers check it)
    err: JournalError = {"kind": cast(ErrorKind, error.kind), "message": error.message}
    if error.raw is not None:
        err["raw"] = error.raw
    if error.traceback is not None:
        err["traceback"] = error.traceback
    return {"risk": None, "score": None, "error": err}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def record_problem(rec: Any) -> tuple[str, str] | None:
    """(field, message) for the first field of a journal record whose type or range is wrong; None when sound.

    Journals can be edited by hand: a reader must neither crash on one nor silently take a value it cannot mean."""
    if not isinstance(rec, dict):
        return "(line)", f"{preview(rec)} is not a JSON object"
    for key in ("id", "hash", "category"):
        if not isinstance(rec.get(key), str) or not rec[key]:
            return key, f"{preview(rec.get(key))} is not a non-empty string"
    if rec.get("expected") not in RISKS:
        return "expected", f"{preview(rec.get('expected'))} is not one of {', '.join(RISKS)}"
    if rec.get("origin", UNKNOWN_ORIGIN) not in _ORIGINS:
        return "origin", f"{preview(rec.get('origin'))} is not one of {', '.join(sorted(_ORIGINS))}"
    if "cluster" in rec and (not isinstance(rec["cluster"], str) or not rec["cluster"]):
        return "cluster", f"{preview(rec['cluster'])} is not a non-empty string"
    if item_problem := _item_problem(rec):
        return item_problem
    error = rec.get("error")
    if error is None and rec.get("risk") not in RISKS:
        return "risk", f"{preview(rec.get('risk'))} is not one of {', '.join(RISKS)} (and the record has no error)"
    if error is not None and rec.get("risk") is not None:
        return "risk", "a record with an error has no risk (null)"
    if error is not None and (not isinstance(error, dict) or error.get("kind") not in ERROR_KINDS):
        return "error.kind", f"{preview(error)} is not an error of a known kind ({', '.join(ERROR_KINDS)})"
    score = rec.get("score")
    if score is not None and not (_number(score) and 0.0 <= score <= 1.0):
        return "score", f"{preview(score)} is not a number in [0, 1] or null"
    if error is not None and score is not None:  # a score beside an error would reach the score metrics
        return "score", "a record with an error has no score (null)"
    if "response" in rec and not isinstance(rec["response"], dict):
        return "response", f"{preview(rec['response'])} is not a JSON object (what else the detector returned)"
    attempts = rec.get("attempts", 1)
    least = 0 if rec.get("cached") is True else 1  # a reply replayed from the response cache asked no one: 0
    if not (isinstance(attempts, int) and not isinstance(attempts, bool) and attempts >= least):
        return "attempts", f"{preview(attempts)} is not a whole number of {least} or more"
    latency = rec.get("latency_s", 0.0)
    if not (_number(latency) and 0.0 <= latency < math.inf):
        return "latency_s", f"{preview(latency)} is not a number of seconds, 0 or more"
    return None


def _item_problem(rec: dict[str, Any]) -> tuple[str, str] | None:
    """(field, message) for a wrong `ITEM_FIELDS` value; None when the line's item fields are sound or absent."""
    epoch = rec.get("epoch", 1)
    if not (isinstance(epoch, int) and not isinstance(epoch, bool) and epoch >= 1):
        return "epoch", f"{preview(epoch)} is not a whole number of 1 or more"
    variant = rec.get("variant")
    if "variant" in rec and variant not in PROBES:
        return "variant", f"{preview(variant)} is not one of {', '.join(PROBES)}"
    if "rewrite" in rec and (problem := _rewrite_problem(variant, rec["rewrite"])):
        return problem
    if "permutation" not in rec:
        return None
    perm = rec["permutation"]
    if variant not in ("order", "evidence-order"):
        return "permutation", "only an order or evidence-order variant has a permutation"
    ok = isinstance(perm, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in perm)
    if not ok or sorted(perm) != list(range(len(perm))):
        return "permutation", f"{preview(perm)} is not a permutation of 0..n-1"
    return None


def _rewrite_problem(variant: Any, rewrite: Any) -> tuple[str, str] | None:
    """(field, message) for a ``rewrite`` that no probe of `harness.cases.rewrites` writes; None when sound."""
    if variant not in REWRITES:
        return "rewrite", f"only a variant of {', '.join(REWRITES)} has a rewrite"
    if not isinstance(rewrite, dict):
        return "rewrite", f"{preview(rewrite)} is not an object with a kind and answers (indices)"
    answers, kind = rewrite.get("answers"), rewrite.get("kind")
    sound = (
        isinstance(kind, str) and kind != "" and isinstance(answers, list) and all(map(_index, answers))
        and ("position" not in rewrite or _index(rewrite["position"]))
    )  # fmt: skip
    return None if sound else ("rewrite", f"{preview(rewrite)} is not an object with a kind and answers (indices)")


def _index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def item_key(rec: JournalRecord) -> ItemKey:
    """The item a checked journal record answers: (case id, epoch, variant)."""
    return ItemKey(rec["id"], rec.get("epoch", 1), rec.get("variant"))


def is_item_record(rec: Mapping[str, Any]) -> bool:
    """Whether a journal line belongs to a run with epochs or probes (it says which item it answers)."""
    return "epoch" in rec or "variant" in rec


def outcome_of(rec: JournalRecord) -> Outcome:
    """The compact outcome a journal record stands for."""
    error = rec.get("error")
    response = rec.get("response")
    usage = response.get("usage") if isinstance(response, dict) else None
    return Outcome(
        case_id=rec["id"],
        content_hash=rec["hash"],
        risk=rec["risk"] if rec.get("risk") in RISKS else None,
        score=rec.get("score"),
        error_kind=error["kind"] if error else None,
        attempts=int(rec.get("attempts", 1)),
        latency_s=float(rec.get("latency_s", 0.0)),
        prompt_tokens=_tokens(usage, "prompt_tokens"),
        completion_tokens=_tokens(usage, "completion_tokens"),
        estimated_tokens=_tokens(usage, "estimated_tokens"),
        error_message=str(error.get("message", "")) if error else None,
        cached=bool(rec.get("cached", False)),
        epoch=rec.get("epoch", 1),
        variant=rec.get("variant"),
    )


def _tokens(usage: Any, key: str) -> int:
    value = usage.get(key) if isinstance(usage, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _journal_lines(path: Path, repair: bool) -> list[bytes]:
    """The complete lines of a journal; a last line without its newline (a write cut short by a crash) is left
    out, and with ``repair`` truncated away."""
    data = path.read_bytes()
    complete = data.rfind(b"\n") + 1
    if complete < len(data) and repair:
        fd = open_own(path, os.O_WRONLY)  # never truncate what a link points to
        try:
            os.ftruncate(fd, complete)
        finally:
            os.close(fd)
    return data[:complete].splitlines()


def read_journal(path: str | Path, *, repair: bool = True) -> dict[str, Outcome]:
    """Outcomes in a journal by case id (a later line for the same id wins).

    A last line without its newline is a write cut short by a crash: with ``repair`` it is truncated away.
    A malformed line elsewhere is an error that names the file and line. A journal of a run with epochs or probes
    (several items a case) is refused, naming its first such line: read it with `read_items`.
    """
    path = Path(path)
    if not path.exists():
        return {}
    outcomes: dict[str, Outcome] = {}
    for line_no, rec in enumerate(checked_records(path, _journal_lines(path, repair)), start=1):
        if is_item_record(rec):
            raise RunLoadError(refuse_items(path, line_no, rec))
        outcome = outcome_of(rec)
        outcomes[outcome.case_id] = outcome
    return outcomes


def refuse_items(path: Path, line_no: int, rec: Mapping[str, Any]) -> str:
    """Why a reader that keeps one line a case refuses a journal of items, naming the line."""
    field = "epoch" if "epoch" in rec else "variant"
    return (f"{path}:{line_no}: {field}: the journal of a run with --epochs or --probe holds several items a case; "
            "this reader keeps one line a case (read it with read_items and reduce it: harness.epochs)")  # fmt: skip


def read_items(path: str | Path, *, repair: bool = True) -> dict[ItemKey, Outcome]:
    """Every item's outcome in a journal by (case id, epoch, variant), a later line for the same item winning (as
    a resume leaves it). A plain run's journal gives one item a case: (id, 1, None). A torn last line and a
    malformed line are handled as `read_journal` handles them."""
    path = Path(path)
    if not path.exists():
        return {}
    items: dict[ItemKey, Outcome] = {}
    for rec in checked_records(path, _journal_lines(path, repair)):
        items[item_key(rec)] = outcome_of(rec)
    return items


def checked_records(path: Path, lines: Iterable[bytes]) -> Iterator[JournalRecord]:
    """The records of a journal's complete ``lines`` (read from ``path``), each checked by `record_problem`.

    A line that is no JSON, or a record with a wrong field, raises RunLoadError naming the file, the line and the
    field."""
    for line_no, line in enumerate(lines, start=1):
        try:
            rec = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise RunLoadError(f"{path}:{line_no}: (line): unreadable journal record: {exc}") from exc
        if problem := record_problem(rec):
            raise RunLoadError(f"{path}:{line_no}: {problem[0]}: {problem[1]}")
        yield cast(JournalRecord, rec)  # record_problem found it sound


def in_file_order(path: str | Path, ids: list[str]) -> None:
    """Rewrite a journal (atomically) so that its records follow ``ids``, the cases file's order, one per item.

    Cases are sent in a shuffled order and finish in any order; the journal a run leaves is still in file order,
    a case's items by epoch, then the request as it is before the probes' variants (in `PROBES` order). A later
    line for an item replaces an earlier one (as `read_items` reads it); lines for other ids, and a line of a variant
    no probe makes (edited by hand), are kept, after: such a line never stands in for an item's own.
    """
    path = Path(path)
    lines = path.read_bytes().splitlines(keepends=True) if path.exists() else []
    by_item: dict[tuple[int, Any, int], bytes] = {}
    others: list[bytes] = []
    rank = {case_id: i for i, case_id in enumerate(ids)}
    for line in lines:
        rec = orjson.loads(line)
        case_id = rec.get("id") if isinstance(rec, dict) else None
        if case_id in rank and (variant := rec.get("variant")) in _VARIANT_RANK:
            by_item[(rank[case_id], rec.get("epoch", 1), _VARIANT_RANK[variant])] = line
        else:
            others.append(line)
    ordered = [by_item[k] for k in sorted(by_item)] + others
    if ordered != lines:
        atomic_write(path, b"".join(ordered))


_VARIANT_RANK: dict[str | None, int] = {None: 0, **{probe: i for i, probe in enumerate(PROBES, start=1)}}


def open_own(path: Path, flags: int) -> int:
    """A descriptor for the run folder's own file ``path``, opened with ``flags``: never through a symbolic link
    (O_NOFOLLOW), since what the run writes or truncates there must not land in another file; `RunError` names it."""
    try:
        return os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RunError(
                f"{path} is a symbolic link; a run never writes through one: replace it by the file"
            ) from None
        raise RunError(f"{path}: {exc.strerror or exc}") from None


_FREE_TEXT: tuple[Literal["message", "raw", "traceback"], ...] = ("message", "raw", "traceback")
"""The fields of a journal error that hold free text (what a detector or a traceback said)."""


def scrub_record(rec: JournalRecord, secrets: list[str]) -> JournalRecord:
    """``rec`` with ``secrets`` scrubbed from its free text only: the detector's ``response`` and the error's
    message, raw reply and traceback. The record's keys, ids, hash, category, risks, numbers, booleans and nulls
    are never touched: a secret that is also a word of the journal (``hash``, ``risk``, ``null``, ``high``) must
    not change what the line means."""
    out: JournalRecord = {**rec}
    if (response := rec.get("response")) is not None:
        out["response"] = scrub_json(response, secrets)
    if isinstance(error := rec.get("error"), dict):
        scrubbed: JournalError = {**error}
        for field in _FREE_TEXT:
            if field in error:
                scrubbed[field] = scrub_json(error[field], secrets)
        out["error"] = scrubbed
    return out


class JournalWriter:
    """Appends records to ``predictions.jsonl``; each line reaches the OS as soon as its case finishes.

    Any of ``secrets`` that a detector echoes back is replaced by ``[REDACTED]`` in the free text of a record
    (`scrub_record`) before it reaches the disk. With ``keep``, the records written are kept too (`kept`, by item,
    a later one winning as on reading back), so that a run that wrote its whole journal itself can write its reports
    without reading it back.
    """

    def __init__(self, path: str | Path, secrets: list[str] | None = None, *, keep: bool = False) -> None:
        self.path = Path(path)
        fd = open_own(Path(path), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        self._file = os.fdopen(fd, "ab")  # closed by close()
        self._secrets = [s for s in secrets or [] if s]
        self.kept: dict[ItemKey, JournalRecord] | None = {} if keep else None

    def write(self, rec: JournalRecord) -> JournalRecord:
        """Append ``rec``; returns the record as written (scrubbed), for everything computed from it."""
        if self._secrets:
            rec = scrub_record(rec, self._secrets)
        with self._naming_the_file():
            self._file.write(orjson.dumps(rec, default=repr, option=orjson.OPT_NON_STR_KEYS) + b"\n")
            self._file.flush()
        if self.kept is not None:
            self.kept[item_key(rec)] = rec
        return rec

    @contextlib.contextmanager
    def _naming_the_file(self) -> Iterator[None]:
        """An OSError of a write (a full disk) names the journal: the error alone says only "[Errno 28]"."""
        try:
            yield
        except OSError as exc:
            if exc.filename:
                raise
            raise OSError(exc.errno, exc.strerror, str(self.path)) from exc

    def close(self) -> None:
        try:
            with self._naming_the_file():
                self._file.flush()
                os.fsync(self._file.fileno())
        finally:
            with contextlib.suppress(OSError):  # what could not be flushed is lost; the error above says where
                self._file.close()
