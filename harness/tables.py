"""Figures as every report shows them, and plain-text and Markdown tables of cells that are already formatted.

`figure`, `percent` and `interval` are the one way a figure is written (three decimals, a share as a percentage with
one, an interval in brackets, n/a where undefined): every renderer uses them.

Every table we print shows figures formatted by the code that computed them ("0.500", "53.6%", "n/a"). tabulate
would parse such a cell back into a number and print it its own way ("0.5", "1", "0"), so a figure would read
differently in a table than everywhere else. Here no cell is re-parsed; a column whose cells are all numbers (or
n/a) is right-aligned, as tabulate would have aligned it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

MISSING = "n/a"


def figure(value: float | None, digits: int = 3, *, signed: bool = False) -> str:
    """``0.530``; ``+0.012`` for a change (``signed``); n/a where the figure is undefined (None)."""
    if value is None:
        return MISSING
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def percent(value: float | None) -> str:
    """A share as a percentage with one decimal: ``53.6%``; n/a where undefined."""
    return MISSING if value is None else f"{100 * value:.1f}%"


def interval(bounds: Sequence[float] | None, show: Callable[[float | None], str] = figure) -> str:
    """``[0.508, 0.549]``, each bound as ``show`` writes it; empty when there is no interval."""
    return f"[{show(bounds[0])}, {show(bounds[1])}]" if bounds else ""


def _numeric(cell: Any) -> bool:
    if cell is None or isinstance(cell, bool):
        return cell is None
    if isinstance(cell, int | float):
        return True
    text = str(cell).strip()
    if text in ("", MISSING):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def _alignment(rows: Sequence[Sequence[Any]], width: int) -> list[str]:
    """Right for a column of numbers (with at least one real number), left otherwise."""
    aligns = []
    for col in range(width):
        cells = [row[col] for row in rows if col < len(row)]
        real = [c for c in cells if c is not None and str(c).strip() not in ("", MISSING)]
        aligns.append("right" if real and all(_numeric(c) for c in cells) else "left")
    return aligns


def table(rows: Iterable[Sequence[Any]], headers: Sequence[str] = (), tablefmt: str = "simple") -> str:
    """`rows` as a table in tabulate's format `tablefmt` (simple, github, html...), every cell shown as given."""
    from tabulate import tabulate  # imported when a table is drawn: a run that prints none does not pay for it

    body = [list(row) for row in rows]
    width = max([len(headers), *(len(row) for row in body)], default=0)
    return tabulate(
        body,
        headers=list(headers),
        tablefmt=tablefmt,
        disable_numparse=True,
        colalign=_alignment(body, width) if width else None,
        missingval=MISSING,
    )
