"""``fcb power`` through the real CLI: a run's table in text and JSON, and its refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EMBEDDED, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def test_the_command(tmp_path: Path) -> None:
    out = tmp_path / "r"
    assert (
        run_cli("eval", str(EMBEDDED), "-d", "builtin:vote", "--out", str(out), "-q", "--bootstrap", "20").returncode
        == 0
    )
    proc = run_cli("power", str(out), "--effect", "0.02", "--bootstrap", "200", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["cases"] == 240 and doc["metrics"]["accuracy"]["cases_needed"] > 240
    text = run_cli("power", str(out), "--effect", "0.02", "--bootstrap", "200")
    assert "cases to detect 0.02" in text.stdout and "sqrt(2) x this run's own spread" in text.stdout
    bad = run_cli("power", str(out), "--effect", "2")
    assert bad.returncode == 2
    three = run_cli("power", str(out), str(out), str(out), "--effect", "0.1")
    assert three.returncode == 2 and "one run or two" in three.stderr
