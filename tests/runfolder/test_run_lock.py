"""One process per run folder (issue 15, item 12): a run holds an advisory lock on its folder until its report is
written; a second ``fcb eval --resume`` of the same folder says who holds it and exits 2, and sends nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def test_a_second_process_on_a_run_folder_is_refused_and_names_the_holder(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 60)
    server = detector_server("--delay", "0.2")
    out = tmp_path / "run"
    command = ["eval", str(cases), "-d", server.url, "--concurrency", "2", "--out", str(out)]
    first = subprocess.Popen(
        [sys.executable, "-m", "harness", *command],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not (out / "predictions.jsonl").exists() or len(read_jsonl(out / "predictions.jsonl")) < 3:
            assert time.monotonic() < deadline and first.poll() is None, "the first run did not start"
            time.sleep(0.1)
        second = run_cli("eval", "--resume", str(out), "-q", timeout=60)
        assert second.returncode == 2, second.stderr
        assert f"{out} is in use by process {first.pid} on " in second.stderr
        assert first.poll() is None  # the holder runs on, undisturbed
        assert server.stats()["max_in_flight"] <= 2  # the first run's own concurrency: the second sent nothing
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130
    # once the holder is gone (here: interrupted) the folder can be resumed
    done = run_cli("eval", "--resume", str(out), "-q", timeout=120)
    assert done.returncode == 0, done.stderr
    ids = [r["id"] for r in read_jsonl(out / "predictions.jsonl")]
    assert len(ids) == len(set(ids)) == 60  # each case once


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    server = detector_server("--delay", "0.2")
    out = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, "-m", "harness", "eval", str(cases), "-d", server.url, "--out", str(out), "-q"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while not (out / "predictions.jsonl").exists():
        assert time.monotonic() < deadline, "the first run did not start"
        time.sleep(0.1)
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=10)
    assert (out / ".lock").exists()  # the file stays; the lock went with the process
    done = run_cli("eval", "--resume", str(out), "-q", timeout=120)
    assert done.returncode == 0, done.stderr
    assert len({r["id"] for r in read_jsonl(out / "predictions.jsonl")}) == 30


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_lock_file_that_links_elsewhere_is_refused_and_its_target_kept(tmp_path: Path, link: str) -> None:
    # `fcb eval --resume` opened .lock through a symbolic link and truncated the file it pointed to (issue 24, 13)
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    out = tmp_path / "run"
    assert run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(out), "-q").returncode == 0
    precious = tmp_path / "precious.txt"
    precious.write_text("not a lock file\n")
    (out / ".lock").unlink()
    if link == "symlink":
        (out / ".lock").symlink_to(precious)
    else:
        os.link(precious, out / ".lock")
    before = (out / "predictions.jsonl").read_bytes()
    proc = run_cli("eval", "--resume", str(out), "-q")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    said = "is a symbolic link" if link == "symlink" else "is a file with 2 names"
    assert f"{out / '.lock'} {said}" in proc.stderr
    assert precious.read_text() == "not a lock file\n"
    assert (out / "predictions.jsonl").read_bytes() == before
    # a new run into a folder whose .lock is a link is refused the same way, before it writes a journal
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / ".lock").symlink_to(precious)
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(fresh), "-q")
    assert proc.returncode == 2 and f"{fresh / '.lock'} is a symbolic link" in proc.stderr, proc.stderr
    assert precious.read_text() == "not a lock file\n" and not (fresh / "predictions.jsonl").exists()


def test_a_journal_that_is_a_symbolic_link_is_never_written_through(tmp_path: Path) -> None:
    # the same fault as the lock's: a resume truncated a torn last line, and appended, through predictions.jsonl
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    out = tmp_path / "run"
    assert run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(out), "-q").returncode == 0
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_bytes(b"".join((out / "predictions.jsonl").read_bytes().splitlines(keepends=True)[:4]) + b'{"id')
    before = elsewhere.read_bytes()
    (out / "predictions.jsonl").unlink()
    (out / "predictions.jsonl").symlink_to(elsewhere)
    proc = run_cli("eval", "--resume", str(out), "-q")
    assert proc.returncode == 2 and f"{out / 'predictions.jsonl'} is a symbolic link" in proc.stderr, proc.stderr
    assert elsewhere.read_bytes() == before
