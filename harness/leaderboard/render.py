"""Render leaderboards as Markdown, CSV, JSON or one self-contained HTML page."""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Callable

import orjson

from harness.documents import LeaderboardBoard
from harness.leaderboard.rank import (
    COLUMNS,
    CONSENSUS,
    ECE,
    ECE_BINS,
    LATENCY,
    REPEATS,
    RUNS_MAX,
    RUNS_MIN,
    VOTE,
    VOTE_MARGIN,
    Board,
    Row,
    metric_pair,
    natural_of,
)
from harness.leaderboard.runs import REAL_SUFFIX
from harness.report.markdown import md_text
from harness.tables import figure, interval, percent, table

REAL_LABEL = "natural + assembled"
NATURAL_LABEL = "natural only"
HEADER = [
    "rank",
    "detector",
    "{metric} [95% CI]",
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


def shows_real(board: Board) -> bool:
    """The natural + assembled column is shown whenever the cases carry origin tags (or it is the ranking)."""
    return board.real_cases is not None or board.metric.endswith(REAL_SUFFIX)


def shows_ece(board: Board) -> bool:
    """The ECE column is shown when a row has an ECE (a detector that gave risk_score)."""
    return any(r.values.get(ECE) is not None for r in board.rows)


REPEAT_HEADERS = {
    "epoch_sd": "macro-F1 sd over epochs",
    "self_agreement": "epochs all agree",
    "order_flip_rate": "order flip rate",
    "names_flip_rate": "names flip rate",
    "evidence_order_flip_rate": "evidence-order flip rate",
    "format_flip_rate": "format flip rate",
    "tone_flip_rate": "tone flip rate",
    "length_flip_rate": "length flip rate",
    "restate_flip_rate": "restate flip rate",
    "inject_attack_success": "inject attack success",
    "duplicate_fall_rate": "duplicate fall rate on high",
    "escalation_rate_high": "escalate high: share escalated",
    "escalation_rate_medium_high": "escalate medium or high: share escalated",
    "caught_medium_high": "escalate medium or high: false consensus caught",
    "aurc": "AURC",
}
"""The columns of runs with --epochs or --probe (`harness.leaderboard.rank.REPEATS`), each shown when a row has it."""


def repeat_columns(board: Board) -> list[str]:
    """The `REPEATS` keys some row of the board has a value for."""
    return [key for key in REPEATS if any(r.values.get(key) is not None for r in board.rows)]


def shows_run_spread(board: Board) -> bool:
    """The spread over runs is shown when a row counts two runs or more."""
    return any(r.values.get(RUNS_MIN) is not None for r in board.rows)


def _extra_headers(board: Board) -> list[str]:
    cols = [f"{board.metric} over runs (min-max)"] if shows_run_spread(board) else []
    cols += [REPEAT_HEADERS[key] for key in repeat_columns(board)]
    if shows_ece(board):
        cols.append("ECE of risk_score (bins)")
    return cols


def _extra_cells(row: Row, board: Board) -> list[str]:
    v = row.values
    cells = []
    if shows_run_spread(board):
        lo, hi = v.get(RUNS_MIN), v.get(RUNS_MAX)
        cells.append("n/a" if lo is None or hi is None else f"{lo:.3f}-{hi:.3f}")
    cells += [
        figure(v.get(key)) if key in ("epoch_sd", "aurc") else percent(v.get(key)) for key in repeat_columns(board)
    ]
    if shows_ece(board):
        cells.append(_ece_cell(row))
    return cells


def header(board: Board) -> list[str]:
    base, _ = metric_pair(board.metric)
    cols = [h.format(metric=base) for h in HEADER]
    at = cols.index("p95 latency")
    cols[at:at] = _extra_headers(board)
    if shows_consensus(board):
        cols.insert(3, "consensus balanced accuracy")
    if shows_vote_margin(board):
        cols.insert(3, f"{base} over builtin:vote [95% CI]")
    if shows_natural(board):
        cols.insert(3, f"{base}, {NATURAL_LABEL} ({board.natural_cases} cases) [95% CI]")
    if shows_real(board):
        cases = "no" if board.real_cases is None else board.real_cases
        cols.insert(3, f"{base}, {REAL_LABEL} ({cases} cases) [95% CI]")
    return cols


def shows_natural(board: Board) -> bool:
    """The natural-only column is shown beside the natural + assembled one when the cases carry origin tags."""
    return board.natural_cases is not None


def shows_consensus(board: Board) -> bool:
    """The consensus balanced accuracy is shown when a row has it (its cases hold a consensus, and its runs are
    recent enough to report it)."""
    return any(r.values.get(CONSENSUS) is not None for r in board.rows)


def shows_vote_margin(board: Board) -> bool:
    """The margin over builtin:vote is shown when the board holds a builtin:vote run."""
    return any(r.values.get(VOTE_MARGIN) is not None for r in board.rows)


def _vote_cell(row: Row) -> str:
    margin = row.values.get(VOTE_MARGIN)
    if margin is None:
        return "n/a"
    if row.representative.detector == VOTE and row.cis.get(VOTE_MARGIN) is None and margin == 0:
        return "baseline"
    ci = row.cis.get(VOTE_MARGIN)
    return f"{margin:+.3f}" + (f" {interval(ci)}" if ci else "")


def _ece_cell(row: Row) -> str:
    ece, bins = row.values.get(ECE), row.values.get(ECE_BINS)
    return "n/a" if ece is None else f"{ece:.3f} ({bins:.0f} bins)"


def _with_ci(value: float | None, ci: tuple[float, float] | None) -> str:
    return figure(value) + (f" {interval(ci)}" if ci else "")


def row_cells(row: Row, board: Board, shown: Callable[[str], str] = str) -> list[str]:
    """A row's cells; ``shown`` renders the detector's name, read from run folders (`md_text` for Markdown)."""
    v = row.values
    base, real = metric_pair(board.metric)
    latency = v[LATENCY]
    detector = shown(row.detector) + (" (incomplete)" if row.incomplete else "")
    cells = [
        row.rank_label,
        detector,
        _with_ci(v[base], row.cis.get(base, row.ci95 if base == board.metric else None)),
        percent(v["accuracy"]),
        percent(v["high_risk_recall"]),
        percent(v["false_alarm_rate"]),
        figure(v["weighted_kappa"]),
        percent(v["error_rate"]),
        "n/a" if latency is None else f"{1000 * latency:.1f} ms",
        str(row.cases),
        _runs(row),
        row.date[:10],
    ]
    at = HEADER.index("p95 latency")
    cells[at:at] = _extra_cells(row, board)
    if shows_consensus(board):
        cells.insert(3, figure(v.get(CONSENSUS)))
    if shows_vote_margin(board):
        cells.insert(3, _vote_cell(row))
    if shows_natural(board):
        cells.insert(3, _with_ci(v[natural_of(board.metric)], row.cis.get(natural_of(board.metric))))
    if shows_real(board):
        cells.insert(3, _with_ci(v[real], row.cis.get(real)))
    return cells


def _runs(row: Row) -> str:
    return f"{len(row.runs)} (+{row.left_out} incomplete)" if row.left_out else str(len(row.runs))


def _heading(board: Board) -> str:
    ds = board.dataset
    return f"{ds['name']} (sha256 {ds['sha256'][:12]}, {ds['cases']} cases)"


def _origin_text(board: Board) -> str:
    if not shows_real(board):
        return ""
    base, real = metric_pair(board.metric)
    text = (
        f" The {REAL_LABEL} column is {base} on the cases tagged origin_natural or origin_assembled alone (real "
        f"answers; origin_constructed cases hold text written for the benchmark); it is always shown next to the "
        f"all-cases figure, so constructed cases cannot carry a ranking on their own."
    )
    if shows_natural(board):
        text += f" The {NATURAL_LABEL} column is {base} on the origin_natural cases alone (not a ranking)."
    if board.metric == real:
        text = f" {real} is {base} on the {REAL_LABEL} cases." + text
    if note := board.method.get("note"):
        text += f" Not ranked: {note}."
    return text


OPERATING_KEYS = ("escalation_rate_high", "escalation_rate_medium_high", "caught_medium_high", "aurc")


def _spread_text(board: Board) -> str:
    text = ", the lowest and highest beside it" if shows_run_spread(board) else ""
    shown = repeat_columns(board)
    if set(shown) & set(OPERATING_KEYS):
        text += (
            "; the escalate columns are the share of cases a person reviews when the cases the detector calls high "
            "(or medium or high) are escalated, and the false consensus that catches; AURC the area under its "
            "risk-coverage curve (lower is better; runs' medians)"
        )
    if set(shown) - set(OPERATING_KEYS):
        text += (
            "; runs with --epochs show the sd of macro-F1 over their epochs and the share of cases whose epochs all "
            "agree, runs with --probe the share of verdicts a probe changed, or for inject and duplicate lowered "
            "(medians over the runs)"
        )
    return text


def method_text(board: Board) -> str:
    m = board.method
    return (
        f"Ranked by {board.metric}. Several runs of one detector (same name and code fingerprint) count by their "
        f"median{_spread_text(board)}. A detector's rank is 1 + the "
        f"number of detectors significantly better than it: a paired bootstrap over the shared cases' clusters "
        f"(as the runs' journals name them; {m['bootstrap_resamples']} resamples, seed {m['seed']}), each pair's "
        f"two-sided p-value adjusted by Holm's step-down over every pair on the board and compared with "
        f"{m['alpha']:g}, so that the chance of any false separation stays under it. Detectors that no test "
        f"separates share a rank (`2=`). Cases a run did not finish count as errors. Incomplete runs are "
        + ("ranked (marked)." if m["include_incomplete"] else "listed without a rank (use --include-incomplete).")
        + _origin_text(board)
        + _vote_text(board)
        + "".join(f" {note}." for note in dict.fromkeys(r.note for r in board.rows if r.note))
    )


def _vote_text(board: Board) -> str:
    base, _ = metric_pair(board.metric)
    if shows_vote_margin(board):
        return (
            f" Over builtin:vote: a detector's {base} on all cases less that of builtin:vote (counting votes, the "
            "floor a detector is read against), the representative runs on the same paired resamples."
        )
    return " Run builtin:vote on this data set (fcb eval CASES -d builtin:vote) to see each detector's margin over it."


def to_markdown(boards: list[Board]) -> str:
    parts = []
    for board in boards:
        # a detector's name and the data set's come from run folders: inert Markdown (`md_text`), never rendered
        body = table([row_cells(r, board, md_text) for r in board.rows], headers=header(board), tablefmt="github")
        ds = board.dataset
        heading = f"{md_text(ds['name'])} (sha256 {md_text(ds['sha256'][:12])}, {ds['cases']} cases)"
        parts.append(f"### {heading}\n\n{body}\n\n{method_text(board)}\n")
    return "\n".join(parts)


def to_csv(boards: list[Board]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(
        [
            "dataset",
            "sha256",
            "rank",
            "detector",
            "incomplete",
            "runs",
            "cases",
            "date",
            "metric",
            "value",
            "ci_low",
            "ci_high",
            *COLUMNS,
            "p95_latency_s",
            # the metric's base name on all cases and on the natural + assembled ones (empty without origin tags)
            "all_cases_value",
            "all_cases_ci_low",
            "all_cases_ci_high",
            "real_cases",
            "real_value",
            "real_ci_low",
            "real_ci_high",
            # the ranking metric's lowest and highest over the runs (empty for one run); the figures of runs with
            # --epochs and --probe, medians over the runs (empty without them)
            RUNS_MIN,
            RUNS_MAX,
            *REPEATS,
            # the median expected calibration error of risk_score and its bin count (empty without scores)
            "ece",
            "ece_bins",
            # the ranking metric's base less builtin:vote's, with its paired interval (empty without a vote run)
            VOTE_MARGIN,
            f"{VOTE_MARGIN}_ci_low",
            f"{VOTE_MARGIN}_ci_high",
            # the median balanced accuracy on the cases with a consensus (empty for runs without the block)
            "consensus_balanced_accuracy",
            # the metric's base on the natural cases alone, with its paired interval (empty without origin tags)
            "natural_cases",
            "natural_value",
            "natural_ci_low",
            "natural_ci_high",
        ]
    )
    for board in boards:
        for r in board.rows:
            ci = r.ci95 or (None, None)
            base, real = metric_pair(board.metric)
            writer.writerow(
                [
                    board.dataset["name"],
                    board.dataset["sha256"],
                    r.rank_label,
                    r.detector,
                    r.incomplete,
                    len(r.runs),
                    r.cases,
                    r.date,
                    board.metric,
                    r.values[board.metric],
                    *ci,
                    *(r.values[c] for c in COLUMNS),
                    r.values[LATENCY],
                    r.values[base],
                    *(r.cis.get(base) or (None, None)),
                    board.real_cases,
                    r.values[real],
                    *(r.cis.get(real) or (None, None)),
                    r.values[RUNS_MIN],
                    r.values[RUNS_MAX],
                    *(r.values.get(key) for key in REPEATS),
                    r.values[ECE],
                    r.values[ECE_BINS],
                    r.values[VOTE_MARGIN],
                    *(r.cis.get(VOTE_MARGIN) or (None, None)),
                    r.values[CONSENSUS],
                    board.natural_cases,
                    r.values[natural_of(board.metric)],
                    *(r.cis.get(natural_of(board.metric)) or (None, None)),
                ]
            )
    return out.getvalue()


def board_dict(board: Board) -> LeaderboardBoard:
    return {
        "dataset": board.dataset,
        "metric": board.metric,
        "method": board.method,
        "card": board.card,
        "real_cases": board.real_cases,
        "natural_cases": board.natural_cases,
        "rows": [
            {
                "rank": r.rank,
                "rank_label": r.rank_label,
                "detector": r.detector,
                "fingerprint": r.fingerprint_id,
                "note": r.note,
                "incomplete": r.incomplete,
                "runs": [str(run.path) for run in r.runs],
                "incomplete_runs_left_out": r.left_out,
                "cases": r.cases,
                "date": r.date,
                "ci95": list(r.ci95) if r.ci95 else None,
                "ci95_by_metric": {k: list(v) if v else None for k, v in r.cis.items()},
                "values": r.values,
            }
            for r in board.rows
        ],
    }


def to_json(boards: list[Board]) -> str:
    return orjson.dumps([board_dict(b) for b in boards], option=orjson.OPT_INDENT_2).decode()


SORT_SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute("data-order") !== "asc";
      rows.sort(function (a, b) {
        var x = a.cells[col].getAttribute("data-sort"), y = b.cells[col].getAttribute("data-sort");
        var nx = parseFloat(x), ny = parseFloat(y);
        var cmp = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : String(x).localeCompare(String(y));
        return asc ? cmp : -cmp;
      });
      rows.forEach(function (r) { body.appendChild(r); });
      th.setAttribute("data-order", asc ? "asc" : "desc");
    });
  });
});
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: right; }
th { background: #f0f0f0; cursor: pointer; }
td:nth-child(2) { text-align: left; }
.detector { display: inline-block; margin: 0 1em 1em 0; vertical-align: top; }
.detector img { max-width: 560px; }
"""


def _sort_key(cell: str) -> str:
    token = cell.split(" ")[0].rstrip("%=")
    try:
        return str(float(token))
    except ValueError:
        return cell


def _table(board: Board) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header(board))
    body = []
    for r in board.rows:
        cells = row_cells(r, board)
        tds = "".join(f'<td data-sort="{html.escape(_sort_key(c))}">{html.escape(c)}</td>' for c in cells)
        body.append(f"<tr>{tds}</tr>")
    return f'<table class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _card(board: Board) -> str:
    rows = [[cat, c["low"], c["medium"], c["high"], sum(c.values())] for cat, c in board.card["by_category"].items()]
    out = table(rows, headers=["category", "low", "medium", "high", "cases"], tablefmt="html")
    if origins := board.card.get("by_origin"):
        out += table(list(origins.items()), headers=["origin", "cases"], tablefmt="html")
    return out


def to_html(boards: list[Board]) -> str:
    """One static page: no script or style from the network, plots embedded as PNG data."""
    from harness.report.plots import category_bars_png, confusion_heatmap_png, data_uri

    sections = []
    for board in boards:
        figures = []
        for row in board.rows:
            doc = row.representative.doc["metrics"]
            title = html.escape(row.detector)
            figures.append(
                f'<div class="detector"><h4>{title}</h4>'
                f'<img alt="confusion matrix of {title}" src="{data_uri(confusion_heatmap_png(doc, row.detector))}">'
                f'<img alt="per-category accuracy of {title}" '
                f'src="{data_uri(category_bars_png(doc, row.detector))}"></div>'
            )
        sections.append(
            f"<section><h2>{html.escape(_heading(board))}</h2>{_table(board)}"
            f"<p>{html.escape(method_text(board))}</p>"
            f"<h3>Data set card</h3>{_card(board)}"
            f"<h3>Detectors</h3>{''.join(figures)}</section>"
        )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>fcb leaderboard</title>'
        f"<style>{STYLE}</style></head><body><h1>False-consensus detector leaderboard</h1>"
        f"{''.join(sections)}<script>{SORT_SCRIPT}</script></body></html>"
    )


RENDERERS = {"md": to_markdown, "csv": to_csv, "json": to_json, "html": to_html}
