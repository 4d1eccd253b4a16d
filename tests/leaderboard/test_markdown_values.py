"""Markdown made for pull-request comments shows what run folders hold as text (issue 24, item 18): detector names,
categories and case ids with HTML, links, code spans, table pipes or mathematics in them are rendered (by a
CommonMark parser with tables and raw HTML on, as GitHub's) to themselves, never to an image, a link or a cell."""

from __future__ import annotations

import copy
import html
import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import run_cli
from markdown_it import MarkdownIt
from runkit import ids, make_run

from harness.report.markdown import md_text

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

IMAGE = "<img src=http://x.example/a.png>"
LINK = "[click](http://evil.example) | `tick` $x$ **b**"
CATEGORY = "<img src=http://x.example/c.png>"


def _render(markdown: str) -> str:
    return MarkdownIt("commonmark", {"html": True}).enable("table").render(markdown)


def _hostile_runs(tmp_path: Path) -> tuple[Path, Path]:
    cases = write_cases(tmp_path / "cases.jsonl", 40)
    base = make_run(cases, tmp_path / "results", ids(1, 30), IMAGE)
    new = make_run(cases, tmp_path / "results", ids(11, 40), LINK)
    for run in (base, new):  # a hand-made run folder: compare reads categories from the journal
        journal = run / "predictions.jsonl"
        records = [json.loads(line) for line in journal.read_text().splitlines()]
        for rec in records:
            if rec["id"] == "FCB-0001":
                rec["category"] = CATEGORY
        journal.write_text("".join(json.dumps(r) + "\n" for r in records))
        _agree(run, records)
    return base, new


def _agree(run: Path, records: list[dict]) -> None:
    """Make ``metrics.json``'s per-category block agree with the edited journal, as a forger would (readers refuse
    a run whose figures do not follow from its journal)."""
    doc = json.loads((run / "metrics.json").read_text())
    blocks = doc["metrics"]["per_category"]
    template = next(iter(blocks.values()))
    by_category: dict[str, list[dict]] = {}
    for rec in records:
        by_category.setdefault(rec["category"], []).append(rec)
    doc["metrics"]["per_category"] = {}
    for category, recs in by_category.items():
        block = copy.deepcopy(blocks.get(category, template))
        right = sum(r["risk"] == r["expected"] for r in recs)
        block.update(n=len(recs), correct=right, accuracy=right / len(recs))
        kinds = ("low", "medium", "high", "error")
        block["predicted"] = {k: sum((r["risk"] or "error") == k for r in recs) for k in kinds}
        doc["metrics"]["per_category"][category] = block
    (run / "metrics.json").write_text(json.dumps(doc))


def _assert_inert(page: str) -> None:
    assert "<img" not in page and "<a " not in page and "<code>tick</code>" not in page, page


def test_compare_and_leaderboard_markdown_show_run_values_as_text(tmp_path: Path) -> None:
    base, new = _hostile_runs(tmp_path)
    compare = run_cli("compare", str(base), str(new), "--format", "md")
    assert compare.returncode in (0, 1), compare.stderr
    page = _render(compare.stdout)
    _assert_inert(page)
    for value in (IMAGE, LINK, CATEGORY):
        assert html.escape(value, quote=False) in page, value  # shown as written
    assert f"<li>FCB-0001 ({html.escape(CATEGORY, quote=False)})</li>" in page
    assert f"<td>{html.escape(CATEGORY, quote=False)}</td>" in page  # one cell: the pipe split nothing

    board = run_cli("leaderboard", str(tmp_path / "results"), "--format", "md")
    assert board.returncode == 0, board.stderr
    page = _render(board.stdout)
    _assert_inert(page)
    assert f"<td>{html.escape(LINK, quote=False)}</td>" in page


@pytest.mark.parametrize("value", [IMAGE, LINK, "a\\b", "tab\there", "\x1b[31mred", "_x_ ~~y~~ &amp; :x:"])
def test_md_text_renders_to_itself(value: str) -> None:
    shown = value.replace("\t", "\\t").replace("\x1b", "\\x1b")  # controls as escapes
    assert _render(md_text(value)) == f"<p>{html.escape(shown, quote=False)}</p>\n"


HOSTILE_DETECTOR = """
def fails_loudly(request):
    raise RuntimeError("<img src=http://x.example/e.png> [see](http://evil.example) | `code` \\x1b[31m")
"""


def test_report_md_shows_a_detectors_message_and_the_run_name_as_text(tmp_path: Path) -> None:
    (tmp_path / "hostile.py").write_text(HOSTILE_DETECTOR)
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    out = tmp_path / "run"
    args = ("-d", f"{tmp_path / 'hostile.py'}:fails_loudly", "--name", IMAGE, "--no-preflight", "--bootstrap", "0")
    proc = run_cli("eval", str(cases), *args, "--out", str(out), "-q")
    assert proc.returncode == 1, proc.stderr  # every case errored
    page = _render((out / "report.md").read_text())
    _assert_inert(page)
    assert "<a " not in page and "\x1b" not in page
    assert html.escape(f"detector: {IMAGE}", quote=False) in page
    assert html.escape("RuntimeError: <img src=http://x.example/e.png> [see](http://evil.example)", quote=False) in page
    summary = run_cli("eval", str(cases), *args, "--out", str(tmp_path / "again"))
    assert "\x1b" not in summary.stdout and "\\x1b[31m" in summary.stdout  # the terminal summary: an escape shown
