"""`fcb serve` refuses an empty key and keeps its log to one printable line a request (issue 24, items 17, 18)."""

from __future__ import annotations

import httpx
import pytest
from conftest import run_cli
from servicekit import Service, free_port

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.mark.parametrize("key", ["", "   "])
def test_an_empty_api_key_refuses_to_serve(key: str) -> None:
    # it used to serve without authentication, without a word
    proc = run_cli("serve", "--port", str(free_port()), env={"FCB_API_KEY": key}, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "FCB_API_KEY is set but empty" in proc.stderr and "Traceback" not in proc.stderr


def test_escape_sequences_in_a_path_never_reach_the_log() -> None:
    svc = Service("--detector", "builtin:always-low")
    try:
        path = "/x%1b%5b31mRED%07%08%08%08FAKE%e2%80%8b"
        assert httpx.get(svc.url + path, timeout=10).status_code == 404
        log = svc.log()
    finally:
        svc.stop()
    line = next(x for x in log.splitlines() if "RED" in x)
    assert "GET /x\\x1b[31mRED\\x07\\x08\\x08\\x08FAKE\\u200b 404" in line
    assert not any(c in log for c in "\x1b\x07\x08\u200b")


def test_look_alike_agent_ids_are_refused_as_in_a_cases_file() -> None:
    svc = Service("--detector", "builtin:always-low")
    try:
        answers = [{"agent_id": "agent-1", "text": "42"}, {"agent_id": "agent-1\u200b", "text": "41"}]
        resp = httpx.post(f"{svc.url}/v1/consensus", json={"task": "6 x 7?", "answers": answers}, timeout=10)
        distinct = [{"agent_id": "agent-1", "text": "42"}, {"agent_id": "agent-2", "text": "41"}]
        ok = httpx.post(f"{svc.url}/v1/consensus", json={"task": "6 x 7?", "answers": distinct}, timeout=10)
    finally:
        svc.stop()
    assert resp.status_code == 422 and "answers[1].agent_id" in resp.text and "looks like" in resp.text, resp.text
    assert ok.status_code == 200
