"""``fcb power`` (`harness.leaderboard.power`): the standard error of a difference, the minimum detectable effect
and the cases needed, each worked out here from the same paired bootstrap and the normal quantiles."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from harness.leaderboard.power import power_table
from harness.leaderboard.runs import Run
from harness.metrics import paired_headline

Z = 1.6448536 + 0.8416212  # z(0.95) + z(0.8)


def run(pred: list[int], name: str = "a") -> Run:
    doc = {"detector": {"spec": name}, "dataset": {"name": "toy", "sha256": "f" * 64}, "created": "", "complete": True,
           "metrics": {}}  # fmt: skip
    ids = np.array([f"c{i:02d}" for i in range(len(pred))], dtype=object)
    y = np.array([i % 3 for i in range(len(pred))])
    return Run(Path(name), doc, ids, np.array(["x"] * len(pred), dtype=object), y, np.array(pred))  # type: ignore[arg-type]


PRED_A = [i % 3 if i % 4 else (i + 1) % 3 for i in range(40)]  # right on 3 cases of 4
PRED_B = [i % 3 if i % 5 else (i + 2) % 3 for i in range(40)]


def test_one_run_estimates_the_difference_as_sqrt_2_times_its_own_spread() -> None:
    table = power_table([run(PRED_A)], effect=0.05, alpha=0.05, power=0.8, n_boot=300, seed=3)
    y = np.array([i % 3 for i in range(40)])
    _, boots = paired_headline(y, [np.array(PRED_A)], n_boot=300, seed=3)
    sd = boots["accuracy"][0].std(ddof=1)
    acc = table["metrics"]["accuracy"]
    assert acc["se"] == pytest.approx(math.sqrt(2) * sd) and acc["mde"] == pytest.approx(Z * math.sqrt(2) * sd)
    assert acc["cases_needed"] == math.ceil(40 * (acc["mde"] / 0.05) ** 2)
    assert table["metrics"]["error_rate"] == {"se": 0.0, "mde": None, "cases_needed": None}  # no error: no spread
    assert (table["cases"], table["paired"]) == (40, False)


def test_two_runs_use_their_paired_difference() -> None:
    table = power_table([run(PRED_A), run(PRED_B, "b")], effect=0.1, alpha=0.1, power=0.9, n_boot=300, seed=4)
    y = np.array([i % 3 for i in range(40)])
    _, boots = paired_headline(y, [np.array(PRED_A), np.array(PRED_B)], n_boot=300, seed=4)
    sd = (boots["macro_f1"][1] - boots["macro_f1"][0]).std(ddof=1)
    f1 = table["metrics"]["macro_f1"]
    assert f1["se"] == pytest.approx(sd)
    assert f1["mde"] == pytest.approx((1.2815516 + 1.2815516) * sd)  # z(0.9) twice
    assert f1["cases_needed"] == math.ceil(40 * (f1["mde"] / 0.1) ** 2) and table["paired"] is True


def test_the_whole_table_its_spread_boundary_and_a_refusal() -> None:
    from dataclasses import replace

    from harness.errors import IncomparableRuns
    from harness.leaderboard.power import spread

    assert spread(np.array([0.1, 0.3, np.nan])) == pytest.approx(np.std([0.1, 0.3], ddof=1))
    assert spread(np.array([0.1, np.nan])) is None
    table = power_table([run(PRED_A)], effect=0.05, alpha=0.1, power=0.9, n_boot=50, seed=2)
    assert {k: v for k, v in table.items() if k != "metrics"} == {
        "cases": 40, "runs": ["a"], "paired": False, "effect": 0.05, "alpha": 0.1, "power": 0.9,
        "bootstrap_resamples": 50, "seed": 2}  # fmt: skip
    other = replace(run(PRED_B, "b"), doc={**run(PRED_B, "b").doc, "dataset": {"name": "toy", "sha256": "0" * 64}})
    with pytest.raises(IncomparableRuns) as err:
        power_table([run(PRED_A), other], effect=0.05, alpha=0.1, power=0.9, n_boot=50, seed=2)
    assert str(err.value) == "a and b are on different data sets; compare runs on the same cases"
    # one resample: no spread, no figure (one run)
    single = power_table([run(PRED_A)], effect=0.05, alpha=0.1, power=0.9, n_boot=1, seed=2)
    assert single["metrics"]["accuracy"] == {"se": None, "mde": None, "cases_needed": None}
