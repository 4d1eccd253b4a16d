"""``fcb compare BASE NEW``, for runs that both asked a probe: the probe's figure of each run (a flip rate, inject's
attack success rate, duplicate's fall rate on high; `harness.repeats`), the change, its paired-bootstrap interval,
and a regression when the figure rose by more than the tolerated change and the interval excludes zero. Pure
functions over `Run`s.

Each run's figure is counted per case on the case list both share (`harness.leaderboard.runs.align`): the pairs it
compared and the events among them (flips, or falls on the labels the figure counts). The bootstrap draws the cases'
clusters (`harness.metrics.resample_counts`; the runs' journals name them), the same draw for both runs, a case's
epochs kept together, and sets each run's figure to events / pairs of the draw.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.documents import MetricDelta
from harness.leaderboard.noise import detectable, regression_p
from harness.leaderboard.runs import Run
from harness.metrics import alone, cluster_totals, finite_interval, resample_counts
from harness.types import RISKS
from harness.vocabulary import LOWERING

NAMES = {"inject": "inject_attack_success", "duplicate": "duplicate_fall_rate"}
"""A probe's figure under its leaderboard column's name (`harness.leaderboard.rank.REPEATS`); the others are
``PROBE_flip_rate`` (evidence-order as evidence_order)."""


def figure_name(probe: str) -> str:
    return NAMES.get(probe, f"{probe.replace('-', '_')}_flip_rate")


def case_counts(run: Run, probe: str, ids: np.ndarray, y_true: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per case of ``ids``: the pairs the run compared for ``probe`` and the events among them (as
    `harness.leaderboard.figures.item_figures` counts them); zero for a case the run did not ask."""
    table = run.variants[probe]
    plain = run.epochs if run.epochs is not None else run.y_pred[:, None]
    answered = (table >= 0) & (table < len(RISKS)) & (plain >= 0) & (plain < len(RISKS))
    rows = np.searchsorted(ids, run.ids)
    if probe in LOWERING:
        labels = np.isin(y_true[rows], [RISKS.index(r) for r in LOWERING[probe]])
        kept, event = answered & labels[:, None] & (plain > 0), table < plain
    else:
        kept, event = answered, table != plain
    pairs, events = np.zeros(len(ids)), np.zeros(len(ids))
    pairs[rows], events[rows] = kept.sum(axis=1), (kept & event).sum(axis=1)
    return pairs, events


def _rate(pairs: np.ndarray, events: np.ndarray) -> np.ndarray:
    """Events over pairs, summed over the last axis; NaN where there is no pair."""
    den = pairs.sum(axis=-1)
    result: np.ndarray = np.divide(events.sum(axis=-1), den, out=np.full(den.shape, np.nan), where=den > 0)
    return result


def probe_delta(
    base: tuple[np.ndarray, np.ndarray], new: tuple[np.ndarray, np.ndarray], *, alpha: float, max_rise: float,
    n_boot: int, seed: int, clusters: np.ndarray | None = None,
) -> MetricDelta:  # fmt: skip
    """One probe's figure for both runs (base first), the change (new - base), its (1 - alpha) interval, the
    one-sided p of a rise, and whether it is a regression (a rise above ``max_rise`` whose interval excludes 0)."""
    b, n = float(_rate(*base)), float(_rate(*new))
    groups = alone(len(base[0])) if clusters is None else clusters
    # per cluster: base pairs, base events, new pairs, new events; a resample weighs each cluster by its count
    totals = cluster_totals(groups, np.stack([*base, *new], axis=1))
    changes = []
    for counts in resample_counts(len(totals), n_boot=n_boot, seed=seed):
        summed = counts @ totals
        changes.append(_rate(summed[:, 2:3], summed[:, 3:4]) - _rate(summed[:, 0:1], summed[:, 1:2]))
    change = np.concatenate(changes) if changes else np.array([])
    interval = finite_interval(change, alpha) if len(change) else None
    delta = None if np.isnan(b) or np.isnan(n) else n - b
    return {
        "base": None if np.isnan(b) else b,
        "new": None if np.isnan(n) else n,
        "delta": delta,
        "ci": list(interval) if interval else None,
        "higher_is_better": False,
        "p": None if delta is None or not len(change) else regression_p(change),
        "p_holm": None,
        "regression": bool(delta is not None and delta > max_rise and interval is not None and interval[0] > 0),
        "mde": detectable(change, alpha) if len(change) else None,
    }


def probe_deltas(
    base: Run, new: Run, ids: np.ndarray, y_true: np.ndarray, probes: Sequence[str], *, alpha: float,
    max_rise: float, n_boot: int, seed: int, clusters: np.ndarray | None = None,
) -> dict[str, MetricDelta]:  # fmt: skip
    """The figure of each of ``probes`` that both runs asked, by `figure_name`."""
    return {
        figure_name(p): probe_delta(case_counts(base, p, ids, y_true), case_counts(new, p, ids, y_true),
                                    alpha=alpha, max_rise=max_rise, n_boot=n_boot, seed=seed, clusters=clusters)
        for p in probes if p in base.variants and p in new.variants
    }  # fmt: skip
