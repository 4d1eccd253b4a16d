"""A fresh run writes report.html from the records it journaled and the cases it read, without reading either back:
the page must be the one ``fcb view`` writes from the finished run folder (which reads the journal, its scope and
the cases file again), for a plain run and for one with epochs, probes, errors and odd replies: the same page around
the same explorer data (the run packs each case as the line it read, ``fcb view`` as it serialises it again, so
the packed bytes may differ where the data does not)."""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from casegen import write_cases
from conftest import run_cli

# errors on three answers; a reply with fields of every kind (a float, a list, nested objects, text to escape)
# and its verdicts change from call to call, so that a case's epochs differ and the reducer decides
DETECTOR = """
import itertools
CALLS = itertools.count()
def assess(request):
    n, call = len(request["answers"]), next(CALLS)
    if n == 3:
        raise RuntimeError("refuses three answers <b>&</b>")
    return {"false_consensus_risk": ("high", "medium", "low")[call % 3], "risk_score": (call % 7) / 7,
            "reason": "saw " + str(n), "extra": {"list": [1, 2.5, None, True], "text": "</script>\\u2028"}}
"""


PACKED = re.compile(rb"(<script type='application/octet-stream' id='cases-data'>)([^<]*)(</script>)")


def _page(path: Path) -> tuple[bytes, Any]:
    """(the page with its explorer data taken out, that data unpacked)."""
    html = path.read_bytes()
    found = PACKED.search(html)
    assert found is not None
    return PACKED.sub(rb"\1\3", html), orjson.loads(gzip.decompress(base64.b64decode(found.group(2))))


@pytest.mark.parametrize("extra", [[], ["--epochs", "2", "--epoch-reducer", "first", "--probe", "order"]])
def test_the_run_s_page_is_the_page_fcb_view_writes_from_its_folder(tmp_path: Path, extra: list[str]) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    detector = tmp_path / "det.py"
    detector.write_text(DETECTOR)
    run = tmp_path / "run"
    done = run_cli("eval", str(cases), "-d", f"{detector}:assess", "--out", str(run), "-q", "--bootstrap", "20",
                   "--no-preflight", *extra)  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = _page(run / "report.html")
    rows = written[1]["cases"]
    assert len(rows) == 30 and all("case" in row for row in rows)  # every case with its text
    assert any(row["p"][0]["e"] == "detector_exception" for row in rows)  # and the errors among them
    (run / "report.html").unlink()
    viewed = run_cli("view", str(run), "--no-open")
    assert viewed.returncode == 0, viewed.stderr
    assert _page(run / "report.html") == written


def test_a_resumed_run_reads_its_earlier_sessions_back(tmp_path: Path) -> None:
    """The second session did not write the first's records: its page holds them all, as ``fcb view``'s does."""
    cases = write_cases(tmp_path / "cases.jsonl", 12)
    detector = tmp_path / "det.py"
    detector.write_text(DETECTOR)
    run = tmp_path / "run"
    first = run_cli("eval", str(cases), "-d", f"{detector}:assess", "--out", str(run), "-q", "--limit", "5")
    assert first.returncode == 0, first.stderr
    lines = (run / "predictions.jsonl").read_bytes().splitlines()
    (run / "predictions.jsonl").write_bytes(b"\n".join(lines[:3]) + b"\n")  # as if stopped after three cases
    resumed = run_cli("eval", "--resume", str(run), "-q")
    assert resumed.returncode == 0, resumed.stderr
    written = _page(run / "report.html")
    assert len(written[1]["cases"]) == 5
    (run / "report.html").unlink()
    assert run_cli("view", str(run), "--no-open").returncode == 0
    assert _page(run / "report.html") == written
