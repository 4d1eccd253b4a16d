"""The run lock: two processes never run one folder at once."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import RunError, RunLocked
from harness.runfolder.names import LOCK


def _open_lock(path: Path) -> int:
    """The lock file, opened (made when missing) for reading and writing: never through a symbolic link, and only a
    regular file of its own. The lock file is truncated and rewritten, so a ``.lock`` that is a link (or a second
    name of another file) would destroy what it points to; `RunError` refuses it, naming it."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # O_NOFOLLOW: the last component is a symbolic link
            try:
                target = f" (to {os.readlink(path)})"
            except OSError:
                target = ""
            raise RunError(
                f"{path} is a symbolic link{target}; the run lock is never followed (it would be truncated): "
                "remove the link, then run again"
            ) from None
        raise RunError(f"{path}: cannot open the run lock: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = "not a regular file" if not stat.S_ISREG(info.st_mode) else f"a file with {info.st_nlink} names"
        raise RunError(f"{path} is {what}; the run lock must be a file of its own (it is truncated): remove it")
    return fd


@contextlib.contextmanager
def run_lock(run_dir: str | Path) -> Iterator[None]:
    """Hold an advisory lock (flock) on the run folder for as long as the block runs; `RunLocked` when another
    process holds it, `RunError` when ``.lock`` is a symbolic link or not a file of its own (`_open_lock`). The lock
    file keeps the holder's pid, host and start time; the lock itself goes with the process however it ends (even
    SIGKILL), so a stale file never blocks a resume."""
    path = Path(run_dir) / LOCK
    fd = _open_lock(path)
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
