"""A shard validates only its own cases, while its digest still covers the whole file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli

pytestmark = pytest.mark.slow


def shard_of(case_id: str, n: int) -> int:
    """The shard (1..n) a case id belongs to, by the rule the README states: sha256 of the id, first 12 hex digits."""
    return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % n + 1


def test_a_shard_passes_over_other_shards_cases_but_not_over_unreadable_lines(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    lines = cases.read_text().splitlines()
    # break a case of shard 2: its question is gone
    index = next(i for i, line in enumerate(lines) if shard_of(json.loads(line)["id"], 2) == 2)
    broken = json.loads(lines[index])
    del broken["question"]
    lines[index] = json.dumps(broken)
    cases.write_text("\n".join(lines) + "\n")

    first = run_cli("eval", str(cases), "--shard", "1/2", "-q", "--out", str(tmp_path / "s1"))
    assert first.returncode == 0, first.stderr
    dataset = json.loads((tmp_path / "s1" / "metrics.json").read_text())["dataset"]
    assert dataset["sha256"] == hashlib.sha256(cases.read_bytes()).hexdigest()  # the whole file, as merge checks
    second = run_cli("eval", str(cases), "--shard", "2/2", "-q", "--out", str(tmp_path / "s2"))
    assert second.returncode == 1 and f"cases.jsonl:{index + 1}: question: required field is missing" in second.stderr

    # a line whose id cannot be read belongs to no shard: every shard reports it
    cases.write_text("\n".join([*lines[:index], lines[index + 1]]) + "\n{not json\n")
    for k in (1, 2):
        proc = run_cli("eval", str(cases), "--shard", f"{k}/2", "-q", "--out", str(tmp_path / f"t{k}"))
        assert proc.returncode == 1 and "invalid JSON" in proc.stderr
