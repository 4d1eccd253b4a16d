"""Reading a cases file line by line, in blocks, with a bound: a line over `MAX_LINE_BYTES` is counted and skipped
without being held, so no input can exhaust memory."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterator
from typing import IO, Any

MAX_LINE_BYTES = 4 * 1024 * 1024  # the largest case the schema allows is well under 3 MiB of JSON
READ_BLOCK = 1 << 20


class NotAFile(OSError):
    """A path that is neither a regular file nor a pipe (a device such as /dev/zero, a directory, a socket)."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def open_input(path: str | os.PathLike[str]) -> IO[bytes]:
    """The file at ``path`` opened for reading bytes; `NotAFile` unless it is a regular file or a pipe."""
    f = open(path, "rb")  # noqa: SIM115 - closed by the caller
    mode = os.fstat(f.fileno()).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
        f.close()
        raise NotAFile(errno.EINVAL, "not a regular file or a pipe; give a cases.jsonl file", str(path))
    return f


def raw_lines(f: IO[bytes], digest: Any = None) -> Iterator[tuple[int, bytes, int]]:
    """(line number, line, its length in bytes) for each line, read in blocks. A line over `MAX_LINE_BYTES` comes
    back as ``b""`` with its true length: counted and skipped, never held. ``digest`` sees every byte. From a pipe,
    a block is what the writer has written so far (``read1``): a line is read as soon as it is whole, never held
    back until a whole block has come (a run sends its first case while the rest is still being written)."""
    line_no, parts, size, too_long = 0, [], 0, False
    read = getattr(f, "read1", f.read)
    while block := read(READ_BLOCK):
        if digest is not None:
            digest.update(block)
        start = 0
        while start < len(block):
            end = block.find(b"\n", start)
            piece = block[start:] if end < 0 else block[start : end + 1]
            size += len(piece)
            if not too_long:
                parts.append(piece)
                if size > MAX_LINE_BYTES + 2:  # + "\r\n": a line at the limit is still read whole and judged
                    parts, too_long = [], True
            if end < 0:
                break
            line_no += 1
            yield line_no, b"".join(parts), size - too_long  # a skipped line's length without its newline
            parts, size, too_long = [], 0, False
            start = end + 1
    if size:
        yield line_no + 1, b"".join(parts), size


def too_long_message(size: int) -> str:
    """The problem a line over the limit is reported as."""
    return f"line is {size:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
