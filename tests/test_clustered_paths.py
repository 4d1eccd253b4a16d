"""Every block that draws intervals hands its cases' clusters down: each block's interval equals the one its
drawing function gives on the same clusters, written out here, and differs from the one on cases alone (so a block
that dropped its clusters would fail). The drawing functions themselves are held to their clusters written out
in tests/test_design_effect.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from harness import metrics as m
from harness.calibration import calibration, ece
from harness.design_effect import clusters_of
from harness.leaderboard.calibration_delta import ece_delta
from harness.leaderboard.noise import cluster_headline, reduce_draws
from harness.leaderboard.probe_compare import compare_probe, probe_pairs
from harness.leaderboard.probe_rates import case_counts, probe_delta, probe_deltas
from harness.leaderboard.runs import Run, aligned_clusters
from harness.operating import operating_point, operating_points
from harness.repeats import epochs_block, fall_rate, flip_rate, probes_block, self_agreement, verdict_matrix
from harness.types import CaseLabels, ItemKey, Outcome

N = 24
GROUP = [f"g{i % 4}" for i in range(N)]  # four clusters of six cases


def lab(i: int, risk: str = "high") -> CaseLabels:
    return CaseLabels(
        line=i + 1, case_id=f"c{i:02d}", content_hash=f"h{i}", category="majority_wrong_fact", expected_risk=risk,  # type: ignore[arg-type]
        majority_correct=False, n_answers=3, has_evidence=False, families=(), families_complete=True,
        any_saw_other_answers=False, any_shared_context=False, tags=(f"grp={GROUP[i]}",), source_dataset="original",
        source_item=f"c{i:02d}",
    )  # fmt: skip


LABS = [lab(i) for i in range(N)]
CODES = clusters_of(LABS, "tag:grp=")


def item(i: int, epoch: int, risk: str | None, variant: str | None = None) -> Outcome:
    return Outcome(f"c{i:02d}", f"h{i}", risk, None, None if risk else "timeout", 1, 0.1, epoch=epoch,  # type: ignore[arg-type]
                   variant=variant)  # fmt: skip


def test_the_clusters_of_the_tag() -> None:
    assert CODES.tolist() == [i % 4 for i in range(N)]


# ---- harness.operating ---------------------------------------------------------------------------------------------


def test_both_policies_draw_the_clusters() -> None:
    rng = np.random.default_rng(1)
    y_true, y_pred = rng.integers(0, 3, size=N), rng.integers(0, 3, size=N)
    block = operating_points(y_true, y_pred, np.full(N, np.nan), n_boot=120, seed=2, clusters=CODES)
    high = operating_point(y_pred == 2, y_true, n_boot=120, seed=2, clusters=CODES)
    either = operating_point(y_pred >= 1, y_true, n_boot=120, seed=2, clusters=CODES)
    assert block["policies"] == {"high": high, "high_or_medium": either}
    assert high != operating_point(y_pred == 2, y_true, n_boot=120, seed=2)


# ---- harness.calibration -------------------------------------------------------------------------------------------


def test_the_ece_interval_of_the_block_draws_its_clusters() -> None:
    rng = np.random.default_rng(2)
    y, s = (rng.random(N) < 0.5).astype(float), rng.random(N)
    draws = list(m.resample_counts(4, n_boot=90, seed=1))
    got = calibration(y, s, 5, draws, CODES)["ece_ci95"]
    written = [
        np.concatenate([np.flatnonzero(c == CODES) for c in row])
        for row in np.concatenate(list(m.resample_indices(4, n_boot=90, seed=1, chunk=m.memory_chunk(4))))
    ]
    want = np.percentile([ece(y[c], s[c], 5) for c in written], [2.5, 97.5])
    assert got == pytest.approx(want.tolist())
    alone = calibration(y, s, 5, list(m.resample_counts(N, n_boot=90, seed=1)))["ece_ci95"]
    assert got != pytest.approx(alone)


# ---- harness.repeats -----------------------------------------------------------------------------------------------


def _epochs() -> dict[ItemKey, Outcome]:
    """Three epochs a case; case 0 lacks its first epoch (so it has no row of every epoch), the others' verdicts
    agree or not by their cluster."""
    out = {}
    for i in range(N):
        for epoch in (1, 2, 3):
            if i == 0 and epoch == 1:
                continue
            risk = "high" if (i % 4 < 2 or epoch == 1) else "low"
            out[ItemKey(f"c{i:02d}", epoch)] = item(i, epoch, risk)
    return out


def test_self_agreement_draws_the_cases_with_every_epoch_by_their_clusters() -> None:
    items = _epochs()
    block = epochs_block(LABS, items, n_epochs=3, reducer="mode", n_boot=150, seed=3, cluster_by="tag:grp=")
    verdicts = verdict_matrix([x.case_id for x in LABS], items, 3)
    assert len(verdicts) == N - 1  # case 0 has no first epoch
    want = self_agreement(verdicts, n_boot=150, seed=3, clusters=m.cluster_codes(CODES[1:].tolist()))
    assert block["self_agreement"] == want
    assert want != self_agreement(verdicts, n_boot=150, seed=3)


def _probed(probe: str) -> dict[ItemKey, Outcome]:
    """One epoch: every request called high; the variant lowered to low in clusters g0 and g1, kept in g2 and g3."""
    out = {}
    for i in range(N):
        out[ItemKey(f"c{i:02d}", 1)] = item(i, 1, "high")
        out[ItemKey(f"c{i:02d}", 1, probe)] = item(i, 1, "low" if i % 4 < 2 else "high", probe)
    return out


def test_a_probe_s_flip_and_fall_rates_draw_the_clusters() -> None:
    block = probes_block(LABS, _probed("duplicate"), ["duplicate"], n_epochs=1, not_possible={}, n_boot=150, seed=4,
                         cluster_by="tag:grp=")["duplicate"]  # fmt: skip
    ones, flips = np.ones(N), np.array([1.0 if i % 4 < 2 else 0.0 for i in range(N)])
    flipped = flip_rate(ones, flips, n_boot=150, seed=4, clusters=CODES)
    assert block["ci95"] == flipped["ci95"] != flip_rate(ones, flips, n_boot=150, seed=4)["ci95"]
    fell = fall_rate(ones, flips, n_boot=150, seed=4, clusters=CODES)
    assert block["falls"]["ci95"] == fell["ci95"] == flipped["ci95"]  # every pair lowered from high: falls are flips
    assert block["falls"]["per_category"]["majority_wrong_fact"]["ci95"] == fell["ci95"]
    assert block["per_category"]["majority_wrong_fact"]["ci95"] == flipped["ci95"]


# ---- the leaderboard's runs ----------------------------------------------------------------------------------------


def run(y_pred: np.ndarray, clusters: list[str | None] | None, scores: np.ndarray | None = None,
        variants: dict[str, np.ndarray] | None = None) -> Run:  # fmt: skip
    doc = {"detector": {"spec": "x", "label": "x"}, "dataset": {"name": "toy", "sha256": "f" * 64, "cases": N},
           "created": "2026-12-05T00:00:00Z", "complete": True,
           "metrics": {"scores": {"calibration": {"ece": 0.0, "bins": 5}}}}  # fmt: skip
    ids = np.array([f"c{i:02d}" for i in range(N)], dtype=object)
    keys = None if clusters is None else np.array(clusters, dtype=object)
    return Run(Path("r"), doc, ids, np.array(["majority_wrong_fact"] * N, dtype=object), np.full(N, 2), y_pred,  # type: ignore[arg-type]
               scores=scores, variants=variants or {}, clusters=keys)  # fmt: skip


def test_aligned_clusters_join_what_either_run_put_together() -> None:
    ids = np.array([f"c{i:02d}" for i in range(N)], dtype=object)
    a = run(np.full(N, 2), [f"a{i // 2}" for i in range(N)])  # pairs: c00 c01, c02 c03, ...
    b = run(np.full(N, 2), ["b" if i in (1, 2) else None for i in range(N)])  # c01 with c02
    assert aligned_clusters([a, b], ids).tolist()[:6] == [0, 0, 0, 0, 1, 1]  # c00 to c03 joined through c01-c02
    assert aligned_clusters([b, a], ids).tolist()[:6] == [0, 0, 0, 0, 1, 1]
    assert aligned_clusters([run(np.full(N, 2), None)], ids).tolist() == list(range(N))


def test_the_ece_change_draws_the_clusters() -> None:
    rng = np.random.default_rng(5)
    s_base, s_new = rng.random(N), rng.random(N)
    y = np.full(N, 2)
    y[::3] = 0
    base, new = run(np.full(N, 2), GROUP, s_base), run(np.full(N, 2), GROUP, s_new)
    got = ece_delta(base, new, base.ids, y_true=y, alpha=0.05, n_boot=80, seed=6, clusters=CODES)
    draws = np.concatenate(list(m.resample_indices(4, n_boot=80, seed=6, chunk=m.memory_chunk(4))))
    high = (y == 2).astype(float)
    written = [np.concatenate([np.flatnonzero(c == CODES) for c in row]) for row in draws]
    changes = [ece(high[c], s_new[c], 5) - ece(high[c], s_base[c], 5) for c in written]
    assert got is not None and got["ci"] == pytest.approx(list(m.finite_interval(np.array(changes))))
    assert got["ci"] != ece_delta(base, new, base.ids, y_true=y, alpha=0.05, n_boot=80, seed=6)["ci"]  # type: ignore[index]


def test_probe_deltas_hand_each_probe_the_clusters() -> None:
    plain = np.full(N, 2)
    lowered = {"tone": np.array([[0] if i % 4 < 2 else [2] for i in range(N)])}
    kept = {"tone": np.array([[0] if i % 4 == 0 else [2] for i in range(N)])}
    base, new = run(plain, GROUP, variants=kept), run(plain, GROUP, variants=lowered)
    y = np.full(N, 2)
    got = probe_deltas(base, new, base.ids, y, ["tone"], alpha=0.05, max_rise=0.0, n_boot=90, seed=7, clusters=CODES)
    want = probe_delta(case_counts(base, "tone", base.ids, y), case_counts(new, "tone", base.ids, y), alpha=0.05,
                       max_rise=0.0, n_boot=90, seed=7, clusters=CODES)  # fmt: skip
    assert got["tone_flip_rate"] == want
    assert want["ci"] != probe_delta(case_counts(base, "tone", base.ids, y), case_counts(new, "tone", base.ids, y),
                                     alpha=0.05, max_rise=0.0, n_boot=90, seed=7)["ci"]  # fmt: skip


def test_a_probe_comparison_draws_the_run_s_clusters() -> None:
    variants = {"order": np.array([[0] if i % 4 < 2 else [2] for i in range(N)])}
    r = run(np.full(N, 2), GROUP, variants=variants)
    doc = compare_probe(r, "order", n_boot=90, seed=8)
    assert doc["gate"]["clusters"] == 4
    cases, _, plain, variant = probe_pairs(r, "order")
    _, boots = cluster_headline(r.y_true[cases], [plain, variant], CODES[cases], n_boot=90, seed=8)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert doc["metrics"]["accuracy"]["ci"] == pytest.approx(list(m.finite_interval(change)))
    assert "resampled by case with a case's epochs kept together (the 4 clusters of cases that the runs' journals " \
           "name, a drawn cluster bringing all its cases drawn)" in doc["gate"]["statement"]  # fmt: skip
    alone = compare_probe(run(np.full(N, 2), None, variants=variants), "order", n_boot=90, seed=8)
    assert "clusters" not in alone["gate"] and "kept together." in alone["gate"]["statement"]


def test_reduce_draws_reduces_the_last_axis_of_any_batch() -> None:
    rng = np.random.default_rng(9)
    verdicts = rng.integers(0, 4, size=(2, 3, 5))
    for reducer in ("mode", "first"):
        flat = reduce_draws(verdicts.reshape(6, 5), reducer).reshape(2, 3)
        assert (reduce_draws(verdicts, reducer) == flat).all()


# ---- harness.figures.compute -----------------------------------------------------------------------------------


def test_every_block_of_a_run_draws_the_clusters_it_was_given() -> None:
    from harness import figures as fig

    labels = [replace(lab(i), tags=(f"grp={GROUP[i]}", "origin_natural")) for i in range(N)]
    risks = ["high" if i % 4 < 2 else "low" for i in range(N)]
    outcomes = {x.case_id: Outcome(x.case_id, x.content_hash, r, 0.9 if r == "high" else 0.2, None, 1, 0.1)  # type: ignore[arg-type]
                for x, r in zip(labels, risks, strict=True)}  # fmt: skip
    by = "tag:grp="
    doc = fig.compute(labels, outcomes, wall_s=1.0, n_boot=120, seed=5, cluster_by=by)
    y_true, y_pred = m.encode(labels, outcomes)
    boots = fig.resampled(y_true, y_pred, n_boot=120, seed=5, clusters=CODES)
    assert doc["accuracy_ci95"] == list(m.percentile_interval(m.accuracy(boots)))  # type: ignore[arg-type]
    assert doc["clusters"]["n_clusters"] == 4
    assert doc["headline_real"] == fig.headline_real(labels, outcomes, n_boot=120, seed=5, cluster_by=by)
    assert doc["headline_natural"]["accuracy_ci95"] == doc["accuracy_ci95"]  # type: ignore[index]
    assert doc["consensus"] == fig.consensus(labels, outcomes, n_boot=120, seed=5, cluster_by=by)
    scores = np.array([outcomes[x.case_id].score for x in labels])
    assert doc["operating_points"] == operating_points(y_true, y_pred, scores, n_boot=120, seed=5, clusters=CODES)
    assert doc["scores"] == fig.score_metrics(labels, outcomes, n_bins=15, n_boot=120, seed=5, cluster_by=by)
    assert doc["per_category"] == fig.per_category(labels, outcomes, by)
    assert doc["breakdowns"] == fig.breakdowns(labels, outcomes, by)
    alone = fig.compute(labels, outcomes, wall_s=1.0, n_boot=120, seed=5, cluster_by="none")
    for key in ("accuracy_ci95", "headline_real", "consensus", "operating_points", "scores", "per_category",
                "breakdowns"):  # fmt: skip
        assert doc[key] != alone[key], key  # type: ignore[literal-required]


# ---- harness.leaderboard.compare -----------------------------------------------------------------------------------


def test_a_comparison_of_runs_draws_the_clusters_their_journals_name() -> None:
    from harness.leaderboard.compare import compare_runs

    rng = np.random.default_rng(11)
    b_pred, n_pred = rng.integers(0, 3, size=N), rng.integers(0, 3, size=N)
    tone_b = np.array([[0] if i % 4 == 0 else [2] for i in range(N)])
    tone_n = np.array([[0] if i % 4 < 2 else [2] for i in range(N)])
    s_b, s_n = rng.random(N), rng.random(N)
    base = run(b_pred, GROUP, s_b, {"tone": tone_b})
    new = run(n_pred, [None] * N, s_n, {"tone": tone_n})  # the other run's clusters hold for both
    doc = compare_runs(base, new, n_boot=90, seed=12)
    assert doc["gate"]["clusters"] == 4
    assert "resamples of the 4 clusters of cases that the runs' journals name, a drawn cluster bringing all its " \
           "cases, seed 12" in doc["gate"]["statement"]  # fmt: skip
    _, boots = m.paired_headline(np.full(N, 2), [b_pred, n_pred], n_boot=90, seed=12, clusters=CODES)
    assert doc["metrics"]["accuracy"]["ci"] == pytest.approx(
        list(m.finite_interval(boots["accuracy"][1] - boots["accuracy"][0]))
    )
    y = np.full(N, 2)
    rates = probe_delta(case_counts(base, "tone", base.ids, y), case_counts(new, "tone", base.ids, y), alpha=0.05,
                        max_rise=0.01, n_boot=90, seed=12, clusters=CODES)  # fmt: skip
    assert doc["metrics"]["tone_flip_rate"] == rates
    assert doc["ece"] == ece_delta(base, new, base.ids, y_true=y, alpha=0.05, n_boot=90, seed=12, clusters=CODES)
    alone = compare_runs(run(b_pred, None, s_b, {"tone": tone_b}), run(n_pred, None, s_n, {"tone": tone_n}),
                         n_boot=90, seed=12)  # fmt: skip
    assert "clusters" not in alone["gate"] and "resamples of the cases, seed 12" in alone["gate"]["statement"]
    for key in ("accuracy", "tone_flip_rate"):
        assert alone["metrics"][key]["ci"] != doc["metrics"][key]["ci"]
    assert alone["ece"]["ci"] != doc["ece"]["ci"]  # type: ignore[index]


def test_a_comparison_with_epochs_draws_the_clusters_then_the_epochs() -> None:
    from dataclasses import replace as with_fields

    from harness.leaderboard.compare import compare_runs
    from harness.leaderboard.noise import POOLED, hierarchical_headline

    rng = np.random.default_rng(13)
    e_b, e_n = rng.integers(0, 3, size=(N, 2)), rng.integers(0, 3, size=(N, 2))
    base = with_fields(run(e_b[:, 0], GROUP), epochs=e_b)
    new = with_fields(run(e_n[:, 0], GROUP), epochs=e_n)
    doc = compare_runs(base, new, n_boot=60, seed=14)
    assert doc["gate"]["clusters"] == 4 and doc["gate"]["method"] == "hierarchical"
    assert "The bootstrap (60 resamples, seed 14): the 4 clusters of cases" in doc["gate"]["statement"]
    _, boots = hierarchical_headline(np.full(N, 2), [e_b, e_n], reducers=[POOLED, POOLED], n_boot=60, seed=14,
                                     clusters=CODES)  # fmt: skip
    assert doc["metrics"]["accuracy"]["ci"] == pytest.approx(
        list(m.finite_interval(boots["accuracy"][1] - boots["accuracy"][0]))
    )


def test_the_gate_counts_clusters_once_two_cases_share_one() -> None:
    from harness.leaderboard.compare import gate_block

    r = run(np.full(N, 2), None)
    assert gate_block(r, r, "paired", [], np.array([0, 0, 1, 2]))["clusters"] == 3
    assert "clusters" not in gate_block(r, r, "paired", [], np.array([0, 1, 2, 3]))
    assert "clusters" not in gate_block(r, r, "paired", [], np.zeros(0, dtype=np.int64))
    assert "clusters" not in gate_block(r, r, "paired", [])


def test_power_draws_the_clusters() -> None:
    from harness.leaderboard.power import power_table

    rng = np.random.default_rng(15)
    b_pred, n_pred = rng.integers(0, 3, size=N), rng.integers(0, 3, size=N)
    base, new = run(b_pred, GROUP), run(n_pred, None)
    table = power_table([base, new], effect=0.05, alpha=0.05, power=0.8, n_boot=100, seed=16)
    _, boots = m.paired_headline(np.full(N, 2), [b_pred, n_pred], n_boot=100, seed=16, clusters=CODES)
    change = boots["accuracy"][1] - boots["accuracy"][0]
    assert table["metrics"]["accuracy"]["se"] == pytest.approx(float(change.std(ddof=1)))
    alone = power_table([run(b_pred, None), new], effect=0.05, alpha=0.05, power=0.8, n_boot=100, seed=16)
    assert alone["metrics"]["accuracy"]["se"] != table["metrics"]["accuracy"]["se"]


def test_a_run_without_clusters_before_one_with_them_still_joins_the_second_s() -> None:
    ids = np.array([f"c{i:02d}" for i in range(N)], dtype=object)
    assert aligned_clusters([run(np.full(N, 2), None), run(np.full(N, 2), GROUP)], ids).tolist() == CODES.tolist()


# ---- the boards ----------------------------------------------------------------------------------------------------


def _labelled(label: str, y_pred: np.ndarray, clusters: list[str | None] | None) -> Run:
    from dataclasses import replace as with_fields

    r = run(y_pred, clusters)
    doc = {**r.doc, "detector": {"spec": label, "label": label}, "metrics": {"macro_f1": 0.5}}
    return with_fields(r, doc=doc, origins=np.array(["natural"] * N, dtype=object))  # type: ignore[arg-type]


def test_the_board_s_intervals_and_its_natural_rows_draw_the_clusters() -> None:
    from harness.leaderboard.board import natural_rows
    from harness.leaderboard.rank import build_board

    rng = np.random.default_rng(17)
    preds = [rng.integers(0, 3, size=N) for _ in range(2)]
    runs = [_labelled("a", preds[0], GROUP), _labelled("b", preds[1], None)]
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=80, seed=18, alpha=0.05)
    _, boots = m.paired_headline(np.full(N, 2), preds, n_boot=80, seed=18, clusters=CODES)
    assert [row.cis["macro_f1"] for row in board.rows] == [m.finite_interval(b) for b in boots["macro_f1"]]
    rows = natural_rows(board, n_boot=80, seed=18)
    assert [r["macro_f1_ci"] for r in rows] == [m.finite_interval(b) for b in boots["macro_f1"]]
    plain = build_board([_labelled("a", preds[0], None), runs[1]], metric="macro_f1", include_incomplete=False,
                        n_boot=80, seed=18, alpha=0.05)  # fmt: skip
    assert [row.cis["macro_f1"] for row in plain.rows] != [row.cis["macro_f1"] for row in board.rows]


def test_the_design_effects_of_a_run_are_its_two_bootstraps_variances() -> None:
    from harness import figures as fig
    from harness.design_effect import design_effect

    risks = ["high" if i % 4 < 2 else "low" for i in range(N)]
    outcomes = {x.case_id: Outcome(x.case_id, x.content_hash, r, None, None, 1, 0.1)  # type: ignore[arg-type]
                for x, r in zip(LABS, risks, strict=True)}  # fmt: skip
    doc = fig.compute(LABS, outcomes, wall_s=1.0, n_boot=150, seed=21, cluster_by="tag:grp=")
    y_true, y_pred = m.encode(LABS, outcomes)
    wide = fig.resampled(y_true, y_pred, n_boot=150, seed=21, clusters=CODES)
    narrow = fig.resampled(y_true, y_pred, n_boot=150, seed=21)
    want = design_effect(m.accuracy(wide), m.accuracy(narrow))  # type: ignore[arg-type]
    assert want is not None and want > 2  # the clusters move as one here
    assert doc["clusters"]["design_effect"]["accuracy"] == want


def test_cases_alone_stay_apart_in_a_group_s_interval() -> None:
    from harness import figures as fig
    from harness.design_effect import proportion_design_effect

    # cases 0, 1, 4, 5, ... tagged g0 or g1 (six each), the other twelve untagged: each alone. Right: the tagged
    # ones of g0 and the untagged ones with an even index.
    labels = [replace(lab(i), tags=(f"grp=g{i % 2}",) if i % 4 < 2 else ()) for i in range(N)]
    right = [(i % 4 < 2 and i % 2 == 0) or (i % 4 >= 2 and i % 2 == 0) for i in range(N)]
    outcomes = {x.case_id: Outcome(x.case_id, x.content_hash, "high" if ok else "low", None, None, 1, 0.1)  # type: ignore[arg-type]
                for x, ok in zip(labels, right, strict=True)}  # fmt: skip
    keys = [f"g{i % 2}" if i % 4 < 2 else f"case {i}" for i in range(N)]
    effect = proportion_design_effect(right, keys)
    assert effect > 1
    want = list(m.wilson_interval(sum(right), N, effect))  # type: ignore[arg-type]
    assert fig.per_category(labels, outcomes, "tag:grp=")["majority_wrong_fact"]["ci95"] == want
    assert fig.breakdowns(labels, outcomes, "tag:grp=")["evidence"]["absent"]["ci95"] == want


def test_a_run_s_epochs_probes_and_headline_draw_the_settings_clusters() -> None:
    from harness.repeats import probes_block
    from harness.run.items import ItemPlan
    from harness.run.settings import EvalSettings
    from harness.run.tally import run_figures
    from harness.spec import parse_spec

    items = _epochs()
    for i in range(N):
        items[ItemKey(f"c{i:02d}", 2, "order")] = item(i, 2, "high" if i % 4 == 1 else "low", "order")  # g0 flips
    settings = EvalSettings(cases="c.jsonl", detector=parse_spec("builtin:vote"), epochs=3, probes=("order",),
                            n_boot=120, seed=22, cluster_by="tag:grp=")  # fmt: skip
    plan = ItemPlan([(x, key) for x in LABS for key in items if key.case_id == x.case_id])
    metrics, _, _ = run_figures(settings, LABS, items, plan, 1.0)
    assert metrics["clusters"]["by"] == "tag:grp=" and metrics["clusters"]["n_clusters"] == 4
    want = epochs_block(LABS, items, n_epochs=3, reducer="mode", n_boot=120, seed=22, cluster_by="tag:grp=")
    assert metrics["epochs"]["self_agreement"] == want["self_agreement"]
    probes = probes_block(LABS, items, ["order"], n_epochs=3, not_possible={}, n_boot=120, seed=22,
                          cluster_by="tag:grp=")  # fmt: skip
    assert metrics["probes"]["order"]["ci95"] == probes["order"]["ci95"]
    alone = probes_block(LABS, items, ["order"], n_epochs=3, not_possible={}, n_boot=120, seed=22)
    assert alone["order"]["ci95"] != probes["order"]["ci95"]
