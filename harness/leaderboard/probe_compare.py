"""``fcb compare RUN --probe P``: a probed run's verdicts on the requests as they are (base) against its verdicts on
probe P's variants (new), paired by (case, epoch), with the deltas, per-category changes and flipped pairs of any
comparison. Pure functions over a `Run`.

A pair whose variant was not asked (the probe could not change the case, such as ``order`` when every answer reads
the same) is left out of both sides. The bootstrap resamples cases, a case's pairs kept together
(`harness.leaderboard.noise.cluster_headline`), and the metrics are gated together with Holm's step-down.
"""

from __future__ import annotations

import numpy as np

from harness.documents import CompareDocument, CompareRun
from harness.errors import UsageError
from harness.leaderboard.compare import (
    Figures,
    apply_holm,
    category_deltas,
    flipped,
    gate_block,
    gated_metrics,
    statement,
)
from harness.leaderboard.noise import cluster_headline
from harness.leaderboard.runs import Run, aligned_clusters
from harness.metrics import cluster_codes


def probe_pairs(run: Run, probe: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(case index, epoch, plain verdict, variant verdict) of each pair of the run for which the variant was asked.
    `UsageError` when the run asked no variant of ``probe``."""
    variants = run.variants.get(probe)
    if variants is None:
        asked = ", ".join(sorted(run.variants)) or "none"
        raise UsageError(
            f"{run.path}: --probe {probe}: the run asked no {probe} variants (its probes: {asked}); "
            f"fcb eval --probe {probe} asks them"
        )
    plain = run.epochs if run.epochs is not None else run.y_pred[:, None]
    cases, epochs = np.nonzero(variants >= 0)
    return cases, epochs + 1, plain[cases, epochs], variants[cases, epochs]


def compare_probe(
    run: Run, probe: str, *, max_drop: float = 0.01, alpha: float = 0.05, n_boot: int = 2000, seed: int = 0
) -> CompareDocument:
    """The run's plain verdicts (base) against its ``probe`` variants' (new), pair by pair."""
    cases, epochs, base, new = probe_pairs(run, probe)
    y_true, categories = run.y_true[cases], run.categories[cases]

    groups = aligned_clusters([run], run.ids)  # each case's cluster: a pair is drawn with its case's cluster

    def figures(mask: np.ndarray) -> Figures:
        kept = np.flatnonzero(mask)
        clusters = cluster_codes(groups[cases[kept]].tolist())
        return cluster_headline(y_true[kept], [base[kept], new[kept]], clusters, n_boot=n_boot, seed=seed)

    origins = run.origins[cases] if run.origins is not None else None
    metrics, family = gated_metrics(figures, categories, origins, alpha=alpha, max_drop=max_drop)
    apply_holm(metrics, family, alpha=alpha, max_drop=max_drop)
    gate = gate_block(run, run, "probe-pairs", family, groups)
    gate["statement"] = statement(gate, alpha, n_boot, seed)
    side: CompareRun = {"path": str(run.path), "detector": run.label, "spec": run.detector, "created": run.created}
    return {
        "base": side,
        "new": {**side, "detector": f"{run.label} ({probe} variants)"},
        "dataset": {"name": run.dataset["name"], "sha256": run.sha256, "cases": len(np.unique(cases))},
        "settings": {
            "max_drop": max_drop,
            "alpha": alpha,
            "bootstrap_resamples": n_boot,
            "seed": seed,
            "probe": probe,
        },
        "gate": gate,
        "metrics": metrics,
        "per_category": category_deltas(categories, y_true, base, new),
        "flipped": flipped(run.ids[cases], categories, y_true, base, new, epochs if run.n_epochs > 1 else None),
        "regression": any(m["regression"] for m in metrics.values()),
    }
