"""``fcb compare``'s output (`harness.leaderboard.compare_render`) from a comparison document written by hand: the
text, Markdown and HTML are read back (text tables cut at the columns their dashed rule marks, Markdown rows split on
unescaped pipes, HTML by `html.parser`) and each cell is compared with the figure it shows: three decimals, a change
signed (``+0.050``, ``-0.125``, ``+0.000``), its interval's bounds signed too, a p-value blank where undefined."""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from typing import Any

import pytest

from harness.leaderboard import compare_render
from harness.leaderboard.compare_render import (
    MAX_LISTED,
    RENDERERS,
    category_rows,
    metric_header,
    metric_rows,
    to_html,
    to_json,
    to_markdown,
    to_text,
)

SHA = "0123456789abcdef" * 4
STATEMENT = "A metric regresses when it got worse by more than max_drop and Holm's test finds it; max_drop is absolute."


def comparison() -> dict[str, Any]:
    """macro_f1 fell 0.625 -> 0.500 (a regression), error_rate fell 0.050 -> 0.025 (better: lower is better),
    accuracy rose 0.600 -> 0.650 without a test; ECE rose 0.075 -> 0.125 (worse); two flipped right to wrong, none
    back."""
    return {
        "base": {"path": "/runs/base", "detector": "old<x>", "created": "2026-12-01T00:00:00+00:00"},
        "new": {"path": "/runs/new", "detector": "new*1", "created": "2026-12-02T00:00:00+00:00"},
        "dataset": {"name": "set_a.jsonl", "sha256": SHA, "cases": 40},
        "settings": {"max_drop": 0.02, "alpha": 0.05, "bootstrap_resamples": 1000, "seed": 0},
        "gate": {"multiple_testing": "holm", "family": ["macro_f1", "error_rate"], "statement": STATEMENT},
        "metrics": {
            "macro_f1": {
                "base": 0.625,
                "new": 0.5,
                "delta": -0.125,
                "ci": [-0.25, -0.05],
                "higher_is_better": True,
                "p": 0.004,
                "p_holm": 0.008,
                "regression": True,
            },
            "error_rate": {
                "base": 0.05,
                "new": 0.025,
                "delta": -0.025,
                "ci": [-0.05, 0.0],
                "higher_is_better": False,
                "p": 0.45,
                "p_holm": 0.9,
                "regression": False,
            },
            "accuracy": {
                "base": 0.6,
                "new": 0.65,
                "delta": 0.05,
                "ci": None,
                "higher_is_better": True,
                "p": None,
                "p_holm": None,
                "regression": False,
            },
        },
        "ece": {"bins": 10, "n": 38, "base": 0.075, "new": 0.125, "delta": 0.05, "ci": [0.0, 0.1]},
        "per_category": {
            "echo_cascade": {"n": 12, "base": 0.5, "new": 0.75, "delta": 0.25},
            "a|b": {"n": 3, "base": 1.0, "new": 0.0, "delta": -1.0},
        },
        "flipped": {
            "right_to_wrong": [{"id": "C-1", "category": "echo"}, {"id": "C-2", "category": "x_y", "epoch": 2}],
            "wrong_to_right": [],
        },
        "regression": True,
    }


HOLM_HEADER = ["metric", "base", "new", "delta", "95% CI", "p", "p (Holm)", "", ""]
HOLM_ROWS = [
    ["macro_f1", "0.625", "0.500", "-0.125", "[-0.250, -0.050]", "0.004", "0.008", "higher is better", "REGRESSION"],
    # error_rate fell: better, as lower is better; its interval's upper bound 0 is a change, signed +0.000
    ["error_rate", "0.050", "0.025", "-0.025", "[-0.050, +0.000]", "0.450", "0.900", "lower is better", ""],
    # accuracy is not in the gate's family: not tested; no interval, no p
    ["accuracy", "0.600", "0.650", "+0.050", "", "", "not tested", "higher is better", ""],
    ["ECE of risk_score (10 bins, 38 cases)", "0.075", "0.125", "+0.050", "[+0.000, +0.100]", "", "",
     "lower is better", "not gated"],
]  # fmt: skip
CATEGORY_HEADER = ["category", "n", "base", "new", "delta"]
SUMMARY = (
    "REGRESSION. A metric regresses when it got worse by more than max_drop = 0.02 and Holm's test finds it; "
    "max_drop is absolute."  # the first max_drop alone is given its value
)


def no_holm(cmp: dict[str, Any]) -> dict[str, Any]:
    cmp["gate"]["multiple_testing"] = "none"
    return cmp


def simple_table(lines: list[str]) -> tuple[list[str], list[list[str]]]:
    """A tabulate "simple" table: its columns are where the dashes of the rule under the header run."""
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    assert set(lines[1]) <= {"-", " "}

    def cut(line: str) -> list[str]:
        return [line[a:b].strip() for a, b in spans]

    return cut(lines[0]), [cut(line) for line in lines[2:]]


def md_blocks(text: str) -> list[Any]:
    """The lines, each run of table lines replaced by (header, rows), rows split on unescaped pipes."""
    out: list[Any] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        cells = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines[i:j]]
        assert set(lines[i + 1]) <= set("|:- ")
        out.append((cells[0], cells[2:]))
        i = j
    return out


# ---- the rows ----


def test_metric_header_and_rows_with_holm() -> None:
    cmp = comparison()
    assert metric_header(cmp) == HOLM_HEADER
    assert metric_rows(cmp) == HOLM_ROWS


def test_without_holm_no_holm_column_and_the_level_from_alpha() -> None:
    cmp = no_holm(comparison())
    cmp["settings"]["alpha"] = 0.1
    assert metric_header(cmp) == ["metric", "base", "new", "delta", "90% CI", "p", "", ""]  # 100 x (1 - 0.1)
    assert metric_rows(cmp) == [row[:6] + row[7:] for row in HOLM_ROWS]
    del cmp["ece"]
    assert len(metric_rows(cmp)) == 3  # no ECE row without the block


def test_category_rows_shown_by_the_given_function() -> None:
    cmp = comparison()
    assert category_rows(cmp) == [["echo_cascade", 12, "0.500", "0.750", "+0.250"], ["a|b", 3, "1.000", "0.000",
                                                                                        "-1.000"]]  # fmt: skip
    assert [r[0] for r in category_rows(cmp, lambda c: f"<{c}>")] == ["<echo_cascade>", "<a|b>"]


# ---- text ----


def test_text_read_back() -> None:
    cmp = comparison()
    cmp["base"]["detector"] = "old\x1bx"  # a control character from a run folder is shown as its escape
    cmp["per_category"]["e\x1b"] = {"n": 1, "base": 0.0, "new": 1.0, "delta": 1.0}  # a category's too
    parts = to_text(cmp).split("\n\n")
    assert len(parts) == 6
    assert parts[0] == (
        "base: old\\x1bx (/runs/base)\nnew:  new*1 (/runs/new)\ndata set: set_a.jsonl (sha256 0123456789ab, 40 cases)"
    )
    head, rows = simple_table(parts[1].split("\n"))
    assert head == HOLM_HEADER and rows == HOLM_ROWS
    head, rows = simple_table(parts[2].split("\n"))
    assert head == CATEGORY_HEADER
    assert rows == [["echo_cascade", "12", "0.500", "0.750", "+0.250"], ["a|b", "3", "1.000", "0.000", "-1.000"],
                    ["e\\x1b", "1", "0.000", "1.000", "+1.000"]]  # fmt: skip
    assert parts[3] == "right to wrong: 2\n  C-1 (echo)\n  C-2 epoch 2 (x_y)"
    assert parts[4] == "wrong to right: 0\n  (none)"
    assert parts[5] == SUMMARY


def test_text_in_another_table_format_and_no_regression() -> None:
    cmp = comparison()
    cmp["regression"] = False
    del cmp["per_category"]["a|b"]  # (the text's names are printable, not Markdown: a pipe would split a cell)
    text = to_text(cmp, "github")
    assert md_blocks(text)[4] == (HOLM_HEADER, HOLM_ROWS)
    assert md_blocks(text)[6] == (CATEGORY_HEADER, [["echo_cascade", "12", "0.500", "0.750", "+0.250"]])
    assert text.endswith(
        "\n\nno significant regression. A metric regresses when it got worse by more than max_drop = 0.02 and Holm's "
        "test finds it; max_drop is absolute."
    )


def test_flipped_lists_stop_at_fifty_and_count_the_rest() -> None:
    cmp = comparison()
    flips = [{"id": f"C-{i}", "category": "c"} for i in range(1, 52)]  # 51 cases
    cmp["flipped"] = {"right_to_wrong": flips, "wrong_to_right": flips[:50]}
    assert MAX_LISTED == 50
    parts = to_text(cmp).split("\n\n")
    lines = parts[3].split("\n")
    assert lines[0] == "right to wrong: 51" and len(lines) == 1 + 50 + 1
    assert lines[50] == "  C-50 (c)" and lines[-1] == "  ... and 1 more (see --format json)"  # 51 - 50
    lines = parts[4].split("\n")
    assert lines[0] == "wrong to right: 50" and len(lines) == 51 and lines[-1] == "  C-50 (c)"  # 50: none more


# ---- Markdown ----


def test_markdown_read_back() -> None:
    cmp = comparison()
    assert md_blocks(to_markdown(cmp)) == [
        "## :x: False-consensus detector comparison",
        "",
        "new\\*1 against baseline old\\<x\\> on **set\\_a.jsonl** (sha256 0123456789ab, 40 cases).",
        "",
        (HOLM_HEADER, HOLM_ROWS),
        "",
        SUMMARY,
        "",
        "<details><summary>Per category</summary>",
        "",
        (CATEGORY_HEADER, [["echo\\_cascade", "12", "0.500", "0.750", "+0.250"],
                           ["a\\|b", "3", "1.000", "0.000", "-1.000"]]),
        "",
        "</details>",
        "",
        "<details><summary>Flipped cases: 2 right to wrong, 0 wrong to right</summary>",
        "",
        "Right to wrong:",
        "- C-1 (echo)",
        "- C-2 epoch 2 (x\\_y)",
        "",
        "Wrong to right:",
        "- (none)",
        "",
        "</details>",
    ]  # fmt: skip


def test_markdown_without_a_regression_and_many_flips() -> None:
    cmp = no_holm(comparison())
    cmp["regression"] = False
    cmp["flipped"] = {"right_to_wrong": [], "wrong_to_right": [{"id": f"C-{i}", "category": "c_d"} for i in range(52)]}
    lines = to_markdown(cmp).split("\n")
    assert lines[0] == "## :white_check_mark: False-consensus detector comparison"
    assert "<details><summary>Flipped cases: 0 right to wrong, 52 wrong to right</summary>" in lines
    assert lines[lines.index("Right to wrong:") + 1] == "- (none)"
    assert lines[-3] == "- ... and 2 more (see --format json)" and lines[-4] == "- C-49 (c\\_d)"
    assert md_blocks(to_markdown(cmp))[6].startswith("no significant regression. ")


# ---- JSON and HTML ----


def test_json_is_the_document_indented() -> None:
    cmp = comparison()
    text = to_json(cmp)
    assert json.loads(text) == cmp and text.startswith('{\n  "base": {\n    "path": "/runs/base",')
    assert {"text": to_text, "md": to_markdown, "json": to_json} == RENDERERS


class Sections(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.items: list[Any] = []  # ("h2", text), ("p", class, text) or ("table", class, header, rows)
        self.text: list[str] | None = None
        self.cls: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.items.append(["table", dict(attrs).get("class"), [], []])
        elif tag == "tr" and self.items[-1][0] == "table" and self.items[-1][2]:
            self.items[-1][3].append([])
        elif tag in ("th", "td", "h2", "p"):
            self.text, self.cls = [], dict(attrs).get("class")

    def handle_data(self, data: str) -> None:
        if self.text is not None:
            self.text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self.text is None or tag not in ("th", "td", "h2", "p"):
            return
        text = "".join(self.text)
        if tag == "th":
            self.items[-1][2].append(text)
        elif tag == "td":
            self.items[-1][3][-1].append(text)
        elif tag == "h2":
            self.items.append(("h2", text))
        else:
            self.items.append(("p", self.cls, text))
        self.text = None


def test_html_sections_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    given: list[Any] = []
    monkeypatch.setattr(compare_render, "render_compare", lambda cmp, sections: given.append((cmp, sections)) or "P")
    cmp = comparison()
    before = copy.deepcopy(cmp)
    assert to_html(cmp) == "P"
    assert given[0][0] == before
    parser = Sections()
    parser.feed(given[0][1])
    assert parser.items == [
        ("h2", "Headline"),
        ["table", "num", HOLM_HEADER, HOLM_ROWS],
        ("p", "note", SUMMARY),
        ("h2", "Per category"),
        ["table", "num", CATEGORY_HEADER, [["echo_cascade", "12", "0.500", "0.750", "+0.250"],
                                           ["a|b", "3", "1.000", "0.000", "-1.000"]]],
        ("h2", "Flipped cases"),
        ("p", None, "2 right to wrong, 0 wrong to right: listed in the explorer below."),
    ]  # fmt: skip
    assert "old&lt;x&gt;" not in given[0][1]  # the names are the page's (render_compare), not the sections'


def test_the_summary_says_how_large_a_worsening_the_comparison_could_detect() -> None:
    cmp = comparison()
    names = list(cmp["metrics"])
    cmp["metrics"][names[0]]["mde"] = 0.0312
    cmp["metrics"][names[1]]["mde"] = None
    text = to_text(cmp)
    assert text.endswith(
        f"With {cmp['dataset']['cases']} cases it could detect, with 80% power at alpha = "
        f"{cmp['settings']['alpha']:g} (Holm's first step for the metrics gated together), a worsening of at least: "
        f"{names[0]} 0.031; a smaller one may go unseen."
    )
    assert "a worsening of at least" in to_markdown(cmp)


def test_the_detectable_sizes_of_a_one_epoch_gate_are_listed_with_commas() -> None:
    cmp = comparison()
    cmp["gate"]["multiple_testing"] = "none"
    names = list(cmp["metrics"])
    cmp["metrics"][names[0]]["mde"] = 0.0312
    cmp["metrics"][names[1]]["mde"] = 0.05
    text = to_text(cmp)
    assert f"a worsening of at least: {names[0]} 0.031, {names[1]} 0.050; a smaller" in text
    assert f"with 80% power at alpha = {cmp['settings']['alpha']:g}, a worsening" in text  # nothing between
    assert "Holm's first step" not in text
