"""Plain functions on a bounded thread pool, detector classes with batches, and the engines (local, processes,
Ray): the same results under each, and a worker killed mid-run loses no case."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, read_jsonl, run_cli

from fcb_datasets.synthetic import write_realistic_cases

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

DETECTORS = Path(__file__).resolve().parents[1] / "data" / "detectors" / "scale.py"
RISKS = ("low", "medium", "high")
HAS_RAY = importlib.util.find_spec("ray") is not None


def expected(case: dict) -> tuple[str, float]:
    """The rule of scale.py, computed here from the case itself."""
    texts = [a["text"] for a in case["answers"]]
    return RISKS[(len(texts) + len(set(texts))) % 3], round(len(set(texts)) / len(texts), 6)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, dict[str, dict]]:
    """40 realistic cases, a fresh copy of the test detectors, and the cases by id."""
    cases = write_realistic_cases(tmp_path / "cases.jsonl", 40, seed=3)
    detectors = tmp_path / "det" / "scale.py"
    detectors.parent.mkdir()
    shutil.copy(DETECTORS, detectors)
    return cases, detectors, {c["id"]: c for c in read_jsonl(cases)}


def _eval(cases: Path, spec: str, out: Path, *args: str, timeout: float = 120) -> list[dict]:
    proc = run_cli("eval", str(cases), "-d", spec, "-q", "--bootstrap", "50", "--out", str(out), *args, timeout=timeout)
    assert proc.returncode == 0, proc.stderr
    return read_jsonl(out / "predictions.jsonl")


def _results(journal: list[dict]) -> dict[str, tuple]:
    return {r["id"]: (r["risk"], r["score"], r["error"] and r["error"]["kind"]) for r in journal}


def _scored(run: Path) -> dict:
    metrics = json.loads((run / "metrics.json").read_text())["metrics"]
    metrics.pop("operational")  # times differ; everything else must not
    return metrics


def test_a_hung_plain_call_times_out_alone_and_does_not_hold_the_exit(setup, tmp_path: Path) -> None:
    cases, detectors, by_id = setup
    # one thread only: unless the stuck thread is replaced, every case after the hung one would time out too
    journal = _eval(cases, f"{detectors}:hangs_on_order_3", tmp_path / "run", "--concurrency", "1", "--timeout", "1")
    # the process ended without waiting for the hung call (60 s, within _eval's 120 s): it never came back
    assert not (detectors.parent / "hung_call_returned").exists()
    kinds = Counter(r["error"] and r["error"]["kind"] for r in journal)
    assert kinds == {None: 39, "timeout": 1}
    (hung,) = [r["id"] for r in journal if r["error"]]
    assert "(order 3)" in by_id[hung]["question"]


def test_a_batch_detector_is_set_up_once_and_gets_full_batches(setup, tmp_path: Path) -> None:
    cases, detectors, by_id = setup
    journal = _eval(cases, f"{detectors}:Batched", tmp_path / "run", "--batch-size", "4")
    assert {r["id"]: (r["risk"], r["score"]) for r in journal} == {i: expected(c) for i, c in by_id.items()}
    assert len((detectors.parent / "setups.log").read_text().split()) == 1  # the model is loaded once
    sizes = [int(n) for n in (detectors.parent / "batches.log").read_text().split()]
    assert sum(sizes) == 40 and max(sizes) == 4
    assert sizes.count(4) >= 8  # the preflight's case goes alone; the rest fill their batches


def test_a_batch_that_fails_fails_each_of_its_cases(setup, tmp_path: Path) -> None:
    cases, detectors, by_id = setup
    journal = _eval(cases, f"{detectors}:BatchFailures", tmp_path / "run", "--batch-size", "4")
    order = {i: int(c["question"].split("(order ")[1].split(")")[0]) for i, c in by_id.items()}
    errors = {order[r["id"]]: r["error"] for r in journal if r["error"]}
    assert errors[5]["kind"] == "detector_exception" and "ran out of memory" in errors[5]["message"]
    assert "RuntimeError" in errors[5]["traceback"]
    # every case of the batch that held order 5 fails with it, and every case of the one that held order 9; no other
    batches = [[int(o) for o in line.split()] for line in (detectors.parent / "failures.log").read_text().splitlines()]
    size = next(len(b) for b in batches if 9 in b)  # 4, or fewer for the last batch of the send order
    assert errors[9]["kind"] == "invalid_response"
    assert f"{size - 1} replies for {size} requests" in errors[9]["message"]
    raised = {o for b in batches if 5 in b for o in b}
    short = {o for b in batches if 9 in b and 5 not in b for o in b}
    assert {o: e["kind"] for o, e in errors.items()} == {
        **{o: "detector_exception" for o in raised},
        **{o: "invalid_response" for o in short},
    }
    for r in journal:
        if not r["error"]:
            assert (r["risk"], r["score"]) == expected(by_id[r["id"]])


ENGINES = [("processes", "--workers", "2")]
if HAS_RAY:
    ENGINES.append(("ray", "--workers", "2"))


@pytest.mark.parametrize("engine", ENGINES, ids=[e[0] for e in ENGINES])
def test_an_engine_gives_the_local_results_and_a_killed_worker_loses_no_case(engine, setup, tmp_path: Path) -> None:
    cases, detectors, by_id = setup
    local = _eval(cases, f"{detectors}:plain", tmp_path / "local")
    assert _results(local) == {i: (*expected(c), None) for i, c in by_id.items()}

    remote = _eval(cases, f"{detectors}:plain", tmp_path / "remote", "--engine", *engine)
    assert _results(remote) == _results(local) and len(remote) == 40
    assert _scored(tmp_path / "remote") == _scored(tmp_path / "local")

    # a worker kills itself (SIGKILL) in the middle of a batch: its cases go to another worker, each journaled once
    killed = _eval(cases, f"{detectors}:Killer", tmp_path / "killed", "--engine", *engine)
    assert (detectors.parent / "killed.marker").exists()
    assert Counter(r["id"] for r in killed) == Counter(list(by_id))
    assert _results(killed) == _results(local)
    assert _scored(tmp_path / "killed") == _scored(tmp_path / "local")


def test_an_http_detector_is_refused_by_the_worker_engines(setup, tmp_path: Path) -> None:
    cases, _, _ = setup
    proc = run_cli(
        "eval", str(cases), "-d", "http://127.0.0.1:9", "--engine", "processes", "--out", str(tmp_path / "r")
    )
    assert proc.returncode == 2
    assert "runs Python detectors" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("engine", ENGINES, ids=[e[0] for e in ENGINES])
def test_a_reply_in_the_detectors_own_classes_crosses_to_the_driver_as_plain_data(engine, setup, tmp_path) -> None:
    cases, detectors, by_id = setup
    remote = _eval(cases, f"{detectors}:typed", tmp_path / "remote", "--engine", *engine)
    # the driver never imported the detector's file: its enum and dataclass arrive as the JSON a local run writes
    assert {r["id"]: (r["risk"], r["score"], r["error"], r["response"]) for r in remote} == {
        i: (*expected(c), None, {"why": {"answers": len(c["answers"]), "source": "rule"}}) for i, c in by_id.items()
    }
    local = _eval(cases, f"{detectors}:typed", tmp_path / "local")
    assert {r["id"]: r["response"] for r in local} == {r["id"]: r["response"] for r in remote}
    assert _scored(tmp_path / "remote") == _scored(tmp_path / "local")


@pytest.mark.parametrize("engine", ENGINES, ids=[e[0] for e in ENGINES])
def test_a_case_that_crashes_its_worker_fails_alone(engine, setup, tmp_path: Path) -> None:
    cases, detectors, by_id = setup
    order = {i: int(c["question"].split("(order ")[1].split(")")[0]) for i, c in by_id.items()}
    crashers = {i for i, o in order.items() if o in (7, 23)}  # scale.CRASHES_ON: os._exit and a segfault
    assert len(crashers) == 2
    # no preflight: a crashing first case would stop the run, which is right, but not what this test is about
    journal = _eval(cases, f"{detectors}:crashes", tmp_path / "run", "--engine", *engine, "--no-preflight")
    assert Counter(r["id"] for r in journal) == Counter(list(by_id))
    assert {r["id"] for r in journal if r["error"]} == crashers  # the batches in flight with them are asked again
    assert {r["error"]["kind"] for r in journal if r["error"]} == {"detector_exception"}
    assert all("worker died" in r["error"]["message"] for r in journal if r["error"])
    for r in journal:
        if not r["error"]:
            assert (r["risk"], r["score"]) == expected(by_id[r["id"]])


def _gone(pid: int) -> bool:
    """The process has ended (a zombie that nobody has reaped yet has ended too)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "State:\tZ" in status


def _wait_until(condition, what: str, limit_s: float = 60) -> None:
    """Waits for ``condition()``; a failure naming ``what`` after ``limit_s`` (a bound, not a measured time)."""
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"still waiting for {what} after {limit_s} s"
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads process states from /proc")
def test_worker_processes_leave_when_the_driver_is_killed(setup, tmp_path: Path) -> None:
    cases, detectors, _ = setup
    spec = f"{detectors}:busy_forever"
    args = [sys.executable, "-m", "harness", "eval", str(cases), "-d", spec, "--engine", "processes", "--workers", "2",
            "--no-preflight", "--timeout", "600", "-q", "--out", str(tmp_path / "run")]  # fmt: skip
    driver = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def busy() -> set[int]:
        return {int(f.name.split(".")[1]) for f in detectors.parent.glob("busy.*")}

    try:
        _wait_until(lambda: len(busy()) == 2, "both workers to be inside a call")
        workers = busy()
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
        # each is inside a ten-minute call, so it cannot see its pipe close: it must notice that its parent is gone
        _wait_until(lambda: all(_gone(pid) for pid in workers), "the workers to leave")
    finally:
        for pid in busy():
            if not _gone(pid):
                os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()


def test_a_worker_process_holding_a_call_stuck_past_its_timeout_is_replaced(setup) -> None:
    import asyncio

    from harness.detectors.options import DetectorOptions
    from harness.run.engines import ProcessEngine
    from harness.types import DetectorError

    _, detectors, _ = setup
    answers = [{"agent_id": "a", "text": "x"}]

    async def main() -> tuple[list, list, int]:
        engine = ProcessEngine(f"{detectors}:spins_when_stuck", DetectorOptions(timeout=0.5), workers=1)
        try:
            first = await asyncio.gather(
                *(engine.assess({"task": t, "answers": answers}) for t in ("stuck", "a", "b")), return_exceptions=True
            )
            then = await asyncio.gather(*(engine.assess({"task": t, "answers": answers}) for t in ("c", "d")))
            return first, then, getattr(engine, "retired", 0)
        finally:
            await engine.aclose()

    first, then, retired = asyncio.run(main())
    assert isinstance(first[0], DetectorError) and first[0].kind == "timeout"
    stuck_pid = first[1].extra["pid"]
    assert first[2].extra["pid"] == stuck_pid  # one worker: the same process answered the stuck call's batch
    # its stuck thread cannot be stopped and would slow every later call: a fresh process answers the next batch
    assert {p.extra["pid"] for p in then} != {stuck_pid} and retired == 1
    assert _gone(stuck_pid)


@pytest.mark.parametrize(
    "result",
    [("ok", "severe", None, {}, 1), ("ok", "low", 1.5, {}, 1), ("ok", "low", True, {}, 1), ("ok", "low", None, [], 1)],
    ids=["risk", "score-range", "score-bool", "extra"],
)
def test_the_driver_checks_a_workers_result_like_any_reply(result: tuple) -> None:
    from harness.run.engines import _unwire
    from harness.types import DetectorError

    with pytest.raises(DetectorError) as raised:
        _unwire(result, [])
    assert raised.value.kind == "invalid_response"
