"""``make bench``: the harness's own cost, measured and printed, and written to results/bench/*.json.

Nothing here is asserted; tests never look at times. Every server runs on 127.0.0.1 and stops by itself.
Sections: overhead, realistic, startup, http, memory, replies, leaderboard, profile, report, scale, limits,
throughput, board
(``python benchmarks/bench.py [SECTION ...]``).
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import pstats
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "bench"
PY = sys.executable
sys.path.insert(0, str(ROOT))

from board import bench_board  # noqa: E402  (benchmarks/board.py: fcb board over 20 runs x 10,000 cases)
from limits import bench_limits  # noqa: E402  (benchmarks/limits.py: runs against a rate-limited stand-in)
from throughput import SERVER, bench_items, bench_throughput, free_port  # noqa: E402  (benchmarks/throughput.py: the 50 ms server)

from fcb_datasets.synthetic import make_case, write_cases, write_realistic_cases  # noqa: E402


def fcb(*args: str) -> list[str]:
    return [PY, "-m", "harness", *args]


def wall(cmd: list[str], repeat: int = 1) -> float:
    """Best whole-process wall time of ``repeat`` runs."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


_PEAK = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def peak_rss_mb(cmd: list[str]) -> float:
    """Peak resident memory of a command, read by a fresh parent process (so no other child is counted)."""
    proc = subprocess.run([PY, "-c", _PEAK, *cmd], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(proc.stdout.strip()) / 1024


def run_metrics(run: Path) -> dict[str, Any]:
    return json.loads((run / "metrics.json").read_text())["metrics"]


def parse_floor(path: Path) -> float:
    """Cases per second of a loop that only parses the lines with orjson: the floor for any harness."""
    start = time.perf_counter()
    with open(path, "rb") as f:
        n = sum(1 for line in f if orjson.loads(line))
    return n / (time.perf_counter() - start)


def _in_process_seconds(cases: Path, run_dir: Path) -> float:
    """Wall time of one whole evaluation inside this process (imports already paid), best of three."""
    from harness.run.runner import run
    from harness.run.settings import EvalSettings
    from harness.spec import parse_spec

    best = float("inf")
    for _ in range(3):
        shutil.rmtree(run_dir, ignore_errors=True)
        start = time.perf_counter()
        asyncio.run(run(EvalSettings(cases=str(cases), detector=parse_spec("builtin:always-low"), out=str(run_dir))))
        best = min(best, time.perf_counter() - start)
    return best


def bench_overhead(tmp: Path) -> dict[str, Any]:
    out = {}
    for n in (1000, 9999):  # the schema's ids allow at most 9,999 cases in a file
        cases = write_cases(tmp / f"cases-{n}.jsonl", n, seed=n)
        run = tmp / f"overhead-{n}"
        whole = wall(fcb("eval", str(cases), "-d", "builtin:always-low", "-q", "--out", str(run)))
        detector_loop = run_metrics(run)["operational"]["cases_per_s"]
        in_process = n / _in_process_seconds(cases, run)  # validate, strip, call, journal, metrics, reports
        floor = parse_floor(cases)
        out[str(n)] = {
            "end_to_end_in_process_cases_per_s": in_process,
            "detector_loop_cases_per_s": detector_loop,
            "whole_process_s": whole,
            "whole_process_cases_per_s": n / whole,
            "parse_floor_cases_per_s": floor,
            "ratio_floor_to_end_to_end": floor / in_process,
        }
        shutil.rmtree(run)
    return out


def bench_startup(tmp: Path) -> dict[str, Any]:
    cases = write_cases(tmp / "startup.jsonl", 9999, seed=1)
    return {
        "fcb --help": wall(fcb("--help"), 5),
        "fcb validate 10k": wall(fcb("validate", str(cases)), 3),
        "fcb eval --limit 1": wall(fcb("eval", str(cases), "--limit", "1", "-q", "--results", str(tmp / "s")), 3),
    }


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _sequential(url: str, n: int) -> float:
    import httpx  # the loop a user would write by hand

    body = make_case(0, __import__("random").Random(0))
    request = {
        "task": body["question"],
        "answers": [{"agent_id": a["agent_id"], "text": a["text"]} for a in body["answers"]],
    }
    with httpx.Client(timeout=10) as client:
        start = time.perf_counter()
        for _ in range(n):
            client.post(url, json=request).raise_for_status()
    return n / (time.perf_counter() - start)


def bench_http(tmp: Path, latency: float = 0.05) -> dict[str, Any]:
    port = free_port()
    server = subprocess.Popen([PY, "-c", SERVER, str(port), str(latency)])
    url = f"http://127.0.0.1:{port}/v1/consensus"
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        out: dict[str, Any] = {"latency_s": latency, "sequential_loop_cases_per_s": _sequential(url, 40)}
        for conc in (1, 8, 64, 256):
            n = min(9999, max(100, conc * 40))  # about 40 rounds: the preflight's lone first case is one round in 41
            cases = write_realistic_cases(tmp / f"http-{conc}.jsonl", n, seed=conc)
            cpu0 = _cpu_s(server.pid)
            run = tmp / f"http-{conc}"
            subprocess.run(
                fcb(
                    "eval",
                    str(cases),
                    "-d",
                    url,
                    "--concurrency",
                    str(conc),
                    "-q",
                    "--out",
                    str(run),
                    "--bootstrap",
                    "0",
                ),
                cwd=ROOT,
                check=True,
            )
            ops = run_metrics(run)["operational"]
            ideal = conc / latency
            out[str(conc)] = {
                "cases": n,
                "cases_per_s": ops["cases_per_s"],
                "ideal_cases_per_s": ideal,
                "ratio_to_ideal": ops["cases_per_s"] / ideal,
                "errors": ops["errors"],
                "server_cpu_s": _cpu_s(server.pid) - cpu0,
                "wall_s": ops["wall_s"],
            }
        return out
    finally:
        server.terminate()
        server.wait(timeout=10)


def _largest_cases(path: Path, n: int) -> Path:
    """Cases as large as the schema allows: 16 answers of 16,000 characters (and 20 evidence passages)."""
    import random

    rng = random.Random(3)
    with open(path, "wb") as f:
        for i in range(n):
            case = make_case(i, rng)
            case["answers"] = [
                dict(case["answers"][0], agent_id=f"agent-{k}", text=("x" * 15990) + f" {k}") for k in range(16)
            ]
            for a in case["answers"]:
                a["correct"] = False
            case.update(
                category="numeric_consensus_error",
                expected_risk="high",
                majority_correct=False,
                evidence=["e" * 4000] * 20,
            )
            f.write(orjson.dumps(case) + b"\n")
    return path


def bench_memory(tmp: Path) -> dict[str, Any]:
    out = {}
    for n in (1000, 9999):
        cases = write_cases(tmp / f"mem-{n}.jsonl", n, seed=n)
        out[str(n)] = peak_rss_mb(
            fcb("eval", str(cases), "-d", "builtin:always-low", "-q", "--results", str(tmp / "m"))
        )
    out["growth_kb_per_case"] = (out["9999"] - out["1000"]) * 1024 / 8999
    big = _largest_cases(tmp / "largest.jsonl", 200)
    out["largest_cases_200"] = peak_rss_mb(
        fcb("eval", str(big), "-d", "builtin:always-low", "-q", "--results", str(tmp / "m"))
    )
    out["largest_file_mb"] = big.stat().st_size / 1e6
    return out


_PEAK_ANY_EXIT = (
    "import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
    "stderr=subprocess.DEVNULL); print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)
DETECTOR_SERVER = ROOT / "tests" / "servers" / "detector_server.py"


def bench_replies(tmp: Path, n_cases: int = 256) -> dict[str, Any]:
    """Peak memory of ``fcb eval`` against a detector whose every reply is an endless chunked body: each reply is
    refused at the 4 MiB cap, so every case errors; what is measured is the memory that costs (issue 15, item 10)."""
    server = subprocess.Popen(
        [PY, str(DETECTOR_SERVER), "--fault-rate", "1", "--faults", "endless", "--fault-every-attempt"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{server.stdout.readline().split()[1]}"  # type: ignore[union-attr]
        cases = write_cases(tmp / "replies.jsonl", n_cases, seed=5)
        out: dict[str, Any] = {"cases": n_cases, "reply": "endless chunked body, refused at the 4 MiB cap"}
        for conc in (4, 64):
            cmd = fcb(
                "eval", str(cases), "-d", url, "--concurrency", str(conc), "--retries", "0", "--no-preflight",
                "--max-consecutive-errors", "0", "--bootstrap", "0", "-q", "--out", str(tmp / f"replies-{conc}"),
            )  # fmt: skip
            start = time.perf_counter()
            proc = subprocess.run([PY, "-c", _PEAK_ANY_EXIT, *cmd], cwd=ROOT, capture_output=True, text=True)
            code, peak_kb = proc.stdout.split()
            out[f"concurrency_{conc}"] = {
                "peak_rss_mb": int(peak_kb) / 1024,
                "exit_code": int(code),  # 1: every case errored, as it must
                "errors": run_metrics(tmp / f"replies-{conc}")["operational"]["errors"],
                "wall_s": time.perf_counter() - start,
            }
        return out
    finally:
        server.terminate()
        server.wait(timeout=10)


def _synthetic_runs(tmp: Path, n_runs: int = 200, n_cases: int = 9999) -> Path:
    """200 run folders of 10k cases (20 detectors x 10 runs), written directly: what eval would leave."""
    import numpy as np

    from harness.cases.reader import scan
    from harness.figures import compute
    from harness.report.text import write_reports
    from harness.runfolder.journal import record
    from harness.types import RISKS, Prediction

    cases = write_cases(tmp / "lb-cases.jsonl", n_cases, seed=5)
    scanned = scan(cases)
    root = tmp / "runs"
    rng = np.random.default_rng(0)
    for r in range(n_runs):
        run = root / f"run-{r:03d}"
        run.mkdir(parents=True)
        skill = 0.3 + 0.03 * (r % 20)
        lines, outcomes = [], {}
        from harness.runfolder.journal import outcome_of

        for lab in scanned.labels:
            risk = lab.expected_risk if rng.random() < skill else RISKS[int(rng.integers(3))]
            rec = record(lab, Prediction(risk, float(rng.random())), None, 1, 0.001)
            lines.append(orjson.dumps(rec))
            outcomes[lab.case_id] = outcome_of(rec)
        (run / "predictions.jsonl").write_bytes(b"\n".join(lines) + b"\n")
        metrics = compute(scanned.labels, outcomes, wall_s=1.0, n_boot=0)
        write_reports(
            run,
            {
                "metrics_version": 1,
                "harness_version": "bench",
                "created": f"2026-11-30T00:{r % 60:02d}:00",
                "complete": True,
                "dataset": {
                    "path": str(cases),
                    "name": cases.name,
                    "sha256": scanned.sha256,
                    "cases": n_cases,
                    "lines": n_cases,
                    "skipped_invalid": 0,
                    "problems": [],
                },
                "detector": {"spec": f"detector-{r % 20:02d}", "name": ""},
                "settings": {},
                "metrics": metrics,
            },
        )
    return root


def bench_leaderboard(tmp: Path) -> dict[str, Any]:
    start = time.perf_counter()
    root = _synthetic_runs(tmp)
    made = time.perf_counter() - start
    return {
        "runs": 200,
        "cases_per_run": 9999,
        "making_runs_s": made,
        "fcb leaderboard (md)": wall(fcb("leaderboard", str(root)), 1),
        "fcb compare": wall(fcb("compare", str(root / "run-000"), str(root / "run-019"), "--format", "json"), 1),
    }


def bench_profile(tmp: Path) -> dict[str, Any]:
    """Where an in-process run of 10k cases spends its time, by stage."""
    from harness.run.runner import run
    from harness.run.settings import EvalSettings
    from harness.spec import parse_spec

    cases = write_cases(tmp / "profile.jsonl", 9999, seed=9)
    settings = EvalSettings(cases=str(cases), detector=parse_spec("builtin:always-low"), out=str(tmp / "profiled"))
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(run(settings))
    profiler.disable()
    stats = pstats.Stats(profiler)
    stages = {
        "read + validate (cases.reader.scan)": ("harness/cases/reader.py", "scan"),
        "read back from the spool (Scan.case)": ("harness/cases/reader.py", "case"),
        "strip labels (request.build_request)": ("harness/cases/request.py", "build_request"),
        "call the detector": ("harness/run/runner.py", "_assess"),
        "journal (JournalWriter.write)": ("harness/runfolder/journal.py", "write"),
        "journal in file order (journal.in_file_order)": ("harness/runfolder/journal.py", "in_file_order"),
        "metrics (figures.compute)": ("harness/figures.py", "compute"),
        "reports (report.text.write_reports)": ("harness/report/text.py", "write_reports"),
    }
    total = sum(v[3] for k, v in stats.stats.items() if k[2] == "run" and k[0].endswith("harness/run/runner.py"))
    out: dict[str, Any] = {"run_total_s": total}
    for label, (file, fn) in stages.items():
        out[label] = sum(v[3] for k, v in stats.stats.items() if k[0].endswith(file) and k[2] == fn)
    return out


def _realistic_cases(path: Path, n: int) -> Path:
    """``n`` cases of real size: the embedded set's 240 cases repeated under new ids (1.7 KB a case on average)."""
    from harness.cases.reader import embedded_cases_path

    base = [orjson.loads(line) for line in embedded_cases_path().read_bytes().splitlines()]
    with open(path, "wb") as f:
        for i in range(n):
            case = dict(base[i % len(base)], id=f"FCB-{i:04d}")  # the schema allows FCB-0000 .. FCB-9999
            f.write(orjson.dumps(case) + b"\n")
    return path


_CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]

# run in the page: the explorer's filters are synchronous, so the time from the change event to its return is the
# whole filter and redraw
_TIME_FILTER = """([sel, value]) => {
  const el = document.querySelector(sel); el.value = value;
  const t = performance.now(); el.dispatchEvent(new Event('change')); const ms = performance.now() - t;
  return [ms, document.querySelector('#count').textContent];
}"""


def bench_report(tmp: Path, n_cases: int = 10_000) -> dict[str, Any]:
    """report.html for a run of 10,000 real-size cases: its size, the time to write it, and in Chromium the time to
    open it (load, unpack, first draw) and to filter it."""
    from playwright.sync_api import sync_playwright

    from harness.report.html import write_html
    from harness.run.runner import run
    from harness.run.settings import EvalSettings
    from harness.spec import parse_spec

    cases = _realistic_cases(tmp / "cases.jsonl", n_cases)
    out = tmp / "run"
    asyncio.run(run(EvalSettings(cases=str(cases), detector=parse_spec("builtin:heuristic"), out=str(out), n_boot=200)))
    start = time.perf_counter()
    page_path = write_html(out)
    write_s = time.perf_counter() - start
    result: dict[str, Any] = {
        "cases": n_cases,
        "cases_file_mb": cases.stat().st_size / 1e6,
        "report_html_mb": page_path.stat().st_size / 1e6,
        "write_report_html_s": write_s,
    }
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        result["chromium"] = "not installed (make browser)"
        return result
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=_CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=60_000)
        result["open_wall_s"] = time.perf_counter() - start
        result["open_in_page_ms"] = float(page.get_attribute("body", "data-ready-ms") or "nan")
        for name, sel, value in [
            ("filter_category_ms", "#f-cat", "echo_cascade"),
            ("filter_wrong_ms", "#f-ok-0", "wrong"),
            ("filter_reset_category_ms", "#f-cat", ""),
        ]:
            ms, count = page.evaluate(_TIME_FILTER, [sel, value])
            result[name], result[name.replace("_ms", "_shown")] = ms, count
        start = time.perf_counter()
        page.fill("#f-text", "capital")  # the first free-text search also builds each case's search text
        page.wait_for_function("() => !document.querySelector('#count').textContent.startsWith('10000 ')")
        result["filter_text_first_wall_s"] = time.perf_counter() - start
        start = time.perf_counter()
        page.click("td.cell[data-exp='high'][data-pred='low']")
        result["matrix_cell_click_wall_s"] = time.perf_counter() - start
        browser.close()
    return result


INSTANT = """
def plain(request):
    return {"false_consensus_risk": "low", "risk_score": 0.1}


async def asynchronous(request):
    return {"false_consensus_risk": "low", "risk_score": 0.1}
"""


def _instant(tmp: Path) -> Path:
    path = tmp / "instant.py"
    path.write_text(INSTANT)
    return path


def _eval_run(cases: Path, spec: str, run: Path, *args: str) -> dict[str, Any]:
    """One ``fcb eval``: its whole-process wall time and its in-run rate (cases/s from the run's own clock)."""
    shutil.rmtree(run, ignore_errors=True)
    whole = wall(fcb("eval", str(cases), "-d", spec, "-q", "--out", str(run), *args))
    ops = run_metrics(run)["operational"]
    return {"whole_process_s": whole, "in_run_cases_per_s": ops["cases_per_s"], "errors": ops["errors"]}


def bench_realistic(tmp: Path) -> dict[str, Any]:
    """10,000 cases shaped like real ones (about 890 bytes, 3-6 answers): the harness's own cost, whole process."""
    cases = write_realistic_cases(tmp / "realistic.jsonl", 9999, seed=11)
    instant = _instant(tmp)
    out: dict[str, Any] = {"cases": 9999, "mean_case_bytes": cases.stat().st_size / 9999}
    best: dict[str, Any] = {}
    for _ in range(3):  # best of three: the machine is shared
        for name in ("asynchronous", "plain"):
            got = _eval_run(cases, f"{instant}:{name}", tmp / "run")
            if name not in best or got["whole_process_s"] < best[name]["whole_process_s"]:
                best[name] = got
    out["fcb eval, instant async def"] = best["asynchronous"]
    out["fcb eval, instant plain def"] = best["plain"]
    out["plain_over_async_whole_process"] = best["plain"]["whole_process_s"] / best["asynchronous"]["whole_process_s"]
    out["fcb validate"] = wall(fcb("validate", str(cases)), 3)
    shard = [fcb("eval", str(cases), "-d", f"{instant}:asynchronous", "-q", "--shard", "1/16", "--results", str(tmp))]
    out["fcb eval --shard 1/16"] = wall(shard[0], 3)
    return out


def _test_split() -> Path | None:
    """The real-data benchmark's test split (``make dataset``), built here if it is missing and the data is."""
    test = ROOT / "results" / "real-benchmark" / "test.jsonl"
    shared = ROOT.parent / "shared" / "data"
    if not test.exists() and (shared / "gsm8k").exists():
        subprocess.run(
            fcb(
                "build-dataset",
                "--gsm8k",
                str(shared / "gsm8k" / "example_model_solutions.jsonl"),
                "--truthfulqa",
                str(shared / "truthfulqa"),
                "--dylan",
                str(shared / "dylan"),
                "--mmlu-pro",
                str(shared / "mmlu-pro"),
                "--zeroeval",
                str(shared / "zeroeval"),
                "--out",
                str(test.parent),
            ),
            cwd=ROOT,
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return test if test.exists() else None


ENGINES = {"local": (), "processes (2)": ("--engine", "processes", "--workers", "2")}


def bench_scale(tmp: Path) -> dict[str, Any]:
    """builtin:heuristic on the real test split under each engine, each engine's per-case overhead with an instant
    detector, and a plain function against an async one."""
    import importlib.util

    engines = dict(ENGINES)
    if importlib.util.find_spec("ray") is not None:
        engines["ray (2)"] = ("--engine", "ray", "--workers", "2")
    out: dict[str, Any] = {}
    test = _test_split()
    if test is not None:
        heuristic: dict[str, Any] = {"cases": len(test.read_bytes().splitlines())}
        for name, args in engines.items():
            heuristic[name] = _eval_run(test, "builtin:heuristic", tmp / "run", *args)
        local = heuristic["local"]["in_run_cases_per_s"]
        for name in engines:
            heuristic[name]["speed_up_in_run"] = heuristic[name]["in_run_cases_per_s"] / local
        out["builtin:heuristic, real test split"] = heuristic
    cases = write_realistic_cases(tmp / "instant.jsonl", 4000, seed=12)
    instant = _instant(tmp)
    overhead: dict[str, Any] = {}
    for name, args in engines.items():
        got = _eval_run(cases, f"{instant}:asynchronous", tmp / "run", *args)
        got["in_run_us_per_case"] = 1e6 / got["in_run_cases_per_s"]
        overhead[name] = got
    out["instant async detector, 4,000 realistic cases"] = overhead
    big = write_realistic_cases(tmp / "plain.jsonl", 9999, seed=13)
    pair = {name: _eval_run(big, f"{instant}:{name}", tmp / "run") for name in ("asynchronous", "plain")}
    pair["plain_over_async_whole_process"] = pair["plain"]["whole_process_s"] / pair["asynchronous"]["whole_process_s"]
    out["plain versus async def, 10,000 realistic cases"] = pair
    return out


def bench_gate(tmp: Path) -> dict[str, Any]:
    """Issue 30's gate target in full (benchmarks/gate.py: 30 pairs of runs of identical code, at most 3 may fail the
    gate; 5 pairs with a real change, at least 4 must); the test suite runs it with one pair of each."""
    import gate

    result = gate.measure(tmp, pairs=30, change_pairs=5, epochs=5, n_boot=1000, alpha=0.05)
    same, changed = result["same"]["exit_1"], result["changed"]["exit_1"]
    return {
        "identical_pairs_failed": f"{same} of 30 (target: at most 3)",
        "changed_pairs_caught": f"{changed} of 5 (target: at least 4)",
        "meets_target": same <= 3 and changed >= 4,
    }


SECTIONS: dict[str, Callable[[Path], dict[str, Any]]] = {
    "overhead": bench_overhead,
    "realistic": bench_realistic,
    "startup": bench_startup,
    "http": bench_http,
    "memory": bench_memory,
    "replies": bench_replies,
    "leaderboard": bench_leaderboard,
    "profile": bench_profile,
    "report": bench_report,
    "scale": bench_scale,
    "limits": bench_limits,
    "board": bench_board,
    "throughput": bench_throughput,
    "items": bench_items,
    "gate": bench_gate,
}


def main(names: list[str]) -> None:
    unknown = [n for n in names if n not in SECTIONS]
    if unknown:
        print(f"usage: bench.py [SECTION ...]; sections: {', '.join(SECTIONS)} (none: all)", file=sys.stderr)
        raise SystemExit(0 if unknown in (["-h"], ["--help"]) else 2)
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or list(SECTIONS):
        with tempfile.TemporaryDirectory(prefix=f"fcb-bench-{name}-") as tmp:
            start = time.perf_counter()
            result = SECTIONS[name](Path(tmp))
            result["section_s"] = time.perf_counter() - start
        (OUT / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n")
        print(f"== {name}")
        print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
