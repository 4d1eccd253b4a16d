"""A run's cases read back, in one place: the cases file the run read, used only while it is still that file (its
sha256 as the run recorded it) and only for the very cases the run sent (each case's content hash as its journal
record holds it). Streamed one bounded line at a time from a regular file of bounded size, or taken unparsed from
the run's own scan of the file while the run is still going. Used by report.html, ``RunResult.frame``, ``fcb board``
and ``fcb export``."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import orjson

from harness.cases.lines import raw_lines
from harness.cases.reader import Scan
from harness.cases.validate import content_hash
from harness.files import open_regular

CASES_MAX_BYTES = 1 << 30
"""The largest cases file read for its text (1 GiB): far above any real data set, far below a page's reach."""


WINDOW = 1 << 15
"""Bytes of the spool read at once by `SpooledTexts` (a case longer than this is read whole)."""


class SpooledTexts(Mapping[str, orjson.Fragment]):
    """The cases among ``wanted`` (id -> content hash, as `case_texts` takes it) from the run's own scan of the file,
    once the scan is whole, as the JSON text they were read in, each read from the scan's spool when it is asked for:
    nothing held, parsed or hashed again (the scan knows each line's id and hash), and ``orjson.dumps`` writes a
    `orjson.Fragment` as it is. The spool is read a window at a time (`WINDOW`, one ``pread``): the cases asked for in
    file order cost a read per window, in any other order at most one a case."""

    def __init__(self, scanned: Scan, wanted: Mapping[str, str | None]) -> None:
        if scanned.spool is None:
            raise ValueError("scan(path, spool=True) keeps the cases; this scan did not")
        scanned.spool.flush()
        self._fd = scanned.spool.fileno()
        starts = sorted(scanned.offsets.values())  # each line runs to the next one's start, its newline left out
        ends = dict(zip(starts, [*starts[1:], os.fstat(self._fd).st_size], strict=True))
        self._spans = {
            lab.case_id: (start, ends[start] - start - 1)
            for lab in scanned.labels
            if lab.case_id in wanted
            and wanted[lab.case_id] in (None, lab.content_hash)
            and (start := scanned.offsets[lab.line]) is not None
        }
        self._window_start, self._window = 0, b""

    def __getitem__(self, case_id: str) -> orjson.Fragment:
        start, size = self._spans[case_id]
        at = start - self._window_start
        if at < 0 or at + size > len(self._window):
            self._window_start, self._window, at = start, os.pread(self._fd, max(size, WINDOW), start), 0
        return orjson.Fragment(self._window[at : at + size])

    def __iter__(self) -> Iterator[str]:
        return iter(self._spans)

    def __len__(self) -> int:
        return len(self._spans)


def case_texts(
    path: str | os.PathLike[str] | None, wanted: Mapping[str, str | None], sha256: str | None = None
) -> tuple[dict[str, dict[str, Any]], str]:
    """(the parsed cases among ``wanted`` by id, a note when the text cannot be used); streamed, one bounded line
    at a time. ``wanted`` maps each id to the content hash its journal record holds (None: any line with the id).

    The run itself takes its cases from its own scan of the file (`SpooledTexts`), so that a pipe is never read
    twice. A path is read only if it is a regular file under `CASES_MAX_BYTES` (never a device, a FIFO or standard
    input), and its text is used only if the whole file has the ``sha256`` the run recorded: a changed file gives no
    text at all, never another run's cases under this run's predictions. Every note that means "no text" starts
    with "case text unavailable"."""
    found: dict[str, dict[str, Any]] = {}
    if not path:
        return found, "the run does not name its cases file"
    digest = hashlib.sha256()
    try:
        with open_regular(path, CASES_MAX_BYTES) as f:
            _collect(raw_lines(f, digest), wanted, found)
    except OSError as exc:
        return {}, f"case text unavailable: {path}: {exc.strerror or exc}"
    if sha256 and digest.hexdigest() != sha256:
        return {}, (f"case text unavailable: {path} is not the cases file this run read (its sha256 is "
                    f"{digest.hexdigest()[:12]}, the run's {sha256[:12]}): it changed since the run")  # fmt: skip
    return found, ""


def _collect(
    lines: Iterable[tuple[int, bytes, int]], wanted: Mapping[str, str | None], found: dict[str, dict[str, Any]]
) -> None:
    for _, raw, _ in lines:
        try:
            case = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue  # invalid lines (and lines over the length cap, read as b"") were skipped by the run too
        if not isinstance(case, dict) or not isinstance(case.get("id"), str) or case["id"] not in wanted:
            continue
        expected = wanted[case["id"]]
        if case["id"] not in found and expected in (None, content_hash(case)):
            found[case["id"]] = case  # the very case the run sent: an invalid line with the same id is passed over


def file_sha256_of(dataset: Mapping[str, Any]) -> str | None:
    """The sha256 of the whole cases file a run read, from its metrics document's ``dataset`` block (older runs
    recorded only ``sha256``, which was the file's for a run of the whole file)."""
    return dataset.get("file_sha256") or dataset.get("sha256")
