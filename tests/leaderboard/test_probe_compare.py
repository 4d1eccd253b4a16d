"""``fcb compare RUN --probe P`` (harness/leaderboard/probe_compare.py) on probed runs made by hand: which pairs are
compared, the figures on each side, the flipped pairs and the gate, worked out in the comments (issue 46: no unit
test called the probe comparison)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.errors import UsageError
from harness.leaderboard.noise import regression_p
from harness.leaderboard.probe_compare import compare_probe, probe_pairs
from harness.leaderboard.runs import Run
from harness.metrics import finite_interval, paired_headline

IDS = np.array(["c1", "c2", "c3", "c4"], dtype=object)
CATS = np.array(["x", "x", "y", "y"], dtype=object)
Y = np.array([0, 2, 2, 1])  # low, high, high, medium


def run(
    y_pred: list[int],
    variants: dict[str, list[list[int]]],
    epochs: list[list[int]] | None = None,
    origins: list[str] | None = None,
) -> Run:
    doc = {
        "detector": {"spec": "pkg.mod:assess", "label": "mine"},
        "dataset": {"name": "toy", "sha256": "f" * 64, "cases": 4},
        "created": "2026-12-01T00:00:00Z",
        "complete": True,
        "metrics": {},
    }
    return Run(
        Path("runs/a"),
        doc,  # type: ignore[arg-type]
        IDS,
        CATS,
        Y,
        np.array(y_pred),
        origins=None if origins is None else np.array(origins, dtype=object),
        epochs=None if epochs is None else np.array(epochs),
        variants={k: np.array(v) for k, v in variants.items()},
    )


def test_the_pairs_are_those_whose_variant_was_asked() -> None:
    # one epoch: plain verdicts are y_pred; the variant of c3 was not asked (-1): left out of both sides
    r = run([0, 2, 2, 1], {"order": [[0], [0], [-1], [1]]})
    cases, epochs, plain, variant = probe_pairs(r, "order")
    assert cases.tolist() == [0, 1, 3]
    assert epochs.tolist() == [1, 1, 1]  # numbered from 1
    assert plain.tolist() == [0, 2, 1]
    assert variant.tolist() == [0, 0, 1]


def test_with_epochs_each_case_and_epoch_is_a_pair() -> None:
    # two epochs: plain from the epoch table, the pair (case, epoch) where the variant was asked
    epochs = [[0, 1], [2, 2], [2, 0], [1, 1]]
    variants = [[-1, 1], [0, 2], [-1, -1], [1, -1]]
    r = run([0, 2, 2, 1], {"names": variants}, epochs=epochs)
    cases, numbers, plain, variant = probe_pairs(r, "names")
    assert cases.tolist() == [0, 1, 1, 3]
    assert numbers.tolist() == [2, 1, 2, 1]
    assert plain.tolist() == [1, 2, 2, 1]
    assert variant.tolist() == [1, 0, 2, 1]


def test_a_probe_the_run_did_not_ask_is_refused_naming_the_ones_it_did() -> None:
    r = run([0, 2, 2, 1], {"order": [[0]] * 4, "names": [[0]] * 4})
    with pytest.raises(UsageError) as raised:
        probe_pairs(r, "premise")
    assert str(raised.value) == (
        "runs/a: --probe premise: the run asked no premise variants (its probes: names, order); "
        "fcb eval --probe premise asks them"
    )
    with pytest.raises(UsageError, match=r"\(its probes: none\)"):
        compare_probe(run([0, 2, 2, 1], {}), "order", n_boot=10)


def test_one_epoch_figures_deltas_and_flips_by_hand() -> None:
    # pairs c1, c2, c4 (c3 unasked): expected [low high medium]; plain [low high medium] (all right);
    # variant [low low medium] (c2 flipped to low). base accuracy 3/3, new 2/3: delta -1/3
    # new macro-F1: low P 1/2 R 1 -> 2/3, medium 1, high 0 -> 5/9; base 1: delta -4/9
    # high_risk_recall 1 -> 0; false_alarm_rate 0 -> 0; error_rate 0 -> 0
    r = run([0, 2, 2, 1], {"order": [[0], [0], [-1], [1]]})
    doc = compare_probe(r, "order", max_drop=0.01, alpha=0.05, n_boot=300, seed=4)
    m = doc["metrics"]
    assert (m["accuracy"]["base"], m["accuracy"]["new"]) == pytest.approx((1.0, 2 / 3))
    assert m["accuracy"]["delta"] == pytest.approx(-1 / 3)
    assert (m["macro_f1"]["base"], m["macro_f1"]["new"], m["macro_f1"]["delta"]) == pytest.approx((1, 5 / 9, -4 / 9))
    assert (m["high_risk_recall"]["base"], m["high_risk_recall"]["new"]) == (1.0, 0.0)
    assert m["false_alarm_rate"]["delta"] == 0.0 and m["error_rate"]["delta"] == 0.0
    assert doc["dataset"] == {"name": "toy", "sha256": "f" * 64, "cases": 3}  # three cases compared, not four
    # per category: x holds c1, c2 (both right, then one): 1 -> 1/2; y holds c4 alone: 1 -> 1
    assert doc["per_category"] == {
        "x": {"n": 2, "base": 1.0, "new": 0.5, "delta": -0.5},
        "y": {"n": 1, "base": 1.0, "new": 1.0, "delta": 0.0},
    }
    # one epoch: a flipped case carries no epoch
    assert doc["flipped"] == {"right_to_wrong": [{"id": "c2", "category": "x"}], "wrong_to_right": []}
    # one pair a case: the cluster bootstrap is the paired one over the pairs, so its interval and p are those
    y, base, new = np.array([0, 2, 1]), np.array([0, 2, 1]), np.array([0, 0, 1])
    _, boots = paired_headline(y, [base, new], n_boot=300, seed=4)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert m["accuracy"]["ci"] == pytest.approx(list(finite_interval(change, 0.05)))  # type: ignore[arg-type]
    assert m["accuracy"]["p"] == pytest.approx(regression_p(-change))


def test_the_two_sides_and_settings_name_the_probe() -> None:
    r = run([0, 2, 2, 1], {"order": [[0], [0], [-1], [1]]})
    doc = compare_probe(r, "order", max_drop=0.02, alpha=0.1, n_boot=50, seed=7)
    side = {"path": "runs/a", "detector": "mine", "spec": "pkg.mod:assess", "created": "2026-12-01T00:00:00Z"}
    assert doc["base"] == side
    assert doc["new"] == {**side, "detector": "mine (order variants)"}
    assert doc["settings"] == {"max_drop": 0.02, "alpha": 0.1, "bootstrap_resamples": 50, "seed": 7, "probe": "order"}


def test_the_default_settings_and_the_method_statement() -> None:
    r = run([0, 2, 2, 1], {"order": [[0], [0], [-1], [1]]})
    doc = compare_probe(r, "order")
    assert doc["settings"] == {"max_drop": 0.01, "alpha": 0.05, "bootstrap_resamples": 2000, "seed": 0,
                               "probe": "order"}  # fmt: skip
    _, boots = paired_headline(np.array([0, 2, 1]), [np.array([0, 2, 1]), np.array([0, 0, 1])], n_boot=2000, seed=0)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert doc["metrics"]["accuracy"]["ci"] == pytest.approx(list(finite_interval(change, 0.05)))  # type: ignore[arg-type]
    text = compare_probe(r, "order", alpha=0.1, n_boot=30, seed=3)["gate"]["statement"]
    assert "p-value is below alpha = 0.1: Holm's step-down" in text and "(30 resamples, seed 3)" in text
    assert text.endswith("The interval shown is the 90% percentile interval of the change.")


def test_the_gate_is_holm_over_the_metrics_the_probe_can_change() -> None:
    # no pair errs on either side: error_rate cannot change in any resample; the one low case (c1) is low on both
    # sides: false_alarm_rate cannot change either. Both stay out of the family
    r = run([0, 2, 2, 1], {"order": [[0], [0], [-1], [1]]})
    gate = compare_probe(r, "order", n_boot=100)["gate"]
    assert gate["method"] == "probe-pairs" and gate["figures"] == "pairs" and gate["multiple_testing"] == "holm"
    assert gate["family"] == ["accuracy", "macro_f1", "weighted_kappa", "high_risk_recall"]
    assert gate["epochs"] == {"base": 1, "new": 1}
    assert gate["noise_separated"] is False  # one epoch: the detector's noise is not apart from the probe's effect
    assert (
        "Holm's step-down over the 4 metrics gated together (accuracy, macro_f1, weighted_kappa, high_risk_recall)"
        in gate["statement"]
    )
    assert "a detector the probe does not change fails the gate" in gate["statement"]
    assert "(100 resamples, seed 0)" in gate["statement"]


def test_every_pair_turned_wrong_is_a_regression_unless_max_drop_allows_it() -> None:
    # the variant turns every asked pair wrong: accuracy 1 -> 0 in every resample that draws any case, so the
    # one-sided p is 0 (no resample without a worsening) and its Holm-adjusted p is 0 < alpha
    r = run([0, 2, 2, 1], {"order": [[1], [0], [0], [2]]})
    doc = compare_probe(r, "order", max_drop=0.01, n_boot=100)
    acc = doc["metrics"]["accuracy"]
    assert (acc["base"], acc["new"], acc["delta"], acc["p"], acc["p_holm"]) == (1.0, 0.0, -1.0, 0.0, 0.0)
    assert acc["regression"] is True and doc["regression"] is True
    assert [f["id"] for f in doc["flipped"]["right_to_wrong"]] == ["c1", "c2", "c3", "c4"]
    # a drop of exactly 1.0 is not more than max_drop 1.0: accuracy and high_risk_recall (1 -> 0) pass; kappa,
    # which falls below 0, still regresses
    allowed = compare_probe(r, "order", max_drop=1.0, n_boot=100)["metrics"]
    assert allowed["accuracy"]["regression"] is False and allowed["high_risk_recall"]["regression"] is False
    assert allowed["high_risk_recall"]["delta"] == -1.0
    assert allowed["weighted_kappa"]["delta"] < -1.0 and allowed["weighted_kappa"]["regression"] is True
    tight = compare_probe(r, "order", max_drop=0.999, n_boot=100)["metrics"]  # one step under the drop
    assert tight["accuracy"]["regression"] is True and tight["high_risk_recall"]["regression"] is True
    # the same pairs the other way round (wrong plain verdicts, right variants): an improvement, never a regression
    better = compare_probe(run([1, 0, 0, 2], {"order": [[0], [2], [2], [1]]}), "order", n_boot=100)
    assert better["metrics"]["accuracy"]["delta"] == 1.0 and better["regression"] is False
    assert better["metrics"]["accuracy"]["p"] == 1.0
    assert [f["id"] for f in better["flipped"]["wrong_to_right"]] == ["c1", "c2", "c3", "c4"]


def test_a_probe_that_changes_nothing_passes() -> None:
    r = run([0, 2, 2, 1], {"order": [[0], [2], [2], [1]]})
    doc = compare_probe(r, "order", n_boot=100)
    assert doc["regression"] is False
    assert all(m["delta"] == 0.0 for m in doc["metrics"].values() if m["delta"] is not None)
    assert doc["gate"]["family"] == []  # no resample can change any metric: nothing is tested
    assert doc["flipped"] == {"right_to_wrong": [], "wrong_to_right": []}


def test_with_epochs_pairs_of_a_case_resample_together_and_flips_carry_their_epoch() -> None:
    # two epochs, every variant asked; plain verdicts all right; the variant flips c2 in epoch 2 only
    # pairs: 8; base accuracy 8/8, new 7/8: delta -1/8
    epochs = [[0, 0], [2, 2], [2, 2], [1, 1]]
    variants = [[0, 0], [2, 0], [2, 2], [1, 1]]
    r = run([0, 2, 2, 1], {"order": variants}, epochs=epochs)
    doc = compare_probe(r, "order", n_boot=200, seed=1)
    acc = doc["metrics"]["accuracy"]
    assert (acc["base"], acc["new"], acc["delta"]) == pytest.approx((1.0, 7 / 8, -1 / 8))
    assert doc["flipped"]["right_to_wrong"] == [{"id": "c2", "category": "x", "epoch": 2}]
    assert doc["gate"]["noise_separated"] is True and doc["gate"]["epochs"] == {"base": 2, "new": 2}
    assert doc["dataset"]["cases"] == 4
    # per category: x holds 4 pairs (c1 twice, c2 twice), 3 right in the variant: 1 -> 3/4
    assert doc["per_category"]["x"] == {"n": 4, "base": 1.0, "new": 0.75, "delta": -0.25}
    # c2's two pairs are drawn together: a resample holds c2 0, 2, 4... times, so its new accuracy is
    # 1 - (k / 2) / (pairs drawn) with both of c2's epochs counted; no resample can lose the one flip without the
    # other pair of c2 coming along. The share of resamples without c2 (no worsening) is the p: (3/4)^4 on average
    draws = 4000
    many = compare_probe(r, "order", n_boot=draws, seed=2)
    assert many["metrics"]["accuracy"]["p"] == pytest.approx((3 / 4) ** 4, abs=0.03)


def test_the_real_cases_gate_too() -> None:
    # origins: c1 and c2 natural, c3 synthetic, c4 assembled; the variant flips c3 alone (a constructed case):
    # macro_f1 on all pairs drops, on the real ones (c1, c2, c4) it does not
    r = run([0, 2, 2, 1], {"order": [[0], [2], [0], [1]]}, origins=["natural", "natural", "synthetic", "assembled"])
    doc = compare_probe(r, "order", n_boot=100)
    real = doc["metrics"]["macro_f1_real"]
    assert (real["base"], real["new"], real["delta"]) == (1.0, 1.0, 0.0)
    assert doc["metrics"]["macro_f1"]["delta"] < 0
    assert "macro_f1_real" not in doc["gate"]["family"]  # nothing on the real cases can change
    # now the variant flips c2 (natural): the real macro-F1 drops and joins the family
    r = run([0, 2, 2, 1], {"order": [[0], [0], [2], [1]]}, origins=["natural", "natural", "synthetic", "assembled"])
    doc = compare_probe(r, "order", n_boot=100)
    # real pairs c1, c2, c4: expected [low high medium], new [low low medium]: macro-F1 (2/3 + 1 + 0) / 3 = 5/9
    assert doc["metrics"]["macro_f1_real"]["new"] == pytest.approx(5 / 9)
    assert doc["gate"]["family"][-1] == "macro_f1_real"
