"""The engine a run records is the one that ran (issue 24, item 18): a Python object given to `harness.evaluate`
runs in the calling process, so ``engine="processes"`` is recorded as ``local``, with a warning saying why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from casegen import write_cases

import harness
from harness.types import Prediction

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


class WherePid:
    """Low everywhere; notes the process each call ran in."""

    name = "where-pid"

    def __init__(self) -> None:
        self.pids: set[int] = set()

    async def assess(self, request: dict) -> Prediction:
        self.pids.add(os.getpid())
        return Prediction("low")

    async def aclose(self) -> None:
        return None


def test_an_object_asked_to_run_in_processes_records_the_engine_that_ran(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 6)
    detector = WherePid()
    with pytest.warns(UserWarning, match="runs in this process"):
        result = harness.evaluate(str(cases), detector, engine="processes", workers=2, out=str(tmp_path / "run"))
    assert detector.pids == {os.getpid()}  # it did run here
    for document in ("run.json", "metrics.json"):
        settings = json.loads((tmp_path / "run" / document).read_text())["settings"]
        assert (settings["engine"], settings["workers"]) == ("local", None), document
    assert result.complete
