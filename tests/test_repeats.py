"""The epochs and probes figures (`harness.repeats`), each checked against a hand computation or a published
value: Fleiss' kappa on Fleiss' own worked example, self-agreement and flip rates counted by hand, and intervals
that resample cases with their epochs kept together."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score

from harness.repeats import (
    case_pairs,
    category_counts,
    epoch_disagreement,
    epochs_block,
    falls_block,
    fleiss_kappa,
    flip_rate,
    pairwise_agreement,
    probes_block,
    self_agreement,
    spread,
    transitions,
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


# --- each figure and key of the blocks, against hand counts, scikit-learn and a replayed bootstrap ---------------


def boot_interval(num: np.ndarray, den: np.ndarray, n_boot: int, seed: int) -> list[float]:
    """The documented percentile bootstrap written out: n_boot resamples of the cases (one draw, n_boot <= 100),
    the ratio of the resampled sums, the central 95% of the finite ones."""
    idx = np.random.default_rng(seed).integers(0, len(den), size=(n_boot, len(den)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = num[idx].sum(axis=1) / den[idx].sum(axis=1)
    lo, hi = np.percentile(ratios[np.isfinite(ratios)], [2.5, 97.5])
    return [float(lo), float(hi)]


def test_one_epoch_s_headline_every_figure() -> None:
    expected = ["high"] * 5 + ["low"] * 4 + ["medium"] * 2
    got = ["high", "high", "medium", None, "high", "low", "high", "low", "medium", "medium", "low"]
    labs = [labels(f"K{i}", expected=e) for i, e in enumerate(expected)]
    outs = [out(f"K{i}", 2, g) for i, g in enumerate(got)]
    outs += [out(f"K{i}", 1, "low") for i in range(11)]  # epoch 1 differs: must not leak into epoch 2
    block = epochs_block(labs, items_of(*outs), n_epochs=2, reducer="mode", n_boot=0, seed=0)
    second = block["per_epoch"][1]
    code = {"low": 0, "medium": 1, "high": 2, None: 3}
    y_true, y_pred = [code[e] for e in expected], [code[g] for g in got]
    assert set(second) == {"epoch", "n_cases", "accuracy", "macro_f1", "high_risk_recall", "false_alarm_rate",
                           "error_rate"}  # fmt: skip
    assert (second["epoch"], second["n_cases"]) == (2, 11)
    assert second["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred))  # 6/11
    assert second["macro_f1"] == pytest.approx(f1_score(y_true, y_pred, labels=[0, 1, 2], average="macro"))
    assert second["high_risk_recall"] == pytest.approx(3 / 5)  # K0, K1, K4 of five high
    assert second["false_alarm_rate"] == pytest.approx(1 / 4)  # K6 of four low
    assert second["error_rate"] == pytest.approx(1 / 11)
    first = block["per_epoch"][0]
    assert (first["epoch"], first["accuracy"], first["error_rate"]) == (1, pytest.approx(4 / 11), 0.0)
    assert set(block) == {"n", "reducer", "per_epoch", "spread", "self_agreement"}
    assert set(block["spread"]) == {"accuracy", "macro_f1", "high_risk_recall", "false_alarm_rate", "error_rate"}
    for name in block["spread"]:  # a second computation over the two epochs' figures
        values = [first[name], second[name]]
        assert block["spread"][name]["mean"] == pytest.approx((values[0] + values[1]) / 2)
        assert block["spread"][name]["sd"] == pytest.approx(abs(values[0] - values[1]) / 2**0.5)
    assert block["self_agreement"]["n_cases"] == 11
    assert block["self_agreement"]["all_agree"] == pytest.approx(3 / 11)  # K5, K7, K10 low twice


def test_spread_by_hand() -> None:
    from statistics import stdev

    assert spread([0.2, 0.5, 0.9]) == {"mean": pytest.approx(1.6 / 3), "sd": pytest.approx(stdev([0.2, 0.5, 0.9]))}
    assert spread([0.4]) == {"mean": 0.4, "sd": None}  # one epoch: no sample sd
    assert spread([]) == {"mean": None, "sd": None}
    assert spread([0.3, None]) == {"mean": None, "sd": None}


def test_verdict_matrix_needs_every_epoch_from_the_first() -> None:
    items = items_of(out("A", 2, "high"), out("A", 3, "low"), out("B", 1, "low"), out("B", 2, None),
                     out("B", 3, "medium"))  # fmt: skip
    assert verdict_matrix(["A", "B"], items, 3).tolist() == [[0, 3, 1]]  # A lacks epoch 1
    empty = verdict_matrix(["A"], items, 3)
    assert empty.shape == (0, 3) and empty.dtype.kind == "i"  # codes, even without a row


def test_category_counts_and_pairwise_agreement_by_hand() -> None:
    counts = category_counts(np.array([[0, 3, 3], [2, 1, 1], [1, 1, 1]]))
    assert counts.tolist() == [[1, 0, 0, 2], [0, 2, 1, 0], [0, 3, 0, 0]] and counts.dtype.kind == "i"
    # pairs of 3 epochs: 3; agreeing: case 1 one (3, 3), case 2 one (1, 1), case 3 all three
    assert pairwise_agreement(counts).tolist() == pytest.approx([1 / 3, 1 / 3, 1.0])
    # four raters: 6 pairs; counts (2, 2): 1 + 1 agree; (3, 1): 3 agree
    assert pairwise_agreement(np.array([[2, 2, 0, 0], [0, 3, 0, 1]])).tolist() == pytest.approx([2 / 6, 3 / 6])


def test_self_agreement_of_two_epochs_with_an_interval_replayed() -> None:
    verdicts = np.array([[0, 0], [0, 1], [2, 2], [3, 3], [1, 2], [2, 2], [1, 0]])
    block = self_agreement(verdicts, n_boot=50, seed=7)
    agree = np.array([1, 0, 1, 1, 0, 1, 0], dtype=float)
    assert set(block) == {"n_cases", "all_agree", "all_agree_ci95", "pairwise", "fleiss_kappa"}
    assert block["n_cases"] == 7
    assert block["all_agree"] == pytest.approx(4 / 7)
    assert block["pairwise"] == pytest.approx(4 / 7)  # two epochs: a case's one pair agrees or not
    # 14 ratings: low 4, medium 3, high 5, error 2; P = 4/7
    p_e = (16 + 9 + 25 + 4) / 196
    assert block["fleiss_kappa"] == pytest.approx((4 / 7 - p_e) / (1 - p_e))
    assert block["all_agree_ci95"] == pytest.approx(boot_interval(agree, np.ones(7), 50, 7))
    single = self_agreement(verdicts, n_boot=1, seed=7)  # one resample: an interval of one value
    idx = np.random.default_rng(7).integers(0, 7, size=(1, 7))
    assert single["all_agree_ci95"] == pytest.approx([agree[idx].mean()] * 2)
    assert self_agreement(np.zeros((0, 2), dtype=int), n_boot=10, seed=0) == {
        "n_cases": 0, "all_agree": None, "all_agree_ci95": None, "pairwise": None, "fleiss_kappa": None}  # fmt: skip


def test_flip_rate_keys_edges_and_a_replayed_interval() -> None:
    pairs = np.array([2, 1, 0, 3, 1], dtype=float)
    flips = np.array([1, 1, 0, 0, 1], dtype=float)
    block = flip_rate(pairs, flips, n_boot=40, seed=5)
    assert set(block) == {"n", "flips", "flip_rate", "ci95"}
    assert (block["n"], block["flips"], block["flip_rate"]) == (7, 3, pytest.approx(3 / 7))
    assert block["ci95"] == pytest.approx(boot_interval(flips, pairs, 40, 5))
    assert flip_rate(pairs, flips, n_boot=0, seed=5)["ci95"] is None
    none = flip_rate(np.zeros(3), np.zeros(3), n_boot=40, seed=5)
    assert none == {"n": 0, "flips": 0, "flip_rate": None, "ci95": None}
    assert flip_rate(np.zeros(0), np.zeros(0), n_boot=40, seed=5)["ci95"] is None
    one = flip_rate(pairs, flips, n_boot=1, seed=5)
    idx = np.random.default_rng(5).integers(0, 5, size=(1, 5))
    assert one["ci95"] == pytest.approx([flips[idx].sum() / pairs[idx].sum()] * 2)


def many_probes() -> dict[ItemKey, Outcome]:
    return items_of(
        # A (echo_cascade, independent): epoch 1 flips with scores; epoch 2 no variant; epoch 3 same verdict
        out("A", 1, "high", 0.8), out("A", 1, "medium", 0.5, "order"),
        out("A", 2, "high", 0.7),
        out("A", 3, "high", 0.9), out("A", 3, "high", 0.6, "order"),
        # B (genuine_agreement_correct): the variant errors in 1, the request errors in 2, no request in 3
        out("B", 1, "low", 0.1), out("B", 1, None, variant="order"),
        out("B", 2, None), out("B", 2, "low", 0.2, "order"),
        out("B", 3, "low", 0.3, "order"),
        # C (echo_cascade, saw others' answers): flips in 2 of 3, a score only on one side in epoch 1
        out("C", 1, "high", 0.9), out("C", 1, "low", variant="order"),
        out("C", 2, "medium"), out("C", 2, "high", 0.4, "order"),
        out("C", 3, "low", 0.2), out("C", 3, "low", 0.35, "order"),
        # D (genuine_disagreement): never asked a variant
        out("D", 1, "medium"), out("D", 2, "medium"), out("D", 3, "low"),
    )  # fmt: skip


def test_a_probe_over_three_epochs_every_figure_by_hand() -> None:
    items = many_probes()
    block = probes_block(LABS, items, ["order"], n_epochs=3, not_possible={"names": 4}, n_boot=60, seed=11)["order"]
    # pairs compared: A 2 (1 flip), B 0 (3 left out: variant error, request error, no request), C 3 (2 flips), D 0
    assert (block["n"], block["flips"], block["flip_rate"]) == (5, 3, pytest.approx(3 / 5))
    assert (block["n_cases"], block["not_compared"], block["not_possible"]) == (3, 3, 0)
    pairs, flips = np.array([2, 0, 3, 0], dtype=float), np.array([1, 0, 2, 0], dtype=float)
    assert block["ci95"] == pytest.approx(boot_interval(flips, pairs, 60, 11))
    assert set(block["per_category"]) == {"echo_cascade", "genuine_agreement_correct", "genuine_disagreement"}
    echo = block["per_category"]["echo_cascade"]  # A and C
    assert (echo["n"], echo["flips"]) == (5, 3)
    assert echo["ci95"] == pytest.approx(boot_interval(flips[[0, 2]], pairs[[0, 2]], 60, 11))
    agreement = block["per_category"]["genuine_agreement_correct"]
    assert agreement == {"n": 0, "flips": 0, "flip_rate": None, "ci95": None}
    assert set(block["order_informative"]) == {"saw_other_answers", "independent"}
    saw = block["order_informative"]["saw_other_answers"]  # C
    assert (saw["n"], saw["flips"], saw["flip_rate"]) == (3, 2, pytest.approx(2 / 3))
    independent = block["order_informative"]["independent"]  # A, B, D
    assert (independent["n"], independent["flips"], independent["flip_rate"]) == (2, 1, pytest.approx(1 / 2))
    # score changes over pairs with both scores: A1 0.5-0.8, A3 0.6-0.9, C2 has no request score, C3 0.35-0.2
    changes = [0.5 - 0.8, 0.6 - 0.9, 0.35 - 0.2]
    assert block["mean_score_change"] == pytest.approx(sum(changes) / 3)
    assert block["mean_abs_score_change"] == pytest.approx((0.3 + 0.3 + 0.15) / 3)
    # the request's own epochs: A (high x3) 3 pairs, 0 differ; B one answered epoch; C 3 pairs all differ;
    # D (medium, medium, low) 3 pairs, 2 differ
    assert block["epoch_disagreement"] == pytest.approx((0 + 3 + 2) / (3 + 3 + 3))
    # the pairs' moves: A1 high to medium, A3 high to high, C1 high to low, C2 medium to high, C3 low to low
    assert block["transitions"] == {"high": {"low": 1, "medium": 1, "high": 1},
                                    "medium": {"low": 0, "medium": 0, "high": 1},
                                    "low": {"low": 1, "medium": 0, "high": 0}}  # fmt: skip
    assert (block["lowered"], block["raised"], block["expectation"], block["per_style"]) == (2, 1, "unchanged", {})
    assert set(block) == {"n", "flips", "flip_rate", "ci95", "n_cases", "not_possible", "not_compared",
                          "per_category", "order_informative", "mean_score_change", "mean_abs_score_change",
                          "epoch_disagreement", "expectation", "transitions", "lowered", "raised",
                          "per_style"}  # fmt: skip


def as_probe(items: dict[ItemKey, Outcome], probe: str) -> dict[ItemKey, Outcome]:
    """The same outcomes, the order variants' made another probe's."""
    moved = [replace(o, variant=probe) if o.variant == "order" else o for o in items.values()]
    return {ItemKey(o.case_id, o.epoch, o.variant): o for o in moved}


def test_an_injected_instruction_s_attack_success_rate_by_hand() -> None:
    items = as_probe(many_probes(), "inject")
    styles = {"A": "json", "C": "plain"}
    block = probes_block(LABS, items, ["inject"], n_epochs=3, not_possible={}, n_boot=60, seed=11,
                         styles={"inject": styles})["inject"]  # fmt: skip
    assert block["expectation"] == "not lower"
    falls = block["falls"]
    # labelled high or medium: A, C (high), D (medium, never asked). Pairs whose request's verdict is above low:
    # A1 high to medium (a fall), A3 high to high, C1 high to low (a fall), C2 medium to high; C3 (low) is not one
    assert (falls["n"], falls["falls"], falls["fall_rate"]) == (4, 2, pytest.approx(0.5))
    assert falls["labels"] == ["medium", "high"]
    pairs, fell = np.array([2, 0, 2, 0], dtype=float), np.array([1, 0, 1, 0], dtype=float)
    assert falls["ci95"] == pytest.approx(boot_interval(fell, pairs, 60, 11))
    # the categories of the cases counted: not B's (labelled low); D's (medium) though it was never asked
    assert set(falls["per_category"]) == {"echo_cascade", "genuine_disagreement"}
    assert falls["per_category"]["genuine_disagreement"]["n"] == 0
    assert falls["per_category"]["echo_cascade"]["n"] == 4
    assert falls["per_category"]["echo_cascade"]["falls"] == 2
    json_, plain = falls["per_style"]["json"], falls["per_style"]["plain"]
    assert (json_["n"], json_["falls"], plain["n"], plain["falls"]) == (2, 1, 2, 1)
    assert falls["per_style"]["system"] == {"n": 0, "falls": 0, "fall_rate": None, "ci95": None}
    assert list(falls["per_style"]) == ["plain", "moderator", "system", "json", "code", "spanish"]
    # the flip rate per template: A's pairs (2, 1 flip) under json, C's (3, 2 flips) under plain
    assert (block["per_style"]["json"]["n"], block["per_style"]["json"]["flips"]) == (2, 1)
    assert (block["per_style"]["plain"]["n"], block["per_style"]["plain"]["flips"]) == (3, 2)


def test_a_duplicate_s_fall_rate_counts_the_cases_labelled_high_only() -> None:
    labs = [LABS[0], LABS[1], replace(LABS[2], expected_risk="medium"), LABS[3]]  # C now labelled medium
    block = probes_block(labs, as_probe(many_probes(), "duplicate"), ["duplicate"], n_epochs=3, not_possible={},
                         n_boot=0, seed=0)["duplicate"]  # fmt: skip
    falls = block["falls"]
    # only A counts: A1 high to medium falls, A3 does not
    assert (falls["n"], falls["falls"], falls["labels"], falls["ci95"]) == (2, 1, ["high"], None)
    assert falls["per_style"] == {} and block["per_style"] == {}
    assert "falls" not in probes_block(labs, many_probes(), ["order"], n_epochs=3, not_possible={}, n_boot=0,
                                       seed=0)["order"]  # fmt: skip


def test_a_probe_without_scores_or_pairs() -> None:
    items = items_of(out("A", 1, "high"), out("A", 1, "low", variant="names"), out("B", 1, "low"))
    block = probes_block(LABS[:2], items, ["names", "order"], n_epochs=1, not_possible={}, n_boot=0, seed=0)
    names, order = block["names"], block["order"]
    assert (names["n"], names["flips"], names["n_cases"]) == (1, 1, 1)
    assert names["mean_score_change"] is None and names["mean_abs_score_change"] is None
    assert (order["n"], order["n_cases"], order["not_compared"], order["flip_rate"]) == (0, 0, 0, None)


def test_case_pairs_counts_one_case() -> None:
    assert case_pairs("B", many_probes(), "order", 3) == ([], 3, True)  # all three epochs left out
    pairs, left_out, asked = case_pairs("C", many_probes(), "order", 3)
    assert (left_out, asked) == (0, True)
    # (epoch, request's code, variant's code, score change): low 0, medium 1, high 2; a change only with both scores
    assert [p[:3] for p in pairs] == [(1, 2, 0), (2, 1, 2), (3, 0, 0)]
    assert (pairs[0][3], pairs[1][3], pairs[2][3]) == (None, None, pytest.approx(0.35 - 0.2))
    assert case_pairs("D", many_probes(), "order", 3) == ([], 0, False)


def test_the_epochs_block_passes_the_run_s_seed_to_the_agreement_interval() -> None:
    block = epochs_block(LABS, three_epochs(), n_epochs=3, reducer="mode", n_boot=30, seed=4)
    agree = np.array([1, 0, 0], dtype=float)  # A agrees; B and C do not; D lacks epoch 3
    assert block["self_agreement"]["all_agree_ci95"] == pytest.approx(boot_interval(agree, np.ones(3), 30, 4))
    # 40 cases, a third of them disagreeing across two epochs: enough for the interval to depend on the seed
    labs = [labels(f"c{i}", expected="high") for i in range(40)]
    items = items_of(*(o for i in range(40) for o in (out(f"c{i}", 1, "high"),
                                                      out(f"c{i}", 2, "low" if i % 3 == 0 else "high"))))  # fmt: skip
    agree = np.array([0.0 if i % 3 == 0 else 1.0 for i in range(40)])
    got = epochs_block(labs, items, n_epochs=2, reducer="mode", n_boot=60, seed=4)["self_agreement"]["all_agree_ci95"]
    assert got == pytest.approx(boot_interval(agree, np.ones(40), 60, 4))
    assert got != pytest.approx(boot_interval(agree, np.ones(40), 60, 5))


@pytest.mark.filterwarnings("error")
def test_a_resample_without_pairs_is_left_out_quietly() -> None:
    # case 0 has a flipping pair, case 1 none: a resample drawing case 1 twice (about 1 in 4) has no pair at all
    pairs, flips = np.array([1, 0], dtype=float), np.array([1, 0], dtype=float)
    block = flip_rate(pairs, flips, n_boot=40, seed=2)
    assert block["ci95"] == [1.0, 1.0]  # every resample with a pair flips


def test_a_probe_of_no_cases() -> None:
    block = probes_block([], {}, ["order"], n_epochs=2, not_possible={"order": 5}, n_boot=10, seed=0)["order"]
    assert (block["n"], block["flip_rate"], block["ci95"], block["n_cases"], block["not_possible"]) == (0, None, None,
                                                                                                      0, 5)  # fmt: skip
    assert block["per_category"] == {} and block["order_informative"]["independent"]["n"] == 0
    assert block["mean_score_change"] is None and block["epoch_disagreement"] is None


def test_a_probe_s_interval_is_the_flip_rate_bootstrap_over_its_cases_with_the_run_s_seed() -> None:
    # 60 cases, each asked once and once in another order; case k flips when k % 3 == 0 (20 of 60): the interval is
    # flip_rate's bootstrap over the cases in label order, with the run's seed (another seed draws other cases)
    labs = [labels(f"K{k:02d}", expected="high") for k in range(60)]
    outs = []
    for k, lab in enumerate(labs):
        outs += [out(lab.case_id, 1, "high"), out(lab.case_id, 1, "low" if k % 3 == 0 else "high", variant="order")]
    pairs, flips = np.ones(60), np.array([float(k % 3 == 0) for k in range(60)])
    block = probes_block(labs, items_of(*outs), ["order"], n_epochs=1, not_possible={}, n_boot=300, seed=3)["order"]
    expected = flip_rate(pairs, flips, n_boot=300, seed=3)["ci95"]
    assert expected is not None and expected[0] < 20 / 60 < expected[1]  # resampled over the cases, not one point
    assert block["ci95"] == pytest.approx(expected)
    assert block["ci95"] != pytest.approx(flip_rate(pairs, flips, n_boot=300, seed=4)["ci95"])  # the seed matters


def test_a_resample_of_exactly_one_pair_counts() -> None:
    # one case with one pair, flipped: every resample is that case, one pair of one flip, so the interval is [1, 1]
    assert flip_rate(np.array([1.0]), np.array([1.0]), n_boot=20, seed=0)["ci95"] == [1.0, 1.0]


def test_falls_counted_on_their_labels_with_an_interval_that_depends_on_the_seed() -> None:
    # six cases, pairs (epoch, request's code, variant's code, score change); labels high, high, medium, low, high,
    # high. The low case falls twice: never counted (a product with False, not a quotient)
    labs = [labels(c, expected=e) for c, e in zip("ABCDEF", ["high", "high", "medium", "low", "high", "high"],
                                                   strict=True)]  # fmt: skip
    rows = [
        [(1, 2, 0, None), (2, 2, 2, None)],  # A: 2 counted, 1 fall
        [(1, 2, 2, None)],  # B: 1 counted, none
        [(1, 1, 0, None), (2, 0, 0, None)],  # C: medium; 1 counted (plain low is not), 1 fall
        [(1, 2, 0, None), (2, 1, 0, None)],  # D: labelled low: none counted
        [(1, 2, 1, None), (2, 2, 1, None), (3, 1, 0, None)],  # E: 3 counted, 3 falls
        [],  # F: no pair
    ]
    styles = ["plain", "json", "plain", None, "json", "plain"]
    block = falls_block(labs, rows, "inject", styles, n_boot=80, seed=9)
    pairs, falls = np.array([2, 1, 1, 0, 3, 0], dtype=float), np.array([1, 0, 1, 0, 3, 0], dtype=float)
    assert (block["n"], block["falls"], block["fall_rate"]) == (7, 5, pytest.approx(5 / 7))
    counted = np.array([0, 1, 2, 4, 5])  # the bootstrap draws the counted cases (D's label is not counted)
    assert block["ci95"] == pytest.approx(boot_interval(falls[counted], pairs[counted], 80, 9))
    assert block["ci95"] != pytest.approx(boot_interval(falls[counted], pairs[counted], 80, 10))  # another seed
    # per style, the same draw over the cases of that style only (D, labelled low, is no template's)
    plain = np.array([0, 2, 5])  # A, C and F; B and E are json
    assert block["per_style"]["plain"]["n"] == 3 and block["per_style"]["plain"]["falls"] == 2
    assert block["per_style"]["plain"]["ci95"] == pytest.approx(boot_interval(falls[plain], pairs[plain], 80, 9))
    assert (block["per_style"]["json"]["n"], block["per_style"]["json"]["falls"]) == (4, 3)
    # the same figures reached through probes_block: the run's seed reaches the falls' bootstrap
    items: dict[ItemKey, Outcome] = {}
    for lab, pairs_of in zip(labs, rows, strict=True):
        for epoch, plain_code, variant_code, _ in pairs_of:
            items[ItemKey(lab.case_id, epoch)] = out(lab.case_id, epoch, RISK_NAMES[plain_code])
            items[ItemKey(lab.case_id, epoch, "inject")] = out(lab.case_id, epoch, RISK_NAMES[variant_code],
                                                               variant="inject")  # fmt: skip
    styled = {lab.case_id: s for lab, s in zip(labs, styles, strict=True) if s}
    through = probes_block(labs, items, ["inject"], n_epochs=3, not_possible={}, n_boot=80, seed=9,
                           styles={"inject": styled})["inject"]["falls"]  # fmt: skip
    assert through == block
    # duplicate counts the cases labelled high only: A, B, E, F: 6 pairs, 4 falls
    dup = falls_block(labs, rows, "duplicate", [None] * 6, n_boot=0, seed=0)
    assert (dup["n"], dup["falls"], dup["per_style"]) == (6, 4, {})


RISK_NAMES = ("low", "medium", "high")


def test_transitions_count_every_pair_in_its_cell() -> None:
    rows = [[(1, 2, 0, None), (2, 2, 0, None)], [(1, 2, 0, None), (1, 0, 1, None)], []]
    table = transitions(rows)
    assert table["high"] == {"low": 3, "medium": 0, "high": 0}
    assert table["low"] == {"low": 0, "medium": 1, "high": 0}
    assert table["medium"] == {"low": 0, "medium": 0, "high": 0}
