"""``report.html``: one self-contained page per run, with the report's figures and a case explorer.

The page needs no other file and no network: its style and script are inlined, its plots are inline SVG, and the
cases ride along as gzip-compressed JSON in the page, unpacked by the browser's own ``DecompressionStream``
(10,000 cases stay well under 15 MB). Case text is read from the cases file when the page is written; the journal
stays text-free. The explorer filters by category, expected and predicted risk, right or wrong, error kind and free
text, sorts on any column, and opens a case with its answers, labels and the detector's whole reply or error.
"""

from __future__ import annotations

import html
import os
import sys
import webbrowser
from collections.abc import Iterable, Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from harness.cases.reader import Scan
from harness.documents import (
    BaselineDocument,
    CompareDocument,
    GroupAccuracy,
    JournalRecord,
    Metrics,
    MetricsDocument,
    ReliabilityBin,
)
from harness.errors import ReportError  # noqa: F401 - importable from here as before
from harness.files import atomic_write
from harness.report.operating import OPERATING_HEADER, operating_note, operating_rows, review_svg, threshold_lines
from harness.report.packing import pack_explorer
from harness.report.repeats import (
    AGREEMENT_HEADER,
    EPOCH_HEADER,
    PROBE_HEADER,
    PROBES_NOTE,
    STYLE_HEADER,
    agreement_rows,
    annotate,
    epoch_rows,
    epochs_note,
    item_views,
    probe_category_rows,
    probe_rows,
    style_rows,
)
from harness.report.text import (
    CALIBRATION_HEADER,
    CATEGORY_HEADER,
    ERROR_HEADER,
    NATURAL_LABEL,
    REAL_LABEL,
    calibration_note,
    calibration_of,
    calibration_rows,
    category_rows,
    class_rows,
    error_message_rows,
    headline_table,
    interval_lines,
    operational_rows,
)
from harness.runfolder.baseline import decode_cases, read_baseline
from harness.runfolder.cases import SpooledTexts, case_texts, file_sha256_of
from harness.runfolder.names import REPORT_HTML
from harness.runfolder.read import case_records, item_records, read_metrics, records_by_case
from harness.tables import percent
from harness.types import RISKS, ItemKey

COLUMNS = [*RISKS, "error"]


def esc(value: Any) -> str:
    return html.escape("" if value is None else str(value))


# ---- reading a run: journal records joined with the case text (harness.runfolder.cases) ----


def prediction_view(rec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A journal record as the explorer reads it (short keys: the page holds thousands of them)."""
    if rec is None:
        return None
    err = rec.get("error") or {}
    out = {
        "r": rec.get("risk") if rec.get("risk") in RISKS else None,
        "s": rec.get("score"),
        "e": err.get("kind"),
        "l": rec.get("latency_s"),
        "a": rec.get("attempts"),
        "resp": rec.get("response"),
    }
    if rec.get("cached"):
        out["c"] = 1
    for key, short in (("message", "em"), ("traceback", "tb"), ("raw", "raw")):
        if err.get(key):
            out[short] = err[key]
    return out


def explorer_rows(
    journals: Sequence[Mapping[str, Mapping[str, Any]]],
    cases_path: str | Scan | None,
    ids: Sequence[str] | None = None,
    sha256: str | None = None,
) -> tuple[Iterator[dict[str, Any]], str]:
    """The explorer's rows, made one at a time as they are packed, and a note: one row per case id (default: every
    journaled id, in id order), with one prediction per journal (None where that run has no record) and the case's
    text when the cases file is still the one the run read (``sha256``: the file's digest as the run recorded it; see
    `case_texts`). From the run's own scan, each case's text is read from the spool when its row is made, so that no
    more than one row is held (9,999 cases: 27 MB less at peak)."""
    if ids is None:
        ids = sorted({cid for j in journals for cid in j})
    firsts = {cid: next(r for r in (j.get(cid) for j in journals) if r is not None) for cid in ids}
    wanted = {cid: rec.get("hash") for cid, rec in firsts.items()}
    if isinstance(cases_path, Scan):  # the run's own scan: its cases as read, nothing parsed again
        texts: Mapping[str, Any] = SpooledTexts(cases_path, wanted)
        note = ""
    else:
        texts, note = case_texts(cases_path, wanted, sha256)
    return _rows(journals, ids, firsts, texts), note


def _rows(
    journals: Sequence[Mapping[str, Mapping[str, Any]]],
    ids: Sequence[str],
    firsts: Mapping[str, Mapping[str, Any]],
    texts: Mapping[str, Any],
) -> Iterator[dict[str, Any]]:
    for cid in ids:
        first = firsts[cid]
        row: dict[str, Any] = {
            "id": cid,
            "cat": first.get("category"),
            "exp": first.get("expected"),
            "p": [prediction_view(j.get(cid)) for j in journals],
        }
        if first.get("origin"):
            row["origin"] = first["origin"]
        if cid in texts:
            row["case"] = texts[cid]  # the whole case: this is the report, labels and metadata included
        yield row


# ---- static parts of the page ----


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def heatmap(counts: Sequence[Sequence[int]], run: int = 0, title: str = "") -> str:
    """The confusion matrix (error column included) as a heatmap; a click on a cell filters the explorer to it."""
    peak = max((max(r) for r in counts), default=0) or 1
    cells = []
    for exp, row in zip(RISKS, counts, strict=True):
        tds = []
        for pred, n in zip(COLUMNS, row, strict=True):
            shade = n / peak
            color = "#fff" if shade > 0.55 else "#111"
            tds.append(
                f'<td class="cell" data-run="{run}" data-exp="{exp}" data-pred="{pred}" title="expected {exp}, '
                f'predicted {pred}: {n} case(s); click to list them" style="background:rgba(31,87,160,{shade:.3f});'
                f'color:{color}">{n}</td>'
            )
        cells.append(f"<tr><th>{exp}</th>{''.join(tds)}</tr>")
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    caption = f"<caption>{esc(title)}</caption>" if title else ""
    return (
        f'<table class="heatmap">{caption}<thead><tr><th>expected \\ predicted</th>{head}</tr></thead>'
        f"<tbody>{''.join(cells)}</tbody></table>"
    )


def bars_svg(rows: Sequence[tuple[str, float | None, Sequence[float] | None, int]], width: int = 640) -> str:
    """Accuracy bars with their 95% interval as whiskers, one per (label, accuracy, interval, n): inline SVG."""
    left, bar_w, row_h = 230, width - 340, 22
    height = row_h * len(rows) + 24
    parts = [f'<svg class="bars" width="{width}" height="{height}" role="img" aria-label="accuracy with intervals">']
    for i, (label, acc, ci, n) in enumerate(rows):
        y = 4 + i * row_h
        parts.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end">{esc(label)[:34]}</text>')
        if acc is not None:
            parts.append(
                f'<rect x="{left}" y="{y + 3}" width="{acc * bar_w:.1f}" height="{row_h - 8}" fill="#4c72b0"/>'
            )
        if ci:
            lo, hi = left + ci[0] * bar_w, left + ci[1] * bar_w
            mid = y + row_h / 2
            parts.append(
                f'<path d="M{lo:.1f} {mid}H{hi:.1f}M{lo:.1f} {mid - 5}v10M{hi:.1f} {mid - 5}v10" stroke="#222"/>'
            )
        shown = percent(acc)
        parts.append(f'<text x="{left + bar_w + 8}" y="{y + 14}">{shown} (n={n})</text>')
    axis_y = 4 + len(rows) * row_h
    for tick in (0, 0.5, 1):
        x = left + tick * bar_w
        parts.append(f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle" class="tick">{tick:.0%}</text>')
    parts.append("</svg>")
    return "".join(parts)


def reliability_svg(diagram: Sequence[ReliabilityBin], size: int = 300) -> str:
    """The reliability diagram as inline SVG: per bin with cases, a bar over the bin as high as the observed share
    of high risk and a dot at (mean score, share high); the diagonal is where a calibrated score lies."""
    pad = 36
    side = size - 2 * pad

    def x(v: float) -> float:
        return pad + v * side

    def y(v: float) -> float:
        return pad + (1 - v) * side

    parts = [f'<svg class="reliability" width="{size}" height="{size}" role="img" aria-label="reliability diagram">',
             f'<rect x="{pad}" y="{pad}" width="{side}" height="{side}" fill="#fff" stroke="#999"/>',
             f'<path d="M{x(0)} {y(0)}L{x(1)} {y(1)}" stroke="#999" stroke-dasharray="4 3"/>']  # fmt: skip
    for b in diagram:
        if not b["count"] or b["mean_score"] is None or b["share_high"] is None:
            continue
        share, mean = b["share_high"], b["mean_score"]
        tip = (f"scores {b['lower']:.3f} to {b['upper']:.3f}: {b['count']} case(s), mean score {mean:.3f}, "
               f"share high {share:.3f}")  # fmt: skip
        parts.append(
            f'<rect class="bin" data-count="{b["count"]}" x="{x(b["lower"]):.1f}" y="{y(share):.1f}" '
            f'width="{(b["upper"] - b["lower"]) * side:.1f}" height="{share * side:.1f}" fill="rgba(76,114,176,.35)" '
            f'stroke="#4c72b0"><title>{esc(tip)}</title></rect>'
            f'<circle cx="{x(mean):.1f}" cy="{y(share):.1f}" r="3" fill="#b42318"><title>{esc(tip)}</title></circle>'
        )
    for tick in (0, 0.5, 1):
        parts.append(f'<text class="tick" x="{x(tick):.1f}" y="{size - pad + 14}" text-anchor="middle">{tick:g}</text>')
        parts.append(f'<text class="tick" x="{pad - 4}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    parts.append(f'<text x="{size / 2}" y="{size - 4}" text-anchor="middle">mean risk_score</text>')
    parts.append(f'<text x="10" y="{size / 2}" transform="rotate(-90 10 {size / 2})" text-anchor="middle">'
                 "share high</text></svg>")  # fmt: skip
    return "".join(parts)


def calibration_section(m: Metrics) -> str:
    """The calibration figures: what they count (or that there are none), the diagram and its table."""
    out = f"<h2>Calibration</h2><p class='note' id='calibration-note'>{esc(calibration_note(m))}</p>"
    if cal := calibration_of(m):
        legend = ("<p class='note'>Bars: each bin's share of high risk, over the bin's scores; dots: at the bin's mean "
                  "score; dashed: where a calibrated score lies. Hover a bar for its count.</p>")  # fmt: skip
        out += f"<div class='row'><div>{reliability_svg(cal['diagram'])}{legend}</div>"
        out += f"<div>{table(CALIBRATION_HEADER, calibration_rows(m), 'num calibration')}</div></div>"
    return out


def repeats_section(m: Metrics) -> str:
    """The epochs and probes figures (`harness.report.repeats`); empty for a plain run."""
    out = ""
    if rows := epoch_rows(m):
        out += f"<h2>Epochs</h2><p class='note'>{esc(epochs_note(m))}</p>{table(EPOCH_HEADER, rows, 'num')}"
        out += f"<h3>Self-agreement</h3>{table(AGREEMENT_HEADER, agreement_rows(m), 'num')}"
    if rows := probe_rows(m):
        header, cat_rows = probe_category_rows(m)
        out += (f"<h2>Probes: the robustness card</h2><p class='note'>{esc(PROBES_NOTE)}</p>"
                f"{table(PROBE_HEADER, rows, 'num probes')}")  # fmt: skip
        if styled := style_rows(m):
            out += f"<h3>Per tone and per injected template</h3>{table(STYLE_HEADER, styled, 'num')}"
        out += f"<details><summary>Each probe's figure per category</summary>{table(header, cat_rows, 'num')}</details>"
    return out


def group_section(title: str, groups: Mapping[str, GroupAccuracy]) -> str:
    rows = [(k, v["accuracy"], v.get("ci95"), v["n"]) for k, v in groups.items()]
    return f"<h3>{esc(title)}</h3>{bars_svg(rows)}" if rows else ""


def run_sections(doc: MetricsDocument) -> str:
    """Everything above the explorer: headline with intervals, matrix, per class, per category, breakdowns,
    operational figures and the distinct error messages."""
    m = doc["metrics"]
    header, rows = headline_table(m)
    out = [f"<h2>Headline</h2>{table(header, rows, 'num')}"]
    out += [f"<p class='note'>{esc(line)}</p>" for line in interval_lines(m)]  # escaped whole, by esc
    if m.get("headline_real"):
        out.append(
            f"<p class='note'>The {esc(REAL_LABEL)} column counts only cases tagged origin_natural or "
            f"origin_assembled, the {esc(NATURAL_LABEL)} column the origin_natural ones; read the columns "
            "together.</p>"
        )
    if rows := operating_rows(m):
        points = table(OPERATING_HEADER, rows, "num operating")
        held = "".join(f"<p class='threshold'>{esc(line)}</p>" for line in threshold_lines(m))
        out.append(f"<h2>Operating points</h2><p class='note'>{esc(operating_note(m))}</p><div class='row'>"
                   f"<div>{review_svg(m)}</div><div>{points}{held}</div></div>")  # fmt: skip
    out.append('<div class="row"><div>')
    out.append(f"<h2>Confusion matrix</h2>{heatmap(m['confusion_matrix']['counts'])}")
    out.append("<p class='note'>Click a cell to list its cases below.</p></div><div>")
    out.append(f"<h2>Per class</h2>{table(['risk', 'precision', 'recall', 'F1', 'support'], class_rows(m), 'num')}")
    out.append("</div></div>")
    out.append(calibration_section(m))
    out.append(repeats_section(m))
    cats = [(c, v["accuracy"], v.get("ci95"), v["n"]) for c, v in m["per_category"].items()]
    out.append(f"<h2>Per category</h2>{bars_svg(cats)}{table(CATEGORY_HEADER, category_rows(m), 'num')}")
    breakdowns = m.get("breakdowns", {})
    out.append("<h2>Breakdowns</h2>")
    out.append(group_section("By model_family", breakdowns.get("model_family", {})))
    if m.get("headline_real"):
        out.append(group_section("By origin", breakdowns.get("origin", {})))
    others = [
        group_section(f"By {name}", g) for name, g in breakdowns.items() if name not in ("model_family", "origin")
    ]
    out.append(f"<details><summary>Other breakdowns</summary>{''.join(others)}</details>")
    out.append(f"<h2>Operational</h2>{table(['', ''], operational_rows(m))}")
    if errors := error_message_rows(m, width=400):
        out.append(f"<h2>Errors (most frequent messages)</h2>{table(ERROR_HEADER, errors, 'errors')}")
    return "".join(out)


def _asset(name: str) -> str:
    return (resources.files("harness") / "data" / name).read_text(encoding="utf-8")


def page(title: str, subtitle: Sequence[str], sections: str, explorer: dict[str, Any]) -> str:
    """A whole page: the static sections, then the explorer over ``explorer`` (``runs`` labels, ``cases`` rows, a list
    or made as they are packed, and a ``note``)."""
    lines = "".join(f"<li>{esc(s)}</li>" for s in subtitle if s)
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:; connect-src 'none'\">"
        f"<title>{esc(title)}</title><style>{_asset('report.css')}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><ul class='meta'>{lines}</ul></header><main>{sections}"
        "<h2 id='explorer-title'>Cases</h2><div id='explorer'><p id='loading'>Loading the cases...</p></div>"
        "<aside id='detail' hidden></aside></main>"
        f"<script type='application/octet-stream' id='cases-data'>"
        f"{pack_explorer(explorer['runs'], explorer['cases'], explorer['note'])}</script>"
        f"<script>{_asset('report.js')}</script></body></html>\n"
    )


def _title_lines(doc: MetricsDocument) -> list[str]:
    ds, det = doc["dataset"], doc["detector"]
    status = "complete" if doc["complete"] else "INCOMPLETE"
    return [
        f"detector: {det.get('label') or det['spec']}" + (f" ({det['spec']})" if det.get("label") else ""),
        f"data set: {ds['name']} (sha256 {ds['sha256'][:12]}, {ds['cases']} valid cases)",
        f"run: {status}; harness {doc['harness_version']}; {doc['created']}",
        f"stopped: {doc['stopped']}" if doc.get("stopped") else "",
    ]


def run_page(
    run_dir: str | Path,
    doc: MetricsDocument,
    cases: str | Scan | None = None,
    items: Mapping[ItemKey, JournalRecord] | None = None,
) -> tuple[str, str]:
    """(the page of one run, a note when some or all case text is missing), from its metrics document, its journal
    and its cases file: ``cases`` (a path, or the run's own scan of the file), by default the file the run read.
    ``items``: the journal's records as the run wrote them, when it wrote the whole journal itself (no earlier
    session): then nothing is read back."""
    if items is None:
        items = item_records(run_dir)  # read once: the reduced verdicts and the items' views both come from it
        records = case_records(run_dir, items=items)
    else:  # the run's own settings are its run.json's: the same reducer
        records = records_by_case(items, doc["settings"].get("epoch_reducer", "mode"))
    dataset = doc["dataset"]
    rows, note = explorer_rows([records], cases or dataset.get("path"), sha256=file_sha256_of(dataset))
    rows = _annotated(rows, item_views(items))  # with epochs or probes: each epoch's verdict, the variants that flipped
    label = doc["detector"].get("label") or doc["detector"]["spec"]
    explorer = {"runs": [label], "cases": rows, "note": note}
    return page("False-consensus detector report", [*_title_lines(doc), note], run_sections(doc), explorer), note


def _annotated(rows: Iterable[dict[str, Any]], views: Mapping[str, Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    for row in rows:
        annotate([row], views)
        yield row


def write_html(
    run_dir: str | Path,
    doc: MetricsDocument | None = None,
    cases: str | Scan | None = None,
    items: Mapping[ItemKey, JournalRecord] | None = None,
) -> Path:
    """Write ``report.html`` into the run folder (atomically); returns its path. ``doc``: the metrics document
    (read from ``metrics.json`` when not given); ``cases`` and ``items``: as `run_page` takes them."""
    run_dir = Path(run_dir)
    html_page, _ = run_page(run_dir, read_metrics(run_dir) if doc is None else doc, cases, items)
    path = run_dir / REPORT_HTML
    atomic_write(path, html_page.encode())
    return path


def open_in_browser(path: Path) -> bool:
    """Open the page in a browser when a display is at hand; False when none is (the caller prints the path)."""
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or sys.platform in ("darwin", "win32")):
        return False
    try:
        return webbrowser.open(path.resolve().as_uri())
    except webbrowser.Error:
        return False


# ---- comparing two runs: flipped cases with both predictions, in the same explorer ----


def _baseline_records(doc: BaselineDocument) -> dict[str, dict[str, Any]]:
    """A baseline file's cases as journal-like records (it keeps one letter per case, no reply)."""
    records = {}
    for case in decode_cases(doc):
        records[case.id] = {
            "id": case.id,
            "category": case.category,
            "expected": case.expected,
            "risk": case.predicted,
            "error": None if case.predicted else {"kind": "error", "message": "an error (a baseline keeps no message)"},
        }
    return records


def run_records(path: str | Path) -> tuple[dict[str, Any], Mapping[str, Any]]:
    """(journal records by id, the metrics document's ``dataset`` block) of a run folder or a baseline file
    (``fcb baseline save``), each read through `harness.runfolder.read` (`RunLoadError` names the file and field)."""
    path = Path(path)
    if path.is_file():
        baseline = read_baseline(path)
        return _baseline_records(baseline), baseline["doc"]["dataset"]
    return dict(case_records(path)), read_metrics(path)["dataset"]


def confusion_counts(rows: Sequence[dict[str, Any]], run: int) -> list[list[int]]:
    """The 3x4 confusion matrix of one run over the explorer's rows (a case the run lacks counts as an error)."""
    counts = [[0] * len(COLUMNS) for _ in RISKS]
    for row in rows:
        if row["exp"] in RISKS:
            p = row["p"][run]
            counts[RISKS.index(row["exp"])][COLUMNS.index(p["r"] if p and p["r"] else "error")] += 1
    return counts


def render_compare(cmp: CompareDocument, sections: str) -> str:
    """The comparison page: ``sections`` (the comparison's tables), both runs' matrices, and the explorer over
    every paired case, showing the flipped ones first (the change filter)."""
    (base, base_set), (new, new_set) = run_records(cmp["base"]["path"]), run_records(cmp["new"]["path"])
    dataset = new_set if new_set.get("path") else base_set
    made, note = explorer_rows([base, new], dataset.get("path"), sha256=file_sha256_of(dataset))
    rows = list(made)  # counted into the matrices, then packed
    if note:
        print(f"fcb compare: warning: {note}; the page has no case text", file=sys.stderr)
    labels = [cmp["base"]["detector"], cmp["new"]["detector"]]
    maps = "".join(
        f"<div>{heatmap(confusion_counts(rows, k), k, f'{side}: {label}')}</div>"
        for k, (side, label) in enumerate(zip(("base", "new"), labels, strict=True))
    )
    sections += f"<h2>Confusion matrices</h2><div class='row'>{maps}</div>"
    sections += "<p class='note'>Click a cell to list its cases below, with both predictions.</p>"
    ds = cmp["dataset"]
    subtitle = [
        f"base: {labels[0]} ({cmp['base']['path']})",
        f"new: {labels[1]} ({cmp['new']['path']})",
        f"data set: {ds['name']} (sha256 {ds['sha256'][:12]}, {ds['cases']} cases)",
        note,
    ]
    return page(
        "False-consensus detector comparison", subtitle, sections, {"runs": labels, "cases": rows, "note": note}
    )
