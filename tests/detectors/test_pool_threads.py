"""The thread pool that runs plain Python detectors, when a run ends under a call still in flight."""

from __future__ import annotations


def test_a_sync_detector_thread_that_outlives_its_event_loop_prints_nothing() -> None:
    """A plain function still running when an interrupted run's loop closes must not raise in its thread."""
    import asyncio
    import threading

    from harness.detectors.pool import THREAD_NAME, ThreadPool

    release, raised = threading.Event(), []
    previous = threading.excepthook
    threading.excepthook = lambda args: raised.append(args.exc_value)
    pool = ThreadPool(2)
    kept = []
    try:

        async def start() -> None:
            kept.append(asyncio.ensure_future(pool.run(lambda _: release.wait(10) and "low", {})))
            await asyncio.sleep(0.1)  # the call is under way on a pool thread

        loop = asyncio.new_event_loop()
        loop.run_until_complete(start())
        loop.close()  # the run is over; the detector's call is not
        pool.close()
        release.set()
        for thread in threading.enumerate():
            if thread.name == THREAD_NAME:
                thread.join(5)
                assert not thread.is_alive()
    finally:
        threading.excepthook = previous
    assert raised == []
