"""``fcb board``: one self-contained HTML page over many runs, per data set: the leaderboard with intervals and
significance ranks (and the ranking on the natural cases beside it), a detector x category heatmap of accuracy, and
a case table across detectors with filters, each case opening with its text and every detector's reply.

As ``report.html`` (`harness.report.html`): no network, no other file; style and script inline, the data as one
gzip-compressed JSON block unpacked by the browser (`pack`), the case table drawn a page of rows at a time. The
static parts (tables, heatmap) are written here; ``harness/data/board.js`` draws the case table from the data
`harness.leaderboard.board` computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from harness.files import atomic_write
from harness.leaderboard.board import DataSetView, board_views
from harness.leaderboard.render import header, method_text, row_cells
from harness.leaderboard.runs import Run
from harness.report.html import esc
from harness.report.packing import pack
from harness.tables import figure

BOARD_HTML = "board.html"


def _asset(name: str) -> str:
    return (resources.files("harness") / "data" / name).read_text(encoding="utf-8")


def leaderboard_table(view: DataSetView) -> str:
    """The board as ``fcb leaderboard`` ranks it, with a column of links to each run's report."""
    board = view.board
    links = {id(run): entry for run, entry in zip(view.runs, view.data["runs"], strict=True)}
    head = "".join(f"<th>{esc(h)}</th>" for h in [*header(board), "report"])
    body = []
    for row in board.rows:
        cells = "".join(f"<td>{esc(c)}</td>" for c in row_cells(row, board))
        reports = [links[id(run)] for run in row.runs]
        shown = " ".join(
            f'<a href="{esc(e["report"])}">{esc(Path(e["path"]).name)}</a>' if e["report"] else esc(e["path"])
            for e in reports
        )
        body.append(f"<tr>{cells}<td>{shown}</td></tr>")
    return f'<table class="num leaderboard"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def natural_table(view: DataSetView) -> str:
    """The ranked detectors on the natural cases alone, or a note why there is no such ranking."""
    if not view.natural:
        why = "no case carries an origin tag" if view.data["origin"] is None else "no case of origin natural"
        return f"<p class='note natural-none'>Natural cases only: {why}.</p>"
    n = view.natural[0]["cases"]
    head = "".join(f"<th>{h}</th>" for h in ("rank", "detector", "macro_f1 [95% CI]", "accuracy", "errors"))
    rows = []
    for r in view.natural:
        ci = r["macro_f1_ci"]
        f1 = figure(r["macro_f1"]) + (f" [{figure(ci[0])}, {figure(ci[1])}]" if ci else "")
        cells = [r.get("rank", "-"), r["detector"], f1, figure(r["accuracy"]), r["errors"]]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    return (f"<table class='num natural'><caption>natural cases only (origin natural, {n} cases)</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def colour(acc: float) -> str:
    """A cell's colour: hue from red (accuracy 0) through yellow to green (1), lighter in the middle."""
    return f"hsl({120 * acc:.0f},65%,{82 - 12 * abs(acc - 0.5):.0f}%)"


def heatmap_table(view: DataSetView, ds: int) -> str:
    """Runs (rows, in board order) x categories: accuracy in the cell, its colour from red (0) to green (1); a click
    lists the category's cases below."""
    cats = view.data["cats"]
    head = "".join(f"<th>{esc(c)}</th>" for c in cats)
    rows = []
    for k, (entry, cells) in enumerate(zip(view.data["runs"], view.heatmap, strict=True)):
        tds = []
        for c, (right, n) in enumerate(cells):
            acc = right / n if n else None
            style = "" if acc is None else f' style="background:{colour(acc)}"'
            tds.append(
                f'<td class="hm" data-ds="{ds}" data-run="{k}" data-cat="{c}" data-right="{right}" data-n="{n}" '
                f'title="{esc(entry["label"])} on {esc(cats[c])}: {right} of {n} right"{style}>{figure(acc)}</td>'
            )
        rows.append(f"<tr><th>{esc(entry['label'])}</th>{''.join(tds)}</tr>")
    return (f'<table class="board-heatmap"><thead><tr><th>detector \\ category</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")  # fmt: skip


def dataset_section(view: DataSetView, ds: int) -> str:
    b = view.board
    ds_name, sha = b.dataset["name"], b.dataset["sha256"][:12]
    title = f"{ds_name} (sha256 {sha}, {len(view.data['ids'])} cases, {len(view.runs)} runs)"
    notes = "".join(f"<p class='note'>{esc(n)}</p>" for n in view.notes)
    return (
        f'<section class="ds" data-ds="{ds}"{" hidden" if ds else ""}><h2>{esc(title)}</h2>'
        f"<h3>Leaderboard</h3>{leaderboard_table(view)}<p class='note'>{esc(method_text(b))}</p>"
        f"{natural_table(view)}"
        f"<h3>Accuracy by category</h3>{heatmap_table(view, ds)}"
        "<p class='note'>Share of each category's cases a detector got right (an error or a case it did not finish "
        f"counts as wrong). Click a cell to list the category's cases below.</p>{notes}</section>"
    )


def board_html(views: Sequence[DataSetView], title: str = "fcb board") -> str:
    """The whole page."""
    names = [f"{v.board.dataset['name']} ({v.board.dataset['sha256'][:8]})" for v in views]
    picker = "".join(f'<option value="{k}">{esc(n)}</option>' for k, n in enumerate(names))
    sections = "".join(dataset_section(v, k) for k, v in enumerate(views))
    data = {"datasets": [v.data for v in views]}
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:; connect-src 'none'\">"
        f"<title>{esc(title)}</title><style>{_asset('report.css')}{_asset('board.css')}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><ul class='meta'><li>{len(views)} data set(s), "
        f"{sum(len(v.runs) for v in views)} run(s)</li></ul></header><main>"
        f"<label class='ds-pick'>data set <select id='ds'>{picker}</select></label>{sections}"
        "<h2 id='explorer-title'>Cases</h2><div id='explorer'><p id='loading'>Loading the cases...</p></div>"
        "<aside id='detail' hidden></aside></main>"
        f"<script type='application/octet-stream' id='board-data'>{pack(data)}</script>"
        f"<script>{_asset('board.js')}</script></body></html>\n"
    )


def write_board(
    runs: Sequence[Run], out: str | Path, *, n_boot: int = 1000, seed: int = 0, strongest: int = 3
) -> tuple[Path, list[str]]:
    """Write the page for ``runs`` to ``out`` (atomically); returns its path and the notes on what it lacks (no
    case text, no items analysis)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    views = board_views(runs, out.resolve().parent, n_boot=n_boot, seed=seed, strongest=strongest)
    atomic_write(out, board_html(views).encode())
    notes: list[Any] = [f"{v.board.dataset['name']}: {n}" for v in views for n in v.notes]
    return out, notes
