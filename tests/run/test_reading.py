"""A run against a detector that sends requests asks its preflight as soon as the file's first case is checked, and
reads the rest of the file meanwhile (`harness.run.reading`): the first request never waits for the whole file, a
broken line still fails the run before anything is written (its problems as ``fcb validate`` lists them), no case is
asked twice, and the figures are those of a run that read the whole file first.

The detector is a real HTTP server on 127.0.0.1 in this process (`tests/localdetector.py`); that the first request
does not wait for the rest of the file is shown with a FIFO in tests/run/test_reading_pipe.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import random
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli
from localdetector import Detector, serving

from harness.errors import InvalidCasesError
from harness.run.reading import asks_first_early
from harness.run.runner import run
from harness.run.settings import EvalSettings
from harness.spec import parse_spec

HANG_S = 15
"""A bound for a hang, never a timing: an answer on 127.0.0.1 takes milliseconds; a run that never sends waits."""


@pytest.fixture
def detector() -> Iterator[Detector]:
    with serving() as server:
        yield server


def _lines(tmp_path: Path, n: int) -> list[bytes]:
    return write_cases(tmp_path / "source.jsonl", n).read_bytes().splitlines(keepends=True)


def _validate_lines(cases: Path) -> list[str]:
    done = run_cli("validate", str(cases))
    said = _problems(done.stdout + done.stderr, cases)
    assert done.returncode == 1 and said
    return said


def _problems(output: str, cases: Path) -> list[str]:
    """The lines ``PATH:LINE: field: message`` of an output."""
    return [line for line in output.splitlines() if re.match(rf"{re.escape(str(cases))}:\d+: ", line)]


def test_a_broken_line_after_the_first_fails_the_run_and_writes_nothing(tmp_path: Path, detector: Detector) -> None:
    """The preflight went out while the rest was read, or was cancelled on its way: one request at most."""
    lines = _lines(tmp_path, 30)
    lines[20] = b'{"id": "FCB-9000", "question": 7}\n'
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b"".join(lines))
    out = tmp_path / "run"
    done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(out), "-q")
    assert done.returncode == 1
    assert detector.questions in ([], [orjson.loads(lines[0])["question"]])
    assert ("the first case had gone out as the preflight, or was on its way, while the rest of the file was read; "
            "its answer was dropped and nothing was written (use --skip-invalid") in done.stderr  # fmt: skip
    assert _problems(done.stderr, cases) == _validate_lines(cases)
    assert f"{cases}:21: question:" in done.stderr  # named: file, line, field
    assert not out.exists()


def test_a_duplicate_id_is_said_as_a_whole_reading_says_it(tmp_path: Path, detector: Detector) -> None:
    """Line 26 repeats line 4, found while the preflight is out: the error names line 26 and its first line 4, as
    ``fcb validate`` does; an --out folder that was there before stays as it was, with its other files."""
    lines = _lines(tmp_path, 30)
    lines[25] = lines[3]
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b"".join(lines))
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(out), "-q")
    assert done.returncode == 1
    case_id = orjson.loads(lines[3])["id"]
    assert f"{cases}:26: id: duplicate id {case_id} (first on line 4)" in done.stderr
    assert _problems(done.stderr, cases) == _validate_lines(cases)
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_a_run_that_reads_while_its_preflight_is_out_counts_as_one_that_read_first(
    tmp_path: Path, detector: Detector
) -> None:
    """The same cases, with the preflight sent early and without a preflight (the file read whole first): the same
    journal and figures; the early run asks the file's first case, then the others in the send order of seed 0,
    worked out here by hand."""
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    runs = {}
    for name, extra in (("early", []), ("whole", ["--no-preflight"])):
        detector.questions.clear()
        done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(tmp_path / name), "-q",
                       "--concurrency", "1", "--bootstrap", "50", *extra)  # fmt: skip
        assert done.returncode == 0, done.stderr
        metrics = orjson.loads((tmp_path / name / "metrics.json").read_bytes())["metrics"]
        metrics.pop("operational")
        journal = [
            {k: v for k, v in r.items() if k != "latency_s"} for r in read_jsonl(tmp_path / name / "predictions.jsonl")
        ]
        runs[name] = (sorted(detector.questions), metrics, journal)
        if name == "early":
            parsed = [orjson.loads(line) for line in cases.read_bytes().splitlines()]
            order = list(range(1, 40))
            random.Random("send-order:0").shuffle(order)
            assert detector.questions == [parsed[0]["question"], *(parsed[i]["question"] for i in order)]
    assert runs["early"] == runs["whole"]


def test_a_broken_first_line_fails_the_run_before_any_request(tmp_path: Path, detector: Detector) -> None:
    """And the whole file is still read: a later broken line is listed too."""
    lines = _lines(tmp_path, 5)
    lines[3] = b"[]\n"
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b"{not json\n" + b"".join(lines))
    done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(tmp_path / "run"), "-q")
    assert done.returncode == 1
    assert "no detector was called (use --skip-invalid to run the valid cases)" in done.stderr
    assert detector.questions == []
    said = _problems(done.stderr, cases)
    assert said == _validate_lines(cases) and [line.split(":")[1] for line in said] == ["1", "5"]


def test_a_shard_s_preflight_is_its_own_first_case(tmp_path: Path, detector: Detector) -> None:
    """The shard (of two) that the file's first case is not in, and that case's category (with a subset, every line
    is checked, the other shard's too): the shard's own first case of the category goes first (worked out here from
    the ids' sha256), and no other case is ever sent."""
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    parsed = [orjson.loads(line) for line in cases.read_bytes().splitlines()]

    def shard(case: dict[str, Any]) -> int:
        return int(hashlib.sha256(case["id"].encode()).hexdigest()[:12], 16) % 2 + 1

    other, category = 3 - shard(parsed[0]), parsed[0]["category"]
    mine = [c for c in parsed if shard(c) == other and c["category"] == category]
    assert mine
    done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(tmp_path / "run"), "-q",
                   "--shard", f"{other}/2", "--category", category)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert detector.questions[0] == mine[0]["question"]
    assert sorted(detector.questions) == sorted(c["question"] for c in mine)


@pytest.mark.parametrize(
    ("spec", "extra", "early"),
    [
        ("http://127.0.0.1:1/v1/consensus", {}, True),
        ("llm:some-model@http://127.0.0.1:1/v1", {}, True),
        ("http://127.0.0.1:1/v1/consensus", {"preflight": False}, False),
        ("http://127.0.0.1:1/v1/consensus", {"resume": True}, False),
        ("builtin:heuristic", {}, False),
        ("detectors.py:assess", {}, False),
    ],
)
def test_only_a_new_run_s_preflight_to_a_detector_that_sends_requests_goes_early(
    spec: str, extra: dict[str, bool], early: bool
) -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=parse_spec(spec), **extra)
    assert asks_first_early(settings) is early


def test_a_refusal_after_an_early_preflight_says_so_and_leaves_nothing_running(tmp_path: Path) -> None:
    """The detector holds the preflight's request until the test lets it go, so the broken line is certainly found
    while the request is out: the refusal counts it (``asked`` 1) and the run ends with no task of its left (the
    request cancelled). A detector asked once the whole file is read is refused with ``asked`` 0."""
    release = threading.Event()
    lines = _lines(tmp_path, 3)
    lines[2] = b"[]\n"
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b"".join(lines))

    async def refused(spec: str) -> tuple[int, list[asyncio.Task[Any]]]:
        settings = EvalSettings(cases=str(cases), detector=parse_spec(spec), progress=False, n_boot=0,
                                out=str(tmp_path / "run"))  # fmt: skip
        with pytest.raises(InvalidCasesError) as err:
            await run(settings)
        return err.value.asked, [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]

    with serving(on_first=lambda: release.wait(HANG_S)) as held:
        try:
            asked, left = asyncio.run(refused(held.url))
        finally:
            release.set()
    assert (asked, left) == (1, [])
    assert asyncio.run(refused("builtin:heuristic"))[0] == 0
    assert not (tmp_path / "run").exists()


def test_a_run_cancelled_while_it_reads_its_file_ends_cancelled(tmp_path: Path, detector: Detector) -> None:
    """The file is a pipe of which only the first line has come: the preflight is out, the thread waits on the
    pipe, and the run is cancelled. It ends as cancelled, not with the error of closing a file still being read."""
    lines = _lines(tmp_path, 5)
    read_end, write_end = os.pipe()
    os.write(write_end, lines[0])
    settings = EvalSettings(cases=f"/dev/fd/{read_end}", detector=parse_spec(detector.url), progress=False,
                            out=str(tmp_path / "run"), n_boot=0)  # fmt: skip

    async def cancel_once_asked() -> None:
        task = asyncio.ensure_future(run(settings))
        try:
            assert await asyncio.to_thread(detector.first.wait, HANG_S)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
        finally:
            os.close(write_end)  # the thread reading the pipe sees its end and stops

    try:
        asyncio.run(cancel_once_asked())
    finally:
        os.close(read_end)
    assert not (tmp_path / "run").exists()


def test_skipping_invalid_lines_asks_each_valid_case_once(tmp_path: Path, detector: Detector) -> None:
    lines = _lines(tmp_path, 12)
    broken = [*lines[:1], b"{not json\n", *lines[1:6], b"[]\n", *lines[6:]]
    cases = tmp_path / "cases.jsonl"
    cases.write_bytes(b"".join(broken))
    out = tmp_path / "run"
    done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(out), "-q", "--skip-invalid")
    assert done.returncode == 0, done.stderr
    questions = [orjson.loads(line)["question"] for line in lines]
    assert detector.questions[0] == questions[0] and sorted(detector.questions) == sorted(questions)
    assert len(read_jsonl(out / "predictions.jsonl")) == 12


def test_the_preflight_is_the_first_case_the_run_counts(tmp_path: Path, detector: Detector) -> None:
    """With --category, the first case of that category (not the file's first) is asked first, and only the cases of
    the category are asked, each once."""
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    parsed = [orjson.loads(line) for line in cases.read_bytes().splitlines()]
    category = parsed[-1]["category"]
    chosen = [c["question"] for c in parsed if c["category"] == category]
    assert parsed[0]["category"] != category or len(chosen) < 40
    done = run_cli("eval", str(cases), "-d", detector.url, "--out", str(tmp_path / "run"), "-q",
                   "--category", category)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert detector.questions[0] == chosen[0] and sorted(detector.questions) == sorted(chosen)
