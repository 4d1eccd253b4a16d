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


def test_a_run_s_figures_hold_its_operating_points_with_its_scores_and_seed() -> None:
    from harness.figures import compute
    from harness.types import Outcome
    from tests.runfolder.test_journal import labels

    labs = [labels(f"c{i}", expected=("high", "low", "medium")[i % 3]) for i in range(30)]
    outcomes = {lab.case_id: Outcome(lab.case_id, lab.content_hash, ("high", "low", "high")[i % 3] if i % 7 else None,
                                     None if i % 5 == 0 else (i % 10) / 10, None if i % 7 else "timeout", 1, 0.1)
                for i, lab in enumerate(labs)}  # fmt: skip
    got = compute(labs, outcomes, wall_s=1.0, n_boot=40, seed=6)["operating_points"]
    y = np.array([2 if i % 3 == 0 else 0 if i % 3 == 1 else 1 for i in range(30)])
    p = np.array([(2, 0, 2)[i % 3] if i % 7 else 3 for i in range(30)])
    s = np.array([np.nan if i % 5 == 0 else (i % 10) / 10 for i in range(30)])
    assert got == operating_points(y, p, s, n_boot=40, seed=6)
    assert got != operating_points(y, p, s, n_boot=40, seed=7)
    assert got["by_score"] and got["risk_coverage"]["by"] == "risk_score"


def point(t: float, rate: float, caught: float) -> dict:
    return {
        "threshold": t,
        "escalation_rate": rate,
        "false_consensus_caught": caught,
        "right_consensus_escalated": None,
    }


@pytest.mark.filterwarnings("error")
def test_the_whole_block_by_hand_and_no_warning_for_an_empty_label() -> None:
    # four cases, none labelled low: right_consensus_escalated undefined, with no division warning
    y, p, s = np.array([2, 2, 1, 1]), np.array([2, 0, 1, 3]), np.array([0.8, 0.2, 0.5, np.nan])
    block = operating_points(y, p, s, n_boot=0, seed=0)
    assert block == {
        "n_cases": 4, "n_false_consensus": 2, "n_right_consensus": 0, "n_errors": 1,
        "policies": {
            "high": {"escalated": 1, "escalation_rate": 0.25, "escalation_rate_ci95": None,
                     "false_consensus_caught": 0.5, "false_consensus_caught_ci95": None,
                     "right_consensus_escalated": None, "right_consensus_escalated_ci95": None},
            "high_or_medium": {"escalated": 2, "escalation_rate": 0.5, "escalation_rate_ci95": None,
                               "false_consensus_caught": 0.5, "false_consensus_caught_ci95": None,
                               "right_consensus_escalated": None, "right_consensus_escalated_ci95": None},
        },
        # let through: the unscored (medium) 0, then 0.2 (high) 1/2, 0.5 (medium) 1/3, 0.8 (high) 2/4
        "risk_coverage": {"by": "risk_score", "aurc": pytest.approx(0.25 * (0 + 1 / 2 + 1 / 3 + 2 / 4)),
                          "curve": [[0.25, 0.0], [0.5, 0.5], [0.75, pytest.approx(1 / 3)], [1.0, 0.5]]},
        "by_score": [point(0.8, 0.25, 0.5), point(0.5, 0.5, 0.5), point(0.2, 0.75, 1.0)],
    }  # fmt: skip


def test_one_resample_gives_an_interval_and_a_label_absent_from_the_sample_gives_none() -> None:
    y, escalated = np.array([2, 2, 1, 0]), np.array([True, False, True, False])
    one = operating_point(escalated, y, n_boot=1, seed=0)
    assert one["escalation_rate_ci95"] is not None and one["escalation_rate_ci95"][0] == one["escalation_rate_ci95"][1]
    # no case labelled low: the right consensus interval is None while the others are defined
    point = operating_point(np.array([True, False, True]), np.array([2, 2, 1]), n_boot=50, seed=0)
    assert point["escalation_rate_ci95"] is not None and point["false_consensus_caught_ci95"] is not None
    assert point["right_consensus_escalated_ci95"] is None
    # no case labelled high: the catch's interval is None, the review's defined
    other = operating_point(np.array([True, False, True]), np.array([0, 0, 1]), n_boot=50, seed=0)
    assert other["false_consensus_caught_ci95"] is None and other["right_consensus_escalated_ci95"] is not None


def test_a_curve_of_exactly_the_limit_is_kept_whole() -> None:
    y, scores = np.zeros(CURVE_POINTS, dtype=int), np.arange(CURVE_POINTS, dtype=float)
    assert len(risk_coverage(y, scores)["curve"]) == CURVE_POINTS
    assert [p[0] for p in risk_coverage(y, scores)["curve"]][:2] == [pytest.approx(1 / 101), pytest.approx(2 / 101)]


def test_a_run_with_scores_ranks_by_them_not_by_its_verdicts() -> None:
    # verdicts say case 0 is the safest and case 1 the riskiest; the scores say the opposite
    y, p, s = np.array([2, 0]), np.array([0, 2]), np.array([0.9, 0.1])
    rc = operating_points(y, p, s, n_boot=0, seed=0)["risk_coverage"]
    assert rc["curve"] == [[0.5, 0.0], [1.0, 0.5]] and rc["by"] == "risk_score"  # the low-labelled case first
    by_verdict = operating_points(y, p, np.full(2, np.nan), n_boot=0, seed=0)["risk_coverage"]
    assert by_verdict["curve"] == [[0.5, 1.0], [1.0, 0.5]] and by_verdict["by"] == "verdict"


def held(**more: object) -> dict:
    base = {"file": "t.json", "promise": "Escalating X misses at most 10.0%", "miss_rate_target": 0.1,
            "basis": "risk_score", "threshold": 0.67, "n_cases": 40, "n_false_consensus": 20, "missed": 3,
            "miss_rate": 0.15, "miss_rate_ci95": [0.05, 0.36], "escalated": 22, "escalation_rate": 0.55,
            "within": False}  # fmt: skip
    return base | more


def test_the_threshold_lines_word_by_word() -> None:
    from harness.report.operating import threshold_lines

    assert threshold_lines({"threshold": held()}) == [  # type: ignore[typeddict-item]
        "Promise (t.json): Escalating X misses at most 10.0%.",
        "This run, escalating risk score >= 0.67: 3 of 20 false consensus missed, 15.0% [5.0%, 36.0%] against a "
        "target of 10.0% (above the promise's target); 22 of 40 cases escalated (55.0%).",
    ]
    within = threshold_lines({"threshold": held(within=True, basis="verdict", threshold=1.0)})  # type: ignore[typeddict-item]
    assert within[1].startswith("This run, escalating verdict >= 1: ") and "(within the promise)" in within[1]
    everything = threshold_lines({"threshold": held(threshold=None)})  # type: ignore[typeddict-item]
    assert everything[1].startswith("This run, escalating every case: ")
    empty = threshold_lines({"threshold": held(miss_rate=None, within=None, threshold=None)})  # type: ignore[typeddict-item]
    assert empty == ["Promise (t.json): Escalating X misses at most 10.0%.",
                     "This run has no case labelled high: nothing to hold the promise to (every case)."]  # fmt: skip
    assert threshold_lines({}) == []  # type: ignore[typeddict-item]


def test_the_review_curve_s_coordinates() -> None:
    # size 300, margin 36, side 228: x(v) = 36 + 228 v, y(v) = 36 + 228 (1 - v)
    block = operating_points(np.array([2, 0]), np.array([2, 0]), np.array([0.9, 0.1]), n_boot=0, seed=0)
    svg = review_svg({"operating_points": block})  # type: ignore[typeddict-item]
    assert svg.startswith('<svg class="review" width="300" height="300" role="img" aria-label="review curve">')
    assert '<rect x="36" y="36" width="228" height="228" fill="#fff" stroke="#999"/>' in svg
    assert '<path d="M36 264L264 36" stroke="#999" stroke-dasharray="4 3"/>' in svg  # the diagonal
    # by_score: t 0.9 escalates half and catches all (x 150, y 36); t 0.1 everything (264, 36); from (0, 0)
    assert 'class="score-curve" d="M36.0 264.0L150.0 36.0L264.0 36.0"' in svg
    # policy high: half escalated, all caught; medium or high: the same cases
    assert svg.count('cx="150.0" cy="36.0"') == 2
    assert "<title>escalate verdict high: 50.0% escalated, 100.0% of false consensus caught</title>" in svg
    assert '<text class="tick" x="150.0" y="278" text-anchor="middle">0.5</text>' in svg
    assert '<text class="tick" x="32" y="154.0" text-anchor="end">0.5</text>' in svg
    assert svg.endswith('text-anchor="middle">false consensus caught</text></svg>')
    # no score: no curve, the dots only
    flat = operating_points(np.array([2, 0]), np.array([2, 0]), np.full(2, np.nan), n_boot=0, seed=0)
    assert "score-curve" not in review_svg({"operating_points": flat})  # type: ignore[typeddict-item]


def test_the_rows_and_note_word_by_word() -> None:
    block = operating_points(np.array([2, 0, 1, 2]), np.array([2, 1, 0, 3]), np.array([0.9, 0.5, 0.2, np.nan]),
                             n_boot=0, seed=0)  # fmt: skip
    rows = operating_rows({"operating_points": block})  # type: ignore[typeddict-item]
    assert rows == [["verdict high", "1", "25.0%", "", "50.0%", "", "0.0%", ""],
                    ["verdict medium or high", "2", "50.0%", "", "50.0%", "", "100.0%", ""]]  # fmt: skip
    note = operating_note({"operating_points": block})  # type: ignore[typeddict-item]
    aurc = block["risk_coverage"]["aurc"]
    assert note == (
        "Of 4 cases, 2 are false consensus (labelled high) and 1 right consensus (labelled low). A case escalated goes "
        "to a person; an error is never escalated (1 here). Risk-coverage by risk score: letting cases through from "
        f"the lowest risk up, the area under the share of false consensus among them is {aurc:.3f} (AURC; a ranking "
        f"that knows nothing: 0.500; a perfect one: {best_aurc(4, 2):.3f}; lower is better)."
    )
    empty = operating_points(np.array([], dtype=int), np.array([], dtype=int), np.array([]), n_boot=0, seed=0)
    assert operating_note({"operating_points": empty}).endswith("(0 here). ")  # type: ignore[typeddict-item]


def test_more_edges_of_the_figures_and_their_drawing() -> None:
    # one high of three: the count of false consensus is the highs, not the others
    block = operating_points(np.array([2, 0, 1]), np.array([2, 2, 0]), np.array([0.5, 0.5, 0.5]), n_boot=0, seed=0)
    assert (block["n_false_consensus"], block["n_right_consensus"]) == (1, 1)
    assert risk_coverage(np.array([2, 0]), np.array([0.1, 0.2]))["by"] == "risk_score"
    # one distinct score: one point, still a curve from the origin
    svg = review_svg({"operating_points": block})  # type: ignore[typeddict-item]
    assert 'class="score-curve" d="M36.0 264.0L264.0 36.0"' in svg
    # no case labelled high: no policy can be placed, and nothing breaks
    none = operating_points(np.array([0, 1]), np.array([2, 0]), np.array([0.9, 0.1]), n_boot=0, seed=0)
    assert 'class="policy"' not in review_svg({"operating_points": none})  # type: ignore[typeddict-item]
    # the axis labels and the ticks at both ends
    assert '<text x="150.0" y="296" text-anchor="middle">share of cases escalated</text>' in svg
    assert '<text x="10" y="150.0" transform="rotate(-90 10 150.0)" text-anchor="middle">false consensus' in svg
    assert '<text class="tick" x="36.0" y="278" text-anchor="middle">0</text>' in svg
    assert '<text class="tick" x="32" y="268.0" text-anchor="end">0</text>' in svg
    assert '<text class="tick" x="264.0" y="278" text-anchor="middle">1</text>' in svg
    assert '<text class="tick" x="32" y="40.0" text-anchor="end">1</text>' in svg
    assert 'stroke="#999"/><path d="M36 264L264 36"' in svg  # parts joined with nothing between
    assert best_aurc(3, 3) == pytest.approx((1 / 1 + 2 / 2 + 3 / 3) / 3)  # every case false consensus


def test_the_review_of_right_consensus_is_resampled_like_the_rest() -> None:
    y_all, escalated = np.tile(Y, 5), np.tile(P == 2, 5)
    point = operating_point(escalated, y_all, n_boot=200, seed=7)
    alarmed = []
    for idx in resample_indices(50, n_boot=200, seed=7, chunk=memory_chunk(50)):
        for row in idx:
            e, y = escalated[row], y_all[row]
            if (y == 0).any():
                alarmed.append((e & (y == 0)).sum() / (y == 0).sum())
    assert point["right_consensus_escalated_ci95"] == pytest.approx(list(np.percentile(alarmed, [2.5, 97.5])))
    no_high = operating_point(np.array([True, False, True]), np.array([0, 0, 1]), n_boot=50, seed=0)
    assert no_high["escalation_rate_ci95"] is not None and no_high["false_consensus_caught_ci95"] is None


def test_the_rows_show_each_interval_as_shares() -> None:
    block = operating_points(np.tile(Y, 5), np.tile(P, 5), np.tile(S, 5), n_boot=100, seed=2)
    rows = operating_rows({"operating_points": block})  # type: ignore[typeddict-item]
    high = block["policies"]["high"]
    lo, hi = high["escalation_rate_ci95"]  # type: ignore[misc]
    assert rows[0][3] == f"[{lo:.1%}, {hi:.1%}]"
    lo, hi = high["right_consensus_escalated_ci95"]  # type: ignore[misc]
    assert rows[0][7] == f"[{lo:.1%}, {hi:.1%}]"
