"""Plots as PNG bytes (matplotlib, no display): confusion heatmaps, per-category bars, metric trends."""

from __future__ import annotations

import base64
import io
from datetime import datetime
from typing import Any

import matplotlib

from harness.documents import Metrics

matplotlib.use("Agg")  # files only; never a window
import matplotlib.pyplot as plt


def plain(text: str) -> str:
    """``text`` shown as written: matplotlib reads ``$...$`` as mathematics and fails on most of it (a detector
    named ``$x^$`` stopped the leaderboard), so dollar signs are escaped."""
    return text.replace("$", r"\$")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def data_uri(png: bytes) -> str:
    """A PNG as a ``data:`` URI, so a page needs no other file."""
    return "data:image/png;base64," + base64.b64encode(png).decode()


def confusion_heatmap_png(metrics: Metrics, title: str) -> bytes:
    """The 3x4 risk confusion matrix (with the error column) as a heatmap with counts."""
    cm = metrics["confusion_matrix"]
    counts = cm["counts"]
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    ax.imshow(counts, cmap="Blues")
    ax.set_xticks(range(len(cm["columns"])), cm["columns"])
    ax.set_yticks(range(len(cm["rows"])), cm["rows"])
    ax.set_xlabel("predicted")
    ax.set_ylabel("expected")
    peak = max(max(r) for r in counts) or 1
    for i, row in enumerate(counts):
        for j, value in enumerate(row):
            ax.text(j, i, str(value), ha="center", va="center", color="white" if value > peak / 2 else "black")
    ax.set_title(plain(title[:60]), fontsize=9)
    return _png(fig)


def category_bars_png(metrics: Metrics, title: str) -> bytes:
    """Accuracy per category with its 95% interval."""
    cats = metrics["per_category"]
    names = list(cats)
    acc = [cats[c]["accuracy"] or 0.0 for c in names]
    lo = [a - (cats[c]["ci95"] or [a, a])[0] for a, c in zip(acc, names, strict=True)]
    hi = [(cats[c]["ci95"] or [a, a])[1] - a for a, c in zip(acc, names, strict=True)]
    fig, ax = plt.subplots(figsize=(5.6, 3.2))
    ax.barh(names, acc, xerr=[lo, hi], color="#4c72b0", capsize=3)
    ax.set_xlim(0, 1)
    ax.invert_yaxis()
    ax.set_xlabel("accuracy (95% interval)")
    ax.tick_params(axis="y", labelsize=8)
    ax.set_title(plain(title[:60]), fontsize=9)
    return _png(fig)


def trend_png(series: dict[str, list[tuple[str, float]]], metric: str) -> bytes:
    """One line per detector: the metric of each run against the run's time (ISO timestamps)."""
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for detector, points in sorted(series.items()):
        times = [datetime.fromisoformat(p[0]) for p in points]
        # matplotlib plots datetimes through its units registry, which its type stubs do not model
        ax.plot(times, [p[1] for p in points], marker="o", label=plain(detector[:50]))  # type: ignore[arg-type]
    ax.set_ylabel(metric)
    ax.set_xlabel("run time (UTC)")
    ax.tick_params(axis="x", rotation=30, labelsize=7)
    ax.legend(fontsize=7)
    return _png(fig)
