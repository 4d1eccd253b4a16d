"""Render a run comparison as text, Markdown (fit for a pull-request comment) or JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from harness.documents import CompareDocument, FlippedCase
from harness.report.html import esc, render_compare, table
from harness.report.markdown import md_text
from harness.schema_messages import printable
from harness.tables import figure, interval
from harness.tables import table as text_table

MAX_LISTED = 50


def _p(value: float | None) -> str:
    return "" if value is None else f"{value:.3f}"


def _ci(ci: list[float] | None) -> str:
    return interval(ci, lambda bound: figure(bound, signed=True))  # the interval of a change


def metric_header(cmp: CompareDocument) -> list[str]:
    level = f"{100 * (1 - cmp['settings']['alpha']):.0f}% CI"
    holm = ["p (Holm)"] if cmp["gate"]["multiple_testing"] == "holm" else []
    return ["metric", "base", "new", "delta", level, "p", *holm, "", ""]


def metric_rows(cmp: CompareDocument) -> list[list[str]]:
    holm = cmp["gate"]["multiple_testing"] == "holm"
    rows = []
    for name, m in cmp["metrics"].items():
        verdict = "REGRESSION" if m["regression"] else ""
        arrow = "higher is better" if m["higher_is_better"] else "lower is better"
        tested = [_p(m["p_holm"]) if name in cmp["gate"]["family"] else "not tested"] if holm else []
        change = figure(m["delta"], signed=True)
        rows.append([name, figure(m["base"]), figure(m["new"]), change, _ci(m["ci"]), _p(m["p"]), *tested, arrow,
                     verdict])  # fmt: skip
    if ece := cmp.get("ece"):
        name = f"ECE of risk_score ({ece['bins']} bins, {ece['n']} cases)"
        change = figure(ece["delta"], signed=True)
        rows.append([name, figure(ece["base"]), figure(ece["new"]), change, _ci(ece["ci"]), "",
                     *([""] if holm else []), "lower is better", "not gated"])  # fmt: skip
    return rows


def category_rows(cmp: CompareDocument, shown: Callable[[Any], str] = str) -> list[list[Any]]:
    """One row a category; ``shown`` renders a value read from a run folder (`md_text` for Markdown)."""
    return [
        [shown(c), v["n"], figure(v["base"]), figure(v["new"]), figure(v["delta"], signed=True)]
        for c, v in cmp["per_category"].items()
    ]


def _flip_lines(flips: list[FlippedCase], bullet: str, shown: Callable[[Any], str] = printable) -> list[str]:
    if not flips:
        return [f"{bullet}(none)"]
    lines = [f"{bullet}{shown(f['id'])}{_epoch(f)} ({shown(f['category'])})" for f in flips[:MAX_LISTED]]
    if len(flips) > MAX_LISTED:
        lines.append(f"{bullet}... and {len(flips) - MAX_LISTED} more (see --format json)")
    return lines


def _epoch(flip: FlippedCase) -> str:
    return f" epoch {flip['epoch']}" if "epoch" in flip else ""


def _summary(cmp: CompareDocument) -> str:
    verdict = "REGRESSION" if cmp["regression"] else "no significant regression"
    statement = cmp["gate"]["statement"].replace("max_drop", f"max_drop = {cmp['settings']['max_drop']}", 1)
    return f"{verdict}. {statement}{_detectable(cmp)}"


def _detectable(cmp: CompareDocument) -> str:
    """How large a worsening this comparison could have told (each metric's ``mde``); empty when none is stated."""
    sizes = [f"{name} {figure(m['mde'])}" for name, m in cmp["metrics"].items() if m.get("mde") is not None]
    if not sizes:
        return ""
    holm = " (Holm's first step for the metrics gated together)" if cmp["gate"]["multiple_testing"] == "holm" else ""
    return (f" With {cases(cmp)} cases it could detect, with 80% power at alpha = {cmp['settings']['alpha']:g}{holm}, "
            f"a worsening of at least: {', '.join(sizes)}; a smaller one may go unseen.")  # fmt: skip


def cases(cmp: CompareDocument) -> int:
    return int(cmp["dataset"]["cases"])


def to_text(cmp: CompareDocument, fmt: str = "simple") -> str:
    ds, flips = cmp["dataset"], cmp["flipped"]
    header = metric_header(cmp)
    parts = [
        f"base: {printable(cmp['base']['detector'])} ({printable(cmp['base']['path'])})\n"
        f"new:  {printable(cmp['new']['detector'])} ({printable(cmp['new']['path'])})\n"
        f"data set: {printable(ds['name'])} (sha256 {printable(ds['sha256'][:12])}, {ds['cases']} cases)",
        text_table(metric_rows(cmp), headers=header, tablefmt=fmt),
        text_table(
            category_rows(cmp, printable),
            headers=["category", "n", "base", "new", "delta"],
            tablefmt=fmt,
        ),
        "\n".join([f"right to wrong: {len(flips['right_to_wrong'])}", *_flip_lines(flips["right_to_wrong"], "  ")]),
        "\n".join([f"wrong to right: {len(flips['wrong_to_right'])}", *_flip_lines(flips["wrong_to_right"], "  ")]),
        _summary(cmp),
    ]
    return "\n\n".join(parts)


def to_markdown(cmp: CompareDocument) -> str:
    ds, flips = cmp["dataset"], cmp["flipped"]
    icon = ":x:" if cmp["regression"] else ":white_check_mark:"
    header = metric_header(cmp)
    out = [
        f"## {icon} False-consensus detector comparison",
        "",
        # every value read from the run folders is inert Markdown (`md_text`): no HTML, links or code spans
        f"{md_text(cmp['new']['detector'])} against baseline {md_text(cmp['base']['detector'])} on "
        f"**{md_text(ds['name'])}** (sha256 {md_text(ds['sha256'][:12])}, {ds['cases']} cases).",
        "",
        text_table(metric_rows(cmp), headers=header, tablefmt="github"),
        "",
        _summary(cmp),
        "",
        "<details><summary>Per category</summary>",
        "",
        text_table(
            category_rows(cmp, md_text),
            headers=["category", "n", "base", "new", "delta"],
            tablefmt="github",
        ),
        "",
        "</details>",
        "",
        f"<details><summary>Flipped cases: {len(flips['right_to_wrong'])} right to wrong, "
        f"{len(flips['wrong_to_right'])} wrong to right</summary>",
        "",
        "Right to wrong:",
        *_flip_lines(flips["right_to_wrong"], "- ", md_text),
        "",
        "Wrong to right:",
        *_flip_lines(flips["wrong_to_right"], "- ", md_text),
        "",
        "</details>",
    ]
    return "\n".join(out)


def to_json(cmp: CompareDocument) -> str:
    return orjson.dumps(cmp, option=orjson.OPT_INDENT_2).decode()


RENDERERS = {"text": to_text, "md": to_markdown, "json": to_json}


def to_html(cmp: CompareDocument) -> str:
    """A self-contained page: the comparison's tables and the case explorer with both runs' predictions."""
    header = metric_header(cmp)
    flips = cmp["flipped"]
    sections = (
        f"<h2>Headline</h2>{table(header, metric_rows(cmp), 'num')}<p class='note'>{esc(_summary(cmp))}</p>"
        f"<h2>Per category</h2>{table(['category', 'n', 'base', 'new', 'delta'], category_rows(cmp), 'num')}"
        f"<h2>Flipped cases</h2><p>{len(flips['right_to_wrong'])} right to wrong, "
        f"{len(flips['wrong_to_right'])} wrong to right: listed in the explorer below.</p>"
    )
    return render_compare(cmp, sections)
