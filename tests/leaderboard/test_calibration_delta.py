"""The ECE change between two runs for ``fcb compare`` (harness/leaderboard/calibration_delta.py), on runs made by
hand: every figure worked out in the comments from the scores and labels (issue 46: this module had no test)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.leaderboard.calibration_delta import ece_delta
from harness.leaderboard.runs import Run

IDS = np.array(["a", "b", "c", "d"])
Y = np.array([2, 0, 2, 0])  # high, low, high, low


def run(scores: list[float], bins: int | None = 2, ece: float | None = 0.0) -> Run:
    calibration = {} if bins is None else {"ece": ece, "bins": bins}
    doc = {"metrics": {"scores": {"calibration": calibration}}}
    return Run(Path("r"), doc, IDS, np.array(["x"] * 4), Y, Y, scores=np.array(scores, dtype=float))  # type: ignore[arg-type]


def test_both_eces_on_the_cases_scored_in_both_and_their_change() -> None:
    # scored in both: a (high) and b (low). Two bins, [0, 0.5] and (0.5, 1]; ECE = |sum of (y - s) in a bin| summed
    # over bins, over the cases. base: a 0.9 in the upper bin (1 - 0.9 = 0.1), b 0.1 in the lower (0 - 0.1 = -0.1):
    # (0.1 + 0.1) / 2 = 0.1. new: a 0.6 (0.4), b 0.4 (-0.4): 0.4. The change: 0.3
    base = run([0.9, 0.1, np.nan, 0.5])
    new = run([0.6, 0.4, 0.8, np.nan])
    got = ece_delta(base, new, IDS, y_true=Y, alpha=0.05, n_boot=0, seed=0)
    assert got is not None
    assert (got["bins"], got["n"], got["ci"]) == (2, 2, None)
    assert (got["base"], got["new"], got["delta"]) == pytest.approx((0.1, 0.4, 0.3))


def test_the_interval_resamples_the_same_cases_for_both_runs() -> None:
    # the same scores in both runs: every resample's change is exactly 0, so its interval is [0, 0]
    same = [0.9, 0.2, 0.7, 0.4]
    got = ece_delta(run(same), run(same), IDS, y_true=Y, alpha=0.05, n_boot=200, seed=3)
    assert got is not None and got["delta"] == 0.0 and got["ci"] == [0.0, 0.0]
    moved = run([0.6, 0.4, 0.8, 0.1])
    once = ece_delta(run(same), moved, IDS, y_true=Y, alpha=0.05, n_boot=200, seed=3)
    again = ece_delta(run(same), moved, IDS, y_true=Y, alpha=0.05, n_boot=200, seed=3)
    assert once is not None and again is not None and once["ci"] == again["ci"]  # seeded: the same interval


def test_no_change_without_an_ece_on_both_sides_in_the_same_bins_or_a_shared_case() -> None:
    scored = run([0.9, 0.1, 0.5, 0.5])
    assert ece_delta(scored, run([0.9, 0.1, 0.5, 0.5], bins=3), IDS, y_true=Y, alpha=0.05, n_boot=0, seed=0) is None
    assert ece_delta(run([0.5] * 4, bins=None), scored, IDS, y_true=Y, alpha=0.05, n_boot=0, seed=0) is None
    apart = ece_delta(run([0.9, np.nan, 0.2, np.nan]), run([np.nan, 0.3, np.nan, 0.6]), IDS, y_true=Y, alpha=0.05,
                      n_boot=0, seed=0)  # fmt: skip
    assert apart is None  # no case has a score in both runs


def test_one_resample_is_an_interval_and_alpha_sets_its_width() -> None:
    same, moved = run([0.9, 0.2, 0.7, 0.4]), run([0.6, 0.4, 0.8, 0.1])
    one = ece_delta(same, moved, IDS, y_true=Y, alpha=0.05, n_boot=1, seed=0)
    assert one is not None and one["ci"] is not None and one["ci"][0] == one["ci"][1]  # one draw: a point
    wide = ece_delta(same, moved, IDS, y_true=Y, alpha=0.05, n_boot=400, seed=1)
    narrow = ece_delta(same, moved, IDS, y_true=Y, alpha=0.5, n_boot=400, seed=1)
    assert wide is not None and narrow is not None and wide["ci"] and narrow["ci"]
    assert wide["ci"][0] <= narrow["ci"][0] <= narrow["ci"][1] <= wide["ci"][1]  # the 50% interval inside the 95%
    assert narrow["ci"] != wide["ci"]
