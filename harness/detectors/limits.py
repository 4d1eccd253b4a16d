"""What a provider allows and what the user will spend: client-side rate limits, concurrency that adapts to
throttling, and caps on requests and cost. The `Transport` consults them around every attempt it sends.

- `RateLimits`: ``--rpm`` and ``--tpm`` as leaky buckets (`LeakyBucket`) holding half a second's worth of the limit
  (at least one request, or the largest request's tokens), so a run never bursts a minute's worth at once: providers
  refill their own buckets continuously (OpenAI and Anthropic hold about a second's worth) and answer a burst with
  429; half a second leaves room for requests that arrive bunched together. A bucket grows to hold a larger request
  without emptying: what was let through stays counted.
- `AdaptiveGate`: when requests go out. After a 429 it paces them just under the rate the provider answered at, and
  speeds up while no 429 comes; after a 503 it halves the requests in flight, growing back while replies are
  healthy. A throttled request waits its ``Retry-After``; an exhausted ``x-ratelimit-remaining-*`` header pauses
  every sender until the provider's stated reset.
- `Budget`: ``--max-requests`` and ``--max-cost``. A request is sent only when it fits beside what was spent and what
  is in flight (cost reserved at its worst: the prompt's tokens estimated from its size, plus ``max_tokens``); when it
  does not fit, `BudgetSpent` stops the run cleanly and the case stays pending for ``--resume`` with a higher cap.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from harness.types import BUDGET_STOP, PROVIDER_STOP

MAX_PAUSE_S = 120.0
RATE_SAMPLE = 20  # the replies over which the rate that replies come back is measured
MIN_PACE = 1 / 60  # requests a second: never slower than one a minute
GROWTH = 1.05  # the pace's rise after each second without a 429, up to NEAR the rate the provider last allowed
NEAR = 0.97
PROBE_GROWTH = 1.005  # its rise past that point, doubling every two seconds up to GROWTH: a limit that rose, or
# was seen too low (replies lulled), is found again within seconds, while a settled pace overshoots by little
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@runtime_checkable
class HasBudget(Protocol):
    """Sends requests, and counts them (and their cost) against the run's caps: HTTP and llm: detectors."""

    @property
    def budget(self) -> Budget: ...


class RunStopped(Exception):
    """The run must stop before this request: the case stays pending for ``--resume``. ``prefix`` begins the run's
    ``stopped`` reason (`harness.types.BUDGET_STOP`, `harness.types.PROVIDER_STOP`)."""

    prefix = ""

    @property
    def reason(self) -> str:
        return self.prefix + str(self)


class BudgetSpent(RunStopped):
    """The next request would pass ``--max-requests`` or ``--max-cost``: the run stops, the case stays pending."""

    prefix = BUDGET_STOP


class ProviderStopped(RunStopped):
    """The provider will not answer: its quota is spent, or nothing was answered for ``stall_patience`` seconds."""

    prefix = PROVIDER_STOP


def duration_seconds(text: str) -> float | None:
    """A reset time as providers write it: ``"1.5s"``, ``"6m0s"``, ``"20ms"``, ``"1h2m"``, or plain seconds."""
    text = text.strip()
    try:
        return float(text)
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def exhausted_for(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait when an ``x-ratelimit-remaining-requests`` or ``-tokens`` header says nothing is left
    (the matching ``x-ratelimit-reset-*`` header says how long); None when something is left or nothing is said."""
    waits = []
    for kind in ("requests", "tokens"):
        remaining = headers.get(f"x-ratelimit-remaining-{kind}")
        reset = headers.get(f"x-ratelimit-reset-{kind}")
        if remaining is None or reset is None or remaining.strip() not in ("0", "0.0"):
            continue
        seconds = duration_seconds(reset)
        if seconds is not None:
            waits.append(min(seconds, MAX_PAUSE_S))
    return max(waits) if waits else None


def token_estimate(body: bytes, max_tokens: int) -> int:
    """A chat request's tokens at most: about four bytes of prompt per token (a generous count for English and
    JSON), plus the most the reply may hold."""
    return math.ceil(len(body) / 4) + max_tokens


class LeakyBucket:
    """``per_minute`` units a minute, drained continuously; it holds half a second's worth (at least one unit).

    `acquire` lets ``n`` units through once they fit under the capacity, first come first served. A request larger
    than the capacity grows it to hold that request, without emptying it: what was let through stays counted, so a
    run of ever larger requests is held to the rate as any other (aiolimiter, used before, cannot grow a bucket; a
    new one started full). ``clock`` and ``sleep`` are the event loop's unless a test forces its own.
    """

    def __init__(
        self,
        per_minute: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.rate = per_minute / 60  # units a second
        self.capacity = max(per_minute / 120, 1.0)
        self.level = 0.0
        self._clock, self._sleep = clock, sleep
        self._at = clock()
        self._lock: asyncio.Lock | None = None  # made in the running loop

    def _drain(self) -> None:
        now = self._clock()
        self.level = max(0.0, self.level - (now - self._at) * self.rate)
        self._at = now

    async def acquire(self, n: float = 1.0) -> None:
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:  # one waiter at a time: the first to come is the first let through
            self.capacity = max(self.capacity, n)
            self._drain()
            while self.level + n > self.capacity:
                await self._sleep((self.level + n - self.capacity) / self.rate)
                self._drain()
            self.level += n


class RateLimits:
    """``rpm`` requests and ``tpm`` tokens per minute, each as a `LeakyBucket` of half a second's worth."""

    def __init__(self, rpm: int | None, tpm: int | None) -> None:
        self._requests = LeakyBucket(rpm) if rpm else None
        self._tokens = LeakyBucket(tpm) if tpm else None

    @property
    def active(self) -> bool:
        """Whether any limit was set: without one, `acquire` has nothing to wait for."""
        return self._requests is not None or self._tokens is not None

    async def acquire(self, tokens: int = 0) -> None:
        if self._requests is not None:
            await self._requests.acquire()
        if self._tokens is not None and tokens:
            await self._tokens.acquire(tokens)


@dataclass
class Cut:
    """What one cut of the gate changed (`AdaptiveGate.throttled`), so that it can be undone (`retract`)."""

    number: int  # the gate's cuts once this one was made
    pace: float | None  # before the cut
    allowed: float
    limit: float
    new_pace: float | None = None  # after it, when it cut the pace; None when it halved the places in flight


@dataclass
class AdaptiveGate:
    """When requests go out, adapting to a provider that throttles (see the module's docstring).

    A 429 says "too fast": the gate then paces requests at 90% of the rate at which replies were coming back (over
    the last `RATE_SAMPLE` replies; a pace already set falls by a fifth at most) and remembers that rate as the
    provider's (or 95% of the pace it refused, when that is more: replies lull while throttled requests wait). After
    each second without a 429 it speeds up by 5% until it reaches 97% of that rate, then by 0.5%, twice, then 1%,
    twice, 2%, and so on up to 5%: it settles just under the provider's limit, and finds it again if it rises,
    without overshooting it by 5% every few seconds (a provider's bucket then runs dry and answers 429 again and
    again). A 503 says "too much": the number in flight is halved and grows back by one after each round of healthy
    replies, never above where it started. A signal counts once per round: the replies to requests sent before the
    last change say nothing new.
    """

    ceiling: int
    limit: float = 0.0
    in_flight: int = 0
    paused_until: float = 0.0
    pace: float | None = None  # requests a second once a 429 was met; None: as fast as the limit allows
    allowed: float = 0.0  # the rate replies came back at when the last 429 came: the provider's limit, as seen
    cuts: int = 0
    answered: int = 0  # healthy replies so far: a case refused while others were answered is refused for itself
    refused: int = 0  # 429 and 503 replies to first attempts so far (a retry's says nothing new)
    last_answer: float = field(default_factory=time.monotonic)  # when the last healthy reply came (or the gate began)
    _last_cut: float = field(default=-math.inf)
    _last_growth: float = field(default=-math.inf)
    _next_send: float = 0.0
    _healthy: int = 0
    _probes: int = 0  # rises of the pace past NEAR the allowed rate since the last 429
    _answers: deque[float] = field(default_factory=lambda: deque(maxlen=RATE_SAMPLE))
    _waiters: list[asyncio.Future[None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.limit = float(self.ceiling)

    def enter_now(self) -> float:
        """Takes a place at once when nothing need wait (no pause, no pace, a free place) and returns the send time;
        0.0 when `enter` must wait."""
        if self.pace or self.in_flight >= int(self.limit) or self.paused_until > time.monotonic():
            return 0.0
        self.in_flight += 1
        return time.monotonic()

    async def enter(self) -> float:
        """Waits for a free place, for any pause to end and for the pace; returns the send time, for `throttled`."""
        while True:
            pause = self.paused_until - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
                continue
            if self.in_flight < int(self.limit):
                break
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            finally:
                self._waiters.remove(waiter)
        self.in_flight += 1
        if self.pace:
            now = time.monotonic()
            at = max(now, self._next_send)
            self._next_send = at + 1 / self.pace
            if at > now:
                await asyncio.sleep(at - now)
        return time.monotonic()

    def leave(self) -> None:
        self.in_flight -= 1
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
                break

    def healthy(self) -> None:
        now = time.monotonic()
        self.answered, self.last_answer = self.answered + 1, now
        self._answers.append(now)
        if self.pace and now - max(self._last_cut, self._last_growth) >= 1.0:  # a second without a 429
            self.pace, self._last_growth = self._grown(self.pace), now
        self._healthy += 1
        if self._healthy >= self.limit and self.limit < self.ceiling:  # one more after a whole round went well
            self.limit, self._healthy = self.limit + 1, 0
            self.leave_room()

    def _grown(self, pace: float) -> float:
        near = NEAR * self.allowed
        if pace < near:
            return min(pace * GROWTH, near)
        self._probes += 1
        return pace * min(GROWTH, 1 + (PROBE_GROWTH - 1) * 2.0 ** ((self._probes - 1) // 2))

    def throttled(self, sent_at: float, status: int = 429) -> Cut | None:
        """A 429 or 503 to a request sent at ``sent_at``. Its Retry-After is that request's own wait, not everyone's:
        providers round it up to whole seconds, and the pace already keeps the others under the limit. Returns the
        cut it made (for `retract`), or None when the signal was of a round already cut."""
        if sent_at <= self._last_cut:
            return None
        now = time.monotonic()
        self._last_cut = now
        self.cuts += 1
        before = Cut(self.cuts, self.pace, self.allowed, self.limit)
        if self._cut(now, status):
            before.new_pace = self.pace
        return before

    def retract(self, cut: Cut) -> None:
        """Undo ``cut``: its request turned out to be refused for itself (a quota for one kind of request, a filter)
        while the others were answered, which says nothing of the run's pace. A later cut stands: the pace loses
        only this cut's factor, and the places in flight come back only when no cut came since."""
        latest = self.cuts == cut.number
        if cut.new_pace is None:  # the cut halved the places in flight
            if latest:
                self.limit = cut.limit
        elif cut.pace is None:  # the cut began the pacing
            if latest:
                self.pace, self.allowed = None, cut.allowed
        else:
            if self.pace is not None:
                self.pace *= cut.pace / cut.new_pace
            self.allowed = max(self.allowed, cut.allowed)

    def _cut(self, now: float, status: int) -> bool:
        """Cut the pace (True) or the places in flight (False)."""
        rate = self._reply_rate(now)
        if status == 429 and rate is not None:
            # replies came at the provider's rate; a pace already under it is cut by a fifth at most, so that a
            # lull in the replies (throttled requests waiting out their Retry-After) does not spiral it down
            # the provider's rate: what came back, or just under the pace it refused when replies lulled meanwhile
            self.allowed = max(rate, 0.95 * self.pace if self.pace else 0.0)
            self._probes = 0
            self.pace = max(MIN_PACE, 0.9 * rate, 0.8 * self.pace if self.pace else 0.0)
            return True
        # overloaded, or throttled before any reply came back: fewer in flight
        self.limit, self._healthy = max(1.0, self.limit // 2), 0
        return False

    def _reply_rate(self, now: float) -> float | None:
        if len(self._answers) < 2 or now <= self._answers[0]:
            return None
        return len(self._answers) / (now - self._answers[0])

    def pause(self, seconds: float) -> None:
        self.paused_until = max(self.paused_until, time.monotonic() + min(seconds, MAX_PAUSE_S))

    def leave_room(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)


@dataclass
class Budget:
    """Requests and dollars a run may spend, counted across sessions of one run folder (`start_from` sets what the
    earlier sessions spent). Cost needs ``prices`` (USD per million prompt and completion tokens)."""

    max_requests: int | None = None
    max_cost: float | None = None
    prices: tuple[float, float] = (0.0, 0.0)
    spent_requests: int = 0
    spent_cost: float = 0.0
    earlier_requests: int = 0  # of the spent ones, what earlier sessions of the run folder sent
    earlier_cost: float = 0.0
    _in_flight: int = 0
    _reserved: float = 0.0
    _settled: asyncio.Event | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prices[0] + completion_tokens * self.prices[1]) / 1e6

    def start_from(self, requests: int, cost: float) -> None:
        """What the run folder's earlier sessions spent: the caps count it."""
        self.spent_requests = self.earlier_requests = requests
        self.spent_cost = self.earlier_cost = cost

    def _sent(self) -> str:
        """What was sent, the requests in flight (sent, their replies not back yet) included."""
        sent = self.spent_requests + self._in_flight
        return f"{sent} sent in all, {sent - self.earlier_requests} in this session"

    def reserve_now(self, worst_cost: float) -> bool:
        """Counts one request and reserves its worst cost when it fits now (True); False when it fits only once
        requests in flight come back (`reserve` waits for them); raises `BudgetSpent` when it cannot fit."""
        if self.max_requests is not None and self.spent_requests + self._in_flight + 1 > self.max_requests:
            raise BudgetSpent(f"--max-requests {self.max_requests} reached ({self._sent()})")
        if self.max_cost is not None and self.spent_cost + self._reserved + worst_cost > self.max_cost:
            if not self._in_flight:
                raise BudgetSpent(
                    f"--max-cost {self.max_cost:g} USD reached (${self.spent_cost:.4f} spent, counted at most, over "
                    f"{self._sent()}; the next request may cost up to ${worst_cost:.4f})"
                )
            return False
        self._in_flight += 1
        self._reserved += worst_cost
        return True

    async def reserve(self, worst_cost: float) -> None:
        """`reserve_now`, waiting while it does not fit: the replies in flight usually cost less than was
        reserved."""
        while not self.reserve_now(worst_cost):
            self._settled = self._settled or asyncio.Event()
            await self._settled.wait()

    def settle(self, worst_cost: float, cost: float) -> None:
        """A reserved request came back having cost ``cost`` (0 for a refused one)."""
        self._in_flight -= 1
        self._reserved -= worst_cost
        self.spent_requests += 1
        self.spent_cost += cost
        if self._settled is not None:
            self._settled.set()
            self._settled = None
