"""The run lock: two processes never run one folder at once."""

from __future__ import annotations

import contextlib
import fcntl
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import RunLocked
from harness.runfolder.names import LOCK


@contextlib.contextmanager
def run_lock(run_dir: str | Path) -> Iterator[None]:
    """Hold an advisory lock (flock) on the run folder for as long as the block runs; `RunLocked` when another
    process holds it. The lock file keeps the holder's pid, host and start time; the lock itself goes with
    the process however it ends (even SIGKILL), so a stale file never blocks a resume."""
    path = Path(run_dir) / LOCK
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "another process"
            raise RunLocked(f"{run_dir} is in use by {holder}; wait for it to end, or stop it, first") from None
        started = datetime.now(UTC).isoformat(timespec="seconds")  # no command line: it may hold a secret
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} on {socket.gethostname()} since {started}\n".encode(), 0)
        yield
    finally:
        os.close(fd)
