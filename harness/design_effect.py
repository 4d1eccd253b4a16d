"""What clustering does to a run's intervals: each case's cluster as a number (`clusters_of`), the ``clusters``
block of metrics.json, and design effects.

Where every case is its own cluster the cluster bootstrap *is* the case bootstrap, draw for draw
(`harness.metrics.cluster_codes`). The design effect of a figure is the variance of its cluster-bootstrap values
over that of its case-bootstrap values on the same seed: how much the clusters widen (above 1) or narrow (below 1)
its interval, squared. Kish's effective sample size is the number of cases over it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from harness.cases.clusters import cluster_key
from harness.documents import Clusters
from harness.metrics import HEADLINE_METRICS, cluster_codes, headline_batch, present_classes
from harness.types import CaseLabels


def clusters_of(labels: Sequence[CaseLabels], by: str) -> np.ndarray:
    """Each case's cluster (0, 1, ... in order of first appearance), for the cases in the order given."""
    return cluster_codes(keyed(cluster_key(lab, by), lab.case_id) for lab in labels)


def keyed(key: str | None, case_id: str) -> tuple[str, str]:
    """A hashable name of a case's cluster: its key, or the case itself when it stands alone (a key and a case id
    never meet: they sit in different places of the pair)."""
    return ("", key) if key is not None else (case_id, "")


def design_effect(clustered: np.ndarray, alone: np.ndarray) -> float | None:
    """Var(cluster-bootstrap values) / Var(case-bootstrap values) of one figure over its finite resamples; None
    when either has fewer than two finite values or the case bootstrap does not vary."""
    a, b = clustered[np.isfinite(clustered)], alone[np.isfinite(alone)]
    if len(a) < 2 or len(b) < 2:
        return None
    base = float(b.var(ddof=1))
    return None if base <= 0 else float(a.var(ddof=1)) / base


def clusters_block(by: str, groups: np.ndarray, cm: np.ndarray, clustered: np.ndarray | None,
                   plain: np.ndarray | None) -> Clusters:  # fmt: skip
    """The ``clusters`` block of metrics.json: how the cases were clustered, how many clusters, the largest, and
    each headline figure's design effect from its cluster-bootstrap (``clustered``) and case-bootstrap (``plain``)
    confusion matrices, drawn on one seed (None without resamples)."""
    sizes = np.bincount(groups) if len(groups) else np.zeros(0, dtype=np.int64)
    effects: dict[str, float | None] = {name: None for name in HEADLINE_METRICS}
    if clustered is not None and plain is not None:
        classes = present_classes(cm)
        wide, narrow = headline_batch(clustered, classes), headline_batch(plain, classes)
        effects = {name: design_effect(wide[name], narrow[name]) for name in HEADLINE_METRICS}
    return {
        "by": by,
        "n_cases": len(groups),
        "n_clusters": len(sizes),
        "largest": int(sizes.max()) if len(sizes) else 0,
        "design_effect": effects,  # type: ignore[typeddict-item]
    }


def proportion_design_effect(hits: Sequence[bool], keys: Sequence[Hashable]) -> float:
    """The design effect of a share of hits over clustered cases (``keys``: each case's cluster, `keyed`), at least 1:
    the linearised variance of the ratio estimator, K/(K-1) sum over clusters (y_c - p m_c)^2 / n^2 (y_c hits and
    m_c cases in cluster c, K clusters), over the simple random sample's p(1 - p)/(n - 1). Cases that are each their
    own cluster give exactly 1. Held at 1 or more so that a small group's noisy estimate never narrows its
    interval below the independent cases' one."""
    n = len(hits)
    codes = cluster_codes(keys)
    k = int(codes.max()) + 1 if n else 0
    p = sum(hits) / n if n else 0.0
    if k == n or k < 2 or p in (0.0, 1.0):
        return 1.0
    y = np.bincount(codes, weights=np.asarray(hits, dtype=float), minlength=k)
    m = np.bincount(codes, minlength=k)
    clustered = k / (k - 1) * float(((y - p * m) ** 2).sum()) / (n * n)
    return max(1.0, clustered / (p * (1 - p) / (n - 1)))
