"""The leaderboard's renderers (`harness.leaderboard.render`) on boards built by hand: every table is parsed back
(Markdown rows split on their pipes, CSV read by `csv`, JSON by `json`, HTML by `html.parser`) and each cell is
compared with the figure it shows, formatted by hand (a share as a percentage with one decimal, a figure with three,
an interval in brackets, a latency in milliseconds), together with the headings and sentences a reader reads."""

from __future__ import annotations

import csv
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.leaderboard import render
from harness.leaderboard.rank import Board, Row
from harness.leaderboard.render import (
    board_dict,
    header,
    method_text,
    row_cells,
    shows_ece,
    shows_real,
    shows_run_spread,
    to_csv,
    to_html,
    to_json,
    to_markdown,
)
from harness.leaderboard.runs import Run

SHA = "0123456789abcdef" * 4
METHOD = {"bootstrap_resamples": 200, "seed": 7, "alpha": 0.05, "include_incomplete": False}
PLAIN_HEADER = [
    "rank",
    "detector",
    "macro_f1 [95% CI]",
    "accuracy",
    "high-risk recall",
    "false-alarm rate",
    "weighted kappa",
    "error rate",
    "p95 latency",
    "cases",
    "runs",
    "date",
]


def run(detector: str, created: str = "2026-12-01T10:20:30+00:00", n_cases: int = 40, path: str = "") -> Run:
    """A run in memory: only what the renderers read (its spec, date, case count, folder)."""
    doc = {"detector": {"spec": detector}, "created": created, "metrics": {"n_cases": n_cases}}
    empty = np.array([], dtype=object)
    return Run(Path(path or f"/runs/{detector}"), doc, empty, empty, empty, empty)  # type: ignore[arg-type]


def values(**given: float | None) -> dict[str, float | None]:
    """Every value a row carries (None unless given); dotted names are passed with ``__`` for the dots."""
    keys = [
        "macro_f1", "macro_f1_real", "macro_f1_natural", "accuracy", "high_risk_recall", "false_alarm_rate",
        "weighted_kappa", "error_rate", "operational.latency_s.p95", "consensus.balanced_accuracy", "ece", "ece_bins",
        "epoch_sd", "self_agreement", "order_flip_rate", "names_flip_rate", "runs_min", "runs_max", "vote_margin",
        "evidence_order_flip_rate", "format_flip_rate", "tone_flip_rate", "length_flip_rate", "restate_flip_rate",
        "inject_attack_success", "duplicate_fall_rate", "escalation_rate_high", "escalation_rate_medium_high",
        "caught_medium_high", "aurc",
    ]  # fmt: skip
    out: dict[str, float | None] = dict.fromkeys(keys)
    for key, value in given.items():
        name = key.replace("__", ".")
        assert name in out, name
        out[name] = value
    return out


def row(detector: str, runs: list[Run] | None = None, **kw: Any) -> Row:
    runs = runs or [run(detector)]
    return Row(
        detector=detector,
        runs=runs,
        values=kw.pop("values"),
        representative=kw.pop("representative", runs[0]),
        incomplete=kw.pop("incomplete", False),
        **kw,
    )


def board(rows: list[Row], **kw: Any) -> Board:
    return Board(
        dataset={"name": kw.pop("name", "bench.jsonl"), "sha256": SHA, "cases": 40},
        metric=kw.pop("metric", "macro_f1"),
        method=kw.pop("method", dict(METHOD)),
        card=kw.pop("card", {"cases": 40, "by_category": {"echo": {"low": 1, "medium": 2, "high": 3}}}),
        rows=rows,
        **kw,
    )


def plain_rows() -> list[Row]:
    """alpha: ranked 1 with every figure; beta: 2= (a shared rank); gamma: an incomplete run, unranked, one of its
    three runs left out, no latency."""
    alpha = row(
        "alpha",
        values=values(macro_f1=0.625, accuracy=0.6, high_risk_recall=0.875, false_alarm_rate=0.125,
                      weighted_kappa=0.4, error_rate=0.05, operational__latency_s__p95=0.25),
        cis={"macro_f1": (0.5, 0.75)},
        rank=1,
    )  # fmt: skip
    beta = row(
        "beta",
        runs=[run("beta", "2026-11-30T09:00:00+00:00"), run("beta", "2026-12-02T08:00:00+00:00", path="/runs/b2")],
        values=values(macro_f1=0.5, accuracy=0.55, high_risk_recall=0.5, false_alarm_rate=0.2,
                      weighted_kappa=-0.125, error_rate=0.0, operational__latency_s__p95=0.0125),
        ci95=(0.375, 0.625),
        rank=2,
        shared_rank=True,
    )  # fmt: skip
    gamma = row(
        "gamma",
        runs=[run("gamma", n_cases=31)],
        values=values(macro_f1=0.25, accuracy=0.3, high_risk_recall=0.0, false_alarm_rate=1.0, weighted_kappa=0.0,
                      error_rate=0.225),
        incomplete=True,
        left_out=1,
    )  # fmt: skip
    return [alpha, beta, gamma]


# ---- reading the tables back ----


def md_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The first GitHub table in ``text``: its header and rows, split on the pipes that are not escaped."""
    lines = [line for line in text.splitlines() if line.startswith("|")]
    split = [[c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]] for line in lines]
    assert set(lines[1]) <= set("|:- "), lines[1]  # the separator line
    return split[0], split[2:]


class Page(HTMLParser):
    """Tables (header cells, rows of (text, attributes)), headings, paragraphs and images of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[dict[str, Any]] = []
        self.headings: list[tuple[str, str]] = []
        self.paragraphs: list[str] = []
        self.images: list[dict[str, str | None]] = []
        self.text: list[str] | None = None
        self.attrs: dict[str, str | None] = {}
        self.stray: list[str] = []  # text outside any cell, heading or paragraph (nothing should be there)
        self.raw = False  # inside a script or a style

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append({"class": dict(attrs).get("class"), "head": [], "rows": []})
        elif tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        elif tag in ("th", "td", "h1", "h2", "h3", "h4", "p", "title"):
            self.text, self.attrs = [], dict(attrs)
        elif tag == "img":
            self.images.append(dict(attrs))
        elif tag in ("script", "style"):
            self.raw = True

    def handle_data(self, data: str) -> None:
        if self.text is not None:
            self.text.append(data)
        elif not self.raw:
            self.stray.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.raw = False
        if self.text is None:
            return
        text = "".join(self.text).strip()
        if tag == "th":
            self.tables[-1]["head"].append(text)
        elif tag == "td":
            self.tables[-1]["rows"][-1].append((text, self.attrs))
        elif tag == "p":
            self.paragraphs.append(text)
        elif tag in ("h1", "h2", "h3", "h4", "title"):
            self.headings.append((tag, text))
        else:
            return
        self.text = None


def parse_html(text: str) -> Page:
    page = Page()
    page.feed(text)
    for t in page.tables:
        t["rows"] = [r for r in t["rows"] if r]  # the header row holds th cells alone
    return page


# ---- the columns ----


def test_a_plain_board_shows_the_twelve_columns_and_each_figure_as_worked_out() -> None:
    b = board(plain_rows())
    assert header(b) == PLAIN_HEADER
    assert not shows_real(b) and not shows_ece(b) and not shows_run_spread(b)
    alpha, beta, gamma = (dict(zip(PLAIN_HEADER, row_cells(r, b), strict=True)) for r in b.rows)
    # alpha: its own interval of macro_f1; 0.6 -> 60.0%, 0.875 -> 87.5%, 0.125 -> 12.5%, kappa 0.4 -> 0.400,
    # 0.05 -> 5.0%; 0.25 s -> 250.0 ms
    assert alpha == {
        "rank": "1", "detector": "alpha", "macro_f1 [95% CI]": "0.625 [0.500, 0.750]", "accuracy": "60.0%",
        "high-risk recall": "87.5%", "false-alarm rate": "12.5%", "weighted kappa": "0.400", "error rate": "5.0%",
        "p95 latency": "250.0 ms", "cases": "40", "runs": "1", "date": "2026-12-01",
    }  # fmt: skip
    # beta: no interval in cis, so the ranking metric's ci95; a shared rank 2=; the later of its two runs' dates;
    # 0.0125 s -> 12.5 ms; kappa -0.125 -> -0.125
    assert beta == {
        "rank": "2=", "detector": "beta", "macro_f1 [95% CI]": "0.500 [0.375, 0.625]", "accuracy": "55.0%",
        "high-risk recall": "50.0%", "false-alarm rate": "20.0%", "weighted kappa": "-0.125", "error rate": "0.0%",
        "p95 latency": "12.5 ms", "cases": "40", "runs": "2", "date": "2026-12-02",
    }  # fmt: skip
    # gamma: unranked, marked incomplete, 1 run counted (+1 left out), no interval, no latency, 31 cases
    assert gamma == {
        "rank": "-", "detector": "gamma (incomplete)", "macro_f1 [95% CI]": "0.250", "accuracy": "30.0%",
        "high-risk recall": "0.0%", "false-alarm rate": "100.0%", "weighted kappa": "0.000", "error rate": "22.5%",
        "p95 latency": "n/a", "cases": "31", "runs": "1 (+1 incomplete)", "date": "2026-12-01",
    }  # fmt: skip


def test_a_latency_is_written_in_milliseconds_with_one_decimal() -> None:
    v = values(macro_f1=0.5, accuracy=0.5, high_risk_recall=0.5, false_alarm_rate=0.5, weighted_kappa=0.5,
               error_rate=0.5, operational__latency_s__p95=1.5)  # fmt: skip
    b = board([row("a", values=v)])
    assert row_cells(b.rows[0], b)[PLAIN_HEADER.index("p95 latency")] == "1500.0 ms"  # 1000 x 1.5 s


def every_extra_row() -> list[Row]:
    """A board with every optional column: origin tags (30 natural + assembled cases, 12 natural), a builtin:vote
    run, consensus, runs of two or more, epochs and probes, and ECE."""
    full = row(
        "full",
        runs=[run("full"), run("full", path="/runs/full2")],
        values=values(macro_f1=0.625, macro_f1_real=0.5625, macro_f1_natural=0.4375, accuracy=0.6,
                      high_risk_recall=0.875, false_alarm_rate=0.125, weighted_kappa=0.4, error_rate=0.05,
                      operational__latency_s__p95=0.25, consensus__balanced_accuracy=0.71875, ece=0.0834,
                      ece_bins=10.0, epoch_sd=0.021, self_agreement=0.85, order_flip_rate=0.1,
                      names_flip_rate=0.05, runs_min=0.6, runs_max=0.65, vote_margin=0.05, inject_attack_success=0.25),
        cis={"macro_f1": (0.5, 0.75), "macro_f1_real": (0.4375, 0.6875), "macro_f1_natural": (0.25, 0.625),
             "vote_margin": (-0.02, 0.09)},
        rank=1,
    )  # fmt: skip
    vote = row(
        "builtin:vote",
        values=values(macro_f1=0.575, macro_f1_real=0.5, macro_f1_natural=0.375, accuracy=0.5, high_risk_recall=0.5,
                      false_alarm_rate=0.5, weighted_kappa=0.25, error_rate=0.0, vote_margin=0.0),
        rank=2,
    )  # fmt: skip
    bare = row(
        "bare",
        values=values(macro_f1=0.5, macro_f1_real=0.5, macro_f1_natural=0.5, accuracy=0.5, high_risk_recall=0.5,
                      false_alarm_rate=0.5, weighted_kappa=0.5, error_rate=0.5),
        rank=2,
    )  # fmt: skip
    return [full, vote, bare]


EXTRA_HEADER = [
    "rank",
    "detector",
    "macro_f1 [95% CI]",
    "macro_f1, natural + assembled (30 cases) [95% CI]",
    "macro_f1, natural only (12 cases) [95% CI]",
    "macro_f1 over builtin:vote [95% CI]",
    "consensus balanced accuracy",
    "accuracy",
    "high-risk recall",
    "false-alarm rate",
    "weighted kappa",
    "error rate",
    "macro_f1 over runs (min-max)",
    "macro-F1 sd over epochs",
    "epochs all agree",
    "order flip rate",
    "names flip rate",
    "inject attack success",
    "ECE of risk_score (bins)",
    "p95 latency",
    "cases",
    "runs",
    "date",
]


def test_every_optional_column_in_its_place_with_its_figure() -> None:
    b = board(every_extra_row(), real_cases=30, natural_cases=12)
    assert header(b) == EXTRA_HEADER
    full, vote, bare = (dict(zip(EXTRA_HEADER, row_cells(r, b), strict=True)) for r in b.rows)
    assert full == {
        "rank": "1", "detector": "full", "macro_f1 [95% CI]": "0.625 [0.500, 0.750]",
        "macro_f1, natural + assembled (30 cases) [95% CI]": "0.562 [0.438, 0.688]",  # 0.5625 etc. round to even
        "macro_f1, natural only (12 cases) [95% CI]": "0.438 [0.250, 0.625]",
        "macro_f1 over builtin:vote [95% CI]": "+0.050 [-0.020, 0.090]",
        "consensus balanced accuracy": "0.719",  # 0.71875
        "accuracy": "60.0%", "high-risk recall": "87.5%", "false-alarm rate": "12.5%", "weighted kappa": "0.400",
        "error rate": "5.0%",
        "macro_f1 over runs (min-max)": "0.600-0.650",
        "macro-F1 sd over epochs": "0.021",  # an sd of macro-F1: a figure, not a share
        "epochs all agree": "85.0%", "order flip rate": "10.0%", "names flip rate": "5.0%",
        "inject attack success": "25.0%", "ECE of risk_score (bins)": "0.083 (10 bins)",
        "p95 latency": "250.0 ms", "cases": "40", "runs": "2", "date": "2026-12-01",
    }  # fmt: skip
    # builtin:vote against itself: a margin of exactly 0 with no interval is the baseline; its other columns n/a
    assert vote["macro_f1 over builtin:vote [95% CI]"] == "baseline"
    assert vote["macro_f1, natural + assembled (30 cases) [95% CI]"] == "0.500"  # no interval in cis
    assert vote["macro_f1, natural only (12 cases) [95% CI]"] == "0.375"
    assert vote["consensus balanced accuracy"] == "n/a" and vote["ECE of risk_score (bins)"] == "n/a"
    assert vote["macro_f1 over runs (min-max)"] == "n/a"  # one run: no spread
    assert [vote[h] for h in EXTRA_HEADER[13:17]] == ["n/a"] * 4
    assert vote["p95 latency"] == "n/a" and vote["detector"] == "builtin:vote"
    assert bare["macro_f1 over builtin:vote [95% CI]"] == "n/a"  # no margin computed for it


def test_the_vote_margin_cell_baseline_only_for_builtin_vote_at_zero_without_an_interval() -> None:
    def cell(detector: str, margin: float | None, ci: tuple[float, float] | None) -> str:
        r = row(detector, values=values(macro_f1=0.5, accuracy=0.5, high_risk_recall=0.5, false_alarm_rate=0.5,
                                        weighted_kappa=0.5, error_rate=0.5, vote_margin=margin),
                cis={"vote_margin": ci})  # fmt: skip
        return row_cells(r, board([r]))[3]

    assert cell("builtin:vote", 0.0, None) == "baseline"
    assert cell("other", 0.0, None) == "+0.000"  # another detector exactly level with the vote
    assert cell("builtin:vote", 0.0, (-0.01, 0.01)) == "+0.000 [-0.010, 0.010]"  # a second vote run, compared
    assert cell("builtin:vote", -0.0125, None) == "-0.013"  # not zero: shown as a change (-0.0125 rounds to -0.013)
    assert cell("other", -0.25, (-0.5, -0.125)) == "-0.250 [-0.500, -0.125]"


def test_the_spread_cell_needs_both_ends() -> None:
    def cell(lo: float | None, hi: float | None) -> str:
        r = row("a", values=values(macro_f1=0.5, accuracy=0.5, high_risk_recall=0.5, false_alarm_rate=0.5,
                                   weighted_kappa=0.5, error_rate=0.5, runs_min=lo, runs_max=hi))  # fmt: skip
        other = row("b", values=values(macro_f1=0.5, accuracy=0.5, high_risk_recall=0.5, false_alarm_rate=0.5,
                                       weighted_kappa=0.5, error_rate=0.5, runs_min=0.25, runs_max=0.75))  # fmt: skip
        b = board([r, other])
        return dict(zip(header(b), row_cells(r, b), strict=True))["macro_f1 over runs (min-max)"]

    assert cell(0.125, 0.875) == "0.125-0.875"
    assert cell(0.125, None) == "n/a" and cell(None, 0.875) == "n/a" and cell(None, None) == "n/a"


def test_only_the_repeat_columns_some_row_has_are_shown_and_ece_alone() -> None:
    r = row("a", values=values(macro_f1=0.5, accuracy=0.5, high_risk_recall=0.5, false_alarm_rate=0.5,
                               weighted_kappa=0.5, error_rate=0.5, order_flip_rate=0.375, ece=0.125,
                               ece_bins=15.0))  # fmt: skip
    b = board([r])
    cols = header(b)
    assert cols[8:11] == ["order flip rate", "ECE of risk_score (bins)", "p95 latency"]
    assert "epochs all agree" not in cols and "names flip rate" not in cols and "macro-F1 sd over epochs" not in cols
    cells = dict(zip(cols, row_cells(r, b), strict=True))
    assert cells["order flip rate"] == "37.5%" and cells["ECE of risk_score (bins)"] == "0.125 (15 bins)"
    assert shows_ece(b) and not shows_run_spread(b)


def test_a_board_ranked_on_the_real_cases_without_origin_counts_and_its_ci95() -> None:
    """Ranked on macro_f1_real: the first column is macro_f1 on all cases, whose interval is in ``cis`` alone (the
    row's ci95 belongs to the ranking metric, macro_f1_real)."""
    r = row("a", values=values(macro_f1=0.5, macro_f1_real=0.375, accuracy=0.5, high_risk_recall=0.5,
                               false_alarm_rate=0.5, weighted_kappa=0.5, error_rate=0.5),
            ci95=(0.25, 0.5), cis={"macro_f1_real": (0.25, 0.5)}, rank=1)  # fmt: skip
    b = board([r], metric="macro_f1_real")
    assert shows_real(b)
    cols = header(b)
    assert cols[2:4] == ["macro_f1 [95% CI]", "macro_f1, natural + assembled (no cases) [95% CI]"]
    cells = row_cells(r, b)
    assert cells[2:4] == ["0.500", "0.375 [0.250, 0.500]"]


# ---- the method's sentences ----


PLAIN_METHOD = (
    "Ranked by macro_f1. Several runs of one detector (same name and code fingerprint) count by their median. A "
    "detector's rank is 1 + the number of detectors significantly better than it: a paired bootstrap over the shared "
    "cases' clusters (as the runs' journals name them; 200 resamples, seed 7), each pair's two-sided p-value adjusted "
    "by Holm's step-down over every pair on the board and compared with 0.05, so that the chance of any false "
    "separation stays under it. Detectors that no test separates share a rank (`2=`). Cases a run did not finish count "
    "as errors. Incomplete runs are listed without a rank (use --include-incomplete). Run builtin:vote on this data "
    "set (fcb eval CASES -d builtin:vote) to see each detector's margin over it."
)


def test_the_method_text_of_a_plain_board() -> None:
    assert method_text(board(plain_rows())) == PLAIN_METHOD


def test_the_method_text_names_the_level_ranked_incomplete_runs_and_each_note_once() -> None:
    rows = plain_rows()
    rows[0].note = "two fingerprints of alpha"
    rows[1].note = "two fingerprints of alpha"
    rows[2].note = "gamma binned its ECE differently"
    b = board(rows, method={**METHOD, "alpha": 0.1, "include_incomplete": True, "seed": 3, "bootstrap_resamples": 50})
    assert method_text(b) == (
        PLAIN_METHOD.replace("200 resamples, seed 7)", "50 resamples, seed 3)")
        .replace("compared with 0.05", "compared with 0.1")
        .replace("listed without a rank (use --include-incomplete).", "ranked (marked).")
        .removesuffix(".")
        + ". two fingerprints of alpha. gamma binned its ECE differently."
    )


def test_the_method_text_with_every_optional_column() -> None:
    b = board(every_extra_row(), real_cases=30, natural_cases=12, metric="macro_f1_real")
    b.method["note"] = "only one detector"
    assert method_text(b) == (
        "Ranked by macro_f1_real. Several runs of one detector (same name and code fingerprint) count by their median, "
        "the lowest and highest beside it; runs with --epochs show the sd of macro-F1 over their epochs and the share "
        "of cases whose epochs all agree, runs with --probe the share of verdicts a probe changed, or for inject and "
        "duplicate lowered (medians over the runs). A detector's rank is 1 + the number of detectors significantly "
        "better than it: a paired bootstrap over the shared cases' clusters (as the runs' journals name them; 200 "
        "resamples, seed 7), each pair's two-sided p-value adjusted by Holm's step-down over every pair on the board "
        "and compared with 0.05, so that the chance of any false separation stays under it. Detectors that no test "
        "separates share a rank (`2=`). Cases a run did not finish count as errors. Incomplete runs are listed without "
        "a rank (use --include-incomplete). macro_f1_real is macro_f1 on the natural + assembled cases. The natural + "
        "assembled column is macro_f1 on the cases tagged origin_natural or origin_assembled alone (real answers; "
        "origin_constructed cases hold text written for the benchmark); it is always shown next to the all-cases "
        "figure, so constructed cases cannot carry a ranking on their own. The natural only column is macro_f1 on the "
        "origin_natural cases alone (not a ranking). Not ranked: only one detector. Over builtin:vote: a detector's "
        "macro_f1 on all cases less that of builtin:vote (counting votes, the floor a detector is read against), the "
        "representative runs on the same paired resamples."
    )


def test_the_method_text_of_origin_tags_without_natural_cases_ranked_on_all_cases() -> None:
    r = row("a", values=values(macro_f1=0.5, accuracy=0.5, high_risk_recall=0.5, false_alarm_rate=0.5,
                               weighted_kappa=0.5, error_rate=0.5, epoch_sd=0.01))  # fmt: skip
    text = method_text(board([r], real_cases=20))
    assert "count by their median; runs with --epochs show" in text  # epochs but no spread over runs
    assert " The natural + assembled column is macro_f1 on the cases" in text
    assert "natural only" not in text and "macro_f1_real is" not in text and "Not ranked" not in text


# ---- Markdown ----


def test_markdown_heading_table_and_method_read_back() -> None:
    rows = plain_rows()
    rows[0].detector = "a|b *c*"  # a name read from a run folder: inert Markdown, its pipe not a cell border
    text = to_markdown([board(rows, name="my_bench.jsonl")])
    assert text.startswith("### my\\_bench.jsonl (sha256 0123456789ab, 40 cases)\n\n|")
    head, body = md_table(text)
    assert head == PLAIN_HEADER
    assert len(body) == 3
    first = dict(zip(head, body[0], strict=True))
    assert first["detector"] == "a\\|b \\*c\\*"
    assert first["macro_f1 [95% CI]"] == "0.625 [0.500, 0.750]" and first["p95 latency"] == "250.0 ms"
    assert [r[0] for r in body] == ["1", "2=", "-"]
    assert [r[-2] for r in body] == ["1", "2", "1 (+1 incomplete)"]
    assert text.endswith(f"\n\n{PLAIN_METHOD}\n")


def test_markdown_of_two_boards_one_section_each() -> None:
    second = board(plain_rows()[:1], name="other.jsonl")
    text = to_markdown([board(plain_rows()), second])
    sections = text.split("\n### ")
    assert len(sections) == 2 and sections[1].startswith("other.jsonl (sha256 0123456789ab, 40 cases)")
    assert len(md_table(sections[1])[1]) == 1


# ---- CSV and JSON ----

CSV_HEADER = [
    "dataset", "sha256", "rank", "detector", "incomplete", "runs", "cases", "date", "metric", "value", "ci_low",
    "ci_high", "accuracy", "high_risk_recall", "false_alarm_rate", "weighted_kappa", "error_rate", "p95_latency_s",
    "all_cases_value", "all_cases_ci_low", "all_cases_ci_high", "real_cases", "real_value", "real_ci_low",
    "real_ci_high", "runs_min", "runs_max", "epoch_sd", "self_agreement", "order_flip_rate", "names_flip_rate",
    "evidence_order_flip_rate", "format_flip_rate", "tone_flip_rate", "length_flip_rate", "restate_flip_rate",
    "inject_attack_success", "duplicate_fall_rate", "escalation_rate_high", "escalation_rate_medium_high",
    "caught_medium_high", "aurc", "ece", "ece_bins", "vote_margin", "vote_margin_ci_low",
    "vote_margin_ci_high", "consensus_balanced_accuracy",
    "natural_cases", "natural_value", "natural_ci_low", "natural_ci_high",
]  # fmt: skip


def test_csv_every_column_of_a_full_row_and_empty_cells_for_what_is_missing() -> None:
    rows = every_extra_row()
    rows[0].ci95 = (0.4375, 0.6875)  # the ranking metric's (macro_f1_real) interval
    b = board(rows, real_cases=30, natural_cases=12, metric="macro_f1_real")
    text = to_csv([b])
    assert "\r" not in text and text.count("\n") == 4  # a header and three rows, each ending in a bare newline
    lines = list(csv.reader(io.StringIO(text)))
    assert lines[0] == CSV_HEADER
    full, vote = (dict(zip(CSV_HEADER, line, strict=True)) for line in lines[1:3])
    assert full == {
        "dataset": "bench.jsonl", "sha256": SHA, "rank": "1", "detector": "full", "incomplete": "False", "runs": "2",
        "cases": "40", "date": "2026-12-01T10:20:30+00:00", "metric": "macro_f1_real", "value": "0.5625",
        "ci_low": "0.4375", "ci_high": "0.6875", "accuracy": "0.6", "high_risk_recall": "0.875",
        "false_alarm_rate": "0.125", "weighted_kappa": "0.4", "error_rate": "0.05", "p95_latency_s": "0.25",
        "all_cases_value": "0.625", "all_cases_ci_low": "0.5", "all_cases_ci_high": "0.75", "real_cases": "30",
        "real_value": "0.5625", "real_ci_low": "0.4375", "real_ci_high": "0.6875", "runs_min": "0.6",
        "runs_max": "0.65", "epoch_sd": "0.021", "self_agreement": "0.85", "order_flip_rate": "0.1",
        "names_flip_rate": "0.05", "evidence_order_flip_rate": "", "format_flip_rate": "", "tone_flip_rate": "",
        "length_flip_rate": "", "restate_flip_rate": "", "inject_attack_success": "0.25", "duplicate_fall_rate": "",
        "escalation_rate_high": "", "escalation_rate_medium_high": "", "caught_medium_high": "", "aurc": "",
        "ece": "0.0834", "ece_bins": "10.0", "vote_margin": "0.05",
        "vote_margin_ci_low": "-0.02", "vote_margin_ci_high": "0.09", "consensus_balanced_accuracy": "0.71875",
        "natural_cases": "12", "natural_value": "0.4375", "natural_ci_low": "0.25", "natural_ci_high": "0.625",
    }  # fmt: skip
    # builtin:vote: no interval anywhere, no latency, consensus, ECE or spread: empty cells
    for key in ("ci_low", "ci_high", "all_cases_ci_low", "all_cases_ci_high", "real_ci_low", "real_ci_high",
                "vote_margin_ci_low", "vote_margin_ci_high", "natural_ci_low", "natural_ci_high", "p95_latency_s",
                "ece", "ece_bins", "runs_min", "runs_max", "consensus_balanced_accuracy", "epoch_sd"):  # fmt: skip
        assert vote[key] == "", key
    assert (vote["detector"], vote["rank"], vote["value"], vote["vote_margin"]) == ("builtin:vote", "2", "0.5", "0.0")


def test_csv_of_a_plain_board_and_of_two_boards() -> None:
    b = board(plain_rows())
    other = board(plain_rows()[:1], name="other.jsonl")
    lines = list(csv.reader(io.StringIO(to_csv([b, other]))))
    assert len(lines) == 1 + 3 + 1
    gamma = dict(zip(CSV_HEADER, lines[3], strict=True))
    assert (gamma["rank"], gamma["detector"], gamma["incomplete"], gamma["runs"], gamma["cases"]) == (
        "-", "gamma", "True", "1", "31"
    )  # fmt: skip
    assert gamma["real_cases"] == "" and gamma["natural_cases"] == "" and gamma["p95_latency_s"] == ""
    beta = dict(zip(CSV_HEADER, lines[2], strict=True))
    assert (beta["value"], beta["ci_low"], beta["ci_high"], beta["all_cases_ci_low"]) == ("0.5", "0.375", "0.625", "")
    assert lines[4][0] == "other.jsonl" and lines[4][3] == "alpha"


def test_json_holds_each_row_with_its_runs_intervals_and_values() -> None:
    rows = plain_rows()
    rows[0].fingerprint_id = "abcd1234"
    rows[0].note = "a note"
    b = board(rows, real_cases=30, natural_cases=12)
    text = to_json([b])
    assert text.startswith('[\n  {\n    "dataset": {')  # indented by two spaces a level
    doc = json.loads(text)
    assert len(doc) == 1 and board_dict(b)["rows"][1]["runs"] == ["/runs/beta", "/runs/b2"]
    got = doc[0]
    assert (got["dataset"], got["metric"], got["method"], got["card"]) == (b.dataset, "macro_f1", METHOD, b.card)
    assert (got["real_cases"], got["natural_cases"]) == (30, 12)
    alpha, beta, gamma = got["rows"]
    assert alpha == {
        "rank": 1, "rank_label": "1", "detector": "alpha", "fingerprint": "abcd1234", "note": "a note",
        "incomplete": False, "runs": ["/runs/alpha"], "incomplete_runs_left_out": 0, "cases": 40,
        "date": "2026-12-01T10:20:30+00:00", "ci95": None, "ci95_by_metric": {"macro_f1": [0.5, 0.75]},
        "values": rows[0].values,
    }  # fmt: skip
    assert (beta["rank"], beta["rank_label"], beta["ci95"], beta["date"]) == (2, "2=", [0.375, 0.625],
                                                                              "2026-12-02T08:00:00+00:00")  # fmt: skip
    assert (gamma["rank"], gamma["incomplete"], gamma["incomplete_runs_left_out"], gamma["cases"]) == (
        None,
        True,
        1,
        31,
    )
    rows[0].cis = {"macro_f1": None}
    assert board_dict(b)["rows"][0]["ci95_by_metric"] == {"macro_f1": None}


# ---- HTML ----


@pytest.fixture
def no_plots(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, Any]]:
    """The plots stand in for themselves: each names the figure and the detector (drawing PNGs is slow)."""
    from harness.report import plots

    drawn: list[tuple[str, str, Any]] = []

    def fake(kind: str):
        def draw(doc: Any, name: str) -> bytes:
            drawn.append((kind, name, doc))
            return f"{kind}:{name}".encode()

        return draw

    monkeypatch.setattr(plots, "confusion_heatmap_png", fake("confusion"))
    monkeypatch.setattr(plots, "category_bars_png", fake("bars"))
    monkeypatch.setattr(plots, "data_uri", lambda png: "data:image/png;base64," + png.hex())
    return drawn


def test_html_page_tables_cells_sort_keys_card_and_plots(no_plots: list[tuple[str, str, Any]]) -> None:
    rows = plain_rows()
    rows[0].detector = "<a&b>"
    card = {
        "cases": 40,
        "by_category": {"echo": {"low": 1, "medium": 2, "high": 3}, "fact": {"low": 4, "medium": 0, "high": 30}},
        "by_origin": {"natural": 12, "constructed": 28},
    }
    b = board(rows, card=card, name="b<1>.jsonl")
    text = to_html([b])
    assert text.startswith("<!DOCTYPE html>") and "<title>fcb leaderboard</title>" in text
    assert f"<script>{render.SORT_SCRIPT}</script></body></html>" in text and f"<style>{render.STYLE}</style>" in text
    page = parse_html(text)
    assert page.headings == [
        ("title", "fcb leaderboard"),
        ("h1", "False-consensus detector leaderboard"),
        ("h2", "b<1>.jsonl (sha256 0123456789ab, 40 cases)"),
        ("h3", "Data set card"),
        ("h3", "Detectors"),
        ("h4", "<a&b>"),
        ("h4", "beta"),
        ("h4", "gamma"),
    ]
    leaderboard, categories, origins = page.tables
    assert leaderboard["class"] == "sortable" and leaderboard["head"] == PLAIN_HEADER
    cells = [dict(zip(PLAIN_HEADER, r, strict=True)) for r in leaderboard["rows"]]
    assert [c["detector"][0] for c in cells] == ["<a&b>", "beta", "gamma (incomplete)"]
    # each cell's sort key: its first number (a rank's "=" and a share's "%" dropped), else the cell itself
    shown = [[(c[h][0], c[h][1]["data-sort"]) for h in ("rank", "macro_f1 [95% CI]", "accuracy", "p95 latency",
                                                      "runs", "date")] for c in cells]  # fmt: skip
    assert shown == [
        [("1", "1.0"), ("0.625 [0.500, 0.750]", "0.625"), ("60.0%", "60.0"), ("250.0 ms", "250.0"), ("1", "1.0"),
         ("2026-12-01", "2026-12-01")],
        [("2=", "2.0"), ("0.500 [0.375, 0.625]", "0.5"), ("55.0%", "55.0"), ("12.5 ms", "12.5"), ("2", "2.0"),
         ("2026-12-02", "2026-12-02")],
        [("-", "-"), ("0.250", "0.25"), ("30.0%", "30.0"), ("n/a", "n/a"), ("1 (+1 incomplete)", "1.0"),
         ("2026-12-01", "2026-12-01")],
    ]  # fmt: skip
    assert cells[0]["detector"][1]["data-sort"] == "<a&b>"
    assert cells[1]["weighted kappa"] == ("-0.125", {"data-sort": "-0.125"})
    # the card: each category's counts and their sum (1+2+3 = 6, 4+0+30 = 34), then the origins
    assert categories["head"] == ["category", "low", "medium", "high", "cases"]
    assert [[t for t, _ in r] for r in categories["rows"]] == [
        ["echo", "1", "2", "3", "6"],
        ["fact", "4", "0", "30", "34"],
    ]
    assert origins["head"] == ["origin", "cases"]
    assert [[t for t, _ in r] for r in origins["rows"]] == [["natural", "12"], ["constructed", "28"]]
    assert page.paragraphs == [PLAIN_METHOD]
    # two plots a detector, named in their alt text, drawn from the detector's own figures
    metrics = [r.representative.doc["metrics"] for r in rows]
    assert no_plots == [("confusion", "<a&b>", metrics[0]), ("bars", "<a&b>", metrics[0]),
                        ("confusion", "beta", metrics[1]), ("bars", "beta", metrics[1]),
                        ("confusion", "gamma", metrics[2]), ("bars", "gamma", metrics[2])]  # fmt: skip
    assert "".join(page.stray).strip() == ""  # nothing between the tags but the cells' text
    assert [(i["alt"], i["src"]) for i in page.images[:2]] == [
        ("confusion matrix of <a&b>", "data:image/png;base64," + b"confusion:<a&b>".hex()),
        ("per-category accuracy of <a&b>", "data:image/png;base64," + b"bars:<a&b>".hex()),
    ]
    assert len(page.images) == 6 and "<a&b>" not in text  # escaped everywhere


def test_html_card_without_origins_has_one_table_and_two_boards_two_sections(no_plots: list) -> None:
    page = parse_html(to_html([board(plain_rows()[:1]), board(plain_rows()[1:], name="two.jsonl")]))
    assert "".join(page.stray).strip() == ""
    assert len(page.tables) == 4  # a leaderboard and a category table per board
    assert [t["head"][0] for t in page.tables] == ["rank", "category", "rank", "category"]
    assert [len(t["rows"]) for t in page.tables] == [1, 1, 2, 1]
    assert [h for h in page.headings if h[0] == "h2"] == [
        ("h2", "bench.jsonl (sha256 0123456789ab, 40 cases)"),
        ("h2", "two.jsonl (sha256 0123456789ab, 40 cases)"),
    ]


def test_the_renderers_by_format() -> None:
    assert {"md": to_markdown, "csv": to_csv, "json": to_json, "html": to_html} == render.RENDERERS


def test_a_sort_key_is_the_cells_first_number_or_the_cell() -> None:
    """The key is the text before the first space, less a trailing % or =, when it reads as a number: a name that
    starts with a number and a tab, or ends in a letter, is sorted as the name it is."""
    from harness.leaderboard.render import _sort_key

    assert _sort_key("12.5%") == "12.5" and _sort_key("3=") == "3.0" and _sort_key("0.500 [0.375, 0.625]") == "0.5"
    assert _sort_key("2\tfast") == "2\tfast"  # one token up to the first space: "2\tfast" is no number
    assert _sort_key("3X") == "3X" and _sort_key("n/a") == "n/a" and _sort_key("-") == "-"


def test_the_method_text_says_what_the_escalate_columns_are() -> None:
    rows = plain_rows()
    rows[0].values["aurc"] = 0.3
    rows[0].values["escalation_rate_high"] = 0.25
    text = method_text(board(rows))
    assert text.startswith(
        "Ranked by macro_f1. Several runs of one detector (same name and code fingerprint) count by their median; the "
        "escalate columns are the share of cases a person reviews when the cases the detector calls high (or medium or "
        "high) are escalated, and the false consensus that catches; AURC the area under its risk-coverage curve (lower "
        "is better; runs' medians). A detector's rank"
    )
    assert "runs with --epochs" not in text  # no epochs or probe column on this board
    b = board(rows)
    cells = dict(zip(header(b), row_cells(b.rows[0], b), strict=True))
    assert cells["AURC"] == "0.300" and cells["escalate high: share escalated"] == "25.0%"  # a figure, a share


def test_the_run_spread_and_the_escalate_columns_are_both_said() -> None:
    rows = every_extra_row()
    rows[0].values["aurc"] = 0.3
    text = method_text(board(rows))
    assert "count by their median, the lowest and highest beside it; the escalate columns are" in text
