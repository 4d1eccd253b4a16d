"""The operating points (`harness.operating`): each policy's figures counted by hand and against scikit-learn's
recall (false consensus caught is the recall of "escalated" on the cases labelled high), the intervals against a
loop over the same resamples, the risk-coverage curve and its area worked out step by step, and the policies along
risk_score."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import recall_score

from harness.metrics import memory_chunk, resample_indices
from harness.operating import CURVE_POINTS, operating_point, operating_points, risk_coverage, score_points
from harness.report.operating import best_aurc, operating_note, operating_rows, review_svg

# labels (0 low, 1 medium, 2 high) and verdicts (3 an error) of ten cases
Y = np.array([2, 2, 2, 2, 1, 1, 0, 0, 0, 2])
P = np.array([2, 1, 0, 2, 2, 1, 2, 0, 1, 3])
S = np.array([0.9, 0.6, 0.1, 0.8, 0.7, 0.5, 0.9, 0.2, 0.4, np.nan])


def test_each_policy_by_hand_and_against_recall() -> None:
    block = operating_points(Y, P, S, n_boot=0, seed=0)
    high, both = block["policies"]["high"], block["policies"]["high_or_medium"]
    # verdict high: cases 0, 3, 4, 6 escalated (4 of 10); of the 5 high (0 1 2 3 9), 0 and 3 caught; of the 3 low
    # (6 7 8), 6 escalated. The error (9, labelled high) is not escalated: a miss
    assert (high["escalated"], high["escalation_rate"]) == (4, 0.4)
    assert high["false_consensus_caught"] == 2 / 5 == recall_score(Y == 2, P == 2)
    assert high["right_consensus_escalated"] == pytest.approx(1 / 3)
    # medium or high: 0 1 3 4 5 6 8 (7 of 10); high caught 0 1 3 (3 of 5); low escalated 6 8 (2 of 3)
    assert (both["escalated"], both["escalation_rate"]) == (7, 0.7)
    assert both["false_consensus_caught"] == 3 / 5 == recall_score(Y == 2, (P == 1) | (P == 2))
    assert both["right_consensus_escalated"] == pytest.approx(2 / 3)
    assert (block["n_cases"], block["n_false_consensus"], block["n_right_consensus"], block["n_errors"]) == (
        10,
        5,
        3,
        1,
    )
    assert high["escalation_rate_ci95"] is None  # no resample asked


def test_the_intervals_are_the_runs_resamples() -> None:
    y_all, escalated = np.tile(Y, 5), np.tile(P == 2, 5)  # 50 cases: steps of 1/50, fine enough to move
    point = operating_point(escalated, y_all, n_boot=200, seed=7)
    rates, caught = [], []
    for idx in resample_indices(50, n_boot=200, seed=7, chunk=memory_chunk(50)):
        for row in idx:
            e, y = escalated[row], y_all[row]
            rates.append(e.mean())
            if (y == 2).any():
                caught.append((e & (y == 2)).sum() / (y == 2).sum())
    assert point["escalation_rate_ci95"] == pytest.approx(list(np.percentile(rates, [2.5, 97.5])))
    assert point["false_consensus_caught_ci95"] == pytest.approx(list(np.percentile(caught, [2.5, 97.5])))
    other = operating_point(escalated, y_all, n_boot=200, seed=8)
    assert (other["escalation_rate_ci95"], other["false_consensus_caught_ci95"]) != (
        point["escalation_rate_ci95"], point["false_consensus_caught_ci95"])  # fmt: skip


def test_no_case_of_a_label_leaves_its_figure_undefined() -> None:
    point = operating_point(np.array([True, False]), np.array([1, 1]), n_boot=20, seed=0)
    assert (point["false_consensus_caught"], point["right_consensus_escalated"]) == (None, None)
    assert point["false_consensus_caught_ci95"] is None and point["escalation_rate"] == 0.5


def test_the_risk_coverage_curve_step_by_step() -> None:
    # scores ascending: case 9 (no score: let through first) high; 2 (0.1) high; 7 (0.2) low; 8 (0.4) low;
    # 5 (0.5) medium; 1 (0.6) high; 4 (0.7) medium; 3 (0.8) high; 0 and 6 (0.9, tied) high and low
    rc = risk_coverage(Y, S)
    passed = [1, 2, 3, 4, 5, 6, 7, 8, 10]
    highs = [1, 2, 2, 2, 2, 3, 3, 4, 5]
    assert rc["curve"] == [[p / 10, pytest.approx(h / p)] for p, h in zip(passed, highs, strict=True)]
    gained = [0.1] * 8 + [0.2]
    assert rc["aurc"] == pytest.approx(sum(g * h / p for g, h, p in zip(gained, highs, passed, strict=True)))
    assert risk_coverage(np.array([]), np.array([])) == {"by": "risk_score", "aurc": None, "curve": []}


def test_aurc_of_a_ranking_that_knows_nothing_and_of_a_perfect_one() -> None:
    y = np.array([2, 0, 2, 1, 0, 2, 0, 0])  # 3 high of 8
    assert risk_coverage(y, np.zeros(8))["aurc"] == pytest.approx(3 / 8)  # one tie: the base rate
    perfect = np.array([5.0, 0, 6, 1, 2, 7, 3, 4])  # every other case first, the highs one at a time
    assert risk_coverage(y, perfect)["aurc"] == pytest.approx(best_aurc(8, 3))
    assert best_aurc(8, 3) == pytest.approx((1 / 6 + 2 / 7 + 3 / 8) / 8)


def test_a_run_without_scores_ranks_by_its_verdicts() -> None:
    block = operating_points(Y, P, np.full(10, np.nan), n_boot=0, seed=0)
    assert block["risk_coverage"]["by"] == "verdict" and block["by_score"] == []
    # ranks: the error first, then low (2, 7), medium (1, 5, 8), high (0, 3, 4, 6)
    assert block["risk_coverage"]["curve"] == [[0.1, 1.0], [0.3, pytest.approx(2 / 3)], [0.6, pytest.approx(3 / 6)],
                                               [1.0, 0.5]]  # fmt: skip


def test_the_policies_along_the_score() -> None:
    points = score_points(Y, S)
    assert [p["threshold"] for p in points] == [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.2, 0.1]
    # t = 0.6: cases 0 1 3 4 6 escalated (5 of 10); high caught 0 1 3 (3 of 5); low 6 (1 of 3)
    at = points[3]
    assert (at["escalation_rate"], at["false_consensus_caught"]) == (0.5, 0.6)
    assert at["right_consensus_escalated"] == pytest.approx(1 / 3)
    # the lowest threshold escalates every scored case: 9 of 10, the unscored high one missed
    assert (points[-1]["escalation_rate"], points[-1]["false_consensus_caught"]) == (0.9, 0.8)


def test_a_long_curve_is_thinned_to_its_limit_keeping_both_ends() -> None:
    rng = np.random.default_rng(0)
    y, scores = rng.integers(0, 3, 1000), rng.random(1000)
    curve = risk_coverage(y, scores)["curve"]
    assert len(curve) == CURVE_POINTS and curve[-1][0] == 1.0 and curve[0][0] == pytest.approx(0.001)
    points = score_points(y, scores)
    assert len(points) == CURVE_POINTS and points[0]["threshold"] == scores.max()
    assert points[-1]["threshold"] == scores.min() and points[-1]["escalation_rate"] == 1.0


def test_the_report_rows_note_and_plot() -> None:
    m = {"operating_points": operating_points(Y, P, S, n_boot=50, seed=1)}
    rows = operating_rows(m)  # type: ignore[arg-type]
    assert [r[:3] for r in rows] == [["verdict high", "4", "40.0%"], ["verdict medium or high", "7", "70.0%"]]
    assert rows[0][4] == "40.0%" and rows[1][6] == "66.7%"
    note = operating_note(m)  # type: ignore[arg-type]
    assert "Of 10 cases, 5 are false consensus (labelled high) and 3 right consensus" in note
    assert f"a ranking that knows nothing: 0.500; a perfect one: {best_aurc(10, 5):.3f}" in note
    svg = review_svg(m)  # type: ignore[arg-type]
    assert svg.count('class="policy"') == 2 and 'class="score-curve"' in svg
    assert operating_rows({}) == [] and operating_note({}) == "" and review_svg({}) == ""  # type: ignore[typeddict-item]
