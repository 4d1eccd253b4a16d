"""A response cache: a detector's replies stored by its fingerprint and a digest of the request (SQLite, WAL).

Running an unchanged language-model or HTTP detector over the same cases again need not pay for every call again.
Only answers are stored, never errors; stored values pass through the same secret scrubbing as the journal
(`harness.redact.scrub_json`), replayed values are checked as fresh replies are, and the keys are digests of the
redacted fingerprint and of the request (which holds no secret). Several runs, in several processes, may share one
cache file: SQLite in WAL mode serialises the writers and readers never wait. A cache in trouble is skipped, never
an error for a case (`ResponseCache`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import sys
from contextvars import ContextVar
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from harness.detectors.reply import stored_prediction
from harness.redact import scrub_json
from harness.spec import DetectorSpec
from harness.types import Detector, DetectorError, HasPreflight, HasSecrets, Prediction, Request

CACHE_FILE = "responses.sqlite3"
BUSY_TIMEOUT_MS = 30_000  # a writer in another process holds the lock for one short insert at a time

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    detector TEXT NOT NULL,
    request TEXT NOT NULL,
    reply BLOB NOT NULL,
    stored TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (detector, request)
) WITHOUT ROWID
"""


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/fcb-harness``, or ``~/.cache/fcb-harness`` (the user cache directory on Linux)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fcb-harness"


def cache_wanted(spec: DetectorSpec, enabled: bool | None, temperature: float, samples: int) -> bool:
    """Whether to use the cache. ``enabled`` None means the default: on for ``llm:`` detectors sampling at
    temperature 0 (deterministic enough to replay), off for everything else, which may be non-deterministic."""
    if enabled is not None:
        return enabled
    return spec.kind == "llm" and temperature == 0 and samples == 1


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


def detector_key(spec: DetectorSpec, fingerprint: dict[str, Any], risk_field: tuple[str, ...]) -> str:
    """The detector half of a key: the spec as given (its `identity`, a digest: two functions of one file, or two
    URLs that differ only in a secret, are two detectors), its fingerprint (its code), and where the risk is read
    from in a reply."""
    return _digest({"spec": spec.identity, "fingerprint": fingerprint, "risk_field": list(risk_field)})


EPOCH: ContextVar[int] = ContextVar("fcb_epoch", default=1)
"""The epoch of the request being assessed in this task (``fcb eval --epochs``; set by `harness.run.items`): the
detector never sees it, the cache keys each epoch apart so that a repeat is never a replay of another epoch."""


def request_key(request: Request, epoch: int = 1) -> str:
    """The request half of a key: a digest of exactly what the detector is sent, and of its epoch after the first
    (epoch 1's key is a plain run's: a one-epoch run and epoch 1 share their stored replies)."""
    return _digest(request) if epoch == 1 else _digest({"epoch": epoch, "request": request})


class ResponseCache:
    """One SQLite file of replies. ``refresh`` ignores what is stored (and replaces it with fresh replies).

    The cache only ever saves calls; it never changes a case's outcome. A cache that cannot be opened or read (a
    truncated or garbage file, a read-only one, a directory in its place) is skipped, and one that cannot be
    written (a full disk) is no longer written, each with one warning on stderr, never an error for a case. A
    stored reply that is not a valid reply (an edited row) is asked again, as a miss.
    """

    def __init__(self, directory: str | Path, *, refresh: bool = False, secrets: list[str] | None = None) -> None:
        self.path = Path(directory) / CACHE_FILE
        self.refresh = refresh
        self._secrets = [s for s in secrets or [] if s]
        self.hits = self.misses = 0
        self._db: sqlite3.Connection | None = None
        self._writable = True
        self._warned: set[str] = set()
        try:
            self._db = self._open()
        except (sqlite3.Error, OSError) as exc:
            self._give_up(exc)

    def _open(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # autocommit (isolation_level None): each insert is its own short transaction, so concurrent runs interleave
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute(_SCHEMA)
            db.execute("SELECT count(*) FROM replies").fetchone()  # a garbage file fails here, not mid-run
        except BaseException:
            db.close()
            raise
        return db

    def _warn(self, what: str, message: str) -> None:
        if what not in self._warned:  # once a kind of trouble: a full disk would otherwise warn for every case
            self._warned.add(what)
            print(f"fcb: warning: response cache {self.path}: {message}", file=sys.stderr)

    def _give_up(self, exc: BaseException) -> None:
        self._warn("unusable", f"cannot be used ({exc}); the run goes on without it (--no-cache hides this)")
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None

    def get(self, detector: str, request: str) -> Prediction | None:
        """The stored reply, as a `Prediction` checked like a fresh reply; None to ask the detector."""
        if self.refresh or self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT reply FROM replies WHERE detector = ? AND request = ?", (detector, request)
            ).fetchone()
        except sqlite3.Error as exc:
            self._give_up(exc)
            return None
        prediction = None if row is None else self._replayed(row[0])
        if prediction is None:
            self.misses += 1
            return None
        self.hits += 1
        return prediction

    def _replayed(self, blob: Any) -> Prediction | None:
        try:
            prediction = stored_prediction(orjson.loads(blob))
        except (orjson.JSONDecodeError, TypeError, DetectorError) as exc:
            reason = exc.message if isinstance(exc, DetectorError) else f"not JSON ({exc})"
            self._warn("invalid", f"a stored reply is not a valid reply ({reason}); its case is asked again")
            return None
        return replace(prediction, attempts=0, cached=True)

    def put(self, detector: str, request: str, prediction: Prediction) -> None:
        """Store a fresh answer; a cache that cannot be written is left alone (one warning), the answer stands."""
        if self._db is None or not self._writable:
            return
        # stored as the journal keeps it: a secret the detector echoed (or a long start of one) is scrubbed
        extra = scrub_json(prediction.extra, self._secrets)
        data = orjson.dumps(
            {"risk": prediction.risk, "score": prediction.score, "extra": extra},
            default=repr,
            option=orjson.OPT_NON_STR_KEYS,
        )
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO replies (detector, request, reply) VALUES (?, ?, ?)", (detector, request, data)
            )
        except sqlite3.Error as exc:
            self._writable = False
            self._warn("write", f"cannot be written ({exc}); answers are no longer stored, the run goes on")

    def close(self) -> None:
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


FORWARDED = ("concurrency", "train_source_items", "fingerprint", "budget")
"""The abilities (`harness.types`: HasConcurrency, HasTrainingItems, HasFingerprint; and `HasBudget`) the cache
keeps of what it wraps, as they are: a batch detector behind the cache still asks for its batch's worth of requests
in flight, and an answer from the cache costs nothing against the caps."""


class CachedDetector:
    """A detector whose answers come from the cache when stored there, and are stored when fresh.

    Errors pass through and are never stored. A cached answer is a `Prediction` with ``cached`` set and
    ``attempts`` 0: the journal marks it and the operational figures count it apart. It has every ability of
    the detector it wraps (`FORWARDED`, and ``secrets`` and ``preflight``), and only those.
    """

    def __init__(self, inner: Detector, cache: ResponseCache, key: str, owns: bool = True) -> None:
        self.inner, self.cache, self._key, self._owns = inner, cache, key, owns
        self.name = inner.name

    def __getattr__(self, name: str) -> Any:
        if name in FORWARDED:  # only when the wrapped detector has it: isinstance checks look for the attribute
            return getattr(self.inner, name)
        raise AttributeError(name)

    def secrets(self) -> list[str]:
        return list(self.inner.secrets()) if isinstance(self.inner, HasSecrets) else []

    async def _answer(self, request: Request, call: Any) -> Prediction:
        digest = request_key(request, EPOCH.get())
        if (stored := self.cache.get(self._key, digest)) is not None:
            return stored
        prediction: Prediction = await call(request)
        self.cache.put(self._key, digest, prediction)
        return replace(prediction, cached=False)

    async def assess(self, request: Request) -> Prediction:
        return await self._answer(request, self.inner.assess)

    async def preflight(self, request: Request) -> Prediction:
        # a stored answer stands for the preflight too: a fully cached run sends nothing at all
        inner = self.inner
        return await self._answer(request, inner.preflight if isinstance(inner, HasPreflight) else inner.assess)

    async def aclose(self) -> None:
        """Close the cache, and the wrapped detector when it is this wrapper's (``owns``)."""
        try:
            if self._owns:
                await self.inner.aclose()
        finally:
            self.cache.close()


def with_cache(
    detector: Detector,
    spec: DetectorSpec,
    fingerprint: dict[str, Any],
    *,
    risk_field: tuple[str, ...],
    directory: str | None,
    refresh: bool,
    owns: bool = True,
) -> CachedDetector:
    """``detector`` behind a response cache in ``directory`` (default: `default_cache_dir`)."""
    secrets = detector.secrets() if isinstance(detector, HasSecrets) else []
    cache = ResponseCache(directory or default_cache_dir(), refresh=refresh, secrets=secrets)
    return CachedDetector(detector, cache, detector_key(spec, fingerprint, risk_field), owns)
