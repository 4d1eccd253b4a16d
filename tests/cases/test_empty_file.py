"""An empty cases file is no pass (issue 24, item 17): `fcb validate` and `fcb eval` exit 2 saying "no cases" and
naming the file, never 0 for a check of nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def test_an_empty_cases_file_is_exit_2_naming_it(tmp_path: Path) -> None:
    empty, good = tmp_path / "empty.jsonl", write_cases(tmp_path / "good.jsonl", 3)
    empty.write_bytes(b"")
    validate = run_cli("validate", str(good), str(empty))
    assert validate.returncode == 2, validate.stdout + validate.stderr
    assert f"fcb validate: {empty}: no cases: the file is empty" in validate.stderr
    assert f"{good}: 3 valid case(s)" in validate.stdout  # the other file is still checked
    run = run_cli("eval", str(empty), "-d", "builtin:always-low", "--out", str(tmp_path / "run"), "-q")
    assert run.returncode == 2 and run.stderr.strip() == f"fcb eval: {empty}: no cases: the file is empty"
    assert not (tmp_path / "run").exists()


def test_stats_of_an_empty_cases_file_is_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    proc = run_cli("stats", str(empty))
    assert proc.returncode == 2 and proc.stderr.strip() == f"fcb stats: {empty}: no cases: the file is empty"
