"""The stand-in rate-limited provider (tests/servers/limited_server.py), run as a real subprocess and asked over HTTP.

Expectations are worked out here by hand from the bucket its docstring states: capacity max(1, N * burst / 60),
refilled at N per minute of ``--minute`` seconds, a request costing 1 request and ceil(chars / 4) + 20 tokens.
Where time passes between requests, the refill it brings is bounded by the time the client measured, never asserted
against a clock: the buckets here refill so slowly (minutes of 100 hours) that no test could last long enough to
change a rounded figure.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import re
import time
from pathlib import Path

import httpx
import pytest
from servers.detector_server import reply_for
from servers.limited_server import go_duration, serve_in_thread

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

LIMITED = Path(__file__).resolve().parent.parent / "servers" / "limited_server.py"
HOURS_100 = "360000"  # a minute of 100 hours: rpm 60 refills one request per 6000 s


def case(i: int) -> dict:
    return {
        "task": f"question {i}",
        "answers": [{"agent_id": "a", "text": f"yes {i}"}, {"agent_id": "b", "text": "no"}],
    }


def chat(*contents: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": c} for c in contents]}


def seconds_of(duration: str) -> float:
    """Read back a duration written the way OpenAI's x-ratelimit-reset-* headers write it."""
    if duration.endswith("ms"):
        return int(duration[:-2]) / 1000
    return sum(float(n) * {"h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"([\d.]+)([hms])", duration))


def test_durations_are_written_as_openai_writes_them() -> None:
    assert [go_duration(s) for s in (0, 0.02, 1, 1.5, 60, 360, 90.25, 3725, 126000)] == [
        "0s", "20ms", "1s", "1.5s", "1m0s", "6m0s", "1m30.25s", "1h2m5s", "35h0m0s",
    ]  # fmt: skip


def test_within_capacity_all_answered_then_429_with_retry_after_headers_and_stats(detector_server) -> None:
    # rpm 60 over a 100-hour minute: one request per 6000 s; burst 10 sixtieths of a minute's 60: capacity 10
    server = detector_server(
        "--rpm", "60", "--minute", HOURS_100, "--burst", "10", "--ratelimit-headers", "--latency", "0", script=LIMITED
    )
    with httpx.Client(base_url=server.url, timeout=10) as client:
        start = time.monotonic()
        for k in range(1, 11):  # within capacity: every request answered, both APIs drawing on the same bucket
            if k % 3:
                resp = client.post("/v1/consensus", json=case(k))
                assert resp.status_code == 200 and resp.json() == reply_for(case(k))
            else:
                resp = client.post("/v1/chat/completions", json=chat(f"prompt {k}"))
                assert resp.status_code == 200
                expected = reply_for({"task": f"prompt {k}", "answers": []})
                assert json.loads(resp.json()["choices"][0]["message"]["content"]) == {
                    "false_consensus_risk": expected["false_consensus_risk"],
                    "risk_score": expected["risk_score"],
                }
            elapsed = time.monotonic() - start  # the most the bucket can have refilled since the first request
            h = resp.headers
            assert h["x-ratelimit-limit-requests"] == "60"
            assert h["x-ratelimit-remaining-requests"] == str(10 - k)  # 10 - k plus a refill far below one
            # k requests spent, 6000 s each to refill, less what refilled since the first
            assert 6000 * k - elapsed - 0.001 <= seconds_of(h["x-ratelimit-reset-requests"]) <= 6000 * k
            assert "x-ratelimit-limit-tokens" not in h  # no tpm configured
            if k == 1:
                assert h["x-ratelimit-reset-requests"] == "1h40m0s"  # a full bucket less one: exactly 6000 s
        resp = client.post("/v1/consensus", json=case(11))
        elapsed = time.monotonic() - start
        assert resp.status_code == 429
        assert resp.json()["error"]["code"] == "rate_limit_exceeded"
        assert math.ceil(6000 - elapsed) <= int(resp.headers["Retry-After"]) <= 6000  # the next request's refill
        assert resp.headers["x-ratelimit-remaining-requests"] == "0"
        assert 60000 - elapsed - 0.001 <= seconds_of(resp.headers["x-ratelimit-reset-requests"]) <= 60000
        stats = client.get("/stats").json()
    assert (stats["requests"], stats["answered"], stats["throttled"], stats["unavailable"]) == (11, 10, 1, 0)
    assert len(stats["answer_times"]) == 10 and stats["answer_times"][0] == 0
    assert stats["throttle_times"][0] >= stats["answer_times"][-1]
    assert stats["max_answered_per_minute"] == 10


def test_retry_after_as_an_http_date_or_not_at_all(detector_server) -> None:
    # default burst: capacity max(1, 60 / 60) = 1, and the next request is due 6000 s after the first
    dated = detector_server("--rpm", "60", "--minute", HOURS_100, "--retry-after", "date", script=LIMITED)
    bare = detector_server("--rpm", "60", "--minute", HOURS_100, "--retry-after", "none", script=LIMITED)
    with httpx.Client(timeout=10) as client:
        sent = time.time()
        assert client.post(f"{dated.url}/v1/consensus", json=case(1)).status_code == 200
        received = time.time()
        resp = client.post(f"{dated.url}/v1/consensus", json=case(2))
        assert resp.status_code == 429
        due = email.utils.parsedate_to_datetime(resp.headers["Retry-After"]).timestamp()
        # the first request was taken between sent and received; its token is back 6000 s later, rounded up
        assert math.floor(sent + 6000) <= due <= math.ceil(received + 6000) + 1
        assert not any(k.startswith("x-ratelimit") for k in resp.headers)  # not asked for

        assert client.post(f"{bare.url}/v1/chat/completions", json=chat("hello")).status_code == 200
        resp = client.post(f"{bare.url}/v1/chat/completions", json=chat("hello"))
        assert resp.status_code == 429 and "Retry-After" not in resp.headers
        assert resp.json()["error"]["type"] == "requests"


def test_the_bucket_refills_one_request_per_minute_over_n(detector_server) -> None:
    # rpm 2 over a 2-s minute: capacity 1, one request back each second
    server = detector_server("--rpm", "2", "--minute", "2", "--latency", "0", script=LIMITED)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        assert client.post("/v1/consensus", json=case(1)).status_code == 200
        throttled = client.post("/v1/consensus", json=case(2))
        assert throttled.status_code == 429 and throttled.headers["Retry-After"] == "1"
        time.sleep(1.0)  # one request's refill time, counted from after the first was taken
        assert client.post("/v1/consensus", json=case(3)).status_code == 200
        stats = client.get("/stats").json()
    assert (stats["answered"], stats["throttled"]) == (2, 1)
    # on the server's own clock: the second answer came no sooner than one refill time after the first
    assert stats["answer_times"][1] - stats["answer_times"][0] >= 1.0


def test_a_flood_never_gets_more_than_the_bucket_allows_and_stats_agree(detector_server) -> None:
    # rpm 100 over a 1-s minute: 100 a second; burst 6: capacity 10
    server = detector_server("--rpm", "100", "--minute", "1", "--burst", "6", "--latency", "0", script=LIMITED)
    seen: list[int] = []

    async def flood() -> None:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:

            async def worker(w: int) -> None:
                for i in range(w, 240, 8):
                    resp = await client.post("/v1/consensus", json=case(i))
                    seen.append(resp.status_code)
                    if resp.status_code == 200:
                        assert resp.json() == reply_for(case(i))

            await asyncio.gather(*(worker(w) for w in range(8)))

    asyncio.run(flood())
    stats = httpx.get(f"{server.url}/stats", timeout=10).json()
    assert (stats["answered"], stats["throttled"]) == (seen.count(200), seen.count(429))
    assert seen.count(200) + seen.count(429) == 240 == stats["requests"]
    assert len(stats["answer_times"]) == stats["answered"] and len(stats["throttle_times"]) == stats["throttled"]
    span = max(stats["answer_times"] + stats["throttle_times"])
    assert stats["answered"] <= 10 + 100 * span + 1e-6  # a full bucket, then the refill over the run
    times = stats["answer_times"]  # the busiest 1-s window, counted here again
    busiest = max(sum(1 for u in times if 0 <= u - t < 1) for t in times)
    assert stats["max_answered_per_minute"] == busiest <= 10 + 100


def test_tpm_counts_ceil_chars_over_4_plus_20_completion_tokens(detector_server) -> None:
    # tpm 120 over a 100-hour minute: one token per 3000 s; burst 60: capacity a whole minute's, 120 tokens
    server = detector_server(
        "--tpm", "120", "--minute", HOURS_100, "--burst", "60", "--ratelimit-headers", "--latency", "0", script=LIMITED
    )
    with httpx.Client(base_url=server.url, timeout=10) as client:
        start = time.monotonic()
        first = client.post("/v1/chat/completions", json=chat("abc", "d" * 54))  # 57 chars: 15 + 20 = 35 tokens
        assert first.status_code == 200
        assert first.json()["usage"] == {"prompt_tokens": 15, "completion_tokens": 20, "total_tokens": 35}
        assert first.headers["x-ratelimit-limit-tokens"] == "120"
        assert first.headers["x-ratelimit-remaining-tokens"] == "85"
        assert first.headers["x-ratelimit-reset-tokens"] == "29h10m0s"  # 35 tokens * 3000 s
        assert "x-ratelimit-limit-requests" not in first.headers  # no rpm configured
        view = {"task": "t" * 40, "answers": [{"agent_id": "a", "text": "u" * 41}, {"agent_id": "b", "text": "v" * 40}]}
        second = client.post("/v1/consensus", json=view)  # 121 chars: 31 + 20 = 51 tokens, 34 left
        assert second.status_code == 200 and second.json() == reply_for(view)
        assert second.headers["x-ratelimit-remaining-tokens"] == "34"
        refused = client.post("/v1/chat/completions", json=chat("x" * 80))  # 20 + 20 = 40 > 34
        elapsed = time.monotonic() - start
        assert refused.status_code == 429 and refused.json()["error"]["type"] == "tokens"
        assert math.ceil(6 * 3000 - elapsed) <= int(refused.headers["Retry-After"]) <= 6 * 3000  # 6 tokens short
        assert refused.headers["x-ratelimit-remaining-tokens"] == "34"  # a refusal takes nothing
        fits = client.post("/v1/chat/completions", json=chat("y" * 53))  # 14 + 20 = 34: exactly what is left
        assert fits.status_code == 200 and fits.headers["x-ratelimit-remaining-tokens"] == "0"
        stats = client.get("/stats").json()
    assert (stats["answered"], stats["throttled"], stats["tokens"]) == (3, 1, 35 + 51 + 34)
    assert stats["max_tokens_per_minute"] == 120


def test_every_kth_request_gets_503(detector_server) -> None:
    server = detector_server("--fail-503-every", "3", "--latency", "0", script=LIMITED)
    with httpx.Client(base_url=server.url, timeout=10) as client:
        statuses = [client.post("/v1/consensus", json=case(i)).status_code for i in range(7)]
        stats = client.get("/stats").json()
    assert statuses == [200, 200, 503, 200, 200, 503, 200]
    assert (stats["answered"], stats["unavailable"], len(stats["unavailable_times"])) == (5, 2, 2)


def test_serve_in_thread_runs_in_process() -> None:
    url, stop, stats = serve_in_thread(rpm=60, minute=360000.0, latency=0.0)
    try:
        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.post("/v1/consensus", json=case(1)).status_code == 200
            assert client.post("/v1/consensus", json=case(2)).status_code == 429
        assert (stats()["answered"], stats()["throttled"]) == (1, 1)
    finally:
        stop()
    with pytest.raises(TypeError):
        serve_in_thread(rpm=1, bogus=2)
