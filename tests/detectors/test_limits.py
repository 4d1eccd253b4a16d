"""Rate limits, adaptive concurrency and caps (harness/detectors/limits.py), unit by unit: the orders of events are
forced (send times given, futures resolved by hand), never timed."""

from __future__ import annotations

import asyncio
import itertools
import time

import pytest

from harness.detectors.limits import (
    AdaptiveGate,
    Budget,
    BudgetSpent,
    LeakyBucket,
    RateLimits,
    duration_seconds,
    exhausted_for,
    token_estimate,
)
from harness.detectors.options import DetectorOptions
from harness.errors import UsageError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("1.5s", 1.5), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("7", 7.0), ("0.25", 0.25)],
)
def test_reset_durations_as_providers_write_them(text: str, seconds: float) -> None:
    assert duration_seconds(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "1x", "1s later", "m"])
def test_unreadable_durations_are_none(text: str) -> None:
    assert duration_seconds(text) is None


def test_an_exhausted_ratelimit_header_pauses_for_its_reset() -> None:
    assert exhausted_for({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1.5s"}) == 1.5
    # both exhausted: the longer wait; tokens left: no pause from them
    both = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "2s",
        "x-ratelimit-remaining-tokens": "0",
        "x-ratelimit-reset-tokens": "6m0s",
    }
    assert exhausted_for(both) == 120.0  # capped at MAX_PAUSE_S
    assert exhausted_for({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "2s"}) is None
    assert exhausted_for({"x-ratelimit-remaining-requests": "0"}) is None  # no reset: nothing to wait for
    assert exhausted_for({}) is None


def test_a_token_estimate_is_a_quarter_of_the_bytes_rounded_up_plus_the_reply() -> None:
    assert token_estimate(b"x" * 9, 300) == 3 + 300  # 9 / 4 = 2.25, rounded up
    assert token_estimate(b"x" * 8, 0) == 2


class _Clock:
    """A clock that moves only when the bucket sleeps: the waits it asks for are exact, and recorded."""

    def __init__(self) -> None:
        self.now, self.sleeps = 0.0, []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def test_a_bucket_holds_half_a_second_of_the_limit_and_at_least_one() -> None:
    assert LeakyBucket(600).capacity == 5  # 600 a minute: 10 a second, half a second's worth
    assert LeakyBucket(30).capacity == 1  # under two a second: one request
    assert LeakyBucket(6000).rate == 100


def test_a_bucket_lets_its_capacity_through_at_once_then_paces_to_the_rate() -> None:
    clock = _Clock()
    bucket = LeakyBucket(600, clock=clock, sleep=clock.sleep)  # 10 a second, 5 at once

    async def go() -> None:
        for _ in range(7):
            await bucket.acquire()

    asyncio.run(go())
    assert clock.sleeps == pytest.approx([0.1, 0.1])  # the sixth and seventh each wait for one to drain: 1/10 s


def test_ever_larger_requests_get_no_fresh_bucket() -> None:
    """Issue 45, item 8: at --tpm 1000, requests of growing size went through at once (5,700 tokens in 0.04 s where
    1,000 a minute were allowed): each new largest request got a fresh, full bucket. Now the bucket grows
    without emptying. Worked by hand: 1,000 a minute drain 50/3 a second; the first request (100) fits the grown
    bucket at once; each next one of size 2n finds n inside and a bucket of 2n, so waits for all n to drain: n / (50/3)
    seconds, i.e. 6, 12, 24 and 48 s. Through the first 90 s, 3,100 tokens passed: the rate's 1,500 plus the largest
    request's 1,600, never a minute's worth per request."""
    clock = _Clock()
    bucket = LeakyBucket(1000, clock=clock, sleep=clock.sleep)
    passed: list[tuple[float, int]] = []

    async def go() -> None:
        for n in (100, 200, 400, 800, 1600):
            await bucket.acquire(n)
            passed.append((clock.now, n))

    asyncio.run(go())
    assert [t for t, _ in passed] == pytest.approx([0, 6, 18, 42, 90])
    assert sum(n for t, n in passed if t < 1) == 100  # was 3,100 within 0.04 s
    for t, _ in passed:  # never more through by time t than the rate allows plus one largest request
        assert sum(n for u, n in passed if u <= t) <= 1000 / 60 * t + 1600 + 1e-9


def test_rate_limits_let_the_first_second_through_at_once() -> None:
    async def go() -> None:
        limits = RateLimits(rpm=1200, tpm=120_000)
        for _ in range(10):  # 10 requests of 100 tokens: within half a second's worth of both
            await asyncio.wait_for(limits.acquire(100), 1)
        with pytest.raises(TimeoutError):  # the eleventh waits a tenth of a second for the bucket to refill
            await asyncio.wait_for(limits.acquire(100), 0.01)

    asyncio.run(go())


def test_a_503_halves_the_requests_in_flight_once_per_round_and_they_grow_back_one_per_round() -> None:
    async def go() -> None:
        gate = AdaptiveGate(16)
        sent = [await gate.enter() for _ in range(3)]
        gate.throttled(sent[0], 503)
        assert gate.limit == 8 and gate.cuts == 1
        gate.throttled(sent[1], 503)  # sent before the cut: the same congestion, no second cut
        assert gate.limit == 8 and gate.cuts == 1
        for _ in range(3):
            gate.leave()
        later = await gate.enter()
        gate.throttled(later, 503)  # sent after the cut: a new signal
        assert gate.limit == 4 and gate.cuts == 2 and gate.pace is None
        gate.leave()
        for _ in range(3):
            gate.healthy()
        assert gate.limit == 4  # three healthy replies are not yet a round of four
        gate.healthy()
        assert gate.limit == 5
        for _ in range(sum(range(5, 16)) - 1):  # rounds of 5, 6, ..., 15 replies take it to 16, less one reply
            gate.healthy()
        assert gate.limit == 15
        for _ in range(1 + 100):
            gate.healthy()
        assert gate.limit == 16  # never above where it started

    asyncio.run(go())


def test_a_429_paces_requests_at_nine_tenths_of_the_rate_replies_came_back() -> None:
    async def go() -> None:
        gate = AdaptiveGate(16)
        sent = await gate.enter()
        before = time.monotonic()
        first = before - 0.2
        gate._answers.extend(first + 0.01 * i for i in range(20))  # 20 replies over the last 0.2 s: 100 a second
        gate.throttled(sent, 429)
        after = time.monotonic()  # the rate is 20 replies over the time from the first to the 429
        assert gate.pace is not None and 0.9 * 20 / (after - first) <= gate.pace <= 0.9 * 20 / (before - first)
        assert gate.limit == 16  # a 429 slows the pace; the requests in flight stay as they were
        gate.pace = 50.0
        slots = []
        for _ in range(4):  # each request is given the next slot, 20 ms after the one before, and waits for it
            sent_at = await gate.enter()
            slots.append(gate._next_send - 0.02)
            assert sent_at >= slots[-1]
        assert [b - a for a, b in itertools.pairwise(slots)] == pytest.approx([0.02] * 3)

    asyncio.run(go())


def _a_second_later(gate: AdaptiveGate) -> None:
    """As if the last cut and the last rise of the pace came more than a second ago."""
    gate._last_cut = gate._last_growth = time.monotonic() - 1.5


def test_the_pace_rises_five_percent_a_second_up_to_near_the_rate_allowed_then_half_a_percent() -> None:
    gate = AdaptiveGate(16, pace=20.0, allowed=30.0)
    paces = []
    for _ in range(5):
        _a_second_later(gate)
        gate.healthy()
        paces.append(gate.pace)
    # 20 * 1.05 = 21, 22.05, 23.1525, 24.310125, 25.52563125: under 0.97 * 30 = 29.1 throughout
    assert paces == pytest.approx([21.0, 22.05, 23.1525, 24.310125, 25.52563125])
    gate.pace = 28.5
    _a_second_later(gate)
    gate.healthy()
    assert gate.pace == pytest.approx(29.1)  # 28.5 * 1.05 = 29.925 would pass 29.1: it stops there
    _a_second_later(gate)
    gate.healthy()
    assert gate.pace == pytest.approx(29.1 * 1.005)  # past it: half a percent a second (29.2455)
    gate.healthy()
    assert gate.pace == pytest.approx(29.1 * 1.005)  # not again within the second
    rises = []
    for _ in range(9):
        before = gate.pace
        _a_second_later(gate)
        gate.healthy()
        rises.append(gate.pace / before)
    # the rise past 29.1 doubles every two seconds, up to 5%: 0.5% (above), 0.5%, 1%, 1%, 2%, 2%, 4%, 4%, 5%, 5%
    assert rises == pytest.approx([1.005, 1.01, 1.01, 1.02, 1.02, 1.04, 1.04, 1.05, 1.05])


def test_a_429_starts_the_careful_rise_again() -> None:
    async def go() -> None:
        gate = AdaptiveGate(16, pace=30.0, allowed=10.0)  # far past the allowed rate: rising fast by now
        gate._probes = 8
        first = time.monotonic() - 1.0
        gate._answers.extend(first + 0.05 * i for i in range(20))
        gate.throttled(await gate.enter(), 429)
        assert gate.allowed == pytest.approx(28.5)  # 0.95 * 30, more than the rate the replies show
        assert gate.pace == pytest.approx(24.0)  # 0.8 * 30
        for expected in (25.2, 26.46, 27.645, 27.645 * 1.005):  # 5% up to 0.97 * 28.5 = 27.645, then 0.5% again
            _a_second_later(gate)
            gate.healthy()
            assert gate.pace == pytest.approx(expected)

    asyncio.run(go())


def test_a_429_remembers_the_rate_replies_came_back_at() -> None:
    async def go() -> None:
        gate = AdaptiveGate(16)
        sent = await gate.enter()
        first = time.monotonic() - 1.0
        gate._answers.extend(first + 0.05 * i for i in range(20))  # 20 replies over the last second or so
        gate.throttled(sent, 429)
        assert gate.pace == pytest.approx(0.9 * gate.allowed)
        assert 15.0 < gate.allowed <= 20.0  # 20 replies in a little more than a second
        gate.pace, gate._last_cut = 40.0, -1.0  # a pace far above what replies show (they lulled): refused
        gate.throttled(await gate.enter(), 429)
        assert gate.allowed == pytest.approx(38.0)  # 0.95 * 40, more than the rate replies came at
        assert gate.pace == pytest.approx(32.0)  # 0.8 * 40: a fifth at most

    asyncio.run(go())


def test_a_429_before_any_reply_halves_the_requests_in_flight() -> None:
    async def go() -> None:
        gate = AdaptiveGate(8)
        gate.throttled(await gate.enter(), 429)
        assert gate.pace is None and gate.limit == 4

    asyncio.run(go())


def test_a_full_gate_holds_the_next_sender_until_one_leaves() -> None:
    async def go() -> None:
        gate = AdaptiveGate(2)
        await gate.enter()
        await gate.enter()
        third = asyncio.ensure_future(gate.enter())
        await asyncio.sleep(0)
        assert not third.done() and gate.in_flight == 2
        gate.leave()
        await asyncio.wait_for(third, 1)
        assert gate.in_flight == 2

    asyncio.run(go())


def test_a_pause_holds_every_sender() -> None:
    async def go() -> None:
        gate = AdaptiveGate(4)
        gate.pause(0.05)
        waiting = asyncio.ensure_future(gate.enter())
        await asyncio.sleep(0)
        assert not waiting.done() and gate.in_flight == 0
        sent_at = await asyncio.wait_for(waiting, 5)
        assert gate.in_flight == 1 and sent_at >= gate.paused_until  # sent once the pause was over

    asyncio.run(go())


def test_a_request_cap_allows_exactly_n_requests_counting_those_in_flight() -> None:
    async def go() -> None:
        budget = Budget(max_requests=3, spent_requests=1)  # one spent in an earlier session
        await budget.reserve(0)
        await budget.reserve(0)  # two in flight: 1 + 2 = 3
        with pytest.raises(BudgetSpent, match="--max-requests 3"):
            await budget.reserve(0)
        budget.settle(0, 0)
        budget.settle(0, 0)
        assert budget.spent_requests == 3
        with pytest.raises(BudgetSpent):
            await budget.reserve(0)

    asyncio.run(go())


def test_a_cost_cap_waits_for_replies_in_flight_and_stops_within_one_request() -> None:
    async def go() -> None:
        budget = Budget(max_cost=1.0, prices=(1e6, 2e6))  # a token costs $1 (prompt) or $2 (completion)
        assert budget.cost(3, 1) == 5.0
        await budget.reserve(0.6)  # worst case $0.60 in flight
        waiting = asyncio.ensure_future(budget.reserve(0.6))  # 0.6 + 0.6 > 1: waits for the first reply
        await asyncio.sleep(0)
        assert not waiting.done()
        budget.settle(0.6, 0.25)  # it cost less than feared
        await asyncio.wait_for(waiting, 1)  # 0.25 + 0.6 <= 1
        budget.settle(0.6, 0.5)
        assert budget.spent_cost == pytest.approx(0.75)
        with pytest.raises(BudgetSpent, match="--max-cost 1 USD"):  # nothing in flight, 0.75 + 0.3 > 1
            await budget.reserve(0.3)
        await budget.reserve(0.25)  # exactly reaching the cap is allowed

    asyncio.run(go())


@pytest.mark.parametrize(
    ("field", "value"), [("rpm", 0), ("tpm", -1), ("max_requests", 0), ("max_cost", 0.0), ("max_cost", -2.0)]
)
def test_limits_below_one_are_refused(field: str, value: float) -> None:
    with pytest.raises(UsageError, match=field.replace("_", "-")):
        DetectorOptions(**{field: value})


def test_reserve_now_counts_at_once_what_fits_and_leaves_to_reserve_what_must_wait() -> None:
    budget = Budget(max_cost=1.0)
    assert budget.reserve_now(0.75) is True  # fits: counted with no await (the transport's fast path)
    assert budget.reserve_now(0.5) is False  # 0.75 + 0.5 > 1 while a request is in flight: wait, count nothing
    assert (budget._in_flight, budget._reserved) == (1, 0.75)
    budget.settle(0.75, 0.25)
    assert budget.reserve_now(0.75) is True  # 0.25 + 0.75 == 1: exactly the cap
    budget.settle(0.75, 0.75)
    with pytest.raises(BudgetSpent, match="--max-cost"):  # $1 spent, nothing in flight: can never fit
        budget.reserve_now(0.01)
    capped = Budget(max_requests=1)
    assert capped.reserve_now(0) is True
    with pytest.raises(BudgetSpent, match="--max-requests 1"):  # 0 sent + 1 in flight + 1 > 1
        capped.reserve_now(0)


def test_enter_now_takes_a_place_only_when_nothing_would_wait() -> None:
    gate = AdaptiveGate(2)
    assert gate.enter_now() > 0 and gate.enter_now() > 0
    assert gate.enter_now() == 0.0 and gate.in_flight == 2  # full: `enter` must queue it
    gate.leave()
    assert gate.enter_now() > 0 and gate.in_flight == 2
    gate.leave()
    gate.pause(30)
    assert gate.enter_now() == 0.0 and gate.in_flight == 1  # paused by an exhausted x-ratelimit header
    paced = AdaptiveGate(8, pace=5.0)
    assert paced.enter_now() == 0.0 and paced.in_flight == 0  # a pace set after a 429: `enter` spaces the sends


def test_rate_limits_are_active_only_when_one_was_given() -> None:
    assert not RateLimits(None, None).active
    assert RateLimits(60, None).active and RateLimits(None, 1000).active


def test_a_budget_started_from_earlier_sessions_says_what_each_sent() -> None:
    """Issue 45, item 7: each session said "(5 sent)" whatever the run folder had sent before."""
    budget = Budget(max_requests=5, max_cost=1.0, prices=(1e6, 0.0))  # a prompt token costs $1
    budget.start_from(3, 0.25)
    assert (budget.spent_requests, budget.earlier_requests, budget.spent_cost, budget.earlier_cost) == (
        3,
        3,
        0.25,
        0.25,
    )
    assert budget.reserve_now(0.0) and budget.reserve_now(0.0)  # 3 + 1 and 3 + 2 in flight: both fit
    # the two in flight are sent: counted in what the message says was sent
    with pytest.raises(BudgetSpent, match=r"--max-requests 5 reached \(5 sent in all, 2 in this session\)"):
        budget.reserve_now(0.0)
    budget.settle(0.0, 0.5)
    budget.settle(0.0, 0.0)
    with pytest.raises(BudgetSpent, match=r"--max-requests 5 reached \(5 sent in all, 2 in this session\)"):
        budget.reserve_now(0.0)
    capped = Budget(max_cost=1.0, prices=(1e6, 0.0))
    capped.start_from(2, 0.75)
    with pytest.raises(BudgetSpent) as info:
        capped.reserve_now(0.5)  # $0.75 + $0.50 > $1, nothing in flight
    assert str(info.value) == ("--max-cost 1 USD reached ($0.7500 spent, counted at most, over 2 sent in all, 0 in "
                               "this session; the next request may cost up to $0.5000)")  # fmt: skip


def test_a_run_stop_says_what_stopped_it() -> None:
    from harness.detectors.limits import ProviderStopped, RunStopped

    assert BudgetSpent("cap").reason == "budget: cap" and ProviderStopped("quota").reason == "provider: quota"
    assert isinstance(BudgetSpent("x"), RunStopped) and isinstance(ProviderStopped("y"), RunStopped)
    assert not isinstance(ProviderStopped("y"), BudgetSpent)  # the runner stops others at once only for a provider


def test_the_gate_counts_healthy_replies_and_when_the_last_came() -> None:
    gate = AdaptiveGate(2)
    began = gate.last_answer
    assert (gate.answered, gate.refused) == (0, 0)
    gate.healthy()
    gate.healthy()
    assert gate.answered == 2 and gate.last_answer >= began


# ---- hand-worked cases for what make mutation found unchecked (issue 45 put limits.py under it) -----------------


def test_an_exhausted_token_header_counts_when_requests_are_left_and_0_0_is_exhausted() -> None:
    headers = {"x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "9s",
               "x-ratelimit-remaining-tokens": "0.0", "x-ratelimit-reset-tokens": "2s"}  # fmt: skip
    assert exhausted_for(headers) == 2.0  # requests left say nothing; the tokens' reset stands


def test_each_limit_is_taken_only_when_given() -> None:
    async def go() -> None:
        tokens_only = RateLimits(rpm=None, tpm=600)
        await asyncio.wait_for(tokens_only.acquire(3), 1)  # no request bucket to take from
        await asyncio.wait_for(tokens_only.acquire(), 1)  # no tokens asked: none taken
        assert tokens_only._tokens is not None and tokens_only._tokens.level == 3
        requests_only = RateLimits(rpm=600, tpm=None)
        await asyncio.wait_for(requests_only.acquire(500), 1)  # tokens without a token limit: nothing to take
        assert requests_only._requests is not None and requests_only._requests.level == 1

    asyncio.run(go())


def test_leaving_frees_one_place() -> None:
    async def go() -> None:
        gate = AdaptiveGate(4)
        for _ in range(3):
            await gate.enter()
        gate.leave()
        assert gate.in_flight == 2

    asyncio.run(go())


class _Now:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.t = 100.0
        monkeypatch.setattr("harness.detectors.limits.time.monotonic", lambda: self.t)


def _three_replies(monkeypatch: pytest.MonkeyPatch) -> tuple[_Now, AdaptiveGate]:
    """A gate of 8 places that saw replies at t = 98, 99 and 100 s: 3 over 2 s, 1.5 a second (the clock at 100)."""
    now = _Now(monkeypatch)
    gate = AdaptiveGate(8)
    for t in (98.0, 99.0, 100.0):
        now.t = t
        gate.healthy()
    return now, gate


def test_a_429_paces_at_nine_tenths_of_the_rate_replies_came_back_at(monkeypatch: pytest.MonkeyPatch) -> None:
    now = _Now(monkeypatch)
    gate = AdaptiveGate(8)
    for t in (100.0, 101.0, 102.0):  # three replies over 2 s: 1.5 a second
        now.t = t
        gate.healthy()
    gate.throttled(sent_at=102.0)  # a 429, by default
    assert gate.pace == pytest.approx(1.35) and gate.allowed == pytest.approx(1.5) and gate.limit == 8
    now.t = 102.0
    gate.throttled(sent_at=102.0)  # sent at the very time of the cut: the same round, no second cut
    assert gate.cuts == 1


def test_two_replies_are_enough_for_a_rate_and_a_slow_one_is_paced_at_the_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    now = _Now(monkeypatch)
    gate = AdaptiveGate(8)
    for t in (100.0, 1100.0):  # two replies 1,000 s apart: 0.002 a second
        now.t = t
        gate.healthy()
    now.t = 1100.0
    gate.throttled(sent_at=1100.0)
    assert gate.pace == pytest.approx(1 / 60)  # never slower than one a minute
    assert gate.allowed == pytest.approx(2 / 1000)  # the rate seen, however low


def test_a_503_halves_to_a_whole_number_down_to_one() -> None:
    gate = AdaptiveGate(5)
    gate.throttled(sent_at=time.monotonic() + 1, status=503)
    assert gate.limit == 2  # 5 // 2
    gate.throttled(sent_at=time.monotonic() + 2, status=503)
    assert gate.limit == 1
    gate.throttled(sent_at=time.monotonic() + 3, status=503)
    assert gate.limit == 1


def test_a_cost_cap_adds_up_what_is_reserved_in_flight() -> None:
    budget = Budget(max_cost=0.9, spent_cost=0.4)
    assert budget.reserve_now(0.2) and budget.reserve_now(0.2)  # 0.4 + 0.2 + 0.2 = 0.8: fits
    assert not budget.reserve_now(0.2)  # 0.4 + 0.4 in flight + 0.2 = 1.0 > 0.9: waits for a reply


def test_replies_all_at_one_instant_give_no_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    now = _Now(monkeypatch)
    gate = AdaptiveGate(8)
    gate.healthy()
    gate.healthy()  # two replies, no time between them: no rate to measure (nor a division by zero)
    gate.throttled(sent_at=now.t)
    assert gate.pace is None and gate.limit == 4  # throttled before a rate was known: fewer in flight instead


def test_the_pace_rises_after_a_whole_second_without_a_429(monkeypatch: pytest.MonkeyPatch) -> None:
    now, gate = _three_replies(monkeypatch)
    gate.throttled(sent_at=100.0)  # 3 replies over 2 s: pace 1.35, allowed 1.5, cut at t = 100
    now.t = 101.0  # exactly one second on
    gate.healthy()
    assert gate.pace == pytest.approx(1.35 * 1.05)


def test_the_careful_rise_after_a_429_starts_at_half_a_percent_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past 97% of the allowed rate the pace rises 0.5%, twice, then 1%: counted from the last 429."""
    now, gate = _three_replies(monkeypatch)
    gate.throttled(sent_at=100.0)
    gate.pace = 0.97 * gate.allowed  # already near: the next rises are the careful ones
    paces = []
    for t in (101.0, 102.0, 103.0):
        now.t = t
        gate.healthy()
        paces.append(gate.pace)
    near = 0.97 * 1.5
    assert paces == pytest.approx([near * 1.005, near * 1.005**2, near * 1.005**2 * 1.01])


def test_a_place_that_grows_back_lets_a_waiting_sender_in() -> None:
    async def go() -> None:
        gate = AdaptiveGate(2)
        gate.throttled(sent_at=time.monotonic() + 1, status=503)  # limit 1
        await gate.enter()
        waiting = asyncio.ensure_future(gate.enter())
        await asyncio.sleep(0)
        assert not waiting.done()
        gate.healthy()  # a whole round (1) went well: limit 2, and the waiter is woken
        await asyncio.wait_for(waiting, 1)
        assert gate.in_flight == 2 and gate.limit == 2

    asyncio.run(go())


def test_a_sender_waiting_out_a_pause_still_waits_for_a_place() -> None:
    async def go() -> None:
        gate = AdaptiveGate(1)
        await gate.enter()  # the one place taken
        gate.pause(0.01)
        waiting = asyncio.ensure_future(gate.enter())
        await asyncio.sleep(0.05)  # the pause is over; the place is not
        assert not waiting.done() and gate.in_flight == 1
        gate.leave()
        await asyncio.wait_for(waiting, 1)

    asyncio.run(go())


def test_a_retracted_cut_gives_back_what_it_took(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45, item 6: requests refused for themselves cut the pace again and again until the run crawled. A cut
    whose request proves refused alone is given back: the pace it began, its factor, or the places it halved."""
    now, gate = _three_replies(monkeypatch)
    first = gate.throttled(sent_at=100.0)
    assert first is not None and gate.pace == pytest.approx(1.35)
    gate.retract(first)  # the latest cut, which began the pacing: none again
    assert gate.pace is None and gate.allowed == 0.0
    first = gate.throttled(sent_at=100.5)  # pace 1.35 again (same replies)
    now.t = 101.0
    second = gate.throttled(sent_at=100.9)  # 3 replies over 3 s: 0.9 x 1.0 = 0.9, under a fifth off 1.35: 1.08
    assert first is not None and second is not None and gate.cuts == 3 and gate.pace == pytest.approx(1.08)
    gate.pace, gate.allowed = 2.0, 0.5  # as later rises and cuts left them
    gate.retract(second)  # not the cut that began the pacing: its factor back, 1.35 / 1.08 = 1.25
    assert gate.pace == pytest.approx(2.5) and gate.allowed == pytest.approx(1.5)  # the rate seen before it
    gate.retract(first)  # it began the pacing, but a cut came since: the pacing stays
    assert gate.pace == pytest.approx(2.5)


def test_a_retracted_503_gives_back_its_places_only_when_no_cut_came_since() -> None:
    gate = AdaptiveGate(8)
    halved = gate.throttled(sent_at=time.monotonic() + 1, status=503)
    assert halved is not None and gate.limit == 4
    gate.retract(halved)
    assert gate.limit == 8
    one = gate.throttled(sent_at=time.monotonic() + 2, status=503)
    two = gate.throttled(sent_at=time.monotonic() + 3, status=503)
    assert one is not None and two is not None and gate.limit == 2
    gate.retract(one)  # a cut came since: the later halving stands
    assert gate.limit == 2
    assert gate.throttled(sent_at=0.0) is None  # a reply to a request sent before the last cut: no new cut


def test_a_503_while_paced_halves_the_places_and_gives_them_back(monkeypatch: pytest.MonkeyPatch) -> None:
    now, gate = _three_replies(monkeypatch)
    gate.throttled(sent_at=100.0)  # paced at 1.35
    now.t = 101.0
    halved = gate.throttled(sent_at=100.5, status=503)
    assert halved is not None and halved.new_pace is None and gate.limit == 4 and gate.pace == pytest.approx(1.35)
    gate.retract(halved)
    assert gate.limit == 8 and gate.pace == pytest.approx(1.35)
