"""Runs against a provider that limits its rate (tests/servers/limited_server.py, a real server on 127.0.0.1): every
case answered while the run adapts to 429s, ``--rpm`` keeping under the limit, and ``--max-requests`` /
``--max-cost`` stopping a run cleanly that ``--resume`` with a higher cap finishes with an uncapped run's figures."""

from __future__ import annotations

import json
import math
from pathlib import Path
from urllib.request import urlopen

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

from harness.errors import EXIT_INTERRUPTED

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

LIMITED = Path(__file__).resolve().parents[1] / "servers" / "limited_server.py"


def _stats(server) -> dict:
    with urlopen(f"{server.url}/stats", timeout=10) as reply:
        return json.loads(reply.read())


def _eval(cases: Path, spec: str, out: Path, *args: str, code: int = 0):
    proc = run_cli("eval", str(cases), "-d", spec, "--out", str(out), "-q", "--bootstrap", "0", *args, timeout=300)
    assert proc.returncode == code, proc.stderr
    return proc


def _metrics(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text())


def _figures(run: Path) -> dict:
    figures = dict(_metrics(run)["metrics"])
    figures.pop("operational")  # times, attempts and sessions differ; what was measured must not
    return figures


@pytest.mark.parametrize("retry_after", ["none", "seconds"])
def test_a_run_over_the_provider_limit_answers_every_case(tmp_path: Path, detector_server, retry_after: str) -> None:
    # 600 a 3-second minute (200 a second) from a bucket of 10: 32 in flight throttle at once
    server = detector_server("--rpm", "600", "--minute", "3", "--retry-after", retry_after, script=LIMITED)
    cases = write_cases(tmp_path / "cases.jsonl", 150)
    run = tmp_path / "run"
    _eval(cases, server.url, run, "--concurrency", "32", "--retries", "0")  # a 429 must not spend a retry
    ops = _metrics(run)["metrics"]["operational"]
    stats = _stats(server)
    assert stats["throttled"] > 0  # the provider did refuse some
    assert ops["errors"] == 0 and ops["cases"] == 150 == stats["answered"]
    assert len(read_jsonl(run / "predictions.jsonl")) == 150


def test_rpm_keeps_a_run_under_the_provider_limit(tmp_path: Path, detector_server) -> None:
    # the provider: 60 a 3-second minute, i.e. 1,200 a real minute (20 a second), from a bucket of 3 seconds' worth
    # (60). 200 cases at 64 in flight ask for far more than 20 a second, however loaded the machine, so they pass
    # the limit without --rpm; with --rpm at 95% of it the run stays under, with the bucket's margin for requests
    # that arrive bunched together
    cases = write_cases(tmp_path / "cases.jsonl", 200)
    for rpm, throttled in ((None, True), ("1140", False)):
        server = detector_server("--rpm", "60", "--minute", "3", "--burst", "60", script=LIMITED)
        flags = ("--rpm", rpm) if rpm else ()
        _eval(cases, server.url, tmp_path / f"run-{rpm}", "--concurrency", "64", *flags)
        stats = _stats(server)
        assert (stats["throttled"] > 0) == throttled and stats["answered"] == 200, rpm


def test_max_requests_stops_cleanly_and_a_resume_with_a_higher_cap_finishes_as_an_uncapped_run(
    tmp_path: Path, detector_server
) -> None:
    server = detector_server("--latency", "0", script=LIMITED)
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    run = tmp_path / "capped"
    proc = _eval(cases, server.url, run, "--max-requests", "15", "--concurrency", "4", code=EXIT_INTERRUPTED)
    assert "--max-requests 15 reached" in proc.stderr and "--resume" in proc.stderr
    assert len(read_jsonl(run / "predictions.jsonl")) == 15  # one attempt a case: 15 requests, 15 cases
    document = _metrics(run)
    assert document["complete"] is False and document["stopped"].startswith("budget: ")
    assert _stats(server)["requests"] == 15

    # the cap counts the earlier session's requests: resuming with the same cap sends nothing
    again = run_cli("eval", "--resume", str(run), "-q", timeout=300)
    assert again.returncode == EXIT_INTERRUPTED
    assert "--max-requests 15 reached (15 sent in all, 0 in this session)" in again.stderr
    assert _stats(server)["requests"] == 15
    resumed = run_cli("eval", "--resume", str(run), "--max-requests", "100", "-q", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert _stats(server)["requests"] == 40 and len(read_jsonl(run / "predictions.jsonl")) == 40

    _eval(cases, server.url, tmp_path / "uncapped")
    assert _figures(run) == _figures(tmp_path / "uncapped")


def test_max_cost_stops_within_one_request_of_the_cap(tmp_path: Path, detector_server) -> None:
    server = detector_server("--latency", "0", script=LIMITED)
    # $1,000 a million tokens either way: a token costs $0.001; max_tokens = the stand-in's 20 completion tokens
    config = tmp_path / "llm.toml"
    config.write_text(
        f'model = "m"\nbase_url = "{server.url}/v1"\nmax_tokens = 20\n'
        "price_prompt_per_mtok = 1000.0\nprice_completion_per_mtok = 1000.0\n"
    )
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    run = tmp_path / "capped"
    args = ("--detector-config", str(config), "--concurrency", "4", "--no-cache", "--bootstrap", "0", "-q")
    proc = run_cli("eval", str(cases), *args, "--max-cost", "2.5", "--out", str(run), timeout=300)
    assert proc.returncode == EXIT_INTERRUPTED, proc.stderr
    assert "--max-cost 2.5 USD reached" in proc.stderr
    journal = read_jsonl(run / "predictions.jsonl")
    costs = [(r["response"]["usage"]["prompt_tokens"] + r["response"]["usage"]["completion_tokens"]) * 0.001
             for r in journal]  # fmt: skip
    spent = sum(costs)
    assert 0 < len(journal) < 30 and spent <= 2.5
    # the next request was refused because its worst cost would pass the cap: the prompt's bytes over four, a
    # generous count, plus 20; a prompt here is at least the number of tokens the server counted for the largest
    assert 2.5 - spent < 2 * max(costs)
    assert _stats(server)["requests"] == len(journal)

    resumed = run_cli("eval", "--resume", str(run), "--max-cost", "100", "-q", timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert len(read_jsonl(run / "predictions.jsonl")) == 30
    uncapped = tmp_path / "uncapped"
    done = run_cli("eval", str(cases), *args, "--out", str(uncapped), timeout=300)
    assert done.returncode == 0, done.stderr
    assert _figures(run) == _figures(uncapped)
    assert math.isclose(
        _metrics(run)["metrics"]["operational"]["tokens"]["cost_usd"],
        _metrics(uncapped)["metrics"]["operational"]["tokens"]["cost_usd"],
    )


def test_limits_are_refused_for_a_detector_that_sends_no_requests(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "--rpm", "60", "-q", "--out", str(tmp_path / "r"))
    assert proc.returncode == 2 and "--rpm: only for HTTP and llm: detectors" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_a_provider_answering_429_with_retry_after_0_for_good_ends_each_case(tmp_path: Path, detector_server) -> None:
    """Issue 45, item 4: "Retry-After: 0" forever never added to a case's patience, so the run never ended (37,276
    requests in 45 s). Each wait now has a floor (backoff_initial, 0.05 s here), which the patience (0.5 s) counts."""
    server = detector_server("--fault-rate", "1", "--faults", "429", "--fault-every-attempt")
    config = tmp_path / "patient.toml"
    config.write_text("backoff_initial = 0.05\nbackoff_max = 0.5\nthrottle_patience = 0.5\n")
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    run = tmp_path / "throttled"
    proc = run_cli("eval", str(cases), "-d", server.url, "--detector-config", str(config), "--no-preflight",
                   "--concurrency", "1", "--bootstrap", "0", "-q", "--out", str(run), timeout=60)  # fmt: skip
    assert proc.returncode != 3, proc.stderr  # ended, as errors, never an internal error
    journal = read_jsonl(run / "predictions.jsonl")
    assert journal and {r["error"]["kind"] for r in journal} == {"http_status"}
    # 0.5 s of patience at waits of 0.05 s and more: about ten tries, never thousands (nor one: a 429 is no failure)
    assert all(2 <= r["attempts"] <= 15 for r in journal), [r["attempts"] for r in journal]


def test_max_cost_without_prices_is_refused_before_anything_is_sent(tmp_path: Path, detector_server) -> None:
    """Issue 45, item 1: --max-cost without prices sent all 240 requests and said nothing."""
    server = detector_server()
    cases = write_cases(tmp_path / "cases.jsonl", 5)
    proc = run_cli("eval", str(cases), "-d", server.url, "--max-cost", "0.01", "-q", "--out", str(tmp_path / "run"))
    assert proc.returncode == 2 and "max-cost needs the detector's prices" in proc.stderr
    assert not (tmp_path / "run" / "predictions.jsonl").exists()
