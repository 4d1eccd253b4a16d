"""What the ``fcb`` commands share besides their arguments: the exit codes (`harness.errors`), the ways they
print, and the one line that names a missing extra."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from harness.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK, EXIT_USAGE, UsageError

__all__ = ["EXIT_INTERNAL", "EXIT_INTERRUPTED", "EXIT_INVALID", "EXIT_OK", "EXIT_USAGE", "default_cases",
           "extra_needed", "print_problems", "write_or_print"]  # fmt: skip

OUR_PACKAGES = ("harness", "fcb_datasets")


@contextlib.contextmanager
def extra_needed(extra: str) -> Iterator[None]:
    """Imports in the block that fail for want of a third-party module end the command with one line naming the
    extra that brings it (``fcb build-dataset: needs the datasets extra ...``); a module of ours that fails to import
    is a bug, and stays one."""
    try:
        yield
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] in OUR_PACKAGES:
            raise
        raise UsageError(
            f"needs the {extra} extra ({exc.name} is not installed): pip install 'fcb-harness[{extra}]'"
        ) from None


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
