"""Naming a new run folder, and refusing one that already holds a run."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from harness.errors import RunLoadError, RunMismatchError
from harness.files import shell_path
from harness.redact import redact_spec
from harness.runfolder.names import MANIFEST, METRICS, PREDICTIONS, REPORT, REPORT_HTML, SCOPE
from harness.runfolder.read import read_metrics
from harness.spec import DetectorSpec


def _slug(text: str) -> str:
    text = re.sub(r"[A-Za-z][A-Za-z0-9+.-]*://", "", text)  # a URL loses its scheme
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:40] or "detector"


def new_run_dir(root: str, spec: DetectorSpec, name: str | None = None) -> Path:
    """A fresh folder ``ROOT/<UTC time>-<detector>`` (the run's ``name``, or the spec as `DetectorSpec.short` shows
    it: llm:MODEL@URL with its model name in front), with a numeric suffix if that name is taken."""
    shown = redact_spec(name) if name else spec.short
    base = Path(root) / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{_slug(shown)}"
    path, n = base, 1
    while path.exists():
        n += 1
        path = base.with_name(f"{base.name}-{n}")
    return path


RUN_FILES = (PREDICTIONS, MANIFEST, SCOPE, METRICS, REPORT, REPORT_HTML)
"""What a run writes into its folder (the lock aside): what ``--overwrite`` removes, and nothing else."""


def refuse_taken(run_dir: Path) -> None:
    """`RunMismatchError` when ``run_dir`` already holds a run (a journal): a new run never writes into it. The
    message says which ways out there are: resuming fits an unfinished run of the same detector only."""
    if (run_dir / PREDICTIONS).exists():
        finished = _complete(run_dir)
        state = "a finished run" if finished else "an unfinished run"
        resume = "" if finished else f"fcb eval --resume {shell_path(run_dir)} continues it, "
        raise RunMismatchError(
            f"{run_dir} already holds {state}; {resume}--overwrite replaces it, or choose another --out"
        )


def _complete(run_dir: Path) -> bool:
    """Whether the run in ``run_dir`` counted every case (a metrics.json that says so); False when unreadable."""
    try:
        return read_metrics(run_dir)["complete"]
    except RunLoadError:
        return False


def clear_run(run_dir: Path) -> None:
    """Remove the run that ``run_dir`` holds (its `RUN_FILES`), for ``--overwrite``; other files stay. The caller
    holds the folder's lock, so no other process is writing them."""
    for name in RUN_FILES:
        (run_dir / name).unlink(missing_ok=True)
