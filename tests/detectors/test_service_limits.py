"""`fcb serve` under hostile clients (issue 15, item 11): the key is checked before the body is read, the requests
served at once are bounded (and with them the body bytes in flight), and every error body is ``{"error": ...}``."""

from __future__ import annotations

import selectors
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import orjson
import pytest
from servicekit import Service

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

KEY = "key-LIMITS-7319"
REQUEST = {"task": "What is 6 times 7?", "answers": [{"agent_id": "a", "text": "42"}, {"agent_id": "b", "text": "42"}]}
HEADERS = b"POST /v1/consensus HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n"


def _memory_mb(pid: int, field: str) -> float:
    """VmRSS (now) or VmHWM (the peak so far) of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no {field} for {pid}")


def _reply(sock: socket.socket) -> tuple[int, dict]:
    """Status and JSON body of the one reply on a socket (the server closes after an early refusal)."""
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except ConnectionResetError:  # a server that hangs up on an unread body resets; the reply came before
        pass
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), orjson.loads(body)


def test_the_key_is_checked_before_the_body_is_read() -> None:
    svc = Service("--detector", "builtin:always-low", env={"FCB_API_KEY": KEY})
    try:
        with socket.create_connection(("127.0.0.1", svc.port), timeout=5) as sock:
            sock.sendall(HEADERS % (1_000_000, b""))  # a body is announced and never sent
            status, body = _reply(sock)  # answered at once, not after the body timeout (408)
        assert status == 401 and body == {"error": "missing or wrong bearer token"}
        broken = httpx.post(
            f"{svc.url}/v1/consensus", content=b"{not json", headers={"content-type": "application/json"}, timeout=10
        )
        assert broken.status_code == 401 and broken.json() == {"error": "missing or wrong bearer token"}
        assert broken.headers["www-authenticate"] == "Bearer"
        ok = httpx.post(f"{svc.url}/v1/consensus", json=REQUEST, headers={"Authorization": f"Bearer {KEY}"})
        assert ok.status_code == 200

        before = _memory_mb(svc.proc.pid, "VmRSS")

        def unauthenticated_megabyte(_: int) -> None:  # 1 MB bodies that the server must never hold
            try:
                with socket.create_connection(("127.0.0.1", svc.port), timeout=10) as sock:
                    sock.sendall(HEADERS % (1_000_000, b"") + b"x" * 1_000_000)
                    sock.recv(4096)
            except OSError:
                pass  # the server answered 401 and hung up while the body was still being sent: as it should

        with ThreadPoolExecutor(100) as pool:
            list(pool.map(unauthenticated_megabyte, range(300)))
        grew = _memory_mb(svc.proc.pid, "VmHWM") - before
        assert grew < 40, f"the server's peak memory grew by {grew:.0f} MB for 300 unauthenticated 1 MB bodies"
    finally:
        svc.stop()


def test_max_connections_bounds_the_requests_and_body_bytes_in_flight() -> None:
    svc = Service("--detector", "builtin:agreement", "--max-connections", "8", "--body-timeout", "60")
    socks = []
    try:
        for _ in range(40):  # 40 requests whose bodies are half sent: each one holds a slot while it is read
            sock = socket.create_connection(("127.0.0.1", svc.port), timeout=10)
            sock.sendall(HEADERS % (1_000_000, b"") + b"x" * 500_000)
            socks.append(sock)
        selector = selectors.DefaultSelector()
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        answered: list[socket.socket] = []
        deadline = time.monotonic() + 20
        while len(answered) < 32 and time.monotonic() < deadline:
            for key, _ in selector.select(timeout=1):
                selector.unregister(key.fileobj)
                answered.append(key.fileobj)  # type: ignore[arg-type]
        replies = [_reply(sock) for sock in answered]
        assert len(replies) == 32  # 40 - 8: the others are refused at once, their bodies never read
        assert {status for status, _ in replies} == {503}
        assert all(set(body) == {"error"} and "--max-connections" in body["error"] for _, body in replies)
        assert not selector.select(timeout=0.5)  # the 8 being read are still waiting for the rest of their bodies
        held = [sock for sock in socks if sock not in answered]
        for sock in held:
            sock.sendall(b"x" * 500_000)  # the rest of the body: not JSON
        assert {_reply(sock)[0] for sock in held} == {422}
        assert httpx.post(f"{svc.url}/v1/consensus", json=REQUEST, timeout=10).status_code == 200  # slots freed
    finally:
        for sock in socks:
            sock.close()
        svc.stop()


def test_every_error_body_has_the_documented_shape() -> None:
    svc = Service("--detector", "builtin:agreement", "--max-body", "1000")
    try:
        replies = [
            httpx.get(f"{svc.url}/nowhere", timeout=10),  # 404 from routing
            httpx.post(f"{svc.url}/healthz", timeout=10),  # 405
            httpx.get(f"{svc.url}/v1/consensus", timeout=10),  # 405
            httpx.post(f"{svc.url}/v1/consensus", content=b"x" * 2000, timeout=10),  # 413
            httpx.post(f"{svc.url}/v1/consensus", content=b"{not json", timeout=10),  # 422
            httpx.post(f"{svc.url}/v1/consensus", json={"task": "t"}, timeout=10),  # 422
        ]
    finally:
        svc.stop()
    assert [r.status_code for r in replies] == [404, 405, 405, 413, 422, 422]
    for r in replies:
        assert r.headers["content-type"].startswith("application/json")
        assert isinstance(r.json().get("error"), str) and r.json()["error"], r.text
