"""The builder says how grading goes while it waits (issue 45, item 12: `make dataset` printed nothing for ten
minutes on a loaded machine). Jobs here finish only when a progress line was said: the interleaving is forced."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from fcb_datasets.realdata.build import _wait_saying


def test_grading_says_how_many_jobs_are_done_until_all_are() -> None:
    gates = [threading.Event() for _ in range(3)]
    said: list[str] = []

    def stage(text: str) -> None:  # each line lets one more job finish
        said.append(text)
        next((g for g in gates if not g.is_set()), threading.Event()).set()

    with ThreadPoolExecutor(3) as pool:
        jobs = [pool.submit(gate.wait, 60) for gate in gates]
        _wait_saying(jobs, stage, every=0.01)
    assert all(job.done() for job in jobs)
    assert said and all(line.startswith("graded ") and line.endswith(" of 3") for line in said)
    counts = [int(line.split()[1]) for line in said]
    assert counts == sorted(counts) and counts[-1] < 3  # said while waiting, never after the last


def test_a_failed_job_ends_the_wait_at_once() -> None:
    release = threading.Event()

    def fail() -> None:
        raise ValueError("a source that does not read")

    with ThreadPoolExecutor(2) as pool:
        slow, failed = pool.submit(release.wait, 60), pool.submit(fail)
        _wait_saying([slow, failed], lambda _: None, every=0.01)
        assert not slow.done()  # the wait returned before the slow job ended
        release.set()
    with pytest.raises(ValueError, match="does not read"):
        failed.result()
