"""``scope.json``: the (id, content hash) of every case a run counts, so that readers of the run folder
(leaderboards, compare) count the journal lines the run itself counts and no other."""

from __future__ import annotations

from pathlib import Path

import orjson

from harness.documents import ScopeDocument
from harness.files import atomic_write
from harness.runfolder.checked import read_document
from harness.runfolder.names import SCOPE
from harness.types import CaseLabels


def write_scope(run_dir: str | Path, labels: list[CaseLabels]) -> None:
    """Write ``scope.json`` for the cases ``labels``."""
    atomic_write(Path(run_dir) / SCOPE, orjson.dumps({"cases": [[lab.case_id, lab.content_hash] for lab in labels]}))


def read_scope(run_dir: str | Path) -> set[tuple[str, str]] | None:
    """The (id, content hash) pairs a run counts, checked (`RunLoadError` names the file and field); None for a run
    written before scopes were kept."""
    path = Path(run_dir) / SCOPE
    if not path.exists():
        return None
    doc: ScopeDocument = read_document(path, "scope")
    return {(case_id, digest) for case_id, digest in doc["cases"]}
