"""The consensus block (`harness.figures.consensus`): on the cases with a consensus, does a detector call a wrong one
high and leave a right one alone? Each figure against scikit-learn or a count by hand, the intervals against a
bootstrap replayed here."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from harness.figures import compute, consensus
from harness.types import CaseLabels, Outcome
from tests.runfolder.test_journal import labels

CATEGORY = {False: ("majority_wrong_fact", "high"), True: ("genuine_agreement_correct", "low"),
            None: ("genuine_disagreement", "medium")}  # fmt: skip


def case(i: int, majority: bool | None) -> CaseLabels:
    category, expected = CATEGORY[majority]
    return replace(labels(f"C{i:03d}", category=category, expected=expected), majority_correct=majority)


def answer(i: int, risk: str | None, score: float | None = None) -> Outcome:
    return Outcome(f"C{i:03d}", "0123456789abcdef", risk, score, None if risk else "timeout", 1, 0.1)  # type: ignore[arg-type]


def test_a_small_run_counted_by_hand() -> None:
    # wrong consensus: 0 high, 1 medium, 2 error, 3 high -> 2 of 4 caught (the error is a miss)
    # right consensus: 4 low, 5 high, 6 error -> 1 of 3 alarmed, 1 of 3 cleared (the error clears nothing)
    # no consensus: 7, called high, counts in none of it
    labs = [case(i, False) for i in range(4)] + [case(i, True) for i in range(4, 7)] + [case(7, None)]
    risks = ["high", "medium", None, "high", "low", "high", None, "high"]
    outs = {f"C{i:03d}": answer(i, r) for i, r in enumerate(risks)}
    block = consensus(labs, outs, n_boot=0, seed=0)
    assert block is not None
    assert (block["n_wrong"], block["n_right"], block["n_scored"]) == (4, 3, 0)
    assert block["wrong_caught"] == pytest.approx(2 / 4) and block["right_alarmed"] == pytest.approx(1 / 3)
    assert block["balanced_accuracy"] == pytest.approx((2 / 4 + 1 / 3) / 2)
    assert block["roc_auc"] is None and block["roc_auc_ci95"] is None and block["wrong_caught_ci95"] is None


def test_the_figures_are_scikit_learns_and_the_intervals_a_replayed_bootstrap() -> None:
    rng = np.random.default_rng(11)
    n = 80
    majority = rng.random(n) < 0.5
    labs = [case(i, bool(m)) for i, m in enumerate(majority)]
    wrong = ~majority
    risks = rng.choice(np.array(["low", "medium", "high", "error"], dtype=object), size=n, p=[0.3, 0.2, 0.4, 0.1])
    scores = np.round(rng.random(n), 3)
    outs = {lab.case_id: answer(i, None if r == "error" else str(r), None if r == "error" else float(scores[i]))
            for i, (lab, r) in enumerate(zip(labs, risks, strict=True))}  # fmt: skip
    block = consensus(labs, outs, n_boot=200, seed=7)
    assert block is not None
    # the detector "says wrong" on a wrong consensus when it calls it high; on a right one, unless it clears it
    said_wrong = np.where(wrong, risks == "high", ~np.isin(risks, ["low", "medium"]))
    assert block["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(wrong, said_wrong))
    assert block["wrong_caught"] == pytest.approx(np.mean(risks[wrong] == "high"))
    assert block["right_alarmed"] == pytest.approx(np.mean(risks[~wrong] == "high"))
    answered = risks != "error"
    assert block["n_scored"] == answered.sum()
    assert block["roc_auc"] == pytest.approx(roc_auc_score(wrong[answered], scores[answered]))
    # the intervals: 200 resamples of the 80 cases, as every interval of a run draws them (one generator, seed 7)
    draws = np.random.default_rng(7).integers(0, n, size=(200, n))
    caught = [np.mean(risks[d][wrong[d]] == "high") for d in draws]
    alarmed = [np.mean(risks[d][~wrong[d]] == "high") for d in draws]
    balanced = [balanced_accuracy_score(wrong[d], said_wrong[d]) for d in draws]
    assert block["wrong_caught_ci95"] == pytest.approx(np.percentile(caught, [2.5, 97.5]))
    assert block["right_alarmed_ci95"] == pytest.approx(np.percentile(alarmed, [2.5, 97.5]))
    assert block["balanced_accuracy_ci95"] == pytest.approx(np.percentile(balanced, [2.5, 97.5]))
    scored_draws = np.random.default_rng(7).integers(0, answered.sum(), size=(200, answered.sum()))
    aucs = [roc_auc_score(wrong[answered][d], scores[answered][d]) for d in scored_draws]
    assert block["roc_auc_ci95"] == pytest.approx(np.percentile(aucs, [2.5, 97.5]))


def test_no_consensus_case_no_block_and_a_run_s_metrics_carry_it() -> None:
    assert consensus([case(0, None)], {"C000": answer(0, "high")}, n_boot=10, seed=0) is None
    assert consensus([case(0, True)], {}, n_boot=10, seed=0) is None  # not run: not counted
    labs = [case(0, False), case(1, True)]
    metrics = compute(labs, {"C000": answer(0, "high"), "C001": answer(1, "low")}, wall_s=1.0, n_boot=20)
    block = metrics["consensus"]
    assert (
        block is not None
        and block["balanced_accuracy"] == 1.0
        and list(metrics).index("consensus") == list(metrics).index("headline_natural") + 1
    )
    one_class = consensus([case(0, False)], {"C000": answer(0, "high", 0.9)}, n_boot=20, seed=0)
    assert one_class is not None and one_class["right_alarmed"] is None and one_class["balanced_accuracy"] is None
    assert one_class["roc_auc"] is None and one_class["right_alarmed_ci95"] is None


def test_the_reports_show_the_block_under_the_headline() -> None:
    from harness.report.text import headline_rows

    labs = [case(0, False), case(1, False), case(2, True), case(3, None)]
    outs = {"C000": answer(0, "high", 0.9), "C001": answer(1, "low", 0.2), "C002": answer(2, "low", 0.1),
            "C003": answer(3, "medium", 0.5)}  # fmt: skip
    rows = {r[0]: r[1:] for r in headline_rows(compute(labs, outs, wall_s=1.0, n_boot=0))}
    assert rows["wrong consensus called high (2 cases)"] == ["50.0%", ""]
    assert rows["right consensus called high (1 cases)"] == ["0.0%", ""]
    assert rows["consensus balanced accuracy"] == ["0.750", ""]  # (1/2 + 1/1) / 2
    assert rows["consensus ROC-AUC, wrong vs right (n=3)"] == ["1.000", ""]  # wrong 0.9 and 0.2 both above right 0.1


@pytest.mark.filterwarnings("error")  # 0/0 in a resample of one class is NaN on purpose, never a warning
def test_resamples_of_one_class_are_left_out_of_the_intervals() -> None:
    # two wrong consensus (scores 0.9, 0.4), one right (0.6): a resample of the three may hold one class only, which
    # has no balanced accuracy and no ROC-AUC; the intervals come from the resamples that have both
    labs = [case(0, False), case(1, False), case(2, True)]
    outs = {"C000": answer(0, "high", 0.9), "C001": answer(1, "low", 0.4), "C002": answer(2, "low", 0.6)}
    block = consensus(labs, outs, n_boot=60, seed=2)
    assert block is not None
    draws = np.random.default_rng(2).integers(0, 3, size=(60, 3))
    wrong, said_wrong, scores = np.array([1, 1, 0]), np.array([1, 0, 0]), np.array([0.9, 0.4, 0.6])
    both = [d for d in draws if 0 < wrong[d].sum() < 3]
    assert 0 < len(both) < 60  # some resamples hold one class: the case this test is about
    balanced = [balanced_accuracy_score(wrong[d], said_wrong[d]) for d in both]
    aucs = [roc_auc_score(wrong[d], scores[d]) for d in both]
    assert block["balanced_accuracy_ci95"] == pytest.approx(np.percentile(balanced, [2.5, 97.5]))
    assert block["roc_auc_ci95"] == pytest.approx(np.percentile(aucs, [2.5, 97.5]))
    one = consensus(labs, outs, n_boot=1, seed=2)  # one resample is an interval of one point
    assert (
        one is not None
        and one["wrong_caught_ci95"] is not None
        and one["wrong_caught_ci95"][0] == one["wrong_caught_ci95"][1]
    )


def test_a_run_s_block_draws_with_the_run_s_seed() -> None:
    labs = [case(i, i % 2 == 0) for i in range(40)]
    outs = {lab.case_id: answer(i, "high" if i % 3 else "low", (i % 7) / 7) for i, lab in enumerate(labs)}
    got = compute(labs, outs, wall_s=1.0, n_boot=100, seed=9)["consensus"]
    assert got == consensus(labs, outs, n_boot=100, seed=9) != consensus(labs, outs, n_boot=100, seed=10)


def test_without_scores_there_is_no_roc_auc_and_no_interval_of_it() -> None:
    block = consensus([case(0, False), case(1, True)], {"C000": answer(0, "high"), "C001": answer(1, "low")},
                      n_boot=50, seed=0)  # fmt: skip
    assert block is not None and (block["n_scored"], block["roc_auc"], block["roc_auc_ci95"]) == (0, None, None)
    assert block["balanced_accuracy_ci95"] == [1.0, 1.0]  # every resample with both kinds is right on both
