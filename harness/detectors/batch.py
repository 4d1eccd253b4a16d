"""Gather single requests into batches: for ``assess_batch`` detectors, and for shipping cases to worker engines.

Each caller awaits its own request's reply, so errors and timeouts stay per case: a batch that raises fails each
of its cases with that exception, and a reply list of the wrong length is an ``invalid_response`` for each.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from harness.types import DetectorError

BATCH_WAIT_S = 0.005  # how long a partly filled batch waits for more requests before it goes


class Batcher:
    """Collects requests from concurrent callers and sends them ``size`` at a time through ``send``.

    A batch goes as soon as it is full, or ``wait`` seconds after its first request (0: at the loop's next turn,
    which takes whatever the callers queued meanwhile). ``send`` receives a list of requests and returns a list of
    replies of the same length, in order.
    """

    def __init__(self, send: Callable[[list[Any]], Awaitable[Any]], size: int, wait: float = BATCH_WAIT_S) -> None:
        if size < 1:
            raise ValueError(f"batch size must be at least 1, got {size}")
        self.size, self.wait = size, wait
        self._send = send
        self._pending: list[tuple[Any, asyncio.Future[Any]]] = []
        self._timer: asyncio.Handle | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # batches in flight (the loop keeps only weak references)

    async def submit(self, request: Any) -> Any:
        """The reply to ``request``, once its batch returns; its batch's exception if the batch failed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((request, future))
        if len(self._pending) >= self.size:
            self._flush()
        elif self._timer is None:
            self._timer = loop.call_later(self.wait, self._flush) if self.wait > 0 else loop.call_soon(self._flush)
        return await future

    def _flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._pending:
            batch, self._pending = self._pending[: self.size], self._pending[self.size :]
            task = asyncio.ensure_future(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[tuple[Any, asyncio.Future[Any]]]) -> None:
        live = [(request, future) for request, future in batch if not future.done()]  # a timed-out case is gone
        if not live:
            return
        try:
            replies = await self._send([request for request, _ in live])
        except Exception as exc:  # the batch failed: so did each of its cases
            for _, future in live:
                if not future.done():
                    future.set_exception(exc)
            return
        except BaseException:  # cancelled (the run is over): so are its cases
            for _, future in live:
                future.cancel()
            raise
        if not isinstance(replies, list | tuple) or len(replies) != len(live):
            got = f"{len(replies)} replies" if isinstance(replies, list | tuple) else type(replies).__name__
            for _, future in live:
                if not future.done():
                    future.set_exception(
                        DetectorError("invalid_response", f"assess_batch returned {got} for {len(live)} requests")
                    )
            return
        for (_, future), reply in zip(live, replies, strict=True):
            if not future.done():
                future.set_result(reply)
