"""The heartbeat (harness/heartbeat.py) and where it speaks (issue 45, item 12: `make dataset` sat silent for 10
minutes while grading, and builtin:learned trained for up to 2 minutes before the run folder appeared). The
interleavings are forced: a block waits for the beats it expects, never for a time."""

from __future__ import annotations

import builtins
import threading
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli

import harness.heartbeat
from harness.heartbeat import heartbeat


def test_a_long_block_is_said_every_beat_with_its_seconds() -> None:
    said: list[str] = []
    two = threading.Event()

    def say(text: str) -> None:
        said.append(text)
        if len(said) == 2:
            two.set()

    with heartbeat("still grading", every=0.01, say=say):
        assert two.wait(30)
    count = len(said)
    assert count >= 2 and all(line.startswith("still grading (") and line.endswith(" s)") for line in said)
    assert len(said) == count  # nothing after the block ended


def test_a_block_that_ends_before_its_first_beat_says_nothing() -> None:
    said: list[str] = []
    with heartbeat("quick", first=3600, every=3600, say=said.append):
        pass
    assert said == []


def test_fcb_eval_says_it_is_opening_a_slow_detector(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A detector whose loading lasts until the run has said it is opening it: without the line, it never loads."""
    beaten = threading.Event()
    monkeypatch.setattr(builtins, "_fcb_test_beaten", beaten, raising=False)
    monkeypatch.setattr(harness.heartbeat, "EVERY_S", 0.01)
    real = harness.heartbeat._stderr_line

    def say(text: str) -> None:
        real(text)
        beaten.set()

    monkeypatch.setattr(harness.heartbeat, "_stderr_line", say)
    slow = tmp_path / "slow.py"
    slow.write_text(
        "import builtins\n"
        "assert builtins._fcb_test_beaten.wait(60), 'no heartbeat while loading'\n"
        "def assess(request):\n    return {'false_consensus_risk': 'low'}\n"
    )
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    proc = run_cli("eval", str(cases), "-d", f"{slow}:assess", "--out", str(tmp_path / "run"), "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    assert f"fcb eval: opening {slow}:assess (" in proc.stderr
    quiet = run_cli("eval", str(cases), "-d", "builtin:agreement", "-q", "--out", str(tmp_path / "q"))
    assert "opening" not in quiet.stderr  # -q: no progress, and no heartbeat
