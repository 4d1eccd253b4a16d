"""The PNG of a scenario's utility set (matplotlib, no display): for each outcome of the indivisible resources
(each whole to one party), the outcomes of splitting the divisible ones in full (shaded, with a dot where all of
them go to the second party; both_benefit resources kept shared); the exact Pareto frontier; the BATNA point with
the lines bounding the region that beats it; the Nash bargaining solution and the utilitarian optimum."""

from __future__ import annotations

import io
from itertools import product
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never a window
import matplotlib.pyplot as plt

from harness.scenario.analyze import Analysis
from harness.scenario.pareto import Point

MAX_REGIONS = 256


def zonotope(items: list[Point]) -> list[Point]:
    """The outline of the outcomes of splitting divisible goods ``(a_i, b_i)`` in full: starting with all of them at
    the second party, the upper chain hands them over in decreasing order of ``a_i / b_i``, the lower one in
    increasing order."""
    items = [(a, b) for a, b in items if a > 0 or b > 0]

    def walk(order: list[Point]) -> list[Point]:
        x, y = 0.0, sum(b for _, b in items)
        out = [(x, y)]
        for a, b in order:
            x, y = x + a, y - b
            out.append((x, y))
        return out

    ranked = sorted(items, key=lambda w: w[0] * 1e300 if w[1] == 0 else w[0] / w[1])
    return walk(ranked[::-1]) + walk(ranked)[::-1]


def indivisible_outcomes(a: Analysis) -> list[Point]:
    """Every outcome of the indivisible resources (each whole to one party), relief form, offset included; the
    undominated ones alone when there are more than `MAX_REGIONS`."""
    geo, m = a.geometry, a.model
    items = [m.resources[i].weights for i in geo.indivisible]
    if 2 ** len(items) > MAX_REGIONS:
        return [p for p, _ in geo.fronts]
    out = []
    for holders in product((0, 1), repeat=len(items)):
        x = sum(w[0] for w, h in zip(items, holders, strict=True) if h == 0)
        y = sum(w[1] for w, h in zip(items, holders, strict=True) if h == 1)
        out.append((x + geo.offset[0], y + geo.offset[1]))
    return out


def utility_set_png(a: Analysis, title: str) -> bytes:
    geo, m = a.geometry, a.model
    outline = zonotope([m.resources[i].weights for i in geo.divisible])
    fig, ax = plt.subplots(figsize=(6.0, 5.2))
    for px, py in indivisible_outcomes(a):
        ax.fill([px + x for x, _ in outline], [py + y for _, y in outline], color="tab:blue", alpha=0.12, lw=0)
        ax.plot([px + outline[0][0]], [py + outline[0][1]], ".", color="tab:blue", alpha=0.5)
    for n, line in enumerate(a.frontier):
        xs, ys = [p[0] for p in line], [p[1] for p in line]
        ax.plot(xs, ys, "-o", color="tab:red", lw=2, ms=3, label="Pareto frontier" if n == 0 else None)
    _marks(ax, a)
    ax.set_xlabel(f"{m.parties[0]}'s utility")
    ax.set_ylabel(f"{m.parties[1]}'s utility")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _marks(ax: Any, a: Analysis) -> None:
    d = a.model.batna
    ax.axvline(d[0], color="gray", ls=":", lw=1)
    ax.axhline(d[1], color="gray", ls=":", lw=1)
    ax.plot([d[0]], [d[1]], "s", color="black", label=f"BATNA ({d[0]:.2f}, {d[1]:.2f})")
    if a.nash:
        u = a.nash.utilities
        ax.plot([u[0]], [u[1]], "*", color="gold", mec="black", ms=16, label=f"Nash solution ({u[0]:.2f}, {u[1]:.2f})")
    u = a.utilitarian.utilities
    ax.plot([u[0]], [u[1]], "^", color="tab:green", ms=8, label=f"utilitarian ({u[0]:.2f}, {u[1]:.2f})")
