"""Issue 30's gate target, as a smoke run: benchmarks/gate.py (real runs of a detector random on 30% of calls,
--epochs 5, on the embedded set, fixed seeds, one request at a time: deterministic) with one pair of runs of identical
code, which must not fail the gate, and one pair with a real change (30% to 70% random), which must. The whole
measurement (30 and 5 pairs) is the ``gate`` section of ``make bench``; its figures are in docs/leaderboards.md."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def test_identical_code_passes_and_a_real_change_is_caught(tmp_path: Path) -> None:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "gate.py"), "--out", str(tmp_path), "--pairs", "1",
           "--change-pairs", "1", "--bootstrap", "1000"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads((tmp_path / "gate.json").read_text())
    assert [p["exit"] for p in result["same"]["pairs"]] == [0]
    assert [p["exit"] for p in result["changed"]["pairs"]] == [1]
    assert all("accuracy" in p["failed"] for p in result["changed"]["pairs"])
    assert "exited 1 in 0 of 1 pairs" in done.stdout and "exited 1 in 1 of 1 pairs" in done.stdout
