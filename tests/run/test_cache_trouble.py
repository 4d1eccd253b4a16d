"""A response cache in trouble never changes a metric (issue 24, items 4 and 16): a full disk (a real tmpfs of a few
kilobytes, mounted in a private mount namespace), a garbage, truncated or read-only file, a directory in the file's
place and an edited stored reply are each skipped or asked again with one warning, and every run ends with the
metrics of the same cases run without a cache. What is stored is scrubbed as the journal is."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import OPENAI_SERVER, ROOT, read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 40
WARNING = "fcb: warning: response cache"


def _metrics(out: Path) -> dict:
    doc = json.loads((out / "metrics.json").read_text())
    return dict(doc["metrics"], operational=None)


def _eval_args(cases: Path, spec: str, out: Path, *args: str) -> list[str]:
    return ["eval", str(cases), "-d", spec, "--out", str(out), "-q", "--bootstrap", "0", *args]


def _plain_run(tmp_path: Path, cases: Path, spec: str) -> dict:
    """The independent figure: the same cases, no cache at all."""
    proc = run_cli(*_eval_args(cases, spec, tmp_path / "plain", "--no-cache"))
    assert proc.returncode == 0, proc.stderr
    return _metrics(tmp_path / "plain")


def _no_errors(out: Path) -> None:
    journal = read_jsonl(out / "predictions.jsonl")
    assert len(journal) == N and [r for r in journal if r["error"] is not None] == []


def _in_private_mounts(script: str) -> subprocess.CompletedProcess:
    """``script`` (sh) in a mount namespace of its own, where it may mount a tmpfs; skipped where that is refused."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is not installed")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode().strip()}")
    command = ["unshare", "-rm", "sh", "-ec", script]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)


def _cli(args: list[str]) -> str:
    return " ".join(f"'{a}'" for a in [sys.executable, "-m", "harness", *args])


@pytest.fixture
def llm(tmp_path: Path, detector_server) -> tuple[Path, str]:
    server = detector_server(script=OPENAI_SERVER)
    return write_cases(tmp_path / "cases.jsonl", N), f"llm:json@{server.url}/v1"


def test_a_full_disk_under_the_cache_costs_no_case(tmp_path: Path, llm: tuple[Path, str]) -> None:
    # 80 KiB: the cache opens (its 32 KiB shared-memory file fits) and fills up after a few answers
    cases, spec = llm
    disk, out = tmp_path / "disk", tmp_path / "full"
    disk.mkdir()
    args = _eval_args(cases, spec, out, "--cache", str(disk), "--max-consecutive-errors", "0")
    proc = _in_private_mounts(f"mount -t tmpfs -o size=80k tmpfs '{disk}'\n{_cli(args)}\ndf -k '{disk}'")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-2] == "100%"  # the disk did fill up (df's Use%)
    assert proc.stderr.count(WARNING) == 1 and "disk is full" in proc.stderr
    _no_errors(out)
    assert _metrics(out) == _plain_run(tmp_path, cases, spec)


def _filled_cache(tmp_path: Path, cases: Path, spec: str) -> Path:
    cache = tmp_path / "cache"
    proc = run_cli(*_eval_args(cases, spec, tmp_path / "filling", "--cache", str(cache)))
    assert proc.returncode == 0, proc.stderr
    with sqlite3.connect(cache / "responses.sqlite3") as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every row in the main file, so that cutting it hurts
    return cache


def _garbage(cache: Path) -> None:
    (cache / "responses.sqlite3").write_bytes(b"not a database, " * 512)


def _truncated(cache: Path) -> None:
    path = cache / "responses.sqlite3"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2 + 100])


def _directory(cache: Path) -> None:
    shutil.rmtree(cache)
    (cache / "responses.sqlite3").mkdir(parents=True)


@pytest.mark.parametrize("damage", [_garbage, _truncated, _directory])
def test_a_broken_cache_file_is_skipped_with_one_warning(tmp_path: Path, llm: tuple[Path, str], damage) -> None:
    cases, spec = llm
    cache = _filled_cache(tmp_path, cases, spec)
    damage(cache)
    proc = run_cli(*_eval_args(cases, spec, tmp_path / "run", "--cache", str(cache)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(WARNING) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    _no_errors(tmp_path / "run")
    assert _metrics(tmp_path / "run") == _plain_run(tmp_path, cases, spec)


def test_a_read_only_cache_is_skipped_with_one_warning(tmp_path: Path, llm: tuple[Path, str]) -> None:
    # read-only for root too: a tmpfs remounted read-only, holding a copy of a cache that has every answer
    cases, spec = llm
    cache, ro, out = _filled_cache(tmp_path, cases, spec), tmp_path / "ro", tmp_path / "run"
    ro.mkdir()
    script = (
        f"mount -t tmpfs tmpfs '{ro}'\ncp '{cache}/responses.sqlite3' '{ro}/'\nmount -o remount,ro '{ro}'\n"
        + _cli(_eval_args(cases, spec, out, "--cache", str(ro)))
    )
    proc = _in_private_mounts(script)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(WARNING) == 1 and "Traceback" not in proc.stderr, proc.stderr
    _no_errors(out)
    assert _metrics(out) == _plain_run(tmp_path, cases, spec)


def test_an_edited_stored_reply_is_asked_again(tmp_path: Path, llm: tuple[Path, str]) -> None:
    cases, spec = llm
    cache = _filled_cache(tmp_path, cases, spec)
    with sqlite3.connect(cache / "responses.sqlite3") as db:
        rows = db.execute("SELECT detector, request, reply FROM replies").fetchall()
        edits = [b'{"risk":"bogus","score":0.5,"extra":{}}', b'{"risk":"low","score":7,"extra":{}}', b"[1,", b"{}"]
        for (detector, request, _), blob in zip(rows, edits, strict=False):
            db.execute("UPDATE replies SET reply = ? WHERE detector = ? AND request = ?", (blob, detector, request))
    proc = run_cli(*_eval_args(cases, spec, tmp_path / "run", "--cache", str(cache)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count(WARNING) == 1 and "asked again" in proc.stderr
    _no_errors(tmp_path / "run")
    doc = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert doc["metrics"]["operational"]["cached"] == N - len(edits)  # the edited rows were asked afresh
    assert _metrics(tmp_path / "run") == _plain_run(tmp_path, cases, spec)


def test_the_cache_keeps_no_start_of_an_echoed_key(tmp_path: Path, detector_server) -> None:
    server = detector_server(script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    spec, key = f"llm:echokey@{server.url}/v1", "sk-KEYSTART-0123456789-abcdefghij"
    cache = tmp_path / "cache"
    first = run_cli(*_eval_args(cases, spec, tmp_path / "one", "--cache", str(cache)), env={"FCB_DETECTOR_TOKEN": key})
    assert first.returncode == 0, first.stderr
    journal = (tmp_path / "one" / "predictions.jsonl").read_text()
    assert journal.count("[REDACTED]") == 8 and "sk-KEYST" not in journal  # the model echoed 12 characters
    stored = b"".join(p.read_bytes() for p in cache.iterdir())
    assert b"sk-KEYST" not in stored
    again = run_cli(*_eval_args(cases, spec, tmp_path / "two", "--cache", str(cache)), env={"FCB_DETECTOR_TOKEN": key})
    assert again.returncode == 0, again.stderr
    replayed = json.loads((tmp_path / "two" / "metrics.json").read_text())
    assert replayed["metrics"]["operational"]["cached"] == 8
    assert _metrics(tmp_path / "two") == _metrics(tmp_path / "one")
