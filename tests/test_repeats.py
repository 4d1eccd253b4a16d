"""The epochs and probes figures (`harness.repeats`), each checked against a hand computation or a published
value: Fleiss' kappa on Fleiss' own worked example, self-agreement and flip rates counted by hand, and intervals
that resample cases with their epochs kept together."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from harness.repeats import (
    epoch_disagreement,
    epochs_block,
    fleiss_kappa,
    flip_rate,
    probes_block,
    self_agreement,
    verdict_matrix,
)
from harness.types import ItemKey, Outcome
from tests.runfolder.test_journal import labels

# Fleiss (1971) as Wikipedia's "Fleiss' kappa" article works it: 10 subjects, 14 raters, 5 categories; kappa 0.210
FLEISS_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def test_fleiss_kappa_matches_the_worked_example() -> None:
    assert fleiss_kappa(np.array(FLEISS_TABLE)) == pytest.approx(0.2099, abs=5e-4)  # P 0.378, Pe 0.213


def test_fleiss_kappa_is_undefined_when_every_rating_is_one_category() -> None:
    assert fleiss_kappa(np.array([[3, 0], [3, 0]])) is None
    assert fleiss_kappa(np.zeros((0, 4), dtype=int)) is None


def out(case: str, epoch: int, risk: str | None, score: float | None = None, variant: str | None = None) -> Outcome:
    return Outcome(case, "0123456789abcdef", risk, score, None if risk else "timeout", 1, 0.1, epoch=epoch,  # type: ignore[arg-type]
                   variant=variant)  # fmt: skip


def items_of(*outs: Outcome) -> dict[ItemKey, Outcome]:
    return {ItemKey(o.case_id, o.epoch, o.variant): o for o in outs}


LABS = [
    labels("A", expected="high"),
    labels("B", expected="low", category="genuine_agreement_correct"),
    replace(labels("C", expected="high"), any_saw_other_answers=True),
    labels("D", expected="medium", category="genuine_disagreement"),
]


def three_epochs() -> dict[ItemKey, Outcome]:
    return items_of(
        out("A", 1, "high"), out("A", 2, "high"), out("A", 3, "high"),  # all agree
        out("B", 1, "low"), out("B", 2, "high"), out("B", 3, "low"),  # 1 of 3 pairs agrees
        out("C", 1, "high"), out("C", 2, None), out("C", 3, "medium"),  # an error is a verdict: no pair agrees
        out("D", 1, "medium"), out("D", 2, "medium"),  # epoch 3 missing: out of the agreement figures
    )  # fmt: skip


def test_self_agreement_counts_cases_with_every_epoch_and_an_error_as_a_verdict() -> None:
    verdicts = verdict_matrix([lab.case_id for lab in LABS], three_epochs(), 3)
    assert verdicts.tolist() == [[2, 2, 2], [0, 2, 0], [2, 3, 1]]
    block = self_agreement(verdicts, n_boot=0, seed=0)
    assert block["n_cases"] == 3
    assert block["all_agree"] == pytest.approx(1 / 3)
    assert block["pairwise"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    # Fleiss by hand: 9 ratings: low 2, medium 1, high 5, error 1 -> Pe = (4 + 1 + 25 + 1) / 81
    p_bar, p_e = (1 + 1 / 3 + 0) / 3, 31 / 81
    assert block["fleiss_kappa"] == pytest.approx((p_bar - p_e) / (1 - p_e))
    assert block["all_agree_ci95"] is None  # no resamples asked


def test_per_epoch_headlines_and_their_spread() -> None:
    block = epochs_block(LABS, three_epochs(), n_epochs=3, reducer="mode", n_boot=0, seed=0)
    accuracy = [e["accuracy"] for e in block["per_epoch"]]
    # epoch 1: A, B, C, D right (4/4); epoch 2: A, D right of 4 (B high, C error); epoch 3: A, B right of 3
    assert accuracy == pytest.approx([1.0, 0.5, 2 / 3])
    assert [e["n_cases"] for e in block["per_epoch"]] == [4, 4, 3]
    assert block["spread"]["accuracy"]["mean"] == pytest.approx((1 + 0.5 + 2 / 3) / 3)
    assert block["spread"]["accuracy"]["sd"] == pytest.approx(float(np.std([1, 0.5, 2 / 3], ddof=1)))
    assert block["per_epoch"][1]["error_rate"] == pytest.approx(0.25)
    assert (block["n"], block["reducer"]) == (3, "mode")


def test_a_figure_undefined_in_one_epoch_has_no_spread() -> None:
    items = items_of(out("B", 1, "low"), out("B", 2, "low"))  # only a low case: no high-risk recall
    block = epochs_block([LABS[1]], items, n_epochs=2, reducer="first", n_boot=0, seed=0)
    assert block["spread"]["high_risk_recall"] == {"mean": None, "sd": None}
    assert block["spread"]["accuracy"] == {"mean": 1.0, "sd": 0.0}


def probed() -> dict[ItemKey, Outcome]:
    return items_of(
        out("A", 1, "high", 0.9), out("A", 1, "low", 0.2, "order"), out("A", 1, "high", 0.9, "names"),  # order flips
        out("B", 1, "low", 0.1), out("B", 1, "low", 0.3, "order"),  # no flip; score +0.2
        out("C", 1, "high"), out("C", 1, "medium", variant="order"),  # flips; saw others' answers; no scores
        out("D", 1, None), out("D", 1, "medium", 0.5, "order"),  # the request errored: not compared
    )  # fmt: skip


def test_a_probe_s_flip_rate_split_and_score_change_counted_by_hand() -> None:
    block = probes_block(LABS, probed(), ["order", "names"], n_epochs=1, not_possible={"names": 3}, n_boot=0, seed=0)
    order = block["order"]
    assert (order["n"], order["flips"], order["flip_rate"]) == (3, 2, pytest.approx(2 / 3))
    assert (order["n_cases"], order["not_compared"], order["not_possible"]) == (4, 1, 0)
    assert order["order_informative"]["saw_other_answers"]["flips"] == 1
    assert order["order_informative"]["saw_other_answers"]["n"] == 1
    assert order["order_informative"]["independent"]["flip_rate"] == pytest.approx(1 / 2)  # A flips, B does not
    assert order["per_category"]["echo_cascade"]["flip_rate"] == 1.0  # A and C
    assert order["per_category"]["genuine_agreement_correct"]["flip_rate"] == 0.0
    assert order["per_category"]["genuine_disagreement"]["n"] == 0  # D: not compared
    assert order["mean_score_change"] == pytest.approx(((0.2 - 0.9) + (0.3 - 0.1)) / 2)
    assert order["mean_abs_score_change"] == pytest.approx((0.7 + 0.2) / 2)
    assert order["epoch_disagreement"] is None  # one epoch
    names = block["names"]
    assert (names["n"], names["flips"], names["n_cases"], names["not_possible"]) == (1, 0, 1, 3)


def test_with_epochs_a_variant_is_compared_with_the_request_of_its_own_epoch() -> None:
    items = items_of(
        out("A", 1, "high"), out("A", 2, "low"),
        out("A", 1, "low", variant="order"), out("A", 2, "low", variant="order"),  # flips in epoch 1 only
    )  # fmt: skip
    block = probes_block(LABS[:1], items, ["order"], n_epochs=2, not_possible={}, n_boot=0, seed=0)["order"]
    assert (block["n"], block["flips"]) == (2, 1)
    assert block["epoch_disagreement"] == 1.0  # the request's own two epochs differ


def test_epoch_disagreement_pools_pairs_of_answered_epochs() -> None:
    # A: 3 pairs, none differ; B: 3 pairs, 2 differ; C: one answered pair (high, medium) differs; D: 1 pair, same
    assert epoch_disagreement(LABS, three_epochs(), 3) == pytest.approx((0 + 2 + 1 + 0) / (3 + 3 + 1 + 1))


def test_flip_intervals_resample_cases_with_their_pairs_kept_together() -> None:
    # one case with 10 pairs that all flip, nine with one pair that does not: 10/19 pooled. Resampling cases, a
    # draw without the big case (probability 0.9^10 = 0.35) has no flip; resampling pairs would never reach 0.
    pairs = np.array([10] + [1] * 9, dtype=float)
    flips = np.array([10] + [0] * 9, dtype=float)
    block = flip_rate(pairs, flips, n_boot=2000, seed=1)
    assert block["flip_rate"] == pytest.approx(10 / 19)
    assert block["ci95"] is not None and block["ci95"][0] == 0.0 and block["ci95"][1] > 0.75


def test_agreement_interval_is_a_percentile_bootstrap_over_cases() -> None:
    verdicts = np.array([[0, 0]] * 6 + [[0, 1]] * 4)
    block = self_agreement(verdicts, n_boot=4000, seed=3)
    lo, hi = block["all_agree_ci95"]  # type: ignore[misc]
    se = (0.6 * 0.4 / 10) ** 0.5  # the normal approximation's: the percentile interval lands near 0.6 +- 1.96 se
    assert lo == pytest.approx(0.6 - 1.96 * se, abs=0.1) and hi == pytest.approx(0.6 + 1.96 * se, abs=0.1)
    assert lo < 0.6 < hi
