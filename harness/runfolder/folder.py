"""Naming a new run folder, and refusing one that already holds a run."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import RunMismatchError
from harness.runfolder.names import PREDICTIONS
from harness.spec import parse_spec


def _slug(spec: str) -> str:
    # a URL loses its scheme; llm:MODEL@URL keeps its model name in front
    shown = parse_spec(parse_spec(spec).display)  # the redacted spec, parsed: its target has no prefix
    text = shown.target if shown.kind == "llm" else shown.text
    text = re.sub(r"[A-Za-z][A-Za-z0-9+.-]*://", "", text)
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:40] or "detector"


def new_run_dir(root: str, spec: str) -> Path:
    """A fresh folder ``ROOT/<UTC time>-<detector>``, with a numeric suffix if that name is taken."""
    base = Path(root) / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{_slug(spec)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


def refuse_taken(run_dir: Path) -> None:
    """`RunMismatchError` when ``run_dir`` already holds a run (a journal): a new run never writes into it."""
    if (run_dir / PREDICTIONS).exists():
        raise RunMismatchError(f"{run_dir} already holds a run; use --resume {run_dir} to continue it")
