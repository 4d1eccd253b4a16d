"""The response cache, against the stand-in OpenAI-compatible server on 127.0.0.1, whose requests are counted on the
server side (``--record`` appends one line per request it receives): a second run makes no request and ends with
the same metrics; a changed prompt or model misses; errors are never stored; two runs may share one cache at once."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import OPENAI_SERVER, ROOT, read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 8


def _eval(cases: Path, spec: str, out: Path, *args: str, code: int = 0, env: dict | None = None) -> dict:
    proc = run_cli("eval", str(cases), "-d", spec, "--out", str(out), "-q", *args, env=env)
    assert proc.returncode == code, proc.stderr
    return json.loads((out / "metrics.json").read_text())


def _requests(record: Path) -> int:
    return len(read_jsonl(record)) if record.exists() else 0


def _without_operational(doc: dict) -> dict:
    metrics = dict(doc["metrics"], operational=None)
    return {"metrics": metrics, "dataset": doc["dataset"], "fingerprint": doc["detector"]["fingerprint"]}


def test_a_second_run_is_served_from_the_cache(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", N)
    cache = tmp_path / "cache"
    spec = f"llm:json@{server.url}/v1"
    secret = {"FCB_DETECTOR_TOKEN": "sk-SECRET-cache-test"}

    first = _eval(cases, spec, tmp_path / "one", "--cache", str(cache), env=secret)
    assert _requests(record) == N  # the preflight's answer stands for its case: one request a case
    second = _eval(cases, spec, tmp_path / "two", "--cache", str(cache), env=secret)
    assert _requests(record) == N  # not one more request reached the server

    assert _without_operational(second) == _without_operational(first)
    journal = read_jsonl(tmp_path / "two" / "predictions.jsonl")
    assert len(journal) == N and all(r["cached"] is True and r["latency_s"] == 0.0 for r in journal)
    assert not any("cached" in r for r in read_jsonl(tmp_path / "one" / "predictions.jsonl"))
    ops_first, ops_second = first["metrics"]["operational"], second["metrics"]["operational"]
    assert ops_first["cached"] == 0 and ops_second["cached"] == N
    assert ops_second["latency_s"] == {} and ops_second["tokens"] is None  # counted apart: nothing was asked
    assert ops_first["tokens"]["completion"] == 7 * N  # the server's rule: 7 completion tokens a call
    assert re.search(rf"replayed from the response cache\s*\|\s*{N}\s*\|", (tmp_path / "two" / "report.md").read_text())

    # keys are digests and values are replies: the API key is in neither (the whole file, WAL included)
    stored = b"".join(p.read_bytes() for p in cache.iterdir())
    assert b"sk-SECRET" not in stored
    with sqlite3.connect(cache / "responses.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM replies").fetchone()[0] == N

    # --cache-refresh asks again (and stores the fresh answers)
    _eval(cases, spec, tmp_path / "three", "--cache", str(cache), "--cache-refresh")
    assert _requests(record) == 2 * N


def test_a_changed_prompt_or_model_misses(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", N)
    cache = str(tmp_path / "cache")
    _eval(cases, f"llm:json@{server.url}/v1", tmp_path / "one", "--cache", cache)
    assert _requests(record) == N

    prompt = tmp_path / "prompt.txt"
    prompt.write_text((ROOT / "harness" / "data" / "prompts" / "false-consensus.txt").read_text() + "\nBe brief.\n")
    config = tmp_path / "llm.toml"
    config.write_text(f'model = "json"\nbase_url = "{server.url}/v1"\nprompt = "prompt.txt"\n')
    _eval(cases, "", tmp_path / "prompt", "--detector-config", str(config), "--cache", cache)
    assert _requests(record) == 2 * N  # a new prompt: every case asked again

    _eval(cases, f"llm:fenced@{server.url}/v1", tmp_path / "model", "--cache", cache)
    assert _requests(record) == 3 * N  # another model: asked again
    _eval(cases, f"llm:fenced@{server.url}/v1", tmp_path / "model-again", "--cache", cache)
    assert _requests(record) == 3 * N  # and then served from the cache


def test_errors_are_never_cached(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    cache = str(tmp_path / "cache")
    for run in ("one", "two"):  # the server's "garbage" model never answers with JSON: every case errors
        _eval(cases, f"llm:garbage@{server.url}/v1", tmp_path / run, "--cache", cache, "--no-preflight", code=1)
    assert _requests(record) == 2 * 3


def test_on_by_default_for_llm_at_temperature_zero_only(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    spec = f"llm:json@{server.url}/v1"
    _eval(cases, spec, tmp_path / "one")
    _eval(cases, spec, tmp_path / "two")  # the default cache, under $XDG_CACHE_HOME (the test's own)
    assert _requests(record) == 4
    _eval(cases, spec, tmp_path / "off", "--no-cache")
    assert _requests(record) == 8

    warm = tmp_path / "warm.toml"
    warm.write_text(f'model = "json"\nbase_url = "{server.url}/v1"\ntemperature = 0.5\n')
    for run in ("warm-one", "warm-two"):  # sampling: the detector may answer differently, so it is asked again
        _eval(cases, "", tmp_path / run, "--detector-config", str(warm))
    assert _requests(record) == 16


def test_two_runs_share_one_cache_at_once(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", 24)
    cache = str(tmp_path / "cache")
    spec = f"llm:json@{server.url}/v1"
    procs = [
        subprocess.Popen(
            [
                *(sys.executable, "-m", "harness", "eval", str(cases), "-d", spec, "--out", str(tmp_path / f"run{i}")),
                *("-q", "--cache", cache, "--concurrency", "4"),
            ],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    with sqlite3.connect(Path(cache) / "responses.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM replies").fetchone()[0] == 24
    before = _requests(record)
    assert 24 <= before <= 48  # each case asked by one run or both, depending on who got there first
    _eval(cases, spec, tmp_path / "after", "--cache", cache)
    assert _requests(record) == before


ZOO = '''
def always_high(request):
    return "high"


def always_low(request):
    return "low"


class Batched:
    """Answers a batch at a time, and wants enough requests in flight to fill one."""

    def __init__(self):
        self.sizes = []

    def assess_batch(self, requests):
        self.sizes.append(len(requests))
        with open(__file__ + ".sizes", "a") as f:
            f.write(f"{len(requests)}\\n")
        return ["low" for _ in requests]
'''


def test_two_functions_of_one_file_are_two_detectors_to_the_cache(tmp_path: Path) -> None:
    # the cache keyed a file's functions by the file's hash alone: always_low replayed always_high's answers
    (tmp_path / "zoo.py").write_text(ZOO)
    cases = write_cases(tmp_path / "cases.jsonl", N)
    cache = ("--cache", str(tmp_path / "cache"), "--bootstrap", "0")
    high = _eval(cases, f"{tmp_path / 'zoo.py'}:always_high", tmp_path / "high", *cache)
    low = _eval(cases, f"{tmp_path / 'zoo.py'}:always_low", tmp_path / "low", *cache)
    assert high["metrics"]["confusion_matrix"]["counts"][0][:3] != low["metrics"]["confusion_matrix"]["counts"][0][:3]
    assert sum(row[0] for row in low["metrics"]["confusion_matrix"]["counts"]) == N  # every case called low
    assert low["metrics"]["operational"]["cached"] == 0
    again = _eval(cases, f"{tmp_path / 'zoo.py'}:always_low", tmp_path / "again", *cache)
    assert again["metrics"]["operational"]["cached"] == N  # the same function replays its own answers


def test_a_batch_detector_behind_the_cache_gets_the_batches_it_asks_for(tmp_path: Path) -> None:
    # the cache wrapper dropped the detector's wish for requests in flight: batches shrank to --concurrency
    (tmp_path / "zoo.py").write_text(ZOO)
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    spec = f"{tmp_path / 'zoo.py'}:Batched"
    args = ("--batch-size", "8", "--concurrency", "2", "--no-preflight", "--bootstrap", "0")
    _eval(cases, spec, tmp_path / "bare", *args)
    bare = [int(x) for x in (tmp_path / "zoo.py.sizes").read_text().split()]
    (tmp_path / "zoo.py.sizes").unlink()
    _eval(cases, spec, tmp_path / "cached", *args, "--cache", str(tmp_path / "cache"))
    cached = [int(x) for x in (tmp_path / "zoo.py.sizes").read_text().split()]
    assert sum(bare) == sum(cached) == 40
    assert max(cached) == max(bare) == 8  # full batches, with the cache as without it


def test_the_cache_wrapper_has_every_ability_of_what_it_wraps_and_no_other(tmp_path: Path) -> None:
    import asyncio

    from harness import types
    from harness.detectors.limits import Budget, HasBudget
    from harness.run.cache import FORWARDED, with_cache
    from harness.spec import parse_spec
    from harness.types import Prediction

    abilities = {name: getattr(types, name) for name in dir(types) if name.startswith("Has")}
    assert set(abilities) == {"HasConcurrency", "HasFingerprint", "HasPreflight", "HasSecrets", "HasTrainingItems"}
    abilities["HasBudget"] = HasBudget  # the transport's, beside its Budget

    class Plain:
        name = "plain"

        async def assess(self, request: dict) -> Prediction:
            return Prediction("low", None)

        async def aclose(self) -> None:
            return None

    class Able(Plain):
        concurrency = 64
        train_source_items = frozenset({"s:1"})
        budget = Budget(max_requests=5)

        def fingerprint(self) -> dict:
            return {"kind": "able"}

        def secrets(self) -> list[str]:
            return ["tok"]

        async def preflight(self, request: dict) -> Prediction:
            return Prediction("high", None)

    for inner in (Plain(), Able()):
        wrapped = with_cache(
            inner, parse_spec("zoo.py:f"), {}, risk_field=("r",), directory=str(tmp_path), refresh=False
        )
        for name, protocol in abilities.items():
            if name in ("HasSecrets", "HasPreflight"):  # the wrapper's own: it scrubs and preflights through the cache
                assert isinstance(wrapped, protocol), name
            else:
                assert isinstance(wrapped, protocol) == isinstance(inner, protocol), (type(inner).__name__, name)
        if isinstance(inner, Able):
            assert (wrapped.concurrency, wrapped.train_source_items) == (64, inner.train_source_items)
            assert wrapped.budget is inner.budget
            assert wrapped.secrets() == ["tok"]
        asyncio.run(wrapped.aclose())
    assert set(FORWARDED) == {"concurrency", "train_source_items", "fingerprint", "budget"}
