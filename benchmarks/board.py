"""``python benchmarks/bench.py board``: ``fcb board`` over 20 runs x 10,000 cases written in a temporary folder.

Prints the page's size, the time to build it (reading and checking the 20 runs, the leaderboard's paired bootstrap,
the items analysis, the case text, the page) and, when Playwright and Chromium are installed, the time until the
page says it is ready (its case table drawn) and the time of a filter in it. Nothing is asserted.
"""

from __future__ import annotations

import random
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from fcb_datasets.synthetic import ORIGIN_TAGS, make_realistic_case

RUNS, CASES = 20, 10_000
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def board_cases(path: Path, n: int = CASES) -> Path:
    """``n`` cases shaped like the real benchmark's (`make_realistic_case`), ids FCB-0000 .. (the schema's four
    digits hold 10,000), each with an origin tag so that the natural-only ranking is computed too."""
    rng = random.Random(21)
    with open(path, "wb") as f:
        for i in range(n):
            case = make_realistic_case(i, rng)
            case["id"] = f"FCB-{i:04d}"
            case["tags"] = [*case["tags"], ORIGIN_TAGS[(i // 8) % len(ORIGIN_TAGS)]]
            f.write(orjson.dumps(case) + b"\n")
    return path


def real_cases(path: Path, n: int = CASES) -> Path | None:
    """``n`` cases of the built benchmark's test split (results/real-benchmark, ``make dataset``), cycled under new
    ids: real text, which compresses as real pages do (gzip's 32 KiB window sees no repeat); None without it."""
    test = Path(__file__).resolve().parent.parent / "results" / "real-benchmark" / "test.jsonl"
    if not test.is_file():
        return None
    base = [orjson.loads(line) for line in test.read_bytes().splitlines()]
    with open(path, "wb") as f:
        for i in range(n):
            f.write(orjson.dumps(dict(base[i % len(base)], id=f"FCB-{i:04d}")) + b"\n")
    return path


def board_runs(tmp: Path, cases: Path, n_runs: int = RUNS) -> Path:
    """``n_runs`` real run folders (``harness.evaluate``) over one cases file: detectors of rising skill, each
    giving a risk_score and a short reason on every case and failing on about one case in 200."""
    import harness
    from harness.types import RISKS

    rows = [orjson.loads(line) for line in cases.read_bytes().splitlines()]
    root = tmp / f"runs-{cases.stem}"
    rng = np.random.default_rng(0)
    for r in range(n_runs):
        skill = 0.3 + 0.03 * r
        replies: dict[str, dict[str, Any] | None] = {}
        for case in rows:
            risk = case["expected_risk"] if rng.random() < skill else RISKS[int(rng.integers(3))]
            replies[case["question"]] = None if rng.random() < 0.005 else {
                "false_consensus_risk": risk, "risk_score": round(float(rng.random()), 3),
                "reason": f"{len(case['answers'])} answers, {int(rng.integers(1, 5))} agree"}  # fmt: skip

        def assess(request: dict[str, Any], replies: dict[str, dict[str, Any] | None] = replies) -> dict[str, Any]:
            reply = replies[request["task"]]
            if reply is None:
                raise RuntimeError("this benchmark detector fails here")
            return reply

        name = f"detector-{r:02d}"
        harness.evaluate(str(cases), assess, name=name, out=str(root / name), n_boot=0, preflight=False,
                         max_consecutive_errors=0, progress=False)  # fmt: skip
    return root


def bench_board(tmp: Path) -> dict[str, Any]:
    """The board of 20 runs x 10,000 synthetic cases of real size; and of 10,000 cases of real text when the built
    benchmark is at hand."""
    result: dict[str, Any] = {"synthetic cases": _one_board(tmp, board_cases(tmp / "synthetic.jsonl"))}
    real = real_cases(tmp / "real.jsonl")
    result["real test split, cycled"] = _one_board(tmp, real) if real else "no results/real-benchmark (make dataset)"
    return result


def _one_board(tmp: Path, cases: Path) -> dict[str, Any]:
    from harness.leaderboard.board import discover
    from harness.leaderboard.board_page import write_board
    from harness.leaderboard.runs import read_run

    start = time.perf_counter()
    root = board_runs(tmp, cases)
    result: dict[str, Any] = {"runs": RUNS, "cases": CASES, "making_runs_s": time.perf_counter() - start}
    result["cases_file_mb"] = cases.stat().st_size / 1e6
    start = time.perf_counter()
    runs = [read_run(p) for p in discover(root)]
    result["read_runs_s"] = time.perf_counter() - start
    out = tmp / f"board-{cases.stem}.html"
    start = time.perf_counter()
    write_board(runs, out, n_boot=1000)
    result["write_board_s"] = time.perf_counter() - start
    result["build_s"] = result["read_runs_s"] + result["write_board_s"]
    result["board_html_mb"] = out.stat().st_size / 1e6
    print(f"{out.name}: {result['board_html_mb']:.1f} MB, built in {result['build_s']:.1f} s")
    result |= _open_in_chromium(out)
    return result


def _open_in_chromium(page_path: Path) -> dict[str, Any]:
    """Seconds from navigation to the page's ready mark (data unpacked, case table drawn), and a filter's time."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"chromium": "playwright is not installed"}
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        return {"chromium": "not installed (make browser)"}
    out: dict[str, Any] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=_FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        start = time.perf_counter()
        page.goto(page_path.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        out["open_wall_s"] = time.perf_counter() - start
        out["open_in_page_ms"] = float(page.get_attribute("body", "data-ready-ms") or "nan")
        for name, sel, value in [("filter_all_wrong_ms", "#f-set", "allwrong"), ("filter_reset_ms", "#f-set", "")]:
            out[name] = page.evaluate(
                """([sel, value]) => { const el = document.querySelector(sel); el.value = value;
                const t = performance.now(); el.dispatchEvent(new Event('change')); return performance.now() - t; }""",
                [sel, value],
            )
        browser.close()
    print(f"ready in Chromium after {out['open_wall_s']:.1f} s")
    return out
