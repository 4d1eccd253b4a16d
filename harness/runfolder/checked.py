"""A JSON file of the run folder read and checked against its document's definition (`harness.documents.check`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from harness.documents import check
from harness.errors import RunLoadError
from harness.files import read_regular

MAX_DOCUMENT_BYTES = 1 << 30
"""The largest JSON document read back (1 GiB)."""


def read_document(path: Path, name: str, missing: str = "") -> Any:
    """The JSON document at ``path``, checked against definition ``name``. `RunLoadError` names the file and the
    first wrong field when the file is missing (``missing``: what to add to the message), unreadable, not JSON, or
    breaks the definition."""
    try:
        data = orjson.loads(read_regular(path, MAX_DOCUMENT_BYTES))  # never a device or a FIFO put in its place
    except FileNotFoundError:
        raise RunLoadError(f"{path}: no such file" + (f"; {missing}" if missing else "")) from None
    except OSError as exc:
        raise RunLoadError(f"{path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise RunLoadError(f"{path}: (file): not JSON: {exc}") from None
    if problems := check(name, data):
        field, message = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RunLoadError(f"{path}: {field}: {message}{more}")
    return data
