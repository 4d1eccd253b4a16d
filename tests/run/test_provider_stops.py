"""Issue 45, items 2, 6, 7 and 10, against real servers on 127.0.0.1 (tests/servers/limited_server.py and
detector_server.py): a spending cap that replies without usage cannot slip past, a provider whose quota is spent or
that throttles for good stops the run with its message, requests refused for good end as errors while the others
run, ``--max-requests`` counts every request across sessions, and a resume repeats the flags its session changed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from urllib.request import urlopen

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

from harness.detectors.transport import REFUSALS
from harness.errors import EXIT_INTERRUPTED, EXIT_INVALID

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

LIMITED = Path(__file__).resolve().parents[1] / "servers" / "limited_server.py"


def _stats(server) -> dict:
    with urlopen(f"{server.url}/stats", timeout=10) as reply:
        return json.loads(reply.read())


def _eval(*args: str):
    return run_cli("eval", *args, "-q", "--bootstrap", "0", timeout=120)


def _document(run: Path) -> dict:
    return json.loads((run / "metrics.json").read_text())


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "detector.toml"
    path.write_text(text)
    return str(path)


def _llm_run(tmp_path: Path, server, usage: str, name: str) -> tuple[Path, object]:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    run = tmp_path / name
    config = _config(tmp_path, f'model = "m"\nbase_url = "{server.url}/v1"\nmax_tokens = 20\n')
    proc = _eval(str(cases), "--detector-config", config, "--concurrency", "4", "--no-cache", "--max-cost", "2.5",
                 "--price-prompt", "1000", "--price-completion", "1000", "--out", str(run))  # fmt: skip
    return run, proc


@pytest.mark.parametrize("usage", ["none", "null", "negative"])
def test_replies_without_usable_usage_count_at_their_most_against_max_cost(
    tmp_path: Path, detector_server, usage: str
) -> None:
    """Item 2: replies whose usage was missing, null or negative sent all 24 of 24 cases past --max-cost. Each now
    counts at its worst (the prompt's bytes over four, plus max_tokens 20), which is at least what the stand-in
    counts (chars over four, plus 7); the prices come from the command line (item 1's other half)."""
    server = detector_server("--latency", "0", "--usage", usage, script=LIMITED)
    run, proc = _llm_run(tmp_path, server, usage, "estimated")
    assert proc.returncode == EXIT_INTERRUPTED and "--max-cost 2.5 USD reached" in proc.stderr, proc.stderr
    journal = read_jsonl(run / "predictions.jsonl")
    assert 0 < len(journal) < 30 and _stats(server)["requests"] == len(journal)
    for r in journal:
        u = r["response"]["usage"]
        assert u["completion_tokens"] == 20 and u["prompt_tokens"] > 0  # max_tokens; the prompt from its size
        assert u["estimated_tokens"] == u["prompt_tokens"] + u["completion_tokens"] == u["total_tokens"]
    tokens = _document(run)["metrics"]["operational"]["tokens"]
    assert tokens["estimated"] == tokens["total"] == sum(r["response"]["usage"]["total_tokens"] for r in journal)
    assert math.isclose(tokens["cost_usd"], tokens["total"] * 0.001) and tokens["cost_usd"] <= 2.5
    report = (run / "report.md").read_text()
    assert "tokens counted at their most" in report and "cost (at most)" in report

    # the same run with usage given stops no earlier: a worst case is never below what the reply would have said
    given = detector_server("--latency", "0", script=LIMITED)
    counted, proc = _llm_run(tmp_path, given, "given", "counted")
    assert proc.returncode == EXIT_INTERRUPTED, proc.stderr
    assert len(read_jsonl(counted / "predictions.jsonl")) >= len(journal)
    assert "estimated" not in _document(counted)["metrics"]["operational"]["tokens"]


def test_a_429_saying_the_quota_is_spent_stops_the_run_at_once(tmp_path: Path, detector_server) -> None:
    """Item 6: a spent quota was waited out for 10 minutes a case. It stops the run with the provider's message."""
    server = detector_server("--quota-spent", script=LIMITED)
    cases = write_cases(tmp_path / "cases.jsonl", 20)
    for preflight, most in ((), 1), (("--no-preflight",), 4):
        run = tmp_path / f"run{len(preflight)}"
        before = _stats(server)["requests"]
        proc = _eval(str(cases), "-d", server.url, "--concurrency", "4", *preflight, "--out", str(run))
        assert proc.returncode == EXIT_INVALID, proc.stderr
        assert "the provider says the quota is spent" in proc.stderr and "exceeded your current quota" in proc.stderr
        assert f"continue with: fcb eval --resume {run}" in proc.stderr
        assert 1 <= _stats(server)["requests"] - before <= most  # one request a worker, none retried
        document = _document(run)
        assert document["complete"] is False and document["stopped"].startswith("provider: ")
        assert not read_jsonl(run / "predictions.jsonl")  # no case is an error: each stays pending


def test_a_provider_throttling_every_request_stops_the_run_after_its_stall_patience(
    tmp_path: Path, detector_server
) -> None:
    """Item 6: with no request answered, a run waited each case's 10 minutes of patience, case after case. Now no
    answer for stall_patience seconds (1 here) stops it, with the provider's last reply and a resume hint."""
    server = detector_server("--fault-rate", "1", "--faults", "429", "--fault-every-attempt")
    # waits of 0.3 s at least: a case meets about 4 of its REFUSALS 429s before a second passes with no answer
    config = _config(tmp_path, "backoff_initial = 0.3\nbackoff_max = 0.5\nstall_patience = 1\n")
    cases = write_cases(tmp_path / "cases.jsonl", 10)
    run = tmp_path / "run"
    proc = _eval(str(cases), "-d", server.url, "--detector-config", config, "--concurrency", "4", "--no-preflight",
                 "--out", str(run))  # fmt: skip
    assert proc.returncode == EXIT_INVALID, proc.stderr
    assert "no request was answered for" in proc.stderr and "its last reply: HTTP 429" in proc.stderr
    assert f"once the provider answers again, continue with: fcb eval --resume {run}" in proc.stderr
    assert _document(run)["stopped"].startswith("provider: no request was answered")
    assert not read_jsonl(run / "predictions.jsonl")


def test_requests_refused_for_good_end_as_errors_while_the_others_are_answered(tmp_path: Path, detector_server) -> None:
    """Item 6: a quarter of the cases refused with 429 for good held their workers 10 minutes each and slowed the
    others' pace until the run stalled. Each refused request is now an error after REFUSALS 429s; every other case
    is answered; every refusal the server made is one of those cases' attempts."""
    server = detector_server("--latency", "0", "--refuse-every", "4", script=LIMITED)
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    run = tmp_path / "run"
    proc = _eval(str(cases), "-d", server.url, "--concurrency", "8", "--retries", "1", "--out", str(run))
    assert proc.returncode == 0, proc.stderr
    journal = read_jsonl(run / "predictions.jsonl")
    refused = [r for r in journal if r["error"]]
    assert len(journal) == 40 and refused, "the stand-in refuses about one request in four"
    assert {(r["error"]["kind"], r["error"]["message"]) for r in refused} == {("http_status", "HTTP 429")}
    # REFUSALS 429s each, about a second apart: far from the 600 that 10 minutes of patience allowed before
    assert all(r["attempts"] == REFUSALS for r in refused), [r["attempts"] for r in refused]
    stats = _stats(server)
    assert stats["refused"] == sum(r["attempts"] for r in refused) and stats["throttled"] == 0
    assert stats["answered"] == 40 - len(refused) == sum(r["attempts"] for r in journal if not r["error"])


def test_max_requests_counts_every_request_across_sessions(tmp_path: Path, detector_server) -> None:
    """Item 7: against a provider answering 429 for good, --max-requests 5 resumed twice sent 5, then 10, then 15
    (the journal, which held no finished case, was all a resume counted). run.json now records each session's
    requests, and a resume counts them."""
    server = detector_server("--fault-rate", "1", "--faults", "429", "--fault-every-attempt")
    config = _config(tmp_path, "backoff_initial = 0.05\nbackoff_max = 0.1\n")
    cases = write_cases(tmp_path / "cases.jsonl", 6)
    run = tmp_path / "run"
    flags = ("--detector-config", config, "--max-requests", "5", "--concurrency", "2", "--no-preflight")
    proc = _eval(str(cases), "-d", server.url, *flags, "--out", str(run))
    assert proc.returncode == EXIT_INTERRUPTED and "--max-requests 5 reached" in proc.stderr, proc.stderr
    assert server.stats()["count"] == 5
    for _ in range(2):
        again = _eval("--resume", str(run), "--max-requests", "5")
        assert again.returncode == EXIT_INTERRUPTED, again.stderr
        assert "(5 sent in all, 0 in this session)" in again.stderr
    assert server.stats()["count"] == 5
    sessions = json.loads((run / "run.json").read_text())["sessions"]
    assert [s["requests"] for s in sessions] == [5, 0, 0]


def test_a_resume_records_and_repeats_the_settings_its_session_changed(tmp_path: Path, detector_server) -> None:
    """Item 10: resumed with --timeout 5, the printed hint ran with the first session's --timeout 1, and run.json
    never said that most cases ran with 5. Each session now records its changed settings; the hint repeats them."""
    server = detector_server("--latency", "0", script=LIMITED)
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    run = tmp_path / "run"
    first = _eval(str(cases), "-d", server.url, "--timeout", "1", "--max-requests", "4", "--out", str(run))
    assert first.returncode == EXIT_INTERRUPTED, first.stderr
    second = _eval("--resume", str(run), "--timeout", "5", "--max-requests", "8")
    assert second.returncode == EXIT_INTERRUPTED, second.stderr
    assert f"fcb eval --resume {run} --timeout 5.0 --max-requests N or --max-cost USD" in (second.stderr)
    manifest = json.loads((run / "run.json").read_text())
    assert manifest["settings"]["timeout"] == 1.0  # the first session's, as the run's identity was made
    assert "settings" not in manifest["sessions"][0]
    assert manifest["sessions"][1]["settings"] == {"timeout": 5.0, "max_requests": 8}
    assert _document(run)["settings"]["timeout"] == 5.0  # the figures say what the last session ran with
