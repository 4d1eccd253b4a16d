"""The change of the expected calibration error of risk_score between two runs, for ``fcb compare``: a pure function.

Both ECEs are computed by `harness.calibration` over the bins both runs stated (``fcb eval --ece-bins``), on the
cases that got a risk_score in both runs (a run with epochs: the case's reduced score, the mean of its epochs'), and
the paired-bootstrap interval of the change resamples those cases' clusters (the same draws for both runs). Not gated: a
comparison reports it beside the headline.
"""

from __future__ import annotations

import numpy as np

from harness.calibration import ece, ece_resamples
from harness.documents import EceDelta
from harness.leaderboard.runs import Run
from harness.metrics import alone, cluster_codes, finite_interval, resample_counts
from harness.types import RISKS

HIGH = RISKS.index("high")


def _scores_on(run: Run, ids: np.ndarray) -> np.ndarray:
    """The run's scores on the case list ``ids`` (from `align`), NaN where it has none."""
    out = np.full(len(ids), np.nan)
    if run.scores is not None:
        out[np.searchsorted(ids, run.ids)] = run.scores
    return out


def ece_delta(base: Run, new: Run, ids: np.ndarray, *, y_true: np.ndarray, alpha: float, n_boot: int,
              seed: int, clusters: np.ndarray | None = None) -> EceDelta | None:  # fmt: skip
    """Both runs' ECE on the cases scored in both and the change with its interval; None when either run reports
    no ECE (no scores, or a baseline file) or the two runs used different bins."""
    found = base.ece(), new.ece()
    if found[0] is None or found[1] is None or found[0][1] != found[1][1]:
        return None
    bins = found[0][1]
    s_base, s_new = _scores_on(base, ids), _scores_on(new, ids)
    both = ~np.isnan(s_base) & ~np.isnan(s_new)
    if not both.any():
        return None
    y_high = (y_true[both] == HIGH).astype(float)
    b, n = ece(y_high, s_base[both], bins), ece(y_high, s_new[both], bins)
    interval = None
    if n_boot > 0:
        groups = cluster_codes((alone(len(ids)) if clusters is None else clusters)[both].tolist())
        draws = list(resample_counts(int(groups.max()) + 1, n_boot=n_boot, seed=seed))
        change = (ece_resamples(y_high, s_new[both], bins, draws, groups)
                  - ece_resamples(y_high, s_base[both], bins, draws, groups))  # fmt: skip
        interval = finite_interval(change, alpha)
    return {"bins": bins, "n": int(both.sum()), "base": b, "new": n, "delta": n - b,
            "ci": list(interval) if interval else None}  # fmt: skip
