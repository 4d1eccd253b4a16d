"""The cases file is read once and safely (issue 15, items 8, 9 and 19).

A FIFO that gives a different content on each open, standard input, a line far over the limit, /dev/zero: the run
never mixes two contents, a long line is an error for that line, memory stays bounded, and nothing ends in a
traceback. Cases are sent in a seeded shuffled order, while the journal keeps the file's order.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

# A file detector that answers each question with the expected risk of the case that question belongs to: right on
# every case when each request is recorded against its own case, wrong wherever two contents got mixed.
ORACLE = """import json, pathlib
RISK = json.loads((pathlib.Path(__file__).parent / "oracle.json").read_text())
def assess(request):
    return RISK[request["task"]]
"""


def _oracle(tmp_path: Path, cases: Path) -> str:
    risks = {}
    for line in cases.read_text().splitlines():
        case = json.loads(line)
        risks[case["question"]] = case["expected_risk"]
    (tmp_path / "oracle.json").write_text(json.dumps(risks))
    (tmp_path / "oracle.py").write_text(ORACLE)
    return f"{tmp_path / 'oracle.py'}:assess"


class FifoWriter:
    """Feeds a FIFO: the first reader that opens it gets ``first``, every later one ``then``; counts the opens."""

    def __init__(self, fifo: Path, first: bytes, then: bytes) -> None:
        self.fifo, self.contents, self.opens = fifo, [first, then], 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            fd = os.open(self.fifo, os.O_WRONLY)  # blocks until a reader opens the FIFO
            if self._stop.is_set():
                os.close(fd)
                return
            self.opens += 1
            try:
                os.write(fd, self.contents[min(self.opens, 2) - 1])  # below the pipe's capacity: one write
            except BrokenPipeError:
                pass
            finally:
                os.close(fd)
            self._wait_for_the_reader_to_close()

    def _wait_for_the_reader_to_close(self, limit_s: float = 2.0) -> None:
        # a reader still reading must see the end of this content, not the next one appended to it
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and not self._stop.is_set():
            try:
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))  # succeeds while a reader has it open
            except OSError:  # ENXIO: no reader
                return
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop.set()
        fd = os.open(self.fifo, os.O_RDONLY | os.O_NONBLOCK)  # lets a writer blocked in open() return
        self._thread.join(timeout=10)
        os.close(fd)


def test_a_fifo_that_changes_between_reads_is_read_once(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 32)
    lines = cases.read_text().splitlines(keepends=True)
    first, then = "".join(lines).encode(), "".join(reversed(lines)).encode()  # the same cases, another order
    assert len(first) < 60_000  # one write into the pipe, whose capacity is 64 KiB
    fifo = tmp_path / "cases.fifo"
    os.mkfifo(fifo)
    writer = FifoWriter(fifo, first, then)
    try:
        out = tmp_path / "run"
        proc = run_cli("eval", str(fifo), "-d", _oracle(tmp_path, cases), "--out", str(out), "-q", timeout=60)
    finally:
        writer.stop()
    assert proc.returncode == 0, proc.stderr
    assert writer.opens == 1  # read once
    records = read_jsonl(out / "predictions.jsonl")
    assert len(records) == 32 and all(r["risk"] == r["expected"] for r in records)
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["complete"] and doc["metrics"]["accuracy"] == 1.0


def test_standard_input_is_a_cases_file(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    out = tmp_path / "run"
    proc = subprocess.run(  # standard input is a pipe here, which can be read only once
        [sys.executable, "-m", "harness", "eval", "/dev/stdin", "-d", _oracle(tmp_path, cases), "--out", str(out)],
        input=cases.read_text(),  # no -q: the summary goes to stdout, which is captured
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert [r["id"] for r in read_jsonl(out / "predictions.jsonl")] == [f"FCB-{i:04d}" for i in range(1, 13)]
    assert all(r["risk"] == r["expected"] for r in read_jsonl(out / "predictions.jsonl"))


def _limited(mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (mb << 20, mb << 20))


def _fcb_peak_rss_mb(args: list[str]) -> tuple[int, str, str, float]:
    """Run ``fcb ARGS`` from a fresh parent that reports only this child's peak RSS."""
    code = (
        "import resource, subprocess, sys, json; p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(json.dumps([p.returncode, p.stdout[-4000:], p.stderr[-4000:], "
        "resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    rc, out, err, peak_kb = json.loads(proc.stdout)
    return rc, out, err, peak_kb / 1024


def test_a_line_of_half_a_gigabyte_is_an_error_for_that_line_in_bounded_memory(tmp_path: Path) -> None:
    good = write_cases(tmp_path / "good.jsonl", 2).read_text().splitlines(keepends=True)
    path = tmp_path / "huge-line.jsonl"
    with open(path, "wb") as f:
        f.write(good[0].encode())
        f.truncate(len(good[0]) + 512 * 1024 * 1024)  # a sparse run of 512 MiB of NUL bytes and no newline: line 2
        f.seek(0, os.SEEK_END)
        f.write(b"\n" + good[1].encode())  # line 3 is a good case again
    rc, out, err, peak = _fcb_peak_rss_mb(["validate", str(path)])
    assert rc == 1 and "Traceback" not in err
    assert f"{path}:2: (line): line is {512 * 1024 * 1024:,} bytes, over the" in out
    assert "2 valid case(s), 1 invalid line(s)" in out
    assert peak < 200, f"peak RSS {peak:.0f} MB while reading a 512 MiB line"  # holding the line would be >= 512
    rc, out, err, peak = _fcb_peak_rss_mb(
        ["eval", str(path), "-d", "builtin:always-low", "--skip-invalid", "-q", "--out", str(tmp_path / "run")]
    )
    assert rc == 0 and "Traceback" not in err and peak < 250, (rc, err, peak)
    assert len(read_jsonl(tmp_path / "run" / "predictions.jsonl")) == 2


@pytest.mark.parametrize(
    "command",
    [
        ["validate", "/dev/zero"],
        ["eval", "/dev/zero", "-q", "--results", "/nonexistent-never-made"],
        ["scenario", "validate", "/dev/zero"],
    ],
)
def test_dev_zero_under_a_memory_limit_is_a_clean_error(command: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness", *command],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        preexec_fn=lambda: _limited(1536),  # reading /dev/zero into memory would fail with MemoryError
    )
    assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr
    said = proc.stdout + proc.stderr
    assert "/dev/zero" in said and ("not a regular file or a pipe" in said or "over the" in said), said


def test_requests_go_in_a_seeded_shuffled_order_and_the_journal_keeps_file_order(
    tmp_path: Path, detector_server
) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    questions = [json.loads(line)["question"] for line in cases.read_text().splitlines()]
    ids = [json.loads(line)["id"] for line in cases.read_text().splitlines()]

    def sent_order(name: str, *seed: str) -> list[int]:
        record = tmp_path / f"{name}.requests.jsonl"
        server = detector_server("--record", str(record))
        out = tmp_path / name
        proc = run_cli("eval", str(cases), "-d", server.url, "--concurrency", "1", "--out", str(out), "-q", *seed)
        assert proc.returncode == 0, proc.stderr
        assert [r["id"] for r in read_jsonl(out / "predictions.jsonl")] == ids  # the journal: file order
        return [questions.index(r["body"]["task"]) for r in read_jsonl(record)]

    first, again, other = sent_order("a"), sent_order("b"), sent_order("c", "--seed", "5")
    assert sorted(first) == list(range(40)) and first != list(range(40))  # every case once, not in file order
    assert first == again  # seeded: the same order every time
    assert other != first and sorted(other) == list(range(40))
    # a category-grouped file is not sent grouped: the first ten requests span several categories
    categories = [json.loads(line)["category"] for line in cases.read_text().splitlines()]
    assert len({categories[i] for i in first[:10]}) > 1
    docs = [json.loads((tmp_path / n / "metrics.json").read_text())["metrics"] for n in "abc"]
    assert docs[0]["confusion_matrix"] == docs[1]["confusion_matrix"] == docs[2]["confusion_matrix"]
    assert docs[0]["per_category"] == docs[1]["per_category"]  # the order changes nothing the report shows
