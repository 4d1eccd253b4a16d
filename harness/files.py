"""Files written whole (a reader sees the old content or the new, never half of it), input files opened only when
they are regular files of a bounded size, standard streams that outlive their reader, and paths as a shell reads
them in the commands the harness suggests."""

from __future__ import annotations

import contextlib
import errno
import os
import shlex
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, BinaryIO, TextIO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, data: bytes) -> None:
    """Write a file so that a reader sees the old content or the new, never half of it."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), 0o666 & ~_umask())  # mkstemp makes 0600; give the usual permissions
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and not exc.filename:  # a full disk says only "[Errno 28]": name the file
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise


class NotRegular(OSError):
    """A path that is not a regular file (a device such as /dev/zero, a FIFO, a directory), or one over a size cap."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def open_regular(path: str | os.PathLike[str], max_bytes: int) -> BinaryIO:
    """``path`` opened for reading bytes, only if it is a regular file of at most ``max_bytes``: `NotRegular`
    otherwise. Opened without blocking, so a FIFO with no writer is refused at once instead of hanging the reader,
    and checked on the open file, so nothing can be swapped in between the check and the read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(errno.EINVAL, "not a regular file", str(path))
        if st.st_size > max_bytes:
            raise NotRegular(errno.EFBIG, f"{st.st_size:,} bytes, over the {max_bytes:,}-byte limit", str(path))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


class DropOnBrokenPipe:
    """A standard stream whose reader may go away (``fcb eval ... 2>&1 | head -1``): once a write or flush finds the
    pipe broken, the stream's descriptor is pointed at /dev/null and what follows is dropped, so that progress and
    summaries never stop the work they report on. Everything else is the wrapped stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.dropped = False

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._drop()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._drop()

    def _drop(self) -> None:
        # the descriptor, not only this object: the interpreter's own flush at exit and anything that writes to
        # the descriptor directly (a signal handler's os.write) must not meet the broken pipe either
        self.dropped = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, self._stream.fileno())
        finally:
            os.close(devnull)
        with contextlib.suppress(BrokenPipeError):
            self._stream.flush()  # what was buffered goes to /dev/null now

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def drop_output_on_broken_pipe() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` in `DropOnBrokenPipe` (once)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, DropOnBrokenPipe):
            with contextlib.suppress(AttributeError, OSError, ValueError):
                stream.fileno()  # only a stream on a descriptor can be pointed elsewhere
                setattr(sys, name, DropOnBrokenPipe(stream))


def read_regular(path: str | os.PathLike[str], max_bytes: int) -> bytes:
    """The whole content of a regular file of at most ``max_bytes`` (`open_regular`); a file that grew past the cap
    while it was read is refused too."""
    parts, size = [], 0
    with open_regular(path, max_bytes) as f:
        while block := f.read(1 << 20):  # in blocks: read(max_bytes) would reserve max_bytes of memory at once
            size += len(block)
            if size > max_bytes:
                raise NotRegular(errno.EFBIG, f"over the {max_bytes:,}-byte limit", str(path))
            parts.append(block)
    return b"".join(parts)


def shell_path(path: str | os.PathLike[str]) -> str:
    """A path as it is typed in a suggested command (``fcb eval --resume 'results/my run'``): quoted when a shell
    would split or expand it, as it is otherwise."""
    return shlex.quote(str(path))
