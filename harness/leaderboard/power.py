"""``fcb power RUN [RUN2] --effect X``: how large a difference a comparison on these cases could detect, and how
many cases it would take to detect a difference of X (docs/leaderboards.md, "How many cases"). Pure functions over
`Run`s.

The difference between two detectors on the same cases has a standard error, the bootstrap standard deviation of
the paired change (`harness.metrics.paired_headline`, cases resampled alike for both). With one run it is estimated
as sqrt(2) x the standard deviation of that run's own figure: two detectors as variable as this one and unrelated to
it, the cautious case, since detectors that err on the same cases differ less. A one-sided test at ``alpha`` then
detects a change of at least MDE = (z(1 - alpha) + z(power)) x that error with probability ``power``; the error
shrinks as 1 / sqrt(n), so detecting X takes n x (MDE / X)^2 cases.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from harness.errors import IncomparableRuns
from harness.leaderboard.runs import Run, align, aligned_clusters
from harness.metrics import HEADLINE_METRICS, paired_headline


def spread(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.std(ddof=1)) if len(finite) > 1 else None


def power_table(runs: list[Run], *, effect: float, alpha: float, power: float, n_boot: int,
                seed: int) -> dict[str, Any]:  # fmt: skip
    """Per headline metric: the standard error of a paired difference on these cases, the MDE at their number, and
    the cases needed to detect ``effect``."""
    if len(runs) == 2 and runs[0].sha256 != runs[1].sha256:
        raise IncomparableRuns(f"{runs[0].path} and {runs[1].path} are on different data sets; compare runs on the "
                               "same cases")  # fmt: skip
    ids, _, y_true, preds = align(runs)
    _, boots = paired_headline(y_true, preds, n_boot=n_boot, seed=seed, clusters=aligned_clusters(runs, ids))
    z = NormalDist()
    factor = z.inv_cdf(1 - alpha) + z.inv_cdf(power)
    n = len(y_true)
    rows: dict[str, dict[str, float | int | None]] = {}
    for name in HEADLINE_METRICS:
        boot = boots[name]
        se = (
            spread(boot[1] - boot[0])
            if len(runs) == 2
            else (None if (s := spread(boot[0])) is None else math.sqrt(2) * s)
        )
        mde = None if not se else factor * se  # no spread at all (no error ever made): nothing to scale
        needed = None if mde is None else math.ceil(n * (mde / effect) ** 2)
        rows[name] = {"se": se, "mde": mde, "cases_needed": needed}
    return {
        "cases": n,
        "runs": [str(r.path) for r in runs],
        "paired": len(runs) == 2,
        "effect": effect,
        "alpha": alpha,
        "power": power,
        "bootstrap_resamples": n_boot,
        "seed": seed,
        "metrics": rows,
    }
