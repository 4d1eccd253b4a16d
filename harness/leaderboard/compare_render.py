"""Render a run comparison as text, Markdown (fit for a pull-request comment) or JSON."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
from tabulate import tabulate

from harness.documents import CompareDocument, FlippedCase
from harness.report.html import esc, render_compare, table
from harness.report.markdown import md_text
from harness.schema_messages import printable

MAX_LISTED = 50


def _f(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def metric_rows(cmp: CompareDocument) -> list[list[str]]:
    rows = []
    for name, m in cmp["metrics"].items():
        ci = f"[{_f(m['ci'][0], True)}, {_f(m['ci'][1], True)}]" if m["ci"] else ""
        verdict = "REGRESSION" if m["regression"] else ""
        arrow = "higher is better" if m["higher_is_better"] else "lower is better"
        rows.append([name, _f(m["base"]), _f(m["new"]), _f(m["delta"], True), ci, arrow, verdict])
    return rows


def category_rows(cmp: CompareDocument, shown: Callable[[Any], str] = str) -> list[list[Any]]:
    """One row a category; ``shown`` renders a value read from a run folder (`md_text` for Markdown)."""
    return [
        [shown(c), v["n"], _f(v["base"]), _f(v["new"]), _f(v["delta"], True)] for c, v in cmp["per_category"].items()
    ]


def _flip_lines(flips: list[FlippedCase], bullet: str, shown: Callable[[Any], str] = printable) -> list[str]:
    if not flips:
        return [f"{bullet}(none)"]
    lines = [f"{bullet}{shown(f['id'])} ({shown(f['category'])})" for f in flips[:MAX_LISTED]]
    if len(flips) > MAX_LISTED:
        lines.append(f"{bullet}... and {len(flips) - MAX_LISTED} more (see --format json)")
    return lines


def _summary(cmp: CompareDocument) -> str:
    s = cmp["settings"]
    verdict = "REGRESSION" if cmp["regression"] else "no significant regression"
    return (
        f"{verdict}: a headline metric counts as a regression when it gets worse by more than {s['max_drop']} "
        f"and the paired-bootstrap {100 * (1 - s['alpha']):.0f}% interval of the change excludes zero "
        f"({s['bootstrap_resamples']} resamples, seed {s['seed']})."
    )


def to_text(cmp: CompareDocument, fmt: str = "simple") -> str:
    ds, flips = cmp["dataset"], cmp["flipped"]
    header = ["metric", "base", "new", "delta", f"{100 * (1 - cmp['settings']['alpha']):.0f}% CI", "", ""]
    parts = [
        f"base: {printable(cmp['base']['detector'])} ({printable(cmp['base']['path'])})\n"
        f"new:  {printable(cmp['new']['detector'])} ({printable(cmp['new']['path'])})\n"
        f"data set: {printable(ds['name'])} (sha256 {printable(ds['sha256'][:12])}, {ds['cases']} cases)",
        tabulate(metric_rows(cmp), headers=header, tablefmt=fmt, disable_numparse=True),
        tabulate(
            category_rows(cmp, printable),
            headers=["category", "n", "base", "new", "delta"],
            tablefmt=fmt,
            disable_numparse=True,
        ),
        "\n".join([f"right to wrong: {len(flips['right_to_wrong'])}", *_flip_lines(flips["right_to_wrong"], "  ")]),
        "\n".join([f"wrong to right: {len(flips['wrong_to_right'])}", *_flip_lines(flips["wrong_to_right"], "  ")]),
        _summary(cmp),
    ]
    return "\n\n".join(parts)


def to_markdown(cmp: CompareDocument) -> str:
    ds, flips = cmp["dataset"], cmp["flipped"]
    icon = ":x:" if cmp["regression"] else ":white_check_mark:"
    header = ["metric", "base", "new", "delta", f"{100 * (1 - cmp['settings']['alpha']):.0f}% CI", "", ""]
    out = [
        f"## {icon} False-consensus detector comparison",
        "",
        # every value read from the run folders is inert Markdown (`md_text`): no HTML, links or code spans
        f"{md_text(cmp['new']['detector'])} against baseline {md_text(cmp['base']['detector'])} on "
        f"**{md_text(ds['name'])}** (sha256 {md_text(ds['sha256'][:12])}, {ds['cases']} cases).",
        "",
        tabulate(metric_rows(cmp), headers=header, tablefmt="github", disable_numparse=True),
        "",
        _summary(cmp),
        "",
        "<details><summary>Per category</summary>",
        "",
        tabulate(
            category_rows(cmp, md_text),
            headers=["category", "n", "base", "new", "delta"],
            tablefmt="github",
            disable_numparse=True,
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
    header = ["metric", "base", "new", "delta", f"{100 * (1 - cmp['settings']['alpha']):.0f}% CI", "", ""]
    flips = cmp["flipped"]
    sections = (
        f"<h2>Headline</h2>{table(header, metric_rows(cmp), 'num')}<p class='note'>{esc(_summary(cmp))}</p>"
        f"<h2>Per category</h2>{table(['category', 'n', 'base', 'new', 'delta'], category_rows(cmp), 'num')}"
        f"<h2>Flipped cases</h2><p>{len(flips['right_to_wrong'])} right to wrong, "
        f"{len(flips['wrong_to_right'])} wrong to right: listed in the explorer below.</p>"
    )
    return render_compare(cmp, sections)
