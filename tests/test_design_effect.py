"""Intervals that know the data's clusters (harness.design_effect, harness.metrics.resample_counts): the cluster
bootstrap against a hand expansion of its drawn clusters, its coverage on simulated clustered data, the design
effect against its closed form, and the share's design effect by hand. Every expected figure is derived here."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from harness import figures as fig
from harness import metrics as m
from harness.cases.clusters import DEFAULT_CLUSTER_BY
from harness.design_effect import clusters_block, clusters_of, design_effect, keyed, proportion_design_effect
from harness.types import CaseLabels, Outcome

HIGH, LOW = 2, 0


def clustered_lab(case_id: str, item: str | None, tags: tuple[str, ...] = ()) -> CaseLabels:
    """A high-risk case built from public item ``item`` (None: an original case)."""
    return CaseLabels(
        line=1, case_id=case_id, content_hash=f"h{case_id}", category="majority_wrong_fact", expected_risk="high",
        majority_correct=False, n_answers=3, has_evidence=False, families=(), families_complete=True,
        any_saw_other_answers=False, any_shared_context=False, tags=tags,
        source_dataset="original" if item is None else "ds", source_item=case_id if item is None else f"ds:{item}",
    )  # fmt: skip


def expanded(groups: np.ndarray, drawn: np.ndarray) -> np.ndarray:
    """The cases of the drawn clusters, each drawn cluster's cases once per draw: the resample written out."""
    return np.concatenate([np.flatnonzero(groups == c) for c in drawn])


# ---- the draws ------------------------------------------------------------------------------------------------------


def test_the_counts_are_the_index_draws_counted() -> None:
    idx = np.concatenate(list(m.resample_indices(7, n_boot=130, seed=3, chunk=m.memory_chunk(7))))
    counts = np.concatenate(list(m.resample_counts(7, n_boot=130, seed=3)))
    assert counts.shape == (130, 7)
    assert all(Counter(row.tolist()) == {c: int(n) for c, n in enumerate(counts[r]) if n} for r, row in enumerate(idx))


def test_a_clustered_confusion_resample_is_its_drawn_clusters_written_out() -> None:
    rng = np.random.default_rng(0)
    groups = m.cluster_codes(rng.integers(0, 9, size=40).tolist())
    y_true, y_pred = rng.integers(0, 3, size=40), rng.integers(0, 4, size=40)
    got = m.bootstrap_confusions(y_true, y_pred, n_boot=60, seed=5, chunk=7, clusters=groups)
    k = int(groups.max()) + 1
    draws = np.concatenate(list(m.resample_indices(k, n_boot=60, seed=5, chunk=7)))
    for b, drawn in enumerate(draws):
        cases = expanded(groups, drawn)
        want = np.zeros((3, 4), dtype=int)
        for i in cases:
            want[y_true[i], y_pred[i]] += 1
        assert (got[b] == want).all()


def test_cases_that_are_each_their_own_cluster_get_the_case_bootstrap_draw_for_draw() -> None:
    rng = np.random.default_rng(1)
    y_true, y_pred = rng.integers(0, 3, size=57), rng.integers(0, 4, size=57)
    alone = m.bootstrap_confusions(y_true, y_pred, n_boot=90, seed=2, chunk=m.memory_chunk(57))
    singletons = m.cluster_codes(f"case-{i}" for i in range(57))
    assert singletons.tolist() == list(range(57))
    same = m.bootstrap_confusions(y_true, y_pred, n_boot=90, seed=2, chunk=m.memory_chunk(57), clusters=singletons)
    assert (alone == same).all()
    idx = np.concatenate(list(m.resample_indices(57, n_boot=90, seed=2, chunk=m.memory_chunk(57))))
    assert [int(np.trace(alone[b])) for b in range(90)] == [int((y_true[r] == y_pred[r]).sum()) for r in idx]


def test_cluster_codes_number_clusters_in_order_of_first_appearance() -> None:
    assert m.cluster_codes(["b", "a", "b", "c", "a"]).tolist() == [0, 1, 0, 2, 1]
    assert m.cluster_codes([]).tolist() == [] and m.cluster_codes([]).dtype == np.int64  # an index, even empty
    assert m.cluster_totals(np.array([1, 0, 1]), np.array([[1, 2], [3, 4], [5, 6]])).tolist() == [[3, 4], [6, 8]]


def test_cluster_totals_sum_counts_as_whole_numbers_and_shares_as_they_are() -> None:
    flags = m.cluster_totals(np.array([0, 0, 1]), np.array([True, True, False]))
    assert flags.tolist() == [2, 0] and flags.dtype.kind == "i"  # booleans counted, not or-ed
    assert m.cluster_totals(np.array([0, 0]), np.array([0.5, 0.25])).tolist() == [0.75]
    assert m.cluster_totals(np.zeros(0, dtype=np.int64), np.zeros(0)).shape == (0,)


def test_no_case_gives_empty_resamples() -> None:
    empty = np.zeros(0, dtype=np.int64)
    assert (m.bootstrap_confusions(empty, empty, n_boot=3, seed=0) == 0).all()


# ---- coverage ---------------------------------------------------------------------------------------------------


def _clustered_population(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One sample of ``k`` clusters of 1 to 6 cases, every case labelled high; a cluster's cases are called high
    each with the cluster's own chance p ~ Beta(1.4, 0.6), so that the accuracy over the population is 0.7."""
    sizes = rng.integers(1, 7, size=k)
    chance = rng.beta(1.4, 0.6, size=k)
    groups = np.repeat(np.arange(k), sizes)
    hit = rng.random(len(groups)) < chance[groups]
    return groups, np.full(len(groups), HIGH), np.where(hit, HIGH, LOW)


def _coverage(reps: int, *, clustered: bool) -> float:
    rng = np.random.default_rng(20261205)
    covered = 0
    for rep in range(reps):
        groups, y_true, y_pred = _clustered_population(rng, 150)
        boots = m.bootstrap_confusions(y_true, y_pred, n_boot=400, seed=rep, chunk=100,
                                       clusters=groups if clustered else None)  # fmt: skip
        low, high = m.percentile_interval(m.accuracy(boots))
        covered += low <= 0.7 <= high
    return covered / reps


def test_the_cluster_bootstrap_s_95_intervals_cover_the_truth_95_times_in_100_on_clustered_data() -> None:
    # 2,000 samples: the coverage's own standard error is 0.5 points; the case bootstrap, blind to the clusters
    # (design effect near 2 here), covers far less, so the clusters are what carries the coverage
    assert 0.94 <= _coverage(2000, clustered=True) <= 0.96
    assert _coverage(400, clustered=False) < 0.9


# ---- design effects -------------------------------------------------------------------------------------------------


def test_the_design_effect_of_clusters_that_move_as_one_is_their_size() -> None:
    # 200 clusters of 4 cases, all right or all wrong: the accuracy's variance over clusters is p(1 - p)/200, over
    # cases p(1 - p)/800, a ratio of 4 (each bootstrap variance from 1,000 resamples: within 15%)
    rng = np.random.default_rng(4)
    hits = np.repeat(rng.random(200) < 0.6, 4)
    groups = np.repeat(np.arange(200), 4)
    y_true, y_pred = np.full(800, HIGH), np.where(hits, HIGH, LOW)
    cm = m.confusion(y_true, y_pred)
    clustered = m.bootstrap_confusions(y_true, y_pred, n_boot=1000, seed=0, clusters=groups)
    plain = m.bootstrap_confusions(y_true, y_pred, n_boot=1000, seed=0)
    block = clusters_block("source.item", groups, cm, clustered, plain)
    assert (block["n_cases"], block["n_clusters"], block["largest"]) == (800, 200, 4)
    assert 3.4 < block["design_effect"]["accuracy"] < 4.6  # type: ignore[operator]
    assert block["design_effect"]["error_rate"] is None  # no case errs: the figure never varies
    assert clusters_block("none", groups, cm, None, None)["design_effect"]["accuracy"] is None


def test_design_effect_is_the_ratio_of_the_two_variances_over_the_finite_values() -> None:
    wide, narrow = np.array([0.0, 2.0, np.nan, 4.0]), np.array([1.0, 2.0, 3.0, np.inf])
    assert design_effect(wide, narrow) == pytest.approx(4.0)  # var(0, 2, 4) = 4, var(1, 2, 3) = 1
    assert design_effect(wide, np.array([1.0, 1.0])) is None
    assert design_effect(np.array([1.0]), narrow) is None


def test_a_run_of_cases_alone_reports_a_design_effect_of_exactly_one() -> None:
    labels = [clustered_lab(f"c{i}", None) for i in range(30)]
    outcomes = {lab.case_id: Outcome(lab.case_id, lab.content_hash, "high" if i % 3 else "low", None, None, 1, 0.1)
                for i, lab in enumerate(labels)}  # fmt: skip
    block = fig.compute(labels, outcomes, wall_s=1.0, n_boot=200, seed=1)["clusters"]
    assert (block["by"], block["n_clusters"], block["largest"]) == (DEFAULT_CLUSTER_BY, 30, 1)
    assert block["design_effect"]["accuracy"] == 1.0


def test_the_run_s_clusters_are_its_source_items_and_its_intervals_draw_them() -> None:
    labels = [clustered_lab(f"c{i}", f"item{i // 3}") for i in range(30)] + [clustered_lab("solo", None)]
    outcomes = {lab.case_id: Outcome(lab.case_id, lab.content_hash, "high" if (i // 3) % 2 else "low", None, None,
                                     1, 0.1) for i, lab in enumerate(labels)}  # fmt: skip
    doc = fig.compute(labels, outcomes, wall_s=1.0, n_boot=300, seed=2)
    assert (doc["clusters"]["n_clusters"], doc["clusters"]["largest"]) == (11, 3)
    groups = clusters_of(labels, DEFAULT_CLUSTER_BY)
    assert groups.tolist() == [i // 3 for i in range(30)] + [10]
    y_true, y_pred = m.encode(labels, outcomes)
    boots = m.bootstrap_confusions(y_true, y_pred, n_boot=300, seed=2, chunk=m.memory_chunk(31), clusters=groups)
    assert doc["accuracy_ci95"] == list(m.percentile_interval(m.accuracy(boots)))
    alone = fig.compute(labels, outcomes, wall_s=1.0, n_boot=300, seed=2, cluster_by="none")
    assert alone["clusters"]["n_clusters"] == 31
    assert np.diff(doc["accuracy_ci95"]) > np.diff(alone["accuracy_ci95"])  # type: ignore[arg-type]


def test_a_tag_prefix_names_the_clusters() -> None:
    labels = [clustered_lab("a", None, ("x", "grp=1")), clustered_lab("b", None, ("grp=1",)),
              clustered_lab("c", None, ("grp=2",)), clustered_lab("d", None, ())]  # fmt: skip
    assert clusters_of(labels, "tag:grp=").tolist() == [0, 0, 1, 2]
    assert clusters_of(labels, "none").tolist() == [0, 1, 2, 3]
    assert keyed(None, "a") != keyed("a", "b")


# ---- the share's design effect (the per-group Wilson intervals) ----------------------------------------------------


def test_the_share_s_design_effect_by_hand() -> None:
    # hits 1 1 0 0 1 0 in clusters a a b b c d: p = 1/2, K = 4, y - p m = 1, -1, 1/2, -1/2, squares sum 2.5;
    # clustered variance 4/3 x 2.5 / 36, the simple one (1/4)/5: a ratio of 50/27
    hits = [True, True, False, False, True, False]
    assert proportion_design_effect(hits, list("aabbcd")) == pytest.approx(50 / 27)
    assert proportion_design_effect(hits, list("abcdef")) == 1.0  # each case alone: exactly the simple variance
    assert proportion_design_effect([True, False, True, False], list("aabb")) == 1.0  # below 1, held at 1
    assert proportion_design_effect([True, True, True], list("aab")) == 1.0  # no variation
    assert proportion_design_effect([True, False], list("aa")) == 1.0  # one cluster


def test_wilson_on_the_effective_size_is_wilson_on_fewer_cases() -> None:
    assert m.wilson_interval(30, 100, 2.0) == pytest.approx(m.wilson_interval(15, 50))
    assert m.wilson_interval(0, 10, 2.0) == pytest.approx((0.0, m.wilson_interval(0, 5)[1]))  # type: ignore[index]
    assert m.wilson_interval(10, 10, 2.0)[1] == 1.0  # type: ignore[index]


def test_a_group_s_interval_widens_by_its_clusters() -> None:
    hits = [True, True, False, False, True, False]
    group = fig.group_accuracy(hits, list("aabbcd"))
    assert group["ci95"] == pytest.approx(list(m.wilson_interval(3, 6, 50 / 27)))  # type: ignore[arg-type]
    assert fig.group_accuracy(hits)["ci95"] == pytest.approx(list(m.wilson_interval(3, 6)))  # type: ignore[arg-type]


# ---- every interval draws the clusters ----------------------------------------------------------------------------


def _resamples(groups: np.ndarray, n_boot: int, seed: int) -> list[np.ndarray]:
    """Each resample's cases written out, from the cluster draws every interval uses."""
    k = int(groups.max()) + 1
    draws = np.concatenate(list(m.resample_indices(k, n_boot=n_boot, seed=seed, chunk=m.memory_chunk(k))))
    return [expanded(groups, row) for row in draws]


def _data(n: int = 60, seed: int = 8) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    groups = m.cluster_codes(rng.integers(0, 14, size=n).tolist())
    return groups, rng.integers(0, 3, size=n), rng.integers(0, 4, size=n), rng.random(n)


def test_an_operating_point_s_intervals_draw_the_clusters() -> None:
    from harness.operating import operating_point

    groups, y_true, y_pred, _ = _data()
    escalated = y_pred == HIGH
    point = operating_point(escalated, y_true, n_boot=150, seed=3, clusters=groups)
    rates = []
    for cases in _resamples(groups, 150, 3):
        high = y_true[cases] == HIGH
        rates.append(escalated[cases][high].mean() if high.any() else np.nan)
    assert point["false_consensus_caught_ci95"] == pytest.approx(list(m.finite_interval(np.array(rates))))


def test_the_ece_interval_draws_the_clusters() -> None:
    from harness.calibration import ece, ece_resamples

    groups, y_true, _, scores = _data()
    y = (y_true == HIGH).astype(float)
    counts = list(m.resample_counts(int(groups.max()) + 1, n_boot=80, seed=6))
    got = ece_resamples(y, scores, 10, counts, groups)
    want = [ece(y[cases], scores[cases], 10) for cases in _resamples(groups, 80, 6)]
    assert got == pytest.approx(want)


def test_a_flip_rate_s_interval_draws_the_clusters() -> None:
    from harness.repeats import flip_rate

    groups, _, _, _ = _data()
    rng = np.random.default_rng(2)
    pairs = rng.integers(0, 3, size=60).astype(float)
    flips = np.minimum(pairs, rng.integers(0, 2, size=60))
    rate = flip_rate(pairs, flips, n_boot=120, seed=4, clusters=groups)
    want = [flips[c].sum() / pairs[c].sum() if pairs[c].sum() else np.nan for c in _resamples(groups, 120, 4)]
    assert rate["ci95"] == pytest.approx(list(m.finite_interval(np.array(want))))


def test_a_probe_s_change_between_runs_draws_the_clusters() -> None:
    from harness.leaderboard.probe_rates import probe_delta

    groups, _, _, _ = _data()
    rng = np.random.default_rng(3)
    base = (np.ones(60), (rng.random(60) < 0.2).astype(float))
    new = (np.ones(60), (rng.random(60) < 0.4).astype(float))
    delta = probe_delta(base, new, alpha=0.1, max_rise=0.0, n_boot=140, seed=9, clusters=groups)
    want = [new[1][c].mean() - base[1][c].mean() for c in _resamples(groups, 140, 9)]
    assert delta["ci"] == pytest.approx(list(m.finite_interval(np.array(want), 0.1)))


def test_with_one_verdict_in_every_epoch_the_hierarchical_bootstrap_is_the_paired_one_on_the_same_clusters() -> None:
    from harness.leaderboard.noise import hierarchical_headline

    groups, y_true, y_pred, _ = _data()
    other = np.roll(y_pred, 1)
    epochs = [np.repeat(y_pred[:, None], 3, axis=1), np.repeat(other[:, None], 3, axis=1)]
    _, nested = hierarchical_headline(y_true, epochs, reducers=["mode", "first"], n_boot=70, seed=2, clusters=groups)
    _, paired = m.paired_headline(y_true, [y_pred, other], n_boot=70, seed=2, clusters=groups)
    for name in m.HEADLINE_METRICS:
        assert np.array_equal(nested[name], paired[name], equal_nan=True)


def test_the_consensus_intervals_draw_the_run_s_clusters() -> None:
    labels = [clustered_lab(f"c{i}", f"item{i % 7}") for i in range(40)]
    risks = ["high" if i % 3 else "low" for i in range(40)]
    outcomes = {lab.case_id: Outcome(lab.case_id, lab.content_hash, r, None, None, 1, 0.1)  # type: ignore[arg-type]
                for lab, r in zip(labels, risks, strict=True)}  # fmt: skip
    block = fig.consensus(labels, outcomes, n_boot=90, seed=5)
    assert block is not None
    called = np.array([r == "high" for r in risks])
    groups = clusters_of(labels, DEFAULT_CLUSTER_BY)
    want = [called[c].mean() for c in _resamples(groups, 90, 5)]
    assert block["wrong_caught_ci95"] == pytest.approx(list(m.finite_interval(np.array(want))))


# ---- edges --------------------------------------------------------------------------------------------------------


def test_two_finite_values_make_a_variance() -> None:
    assert design_effect(np.array([0.0, 2.0]), np.array([1.0, 2.0])) == pytest.approx(4.0)  # 2 over 1/2


def test_a_run_without_cases_has_no_cluster() -> None:
    empty = np.zeros(0, dtype=np.int64)
    block = clusters_block("source.item", empty, np.zeros((3, 4), dtype=np.int64), None, None)
    assert (block["n_cases"], block["n_clusters"], block["largest"]) == (0, 0, 0)
    assert proportion_design_effect([], []) == 1.0


def test_without_both_bootstraps_no_design_effect() -> None:
    cm = np.array([[3, 1, 0, 0], [1, 2, 0, 0], [0, 1, 4, 0]])
    batch = np.stack([cm, cm * 2])
    assert all(v is None for v in clusters_block("x", np.arange(3), cm, batch, None)["design_effect"].values())
    assert all(v is None for v in clusters_block("x", np.arange(3), cm, None, batch)["design_effect"].values())


def test_macro_f1_s_design_effect_keeps_the_run_s_classes_in_every_resample() -> None:
    # the run has a medium case; one bootstrap's resamples hold none, the other's one: macro-F1 averages over low,
    # medium and high in both (medium's F1 then 0), as the headline's interval does; over the classes each batch
    # holds, the batch without medium would shrink by a third and its variance by 4/9
    cm = np.array([[3, 0, 1, 0], [0, 1, 0, 0], [1, 0, 4, 0]])
    without = np.array([[[4, 0, 0, 0], [0, 0, 0, 0], [1, 0, 5, 0]], [[2, 0, 2, 0], [0, 0, 0, 0], [2, 0, 4, 0]],
                        [[3, 0, 1, 0], [0, 0, 0, 0], [0, 0, 6, 0]]])  # fmt: skip
    with_one = np.array([[[3, 0, 1, 0], [0, 1, 0, 0], [1, 0, 5, 0]], [[3, 0, 1, 0], [0, 0, 0, 0], [2, 0, 4, 0]],
                         [[4, 0, 0, 0], [0, 0, 0, 0], [1, 0, 5, 0]]])  # fmt: skip
    every = np.array([True, True, True])
    for wide, narrow in ((without, with_one), (with_one, without)):
        want = design_effect(m.macro_f1(wide, every), m.macro_f1(narrow, every))
        assert clusters_block("x", np.arange(6), cm, wide, narrow)["design_effect"]["macro_f1"] == pytest.approx(want)
        assert want != pytest.approx(design_effect(m.macro_f1(wide), m.macro_f1(narrow)))


def test_the_share_s_design_effect_at_two_clusters_and_without_variation() -> None:
    # hits 1 1 0 0 in clusters a a b b: p = 1/2, y - p m = 1, -1; 2/1 x 2 / 16 over (1/4)/3: 3
    assert proportion_design_effect([True, True, False, False], list("aabb")) == pytest.approx(3.0)
    assert proportion_design_effect([False, False, False], list("aab")) == 1.0  # no hit: no variation either


def test_joined_sets_are_named_by_their_smallest_member() -> None:
    joined = m.Joined(7)
    for i, j in ((5, 6), (6, 2), (3, 4), (4, 6)):
        joined.join(i, j)
    assert [joined.root(i) for i in range(7)] == [0, 1, 2, 2, 2, 2, 2]
    joined.join(1, 1)  # a member joined with itself changes nothing
    assert [joined.root(i) for i in range(7)] == [0, 1, 2, 2, 2, 2, 2]
    chain = m.Joined(5)
    for i in range(4, 0, -1):  # 4 under 3 under 2 under 1 under 0: a root found through a chain, halved on the way
        chain.parent[i] = i - 1
    assert chain.root(4) == 0 and chain.parent[4] == 2 and chain.parent[2] == 0
