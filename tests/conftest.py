"""Shared fixtures: a real detector server on 127.0.0.1, and the real CLI called in process or in a subprocess."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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
    """``fcb ARGS`` called in this process: `harness.cli.main` with its own standard streams, the environment
    updated by ``env`` and the checkout as the working folder for the call, its exit code as ``returncode``. What
    the process boundary itself does (start-up, signals, a killed process, pipes) is the business of the named tests
    that call `run_fcb_process`. ``timeout`` is pytest-timeout's here (a subprocess's in `run_fcb_process`)."""
    from harness.cli import main

    out, err = _Stream(), _Stream()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    os.environ.update(env or {})
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
            warnings.resetwarnings()  # as in a fresh interpreter: a warning reaches standard error once a place
            warnings.simplefilter("default")
            # ignored, as a fresh interpreter ignores it: here the collector may close a file an earlier test left
            # in a reference cycle, and its warning would land on this command's standard error
            warnings.simplefilter("ignore", ResourceWarning)
            warnings.showwarning = _show_warning
            code = _exit_code(main, list(args))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(["fcb", *args], code, out.text(), err.text())


def run_fcb_process(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120, **kwargs: Any
) -> subprocess.CompletedProcess:
    """``python -m harness ARGS`` in a subprocess, as a user runs ``fcb``: for the tests about the process itself."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=full_env,
        cwd=ROOT,
        **kwargs,
    )


class _Stream(io.TextIOWrapper):
    """A standard stream for one in-process call: text over bytes (``.buffer`` exists, as on a real stream) and
    no descriptor, as for a pipe that is not a terminal."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", "replace")  # type: ignore[attr-defined]


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int, *_: Any) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno))


def _exit_code(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """What the process would exit with: main's return value, or the code of a `SystemExit` (argparse's). Called
    from a thread of its own when this one runs an event loop already (a test driving Playwright's sync API)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _call_main(main, argv)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(_call_main, main, argv).result()


def _call_main(main: Callable[[list[str]], int], argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1


def short_backoff(folder: Path) -> list[str]:
    """``fcb eval`` flags for a detector config whose retries wait 20 ms, then 40 ms... (``backoff_initial``, with
    jitter of as much again) instead of 0.5 s, 1 s... plus up to 1 s: for the tests about what is retried, not how
    long it waits (`harness.detectors.transport` tests the waits themselves)."""
    config = folder / "short-backoff.toml"
    config.write_text("backoff_initial = 0.02\nbackoff_max = 0.5\n")
    return ["--detector-config", str(config)]


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


def _audit_embedded(folder: Path) -> None:
    proc = run_cli(
        "audit-dataset", str(EMBEDDED), "--split-by", "source-item", "--format", "json", "--out",
        str(folder / "audit.json"), "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="session")
def embedded_audit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`fcb audit-dataset EMBEDDED --split-by source-item --format json` (its grid searches: a few seconds), run
    once for the whole session and shared by the workers: the audit.json it wrote."""
    return once(tmp_path_factory, "embedded-audit", _audit_embedded) / "audit.json"
