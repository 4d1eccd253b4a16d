"""The HTTP client that every adapter speaking HTTP shares (the detector API in `http.py`, chat completions in
`llm.py`): one aiohttp session per detector, its connection limit, retries with backoff and ``Retry-After``,
replicas, reply bodies read within a cap and a shared memory budget, and error text with no secret in it.

The client is aiohttp. httpx was measured first against a local detector that waits 50 ms: at concurrency 64 its
connection pool spent about 10 ms of CPU per request and reached 8% of the ideal throughput (httpcore's pool scans
every connection for every connection); on aiohttp's pool it reached 81% but mapped disconnects to connect timeouts.
Plain aiohttp reached 87%, at 0.15 ms of CPU per request, and has a true whole-request timeout.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import email.utils
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp
import orjson
from tenacity import AsyncRetrying, AttemptManager, RetryCallState, retry_if_exception, wait_exponential_jitter

from harness.detectors.limits import AdaptiveGate, Budget, Cut, ProviderStopped, RateLimits, exhausted_for
from harness.detectors.options import DetectorOptions
from harness.errors import DetectorLoadError
from harness.jsoncheck import too_deep_message
from harness.redact import clip, header_secrets, redact_url, url_secrets
from harness.types import DetectorError

T = TypeVar("T")
Interpret = Callable[[bytes], T]
"""Reads a 2xx reply body into what the adapter returns; raises `DetectorError` for a reply of the wrong shape."""
MAX_RETRY_AFTER_S = 120.0
THROTTLE_STATUSES = (429, 503)  # the provider is overloaded: fewer requests in flight
ALONE = 3
"""429s or 503s that look refused for one request alone (`_Throttling`) before it is taken to be: one such reply
comes now and then to a request throttled with the others (the benchmark's adaptive runs saw their late 429s grow from
1-2% to 7-13% when one was enough), three in a row all but never."""
REFUSALS = 10
"""429s one request may meet before its case is an error (`Transport.post`; ``retries + 1`` when more): under
throttling that the run's pace follows, 10 in a row for one request is all but impossible (1-3% of requests are
refused once the pace settles), while a request refused for good ends in seconds, not ``throttle_patience``."""
REPLICA_COOLDOWN_S = 5.0
SMALL_REPLY_BYTES = 64 * 1024  # read without a reservation: ordinary replies never wait for the budget
REPLY_BUDGET_BYTES = 16 * 1024 * 1024  # what all larger replies in flight may hold together (4 at the cap)
_PLAIN_HEADERS = ("Content-Type", "Accept")  # the headers that hold no secret
Usage = Callable[[Any], tuple[int, int]]
"""(prompt, completion) tokens that a reply read by `Interpret` cost."""


class _Budget:
    """Bytes that the larger replies in flight may hold together, so that memory is bounded whatever the
    concurrency: a reply reserves its whole need at once (its declared length, or the cap when it is chunked) and
    waits, within its timeout, while the budget is taken; a holder never waits for more, so none can deadlock."""

    def __init__(self, total: int) -> None:
        self.total = self.free = total
        self._waiters: list[asyncio.Future[None]] = []

    async def take(self, n: int) -> None:
        while self.free < n:
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        self.free -= n

    def give(self, n: int) -> None:
        self.free += n
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


class _Transient(Exception):
    """A failure worth another try: connection trouble, a timeout, 429 or 5xx."""

    def __init__(
        self,
        kind: str,
        message: str,
        retry_after: float | None = None,
        connect_failed: bool = False,
        raw: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind, self.message, self.retry_after, self.raw = kind, message, retry_after, raw
        self.connect_failed = connect_failed  # no connection could be made at all (refused, unknown host)
        self.status = status  # the HTTP status of a 429 or 5xx
        self.cut: Cut | None = None  # what a 429 or 503 cut at the gate


def split_credentials(url: str) -> tuple[str, str | None]:
    """(url without user:password, a Basic ``Authorization`` value for them or None)."""
    parts = urlsplit(url)
    if parts.username is None:
        return url, None
    pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc)), "Basic " + base64.b64encode(pair).decode()


def headers_from_env(options: DetectorOptions, basic_auth: str | None = None) -> dict[str, str]:
    """Request headers whose values come from the environment. A named variable that is unset is an error."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    token = os.environ.get(options.token_env)
    if token and basic_auth:
        raise DetectorLoadError(f"the detector URL carries credentials and {options.token_env} is set: use one of them")
    if token or basic_auth:
        headers["Authorization"] = f"Bearer {token}" if token else str(basic_auth)
    for name, env in options.headers.items():
        if env not in os.environ:
            raise DetectorLoadError(f"header {name}: environment variable {env} is not set")
        headers[name] = os.environ[env]
    return headers


def retry_after_seconds(value: str | None) -> float | None:
    """A ``Retry-After`` header (seconds, or an HTTP date) as seconds from now; None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit takes "²" and "٣" too, which float() refuses
        return min(float(value), MAX_RETRY_AFTER_S)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when.timestamp() - time.time()), MAX_RETRY_AFTER_S)


QUOTA_SPENT = ("insufficient_quota", "exceeded your current quota")
"""What a 429's body says when the account's quota or credit is spent (OpenAI's code and message, which
OpenAI-compatible servers copy): no wait will help, so the run stops at once instead of waiting it out."""


def quota_spent(payload: bytes) -> bool:
    """Whether a 429 reply's body says the quota is spent (`QUOTA_SPENT`), not that requests came too fast."""
    text = payload[:4096].decode("utf-8", "replace").lower()
    return any(phrase in text for phrase in QUOTA_SPENT)


def check_status(status: int, retry_after: str | None, payload: bytes, secrets: list[str] | None = None) -> None:
    """Raise for a reply that is not 2xx: 429 and 5xx are worth another try, other statuses are final; a 429 saying
    the quota is spent stops the run (`ProviderStopped`)."""
    if status == 429 or status >= 500:
        body = clip(payload.decode("utf-8", "replace"), 300, secrets or [])  # scrubbed before it is cut
        if status == 429 and quota_spent(payload):
            raise ProviderStopped(f"the provider says the quota is spent: HTTP 429: {body}")
        raise _Transient(
            "http_status", f"HTTP {status}", retry_after_seconds(retry_after), status=status, raw=body or None
        )
    if not 200 <= status < 300:
        body = clip(payload.decode("utf-8", "replace"), 200, secrets or [])  # scrubbed before it is cut
        raise DetectorError("http_status", f"HTTP {status}: {body}", status=status)


def decode_json(payload: bytes, secrets: list[str] | None = None) -> Any:
    """A reply body as JSON. A body that cannot be parsed (cut short, an HTML error page) is worth another try,
    as a transport fault is; once the retries are spent it is an ``invalid_response`` keeping the start of the
    raw text. A body nested past orjson's own depth limit is final: it is well formed, only too deep."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        text = clip(payload.decode("utf-8", "replace"), 2000, secrets or [])
        if "depth limit" in str(exc):
            raise DetectorError("invalid_response", too_deep_message("response"), raw=text) from None
        raise _Transient("invalid_response", f"response is not JSON: {exc}", raw=text) from None


@dataclass
class _Replica:
    """One endpoint of a detector served by several replicas."""

    url: str
    headers: dict[str, str]
    outstanding: int = 0
    down_until: float = 0.0  # monotonic time before which a failing replica is avoided


class Transport:
    """POSTs to one URL, or to several replicas of one service, with retries and bounded replies.

    Each attempt goes to the healthy replica with the fewest requests in flight; a replica that fails (connection,
    timeout, 429, 5xx) is avoided for `REPLICA_COOLDOWN_S`, so that its requests are retried elsewhere rather than
    failed. Credentials in a URL become a Basic ``Authorization`` header; ``options`` name the other headers.
    """

    def __init__(self, urls: Sequence[str], options: DetectorOptions) -> None:
        self._url_secrets = [secret for u in urls for secret in url_secrets(u)]
        self._options = options
        self._replicas = []
        for u in urls:
            if not urlsplit(u).hostname:
                raise DetectorLoadError(f"detector URL {redact_url(u)!r} has no host")
            clean, basic_auth = split_credentials(u)
            self._replicas.append(_Replica(clean, headers_from_env(options, basic_auth)))
        self.name = ",".join(redact_url(r.url) for r in self._replicas)
        """The URLs with their secrets redacted, comma-separated: fit to show and to store."""
        # jitter of up to 1 s, or of twice the first wait when that is shorter: a 10 ms backoff stays about 10 ms
        jitter = min(1.0, 2 * options.backoff_initial)
        self._backoff = wait_exponential_jitter(
            multiplier=options.backoff_initial, max=options.backoff_max, jitter=jitter
        )
        self._session: aiohttp.ClientSession | None = None  # made inside the running event loop
        self._budget = _Budget(max(REPLY_BUDGET_BYTES, options.max_response_bytes))
        # the least wait after a 429: backoff_initial, at most a second (a provider's Retry-After above it stands)
        self._throttle_floor = min(options.backoff_initial, 1.0)
        self._retry_connect = True  # False during a preflight: an unreachable endpoint fails at once
        self._secrets: list[str] | None = None
        self.gate = AdaptiveGate(options.concurrency)
        self._rates = RateLimits(options.rpm, options.tpm)
        self.budget = Budget(options.max_requests, options.max_cost, _prices(options))

    def secrets(self) -> list[str]:
        """Values that must never be written anywhere: credentials in headers and in the URL.

        Longest first, so that scrubbing a whole header value happens before scrubbing a part of it.
        """
        if self._secrets is None:  # headers are fixed once made: worked out once
            found = list(self._url_secrets)
            for replica in self._replicas:
                for name, value in replica.headers.items():
                    if name not in _PLAIN_HEADERS:
                        found += header_secrets(value)
            self._secrets = sorted({s for s in found if len(s) >= 4}, key=len, reverse=True)
        return self._secrets

    @contextlib.contextmanager
    def failing_fast(self) -> Iterator[None]:
        """Within this block a single endpoint that cannot be reached at all is not retried (a preflight)."""
        self._retry_connect = len(self._replicas) > 1  # other replicas may be up: keep moving to them
        try:
            yield
        finally:
            self._retry_connect = True

    async def post(
        self, body: bytes, interpret: Interpret[T], worst_tokens: tuple[int, int] = (0, 0), usage: Usage | None = None
    ) -> tuple[T, int]:
        """POST ``body`` with retries; ``interpret(payload)`` reads each 2xx reply.

        Returns what ``interpret`` returned and the number of attempts. Connection errors, timeouts, 429, 5xx and a
        2xx body that is not JSON (`decode_json`) are retried (``Retry-After`` honoured); anything ``interpret``
        raises as `DetectorError` (a reply of the wrong shape) is final. A 429 is not one of the case's failures
        while it waits less than ``throttle_patience`` seconds in all (each wait at least ``backoff_initial``, or 1
        s when that is less): the provider is throttling the run, not refusing the case. ``worst_tokens`` (prompt,
        completion) is what an attempt may cost at most, for ``--tpm`` and ``--max-cost``; ``usage`` reads what a
        reply did cost. Raises `BudgetSpent` before an attempt that would pass a cap, and `ProviderStopped` when
        the provider's quota is spent or no request was answered for ``stall_patience`` seconds of throttling.

        A case meets at most `REFUSALS` 429s (or ``retries + 1`` when more), then it is an error. Only a first
        attempt's 429 or 503 cuts the run's pace or places in flight, and a request that proves refused for itself
        (`_Throttling`) gives its cut back: a quota for one kind of request, or a filter, must not slow the others.
        """
        throttling = _Throttling(self.gate, (self.gate.answered, self.gate.refused))
        try:  # the first attempt outside tenacity: most replies come at once, and its loop costs more than a reply
            return await self._post(body, interpret, worst_tokens, usage), 1
        except _Transient as exc:  # tenacity decides whether to try again, as for any later attempt
            first = [exc]
        except DetectorError as exc:
            exc.attempts = 1
            raise exc.with_traceback(None) from None
        attempts = failures = 0

        def stop(state: RetryCallState) -> bool:
            nonlocal failures
            exc = state.outcome.exception() if state.outcome else None
            if isinstance(exc, _Transient) and exc.status in THROTTLE_STATUSES:
                throttling.judge(exc, state.attempt_number)
            if isinstance(exc, _Transient) and exc.status == 429:
                self._check_stall(exc)
                throttling.met += 1
                if throttling.met >= max(REFUSALS, self._options.retries + 1):
                    return True
                if throttling.waited < self._options.throttle_patience:
                    throttling.waited += self._wait(state)  # an estimate: tenacity asks for the wait again, alike
                    return False
            failures += 1
            return failures > self._options.retries

        retrying = AsyncRetrying(stop=stop, wait=self._wait, retry=retry_if_exception(self._retryable), reraise=True)
        attempt: AttemptManager | None = None
        try:
            async for attempt in retrying:
                with attempt:
                    attempts += 1
                    if first:  # the first attempt's failure, counted by tenacity and waited on as any other
                        raise first.pop()
                    # a retry's 429 or 503 says nothing new of the run's pace (its first attempt's did): it cuts nothing
                    return await self._post(body, interpret, worst_tokens, usage, paced=False), attempts
            raise AssertionError("unreachable: tenacity either returns or re-raises")
        except _Transient as exc:
            error = _final(exc, attempts)
        except DetectorError as exc:
            exc.attempts = attempts
            error = exc.with_traceback(None)
        # raised out here, with no traceback below this frame and no retry state left in it: otherwise a reference
        # cycle (error -> traceback -> frames -> retry state -> error) keeps each failed reply's buffers alive
        # until the garbage collector happens to run
        del retrying, attempt
        raise error

    async def get_each(self, path: str, timeout: float) -> list[Any]:
        """``GET path`` once on each replica, no retry: each 200 reply's JSON, or None where there is none."""
        return list(await asyncio.gather(*(self._get(r, path, timeout) for r in self._replicas)))

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=self._options.concurrency, limit_per_host=0)
            self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(total=self._options.timeout),  # the whole request, body included
                trust_env=False,
            )
        return self._session

    def _pick(self) -> _Replica:
        now = time.monotonic()
        healthy = [r for r in self._replicas if r.down_until <= now]
        if not healthy:  # all are resting: the one that will recover first
            return min(self._replicas, key=lambda r: r.down_until)
        return min(healthy, key=lambda r: r.outstanding)

    def _wait(self, state: Any) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, _Transient) and exc.retry_after is not None:
            if exc.status == 429:  # a floor under the wait: "Retry-After: 0" forever must neither flood the provider
                return max(exc.retry_after, self._throttle_floor)  # nor leave the case's patience unspent
            return exc.retry_after
        if isinstance(exc, _Transient) and exc.status == 429:
            # the gate's pace keeps the run under the limit: a case throttled again and again must not wait longer
            # each time (seconds, then minutes), it would be the last of the run by far
            return self._backoff(_FIRST_RETRY)
        return self._backoff(state)

    def _retryable(self, exc: BaseException) -> bool:
        return isinstance(exc, _Transient) and (self._retry_connect or not exc.connect_failed)

    def _check_stall(self, exc: _Transient) -> None:
        """Stop the run (`ProviderStopped`) when no request was answered for ``stall_patience`` seconds."""
        silent = time.monotonic() - self.gate.last_answer
        if silent >= self._options.stall_patience:
            last = f"{exc.message}: {exc.raw}" if exc.raw else exc.message
            raise ProviderStopped(
                f"no request was answered for {silent:.0f} s while the provider throttled the run "
                f"(stall_patience {self._options.stall_patience:g} s); its last reply: {last}"
            )

    async def _post(
        self, body: bytes, interpret: Interpret[T], worst: tuple[int, int], usage: Usage | None, paced: bool = True
    ) -> T:
        worst_cost = self.budget.cost(*worst)
        if not self.budget.reserve_now(worst_cost):  # BudgetSpent when it cannot fit: nothing is sent
            await self.budget.reserve(worst_cost)  # a cost cap near: waits for the replies in flight
        cost = worst_cost  # until a reply says otherwise: a request the provider may have billed counts at its most
        try:
            if self._rates.active:
                await self._rates.acquire(sum(worst))
            sent_at = self.gate.enter_now() or await self.gate.enter()
            try:
                result = await self._attempt(body, interpret, sent_at, paced)
            finally:
                self.gate.leave()
            cost = self.budget.cost(*usage(result)) if usage is not None else 0.0
            return result
        except ProviderStopped:
            cost = 0.0  # a 429: nothing was generated
            raise
        except (_Transient, DetectorError) as exc:
            if exc.status is not None or (isinstance(exc, _Transient) and exc.connect_failed):
                cost = 0.0  # refused with a status, or never connected: nothing was generated
            raise
        finally:
            self.budget.settle(worst_cost, cost)

    async def _attempt(self, body: bytes, interpret: Interpret[T], sent_at: float, paced: bool = True) -> T:
        replica = self._pick()
        replica.outstanding += 1
        try:
            status, headers, payload = await self._post_to(replica, body)
            if (pause := exhausted_for(headers)) is not None:
                self.gate.pause(pause)
            # a request not known to be refused for itself: the gate hears of it, and counts it among the refused
            # (its own wait is Retry-After's: `_wait` reads it)
            cut = None
            if status in THROTTLE_STATUSES and paced:
                self.gate.refused += 1
                cut = self.gate.throttled(sent_at, status)
            try:
                check_status(status, headers.get("Retry-After"), payload, self.secrets())
            except _Transient as exc:
                exc.cut = cut
                raise
            result = interpret(payload)
            self.gate.healthy()
            return result
        except _Transient:
            if len(self._replicas) > 1:
                replica.down_until = time.monotonic() + REPLICA_COOLDOWN_S
            raise
        finally:
            replica.outstanding -= 1

    async def _post_to(self, replica: _Replica, body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        try:
            async with self._client().post(
                replica.url, data=body, headers=replica.headers, allow_redirects=False
            ) as resp:
                return resp.status, resp.headers, await self._read_capped(resp)
        except TimeoutError:
            raise _Transient("timeout", f"no answer within {self._options.timeout:g} s") from None
        except (aiohttp.ClientError, OSError) as exc:  # refused, reset, disconnected, malformed HTTP
            refused = isinstance(exc, aiohttp.ClientConnectorError)
            message = clip(f"{type(exc).__name__}: {exc}", 300, self.secrets())
            raise _Transient("connection", message, connect_failed=refused) from None

    async def _get(self, replica: _Replica, path: str, timeout: float) -> Any:
        url = urlunsplit(urlsplit(replica.url)._replace(path=path, query=""))
        limit = aiohttp.ClientTimeout(total=min(timeout, self._options.timeout))
        headers = {k: v for k, v in replica.headers.items() if k != "Content-Type"}
        try:
            async with self._client().get(url, headers=headers, timeout=limit, allow_redirects=False) as resp:
                return orjson.loads(await self._read_capped(resp)) if resp.status == 200 else None
        except (TimeoutError, aiohttp.ClientError, OSError, orjson.JSONDecodeError, DetectorError):
            return None

    async def _read_capped(self, resp: aiohttp.ClientResponse) -> bytes:
        """The body, streamed into a buffer that never grows past the cap; on overflow the buffer is emptied before
        the error is raised, so that nothing (a traceback, a retry state) keeps megabytes alive."""
        cap = self._options.max_response_bytes
        declared = resp.content_length
        if declared is not None and declared > cap:
            raise DetectorError("invalid_response", f"response of {declared:,} bytes exceeds the {cap:,}-byte cap")
        if declared is not None and declared <= SMALL_REPLY_BYTES:  # the usual reply: small, its length said
            return await resp.read()  # aiohttp reads no more than the declared length
        body, reserved = bytearray(), 0
        try:
            async for chunk in resp.content.iter_any():
                size = len(body) + len(chunk)
                if size > cap:
                    body.clear()
                    raise DetectorError("invalid_response", f"response exceeds the {cap:,}-byte cap")
                if size > max(reserved, SMALL_REPLY_BYTES) and not reserved:
                    reserved = declared or cap
                    await self._budget.take(reserved)
                body += chunk
            return bytes(body)
        finally:
            body.clear()
            if reserved:
                self._budget.give(reserved)


@dataclass
class _Throttling:
    """One request's 429s and 503s. One looks refused for this request alone when, since its previous attempt was
    sent, the provider answered more other requests than it refused, or when it came to a retry sent with no other
    request sent meanwhile (after the wait it asked for). A request throttled with the others meets that now and
    then (the provider answers at its rate meanwhile, and the retry comes at a bad moment); a request refused for good
    meets it every time. After `ALONE` of them, what its first attempt had cut at the gate is given back (its
    retries cut nothing: a request refused for good must not slow the others)."""

    gate: AdaptiveGate
    window: tuple[int, int]  # the gate's answered and refused replies when the latest attempt was sent
    met: int = 0  # 429s met
    waited: float = 0.0  # seconds waited after them
    alone: int = 0  # 429s and 503s that looked refused for this request alone
    cuts: list[Cut] = field(default_factory=list)

    def judge(self, exc: _Transient, attempt_number: int) -> None:
        if exc.cut is not None:
            self.cuts.append(exc.cut)
        own = attempt_number == 1  # only a first attempt's refusal was counted at the gate
        answered, others = self.gate.answered - self.window[0], self.gate.refused - self.window[1] - own
        self.window = (self.gate.answered, self.gate.refused)
        alone_again = attempt_number > 1 and answered == others == 0
        self.alone += answered > others or alone_again
        if self.alone >= ALONE:
            for cut in self.cuts:
                self.gate.retract(cut)
            self.cuts.clear()


def _final(exc: _Transient, attempts: int) -> DetectorError:
    """The case's error once a transient failure is not tried again."""
    return DetectorError(exc.kind, exc.message, attempts, raw=exc.raw, status=exc.status,
                         connect_failed=exc.connect_failed)  # fmt: skip


class _FirstRetry:
    """What tenacity's waits read of a retry state, as for the first retry."""

    attempt_number = 1


_FIRST_RETRY: Any = _FirstRetry()  # tenacity reads only its attempt_number


def _prices(options: DetectorOptions) -> tuple[float, float]:
    return (options.price_prompt_per_mtok or 0.0, options.price_completion_per_mtok or 0.0)
