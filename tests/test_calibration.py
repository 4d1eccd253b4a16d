"""Calibration of risk_score (`harness.calibration`, and its block in `harness.metrics.compute` and the reports):
the ECE and the reliability diagram against a hand-worked example and a plain second implementation written here,
scores of exactly 0 and 1, empty bins, no scores at all, and the bootstrap interval's draws."""

from __future__ import annotations

import math
from statistics import fmean
from typing import Any

import numpy as np
import orjson
import pytest
from sklearn.calibration import calibration_curve

from harness import calibration as cal
from harness import figures as fig
from harness import metrics as m
from harness.documents import check
from harness.report.text import calibration_note, headline_rows, render_markdown
from harness.types import CaseLabels, Outcome

# --------------------------------------------------------------------------------------------------------------
# a second implementation, as plain as possible


def plain_bins(scores: list[float], n_bins: int) -> list[int]:
    """Each score's bin: how many inner edges k / n_bins lie strictly below it (so a score on an edge goes to the
    bin below, 0 to the first and 1 to the last)."""
    inner = [k / n_bins for k in range(1, n_bins)]
    return [sum(s > e for e in inner) for s in scores]


def plain_diagram(y: list[float], s: list[float], n_bins: int) -> list[tuple[int, float | None, float | None]]:
    """(count, mean score, share of high) per bin."""
    groups: list[list[tuple[float, float]]] = [[] for _ in range(n_bins)]
    for yi, si, b in zip(y, s, plain_bins(s, n_bins), strict=True):
        groups[b].append((yi, si))
    return [(len(g), fmean(si for _, si in g), fmean(yi for yi, _ in g)) if g else (0, None, None) for g in groups]


def plain_ece(y: list[float], s: list[float], n_bins: int) -> float:
    """sum over bins of n_b / N * |share high - mean score|."""
    n = len(s)
    return sum(c / n * abs(share - mean) for c, mean, share in plain_diagram(y, s, n_bins) if c)


def shape(diagram: list[dict[str, Any]]) -> list[tuple[int, float | None, float | None]]:
    return [(b["count"], b["mean_score"], b["share_high"]) for b in diagram]


def assert_same_diagram(got: list[dict[str, Any]], want: list[tuple[int, float | None, float | None]]) -> None:
    assert [b[0] for b in shape(got)] == [w[0] for w in want]
    for (_, gm, gs), (_, wm, ws) in zip(shape(got), want, strict=True):
        assert (gm is None) == (wm is None) and (gs is None) == (ws is None)
        if wm is not None:
            assert gm == pytest.approx(wm, abs=1e-12) and gs == pytest.approx(ws, abs=1e-12)


# --------------------------------------------------------------------------------------------------------------
# cases and outcomes for harness.metrics.compute


def lab(case_id: str, expected: str) -> CaseLabels:
    return CaseLabels(
        line=int(case_id[-2:]), case_id=case_id, content_hash=f"h{case_id}", category="echo_cascade",
        expected_risk=expected, majority_correct=None, n_answers=3, has_evidence=False, families=(),  # type: ignore[arg-type]
        families_complete=False, any_saw_other_answers=False, any_shared_context=False, tags=(),
        source_dataset="original", source_item=case_id,
    )  # fmt: skip


def ok(case_id: str, risk: str, score: float | None) -> Outcome:
    return Outcome(case_id, f"h{case_id}", risk, score, None, 1, 0.5)  # type: ignore[arg-type]


def failed(case_id: str) -> Outcome:
    return Outcome(case_id, f"h{case_id}", None, None, "timeout", 3, 5.0)


# The hand-worked example, 15 bins (edges k/15: 0.0667, 0.1333, 0.2, 0.2667, ..., 0.9333, 1):
# id  expected  score       bin (1-based)
# A   high      1.0         15  (0.9333, 1]: exactly 1 is in the last bin
# B   low       0.95        15
# C   high      0.0         1   [0, 0.0667]: exactly 0 is in the first bin
# D   medium    0.05        1
# E   high      0.2         3   (0.1333, 0.2]: a score on an edge goes to the bin below it
# F   low       0.21        4   (0.2, 0.2667]
# G   high      0.5         8   (0.4667, 0.5333]
# H   high      timeout     -   an errored case has no score: left out, as for ROC-AUC
# I   high      no score    -   a reply without risk_score: left out
# N = 7 scored cases.
#   bin 1:  2 cases, mean (0 + .05)/2 = .025, share high 1/2 -> |.5 - .025| = .475, weight 2/7 -> .95/7
#   bin 3:  1 case,  mean .2,  share 1                       -> .8                  -> .8/7
#   bin 4:  1 case,  mean .21, share 0                       -> .21                 -> .21/7
#   bin 8:  1 case,  mean .5,  share 1                       -> .5                  -> .5/7
#   bin 15: 2 cases, mean .975, share 1/2                    -> .475, weight 2/7    -> .95/7
#   ECE = (.95 + .8 + .21 + .5 + .95) / 7 = 3.41 / 7 = 0.487142857...
# the other ten bins are empty: count 0, no mean and no share
HAND_LABELS = [lab(f"FCB-00{i:02d}", e) for i, e in enumerate(
    ["high", "low", "high", "medium", "high", "low", "high", "high", "high"], start=1)]  # fmt: skip
HAND_OUTCOMES = {
    o.case_id: o
    for o in [
        ok("FCB-0001", "high", 1.0), ok("FCB-0002", "low", 0.95), ok("FCB-0003", "low", 0.0),
        ok("FCB-0004", "medium", 0.05), ok("FCB-0005", "high", 0.2), ok("FCB-0006", "low", 0.21),
        ok("FCB-0007", "medium", 0.5), failed("FCB-0008"), ok("FCB-0009", "high", None),
    ]
}  # fmt: skip
HAND_COUNTS = [2, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2]
HAND_MEANS = {0: 0.025, 2: 0.2, 3: 0.21, 7: 0.5, 14: 0.975}
HAND_SHARES = {0: 0.5, 2: 1.0, 3: 0.0, 7: 1.0, 14: 0.5}
HAND_ECE = 3.41 / 7


def hand_scores(**kwargs: Any) -> dict[str, Any]:
    scores = fig.compute(HAND_LABELS, HAND_OUTCOMES, wall_s=1.0, **kwargs)["scores"]
    assert scores is not None
    return dict(scores)


def test_the_hand_worked_example() -> None:
    scores = hand_scores(n_boot=0)
    assert scores["n_scored"] == 7  # the errored case and the reply without a score are left out
    block = scores["calibration"]
    assert block["bins"] == 15
    assert block["ece"] == pytest.approx(HAND_ECE, abs=1e-12)
    diagram = block["diagram"]
    assert [b["count"] for b in diagram] == HAND_COUNTS
    for k, b in enumerate(diagram):
        assert b["lower"] == pytest.approx(k / 15, abs=1e-15) and b["upper"] == pytest.approx((k + 1) / 15, abs=1e-15)
        assert b["mean_score"] == (pytest.approx(HAND_MEANS[k], abs=1e-12) if k in HAND_MEANS else None)
        assert b["share_high"] == (pytest.approx(HAND_SHARES[k], abs=1e-12) if k in HAND_SHARES else None)
    assert "ece_ci95" not in block  # no resamples, no interval


def test_the_hand_worked_example_agrees_with_scikit_learn_s_nonempty_bins() -> None:
    y = [1, 0, 1, 0, 1, 0, 1]
    s = [1.0, 0.95, 0.0, 0.05, 0.2, 0.21, 0.5]
    share, mean = calibration_curve(y, s, n_bins=15, strategy="uniform")
    diagram = cal.reliability(np.array(y, dtype=float), np.array(s), 15)
    filled = [b for b in diagram if b["count"]]
    assert [b["mean_score"] for b in filled] == pytest.approx(list(mean), abs=1e-12)
    assert [b["share_high"] for b in filled] == pytest.approx(list(share), abs=1e-12)


def test_the_bin_count_is_a_setting() -> None:
    # 5 bins (edges .2 .4 .6 .8): [0, .2] holds C 0, D .05 and E .2 (on the edge: below): mean .25/3, share 2/3;
    # (.2, .4] F .21, share 0; (.4, .6] G .5, share 1; (.6, .8] nothing; (.8, 1] A 1 and B .95, share 1/2.
    # ECE = 3/7 |2/3 - .25/3| + 1/7 .21 + 1/7 .5 + 2/7 |.5 - .975| = (1.75 + .21 + .5 + .95) / 7: the same figure
    # as with 15 bins (the merged bins' gaps have one sign), so the counts tell the two apart
    block = hand_scores(n_boot=0, ece_bins=5)["calibration"]
    assert block["bins"] == 5 and [b["count"] for b in block["diagram"]] == [3, 1, 1, 0, 2]
    assert block["ece"] == pytest.approx((1.75 + 0.21 + 0.5 + 0.95) / 7, abs=1e-12)
    one = hand_scores(n_boot=0, ece_bins=1)["calibration"]
    # one bin: |share high 4/7 - mean score 2.91/7| = 1.09/7
    assert [b["count"] for b in one["diagram"]] == [7] and one["ece"] == pytest.approx(1.09 / 7, abs=1e-12)


@pytest.mark.parametrize("n_bins", [15, 10, 7, 1])
@pytest.mark.parametrize("seed", range(6))
def test_ece_and_diagram_equal_a_plain_implementation_on_random_data(n_bins: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    s = rng.random(n)
    # exact 0s and 1s always; for 15 bins also scores exactly on the edges k/15
    extra = [0.0, 1.0, 0.0] + ([k / 15 for k in range(1, 15)] if n_bins == 15 else [])
    s = np.concatenate([s, rng.choice(extra, size=int(rng.integers(0, 20)))])
    y = (rng.random(len(s)) < rng.random()).astype(float)
    diagram = cal.reliability(y, s, n_bins)
    assert_same_diagram(diagram, plain_diagram(y.tolist(), s.tolist(), n_bins))
    want = plain_ece(y.tolist(), s.tolist(), n_bins)
    assert cal.ece(y, s, n_bins) == pytest.approx(want, abs=1e-12)
    block = cal.calibration(y, s, n_bins, None)
    assert block["ece"] == pytest.approx(want, abs=1e-12)


def test_scores_of_exactly_0_and_1() -> None:
    # sure and right: high scored 1, the rest 0 -> every bin's share equals its mean: ECE 0
    y = np.array([1, 1, 0, 0, 0], dtype=float)
    right = cal.calibration(y, y.copy(), 15, None)
    assert right["ece"] == 0.0
    assert [(b["count"], b["mean_score"], b["share_high"]) for b in right["diagram"] if b["count"]] == [
        (3, 0.0, 0.0),
        (2, 1.0, 1.0),
    ]
    assert right["diagram"][0]["count"] == 3 and right["diagram"][14]["count"] == 2  # first and last bin
    # sure and wrong: ECE 1
    assert cal.calibration(y, 1.0 - y, 15, None)["ece"] == pytest.approx(1.0, abs=1e-15)
    # a single 1.0 is in the last bin of any bin count (never a bin past it)
    for n_bins in (1, 2, 10, 15, 100):
        diagram = cal.reliability(np.array([0.0]), np.array([1.0]), n_bins)
        assert len(diagram) == n_bins and diagram[-1]["count"] == 1
        assert cal.ece(np.array([0.0]), np.array([1.0]), n_bins) == 1.0


def test_empty_bins_have_no_mean_and_add_nothing() -> None:
    # every score in (0.4667, 0.5333]: one bin; ECE = |share 2/4 - mean (.48+.5+.5+.52)/4 = .5| = 0
    y = np.array([1, 0, 1, 0], dtype=float)
    s = np.array([0.48, 0.5, 0.5, 0.52])
    block = cal.calibration(y, s, 15, None)
    assert block["ece"] == pytest.approx(0.0, abs=1e-15)
    assert [b["count"] for b in block["diagram"]] == [0] * 7 + [4] + [0] * 7
    empty = [b for b in block["diagram"] if not b["count"]]
    assert all(b["mean_score"] is None and b["share_high"] is None for b in empty)
    # an empty bin is null in JSON, never 0 or NaN
    text = orjson.dumps(block).decode()
    assert '"mean_score":null' in text and "NaN" not in text
    # shifted to share 3/4: ECE = |.75 - .5| = .25
    assert cal.calibration(np.array([1, 1, 1, 0.0]), s, 15, None)["ece"] == pytest.approx(0.25, abs=1e-12)


def test_no_scores_at_all_gives_no_ece_and_the_report_says_so() -> None:
    outcomes = {o.case_id: o for o in [ok("FCB-0001", "high", None), ok("FCB-0002", "low", None), failed("FCB-0003")]}
    labels = HAND_LABELS[:3]
    metrics = fig.compute(labels, outcomes, wall_s=1.0, n_boot=50)
    assert metrics["scores"] is None
    assert not any(row[0].startswith("ECE") for row in headline_rows(metrics))
    note = calibration_note(metrics)
    assert note.startswith("No reply carried a risk_score") and "ECE" in note
    md = render_markdown(document(metrics))
    assert "## Calibration" in md and "No reply carried a risk_score" in md
    assert "ECE, high vs rest" not in md


def test_the_interval_is_reproducible_and_equals_the_resamples_drawn_here() -> None:
    a = hand_scores(n_boot=250, seed=7)["calibration"]["ece_ci95"]
    assert a == hand_scores(n_boot=250, seed=7)["calibration"]["ece_ci95"]
    assert a != hand_scores(n_boot=250, seed=8)["calibration"]["ece_ci95"]
    # the draws documented in harness.metrics: one default_rng(seed); chunks of 100 resamples (memory_chunk for a
    # small n), each an (rows, n) array of integers in [0, n); the scored cases in the order of the labels
    y = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    s = [1.0, 0.95, 0.0, 0.05, 0.2, 0.21, 0.5]
    rng = np.random.default_rng(7)
    values = []
    for rows in (100, 100, 50):
        for idx in rng.integers(0, 7, size=(rows, 7)):
            values.append(plain_ece([y[i] for i in idx], [s[i] for i in idx], 15))
    assert len(values) == 250
    assert a == pytest.approx(list(np.percentile(values, [2.5, 97.5])), abs=1e-12)
    assert 0.0 <= a[0] <= a[1] <= 1.0


def test_the_interval_of_a_larger_run_is_reproducible_and_holds_the_resample_values() -> None:
    rng = np.random.default_rng(0)
    y, s = (rng.random(400) < 0.4).astype(float), rng.random(400)
    first = cal.calibration(y, s, 15, m.resample_counts(400, n_boot=300, seed=3))
    again = cal.calibration(y, s, 15, m.resample_counts(400, n_boot=300, seed=3))
    assert first["ece_ci95"] == again["ece_ci95"]
    lo, hi = first["ece_ci95"]
    assert 0.0 < lo < hi < 1.0 and math.isfinite(hi)


@pytest.mark.parametrize("n_bins", [15, 10, 6, 3, 1])
@pytest.mark.parametrize("seed", range(4))
def test_the_diagram_s_filled_bins_are_scikit_learn_s_calibration_curve(n_bins: int, seed: int) -> None:
    # calibration_curve(strategy="uniform") leaves empty bins out and gives no counts: its means must be those of
    # our bins with cases, in order, scores on every edge of n_bins (as Python and as numpy write them), 0 and 1 too
    rng = np.random.default_rng(100 + seed)
    edges = [k / n_bins for k in range(n_bins + 1)] + list(np.linspace(0, 1, n_bins + 1))
    s = np.concatenate([rng.random(int(rng.integers(1, 200))), rng.choice(edges, size=int(rng.integers(0, 40)))])
    y = (rng.random(len(s)) < 0.5).astype(float)
    share, mean = calibration_curve(y, s, n_bins=n_bins, strategy="uniform")
    filled = [b for b in cal.reliability(y, s, n_bins) if b["count"]]
    assert len(filled) == len(mean)
    assert [b["mean_score"] for b in filled] == pytest.approx(list(mean), abs=1e-12)
    assert [b["share_high"] for b in filled] == pytest.approx(list(share), abs=1e-12)
    assert sum(b["count"] for b in filled) == len(s)


# --------------------------------------------------------------------------------------------------------------
# the document and the report


def document(metrics: Any) -> Any:
    return {
        "metrics_version": 2, "harness_version": "0", "created": "2001-02-03T04:05:06+00:00", "complete": True,
        "dataset": {"path": "cases.jsonl", "name": "cases.jsonl", "sha256": "a" * 64, "cases": 9},
        "detector": {"spec": "builtin:heuristic", "name": "heuristic"},
        "settings": {"limit": None, "anonymize_agents": False, "skip_invalid": False, "strict": False,
                     "bootstrap_resamples": 200, "seed": 7, "ece_bins": 15, "concurrency": 8, "timeout": 30.0,
                     "retries": 3, "risk_field": "false_consensus_risk"},
        "metrics": metrics,
    }  # fmt: skip


def test_metrics_json_holds_the_calibration_by_its_schema() -> None:
    doc = orjson.loads(orjson.dumps(document(fig.compute(HAND_LABELS, HAND_OUTCOMES, wall_s=1.0, n_boot=200, seed=7))))
    assert check("metrics", doc) == []
    doc["metrics"]["scores"]["calibration"]["diagram"][0]["count"] = -1
    assert [f for f, _ in check("metrics", doc)] == ["metrics.scores.calibration.diagram.0.count"]


def test_report_md_states_the_ece_its_interval_its_bins_and_the_diagram() -> None:
    metrics = fig.compute(HAND_LABELS, HAND_OUTCOMES, wall_s=1.0, n_boot=200, seed=7)
    block = metrics["scores"]["calibration"]  # type: ignore[index]
    lo, hi = block["ece_ci95"]
    md = render_markdown(document(metrics))
    assert "| ECE, high vs rest (15 bins)" in md and "0.487" in md and f"[{lo:.3f}, {hi:.3f}]" in md
    section = md.split("## Calibration", 1)[1].split("\n## ", 1)[0]
    assert "over 15 equal-width bins" in section and "on the 7 cases of 9" in section
    table = [[c.strip() for c in line.strip("|").split("|")] for line in section.splitlines() if line.startswith("|")]
    cells = [row for row in table if row[0].isdigit()]
    assert len(cells) == 15  # every bin, the empty ones too
    assert [int(c[2]) for c in cells] == HAND_COUNTS
    assert cells[0][1] == "[0.000, 0.067]" and cells[2][1] == "(0.133, 0.200]" and cells[14][1] == "(0.933, 1.000]"
    assert cells[14][3:] == ["0.975", "0.500", "0.475"]  # mean score, share high, gap |share - mean|
    assert all(len(row) == 6 for row in table)  # no cell split by a pipe in a header or a value
    assert cells[1][3:] == ["n/a", "n/a", "n/a"]  # an empty bin
