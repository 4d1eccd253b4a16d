"""The response cache (`harness.run.cache`) in process: when it is used, its keys (digests worked out here with
hashlib and orjson), what it counts as hits and misses, what it stores (scrubbed) and replays (attempts 0, cached),
its settings on the SQLite file, the warnings a user reads when it is in trouble, and the detector wrapper that
forwards exactly the abilities of what it wraps. tests/run/test_cache.py drives it end to end."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

import harness.run.cache as cache_mod
from harness.run.cache import (
    BUSY_TIMEOUT_MS,
    CACHE_FILE,
    EPOCH,
    FORWARDED,
    CachedDetector,
    ResponseCache,
    cache_wanted,
    default_cache_dir,
    detector_key,
    request_key,
    with_cache,
)
from harness.spec import parse_spec
from harness.types import DetectorError, Prediction

LLM = parse_spec("llm:gpt@http://127.0.0.1:9/v1")
REQUEST = {"task": "Q?", "answers": [{"agent_id": "a", "text": "t"}]}


def _sha(value: Any) -> str:
    """sha256 of the JSON with sorted keys, written out here (the module's own helper is what is tested)."""
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


# --- default_cache_dir, cache_wanted --------------------------------------------------------------------------------


def test_the_default_directory_follows_xdg_then_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "fcb-harness"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # empty: as unset
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "fcb-harness"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == tmp_path / "home" / ".cache" / "fcb-harness"


def test_the_cache_is_on_by_default_only_for_a_deterministic_llm() -> None:
    """llm at temperature 0 and one sample: on; temperature 0.1, or 2 samples, or another kind: off; an explicit
    choice wins either way."""
    assert cache_wanted(LLM, None, 0.0, 1) is True
    assert cache_wanted(LLM, None, 0.1, 1) is False
    assert cache_wanted(LLM, None, 0.0, 2) is False
    assert cache_wanted(parse_spec("builtin:agreement"), None, 0.0, 1) is False
    assert cache_wanted(parse_spec("http://127.0.0.1:9/x"), None, 0.0, 1) is False
    assert cache_wanted(parse_spec("builtin:agreement"), True, 0.7, 3) is True
    assert cache_wanted(LLM, False, 0.0, 1) is False


# --- keys -------------------------------------------------------------------------------------------------------------


def test_a_request_key_is_the_digest_of_the_request_and_of_its_epoch_after_the_first() -> None:
    assert request_key(REQUEST) == _sha(REQUEST) == request_key(REQUEST, 1)
    assert request_key(REQUEST, 2) == _sha({"epoch": 2, "request": REQUEST})
    assert request_key(REQUEST, 3) not in (request_key(REQUEST), request_key(REQUEST, 2))
    reordered = {"answers": REQUEST["answers"], "task": "Q?"}
    assert request_key(reordered) == request_key(REQUEST)  # keys sorted: the order of a dict's keys is no change
    assert request_key({1: "x"}) == hashlib.sha256(b'{"1":"x"}').hexdigest()  # a key that is no string


def test_a_detector_key_digests_the_spec_identity_the_fingerprint_and_the_risk_field() -> None:
    fingerprint = {"kind": "llm", "model": "gpt"}
    expected = _sha({"spec": LLM.identity, "fingerprint": fingerprint, "risk_field": ["a", "b"]})
    assert detector_key(LLM, fingerprint, ("a", "b")) == expected
    assert LLM.identity == hashlib.sha256(b"llm:gpt@http://127.0.0.1:9/v1").hexdigest()
    assert detector_key(LLM, fingerprint, ("b", "a")) != expected


# --- ResponseCache ----------------------------------------------------------------------------------------------------


def test_the_sqlite_file_is_made_with_its_settings(tmp_path: Path) -> None:
    """busy_timeout 30,000 ms (timeout 30 s), WAL, synchronous NORMAL (1), autocommit; the folder is made."""
    cache = ResponseCache(tmp_path / "a" / "b")
    assert cache.path == tmp_path / "a" / "b" / "responses.sqlite3" and CACHE_FILE == "responses.sqlite3"
    assert BUSY_TIMEOUT_MS == 30_000
    db = cache._db
    assert db is not None
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1
    assert db.isolation_level is None
    cache.close()
    assert cache._db is None
    cache.close()  # twice: nothing


def test_the_connection_waits_thirty_seconds_for_a_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    real = sqlite3.connect

    def spy(path: Any, **kw: Any) -> sqlite3.Connection:
        seen.update(kw)
        return real(path, **kw)

    monkeypatch.setattr(cache_mod.sqlite3, "connect", spy)
    ResponseCache(tmp_path).close()
    assert seen == {"timeout": 30.0, "isolation_level": None}


def test_a_miss_then_a_hit_counted_and_replayed_as_cached(tmp_path: Path) -> None:
    """get on an empty cache: a miss (1, 0); put; get: a hit (1, 1), attempts 0 and cached; another key: miss 2."""
    cache = ResponseCache(tmp_path)
    assert cache.get("d", "r") is None and (cache.misses, cache.hits) == (1, 0)
    cache.put("d", "r", Prediction("medium", 0.25, {"why": "x"}, attempts=3))
    got = cache.get("d", "r")
    assert got == Prediction("medium", 0.25, {"why": "x"}, attempts=0, cached=True)
    assert (cache.misses, cache.hits) == (1, 1)
    assert cache.get("d", "other") is None and cache.get("other", "r") is None
    assert (cache.misses, cache.hits) == (3, 1)
    cache.put("d", "r", Prediction("low"))  # replaced
    assert cache.get("d", "r") == Prediction("low", None, {}, attempts=0, cached=True)
    cache.close()


def test_a_stored_row_holds_risk_score_and_extra_with_secrets_scrubbed(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path, secrets=["", "sk-SECRET-123456"])
    cache.put("d", "r", Prediction("high", 1.0, {"echo": "token sk-SECRET-123456 here", 2: "n"}))
    cache.close()
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    ((blob,),) = db.execute("SELECT reply FROM replies WHERE detector = 'd' AND request = 'r'").fetchall()
    db.close()
    stored = orjson.loads(blob)
    assert set(stored) == {"risk", "score", "extra"} and stored["risk"] == "high" and stored["score"] == 1.0
    assert "sk-SECRET-123456" not in blob.decode() and stored["extra"]["2"] == "n"


def test_refresh_ignores_what_is_stored_and_stores_anew(tmp_path: Path) -> None:
    first = ResponseCache(tmp_path)
    first.put("d", "r", Prediction("low"))
    first.close()
    fresh = ResponseCache(tmp_path, refresh=True)
    assert fresh.get("d", "r") is None and (fresh.hits, fresh.misses) == (0, 0)
    fresh.put("d", "r", Prediction("high"))
    fresh.close()
    again = ResponseCache(tmp_path)
    assert again.get("d", "r") == Prediction("high", attempts=0, cached=True)
    again.close()


def _row(path: Path, blob: bytes) -> None:
    db = sqlite3.connect(path / CACHE_FILE)
    db.execute("INSERT OR REPLACE INTO replies (detector, request, reply) VALUES ('d', 'r', ?)", (blob,))
    db.commit()
    db.close()


def test_an_edited_row_is_a_miss_with_one_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = ResponseCache(tmp_path)
    _row(tmp_path, b'{"risk": "huge", "score": null, "extra": {}}')
    assert cache.get("d", "r") is None and cache.get("d", "r") is None
    assert (cache.hits, cache.misses) == (0, 2)
    err = capsys.readouterr().err
    assert err.count("\n") == 1  # the same trouble warns once
    assert err.startswith(f"fcb: warning: response cache {cache.path}: a stored reply is not a valid reply (")
    assert "stored risk" in err and err.endswith("); its case is asked again\n")
    _row(tmp_path, b"not json at all")
    cache._warned.clear()
    assert cache.get("d", "r") is None
    err = capsys.readouterr().err
    assert "a stored reply is not a valid reply (not JSON (" in err
    cache.close()


def test_a_garbage_file_is_skipped_with_one_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    cache = ResponseCache(tmp_path)
    assert cache._db is None
    assert cache.get("d", "r") is None and (cache.hits, cache.misses) == (0, 0)
    cache.put("d", "r", Prediction("low"))  # nothing to write to: nothing happens
    err = capsys.readouterr().err
    assert err.startswith(f"fcb: warning: response cache {tmp_path / CACHE_FILE}: cannot be used (")
    assert err.endswith("); the run goes on without it (--no-cache hides this)\n")
    cache.close()


def test_a_read_that_fails_gives_up_on_the_cache(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = ResponseCache(tmp_path)
    assert cache._db is not None
    cache._db.execute("DROP TABLE replies")
    assert cache.get("d", "r") is None
    assert cache._db is None and (cache.hits, cache.misses) == (0, 0)
    assert "cannot be used (no such table: replies)" in capsys.readouterr().err
    assert cache.get("d", "r") is None  # from now on: skipped


def test_a_write_that_fails_stops_writing_with_one_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = ResponseCache(tmp_path)
    assert cache._db is not None
    cache._db.execute("DROP TABLE replies")
    cache._db.execute("CREATE TABLE replies (detector TEXT, request TEXT, reply BLOB, stored TEXT, CHECK (0))")
    cache.put("d", "r", Prediction("low"))
    cache.put("d", "r2", Prediction("low"))
    assert cache._writable is False
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith(f"fcb: warning: response cache {cache.path}: cannot be written (")
    assert err.endswith("); answers are no longer stored, the run goes on\n")
    # reads go on: the table is there (empty), a miss
    assert cache.get("d", "r") is None and cache.misses == 1
    # and no further write is even tried
    cache._db.execute("DROP TABLE replies")
    cache._db.execute(cache_mod._SCHEMA)
    cache.put("d", "r", Prediction("high"))
    assert cache._db.execute("SELECT count(*) FROM replies").fetchone()[0] == 0
    cache.close()


def test_a_directory_that_cannot_be_made_is_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    cache = ResponseCache(tmp_path / "file" / "sub")
    assert cache._db is None and "cannot be used (" in capsys.readouterr().err


# --- CachedDetector ---------------------------------------------------------------------------------------------------


class Inner:
    """A detector that counts its calls and can fail."""

    name = "inner"
    concurrency = 5
    budget = "the budget"
    train_source_items = ("s1",)

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.closed = 0
        self.fail = fail

    async def assess(self, request: Any) -> Prediction:
        self.calls.append("assess")
        if self.fail:
            raise DetectorError("timeout", "slow", attempts=2)
        return Prediction("high", 0.75, {"n": len(self.calls)}, attempts=2)

    async def aclose(self) -> None:
        self.closed += 1

    def secrets(self) -> list[str]:
        return ["sk-one"]


class WithPreflight(Inner):
    async def preflight(self, request: Any) -> Prediction:
        self.calls.append("preflight")
        return Prediction("low", attempts=1)


def _wrapped(tmp_path: Path, inner: Any, owns: bool = True) -> CachedDetector:
    return CachedDetector(inner, ResponseCache(tmp_path), "key", owns)


def test_a_fresh_answer_is_stored_then_replayed(tmp_path: Path) -> None:
    inner = Inner()
    det = _wrapped(tmp_path, inner)
    first = asyncio.run(det.assess(REQUEST))
    assert first == Prediction("high", 0.75, {"n": 1}, attempts=2, cached=False)
    second = asyncio.run(det.assess(REQUEST))
    assert second == Prediction("high", 0.75, {"n": 1}, attempts=0, cached=True)
    assert inner.calls == ["assess"] and det.name == "inner"
    assert (det.cache.hits, det.cache.misses) == (1, 1)
    asyncio.run(det.aclose())


def test_each_epoch_is_its_own_entry(tmp_path: Path) -> None:
    """Epoch 1, then 2, then 1 again: two calls, the third a replay of the first."""
    inner = Inner()
    det = _wrapped(tmp_path, inner)

    async def go(epoch: int) -> Prediction:
        EPOCH.set(epoch)
        return await det.assess(REQUEST)

    a, b, c = (asyncio.run(go(e)) for e in (1, 2, 1))
    assert inner.calls == ["assess", "assess"]
    assert (a.cached, b.cached, c.cached) == (False, False, True)
    assert c.extra == {"n": 1} and b.extra == {"n": 2}
    db = sqlite3.connect(tmp_path / CACHE_FILE)
    keys = {r[0] for r in db.execute("SELECT request FROM replies")}
    db.close()
    assert keys == {request_key(REQUEST), request_key(REQUEST, 2)}
    asyncio.run(det.aclose())


def test_an_error_passes_through_and_is_never_stored(tmp_path: Path) -> None:
    inner = Inner(fail=True)
    det = _wrapped(tmp_path, inner)
    for _ in range(2):
        with pytest.raises(DetectorError):
            asyncio.run(det.assess(REQUEST))
    assert inner.calls == ["assess", "assess"]
    asyncio.run(det.aclose())


def test_a_preflight_uses_the_inner_preflight_else_assess_and_shares_the_store(tmp_path: Path) -> None:
    inner = WithPreflight()
    det = _wrapped(tmp_path / "a", inner)
    assert asyncio.run(det.preflight(REQUEST)) == Prediction("low", attempts=1, cached=False)
    assert asyncio.run(det.assess(REQUEST)) == Prediction("low", attempts=0, cached=True)
    assert inner.calls == ["preflight"]
    plain = Inner()
    det2 = _wrapped(tmp_path / "b", plain)
    assert asyncio.run(det2.preflight(REQUEST)).risk == "high"
    assert plain.calls == ["assess"]
    asyncio.run(det.aclose())
    asyncio.run(det2.aclose())


def test_the_wrapper_forwards_exactly_the_abilities_of_what_it_wraps(tmp_path: Path) -> None:
    assert FORWARDED == ("concurrency", "train_source_items", "fingerprint", "budget")
    det = _wrapped(tmp_path, Inner())
    assert (det.concurrency, det.train_source_items, det.budget) == (5, ("s1",), "the budget")
    assert not hasattr(det, "fingerprint")  # Inner has none
    with pytest.raises(AttributeError) as err:
        _ = det.temperature  # type: ignore[attr-defined]
    assert err.value.args == ("temperature",)
    assert det.secrets() == ["sk-one"]

    class Bare:
        name = "bare"

        async def assess(self, request: Any) -> Prediction:
            return Prediction("low")

        async def aclose(self) -> None:
            pass

    bare = _wrapped(tmp_path / "bare", Bare())
    assert bare.secrets() == [] and not hasattr(bare, "concurrency") and not hasattr(bare, "budget")
    asyncio.run(det.aclose())
    asyncio.run(bare.aclose())


def test_closing_closes_the_inner_only_when_owned_and_the_cache_always(tmp_path: Path) -> None:
    inner = Inner()
    owned = _wrapped(tmp_path / "a", inner, owns=True)
    asyncio.run(owned.aclose())
    assert inner.closed == 1 and owned.cache._db is None
    other = Inner()
    lent = _wrapped(tmp_path / "b", other, owns=False)
    asyncio.run(lent.aclose())
    assert other.closed == 0 and lent.cache._db is None
    assert CachedDetector(Inner(), ResponseCache(tmp_path / "c"), "k")._owns is True  # owns by default


def test_with_cache_builds_the_key_the_directory_and_the_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    inner = Inner()
    det = with_cache(inner, LLM, {"f": 1}, risk_field=("risk",), directory=None, refresh=True)
    assert det.cache.path == tmp_path / "xdg" / "fcb-harness" / CACHE_FILE
    assert det._key == detector_key(LLM, {"f": 1}, ("risk",)) and det.cache.refresh is True
    assert det.cache._secrets == ["sk-one"] and det._owns is True and det.inner is inner
    asyncio.run(det.aclose())
    lent = with_cache(inner, LLM, {}, risk_field=(), directory=str(tmp_path / "mine"), refresh=False, owns=False)
    assert lent.cache.path == tmp_path / "mine" / CACHE_FILE and lent.cache.refresh is False and lent._owns is False

    class NoSecrets:
        name = "n"

    bare = with_cache(NoSecrets(), LLM, {}, risk_field=(), directory=str(tmp_path / "n"), refresh=False)  # type: ignore[arg-type]
    assert bare.cache._secrets == []
    lent.cache.close()
    bare.cache.close()


# --- the rest of the trouble, and what is stored ---------------------------------------------------------------------


class BrokenDb:
    """A connection whose every call fails as a broken file's does, closing included."""

    def __init__(self) -> None:
        self.closed = 0

    def execute(self, *args: Any) -> Any:
        raise sqlite3.DatabaseError("disk image is malformed")

    def close(self) -> None:
        self.closed += 1
        raise sqlite3.OperationalError("cannot close")


def test_each_kind_of_trouble_warns_once_under_its_own_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An invalid row, then a failed write, then a failed read: three kinds, three warnings, one each; again each:
    nothing more."""
    cache = ResponseCache(tmp_path)
    _row(tmp_path, b'{"risk": "huge", "score": null, "extra": {}}')
    cache.get("d", "r")
    cache.get("d", "r")
    assert cache._warned == {"invalid"}
    assert cache._db is not None
    cache._db.execute("DROP TABLE replies")
    cache._db.execute("CREATE TABLE replies (detector TEXT, request TEXT, reply BLOB, stored TEXT, CHECK (0))")
    cache.put("d", "r", Prediction("low"))
    assert cache._warned == {"invalid", "write"}
    cache._db.execute("DROP TABLE replies")
    cache.get("d", "r")
    assert cache._warned == {"invalid", "write", "unusable"}
    assert capsys.readouterr().err.count("fcb: warning: response cache") == 3


def test_a_connection_that_fails_to_close_is_dropped_all_the_same(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    assert cache._db is not None
    cache._db.close()
    broken = BrokenDb()
    cache._db = broken  # type: ignore[assignment]
    assert cache.get("d", "r") is None  # the read fails; closing fails too; the cache is given up, quietly
    assert cache._db is None and broken.closed == 1
    other = ResponseCache(tmp_path / "b")
    assert other._db is not None
    other._db.close()
    other._db = BrokenDb()  # type: ignore[assignment]
    other.close()
    assert other._db is None


def test_the_warning_names_the_sqlite_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / CACHE_FILE).write_bytes(b"this is not a database" * 100)
    ResponseCache(tmp_path)
    assert "cannot be used (file is not a database)" in capsys.readouterr().err


def test_a_hit_is_counted_each_time(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("d", "r", Prediction("low"))
    for _ in range(3):
        assert cache.get("d", "r") is not None
    assert (cache.hits, cache.misses) == (3, 0)
    cache.close()


def test_an_invalid_stored_reply_is_named_by_its_fault(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A row that is JSON but no valid reply says what is wrong with it, never "not JSON"."""
    cache = ResponseCache(tmp_path)
    _row(tmp_path, b'{"risk": "huge", "score": null, "extra": {}}')
    cache.get("d", "r")
    err = capsys.readouterr().err
    assert "(stored risk " in err and "not JSON" not in err
    cache.close()


def test_what_json_cannot_hold_is_stored_as_its_repr_without_secrets(tmp_path: Path) -> None:
    """No secrets (nothing scrubbed): an object is stored as its repr, a number key as its text."""

    class Thing:
        def __repr__(self) -> str:
            return "<thing>"

    cache = ResponseCache(tmp_path)
    cache.put("d", "r", Prediction("low", None, {"obj": Thing(), 7: "seven"}))
    assert cache.get("d", "r") == Prediction("low", None, {"obj": "<thing>", "7": "seven"}, attempts=0, cached=True)
    cache.close()


def test_the_wrapped_detector_is_sent_the_request(tmp_path: Path) -> None:
    seen: list[Any] = []

    class Echo(Inner):
        async def assess(self, request: Any) -> Prediction:
            seen.append(request)
            return Prediction("low", cached=True)  # a detector that says cached (a cache of its own)

    det = _wrapped(tmp_path, Echo())
    got = asyncio.run(det.assess(REQUEST))
    assert seen == [REQUEST]
    assert got.cached is False  # fresh from this cache's point of view: it was asked
    asyncio.run(det.aclose())
