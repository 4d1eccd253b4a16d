"""A bounded pool of daemon threads for plain (``def``) detector functions.

A fresh thread per call cost more than the rest of the harness together (2,700 cases/s against 18,800 for an
``async def`` detector). This pool keeps up to ``size`` threads instead; three things set it apart from
`concurrent.futures.ThreadPoolExecutor`:

- a call that overruns its timeout is *abandoned*: its thread is retired (it leaves once the call returns, if
  ever) and a fresh thread takes its place, so one hung call never holds up the calls after it;
- its threads are daemons that nothing joins at exit, so a call that never returns cannot keep the process alive;
- it wakes as few threads as the calls need. Jobs wait in one shared queue; a thread that takes a job while others
  still wait wakes (or starts) one more thread, and only while no other thread is already on its way. An instant
  function is then run by one or two threads taking the jobs in turn, instead of every job waking a thread of its
  own that must win the GIL from the others; a slow one still gets a thread for every job, one wake-up after
  another;
- a thread keeps its results until it has no job left, and then wakes the event loop once for them all. Before it
  starts another job it makes sure that another thread is on its way, which delivers them should that job be slow,
  or else delivers them itself: a slow or hung call never holds back the results of the calls before it.

An instant function so uses 2-3 threads and wakes two per round of calls, where every call used to wake one of
``size``; the whole-process cost against an ``async def`` function is in docs/detectors.md.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

THREAD_NAME = "fcb-detector"


class _Job:
    __slots__ = ("abandoned", "arg", "fn", "future", "loop", "ran_s", "started", "thread")

    def __init__(self, fn: Callable[[Any], Any], arg: Any, loop: asyncio.AbstractEventLoop, future: Any) -> None:
        self.fn, self.arg, self.loop, self.future = fn, arg, loop, future
        self.thread: _Worker | None = None  # the thread running it, once started
        self.abandoned = False
        self.started: float | None = None  # time.monotonic() when a thread took it
        self.ran_s: float | None = None  # how long the call took on its thread, once it returned


class _Worker(threading.Thread):
    def __init__(self, pool: ThreadPool) -> None:
        super().__init__(name=THREAD_NAME, daemon=True)
        self.pool = pool
        self.retired = False
        self.called = True  # woken or started, and counted in the pool's ``_waking`` until it looks for a job
        self.wake = threading.Lock()  # held while the thread sleeps; released to wake it
        self.wake.acquire()

    def run(self) -> None:
        pool = self.pool
        job = pool._next(self, None)
        while job is not None:
            try:
                ok, value = True, job.fn(job.arg)
            except BaseException as exc:  # handed to the awaiting coroutine, which classifies it
                ok, value = False, exc
            job.ran_s = time.monotonic() - (job.started or 0.0)  # before the result is handed over
            job.thread = None
            job = pool._next(self, (job, ok, value))


class ThreadPool:
    """Runs ``fn(arg)`` on one of up to ``size`` daemon threads; `run` is awaited from an event loop."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError(f"a thread pool needs at least one thread, got {size}")
        self.size = size
        self._lock = threading.Lock()  # guards the fields below and each job's ``thread`` and ``abandoned``
        self._pending: deque[_Job] = deque()
        self._threads: list[_Worker] = []  # in service: not retired
        self._idle: list[_Worker] = []  # asleep, waiting for a job; the last to sleep is woken first
        self._waking = 0  # threads woken or started that have not yet looked for a job
        self._done: deque[tuple[_Job, bool, Any]] = deque()
        self._queued: list[_Job] = []
        self._wake_pending = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self.replaced = 0  # threads retired because their call overran (for tests and benchmarks)
        self._overran: list[_Worker] = []  # those threads, until their call returns

    async def run(self, fn: Callable[[Any], Any], arg: Any, timeout: float | None = None) -> Any:
        """``fn(arg)`` on a pool thread. Cancelling the await abandons the call and replaces its thread.

        With ``timeout``, the call raises TimeoutError (and is abandoned) once it has run that long *on its thread*:
        the time it waited for a thread, or its result for the event loop, is not its own. A call stuck in a CPU
        loop holds the GIL and slows everything else in the process; a case's clock so starts when its call does,
        and a result that was ready in time is taken however late the loop gets to it.
        """
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a new run: results meant for an earlier, closed loop are not wanted
            self._loop, self._wake_pending = loop, False
            self._done.clear()
            self._queued = []  # never handed over: that loop closed before its next turn
        job = _Job(fn, arg, loop, loop.create_future())
        # handed to the threads at the loop's next turn, all together: they then run while the loop waits for
        # I/O rather than taking the GIL from it at every system call it makes meanwhile (journal writes)
        self._queued.append(job)
        if len(self._queued) == 1:
            loop.call_soon(self._hand_over)
        timer = None if timeout is None else loop.call_later(timeout, self._expire, job, timeout)
        try:
            value = await job.future
        except (asyncio.CancelledError, TimeoutError):
            self._abandon(job)
            raise
        finally:
            if timer is not None:
                timer.cancel()
        if timeout is not None and job.ran_s is not None and job.ran_s > timeout:
            raise TimeoutError  # it returned, but past its time: the loop could not look until now
        return value

    def _expire(self, job: _Job, timeout: float) -> None:
        """On the event loop, when the call may be out of time: fail it if it has run ``timeout`` on its thread,
        else look again when it would have."""
        if job.future.done() or job.ran_s is not None:  # returned: its result is on its way, judged when it comes
            return
        started = job.started
        left = timeout if started is None else started + timeout - time.monotonic()
        if left > 0:
            job.loop.call_later(left, self._expire, job, timeout)
        else:
            job.future.set_exception(TimeoutError())

    def _hand_over(self) -> None:
        queued, self._queued = self._queued, []
        with self._lock:
            self._pending.extend(queued)
            self._call_helper()

    def _call_helper(self) -> bool:
        """Under the lock: wake or start one more thread, unless one is already on its way. False if none can come."""
        if self._waking:
            return True
        if self._idle:
            thread = self._idle.pop()
            thread.called = True
            thread.wake.release()
        elif len(self._threads) < self.size:
            thread = _Worker(self)
            self._threads.append(thread)
            thread.start()
        else:
            return False
        self._waking += 1
        return True

    def _next(self, worker: _Worker, done: tuple[_Job, bool, Any] | None) -> _Job | None:
        """Called on a pool thread with the result of its last job, if any: its next job, sleeping until there is
        one; None once it is retired. Results are delivered as the module's docstring says."""
        while True:
            with self._lock:
                if done is not None and not done[0].abandoned:
                    self._done.append(done)
                done = None
                loop = None
                if worker.called:  # woken or started by another thread: it may have left results to deliver
                    worker.called = False
                    self._waking -= 1
                    loop = self._claim_delivery()
                job = None if worker.retired else self._take(worker)
                # another thread is wanted if this job is slow: for the jobs that wait, and to deliver the results
                # kept so far; when none can come, they go now
                if job is None or ((self._pending or self._undelivered()) and not self._call_helper()):
                    loop = loop or self._claim_delivery()
                if job is None and not worker.retired:
                    self._idle.append(worker)
            if loop is not None:
                self._wake_loop(loop)
            if job is not None or worker.retired:
                return job
            worker.wake.acquire()

    def _take(self, worker: _Worker) -> _Job | None:
        """Under the lock: the next job that has not timed out waiting, now this thread's."""
        while self._pending:
            job = self._pending.popleft()
            if not job.abandoned:
                job.thread, job.started = worker, time.monotonic()
                return job
        return None

    def _abandon(self, job: _Job) -> None:
        with self._lock:
            job.abandoned = True
            stuck = job.thread
            if stuck is None or stuck.retired:
                return
            stuck.retired = True  # it leaves once its call returns; a fresh thread takes its place now
            self._threads.remove(stuck)
            self._overran.append(stuck)
            self.replaced += 1
            if self._pending:
                self._call_helper()

    def _undelivered(self) -> bool:
        return bool(self._done) and not self._wake_pending

    def _claim_delivery(self) -> asyncio.AbstractEventLoop | None:
        """Under the lock: the loop to wake for the results kept, unless it has been woken for them already."""
        if not self._undelivered():
            return None
        # the loop's drain does not take the lock: one under way may take every result at any moment, the first too
        try:
            loop = self._done[0][0].loop
        except IndexError:  # taken: delivered by that drain
            return None
        self._wake_pending = True
        return loop

    def _wake_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            loop.call_soon_threadsafe(self._drain)
        except RuntimeError:  # the run is over (interrupted, or timed out) and its loop closed: no one wants these
            with self._lock:
                self._wake_pending = False
                while self._done and self._done[0][0].loop.is_closed():
                    self._done.popleft()

    def _drain(self) -> None:
        self._wake_pending = False  # first: a result queued from here on schedules another drain
        while self._done:
            job, ok, value = self._done.popleft()
            if not job.future.done():
                (job.future.set_result if ok else job.future.set_exception)(value)

    def overrunning(self) -> int:
        """Calls abandoned past their timeout that still run (a thread cannot be stopped): a worker process with
        any is replaced, since a call stuck in a CPU loop would slow every later call of that process."""
        with self._lock:
            self._overran = [thread for thread in self._overran if thread.is_alive()]
            return len(self._overran)

    def close(self) -> None:
        """Let idle threads leave; a thread inside a call leaves when the call returns."""
        with self._lock:
            threads, self._threads = self._threads, []
            self._waking = 0  # those on their way leave without looking for a job: a later run starts afresh
            for thread in threads:
                thread.retired, thread.called = True, False
            idle, self._idle = self._idle, []
            for thread in idle:
                thread.wake.release()
