"""``make bench`` section ``throughput``: ``fcb eval`` as a whole process against the yardstick, a hand-written
aiohttp loop with a semaphore and nothing else, on the same local server (50 ms a reply) and the same 5,000 cases,
at concurrency 16, 64 and 256, side by side in one run. The loop runs in a process of its own and is timed from its
first request to its last reply; ``fcb eval`` is timed whole, start-up, preflight, journal and reports included,
and by its own clock from its first request to its last reply (``run.json``'s session), as the loop is.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fcb_datasets.synthetic import write_realistic_cases

ROOT = Path(__file__).resolve().parent.parent
LATENCY_S = 0.05
CASES = 5000

SERVER = """
import asyncio, sys
from aiohttp import web
async def handle(request):
    await request.read()
    await asyncio.sleep(float(sys.argv[2]))
    return web.json_response({"false_consensus_risk": "low", "risk_score": 0.1})
app = web.Application(); app.router.add_post("/v1/consensus", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=None, access_log=None)
"""

LOOP = """
import asyncio, json, sys, time
import aiohttp
async def main(url, path, concurrency):
    bodies = []
    for line in open(path, "rb"):
        case = json.loads(line)
        request = {"task": case["question"], "answers": [{"agent_id": a["agent_id"], "text": a["text"]}
                                                         for a in case["answers"]]}
        if case.get("evidence"):
            request["evidence"] = case["evidence"]
        bodies.append(json.dumps(request).encode())
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(body):
            async with gate:
                async with session.post(url, data=body, headers={"Content-Type": "application/json"}) as resp:
                    return (await resp.json())["false_consensus_risk"]
        start = time.perf_counter()
        answers = await asyncio.gather(*(one(b) for b in bodies))
        print(json.dumps({"seconds": time.perf_counter() - start, "answers": len(answers)}))
asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(port: int) -> None:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the bench server did not start")


def _fcb(cases: Path, url: str, concurrency: int, out: Path) -> float:
    start = time.perf_counter()
    command = [sys.executable, "-m", "harness", "eval", str(cases), "-d", url, "--concurrency", str(concurrency),
               "-q", "--bootstrap", "0", "--out", str(out)]  # fmt: skip
    subprocess.run(command, cwd=ROOT, check=True)
    return time.perf_counter() - start


def _loop(cases: Path, url: str, concurrency: int) -> float:
    done = subprocess.run([sys.executable, "-c", LOOP, url, str(cases), str(concurrency)], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return float(json.loads(done.stdout)["seconds"])


def bench_throughput(tmp: Path) -> dict[str, Any]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(LATENCY_S)])
    url = f"http://127.0.0.1:{port}/v1/consensus"
    cases = write_realistic_cases(tmp / "cases.jsonl", CASES, seed=5)
    out: dict[str, Any] = {"cases": CASES, "latency_s": LATENCY_S}
    try:
        _wait_for(port)
        for concurrency in (16, 64, 256):
            ideal = concurrency / LATENCY_S
            loop_s = _loop(cases, url, concurrency)
            fcb_s = _fcb(cases, url, concurrency, tmp / f"run-{concurrency}")
            # the run's own clock, from its first request (the preflight) to its last reply: timed as the loop is
            sending_s = json.loads((tmp / f"run-{concurrency}" / "run.json").read_text())["sessions"][0]["wall_s"]
            out[f"c={concurrency}"] = {
                "ideal_cases_per_s": ideal,
                "fcb_eval_whole_process_cases_per_s": round(CASES / fcb_s, 1),
                "aiohttp_loop_cases_per_s": round(CASES / loop_s, 1),
                "fcb_over_loop": round(loop_s / fcb_s, 3),
                "fcb_sending_s": round(sending_s, 3),
                "fcb_sending_over_loop": round(loop_s / sending_s, 3),
                "fcb_outside_sending_s": round(fcb_s - sending_s, 3),  # start-up, validation, metrics, reports
            }
    finally:
        server.terminate()
        server.wait(timeout=10)
    return out


ITEM_CASES = 2000
ITEM_CONCURRENCY = 64


def bench_items(tmp: Path) -> dict[str, Any]:
    """Issue 30's cost target: ``--epochs 3 --probe order,names`` against the 50 ms detector at concurrency 64 must
    keep the requests per second within 10% of a plain run's; issue 47's: ``--probe all`` (the rewriting probes
    build their variants from each answer's final value) adds no more per request than a plain run. Requests a second
    are counted by the run's own clock (``run.json``'s session, first request to last reply) over the journal's
    lines, one per request asked."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(LATENCY_S)])
    url = f"http://127.0.0.1:{port}/v1/consensus"
    cases = write_realistic_cases(tmp / "cases.jsonl", ITEM_CASES, seed=7)
    out: dict[str, Any] = {"cases": ITEM_CASES, "concurrency": ITEM_CONCURRENCY, "latency_s": LATENCY_S,
                           "ideal_requests_per_s": ITEM_CONCURRENCY / LATENCY_S}  # fmt: skip
    try:
        _wait_for(port)
        items = ["--epochs", "3", "--probe", "order,names"]
        for name, extra in (("plain", []), ("epochs 3, probe order,names", items), ("probe all", ["--probe", "all"])):
            run = tmp / name.split(",")[0].replace(" ", "-")
            command = [sys.executable, "-m", "harness", "eval", str(cases), "-d", url, "--concurrency",
                       str(ITEM_CONCURRENCY), "-q", "--bootstrap", "0", "--out", str(run), *extra]  # fmt: skip
            subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            sending_s = json.loads((run / "run.json").read_text())["sessions"][0]["wall_s"]
            requests = sum(1 for _ in (run / "predictions.jsonl").open("rb"))
            out[name] = {"requests": requests, "sending_s": round(sending_s, 3),
                         "requests_per_s": round(requests / sending_s, 1)}  # fmt: skip
        plain, asked = out["plain"]["requests_per_s"], out["epochs 3, probe order,names"]["requests_per_s"]
        out["items_over_plain"] = round(asked / plain, 3)
        out["probe_all_over_plain"] = round(out["probe all"]["requests_per_s"] / plain, 3)
    finally:
        server.terminate()
        server.wait(timeout=10)
    return out
