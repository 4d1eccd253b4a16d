"""Render the case-level analysis (`harness.leaderboard.case_analysis`) as Markdown or JSON."""

from __future__ import annotations

import orjson

from harness.documents import CaseAnalysisCase, CaseAnalysisDocument
from harness.report.markdown import md_text
from harness.tables import figure, table

DEFAULT_TOP = 20
"""Rows of each Markdown case table (``--top``); the JSON always holds every case."""


def _table(header: list[str], rows: list[list[str]]) -> str:
    return table(rows, headers=header, tablefmt="github") if rows else "(none)"


def detector_rows(doc: CaseAnalysisDocument) -> list[list[str]]:
    ordered = sorted(doc["detectors"], key=lambda d: -d["macro_f1"])
    return [
        [
            md_text(d["detector"]),
            figure(d["macro_f1"]),
            "yes" if d["strongest"] else "",
            str(d["errors"]),
            md_text(d["run"]),
        ]
        for d in ordered
    ]


def suspect_rows(doc: CaseAnalysisDocument, top: int) -> list[list[str]]:
    n = doc["summary"]["detectors"]
    return [
        [md_text(s["id"]), md_text(s["category"]), s.get("origin", ""), s["expected"], s["predicted"],
         f"{s['agreeing']} of {n}", figure(s["difficulty"]), figure(s["discrimination"])]
        for s in doc["suspects"][:top]
    ]  # fmt: skip


def case_rows(cases: list[CaseAnalysisCase]) -> list[list[str]]:
    return [
        [md_text(c["id"]), md_text(c["category"]), c["expected"], c["predicted"], f"{c['right']}",
         str(c["errored"]), figure(c["difficulty"]), figure(c["discrimination"])]
        for c in cases
    ]  # fmt: skip


def least_discriminating(doc: CaseAnalysisDocument, top: int) -> list[CaseAnalysisCase]:
    """Cases with a negative discrimination, most negative first: the weaker detectors get them right more often
    than the stronger ones (a label or a case to read)."""
    negative = [c for c in doc["cases"] if c["discrimination"] is not None and c["discrimination"] < 0]
    return sorted(negative, key=lambda c: (c["discrimination"], c["id"]))[:top]


def to_markdown(doc: CaseAnalysisDocument, top: int = DEFAULT_TOP) -> str:
    ds, s, m = doc["dataset"], doc["summary"], doc["method"]
    order = ", ".join(md_text(d["detector"]) for d in doc["detectors"])
    negative = least_discriminating(doc, top)
    cases = f"{s['cases']} cases" + (f" of {ds['cases']}" if s["cases"] != ds["cases"] else "")
    out = [
        f"## Case-level analysis: {md_text(ds['name'])} (sha256 {md_text(ds['sha256'][:12])}, {cases}, "
        f"{s['detectors']} detectors)",
        "",
        _table(["detector", "macro_f1", "strongest", "errors", "run"], detector_rows(doc)),
        "",
        f"- difficulty: {m['difficulty']}; mean {figure(s['mean_difficulty'])}; every detector right on "
        f"{s['all_right']} case(s), every one wrong on {s['all_wrong']}.",
        f"- discrimination: {m['discrimination']}; undefined (n/a) on {s['discrimination_undefined']} case(s), "
        f"negative on {s['negative_discrimination']}.",
        f"- errors: {s['errored_predictions']} errored prediction(s) on {s['cases_with_errors']} case(s); "
        f"{m['errors']}.",
        "",
        f"### Suspect labels: {s['suspects']} case(s)",
        "",
        f"A suspect: {m['suspect']} (here the {s['strongest']} marked strongest). Most suspect first: more detectors "
        f"agreeing, then a prediction farther from the label.",
        "",
        _table(
            ["case", "category", "origin", "label", "strongest predict", "agreeing", "difficulty", "discrimination"],
            suspect_rows(doc, top),
        ),
        *_more(s["suspects"], top),
        "",
        f"### Negative discrimination: {s['negative_discrimination']} case(s), most negative first",
        "",
        f"The letters of `predicted` follow the detectors in the order given: {order} (e: an errored prediction).",
        "",
        _table(
            ["case", "category", "label", "predicted", "right", "errored", "difficulty", "discrimination"],
            case_rows(negative),
        ),
        *_more(s["negative_discrimination"], top),
    ]
    return "\n".join(out)


def _more(count: int, top: int) -> list[str]:
    return ["", f"... and {count - top} more (--top, or --format json for every case)"] if count > top else []


def to_json(doc: CaseAnalysisDocument) -> str:
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode()
