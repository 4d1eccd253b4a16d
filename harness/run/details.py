"""What `RunResult.frame` shows beyond the labels, read on demand: each case's question (from the cases file, while
it is still the file the run read) and the detector's reply and ``reason`` (from the journal)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import orjson

from harness.cases.lines import file_sha256
from harness.errors import RunLoadError
from harness.runfolder.read import case_records

Details = Callable[[], Mapping[str, Mapping[str, Any]]]


def case_details(run_dir: str | Path, cases: str | Path, sha256: str) -> Details:
    """A reader of the per-case details of the run in ``run_dir``, made from the cases file ``cases`` whose sha256
    was ``sha256`` when the run read it (a file changed since gives no question: its text may not be the one the
    detector saw)."""

    def read() -> dict[str, dict[str, Any]]:
        try:
            records = case_records(run_dir)
        except RunLoadError:  # a run folder broken since: the figures stand, the details are left out
            records = {}
        out: dict[str, dict[str, Any]] = {}
        for cid, rec in records.items():
            reply = rec.get("response")
            raw = rec["error"].get("raw") if rec["error"] else None
            out[cid] = {"reply": reply if reply is not None else raw,
                        "reason": reply.get("reason") if isinstance(reply, dict) else None}  # fmt: skip
        for cid, question in _questions(Path(cases), sha256, set(out)):
            out[cid]["question"] = question
        return out

    return read


def _questions(path: Path, sha256: str, ids: set[str]) -> list[tuple[str, str]]:
    """(id, question) of the cases in ``ids``, when ``path`` is still the file whose sha256 the run recorded."""
    try:
        if not path.is_file() or file_sha256(path) != sha256:
            return []
        found = []
        with path.open("rb") as f:
            for line in f:
                try:
                    case = orjson.loads(line)
                except orjson.JSONDecodeError:  # an invalid line the run skipped
                    continue
                if isinstance(case, dict) and case.get("id") in ids and isinstance(case.get("question"), str):
                    found.append((case["id"], case["question"]))
        return found
    except OSError:
        return []
