"""Replies are read into a bounded buffer that is dropped when it overflows (issue 15, item 10).

An endless chunked reply is refused at the cap, and nothing of it stays alive afterwards, even with the garbage
collector off (the old reader's buffer was kept by a reference cycle through the retry state). The peak memory of a
whole run against such a server at concurrency 64 is measured by ``make bench`` (section ``replies``), not here.
"""

from __future__ import annotations

import asyncio
import gc
import tracemalloc

import pytest

from harness.detectors.http import HttpDetector
from harness.detectors.options import DetectorOptions
from harness.types import DetectorError

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

REQUEST = {"task": "2 + 2?", "answers": [{"agent_id": "a", "text": "4"}, {"agent_id": "b", "text": "5"}]}
MiB = 1024 * 1024


async def _refusals(url: str, n: int, concurrency: int) -> tuple[list[DetectorError], int, int]:
    """``n`` requests to an endless-reply server; the errors, and traced memory still held and at its peak."""
    detector = HttpDetector(url, DetectorOptions(retries=0, timeout=60, concurrency=concurrency))
    errors: list[DetectorError] = []

    async def one() -> None:
        try:
            await detector.assess(REQUEST)  # type: ignore[arg-type]
        except DetectorError as exc:
            errors.append(exc)

    await one()  # the session, the connector and the first imports are made before the count starts
    errors.clear()
    gc.collect()
    gc.disable()  # a buffer that only the collector would free counts as kept
    tracemalloc.start()
    try:
        for _ in range(n // concurrency):
            await asyncio.gather(*(one() for _ in range(concurrency)))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        gc.enable()
        await detector.aclose()
    return errors, held, peak


def test_an_endless_reply_is_refused_at_the_cap_and_nothing_of_it_stays(detector_server) -> None:
    server = detector_server("--fault-rate", "1", "--faults", "endless", "--fault-every-attempt")
    cap = DetectorOptions().max_response_bytes
    errors, held, peak = asyncio.run(_refusals(server.url, n=8, concurrency=1))
    assert len(errors) == 8 and {e.kind for e in errors} == {"invalid_response"}
    assert all(f"exceeds the {cap:,}-byte cap" in e.message for e in errors)
    assert held < 2 * MiB, f"{held / MiB:.1f} MiB still held after 8 refused replies of {cap / MiB:.0f} MiB"
    assert peak < cap + 2 * MiB, f"{peak / MiB:.1f} MiB at the peak for one reply at a time"  # never past the cap


def test_replies_in_flight_share_a_bounded_budget(detector_server) -> None:
    server = detector_server("--fault-rate", "1", "--faults", "endless", "--fault-every-attempt")
    errors, held, peak = asyncio.run(_refusals(server.url, n=32, concurrency=16))
    assert len(errors) == 32 and {e.kind for e in errors} == {"invalid_response"}
    assert held < 2 * MiB
    # 16 replies of 4 MiB each would hold 64 MiB; the larger replies in flight share a budget of 16 MiB
    assert peak < 40 * MiB, f"{peak / MiB:.1f} MiB at the peak for 16 endless replies at once"
