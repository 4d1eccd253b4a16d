"""What `RunResult.frame` shows beyond the labels, read on demand: each case's question (from the cases file, through
`harness.runfolder.cases`: only while it is still the file the run read, and only the very case the run sent) and the
detector's reply and ``reason`` (from the journal)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.errors import RunLoadError
from harness.runfolder.cases import case_texts
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
        texts, _ = case_texts(cases, {cid: rec["hash"] for cid, rec in records.items()}, sha256)
        for cid, case in texts.items():
            if isinstance(case.get("question"), str):
                out[cid]["question"] = case["question"]
        return out

    return read
