"""Runs with known behaviour for leaderboard and compare tests: a detector right exactly on chosen cases."""

from __future__ import annotations

import json
from pathlib import Path

import harness
from harness.types import RISKS, Prediction


class ChosenRight:
    """Answers the expected risk on the chosen case ids and a wrong risk on every other case.

    It reads the labels from the cases file itself, by question text: a test device, never a real detector.
    """

    def __init__(self, cases_path: Path, right_ids: set[str], name: str) -> None:
        self.name = name
        self._risk = {}
        for line in cases_path.read_text().splitlines():
            case = json.loads(line)
            expected = case["expected_risk"]
            wrong = RISKS[(RISKS.index(expected) + 1) % 3]
            self._risk[case["question"]] = expected if case["id"] in right_ids else wrong

    async def assess(self, request):
        return Prediction(self._risk[request["task"]])

    async def aclose(self):
        return None


def make_run(cases: Path, results: Path, right_ids: set[str], name: str) -> Path:
    """Evaluate a ChosenRight detector; returns the run folder."""
    detector = ChosenRight(cases, right_ids, name)
    return Path(harness.evaluate(str(cases), detector, results_root=str(results), n_boot=200).run_dir)


def ids(first: int, last: int) -> set[str]:
    """Case ids FCB-first .. FCB-last, inclusive (casegen numbers cases from FCB-0001)."""
    return {f"FCB-{i:04d}" for i in range(first, last + 1)}
