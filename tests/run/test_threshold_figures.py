"""A run held to a threshold (harness.run.tally: threshold_figures, and run_figures with ``--threshold``): each case's
value on the threshold's basis, the cases not run or without a score counted as missed when labelled high, and the
miss rate's interval on the cases' clusters. Every figure is worked out in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.run.items import ItemPlan
from harness.run.settings import EvalSettings
from harness.run.tally import run_figures, threshold_figures
from harness.spec import parse_spec
from harness.threshold import calibrate, interval
from harness.types import CaseLabels, ItemKey, Outcome


def lab(case_id: str, risk: str, group: str | None = None) -> CaseLabels:
    return CaseLabels(
        line=1, case_id=case_id, content_hash=f"h{case_id}", category="majority_wrong_fact", expected_risk=risk,  # type: ignore[arg-type]
        majority_correct=False, n_answers=3, has_evidence=False, families=(), families_complete=True,
        any_saw_other_answers=False, any_shared_context=False, tags=(f"grp={group}",) if group else (),
        source_dataset="original", source_item=case_id,
    )  # fmt: skip


def out(case_id: str, risk: str | None, score: float | None) -> Outcome:
    return Outcome(case_id, f"h{case_id}", risk, score, None if risk else "timeout", 1, 0.1)  # type: ignore[arg-type]


def held(basis: str, threshold_at: float) -> dict:
    """A threshold document at ``threshold_at`` on ``basis`` (chosen on two dev cases, high scored ``threshold_at``
    and low scored 0)."""
    doc = calibrate(np.array([2, 0]), np.array([threshold_at, 0.0]), target=0.5, method="expected", confidence=None,
                    basis=basis, run="dev", dataset="d", sha256="f" * 64, detector="builtin:vote",
                    fingerprint="ab12")  # fmt: skip
    assert doc["threshold"] == threshold_at
    return dict(doc)


# six high cases in clusters a a b b c d, one low case alone; verdicts and scores:
#   h1 high 0.9 (escalated), h2 an error (missed), h3 high 0.8, h4 medium 0.2 (missed), h5 not run (missed), h6 low
#   without a score (missed by score; by verdict low = 0 is below 2: missed); l1 high 0.9 (escalated)
LABS = [lab("h1", "high", "a"), lab("h2", "high", "a"), lab("h3", "high", "b"), lab("h4", "high", "b"),
        lab("h5", "high", "c"), lab("h6", "high", "d"), lab("l1", "low")]  # fmt: skip
OUTS = {o.case_id: o for o in (out("h1", "high", 0.9), out("h2", None, None), out("h3", "high", 0.8),
                               out("h4", "medium", 0.2), out("h6", "low", None), out("l1", "high", 0.9))}  # fmt: skip


def test_on_scores_the_cases_without_one_are_missed() -> None:
    # threshold 0.5: escalated h1, h3, l1; missed h2, h4, h5, h6: 4 of 6; escalated 3 of 7
    got = threshold_figures(held("risk_score", 0.5), "t.json", LABS, OUTS)  # type: ignore[arg-type]
    assert (got["missed"], got["n_false_consensus"], got["escalated"], got["n_cases"]) == (4, 6, 3, 7)
    assert got["basis"] == "risk_score" and got["file"] == "t.json"
    assert got["miss_rate_ci95"] == interval(4, 6)  # no two cases share a source item: each alone


def test_on_verdicts_a_verdict_at_the_level_is_escalated() -> None:
    # the level medium (1): escalated h1, h3, h4 (medium), l1; missed h2 (error), h5 (not run), h6 (low): 3 of 6
    got = threshold_figures(held("verdict", 1.0), "t.json", LABS, OUTS)  # type: ignore[arg-type]
    assert (got["missed"], got["escalated"]) == (3, 4)


def test_the_interval_draws_on_the_clusters() -> None:
    # by tag: missed h2, h4, h5, h6 in clusters a, b, c, d, escalated h1 (a), h3 (b): hits (missed) 0 1 0 1 1 1 in
    # a a b b c d: p = 2/3, K = 4, y - p m = 1 - 4/3, 1 - 4/3, 1 - 2/3, 1 - 2/3: squares 4 x 1/9; 4/3 x (4/9) / 36 over
    # (2/9)/5: (16/27/36) / (2/45) = 10/27 below 1: held at 1. So the interval is the plain one here, and on a group
    # of missed cases together it widens: see the next case.
    got = threshold_figures(held("risk_score", 0.5), "t.json", LABS, OUTS, "tag:grp=")  # type: ignore[arg-type]
    assert got["miss_rate_ci95"] == interval(4, 6)
    together = [lab(x.case_id, x.expected_risk, {"h1": "a", "h3": "a"}.get(x.case_id, "b")) for x in LABS]
    # missed 1 of a a (h1, h3: 0 0), b b b b (h2, h4, h5, h6: 1 1 1 1) and l1 (low, not counted): p = 2/3, K = 2,
    # y - p m = 0 - 4/3, 4 - 8/3: squares 16/9 x 2; 2/1 x (32/9) / 36 over (2/9)/5: (64/324) / (2/45) = 40/9
    got = threshold_figures(held("risk_score", 0.5), "t.json", together, OUTS, "tag:grp=")  # type: ignore[arg-type]
    assert got["miss_rate_ci95"] == pytest.approx(interval(4, 6, 40 / 9))


def test_a_run_s_figures_hold_its_threshold_on_its_clusters(tmp_path: Path) -> None:
    path = tmp_path / "threshold.json"
    path.write_text(json.dumps(held("risk_score", 0.5)))
    settings = EvalSettings(cases="c.jsonl", detector=parse_spec("builtin:vote"), threshold=str(path), n_boot=0,
                            cluster_by="tag:grp=")  # fmt: skip
    together = [lab(x.case_id, x.expected_risk, {"h1": "a", "h3": "a"}.get(x.case_id, "b")) for x in LABS]
    items = {ItemKey(o.case_id): o for o in OUTS.values()}
    plan = ItemPlan([(x, ItemKey(x.case_id)) for x in together])
    metrics, _, _ = run_figures(settings, together, items, plan, 1.0)
    assert metrics["threshold"]["miss_rate_ci95"] == pytest.approx(interval(4, 6, 40 / 9))  # as above
    assert metrics["threshold"] == threshold_figures(held("risk_score", 0.5), str(path), together, OUTS, "tag:grp=")  # type: ignore[arg-type]


def test_cases_alone_stay_apart_in_the_threshold_s_interval() -> None:
    # h1 and h3 together (escalated both), the other high cases alone: missed h2, h4, h5, h6 (hits 0 1 0 1 1 1 in
    # a, b, a, c, d, e): p = 2/3, K = 5, y - p m = -4/3, 1/3, 1/3, 1/3, 1/3: squares 16/9 + 4/9 = 20/9; 5/4 x (20/9)
    # / 36 over (2/9)/5: (25/324) / (2/45) = 125/72
    apart = [lab(x.case_id, x.expected_risk, "a" if x.case_id in ("h1", "h3") else None) for x in LABS]
    got = threshold_figures(held("risk_score", 0.5), "t.json", apart, OUTS, "tag:grp=")  # type: ignore[arg-type]
    assert got["miss_rate_ci95"] == pytest.approx(interval(4, 6, 125 / 72))
