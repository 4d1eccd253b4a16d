"""Start ``fcb serve`` as a real subprocess on a free 127.0.0.1 port, for the service tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Service:
    """A running ``fcb serve``; its stderr (the log) is kept in a file for the tests to read."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        full_env = {k: v for k, v in os.environ.items() if k != "FCB_API_KEY"} | (env or {})
        # tests run in parallel (pytest -n): another process may take the free port before fcb serve binds it
        for attempt in range(3):
            self.port = free_port()
            self.url = f"http://127.0.0.1:{self.port}"
            self._log = tempfile.NamedTemporaryFile(prefix="fcb-serve-", suffix=".log", delete=False)  # noqa: SIM115
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "harness", "serve", "--port", str(self.port), *args],
                cwd=ROOT,
                env=full_env,
                stdout=self._log,
                stderr=subprocess.STDOUT,
            )
            try:
                self._wait_ready()
                return
            except RuntimeError:
                if attempt == 2 or "address already in use" not in self.log().lower():
                    raise
                self._log.close()

    def _wait_ready(self, limit_s: float = 30) -> None:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"fcb serve exited early:\n{self.log()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.1)
        raise RuntimeError(f"fcb serve did not become ready:\n{self.log()}")

    def log(self) -> str:
        return Path(self._log.name).read_text(errors="replace")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()
