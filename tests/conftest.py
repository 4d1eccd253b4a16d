"""Shared fixtures: a real detector server on 127.0.0.1 and the real CLI in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = Path(__file__).resolve().parent / "servers" / "detector_server.py"
OPENAI_SERVER = Path(__file__).resolve().parent / "servers" / "openai_server.py"
EMBEDDED = ROOT / "harness" / "data" / "embedded_cases.jsonl"

# A test file says what kind it is with its own markers: `pytestmark = pytest.mark.slow` (not in `make test-fast`),
# and `pytest.mark.e2e` too when it runs real servers, browsers or whole evaluations in subprocesses
# (`pytest -m "not e2e"` leaves those out). A file without them is unit-level: pure functions, small files.


def shared_file(*parts: str) -> Path:
    """A file of ../shared beside the checkout (the project's specs and public data), or a skip naming it when it is
    absent, as in a user's clone; a failure when ``CI`` is set, which always has it."""
    path = ROOT.parent.joinpath("shared", *parts)
    if not path.exists():
        reason = f"{path} is absent (a clone without ../shared beside it)"
        if os.environ.get("CI"):
            pytest.fail(reason + "; CI is set, so this is a failure")
        pytest.skip(reason)
    return path


class Server:
    def __init__(self, proc: subprocess.Popen, port: int) -> None:
        self.proc, self.port = proc, port
        self.url = f"http://127.0.0.1:{port}"

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=5) as resp:
            return json.loads(resp.read())


@pytest.fixture(autouse=True)
def _own_cache_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test gets its own user cache directory: the response cache (on by default for llm: detectors) never
    carries answers from one test, or from the user's own runs, into another; subprocesses inherit it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


@pytest.fixture
def detector_server() -> Iterator[Callable[..., Server]]:
    """Start test detector servers (each on a free port); all are stopped when the test ends."""
    started: list[subprocess.Popen] = []

    def start(*args: str, script: Path = SERVER) -> Server:
        proc = subprocess.Popen([sys.executable, str(script), *args], stdout=subprocess.PIPE, text=True)
        started.append(proc)
        line = proc.stdout.readline() if proc.stdout else ""
        if not line.startswith("PORT "):
            raise RuntimeError(f"test server did not start: {line!r}")
        return Server(proc, int(line.split()[1]))

    yield start
    for proc in started:
        proc.terminate()
        proc.wait(timeout=10)


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``python -m harness ARGS`` in a subprocess, as a user would run ``fcb``."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=ROOT,
    )


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], object]) -> Path:
    """A folder made once for the whole session, even across pytest-xdist workers (which, with pytest 9.2, do not
    keep the test groups together): the first worker makes it under a lock, the others wait and reuse it."""
    import fcntl

    base = factory.getbasetemp()
    # the same folder for every worker of one session (a worker's base is popen-gwN inside the session's own)
    root = (base.parent if "PYTEST_XDIST_WORKER" in os.environ else base) / "fcb-shared-builds"
    root.mkdir(exist_ok=True)
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder
