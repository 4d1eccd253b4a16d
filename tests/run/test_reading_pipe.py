"""A run reads a pipe's lines as they come and sends its first case before the rest is written
(`harness.run.reading`): the cases come through a FIFO that the test writes, so the interleaving is forced, not
timed: the rest of the file is written only once the detector (`tests/localdetector.py`) has its first request. A
process of its own, as a user runs ``fcb``: the test writes the pipe while the run reads it."""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import orjson
import pytest
from casegen import write_cases
from conftest import ROOT, read_jsonl
from localdetector import Detector, serving


@pytest.fixture
def detector() -> Iterator[Detector]:
    with serving() as server:
        yield server


pytestmark = pytest.mark.slow

WAIT_S = 60  # a bound for a hang, never a timing: the run waits on the test, or the test on the run


def _writer(fifo: Path, process: subprocess.Popen[str]) -> BinaryIO | None:
    """The FIFO's writing end once the run has opened it to read; None when the run ended without (it failed)."""
    deadline = time.monotonic() + WAIT_S
    while process.poll() is None and time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
            time.sleep(0.01)
            continue
        os.set_blocking(fd, True)
        return os.fdopen(fd, "wb")
    return None


def test_the_first_request_goes_out_before_the_rest_of_the_file_is_written(tmp_path: Path, detector: Detector) -> None:
    """The file's first line is written into the FIFO, and nothing more until the detector has its first request: a
    run that read the whole file first would wait forever (the test fails at `WAIT_S`)."""
    lines = write_cases(tmp_path / "source.jsonl", 40).read_bytes().splitlines(keepends=True)
    fifo = tmp_path / "cases.fifo"
    os.mkfifo(fifo)
    out = tmp_path / "run"
    command = [sys.executable, "-m", "harness", "eval", str(fifo), "-d", detector.url, "--out", str(out), "-q"]
    with subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True) as process:
        writer = _writer(fifo, process)
        came = False
        if writer is not None:
            with writer:
                writer.write(lines[0])
                writer.flush()
                came = detector.first.wait(WAIT_S)
                writer.writelines(lines[1:] if came else [])
        _, err = process.communicate(timeout=WAIT_S)
    assert came, "the run sent nothing before the whole file was there"
    assert process.returncode == 0, err
    cases = [orjson.loads(line) for line in lines]
    assert detector.questions[0] == cases[0]["question"]  # the preflight: the file's first case
    assert sorted(detector.questions) == sorted(c["question"] for c in cases)  # each case asked once
    journal = read_jsonl(out / "predictions.jsonl")
    assert [r["id"] for r in journal] == [c["id"] for c in cases]  # the preflight's answer is its case's record
