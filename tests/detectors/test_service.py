"""`fcb serve` as a real subprocess: the contract's limits, 413, auth, detector failures, logs, and eval through it."""

from __future__ import annotations

import json
import socket
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from casegen import write_cases
from conftest import run_cli
from servicekit import Service

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

RAISING = """
def explode(request):
    raise RuntimeError("secret internal detail")
"""


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    svc = Service("--detector", "builtin:agreement", "--max-body", "300000")
    yield svc
    svc.stop()


def request(n_answers: int = 3, **overrides) -> dict:
    body = {"task": "What is 6 times 7?", "answers": [{"agent_id": f"a{i}", "text": "42"} for i in range(n_answers)]}
    body.update(overrides)
    return body


def post(svc: Service, body, **kwargs) -> httpx.Response:
    return httpx.post(f"{svc.url}/v1/consensus", json=body, timeout=10, **kwargs)


def fields(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 422, resp.text
    return [p["field"] for p in resp.json()["problems"]]


def test_answers_risk_for_a_valid_request(service: Service) -> None:
    resp = post(service, request(evidence=["6 times 7 is 42."]))
    assert resp.status_code == 200
    assert resp.json()["false_consensus_risk"] == "low"  # unanimous answers: builtin:agreement says low


@pytest.mark.parametrize(
    ("build_ok", "build_bad", "field"),
    [
        (lambda: request(task="t" * 8000), lambda: request(task="t" * 8001), "task"),
        (lambda: request(task="t"), lambda: request(task=""), "task"),
        (lambda: request(2), lambda: request(1), "answers"),
        (lambda: request(16), lambda: request(17), "answers"),
        (lambda: _answer(agent_id="x" * 80), lambda: _answer(agent_id="x" * 81), "answers[0].agent_id"),
        (lambda: _answer(agent_id="x"), lambda: _answer(agent_id=""), "answers[0].agent_id"),
        (lambda: _answer(text="y" * 16000), lambda: _answer(text="y" * 16001), "answers[0].text"),
        (lambda: request(evidence=["e"] * 20), lambda: request(evidence=["e"] * 21), "evidence"),
        (lambda: request(evidence=["e"]), lambda: request(evidence=[]), "evidence"),
        (lambda: request(evidence=["e" * 4000]), lambda: request(evidence=["e" * 4001]), "evidence[0]"),
        (lambda: request(), lambda: request(extra="label leak"), "extra"),
        (lambda: _answer(), lambda: _answer(correct=True), "answers[0].correct"),
    ],
)
def test_each_limit_at_and_just_past_its_boundary(service: Service, build_ok, build_bad, field: str) -> None:
    assert post(service, build_ok()).status_code == 200
    assert field in fields(post(service, build_bad()))


def _answer(**first: object) -> dict:
    body = request()
    body["answers"][0] = {**body["answers"][0], **first}
    return body


def test_duplicate_agent_ids_and_malformed_json(service: Service) -> None:
    body = request()
    body["answers"][2]["agent_id"] = "a0"
    resp = post(service, body)
    assert resp.status_code == 422 and "answers[2].agent_id" in resp.text
    broken = httpx.post(
        f"{service.url}/v1/consensus", content=b"{not json", timeout=10, headers={"content-type": "application/json"}
    )
    assert broken.status_code == 422


def test_oversized_bodies_get_413_before_parsing(service: Service) -> None:
    big = request(evidence=["e" * 4000] * 20) | {
        "answers": [{"agent_id": f"a{i}", "text": "x" * 16000} for i in range(16)]
    }
    assert len(json.dumps(big)) > 300000
    assert post(service, big).status_code == 413

    def chunks() -> Iterator[bytes]:  # no Content-Length: the limit must hold while the body streams in
        yield b'{"task": "' + b"t" * 300000
        yield b"t" * 200000 + b'"}'

    resp = httpx.post(
        f"{service.url}/v1/consensus", content=chunks(), timeout=10, headers={"content-type": "application/json"}
    )
    assert resp.status_code == 413 and "exceeds 300000 bytes" in resp.text


def test_access_log_has_method_path_status_latency_and_no_body(service: Service) -> None:
    post(service, request(task="MARKER-unique-task-text"))
    log = service.log()
    assert "POST /v1/consensus 200" in log and "ms" in log.split("POST /v1/consensus 200")[1].splitlines()[0]
    assert "MARKER-unique-task-text" not in log


def test_openapi_document_describes_request_and_response(service: Service) -> None:
    doc = httpx.get(f"{service.url}/openapi.json", timeout=10).json()
    schemas = doc["components"]["schemas"]
    assert schemas["ConsensusRequest"]["properties"]["task"]["maxLength"] == 8000
    assert schemas["ConsensusRequest"]["additionalProperties"] is False
    assert schemas["ConsensusResponse"]["properties"]["false_consensus_risk"]["enum"] == ["low", "medium", "high"]
    post_op = doc["paths"]["/v1/consensus"]["post"]
    assert {"413", "422", "500"} <= set(post_op["responses"])
    assert "401" not in post_op["responses"] and "security" not in post_op  # auth is off on this server


def test_bearer_auth(tmp_path: Path) -> None:
    key = "key-SECRET-4242"
    svc = Service("--detector", "builtin:always-low", env={"FCB_API_KEY": key})
    try:
        assert post(svc, request()).status_code == 401
        assert post(svc, request(), headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert post(svc, request(), headers={"Authorization": f"Basic {key}"}).status_code == 401
        assert post(svc, request(), headers={"Authorization": f"Bearer {key}"}).status_code == 200
        assert httpx.get(f"{svc.url}/healthz", timeout=10).status_code == 200
        post_op = httpx.get(f"{svc.url}/openapi.json", timeout=10).json()["paths"]["/v1/consensus"]["post"]
        assert "401" in post_op["responses"] and post_op["security"]
    finally:
        svc.stop()
    assert key not in svc.log()


def test_detector_exception_is_a_500_with_an_error_id_and_no_trace(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text(RAISING)
    svc = Service("--detector", f"{tmp_path / 'bad.py'}:explode")
    try:
        resp = post(svc, request())
    finally:
        svc.stop()
    assert resp.status_code == 500
    body = resp.json()
    assert set(body) == {"error", "error_id"} and "secret internal detail" not in resp.text
    assert "Traceback" not in resp.text and body["error_id"] in svc.log()


def test_eval_through_the_service_equals_in_process(tmp_path: Path, service: Service) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 120)
    via_http, in_process = tmp_path / "http", tmp_path / "local"
    assert run_cli("eval", str(cases), "-d", service.url, "--out", str(via_http), "-q").returncode == 0
    assert run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(in_process), "-q").returncode == 0

    def metrics(run: Path) -> dict:
        m = json.loads((run / "metrics.json").read_text())["metrics"]
        m.pop("operational")
        return m

    assert metrics(via_http) == metrics(in_process)


def test_a_slow_client_cannot_hold_a_worker() -> None:
    svc = Service("--detector", "builtin:agreement", "--body-timeout", "1")
    try:
        with socket.create_connection(("127.0.0.1", svc.port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/consensus HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                b"Content-Length: 1000\r\n\r\n" + b'{"task": "'
            )
            reply = sock.recv(4096)  # the body never completes: the server answers and hangs up on its own
        assert reply.startswith(b"HTTP/1.1 408")
        assert post(svc, request()).status_code == 200  # and keeps serving others
    finally:
        svc.stop()


def test_limits_hold_under_a_burst_of_bad_requests(service: Service) -> None:
    big = request() | {
        "answers": [{"agent_id": f"a{i}", "text": "x" * 16000} for i in range(16)],
        "evidence": ["e" * 4000] * 20,
    }
    bodies = [big, request(task=""), request(1), {"task": "t"}, "not an object", request(extra=1)] * 20

    def send(body) -> int:
        return post(service, body).status_code

    with ThreadPoolExecutor(16) as pool:
        codes = list(pool.map(send, bodies))
    assert Counter(codes) == {413: 20, 422: 100}
    assert post(service, request()).status_code == 200 and httpx.get(f"{service.url}/healthz").status_code == 200
