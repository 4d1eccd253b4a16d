"""Compare two runs on the same data set case by case: paired-bootstrap deltas, per-category deltas, flipped cases.

Pure functions over aligned arrays (`harness.leaderboard.runs.align`); `compare_runs` is the whole comparison as a
dict. Runs of one epoch keep the paired bootstrap over cases and test each metric alone; runs that both asked every
case several times (``fcb eval --epochs N``) are compared by the hierarchical bootstrap of `harness.leaderboard.noise`
with Holm's step-down over the metrics gated together (`gate`). `compare_probe` pairs a probed run's variants with
its plain verdicts (`harness.leaderboard.probe_compare`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import NormalDist

import numpy as np

from harness.documents import CategoryDelta, CompareDocument, Flipped, FlippedCase, Gate, MetricDelta
from harness.errors import IncomparableRuns
from harness.leaderboard.calibration_delta import ece_delta
from harness.leaderboard.noise import POOLED, POWER, detectable, hierarchical_headline, holm, regression_p
from harness.leaderboard.probe_rates import probe_deltas
from harness.leaderboard.runs import REAL_SUFFIX, Run, align, aligned_clusters, aligned_origins, real_mask
from harness.metrics import ERROR, HEADLINE_METRICS, cluster_codes, finite_interval, paired_headline
from harness.types import PROBES

REAL_METRICS = ("macro_f1",)
"""Headline metrics also compared on the natural + assembled cases alone, when the cases carry origin tags."""

Figures = tuple[dict[str, np.ndarray], dict[str, np.ndarray]]
"""Point values (one per run) and bootstrap values (runs x resamples) of each headline metric."""


def _value(x: np.ndarray) -> float | None:
    v = float(x)
    return None if np.isnan(v) else v


def deltas(figures: Figures, *, alpha: float, max_drop: float) -> dict[str, MetricDelta]:
    """Each headline metric for both runs (base first), the delta (new - base), its (1 - alpha) bootstrap interval
    and the one-sided p-value of a worsening (`regression_p`).

    ``regression`` here is the test of one metric alone: worse by more than ``max_drop`` and the interval excludes
    zero (`gate` replaces it by Holm's test when the metrics are gated together)."""
    point, boot = figures
    out: dict[str, MetricDelta] = {}
    for name, higher_better in HEADLINE_METRICS.items():
        b, n = _value(point[name][0]), _value(point[name][1])
        delta = None if b is None or n is None else n - b
        change = boot[name][1] - boot[name][0]
        interval = finite_interval(change, alpha)
        worse = None if delta is None else (-delta if higher_better else delta)
        significant = interval is not None and (interval[1] < 0 if higher_better else interval[0] > 0)
        out[name] = {
            "base": b,
            "new": n,
            "delta": delta,
            "ci": list(interval) if interval else None,
            "higher_is_better": higher_better,
            "p": None if delta is None else regression_p(-change if higher_better else change),
            "p_holm": None,
            "regression": bool(worse is not None and worse > max_drop and significant),
            "mde": detectable(change, alpha),
        }
    return out


def metric_deltas(
    y_true: np.ndarray, base: np.ndarray, new: np.ndarray, *, alpha: float, max_drop: float, n_boot: int, seed: int
) -> dict[str, MetricDelta]:
    """`deltas` of two runs of one epoch on the paired bootstrap over cases."""
    return deltas(paired_headline(y_true, [base, new], n_boot=n_boot, seed=seed), alpha=alpha, max_drop=max_drop)


def can_change(figures: Figures, name: str) -> bool:
    """Whether some resample can change the metric: not so for error_rate when neither run errs, whose change is
    then 0 in every resample (leaving it out of Holm's family keeps the level: Tarone 1990)."""
    change = figures[1][name][1] - figures[1][name][0]
    change = change[np.isfinite(change)]
    return bool(len(change)) and bool(np.any(change != 0))


def apply_holm(metrics: dict[str, MetricDelta], family: list[str], *, alpha: float, max_drop: float) -> None:
    """Gate the ``family`` together: Holm-adjusted p (`holm`) of each, and a regression where a metric got worse by
    more than ``max_drop`` and its adjusted p is below ``alpha``. A metric outside the family never regresses."""
    adjusted = holm({name: p for name in family if (p := metrics[name]["p"]) is not None})
    strictest = _z_sum(alpha / max(len(adjusted), 1)) / _z_sum(alpha)  # Holm's first step tests at alpha / m
    for name, m in metrics.items():
        m["p_holm"] = adjusted.get(name)
        if name in adjusted and m.get("mde") is not None:
            m["mde"] = m["mde"] * strictest  # type: ignore[operator]
        worse = None if m["delta"] is None else (-m["delta"] if m["higher_is_better"] else m["delta"])
        p = adjusted.get(name)
        m["regression"] = bool(worse is not None and worse > max_drop and p is not None and p < alpha)


def _z_sum(alpha: float) -> float:
    z = NormalDist()
    return z.inv_cdf(1 - alpha) + z.inv_cdf(POWER)


_null = {"hierarchical": "a pair of runs of identical code", "probe-pairs": "a detector the probe does not change"}


def statement(gate: Gate, alpha: float, n_boot: int, seed: int) -> str:
    """The method in one paragraph, for the text and Markdown outputs."""
    level = f"{100 * (1 - alpha):.0f}%"
    if gate["multiple_testing"] == "none":
        text = (
            f"A headline metric counts as a regression when it gets worse by more than max_drop and the paired-"
            f"bootstrap {level} interval of the change excludes zero ({n_boot} resamples of {_drawn(gate)}, seed "
            f"{seed}); each metric is tested alone."
        )
        if not gate["noise_separated"]:
            e = gate["epochs"]
            text += (
                f" The runs asked each case {e['base']} and {e['new']} time(s): with one epoch this comparison "
                f"cannot tell the detector's own noise from a change (run both with fcb eval --epochs N, N >= 2, "
                f"for a gate that can)."
            )
        return text
    how = {
        "hierarchical": f"{_drawn(gate)} drawn with replacement, then each drawn case's epochs drawn with "
        "replacement in each run, so that the detector's own randomness enters the interval; base and new are each "
        "figure over every (case, epoch) verdict (the confusion matrix summed over the epochs), not the runs' "
        "headlines on reduced verdicts",
        "probe-pairs": "(case, epoch) pairs of one run, the plain verdict against the variant's, resampled by case "
        f"with a case's epochs kept together{f' ({_drawn(gate)} drawn)' if gate.get('clusters') else ''}",
    }[gate["method"]]
    return (
        f"A headline metric counts as a regression when it gets worse by more than max_drop and its Holm-adjusted "
        f"one-sided bootstrap p-value is below alpha = {alpha}: Holm's step-down over the {len(gate['family'])} "
        f"metrics gated together ({', '.join(gate['family']) or 'none'}), so that {_null[gate['method']]} fails "
        f"the gate with a chance of at most alpha overall. The bootstrap ({n_boot} resamples, seed {seed}): {how}. "
        f"The interval shown is the {level} percentile interval of the change."
    )


def _drawn(gate: Gate) -> str:
    """What the bootstrap drew: the cases, or their clusters (`Gate.clusters`)."""
    clusters = gate.get("clusters")
    if clusters is None:
        return "the cases"
    return f"the {clusters:,} clusters of cases that the runs' journals name, a drawn cluster bringing all its cases"


def gate_block(base: Run, new: Run, method: str, family: list[str], clusters: np.ndarray | None = None) -> Gate:
    """The ``gate`` block; ``clusters``: each case's cluster as the bootstrap draws them (None: each case alone)."""
    holm_used = method != "paired"
    figures = {"paired": "case verdicts", "hierarchical": "epoch verdicts", "probe-pairs": "pairs"}[method]
    gate: Gate = {
        "method": method,  # type: ignore[typeddict-item]  # one of the three literals
        "figures": figures,  # type: ignore[typeddict-item]
        "epochs": {"base": base.n_epochs, "new": new.n_epochs},
        "reducers": [base.reducer, new.reducer],
        "multiple_testing": "holm" if holm_used else "none",
        "family": family if holm_used else [],
        "noise_separated": method == "hierarchical" or (method == "probe-pairs" and base.n_epochs > 1),
        "statement": "",
    }
    if clusters is not None and len(clusters) and int(clusters.max()) + 1 < len(clusters):  # some share one
        gate["clusters"] = int(clusters.max()) + 1
    return gate


def category_deltas(
    categories: np.ndarray, y_true: np.ndarray, base: np.ndarray, new: np.ndarray
) -> dict[str, CategoryDelta]:
    """Accuracy per category in both runs and the change."""
    out: dict[str, CategoryDelta] = {}
    for cat in sorted(set(categories)):
        mask = categories == cat
        b, n = float(np.mean(base[mask] == y_true[mask])), float(np.mean(new[mask] == y_true[mask]))
        out[str(cat)] = {"n": int(mask.sum()), "base": b, "new": n, "delta": n - b}
    return out


def flipped(
    ids: np.ndarray, categories: np.ndarray, y_true: np.ndarray, base: np.ndarray, new: np.ndarray,
    epochs: np.ndarray | None = None,
) -> Flipped:  # fmt: skip
    """Cases right in one run and wrong in the other, with their ids and categories (and epochs, for pairs of a
    probed run with epochs)."""
    right_base, right_new = base == y_true, new == y_true

    def listing(mask: np.ndarray) -> list[FlippedCase]:
        rows: list[FlippedCase] = [
            {"id": str(i), "category": str(c)} for i, c in zip(ids[mask], categories[mask], strict=True)
        ]
        if epochs is not None:
            for row, e in zip(rows, epochs[mask], strict=True):
                row["epoch"] = int(e)
        return rows

    return {"right_to_wrong": listing(right_base & ~right_new), "wrong_to_right": listing(~right_base & right_new)}


def aligned_epochs(run: Run, ids: np.ndarray) -> np.ndarray:
    """A run's epoch verdicts on the case list ``ids`` (from `align`): a case the run did not finish is an error in
    every epoch, as `align` counts it."""
    out = np.full((len(ids), run.n_epochs), ERROR, dtype=np.int64)
    out[np.searchsorted(ids, run.ids)] = run.epochs if run.epochs is not None else run.y_pred[:, None]
    return out


def compare_runs(
    base: Run, new: Run, *, max_drop: float = 0.01, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0,
    probes: Sequence[str] | None = None,
) -> CompareDocument:  # fmt: skip
    """The whole comparison of ``new`` against ``base``. Raises `IncomparableRuns` for different data sets. The
    figure of each probe both runs asked (of ``probes``, when given) is gated too: a rise by more than ``max_drop``
    (`harness.leaderboard.probe_rates`)."""
    if base.sha256 != new.sha256:
        raise IncomparableRuns(
            f"{base.path} and {new.path} are on different data sets "
            f"(sha256 {base.sha256[:12]} vs {new.sha256[:12]}); compare runs on the same cases"
        )
    ids, categories, y_true, (b, n) = align([base, new])
    groups = aligned_clusters([base, new], ids)
    hierarchical = base.n_epochs >= 2 and new.n_epochs >= 2
    epoch_sets = [aligned_epochs(base, ids), aligned_epochs(new, ids)]

    def figures(mask: np.ndarray) -> Figures:
        kept = cluster_codes(groups[mask].tolist())
        if not hierarchical:
            return paired_headline(y_true[mask], [b[mask], n[mask]], n_boot=n_boot, seed=seed, clusters=kept)
        return hierarchical_headline(y_true[mask], [e[mask] for e in epoch_sets], reducers=[POOLED, POOLED],
                                     n_boot=n_boot, seed=seed, clusters=kept)  # fmt: skip

    metrics, family = gated_metrics(figures, categories, aligned_origins([base, new], ids), alpha=alpha,
                                    max_drop=max_drop)  # fmt: skip
    shared = [p for p in PROBES if p in base.variants and p in new.variants and (probes is None or p in probes)]
    rates = probe_deltas(base, new, ids, y_true, shared, alpha=alpha, max_rise=max_drop, n_boot=n_boot, seed=seed,
                         clusters=groups)  # fmt: skip
    metrics |= rates
    family += [name for name, d in rates.items() if d["delta"] is not None]
    gate = gate_block(base, new, "hierarchical" if hierarchical else "paired", family, groups)
    if hierarchical:
        apply_holm(metrics, family, alpha=alpha, max_drop=max_drop)
    gate["statement"] = statement(gate, alpha, n_boot, seed)
    if rates:
        test = (f"its Holm-adjusted p, in the family above, is below {alpha:g}" if hierarchical else
                f"its paired-bootstrap {1 - alpha:.0%} interval of the change excludes zero")  # fmt: skip
        gate["statement"] += (
            f" A probe's figure ({', '.join(rates)}) counts as a regression when it rises by more than {max_drop:g}"
            f" and {test} (the cases resampled alike for both runs, a case's epochs together)."
        )
    doc: CompareDocument = {
        "base": {"path": str(base.path), "detector": base.label, "spec": base.detector, "created": base.created},
        "new": {"path": str(new.path), "detector": new.label, "spec": new.detector, "created": new.created},
        "dataset": {"name": base.dataset["name"], "sha256": base.sha256, "cases": len(ids)},
        "settings": {"max_drop": max_drop, "alpha": alpha, "bootstrap_resamples": n_boot, "seed": seed},
        "gate": gate,
        "metrics": metrics,
        "per_category": category_deltas(categories, y_true, b, n),
        "flipped": flipped(ids, categories, y_true, b, n),
        "regression": any(m["regression"] for m in metrics.values()),
    }
    if (found := ece_delta(base, new, ids, y_true=y_true, alpha=alpha, n_boot=n_boot, seed=seed,
                           clusters=groups)) is not None:  # fmt: skip
        doc["ece"] = found
    return doc


def gated_metrics(
    figures: Callable[[np.ndarray], Figures],
    categories: np.ndarray,
    origins: np.ndarray | None,
    *,
    alpha: float,
    max_drop: float,
) -> tuple[dict[str, MetricDelta], list[str]]:
    """The headline deltas on all cases, and macro_f1 on the natural + assembled cases when there are some; and the
    family a Holm gate tests (the metrics some resample can change). ``figures(mask)`` gives `Figures` of a subset."""
    everything = np.ones(len(categories), dtype=bool)
    on_all = figures(everything)
    metrics = deltas(on_all, alpha=alpha, max_drop=max_drop)
    family = [name for name in metrics if can_change(on_all, name)]
    if origins is not None and (real := real_mask(origins)).any():
        # the real subset gates too: a detector must not regress on real answers behind a gain on constructed ones
        on_real = figures(real)
        real_deltas = deltas(on_real, alpha=alpha, max_drop=max_drop)
        for name in REAL_METRICS:
            metrics[f"{name}{REAL_SUFFIX}"] = real_deltas[name]
            if can_change(on_real, name):
                family.append(f"{name}{REAL_SUFFIX}")
    return metrics, family
