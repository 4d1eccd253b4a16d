"""The thread pool for plain detector functions: threads on demand, a thread for every job when jobs are slow, and
a hung call abandoned without holding the others."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest

from harness.detectors.pool import THREAD_NAME, ThreadPool

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _pool_threads() -> int:
    return sum(t.name == THREAD_NAME and t.is_alive() for t in threading.enumerate())


async def _callers(pool: ThreadPool, fn: Callable[[Any], Any], callers: int, calls: int) -> list[Any]:
    """``callers`` coroutines, each awaiting ``calls`` calls one after another, as the runner's workers do."""

    async def caller(k: int) -> list[Any]:
        return [await pool.run(fn, (k, i)) for i in range(calls)]

    results = await asyncio.gather(*(caller(k) for k in range(callers)))
    return [r for rs in results for r in rs]


def test_an_instant_function_does_not_start_a_thread_per_slot() -> None:
    before = _pool_threads()
    pool = ThreadPool(64)
    try:
        results = asyncio.run(_callers(pool, lambda arg: arg, callers=8, calls=250))
        started = _pool_threads() - before
    finally:
        pool.close()
    assert sorted(results) == [(k, i) for k in range(8) for i in range(250)]
    # 8 calls in flight at most, so never more than 8 running; a few more may be on their way back to sleep. A pool
    # that starts its threads up front, or one per call, has 64 here
    assert 1 <= started <= 16


def test_slow_calls_each_get_a_thread_of_their_own() -> None:
    # the barrier lets the calls through only when all 6 wait at it together: one thread fewer and it breaks
    barrier = threading.Barrier(6, timeout=10)
    pool = ThreadPool(6)
    try:
        results = asyncio.run(_callers(pool, lambda arg: barrier.wait() >= 0 and arg, callers=6, calls=3))
    finally:
        pool.close()
    assert sorted(results) == [(k, i) for k in range(6) for i in range(3)]


@pytest.mark.parametrize("size", [1, 2])
def test_a_slow_call_does_not_hold_back_the_result_of_a_quick_one_before_it(size: int) -> None:
    # the thread that ran the quick call takes the slow one next; its quick result must reach the loop meanwhile
    release = threading.Event()
    pool = ThreadPool(size)

    def fn(arg: str) -> str:
        if arg == "slow":
            release.wait(30)
        return arg

    async def main() -> tuple[str, str]:
        quick = asyncio.ensure_future(pool.run(fn, "quick"))
        slow = asyncio.ensure_future(pool.run(fn, "slow"))
        try:
            got = await asyncio.wait_for(quick, 10)  # held back, it would come only once the slow call returns
        finally:
            release.set()
        return got, await slow

    try:
        assert asyncio.run(main()) == ("quick", "slow")
    finally:
        release.set()
        pool.close()


def test_a_hung_call_is_abandoned_and_the_calls_queued_behind_it_still_run() -> None:
    release = threading.Event()
    pool = ThreadPool(1)  # one thread: the calls behind the hung one wait on it unless it is replaced

    def fn(arg: int) -> int:
        if arg == 0:
            release.wait(30)
        return arg

    async def main() -> list[Any]:
        hung = asyncio.ensure_future(asyncio.wait_for(pool.run(fn, 0), 0.5))
        await asyncio.sleep(0.1)  # the hung call is under way on the only thread
        rest = [asyncio.ensure_future(pool.run(fn, i)) for i in range(1, 6)]
        return await asyncio.gather(hung, *rest, return_exceptions=True)

    try:
        results = asyncio.run(main())
        assert isinstance(results[0], TimeoutError)
        assert results[1:] == [1, 2, 3, 4, 5]
        assert pool.replaced == 1
    finally:
        release.set()
        pool.close()


def test_errors_stay_with_their_call_and_a_closed_pool_lets_its_threads_go() -> None:
    pool = ThreadPool(4)

    def fn(arg: int) -> int:
        if arg % 3 == 0:
            raise ValueError(f"bad {arg}")
        return arg

    async def main() -> list[Any]:
        return await asyncio.gather(*(pool.run(fn, i) for i in range(12)), return_exceptions=True)

    results = asyncio.run(main())
    pool.close()
    for i, r in enumerate(results):
        if i % 3 == 0:
            assert isinstance(r, ValueError) and str(r) == f"bad {i}"
        else:
            assert r == i
    for thread in threading.enumerate():
        if thread.name == THREAD_NAME:
            thread.join(5)
            assert not thread.is_alive()


class _DrainingSlowly(ThreadPool):
    """A pool whose loop-side drain takes 1 ms a result, and whose threads, when they claim a delivery while a drain
    is under way, wait for that drain to end before they read the results: the few instructions between a thread's
    claim and its read, stretched so that the drain always runs in between. The race is forced, not hoped for: the
    first drain that runs while a call is still in a thread waits (up to 2 s) until a thread has claimed."""

    def __init__(self, size: int) -> None:
        super().__init__(size)
        self.draining = threading.Event()
        self.claims_during_a_drain = 0
        self.claimed = threading.Event()
        self.thread_errors: list[BaseException] = []
        pool = self

        class SlowDeque(deque):  # type: ignore[type-arg]
            def popleft(self) -> Any:
                item = super().popleft()
                if pool.draining.is_set():
                    if not pool.claimed.is_set() and pool.calls_in_threads():
                        pool.claimed.wait(2.0)  # a thread finishing its call claims while this drain is under way
                    time.sleep(0.001)
                return item

        self._done = SlowDeque()

    def calls_in_threads(self) -> bool:
        # read without the lock: a thread that claimed holds it while it waits for this drain (`_drained`)
        return len(self._threads) > len(self._idle)

    def _drained(self) -> bool:
        """True (there were results to deliver) once the drain under way has ended."""
        deadline = time.monotonic() + 5.0
        while self.draining.is_set() and time.monotonic() < deadline:
            time.sleep(0.0005)
        return True

    def _drain(self) -> None:
        self.draining.set()
        try:
            super()._drain()
        finally:
            self.draining.clear()

    def _claim_delivery(self) -> asyncio.AbstractEventLoop | None:
        if self._undelivered() and self.draining.is_set():
            self.claims_during_a_drain += 1
            self.claimed.set()
            self._undelivered = lambda: self._drained()  # type: ignore[method-assign]
            try:
                return super()._claim_delivery()
            finally:
                del self._undelivered
        return super()._claim_delivery()


def test_a_result_claimed_while_the_loop_drains_the_others_is_still_delivered() -> None:
    # a thread claimed the delivery of the results (it saw them undelivered), and the loop's drain, already under
    # way, took them meanwhile: the thread read the first of an empty queue, died of an IndexError, and left the
    # pool marked as woken for ever, so that no later result was delivered
    errors: list[BaseException] = []
    hook, threading.excepthook = threading.excepthook, lambda args: errors.append(args.exc_value)
    pool = _DrainingSlowly(4)

    async def callers() -> list[Any]:
        return await asyncio.wait_for(_callers(pool, lambda arg: arg, callers=8, calls=30), 10)

    try:
        results = asyncio.run(callers())
    finally:
        threading.excepthook = hook
        pool.close()
    assert pool.claims_during_a_drain > 0  # the race was run into
    assert errors == []
    assert sorted(results) == [(k, i) for k in range(8) for i in range(30)]


def _detector(fn: Callable[[Any], Any], timeout: float) -> Any:
    from harness.detectors.functions import CallableDetector
    from harness.detectors.options import DetectorOptions

    return CallableDetector(fn, "test", DetectorOptions(concurrency=1, timeout=timeout))


def test_a_call_stuck_in_a_cpu_loop_times_out_alone_and_the_one_queued_behind_it_is_not_charged() -> None:
    from harness.types import DetectorError, Prediction

    release = threading.Event()

    def fn(request: dict) -> str:
        while request["task"] == "stuck" and not release.is_set():
            pass  # a CPU loop: holds the GIL half the time, and the only thread until its call is abandoned
        return "low"

    detector = _detector(fn, timeout=1.0)

    async def main() -> list[Any]:
        # one thread: "next" waits for it until the stuck call is abandoned, and its own second starts only then
        calls = [detector.assess({"task": task, "answers": []}) for task in ("stuck", "next")]
        return await asyncio.gather(*calls, return_exceptions=True)

    try:
        stuck, following = asyncio.run(main())
    finally:
        release.set()
        asyncio.run(detector.aclose())
    assert isinstance(stuck, DetectorError) and stuck.kind == "timeout"
    assert isinstance(following, Prediction) and following.risk == "low"


def test_a_result_ready_in_time_is_taken_however_late_the_event_loop_gets_to_it() -> None:
    from harness.types import Prediction

    returned = threading.Event()

    def fn(request: dict) -> str:
        returned.set()
        return "low"

    detector = _detector(fn, timeout=0.5)

    async def main() -> Any:
        call = asyncio.ensure_future(detector.assess({"task": "t", "answers": []}))
        await asyncio.sleep(0)  # the call is handed to a thread at this turn of the loop
        await asyncio.sleep(0)
        assert returned.wait(10)
        # the loop does not turn for longer than the timeout, as when a call stuck in a CPU loop starves it of the GIL
        time.sleep(0.8)
        return await call

    try:
        assert isinstance(asyncio.run(main()), Prediction)
    finally:
        asyncio.run(detector.aclose())


def test_a_batch_stuck_in_a_cpu_loop_times_out_alone_and_the_batch_queued_behind_it_is_not_charged() -> None:
    from harness.detectors.functions import class_detector
    from harness.detectors.options import DetectorOptions
    from harness.types import DetectorError, Prediction

    release = threading.Event()

    class Batches:
        def assess_batch(self, requests: list) -> list:
            while any(r["task"] == "stuck" for r in requests) and not release.is_set():
                pass
            return ["low"] * len(requests)

    # --concurrency 4 with batches of 4: one thread for batches, so the second batch waits for the first
    detector = class_detector(Batches(), "test", DetectorOptions(concurrency=4, batch_size=4, timeout=1.0))
    tasks = ["stuck", "a", "b", "c", "d", "e", "f", "g"]

    async def main() -> list[Any]:
        calls = [detector.assess({"task": task, "answers": []}) for task in tasks]
        return await asyncio.gather(*calls, return_exceptions=True)

    try:
        results = asyncio.run(main())
    finally:
        release.set()
        asyncio.run(detector.aclose())
    assert all(isinstance(r, DetectorError) and r.kind == "timeout" for r in results[:4]), results
    assert all(isinstance(r, Prediction) for r in results[4:]), results
