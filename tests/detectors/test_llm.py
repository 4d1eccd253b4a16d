"""LLM detectors through an OpenAI-compatible endpoint, against a small chat-completions server started here on
127.0.0.1 (a stand-in: no real model can run on this machine). Covers JSON, fenced and unreadable replies, token
accounting and cost, K-sample voting, 429 with Retry-After, timeouts, and a server without a JSON mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import OPENAI_SERVER, read_jsonl, run_cli

from harness.cases.request import build_request
from harness.detectors.llm import block_nonce

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _run(tmp_path: Path, server, model: str, *args: str, n: int = 6, env: dict | None = None, code: int = 0) -> Path:
    cases = write_cases(tmp_path / "cases.jsonl", n)
    out = tmp_path / model
    proc = run_cli("eval", str(cases), "-d", f"llm:{model}@{server.url}/v1", "--out", str(out), "-q", *args, env=env)
    assert proc.returncode == code, proc.stderr
    return out


def test_json_replies_usage_cost_and_the_prompt(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    config = tmp_path / "llm.toml"
    config.write_text(
        f'model = "json"\nbase_url = "{server.url}/v1"\napi_key_env = "MY_LLM_KEY"\ntemperature = 0\n'
        "max_tokens = 123\nprice_prompt_per_mtok = 2.0\nprice_completion_per_mtok = 10.0\n"
    )
    cases = write_cases(tmp_path / "cases.jsonl", 6)
    out = tmp_path / "run"
    proc = run_cli(
        "eval",
        str(cases),
        "--detector-config",
        str(config),
        "--out",
        str(out),
        "-q",
        env={"MY_LLM_KEY": "sk-SECRET-llm"},
    )
    assert proc.returncode == 0, proc.stderr
    journal = read_jsonl(out / "predictions.jsonl")
    assert {(r["risk"], r["score"]) for r in journal} == {("high", 0.8)}
    assert all(r["response"]["reason"] == "the majority copied one answer" for r in journal)

    seen = read_jsonl(record)
    bodies = [s["body"] for s in seen]
    assert all(b["model"] == "json" and b["max_tokens"] == 123 and b["temperature"] == 0 for b in bodies)
    assert all(b["response_format"] == {"type": "json_object"} for b in bodies)
    assert all(s["headers"]["Authorization"] == "Bearer sk-SECRET-llm" for s in seen)
    by_question = {c["question"]: c for c in read_jsonl(cases)}
    for b in bodies:
        prompt = b["messages"][0]["content"]
        case = next(c for q, c in by_question.items() if q in prompt)
        n = block_nonce(build_request(case))  # numbered answers, each in its block
        assert all(
            f'\n<answer-{n} n="{i}" agent="{a["agent_id"]}">\n{a["text"]}\n</answer-{n}>\n' in prompt
            for i, a in enumerate(case["answers"], start=1)
        )
        assert case["rationale"] not in prompt and case["ground_truth"] + "." not in prompt.split("\n<answer-")[0]

    # usage: prompt tokens = words in each prompt, completion = 7 a call (the server's rule)
    prompt_tokens = sum(len(b["messages"][0]["content"].split()) for b in bodies)
    tokens = json.loads((out / "metrics.json").read_text())["metrics"]["operational"]["tokens"]
    assert tokens["prompt"] == prompt_tokens and tokens["completion"] == 7 * 6
    assert abs(tokens["cost_usd"] - (prompt_tokens * 2.0 + 42 * 10.0) / 1e6) < 1e-12
    assert "cost" in (out / "report.md").read_text()
    assert "SECRET" not in "".join(p.read_text() for p in out.iterdir())


def test_fenced_and_unreadable_replies(tmp_path: Path, detector_server) -> None:
    server = detector_server(script=OPENAI_SERVER)
    fenced = read_jsonl(_run(tmp_path, server, "fenced") / "predictions.jsonl")
    assert {r["risk"] for r in fenced} == {"high"}
    garbage = read_jsonl(_run(tmp_path, server, "garbage", code=1) / "predictions.jsonl")  # every case errored
    assert {r["error"]["kind"] for r in garbage} == {"invalid_response"}
    assert all(r["error"]["raw"].startswith("I cannot decide") for r in garbage)  # the raw reply is kept


def test_self_consistency_votes_over_k_samples(tmp_path: Path, detector_server) -> None:
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    config = tmp_path / "vote.toml"
    config.write_text(f'model = "vote"\nbase_url = "{server.url}/v1"\nsamples = 3\ntemperature = 0.8\n')
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    out = tmp_path / "run"
    assert (
        run_cli(
            "eval", str(cases), "--detector-config", str(config), "--out", str(out), "-q", "--concurrency", "1"
        ).returncode
        == 0
    )
    for r in read_jsonl(out / "predictions.jsonl"):
        # the server answers high, high, low to the three samples of a prompt: majority high, mean (0.9+0.9+0.3)/3
        assert r["risk"] == "high" and abs(r["score"] - 0.7) < 1e-9
        assert r["response"]["votes"] == {"high": 2, "low": 1}
        assert r["response"]["usage"]["completion_tokens"] == 21
    assert len(read_jsonl(record)) == 12 and {s["body"]["temperature"] for s in read_jsonl(record)} == {0.8}


def test_retry_after_timeouts_and_a_server_without_json_mode(tmp_path: Path, detector_server) -> None:
    server = detector_server(script=OPENAI_SERVER)
    throttled = read_jsonl(_run(tmp_path, server, "throttle", n=3) / "predictions.jsonl")
    assert all(r["error"] is None and r["attempts"] == 2 and r["latency_s"] >= 1.0 for r in throttled)
    slow = read_jsonl(
        _run(tmp_path, server, "slow", "--timeout", "0.5", "--retries", "0", n=2, code=1) / "predictions.jsonl"
    )
    assert {r["error"]["kind"] for r in slow} == {"timeout"}
    plain = read_jsonl(_run(tmp_path, server, "nojsonmode", n=3) / "predictions.jsonl")
    assert {r["risk"] for r in plain} == {"high"}  # asked again without response_format


def test_bad_llm_specs(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    proc = run_cli("eval", str(cases), "-d", "llm:model-without-url", "-q")
    assert proc.returncode == 2 and "llm:MODEL@BASE_URL" in proc.stderr


def test_an_llm_base_url_is_one_url_and_a_second_one_is_refused_with_its_secret_hidden(
    tmp_path: Path, detector_server
) -> None:
    # llm: takes one base URL (no replicas): a comma before a second URL used to be kept inside the one URL, so
    # the second URL's password was not taken for a credential and reached the detector's name and run.json
    server = detector_server(script=OPENAI_SERVER)
    base = f"http://127.0.0.1:{server.port}/v1"
    spec = f"llm:json@{base},{base.replace('://', '://bob:pwSECRET@')}"
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", spec, "--out", str(out), "-q")
    assert proc.returncode == 2, proc.stderr
    assert "one base URL" in proc.stderr and "REDACTED" in proc.stderr
    assert "SECRET" not in proc.stdout + proc.stderr
    assert not out.exists()


def test_chat_completions_goes_into_the_path_before_a_query_string(tmp_path: Path, detector_server) -> None:
    # an endpoint that wants a query (Azure's ?api-version=...): the path was appended after the query, so every
    # request went to /v1 with a query value ending in /chat/completions
    record = tmp_path / "seen.jsonl"
    server = detector_server("--record", str(record), script=OPENAI_SERVER)
    spec = f"llm:json@http://127.0.0.1:{server.port}/v1/?api-version=2024-02-01"
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    out = tmp_path / "run"
    proc = run_cli("eval", str(cases), "-d", spec, "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    assert {s["path"] for s in read_jsonl(record)} == {"/v1/chat/completions?api-version=2024-02-01"}
    run = json.loads((out / "run.json").read_text())
    # the base URL in the fingerprint as given (as it always was: resuming an older run sees no change)
    assert run["identity"]["fingerprint"]["base_url"] == spec.removeprefix("llm:json@")


@pytest.mark.parametrize("kind", ["text", "list", "null", "huge", "negative", "strings"])
def test_usage_of_the_wrong_kind_counts_at_its_most_and_the_verdict_counts(
    tmp_path: Path, detector_server, kind: str
) -> None:
    """Issue 45, item 3: usage of 1e30 broke the journal's writer (exit 3, and every --resume the same); usage as
    text or a list turned a readable verdict into a detector_exception; negative counts were journaled as given."""
    server = detector_server(script=OPENAI_SERVER)
    journal = read_jsonl(_run(tmp_path, server, f"usage-{kind}", "--no-cache", n=3) / "predictions.jsonl")
    assert [r["risk"] for r in journal] == ["high"] * 3 and all(r["error"] is None for r in journal)
    for r in journal:  # counted at their most (item 2): the prompt from its size, max_tokens (300) for the reply
        usage = r["response"]["usage"]
        completion = 7 if kind == "huge" else 300  # 7: the one usable count of that reply
        assert usage["completion_tokens"] == completion and usage["prompt_tokens"] > 0
        assert usage["total_tokens"] == usage["prompt_tokens"] + completion
        assert usage["estimated_tokens"] == usage["prompt_tokens"] + (0 if kind == "huge" else 300)
