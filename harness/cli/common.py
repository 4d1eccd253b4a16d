"""What the ``fcb`` commands share besides their arguments: the exit codes (`harness.errors`) and the ways they
print."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from harness.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, EXIT_USAGE  # defined there

__all__ = ["EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "default_cases",
           "print_problems", "write_or_print"]  # fmt: skip


def print_problems(problems: Sequence[Any], limit: int | None = None, file: Any = None) -> None:
    out = file or sys.stderr
    for p in problems[:limit]:
        print(p, file=out)
    if limit is not None and len(problems) > limit:
        print(f"... and {len(problems) - limit} more", file=out)


def default_cases(path: str | None) -> str:
    """PATH, or the embedded data set's file when none is given."""
    if path:
        return path
    from harness.cases.reader import embedded_cases_path

    return str(embedded_cases_path())


def write_or_print(text: str, out: str | None) -> None:
    """Write TEXT to the file OUT (saying so on standard error), or print it when OUT is not given."""
    if out:
        from harness.files import atomic_write

        atomic_write(out, text.encode())
        print(f"wrote {out}", file=sys.stderr)
    else:
        print(text)
