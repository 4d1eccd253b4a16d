"""A full disk under the run folder (issue 24, item 17): a real tmpfs of a few kilobytes, mounted in a private mount
namespace. The run stops with exit 2 naming the journal and the command that resumes it; once there is space, the
resume ends with the metrics of an uninterrupted run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 200  # a journal of about 35 KiB, on a disk of 24 KiB


def _cli(*args: str) -> str:
    return " ".join(f"'{a}'" for a in [sys.executable, "-m", "harness", *args])


def test_a_full_disk_names_the_journal_and_the_resume(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-rm", "true"]).returncode != 0:
        pytest.skip("no private mount namespace here")
    cases = write_cases(tmp_path / "cases.jsonl", N)
    disk = tmp_path / "disk"
    disk.mkdir()
    run = disk / "run"
    args = ("--bootstrap", "0", "-q")
    script = "\n".join([
        f"mount -t tmpfs -o size=24k tmpfs '{disk}'",
        f"{_cli('eval', str(cases), '-d', 'builtin:agreement', '--out', str(run), *args)} || echo EXIT=$?",
        f"mount -o remount,size=1m '{disk}'",  # space freed
        f"{_cli('eval', str(cases), '-d', 'builtin:agreement', '--resume', str(run), *args)}",
        f"cat '{run}/metrics.json'",
    ])  # fmt: skip
    command = ["unshare", "-rm", "sh", "-ec", script]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "EXIT=2" in proc.stdout, proc.stdout
    first_error = proc.stderr.strip().splitlines()[0]
    assert first_error == (
        f"fcb eval: {run}/predictions.jsonl: No space left on device; the cases that finished are kept in {run}: "
        f"free some space, then go on with `fcb eval --resume {run}` (the same cases file and detector)"
    )
    resumed = json.loads(proc.stdout[proc.stdout.index("{") :])["metrics"]

    plain = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(tmp_path / "plain"), *args)
    assert plain.returncode == 0, plain.stderr
    expected = json.loads((tmp_path / "plain" / "metrics.json").read_text())["metrics"]
    assert dict(resumed, operational=None) == dict(expected, operational=None)
