"""The HTTP transport on hand-worked examples: the detector API's default path, and Retry-After in both forms."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import socket
import time
from collections.abc import Awaitable, Callable
from email.utils import formatdate
from typing import Any

import pytest
from aiohttp import web
from tenacity import AsyncRetrying, RetryCallState

from harness.detectors import transport as transport_module
from harness.detectors.http import endpoint
from harness.detectors.limits import AdaptiveGate, BudgetSpent, ProviderStopped
from harness.detectors.options import DetectorOptions
from harness.detectors.transport import (
    ALONE,
    MAX_RETRY_AFTER_S,
    REFUSALS,
    REPLICA_COOLDOWN_S,
    REPLY_BUDGET_BYTES,
    SMALL_REPLY_BYTES,
    Transport,
    _Budget,
    _final,
    _prices,
    _Throttling,
    _Transient,
    check_status,
    decode_json,
    headers_from_env,
    quota_spent,
    retry_after_seconds,
    split_credentials,
)
from harness.errors import DetectorLoadError
from harness.types import DetectorError


def test_endpoint_default_path() -> None:
    assert endpoint("http://127.0.0.1:8765") == "http://127.0.0.1:8765/v1/consensus"
    assert endpoint("http://127.0.0.1:8765/") == "http://127.0.0.1:8765/v1/consensus"
    assert endpoint("http://127.0.0.1:8765/custom") == "http://127.0.0.1:8765/custom"


def test_retry_after_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("100000") == 120.0  # capped
    in_ten = retry_after_seconds(formatdate(time.time() + 10, usegmt=True))
    assert in_ten is not None and 8.0 <= in_ten <= 10.0


def _state_after(exc: BaseException, attempt: int) -> RetryCallState:
    state = RetryCallState(AsyncRetrying(), None, (), {})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_a_429_without_retry_after_waits_as_a_first_retry_however_often_it_came() -> None:
    # backoff: 10 * 2 ** (attempt - 1) plus up to 1 s of jitter, at most 1,000 s
    transport = Transport(["http://127.0.0.1:9/v1/consensus"], DetectorOptions(backoff_initial=10, backoff_max=1000))
    throttled = _state_after(_Transient("http", "429", status=429), attempt=6)
    assert all(10 <= transport._wait(throttled) <= 11 for _ in range(20))  # not 320 s: the pace keeps the limit
    overloaded = _state_after(_Transient("http", "503", status=503), attempt=6)
    assert all(320 <= transport._wait(overloaded) <= 321 for _ in range(20))  # 10 * 2 ** 5: backing off
    told = _state_after(_Transient("http", "429", retry_after=7.5, status=429), attempt=6)
    assert transport._wait(told) == 7.5  # Retry-After said how long


def test_the_jitter_is_up_to_a_second_or_twice_the_first_wait_when_that_is_less() -> None:
    failed = _Transient("http", "503", status=503)
    short = Transport(["http://127.0.0.1:9/v1/consensus"], DetectorOptions(backoff_initial=0.01, backoff_max=5))
    for attempt, base in ((1, 0.01), (3, 0.04)):
        waits = [short._wait(_state_after(failed, attempt)) for _ in range(200)]
        assert base <= min(waits) and max(waits) <= base + 0.02 and max(waits) > base + 0.01  # jitter of 0.02
    default = Transport(["http://127.0.0.1:9/v1/consensus"], DetectorOptions())
    waits = [default._wait(_state_after(failed, 1)) for _ in range(200)]
    assert min(waits) >= 0.5 and max(waits) <= 1.5 and max(waits) > 1.0  # 0.5 s plus up to 1 s, as before


def test_a_retry_after_of_other_digits_reads_as_absent() -> None:
    """Issue 45, item 5: "²" passes str.isdigit and then broke float(): the case became a detector_exception."""
    assert retry_after_seconds("²") is None and retry_after_seconds("٣") is None
    assert retry_after_seconds(" 7 ") == 7.0


def test_a_429_saying_retry_after_zero_still_waits_the_first_backoff_step() -> None:
    """Issue 45, item 4: a zero wait never added to the case's patience, so a provider answering
    ``Retry-After: 0`` for good was asked again at once, forever."""
    transport = Transport(["http://127.0.0.1:9"], DetectorOptions(backoff_initial=0.25, backoff_max=1.0))
    zero = _state_after(_Transient("http_status", "HTTP 429", 0.0, status=429), attempt=3)
    assert transport._wait(zero) == 0.25
    later = _state_after(_Transient("http_status", "HTTP 429", 3.0, status=429), attempt=3)
    assert transport._wait(later) == 3.0
    unavailable = _state_after(_Transient("http_status", "HTTP 503", 0.0, status=503), attempt=3)
    assert transport._wait(unavailable) == 0.0  # a 503 counts against --retries: no floor needed


def test_a_429_saying_the_quota_is_spent_stops_the_run_and_a_rate_limit_is_retried() -> None:
    """Issue 45, item 6: OpenAI's insufficient_quota (its code, or its message) is no throttling to wait out."""
    spent = b'{"error": {"message": "You exceeded your current quota, please check your plan", "code": null}}'
    assert quota_spent(spent) and quota_spent(b'{"error": {"type": "insufficient_quota"}}')
    assert not quota_spent(b'{"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}')
    with pytest.raises(ProviderStopped, match=r"quota is spent: HTTP 429: .*exceeded your current quota"):
        check_status(429, "1", spent)
    with pytest.raises(_Transient) as throttled:  # a 503 saying the same is an overloaded server: retried
        check_status(503, None, spent)
    assert throttled.value.raw is not None and "exceeded" in throttled.value.raw  # the body rides along
    with pytest.raises(DetectorError, match="HTTP 402"):  # other statuses stay final, as before
        check_status(402, None, spent)


# --------------------------------------------------------------------------------------------------------------
# the transport against a real server on 127.0.0.1 in this process (issue 46): each decision held to a count worked
# out by hand from the rule, never to the code's own output

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Reply = tuple[int, dict[str, str], bytes] | Handler
FAST = {"backoff_initial": 0.001, "backoff_max": 0.001}  # waits of 1 to 3 ms: the counts, not the clock, are tested


def reply(status: int = 200, body: bytes = b'{"risk": "low"}', **headers: str) -> Reply:
    return (status, {k.replace("_", "-"): v for k, v in headers.items()}, body)


class Server:
    """A detector on 127.0.0.1 (port 0) answering the n-th POST with the n-th reply of its script (the last one
    again once the script ends), and GETs from ``gets``; it keeps each request's method, path, headers and body."""

    def __init__(self, *replies: Reply, gets: dict[str, Reply] | None = None) -> None:
        self.replies, self.gets = list(replies), gets or {}
        self.seen: list[tuple[str, str, dict[str, str], bytes]] = []
        self.queries: list[tuple[str, str, str]] = []  # method, path, query string
        self.release = asyncio.Event()  # what a hanging reply waits for: set when the server stops
        self.url = ""

    async def __aenter__(self) -> Server:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}/v1/consensus"
        return self

    async def __aexit__(self, *_: object) -> None:
        self.release.set()
        await self._runner.cleanup()

    @property
    def posts(self) -> int:
        return sum(1 for method, *_ in self.seen if method == "POST")

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append((request.method, request.path, dict(request.headers), await request.read()))
        self.queries.append((request.method, request.path, request.query_string))
        if request.method == "GET":
            step = self.gets.get(request.path, reply(404, b""))
        else:
            step = self.replies[min(self.posts, len(self.replies)) - 1]
        if callable(step):
            return await step(request)
        status, headers, body = step
        return web.Response(status=status, headers=headers, body=body)


def read(payload: bytes) -> Any:
    return decode_json(payload)


def transport(*urls: str, **options: Any) -> Transport:
    return Transport(list(urls), DetectorOptions(**{**FAST, **options}))


async def post_once(t: Transport, **kw: Any) -> tuple[Any, int]:
    try:
        return await t.post(b'{"task": "q"}', kw.pop("interpret", read), **kw)
    finally:
        await t.aclose()


async def failure(t: Transport, **kw: Any) -> DetectorError:
    with pytest.raises(DetectorError) as caught:
        await post_once(t, **kw)
    return caught.value


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FCB_DETECTOR_TOKEN", raising=False)


def test_a_2xx_reply_is_read_at_the_first_attempt_with_the_json_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FCB_DETECTOR_TOKEN", "tok-123")

    async def go() -> None:
        async with Server(reply(201, b'{"risk": "high"}')) as server:
            t = transport(server.url)
            assert await post_once(t) == ({"risk": "high"}, 1)
            ((method, path, headers, body),) = server.seen
            assert (method, path, body) == ("POST", "/v1/consensus", b'{"task": "q"}')
            assert headers["Content-Type"] == headers["Accept"] == "application/json"
            assert headers["Authorization"] == "Bearer tok-123"
            assert (t.gate.answered, t.gate.refused, t.budget.spent_requests) == (1, 0, 1)

    asyncio.run(go())


@pytest.mark.parametrize(("retries", "fails", "attempts"), [(0, 0, 1), (2, 2, 3), (3, 3, 4)])
def test_a_5xx_is_tried_again_up_to_the_retries(retries: int, fails: int, attempts: int) -> None:
    # retries R: R + 1 attempts in all; R failures then a 200 is answered at attempt R + 1
    async def go() -> None:
        async with Server(*[reply(500, b"boom")] * fails, reply()) as server:
            assert await post_once(transport(server.url, retries=retries)) == ({"risk": "low"}, attempts)
            assert server.posts == attempts

    asyncio.run(go())


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_a_5xx_that_never_ends_is_the_cases_error_after_retries_plus_one(retries: int) -> None:
    async def go() -> None:
        async with Server(reply(502, b"bad gateway")) as server:
            t = transport(server.url, retries=retries)
            error = await failure(t)
            assert (error.kind, str(error), error.attempts) == ("http_status", "HTTP 502", retries + 1)
            assert (error.status, error.raw, error.connect_failed) == (502, "bad gateway", False)
            assert server.posts == retries + 1
            assert t.gate.refused == 0  # a 500 or 502 is no throttling: the gate does not count it

    asyncio.run(go())


@pytest.mark.parametrize(("retries", "attempts"), [(0, 10), (3, 10), (9, 10), (10, 11)])
def test_a_429_that_never_ends_is_met_refusals_times_or_retries_plus_one_when_more(retries: int, attempts: int) -> None:
    """A 429 is not a failure while the case's patience lasts (600 s by default): the case meets REFUSALS = 10 of
    them, or retries + 1 when that is more (retries 9: 10; retries 10: 11), then it is an error."""
    assert REFUSALS == 10

    async def go() -> None:
        async with Server(reply(429, b"slow down")) as server:
            t = transport(server.url, retries=retries)
            error = await failure(t)
            assert (error.attempts, error.status, error.raw, server.posts) == (attempts, 429, "slow down", attempts)
            assert t.gate.refused == 1  # only the first attempt's 429 is counted at the gate: retries say nothing new

    asyncio.run(go())


@pytest.mark.parametrize(("patience", "attempts"), [(0.005, 2), (0.01, 2), (0.015, 3), (0.02, 3), (0.025, 4)])
def test_429s_count_as_failures_once_their_waits_reach_the_patience(patience: float, attempts: int) -> None:
    """Retry-After: 0 on a 429 waits the floor, backoff_initial = 0.01 s, every time: waited is 0, 0.01, 0.02, ...
    before attempts 1, 2, 3. An attempt's 429 is free while waited < patience (and adds 0.01); the first one met with
    waited >= patience is a failure, and with retries 0 that ends the case. Patience 0.01: attempt 1 free (0 < 0.01),
    attempt 2 fails (0.01 is not < 0.01): 2 attempts. 0.015 and 0.02: attempts 1 and 2 free, 3 fails. 0.025: 4."""

    async def go() -> None:
        async with Server(reply(429, b"", Retry_After="0")) as server:
            t = transport(server.url, retries=0, backoff_initial=0.01, backoff_max=1.0, throttle_patience=patience)
            error = await failure(t)
            assert (error.attempts, error.status, error.raw) == (attempts, 429, None)  # no body: raw None

    asyncio.run(go())


def test_a_503_counts_against_the_retries_at_once_and_at_the_gate() -> None:
    async def go() -> None:
        async with Server(reply(503, b"", Retry_After="0")) as server:
            t = transport(server.url, retries=2)
            error = await failure(t)
            assert (error.attempts, error.status, server.posts, t.gate.refused) == (3, 503, 3, 1)

    asyncio.run(go())


def test_a_429_then_an_answer_is_one_refusal_and_one_answer_at_the_gate() -> None:
    async def go() -> None:
        async with Server(reply(429, b"slow"), reply(429, b"slow"), reply()) as server:
            t = transport(server.url, retries=0)  # 429s within the patience: no failure, despite retries 0
            assert await post_once(t) == ({"risk": "low"}, 3)
            assert (t.gate.refused, t.gate.answered, t.budget.spent_requests) == (1, 1, 3)

    asyncio.run(go())


def test_a_429_saying_the_quota_is_spent_stops_the_run_at_that_attempt() -> None:
    quota = b'{"error": {"code": "insufficient_quota"}}'

    async def go() -> None:
        async with Server(reply(500, b"x"), reply(429, quota)) as server:
            t = transport(server.url, retries=5)
            with pytest.raises(ProviderStopped, match=r"quota is spent: HTTP 429: .*insufficient_quota"):
                await post_once(t)
            assert server.posts == 2 and t.budget.spent_cost == 0.0

    asyncio.run(go())


def test_no_answer_for_stall_patience_while_throttled_stops_the_run_with_the_last_reply() -> None:
    async def go() -> None:
        async with Server(reply(429, b"too many")) as server:
            t = transport(server.url, stall_patience=0.001)
            t.gate.last_answer -= 100.0  # the last answer came 100 s ago: far past 0.001 s
            with pytest.raises(ProviderStopped) as stopped:
                await post_once(t)
            message = str(stopped.value)
            assert server.posts == 1
            found = re.match(r"no request was answered for (\d+) s while the provider throttled the run ", message)
            assert found is not None and 100 <= int(found[1]) <= 110
            assert message.endswith("(stall_patience 0.001 s); its last reply: HTTP 429: too many")

    asyncio.run(go())


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now


@pytest.mark.parametrize(("last", "stops"), [(700.0, True), (699.0, True), (700.5, False)])
def test_the_stall_check_stops_at_exactly_the_patience(
    monkeypatch: pytest.MonkeyPatch, last: float, stops: bool
) -> None:
    # now 1,000 s, patience 300 s: an answer at 700 s is 300 s ago, which stops the run; at 700.5 s, 299.5 s: not yet
    t = transport("http://127.0.0.1:9", stall_patience=300.0)
    t.gate.last_answer = last
    monkeypatch.setattr(transport_module, "time", _Clock(1000.0))
    if stops:
        with pytest.raises(ProviderStopped, match=rf"for {1000 - last:.0f} s .*its last reply: HTTP 429$"):
            t._check_stall(_Transient("http_status", "HTTP 429", status=429))
    else:
        t._check_stall(_Transient("http_status", "HTTP 429", status=429))


@pytest.mark.parametrize(("status", "body"), [(400, b"bad request"), (404, b""), (302, b""), (428, b"x"), (499, b"y")])
def test_other_statuses_are_final_at_the_first_attempt(status: int, body: bytes) -> None:
    async def go() -> None:
        async with Server(reply(status, body)) as server:
            t = transport(server.url, retries=3)
            error = await failure(t)
            assert (str(error), error.status, error.attempts, server.posts) == (
                f"HTTP {status}: {body.decode()}",
                status,
                1,
                1,
            )

    asyncio.run(go())


def test_a_reply_that_is_not_json_is_tried_again_and_then_an_invalid_response() -> None:
    async def go() -> None:
        async with Server(reply(200, b"<html>oops</html>"), reply()) as server:
            assert await post_once(transport(server.url, retries=1)) == ({"risk": "low"}, 2)
        async with Server(reply(200, b"<html>oops</html>")) as server:
            error = await failure(transport(server.url, retries=1))
            assert (error.kind, error.attempts, error.raw, error.status) == (
                "invalid_response",
                2,
                "<html>oops</html>",
                None,
            )
            assert str(error).startswith("response is not JSON: ")

    asyncio.run(go())


def test_a_reply_of_the_wrong_shape_is_final_and_counts_its_attempts() -> None:
    def shape(payload: bytes) -> Any:
        raise DetectorError("invalid_response", "no risk field")

    async def go() -> None:
        async with Server(reply()) as server:
            error = await failure(transport(server.url, retries=3), interpret=shape)
            assert (str(error), error.attempts, server.posts) == ("no risk field", 1, 1)
        async with Server(reply(500, b""), reply()) as server:
            error = await failure(transport(server.url, retries=3), interpret=shape)
            assert (str(error), error.attempts, server.posts) == ("no risk field", 2, 2)

    asyncio.run(go())


# the cost: prices 1 and 2 USD per million prompt and completion tokens; worst (3, 5) tokens: (3 * 1 + 5 * 2) / 1e6
# = 13e-6 USD; a reply that used (1, 1): (1 + 2) / 1e6 = 3e-6
PRICES = {"price_prompt_per_mtok": 1.0, "price_completion_per_mtok": 2.0}
WORST = 13e-6


def used(_: Any) -> tuple[int, int]:
    return (1, 1)


def test_an_answer_costs_what_its_usage_says_and_nothing_without_usage() -> None:
    async def go() -> None:
        async with Server(reply()) as server:
            t = transport(server.url, **PRICES)
            assert t.budget.cost(3, 5) == pytest.approx(WORST)
            await post_once(t, worst_tokens=(3, 5), usage=used)
            assert (t.budget.spent_requests, t.budget.spent_cost) == (1, pytest.approx(3e-6))
            t = transport(server.url, **PRICES)
            await post_once(t, worst_tokens=(3, 5))
            assert (t.budget.spent_requests, t.budget.spent_cost) == (1, 0.0)

    asyncio.run(go())


def test_a_refusal_with_a_status_costs_nothing_and_a_reply_of_the_wrong_shape_costs_the_most() -> None:
    def shape(payload: bytes) -> Any:
        raise DetectorError("invalid_response", "no risk field")

    async def go() -> None:
        async with Server(reply(500, b""), reply(429, b""), reply()) as server:
            t = transport(server.url, retries=3, **PRICES)
            await post_once(t, worst_tokens=(3, 5), usage=used)  # 500 (0), 429 (0), answered (3e-6)
            assert (t.budget.spent_requests, t.budget.spent_cost) == (3, pytest.approx(3e-6))
        async with Server(reply(400, b"")) as server:
            t = transport(server.url, **PRICES)
            await failure(t, worst_tokens=(3, 5))  # a final status: refused, nothing generated
            assert (t.budget.spent_requests, t.budget.spent_cost) == (1, 0.0)
        async with Server(reply()) as server:
            t = transport(server.url, **PRICES)
            await failure(t, worst_tokens=(3, 5), interpret=shape)  # answered: the provider may have billed it
            assert (t.budget.spent_requests, t.budget.spent_cost) == (1, pytest.approx(WORST))
        async with Server(reply(200, b"not json")) as server:
            t = transport(server.url, retries=1, **PRICES)
            await failure(t, worst_tokens=(3, 5))  # two replies cut short or garbled: each counted at its most
            assert (t.budget.spent_requests, t.budget.spent_cost) == (2, pytest.approx(2 * WORST))

    asyncio.run(go())


def test_a_timeout_is_retried_and_counted_at_the_most() -> None:
    async def go() -> None:
        server = Server()

        async def hang(_: web.Request) -> web.StreamResponse:
            await server.release.wait()
            return web.Response(body=b"{}")

        server.replies = [hang]
        async with server:
            t = transport(server.url, retries=1, timeout=0.05, **PRICES)
            error = await failure(t, worst_tokens=(3, 5))
            assert (error.kind, str(error), error.attempts, error.status) == (
                "timeout",
                "no answer within 0.05 s",
                2,
                None,
            )
            assert (t.budget.spent_requests, t.budget.spent_cost) == (2, pytest.approx(2 * WORST))

    asyncio.run(go())


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_endpoint_that_refuses_connections_is_retried_unless_failing_fast_and_costs_nothing() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1/consensus"

    async def go() -> None:
        t = transport(url, retries=2, **PRICES)
        error = await failure(t, worst_tokens=(3, 5))
        assert (error.kind, error.attempts, error.connect_failed, error.status) == ("connection", 3, True, None)
        assert str(error).startswith("ClientConnectorError: ")
        assert (t.budget.spent_requests, t.budget.spent_cost) == (3, 0.0)
        t = transport(url, retries=2)
        with t.failing_fast():
            assert t._retry_connect is False
            error = await failure(t)
        assert error.attempts == 1 and t._retry_connect is True

    asyncio.run(go())


def test_failing_fast_with_replicas_still_moves_to_the_others() -> None:
    async def go() -> None:
        async with Server(reply()) as server:
            t = transport(f"http://127.0.0.1:{closed_port()}/v1/consensus", server.url, retries=2)
            with t.failing_fast():
                assert t._retry_connect is True
                assert await post_once(t) == ({"risk": "low"}, 2)  # refused by the first, answered by the second
            assert server.posts == 1

    asyncio.run(go())


def test_failing_fast_is_undone_when_its_block_raises() -> None:
    t = transport("http://127.0.0.1:9")
    with pytest.raises(RuntimeError), t.failing_fast():
        raise RuntimeError
    assert t._retry_connect is True


def test_a_replica_that_fails_rests_and_its_requests_go_to_the_other() -> None:
    async def go() -> None:
        async with Server(reply(500, b"")) as bad, Server(reply()) as good:
            t = Transport([bad.url, good.url], DetectorOptions(**FAST))
            try:
                before = time.monotonic()
                assert await t.post(b"{}", read) == ({"risk": "low"}, 2)  # the first replica first (a tie), then
                assert (bad.posts, good.posts) == (1, 1)
                rest = t._replicas[0].down_until - before
                assert REPLICA_COOLDOWN_S == 5.0 and 5.0 <= rest < 6.0
                assert await t.post(b"{}", read) == ({"risk": "low"}, 1)  # the first one rests: straight to the second
                assert (bad.posts, good.posts) == (1, 2)
                assert [r.outstanding for r in t._replicas] == [0, 0]
            finally:
                await t.aclose()

    asyncio.run(go())


def test_a_single_endpoint_that_fails_is_never_put_to_rest() -> None:
    async def go() -> None:
        async with Server(reply(500, b"")) as server:
            t = transport(server.url, retries=1)
            await failure(t)
            assert t._replicas[0].down_until == 0.0

    asyncio.run(go())


def test_the_pick_is_the_healthy_replica_with_fewest_in_flight_or_the_first_to_recover() -> None:
    t = transport("http://a.test", "http://b.test", "http://c.test")
    a, b, c = t._replicas
    a.outstanding, b.outstanding, c.outstanding = 3, 1, 2
    assert t._pick() is b
    b.down_until = time.monotonic() + 60  # b rests: of a (3) and c (2), c
    assert t._pick() is c
    now = time.monotonic()
    a.down_until, b.down_until, c.down_until = now + 30, now + 10, now + 20
    assert t._pick() is b  # all rest: b recovers first, whatever is in flight
    b.down_until = now - 0.001  # rest over: b is healthy again
    assert t._pick() is b


def test_a_replica_whose_rest_ends_now_is_healthy(monkeypatch: pytest.MonkeyPatch) -> None:
    t = transport("http://a.test", "http://b.test")
    a, b = t._replicas
    a.outstanding, b.outstanding = 5, 0
    a.down_until, b.down_until = 100.0, 100.0  # both rest until exactly now: healthy, so the one with fewest in flight
    monkeypatch.setattr(transport_module, "time", _Clock(100.0))
    assert t._pick() is b
    b.down_until = 100.5
    assert t._pick() is a


def test_rate_limit_headers_saying_nothing_is_left_pause_the_gate() -> None:
    async def go() -> None:
        headers = {"x_ratelimit_remaining_requests": "0", "x_ratelimit_reset_requests": "7s"}
        async with Server(reply(200, b'{"risk": "low"}', **headers)) as server:
            t = transport(server.url)
            await post_once(t)
            assert 6.0 < t.gate.paused_until - time.monotonic() <= 7.0

    asyncio.run(go())


# replies over the cap


def body_of(n: int) -> bytes:
    """A JSON string of exactly n bytes: a quote, n - 2 letters, a quote."""
    return b'"' + b"a" * (n - 2) + b'"'


def chunked(payload: bytes, piece: int = 4096) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        for i in range(0, len(payload), piece):
            await resp.write(payload[i : i + piece])
        await resp.write_eof()
        return resp

    return handler


def test_a_declared_length_over_the_cap_is_refused_and_exactly_the_cap_is_read() -> None:
    async def go() -> None:
        async with Server(reply(200, body_of(1000))) as server:
            value, _ = await post_once(transport(server.url, max_response_bytes=1000))
            assert value == "a" * 998
        async with Server(reply(200, body_of(1001))) as server:
            error = await failure(transport(server.url, max_response_bytes=1000, retries=3))
            assert (str(error), error.attempts) == ("response of 1,001 bytes exceeds the 1,000-byte cap", 1)
            assert (error.kind, error.status) == ("invalid_response", None)

    asyncio.run(go())


def test_a_chunked_reply_over_the_cap_is_refused_and_exactly_the_cap_is_read() -> None:
    async def go() -> None:
        async with Server(chunked(body_of(1000), piece=300)) as server:
            value, _ = await post_once(transport(server.url, max_response_bytes=1000))
            assert value == "a" * 998
        async with Server(chunked(body_of(1001), piece=300)) as server:
            error = await failure(transport(server.url, max_response_bytes=1000))
            assert (str(error), error.kind, error.attempts) == (
                "response exceeds the 1,000-byte cap",
                "invalid_response",
                1,
            )

    asyncio.run(go())


class _Recording(_Budget):
    def __init__(self, total: int) -> None:
        super().__init__(total)
        self.taken: list[int] = []

    async def take(self, n: int) -> None:
        self.taken.append(n)
        await super().take(n)


@pytest.mark.parametrize(
    ("size", "length", "taken"),
    [
        (SMALL_REPLY_BYTES, False, []),  # 65,536 bytes, chunked: small, read without a reservation
        (SMALL_REPLY_BYTES + 1, False, [100_000]),  # one byte more: the cap reserved, its length being unknown
        (SMALL_REPLY_BYTES, True, []),  # its length said and small: read at once
        (SMALL_REPLY_BYTES + 1, True, [SMALL_REPLY_BYTES + 1]),  # its length said: exactly that reserved
    ],
)
def test_a_larger_reply_reserves_its_need_from_the_shared_budget_and_gives_it_back(
    size: int, length: bool, taken: list[int]
) -> None:
    async def go() -> None:
        payload = body_of(size)
        step = reply(200, payload) if length else chunked(payload, piece=8192)
        async with Server(step) as server:
            t = transport(server.url, max_response_bytes=100_000)
            budget = t._budget = _Recording(REPLY_BUDGET_BYTES)
            value, _ = await post_once(t)
            assert len(value) == size - 2
            assert budget.taken == taken and budget.free == REPLY_BUDGET_BYTES == 16 * 1024 * 1024

    asyncio.run(go())


def test_the_reply_budget_is_at_least_16_mib_or_the_cap_when_larger() -> None:
    assert transport("http://a.test")._budget.total == 16 * 1024 * 1024
    assert transport("http://a.test", max_response_bytes=20 * 1024 * 1024)._budget.total == 20 * 1024 * 1024


def test_the_budget_lets_a_need_of_exactly_what_is_free_through_and_makes_a_larger_one_wait() -> None:
    async def go() -> None:
        budget = _Budget(10)
        await budget.take(6)
        await asyncio.wait_for(budget.take(4), 1.0)  # 4 of 4 free: no wait
        assert budget.free == 0
        budget.give(4)
        waiting = asyncio.ensure_future(budget.take(5))  # 5 > 4 free: waits
        await asyncio.sleep(0)
        assert not waiting.done() and budget.free == 4
        budget.give(6)  # 10 free: it goes through, leaving 5
        await asyncio.wait_for(waiting, 1.0)
        assert budget.free == 5 and budget._waiters == []

    asyncio.run(go())


# GET on each replica


def test_get_each_reads_each_replicas_200_json_and_none_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FCB_DETECTOR_TOKEN", "tok-456")

    async def go() -> None:
        gets = {"/health": reply(200, b'{"ok": true}')}
        async with Server(gets=gets) as up, Server(gets={"/health": reply(200, b"<html>")}) as garbled:
            down = f"http://127.0.0.1:{closed_port()}/x"
            t = transport(up.url + "?key=v", garbled.url, down)
            try:
                assert await t.get_each("/health", 1.0) == [{"ok": True}, None, None]
                assert await t.get_each("/missing", 1.0) == [None, None, None]  # 404
            finally:
                await t.aclose()
            (method, path, headers, _), _ = up.seen
            assert (method, path) == ("GET", "/health")
            assert "Content-Type" not in headers and headers["Authorization"] == "Bearer tok-456"

    asyncio.run(go())


# headers, credentials, secrets


def test_credentials_in_the_url_become_a_basic_header() -> None:
    clean, auth = split_credentials("http://us%40er:pa%3Ass@host.test:8080/v1?x=1")
    assert clean == "http://host.test:8080/v1?x=1"
    assert auth == "Basic " + base64.b64encode(b"us@er:pa:ss").decode()
    assert split_credentials("http://user@host.test/") == (
        "http://host.test/",
        "Basic " + base64.b64encode(b"user:").decode(),
    )
    assert split_credentials("http://host.test/") == ("http://host.test/", None)


def test_headers_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    options = DetectorOptions(headers={"X-Key": "MY_KEY"})
    monkeypatch.setenv("MY_KEY", "k-1")
    assert headers_from_env(options) == {
        "Content-Type": "application/json",
        "Accept": "application/json",
        "X-Key": "k-1",
    }
    assert headers_from_env(options, "Basic abc")["Authorization"] == "Basic abc"
    monkeypatch.setenv("FCB_DETECTOR_TOKEN", "t")
    assert headers_from_env(options)["Authorization"] == "Bearer t"
    with pytest.raises(
        DetectorLoadError,
        match=r"^the detector URL carries credentials and FCB_DETECTOR_TOKEN is set: use one of them$",
    ):
        headers_from_env(options, "Basic abc")
    monkeypatch.delenv("MY_KEY")
    with pytest.raises(DetectorLoadError, match=r"^header X-Key: environment variable MY_KEY is not set$"):
        headers_from_env(options)


def test_a_url_without_a_host_is_refused_and_the_name_hides_secrets() -> None:
    with pytest.raises(DetectorLoadError, match=r"^detector URL 'http:///v1' has no host$"):
        transport("http:///v1")
    t = transport("http://u:hunter2@a.test/v1", "http://b.test/v1?api_key=s3cret-key")
    assert t.name == "http://a.test/v1,http://b.test/v1?api_key=REDACTED"  # the password went into a header


def test_the_secrets_are_the_credentials_longest_first_and_never_the_plain_headers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_KEY", "abc")  # 3 characters: too short to scrub
    monkeypatch.setenv("OTHER", "key-4444")
    options = DetectorOptions(headers={"X-Short": "MY_KEY", "X-Other": "OTHER"}, **FAST)
    t = Transport(["http://u:hunter2@a.test/v1"], options)
    basic = base64.b64encode(b"u:hunter2").decode()
    assert t.secrets() == [f"Basic {basic}", basic, "key-4444", "hunter2"]
    assert "application/json" not in t.secrets()


# the status of a reply, Retry-After, a quota spent, a body that is not JSON


@pytest.mark.parametrize("status", [200, 201, 299])
def test_2xx_passes(status: int) -> None:
    check_status(status, None, b"")


@pytest.mark.parametrize("status", [199, 300, 404, 428, 430, 499])
def test_other_statuses_below_500_except_429_are_final(status: int) -> None:
    with pytest.raises(DetectorError) as error:
        check_status(status, "5", b"x" * 250)
    assert not isinstance(error.value, _Transient)
    assert (error.value.status, str(error.value)) == (status, f"HTTP {status}: " + "x" * 200)  # the body cut at 200


@pytest.mark.parametrize("status", [429, 500, 503, 599])
def test_429_and_5xx_are_worth_another_try(status: int) -> None:
    with pytest.raises(_Transient) as error:
        check_status(status, "5", b"y" * 350 + b"secret-token", ["secret-token"])
    assert (error.value.kind, error.value.message, error.value.status) == ("http_status", f"HTTP {status}", status)
    assert error.value.retry_after == 5.0 and error.value.raw == "y" * 300  # cut at 300
    assert error.value.connect_failed is False and error.value.cut is None


def test_a_body_is_scrubbed_before_it_is_cut() -> None:
    # the secret straddles the cut at 200: scrubbed first, it leaves no part of itself behind
    with pytest.raises(DetectorError) as error:
        check_status(400, None, b"z" * 195 + b"secret-token", ["secret-token"])
    assert "secre" not in str(error.value) and str(error.value).startswith("HTTP 400: " + "z" * 195)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("0", 0.0), ("119", 119.0), ("120", 120.0), ("121", 120.0), ("", None), ("  ", None), ("1.5", None), ("-3", None)],
)
def test_retry_after_in_seconds_is_capped_at_120(value: str, seconds: float | None) -> None:
    assert MAX_RETRY_AFTER_S == 120.0
    assert retry_after_seconds(value) == seconds


def test_retry_after_as_a_date_is_the_seconds_from_now_between_0_and_120() -> None:
    assert retry_after_seconds(formatdate(time.time() - 30, usegmt=True)) == 0.0  # in the past: at once
    assert retry_after_seconds(formatdate(time.time() + 600, usegmt=True)) == 120.0
    sixty = retry_after_seconds(formatdate(time.time() + 60, usegmt=True))
    assert sixty is not None and 58.0 <= sixty <= 60.0


def test_the_quota_is_read_in_the_first_4096_bytes_whatever_the_case() -> None:
    phrase = b"insufficient_quota"
    assert quota_spent(b"x" * (4096 - len(phrase)) + phrase)  # ends at byte 4,096: read
    assert not quota_spent(b"x" * (4097 - len(phrase)) + phrase)  # one byte later: cut off
    assert quota_spent(b"YOU EXCEEDED YOUR CURRENT QUOTA")
    assert not quota_spent(b"")


def test_a_body_that_is_not_json_is_worth_another_try_and_one_too_deep_is_final() -> None:
    assert decode_json(b'{"a": [1]}') == {"a": [1]}
    with pytest.raises(_Transient) as garbled:
        decode_json(b"<p>" + b"k" * 2100 + b"tok-9999", ["tok-9999"])
    assert garbled.value.kind == "invalid_response" and garbled.value.message.startswith("response is not JSON: ")
    assert garbled.value.raw == "<p>" + "k" * 1997  # cut at 2,000 characters
    with pytest.raises(DetectorError) as deep:
        decode_json(b"[" * 1100 + b"]" * 1100)
    assert not isinstance(deep.value, _Transient)
    assert (deep.value.kind, str(deep.value)) == ("invalid_response", "response is nested more than 100 levels deep")
    assert deep.value.raw == "[" * 1100 + "]" * 900


# the waits


@pytest.mark.parametrize(
    ("initial", "status", "retry_after", "wait"),
    [
        (0.25, 429, 0.1, 0.25),  # below the floor (backoff_initial 0.25 s): the floor
        (0.25, 429, 0.25, 0.25),  # at it
        (0.25, 429, 0.3, 0.3),  # above it: as the provider asked
        (5.0, 429, 0.0, 1.0),  # the floor is at most a second
        (5.0, 429, 2.0, 2.0),
        (0.25, 503, 0.1, 0.1),  # a 503: no floor
        (0.25, 500, 7.0, 7.0),
    ],
)
def test_the_wait_after_a_retry_after(initial: float, status: int, retry_after: float, wait: float) -> None:
    t = transport("http://a.test", backoff_initial=initial, backoff_max=10.0)
    state = _state_after(_Transient("http_status", "x", retry_after, status=status), attempt=4)
    assert t._wait(state) == wait


def test_a_failure_with_no_status_backs_off_exponentially() -> None:
    # backoff_initial 0.01 s: attempt 3 waits 0.01 * 2 ** 2 = 0.04 s plus a jitter of up to 2 * 0.01 s
    t = transport("http://a.test", backoff_initial=0.01, backoff_max=5.0)
    waits = [t._wait(_state_after(_Transient("timeout", "x"), attempt=3)) for _ in range(50)]
    assert all(0.04 <= w <= 0.06 for w in waits)


def test_only_transient_failures_are_retried_and_a_refused_connection_not_while_failing_fast() -> None:
    t = transport("http://a.test")
    refused = _Transient("connection", "x", connect_failed=True)
    assert t._retryable(_Transient("timeout", "x")) and t._retryable(refused)
    assert not t._retryable(DetectorError("http_status", "HTTP 400"))
    with t.failing_fast():
        assert t._retryable(_Transient("timeout", "x")) and not t._retryable(refused)


# one request's throttling: when its 429s look refused for it alone


def test_a_request_refused_alone_three_times_gives_back_its_first_attempts_cut() -> None:
    """The gate starts at 8 in flight; a 503 to the first attempt halves it to 4 (its cut). Each judge compares the
    gate's replies since the request's previous attempt: answered, and refused others (the first attempt's own
    refusal left out). attempt 1: 0 answered, 1 - 1 = 0 others: 0 > 0 no -> alone 0. attempt 2: 3 answered, 1 other:
    3 > 1 -> 1. attempt 3: none at all on a retry -> 2. attempt 4: 1 and 1: no -> 2. attempt 5: none -> 3 = ALONE:
    the cut is given back, the gate is at 8 again."""
    assert ALONE == 3
    gate = AdaptiveGate(8)
    throttling = _Throttling(gate, (0, 0))
    gate.refused += 1
    first = _Transient("http_status", "HTTP 503", status=503)
    first.cut = gate.throttled(time.monotonic(), 503)
    assert gate.limit == 4.0
    retry = _Transient("http_status", "HTTP 503", status=503)

    throttling.judge(first, 1)
    assert (throttling.alone, throttling.window, len(throttling.cuts)) == (0, (0, 1), 1)
    gate.answered, gate.refused = 3, 2
    throttling.judge(retry, 2)
    assert (throttling.alone, throttling.window) == (1, (3, 2))
    throttling.judge(retry, 3)
    assert throttling.alone == 2
    gate.answered, gate.refused = 4, 3
    throttling.judge(retry, 4)
    assert throttling.alone == 2 and gate.limit == 4.0  # two: not yet
    throttling.judge(retry, 5)
    assert throttling.alone == 3 and gate.limit == 8.0 and throttling.cuts == []


def test_a_first_attempt_refused_with_nothing_else_going_on_is_not_alone() -> None:
    # attempt 1 with nothing answered: alone_again needs a retry; a retry with one other refused is not alone either
    gate = AdaptiveGate(8)
    throttling = _Throttling(gate, (0, 0))
    exc = _Transient("http_status", "HTTP 429", status=429)
    gate.refused = 1  # its own refusal, counted at the gate: left out
    throttling.judge(exc, 1)
    assert throttling.alone == 0
    gate.refused = 2  # another request refused meanwhile, none answered: throttled with the others
    throttling.judge(exc, 2)
    assert throttling.alone == 0
    gate.answered = 1  # one answered, none refused: alone
    throttling.judge(exc, 3)
    assert throttling.alone == 1


def test_requests_throttled_together_keep_their_cut() -> None:
    """A server that answers 429 to everyone: the request's own retries come with others refused meanwhile, so it is
    never alone and its cut stands (the pace or places stay cut)."""
    gate = AdaptiveGate(8)
    throttling = _Throttling(gate, (0, 0))
    gate.refused = 1
    exc = _Transient("http_status", "HTTP 503", status=503)
    exc.cut = gate.throttled(time.monotonic(), 503)
    for attempt in range(1, 6):
        throttling.judge(exc if attempt == 1 else _Transient("http_status", "HTTP 503", status=503), attempt)
        gate.refused += 2
    assert throttling.alone == 0 and gate.limit == 4.0 and len(throttling.cuts) == 1


def test_the_final_error_keeps_the_failures_details() -> None:
    exc = _Transient("connection", "refused", raw="r", status=None, connect_failed=True)
    error = _final(exc, 4)
    assert (error.kind, str(error), error.attempts, error.raw, error.status, error.connect_failed) == (
        "connection",
        "refused",
        4,
        "r",
        None,
        True,
    )


def test_prices_default_to_zero() -> None:
    assert _prices(DetectorOptions()) == (0.0, 0.0)
    assert _prices(DetectorOptions(price_prompt_per_mtok=1.5, price_completion_per_mtok=2.5)) == (1.5, 2.5)


@pytest.mark.parametrize(("concurrency", "patience"), [(1, 0.1), (2, 5.0)])
def test_the_connections_to_one_host_are_at_most_the_concurrency(concurrency: int, patience: float) -> None:
    """GETs are not gated: the session's own connection limit holds them. Three replicas on one server; each GET is
    held until a second one is in the server too, or ``patience`` runs out: with concurrency 2 a second comes at once,
    with concurrency 1 none ever comes while one is held (each waits its 0.1 s). At most ``concurrency`` at once."""

    async def go() -> None:
        now, most = 0, 0
        two = asyncio.Event()

        async def held(_: web.Request) -> web.StreamResponse:
            nonlocal now, most
            now += 1
            most = max(most, now)
            if now >= 2:
                two.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(two.wait(), patience)
            now -= 1
            return web.Response(body=b"1")

        async with Server(gets={"/h": held}) as server:
            t = transport(server.url, server.url, server.url, concurrency=concurrency)
            try:
                assert await t.get_each("/h", 10.0) == [1, 1, 1]
            finally:
                await t.aclose()
        assert most == concurrency

    asyncio.run(go())


def test_proxies_in_the_environment_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    # a proxy that refuses every connection: the request reaches the detector only when it goes there directly
    proxy = f"http://127.0.0.1:{closed_port()}"
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, proxy)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)

    async def go() -> None:
        async with Server(reply()) as server:
            assert await post_once(transport(server.url, retries=0)) == ({"risk": "low"}, 1)

    asyncio.run(go())


# issue 46, second round: what the first round's faults showed untested


def test_a_transient_failure_reads_as_its_message() -> None:
    assert str(_Transient("timeout", "no answer within 2 s")) == "no answer within 2 s"


def test_a_password_holding_an_at_sign_is_cut_at_the_last_one() -> None:
    # user "u", password "p@ss": the host starts after the last "@"
    clean, auth = split_credentials("http://u:p@ss@host.test/v1")
    assert clean == "http://host.test/v1" and auth == "Basic " + base64.b64encode(b"u:p@ss").decode()


BAD_UTF8 = b"\xff\xfe"  # no UTF-8 text: read with replacement characters, never an error


def test_bodies_that_are_not_utf8_are_read_with_replacement_characters() -> None:
    assert quota_spent(BAD_UTF8 + b"insufficient_quota") and not quota_spent(BAD_UTF8)
    with pytest.raises(_Transient) as transient:
        check_status(500, None, BAD_UTF8 + b"down")
    assert transient.value.raw == "\ufffd\ufffddown"
    with pytest.raises(DetectorError) as final:
        check_status(403, None, BAD_UTF8 + b"no")
    assert str(final.value) == "HTTP 403: \ufffd\ufffdno" and final.value.kind == "http_status"
    with pytest.raises(_Transient) as garbled:
        decode_json(BAD_UTF8 + b"{")
    assert garbled.value.raw == "\ufffd\ufffd{"


def test_a_secret_in_a_body_is_scrubbed_in_every_message_kept() -> None:
    secret = ["tok-secret-77"]
    with pytest.raises(_Transient) as transient:
        check_status(503, None, b"busy tok-secret-77", secret)
    assert transient.value.raw == "busy [REDACTED]"
    with pytest.raises(_Transient) as garbled:
        decode_json(b"<b>tok-secret-77</b>", secret)
    assert garbled.value.raw == "<b>[REDACTED]</b>"
    with pytest.raises(DetectorError) as deep:
        decode_json(b'["tok-secret-77", ' + b"[" * 1100 + b"]" * 1101, secret)
    assert deep.value.raw is not None and deep.value.raw.startswith('["[REDACTED]", [[[')
    assert str(deep.value) == "response is nested more than 100 levels deep"


def test_a_secret_query_value_of_the_url_is_a_secret() -> None:
    assert "s3cret-key" in transport("http://b.test/v1?api_key=s3cret-key").secrets()


def test_a_secret_of_exactly_four_characters_is_kept_and_three_are_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FOUR", "abcd")
    monkeypatch.setenv("THREE", "xyz")
    t = Transport(["http://a.test"], DetectorOptions(headers={"X-Four": "FOUR", "X-Three": "THREE"}))
    assert t.secrets() == ["abcd"]


def test_the_backoff_stops_growing_at_backoff_max() -> None:
    # attempt 10: 0.01 * 2 ** 9 = 5.12 s plus jitter, held to backoff_max, 0.05 s
    t = transport("http://a.test", backoff_initial=0.01, backoff_max=0.05)
    assert {t._wait(_state_after(_Transient("timeout", "x"), attempt=10)) for _ in range(20)} == {0.05}


def test_the_rate_limits_and_the_caps_come_from_the_options() -> None:
    t = transport("http://a.test", rpm=60, tpm=600, max_requests=7, max_cost=0.5, **PRICES)
    assert t._rates._requests is not None and t._rates._requests.rate == 1.0  # 60 a minute: 1 a second
    assert t._rates._tokens is not None and t._rates._tokens.rate == 10.0  # 600 a minute: 10 a second
    assert (t.budget.max_requests, t.budget.max_cost, t.budget.prices) == (7, 0.5, (1.0, 2.0))
    assert not transport("http://a.test")._rates.active


def test_an_attempt_waits_for_the_rate_limits_with_its_worst_tokens() -> None:
    """rpm 60 and tpm 60: buckets of 1 request and of 1 token, grown to hold a larger request. One attempt of worst
    (3, 5) tokens puts 1 in the requests' bucket and 8 in the tokens' (whose capacity grows from 1 to 8)."""

    async def go() -> None:
        async with Server(reply()) as server:
            t = transport(server.url, rpm=60, tpm=60)
            await post_once(t, worst_tokens=(3, 5))
            requests, tokens = t._rates._requests, t._rates._tokens
            assert requests is not None and tokens is not None
            assert tokens.capacity == 8.0 and 6.0 < tokens.level <= 8.0  # drained at 1 a second since
            assert requests.capacity == 1.0 and requests._lock is not None  # acquired once

    asyncio.run(go())


def test_the_request_cap_stops_a_request_before_it_is_sent() -> None:
    async def go() -> None:
        async with Server(reply()) as server:
            t = transport(server.url, max_requests=2)
            try:
                for _ in range(2):
                    await t.post(b"{}", read)
                with pytest.raises(
                    BudgetSpent, match=r"^--max-requests 2 reached \(2 sent in all, 2 in this session\)$"
                ):
                    await t.post(b"{}", read)
            finally:
                await t.aclose()
            assert server.posts == 2 and t.budget.spent_requests == 2

    asyncio.run(go())


def test_the_cost_cap_stops_a_request_that_cannot_fit_before_it_is_sent() -> None:
    async def go() -> None:
        async with Server(reply()) as server:
            t = transport(server.url, max_cost=10e-6, **PRICES)  # a worst cost of 13e-6 USD never fits in 10e-6
            with pytest.raises(BudgetSpent, match=r"^--max-cost 1e-05 USD reached"):
                await post_once(t, worst_tokens=(3, 5))
            assert server.posts == 0

    asyncio.run(go())


def test_a_request_near_the_cost_cap_waits_for_the_one_in_flight_and_goes_once_it_settles() -> None:
    """Cap 20e-6 USD, worst 13e-6 each: the second request does not fit beside the first (26e-6), so it waits; the
    first comes back having cost 3e-6 (its usage, read from the reply), and 3e-6 + 13e-6 = 16e-6 fits."""

    def usage(result: Any) -> tuple[int, int]:
        return (result["p"], result["c"])

    async def go() -> None:
        async with Server(reply(200, b'{"p": 1, "c": 1}')) as server:
            t = transport(server.url, max_cost=20e-6, **PRICES)
            try:
                both = [t.post(b"{}", read, worst_tokens=(3, 5), usage=usage) for _ in range(2)]
                assert await asyncio.gather(*both) == [({"p": 1, "c": 1}, 1)] * 2
            finally:
                await t.aclose()
            assert server.posts == 2
            assert (t.budget.spent_requests, t.budget.spent_cost) == (2, pytest.approx(6e-6))

    asyncio.run(go())


def test_a_retry_sends_the_same_body() -> None:
    async def go() -> None:
        async with Server(reply(500, b""), reply(503, b""), reply()) as server:
            assert await post_once(transport(server.url)) == ({"risk": "low"}, 3)
            assert [body for *_, body in server.seen] == [b'{"task": "q"}'] * 3

    asyncio.run(go())


def test_each_retry_waits_the_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    # retries wait 0.001 s plus a jitter of up to 0.002 s (backoff_initial 0.001): two waits in that range
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(delay: float, *args: Any, **kw: Any) -> Any:
        if delay > 0:
            slept.append(delay)
        return await real_sleep(delay, *args, **kw)

    async def go() -> None:
        async with Server(reply(500, b""), reply(500, b""), reply()) as server:
            monkeypatch.setattr(asyncio, "sleep", sleep)
            assert await post_once(transport(server.url)) == ({"risk": "low"}, 3)
            monkeypatch.setattr(asyncio, "sleep", real_sleep)
        assert len(slept) == 2 and all(0.001 <= s <= 0.003 for s in slept)

    asyncio.run(go())


def test_a_closed_transport_has_closed_its_session() -> None:
    async def go() -> None:
        async with Server(reply()) as server:
            t = transport(server.url)
            await post_once(t)
            assert t._session is not None and t._session.closed
            await transport(server.url).aclose()  # never used: nothing to close

    asyncio.run(go())


def test_every_first_attempts_429_is_counted_at_the_gate() -> None:
    async def go() -> None:
        async with Server(reply(429, b""), reply(), reply(429, b""), reply()) as server:
            t = transport(server.url)
            try:
                assert await t.post(b"{}", read) == ({"risk": "low"}, 2)
                assert await t.post(b"{}", read) == ({"risk": "low"}, 2)
            finally:
                await t.aclose()
            assert (t.gate.refused, t.gate.answered) == (2, 2)

    asyncio.run(go())


@pytest.mark.parametrize(("status", "paced", "limit"), [(429, True, 8.0), (503, False, 4.0)])
def test_a_first_attempts_429_cuts_the_pace_and_a_503_the_places_in_flight(
    status: int, paced: bool, limit: float
) -> None:
    """Two answers first, so that the gate knows the rate replies come back at. Then a 429 sets a pace (the
    places in flight stay 8); a 503 halves the places in flight, 8 to 4, and sets no pace."""

    async def go() -> None:
        async with Server(reply(), reply(), reply(status, b""), reply()) as server:
            t = transport(server.url, retries=1)
            try:
                for _ in range(2):
                    await t.post(b"{}", read)
                assert await t.post(b"{}", read) == ({"risk": "low"}, 2)
            finally:
                await t.aclose()
            assert (t.gate.pace is not None, t.gate.limit, t.gate.cuts) == (paced, limit, 1)

    asyncio.run(go())


def test_a_request_refused_alone_gives_back_its_cut_and_other_failures_are_not_judged() -> None:
    """A 503 to the first attempt halves the places in flight (8 to 4). Its retries come with nothing else going on:
    each 503 looks refused for this request alone (attempt 1 does not: 0 answered, 0 others); the third such one
    (attempt 4) gives the cut back, 4 to 8. Three 500s in its place are not throttling and say nothing: 4 stays."""

    async def go() -> None:
        async with Server(reply(503, b""), reply(503, b""), reply(503, b""), reply(503, b""), reply()) as server:
            t = transport(server.url, retries=4)
            assert await post_once(t) == ({"risk": "low"}, 5)
            assert t.gate.limit == 8.0
        async with Server(reply(503, b""), reply(500, b""), reply(500, b""), reply(500, b""), reply()) as server:
            t = transport(server.url, retries=4)
            assert await post_once(t) == ({"risk": "low"}, 5)
            assert t.gate.limit == 4.0

    asyncio.run(go())


def test_a_first_attempt_refused_while_another_was_answered_looks_alone() -> None:
    # attempt 1: 1 answered, 1 refused of which 1 its own: 1 answered > 0 others -> alone 1
    gate = AdaptiveGate(8)
    throttling = _Throttling(gate, (0, 0))
    gate.answered, gate.refused = 1, 1
    throttling.judge(_Transient("http_status", "HTTP 429", status=429), 1)
    assert throttling.alone == 1


def test_a_second_attempt_with_nothing_else_going_on_looks_alone() -> None:
    gate = AdaptiveGate(8)
    throttling = _Throttling(gate, (0, 1))
    throttling.judge(_Transient("http_status", "HTTP 429", status=429), 2)
    assert throttling.alone == 1


def test_the_error_of_a_reply_keeps_no_secret_of_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    # a header value from a variable whose name does not look secret: only the transport's own secrets scrub it
    monkeypatch.setenv("FCB_TEST_HEADER", "hdr-value-99")

    async def go() -> None:
        async with Server(reply(500, b"you sent hdr-value-99"), reply(400, b"again hdr-value-99")) as server:
            t = transport(server.url, retries=0, headers={"X-Api": "FCB_TEST_HEADER"})
            error = await failure(t)
            assert error.raw == "you sent [REDACTED]"
            t = transport(server.url, retries=0, headers={"X-Api": "FCB_TEST_HEADER"})
            error = await failure(t)
            assert str(error) == "HTTP 400: again [REDACTED]"
            assert server.seen[0][2]["X-Api"] == "hdr-value-99"

    asyncio.run(go())


def test_a_redirect_is_not_followed() -> None:
    async def go() -> None:
        gets = {"/elsewhere": reply(200, b'{"risk": "high"}')}
        async with Server(gets=gets) as server:
            server.replies = [reply(302, b"", Location="/elsewhere")]
            error = await failure(transport(server.url, retries=2))
            assert (str(error), error.attempts, len(server.seen)) == ("HTTP 302: ", 1, 1)
            t = transport(server.url.replace("/v1/consensus", "/start"))
            server.gets["/start"] = reply(302, b"", Location="/elsewhere")
            try:
                assert await t.get_each("/start", 1.0) == [None]
            finally:
                await t.aclose()

    asyncio.run(go())


def test_a_malformed_reply_is_a_connection_fault_with_its_message_cut_at_300_and_scrubbed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FCB_TEST_HEADER", "tok-secret-77")  # a name that does not look secret: the header makes it one

    async def go() -> None:
        async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.read(100)
            writer.write(b"GARBAGE tok-secret-77 " + b"b" * 400 + b"\r\n\r\n")
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(garbage, "127.0.0.1", 0)
        try:
            port = server.sockets[0].getsockname()[1]
            url = f"http://127.0.0.1:{port}/v1/consensus"
            t = transport(url, retries=0, headers={"X-Api": "FCB_TEST_HEADER"}, **PRICES)
            error = await failure(t, worst_tokens=(3, 5))
        finally:
            server.close()
        assert (error.kind, error.connect_failed, error.status) == ("connection", False, None)
        assert len(str(error)) == 300 and str(error).startswith('ClientResponseError: 400, message="Bad status line')
        assert "[REDACTED]" in str(error) and "tok-secret" not in str(error)
        assert t.budget.spent_cost == pytest.approx(WORST)  # connected and sent: it may have been billed

    asyncio.run(go())


def test_get_each_asks_the_path_without_the_query_and_reads_only_a_200() -> None:
    async def go() -> None:
        gets = {"/health": reply(200, b'{"ok": true}'), "/nf": reply(404, b'{"error": "not found"}')}
        async with Server(gets=gets) as server:
            t = transport(server.url + "?key=v")
            try:
                assert await t.get_each("/health", 1.0) == [{"ok": True}]
                assert await t.get_each("/nf", 1.0) == [None]
            finally:
                await t.aclose()
            assert [(path, query) for _, path, query, *_ in server.queries] == [("/health", ""), ("/nf", "")]

    asyncio.run(go())


@pytest.mark.parametrize(("asked", "option"), [(0.05, 5.0), (5.0, 0.05)])
def test_get_each_gives_up_at_the_shorter_of_its_timeout_and_the_detectors(asked: float, option: float) -> None:
    async def go() -> None:
        async def late(_: web.Request) -> web.StreamResponse:
            await asyncio.sleep(0.25)  # later than 0.05 s, well within 5 s
            return web.Response(body=b'{"late": true}')

        async with Server(gets={"/health": late}) as server:
            t = transport(server.url, timeout=option)
            try:
                assert await t.get_each("/health", asked) == [None]
            finally:
                await t.aclose()

    asyncio.run(go())


def test_replicas_share_the_requests_in_flight_and_count_them_back_to_zero() -> None:
    """Three requests at once on two replicas, each held until all three have arrived: the first goes to A (0 and
    0: the first of a tie), the second to B (A has 1), the third to A again (1 and 1: the first). A sees 2, B 1."""

    async def go() -> None:
        arrived = 0
        everyone = asyncio.Event()

        async def held(request: web.Request) -> web.StreamResponse:
            nonlocal arrived
            arrived += 1
            if arrived == 3:
                everyone.set()
            await asyncio.wait_for(everyone.wait(), 5.0)
            return web.Response(body=b'{"risk": "low"}')

        async with Server(held) as a, Server(held) as b:
            t = Transport([a.url, b.url], DetectorOptions(**FAST))
            try:
                got = await asyncio.gather(*(t.post(b"{}", read) for _ in range(3)))
            finally:
                await t.aclose()
            assert got == [({"risk": "low"}, 1)] * 3
            assert (a.posts, b.posts) == (2, 1)
            assert [r.outstanding for r in t._replicas] == [0, 0]

    asyncio.run(go())
