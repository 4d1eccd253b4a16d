"""``make bench`` section ``limits``: runs against the stand-in provider (tests/servers/limited_server.py) that allows
600 requests a minute, with a 20-second minute so that the 1,000 cases' ideal is 33 s, not 100.

- no ``--rpm``, Retry-After sent and not sent: every case answered? the wall time against the ideal; the share of
  requests answered 429 after the first 10% of the run;
- ``--rpm`` at the provider's limit: 429s at all?
- ``--max-cost`` on an ``llm:`` detector: where the run stopped against the cap and one request's cost; a resume with
  a higher cap against an uncapped run (the same figures?).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from fcb_datasets.synthetic import write_cases

ROOT = Path(__file__).resolve().parent.parent
STANDIN = ROOT / "tests" / "servers" / "limited_server.py"

MINUTE_S = 20.0  # the stand-in's minute: 600 a minute is 30 a second here, and the ideal 33 s
RPM = 600
CASES = 1000


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen([sys.executable, str(STANDIN), *args], stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        raise RuntimeError(f"the stand-in did not start: {line!r}")
    return proc, f"http://127.0.0.1:{line.split()[1]}"


def _stats(url: str) -> dict[str, Any]:
    with urlopen(f"{url}/stats", timeout=10) as reply:
        return dict(json.loads(reply.read()))


def _eval(*args: str) -> tuple[int, float, str]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "harness", "eval", "-q", "--bootstrap", "0", *args], cwd=ROOT,
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.returncode, time.perf_counter() - start, done.stderr


def _late_429_share(stats: dict[str, Any]) -> float | None:
    """429s among the requests that arrived after the first tenth of the run."""
    times = stats["answer_times"] + stats["throttle_times"]
    if not times:
        return None
    cut = 0.1 * max(times)
    late_429 = sum(t > cut for t in stats["throttle_times"])
    late = sum(t > cut for t in times)
    return late_429 / late if late else None


def _against_the_limit(tmp: Path, cases: Path, retry_after: str, *flags: str) -> dict[str, Any]:
    burst = str(60 / MINUTE_S)  # a bucket of one real second's allowance, as OpenAI and Anthropic keep
    proc, url = _start("--rpm", str(RPM), "--minute", str(MINUTE_S), "--burst", burst, "--retry-after", retry_after)
    try:
        run = tmp / f"run-{retry_after}-{'-'.join(flags) or 'adaptive'}"
        code, wall_s, _ = _eval(str(cases), "-d", url, "--concurrency", "64", "--out", str(run), *flags)
        ops = json.loads((run / "metrics.json").read_text())["metrics"]["operational"]
        stats = _stats(url)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    ideal = CASES / RPM * MINUTE_S
    return {
        "exit_code": code,
        "errors": ops["errors"],
        "answered": stats["answered"],
        "whole_process_s": round(wall_s, 2),
        "in_run_s": round(ops["wall_s"], 2),
        "ideal_s": round(ideal, 2),
        "whole_over_ideal": round(wall_s / ideal, 3),
        "in_run_over_ideal": round(ops["wall_s"] / ideal, 3),
        "requests_429": stats["throttled"],
        "share_429_after_first_10pct": _late_429_share(stats),
        "busiest_minute": stats["max_answered_per_minute"],
    }


def _cost_runs(tmp: Path) -> dict[str, Any]:
    proc, url = _start("--latency", "0.01")
    try:
        config = tmp / "llm.toml"
        config.write_text(f'model = "m"\nbase_url = "{url}/v1"\nmax_tokens = 20\n'
                          "price_prompt_per_mtok = 1000.0\nprice_completion_per_mtok = 1000.0\n")  # fmt: skip
        cases = write_cases(tmp / "cost-cases.jsonl", 200)
        common = ("--detector-config", str(config), "--concurrency", "16", "--no-cache")
        capped, uncapped = tmp / "capped", tmp / "uncapped"
        cap = 10.0
        code, _, stderr = _eval(str(cases), *common, "--max-cost", str(cap), "--out", str(capped))
        journal = [json.loads(line) for line in (capped / "predictions.jsonl").read_text().splitlines()]
        costs = [(r["response"]["usage"]["prompt_tokens"] + r["response"]["usage"]["completion_tokens"]) / 1000
                 for r in journal]  # fmt: skip
        resumed, _, _ = _eval("--resume", str(capped), "--max-cost", "1000")
        _eval(str(cases), *common, "--out", str(uncapped))
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    def figures(run: Path) -> dict[str, Any]:
        metrics = dict(json.loads((run / "metrics.json").read_text())["metrics"])
        cost = metrics.pop("operational")["tokens"]["cost_usd"]
        return {"figures": metrics, "cost_usd": round(cost, 6)}

    return {
        "cap_usd": cap,
        "exit_code": code,
        "stopped": stderr.strip().splitlines()[-1] if stderr.strip() else "",
        "cases_answered": len(journal),
        "spent_usd": round(sum(costs), 4),
        "largest_request_usd": round(max(costs), 4),
        "under_cap_by_usd": round(cap - sum(costs), 4),
        "resume_exit_code": resumed,
        "resumed_equals_uncapped": figures(capped) == figures(uncapped),
    }


def bench_limits(tmp: Path) -> dict[str, Any]:
    cases = write_cases(tmp / "cases.jsonl", CASES)
    rpm_flag = str(int(RPM * 60 / MINUTE_S))  # the stand-in's 600 a 6-second minute, in requests a real minute
    return {
        "provider": f"{RPM} requests a minute, a minute of {MINUTE_S:g} s, a bucket of one real second's allowance",
        "cases": CASES,
        "no --rpm, Retry-After sent": _against_the_limit(tmp, cases, "seconds"),
        "no --rpm, no Retry-After": _against_the_limit(tmp, cases, "none"),
        f"--rpm {rpm_flag} (the limit)": _against_the_limit(tmp, cases, "seconds", "--rpm", rpm_flag),
        "--max-cost": _cost_runs(tmp),
    }
