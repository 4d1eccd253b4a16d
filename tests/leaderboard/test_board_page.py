"""``fcb board``'s static HTML (`harness.leaderboard.board_page`) from views built by hand: every table is parsed back
with `html.parser` and each cell compared with the figure it shows (worked out in the test: an accuracy as right / n
with three decimals, a heatmap colour from its formula), with the headings, captions and notes a reader reads."""

from __future__ import annotations

import base64
import gzip
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.leaderboard import board_page
from harness.leaderboard.board import DataSetView
from harness.leaderboard.board_page import (
    BOARD_HTML,
    board_html,
    colour,
    dataset_section,
    heatmap_table,
    leaderboard_table,
    natural_table,
    write_board,
)
from harness.leaderboard.rank import Board, Row
from harness.leaderboard.render import header, method_text, row_cells
from harness.leaderboard.runs import Run

SHA = "0123456789abcdef" * 4


def run(name: str, path: str) -> Run:
    doc = {"detector": {"spec": name}, "created": "2026-12-01T10:20:30+00:00", "metrics": {"n_cases": 6}}
    empty = np.array([], dtype=object)
    return Run(Path(path), doc, empty, empty, empty, empty)  # type: ignore[arg-type]


def values(f1: float, acc: float) -> dict[str, float | None]:
    keys = ["macro_f1_real", "macro_f1_natural", "high_risk_recall", "false_alarm_rate", "weighted_kappa",
            "error_rate", "operational.latency_s.p95", "consensus.balanced_accuracy", "ece", "ece_bins", "epoch_sd",
            "self_agreement", "order_flip_rate", "names_flip_rate", "runs_min", "runs_max", "vote_margin"]  # fmt: skip
    return dict.fromkeys(keys) | {"macro_f1": f1, "accuracy": acc, "high_risk_recall": 0.5, "false_alarm_rate": 0.25,
                                  "weighted_kappa": 0.125, "error_rate": 0.0}  # fmt: skip


def view(
    name: str = "set.jsonl", *, origin: Any = None, natural: list | None = None, notes: list | None = None
) -> DataSetView:
    """Two detectors on six cases of two categories: "good" with two runs (one with a report page, one without), "b<ad>"
    with one (a name to escape)."""
    good = [run("good", "/r/good-1"), run("good", "/r/good-2")]
    bad = [run("b<ad>", "/r/bad")]
    rows = [
        Row("good", good, values(0.75, 0.8), good[0], False, cis={"macro_f1": (0.5, 0.875)}, rank=1),
        Row("b<ad>", bad, values(0.5, 0.5), bad[0], False, rank=2),
    ]
    b = Board({"name": name, "sha256": SHA, "cases": 6}, "macro_f1",
              {"bootstrap_resamples": 100, "seed": 1, "alpha": 0.05, "include_incomplete": False},
              {"cases": 6, "by_category": {}}, rows)  # fmt: skip
    data = {
        "runs": [
            {"label": "good", "path": "/r/good-1", "report": "../r/good-1/report.html"},
            {"label": "good", "path": "/r/good-2", "report": None},
            {"label": "b<ad>", "path": "/r/bad", "report": "../r/bad/report.html?a&b"},
        ],
        "cats": ["echo", "fact<x>"],
        "ids": ["C-1", "C-2", "C-3", "C-4", "C-5", "C-6"],
        "origin": origin,
    }
    heat = [[(3, 4), (0, 2)], [(4, 4), (1, 2)], [(0, 0), (2, 2)]]
    return DataSetView(b, [*good, *bad], data, natural or [], heat, notes or [])


CONTAINERS = {"html", "head", "body", "header", "ul", "main", "section", "div", "aside", "select", "table", "thead",
              "tbody", "tr"}  # fmt: skip


class Page(HTMLParser):
    """Tables (class, caption, header cells, rows of (text, attributes)), links, and the other elements' text."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self.elements: list[tuple[str, dict[str, str | None], str]] = []  # (tag, attributes, text) outside cells
        self.stack: list[tuple[str, dict[str, str | None], list[str]]] = []
        self.links: list[tuple[str | None, str]] = []
        self.stray: list[str] = []  # text straight inside an element that holds other elements, never text

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"class": a.get("class"), "caption": None, "head": [], "rows": [], "heads": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
            self.tables[-1]["heads"].append([])
        if tag in ("meta", "img"):
            self.elements.append((tag, a, ""))
        if tag not in ("meta", "img", "br"):
            self.stack.append((tag, a, []))

    def handle_data(self, data: str) -> None:
        for _, _, text in self.stack:
            text.append(data)
        if self.stack and self.stack[-1][0] in CONTAINERS and data.strip():
            self.stray.append(data)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            name, a, parts = self.stack.pop()
            if name == tag:
                break
        text = "".join(parts)
        if tag == "a":
            self.links.append((a.get("href"), text))
        if self.tables and tag in ("th", "td", "caption"):
            t = self.tables[-1]
            if tag == "caption":
                t["caption"] = text
            elif tag == "th" and not any(t["rows"][-1]) and len(t["rows"]) == 1:
                t["head"].append(text)
            elif tag == "th":
                t["heads"][-1].append(text)
            else:
                t["rows"][-1].append((text, a))
        elif tag not in ("tr", "thead", "tbody", "table"):
            self.elements.append((tag, a, text))


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    assert p.stray == []  # nothing between the tags but the cells', headings' and notes' text
    for t in p.tables:
        t["rows"] = [r for r in t["rows"] if r]
        t["heads"] = [h for h in t["heads"] if h]
    return p


def texts(page: Page, tag: str) -> list[str]:
    return [text for name, _, text in page.elements if name == tag]


# ---- the leaderboard ----


def test_the_leaderboard_table_is_fcb_leaderboards_with_a_report_column() -> None:
    v = view()
    html = leaderboard_table(v)
    page = parse(html)
    (t,) = page.tables
    assert t["class"] == "num leaderboard"
    assert t["head"] == [*header(v.board), "report"]
    assert t["head"][:3] == ["rank", "detector", "macro_f1 [95% CI]"] and t["head"][-2:] == ["date", "report"]
    rows = [[c[0] for c in r] for r in t["rows"]]
    for got, row in zip(rows, v.board.rows, strict=True):
        assert got[:-1] == row_cells(row, v.board)
    # by hand: good ranks 1 with its interval; 0.8 -> 80.0%; b<ad> 2, 0.5 -> 50.0%
    assert rows[0][:4] == ["1", "good", "0.750 [0.500, 0.875]", "80.0%"]
    assert rows[1][:4] == ["2", "b<ad>", "0.500", "50.0%"]
    # good's two runs: the first links its report (named by its folder), the second has none: its path as text
    assert rows[0][-1] == "good-1 /r/good-2" and rows[1][-1] == "bad"
    assert page.links == [("../r/good-1/report.html", "good-1"), ("../r/bad/report.html?a&b", "bad")]
    assert "b&lt;ad&gt;" in html and "?a&amp;b" in html and "<ad>" not in html


# ---- the natural ranking ----


def test_no_natural_ranking_says_why() -> None:
    none = parse(natural_table(view(origin=None)))
    assert none.tables == []
    assert none.elements == [
        ("p", {"class": "note natural-none"}, "Natural cases only: no case carries an origin tag.")
    ]
    tagged = parse(natural_table(view(origin=["constructed"] * 6)))
    assert texts(tagged, "p") == ["Natural cases only: no case of origin natural."]


def test_the_natural_ranking_table_by_hand() -> None:
    natural = [
        {"rank": "1", "detector": "good", "cases": 4, "macro_f1": 0.625, "macro_f1_ci": [0.25, 1.0],
         "accuracy": 0.75, "errors": 0},
        {"detector": "b<ad>", "cases": 4, "macro_f1": 0.125, "macro_f1_ci": None, "accuracy": 0.25, "errors": 2},
    ]  # fmt: skip
    html = natural_table(view(origin=["natural"] * 6, natural=natural))
    (t,) = parse(html).tables
    assert t["class"] == "num natural" and t["caption"] == "natural cases only (origin natural, 4 cases)"
    assert t["head"] == ["rank", "detector", "macro_f1 [95% CI]", "accuracy", "errors"]
    # 0.625 [0.250, 1.000], 0.75 -> 0.750; the unranked one shows "-" and no interval
    assert [[c[0] for c in r] for r in t["rows"]] == [
        ["1", "good", "0.625 [0.250, 1.000]", "0.750", "0"],
        ["-", "b<ad>", "0.125", "0.250", "2"],
    ]
    assert "b&lt;ad&gt;" in html
    one = parse(natural_table(view(origin=["natural"] * 6, natural=natural[1:])))
    assert one.tables[0]["caption"] == "natural cases only (origin natural, 4 cases)"


# ---- the heatmap ----


@pytest.mark.parametrize(
    ("acc", "expected"),
    [
        (0.0, "hsl(0,65%,76%)"),  # red; 82 - 12 x 0.5 = 76
        (0.05, "hsl(6,65%,77%)"),  # 120 x 0.05 = 6; 82 - 12 x 0.45 = 76.6 -> 77
        (0.25, "hsl(30,65%,79%)"),  # 120 x 0.25 = 30; 82 - 12 x 0.25 = 79
        (0.5, "hsl(60,65%,82%)"),  # yellow, lightest: 82 - 0
        (0.75, "hsl(90,65%,79%)"),
        (1.0, "hsl(120,65%,76%)"),  # green
    ],
)
def test_colour_from_red_through_yellow_to_green(acc: float, expected: str) -> None:
    assert colour(acc) == expected


def test_the_heatmap_cells_by_hand() -> None:
    v = view()
    html = heatmap_table(v, 3)
    (t,) = parse(html).tables
    assert t["class"] == "board-heatmap"
    assert t["head"] == ["detector \\ category", "echo", "fact<x>"]
    assert t["heads"] == [["good"], ["good"], ["b<ad>"]]  # a row per run, in board order, named by its label
    cells = [[(c[0], c[1]) for c in r] for r in t["rows"]]
    # (3, 4): 3/4 = 0.750, hsl(90,65%,79%); (0, 2): 0.000, red; (4, 4): 1.000; (1, 2): 0.500, hsl(60,65%,82%);
    # (0, 0): no case, n/a and no colour; (2, 2): 1.000
    expected = [
        [(3, 4, "0.750", "hsl(90,65%,79%)"), (0, 2, "0.000", "hsl(0,65%,76%)")],
        [(4, 4, "1.000", "hsl(120,65%,76%)"), (1, 2, "0.500", "hsl(60,65%,82%)")],
        [(0, 0, "n/a", None), (2, 2, "1.000", "hsl(120,65%,76%)")],
    ]
    labels = ["good", "good", "b<ad>"]
    cats = ["echo", "fact<x>"]
    for k, row in enumerate(expected):
        for c, (right, n, shown, hsl) in enumerate(row):
            text, attrs = cells[k][c]
            assert text == shown
            assert attrs == {
                "class": "hm", "data-ds": "3", "data-run": str(k), "data-cat": str(c), "data-right": str(right),
                "data-n": str(n), "title": f"{labels[k]} on {cats[c]}: {right} of {n} right",
                **({"style": f"background:{hsl}"} if hsl else {}),
            }  # fmt: skip


# ---- a data set's section and the page ----


def test_a_data_sets_section_reads_in_order() -> None:
    v = view(origin=None, notes=["the case text is missing", "no items"])
    html = dataset_section(v, 0)
    assert html.startswith('<section class="ds" data-ds="0"><h2>')  # the first data set is shown
    assert dataset_section(v, 2).startswith('<section class="ds" data-ds="2" hidden><h2>')  # the others hidden
    page = parse(html)
    # 6 case ids, 3 runs
    assert texts(page, "h2") == ["set.jsonl (sha256 0123456789ab, 6 cases, 3 runs)"]
    assert texts(page, "h3") == ["Leaderboard", "Accuracy by category"]
    assert texts(page, "p") == [
        method_text(v.board),
        "Natural cases only: no case carries an origin tag.",
        "Share of each category's cases a detector got right (an error or a case it did not finish counts as wrong). "
        "Click a cell to list the category's cases below.",
        "the case text is missing",
        "no items",
    ]
    assert [t["class"] for t in page.tables] == ["num leaderboard", "board-heatmap"]
    cells = [c[1] for r in parse(dataset_section(v, 2)).tables[1]["rows"] for c in r]
    assert len(cells) == 6 and {c["data-ds"] for c in cells} == {"2"}  # the heatmap's cells name their data set
    assert method_text(v.board).startswith("Ranked by macro_f1.")


def unpack(page: str) -> Any:
    start = page.index("id='board-data'>") + len("id='board-data'>")
    return json.loads(gzip.decompress(base64.b64decode(page[start : page.index("</script>", start)])))


def test_the_page_with_two_data_sets() -> None:
    views = [view("first.jsonl"), view("sec<ond>.jsonl")]
    second = views[1]  # b<ad> alone: its one run
    second.board.rows, second.runs, second.heatmap = second.board.rows[1:], second.runs[2:], second.heatmap[2:]
    second.data["runs"] = second.data["runs"][2:]
    html = board_html(views, title="my <board>")
    assert html.startswith("<!doctype html>\n<html lang='en'>") and html.endswith("</body></html>\n")
    page = parse(html)
    assert texts(page, "title") == ["my <board>"] and texts(page, "h1") == ["my <board>"]
    assert texts(page, "li") == ["2 data set(s), 4 run(s)"]  # 3 + 1 runs
    options = [(a["value"], text) for name, a, text in page.elements if name == "option"]
    assert options == [("0", "first.jsonl (01234567)"), ("1", "sec<ond>.jsonl (01234567)")]
    assert texts(page, "label")[0].startswith("data set ")
    assert texts(page, "h2")[-1] == "Cases" and texts(page, "h2")[:2] == [
        "first.jsonl (sha256 0123456789ab, 6 cases, 3 runs)",
        "sec<ond>.jsonl (sha256 0123456789ab, 6 cases, 1 runs)",
    ]
    assert html.count('<section class="ds"') == 2 and html.count(" hidden><h2>") == 1
    assert ("p", {"id": "loading"}, "Loading the cases...") in page.elements
    assert ("h2", {"id": "explorer-title"}, "Cases") in page.elements
    assert ("div", {"id": "explorer"}, "Loading the cases...") in page.elements
    assert ("aside", {"id": "detail", "hidden": None}, "") in page.elements  # where board.js opens a case
    assert [(name, a) for name, a, _ in page.elements if name == "script"] == [
        ("script", {"type": "application/octet-stream", "id": "board-data"}),
        ("script", {}),
    ]
    (csp,) = [a for name, a, _ in page.elements if name == "meta" and a.get("http-equiv")]
    assert csp["content"] == (
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'none'"
    )
    assert unpack(html) == {"datasets": [v.data for v in views]}
    assert board_page._asset("board.js") in html and board_page._asset("board.css") in html
    assert board_page._asset("report.css") in html
    assert texts(parse(board_html(views[:1])), "title") == ["fcb board"]  # the default title


def test_write_board_writes_the_page_and_names_each_note(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    asked: list[Any] = []
    views = [view("a.jsonl", notes=["no case text"]), view("b.jsonl", notes=["x", "y"])]

    def fake_views(runs: Any, page_dir: Path, **kw: Any) -> list[DataSetView]:
        asked.append((runs, page_dir, kw))
        return views

    monkeypatch.setattr(board_page, "board_views", fake_views)
    out = tmp_path / "deep" / "er" / BOARD_HTML
    path, notes = write_board(["r1"], out)  # type: ignore[list-item]
    assert path == out and out.read_text() == board_html(views)
    assert notes == ["a.jsonl: no case text", "b.jsonl: x", "b.jsonl: y"]
    assert asked == [(["r1"], out.resolve().parent, {"n_boot": 1000, "seed": 0, "strongest": 3})]
    write_board([], str(out), n_boot=5, seed=9, strongest=2)
    assert asked[-1][2] == {"n_boot": 5, "seed": 9, "strongest": 2}
    assert BOARD_HTML == "board.html"


def test_a_view_whose_runs_and_arrays_disagree_is_refused() -> None:
    """The page pairs each run with its entry and heatmap row: a view with one more entry than runs, or one heatmap
    row fewer, is refused rather than shown with a link or a row on the wrong detector."""
    v = view()
    v.data["runs"].append({"label": "extra", "path": "/r/extra", "report": None})
    with pytest.raises(ValueError, match="zip"):
        leaderboard_table(v)
    v = view()
    v.heatmap = v.heatmap[:2]
    with pytest.raises(ValueError, match="zip"):
        heatmap_table(v, 0)


def test_the_assets_are_read_as_utf8_whatever_the_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    import codecs

    asked: list[Any] = []

    class Folder:
        def __init__(self, parts: tuple[str, ...]) -> None:
            self.parts = parts

        def __truediv__(self, name: str) -> Folder:
            return Folder((*self.parts, name))

        def read_text(self, encoding: str | None = None) -> str:
            asked.append((self.parts, encoding))
            return "body { content: 'é' }"

    monkeypatch.setattr(board_page.resources, "files", lambda package: Folder((package,)))
    assert board_page._asset("board.css") == "body { content: 'é' }"
    ((parts, encoding),) = asked
    assert parts == ("harness", "data", "board.css")
    assert encoding is not None and codecs.lookup(encoding).name == "utf-8"  # not the locale's encoding
