"""Two runs' probe figures compared (`harness.leaderboard.probe_rates`): each run's counts per case worked out by hand
from its verdict tables, the change and its interval against a loop over the same resamples written here, and the
gate: a rise beyond the tolerance whose interval excludes zero."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.leaderboard.probe_rates import case_counts, figure_name, probe_delta, probe_deltas
from harness.leaderboard.runs import Run
from harness.metrics import memory_chunk, resample_indices

IDS = np.array(["c1", "c2", "c3", "c4", "c5"], dtype=object)
Y = np.array([0, 2, 2, 1, 2])  # low, high, high, medium, high
M = -1  # no variant asked
E = 3  # an error


def run(y_pred: list[int], variants: dict[str, list[list[int]]], ids: np.ndarray = IDS) -> Run:
    doc = {"detector": {"spec": "x"}, "dataset": {"name": "toy", "sha256": "f" * 64}, "created": "", "complete": True,
           "metrics": {}}  # fmt: skip
    keep = np.isin(IDS, ids)
    return Run(Path("r"), doc, ids, np.array(["x"] * len(ids), dtype=object), Y[keep], np.array(y_pred),  # type: ignore[arg-type]
               variants={k: np.array(v) for k, v in variants.items()})  # fmt: skip


def test_the_names_are_the_leaderboard_columns() -> None:
    assert [figure_name(p) for p in ("order", "evidence-order", "tone", "inject", "duplicate")] == [
        "order_flip_rate", "evidence_order_flip_rate", "tone_flip_rate", "inject_attack_success",
        "duplicate_fall_rate"]  # fmt: skip


def test_an_attack_success_rate_counts_the_cases_labelled_high_or_medium_whose_verdict_could_fall() -> None:
    # c1 labelled low: never counted; c2 high, plain high, variant low: a fall; c3 high, plain low: cannot fall;
    # c4 medium, plain medium, variant high: counted, no fall; c5 high, variant an error: left out
    r = run([0, 2, 0, 1, 2], {"inject": [[M], [0], [0], [2], [E]]})
    pairs, events = case_counts(r, "inject", IDS, Y)
    assert pairs.tolist() == [0, 1, 0, 1, 0] and events.tolist() == [0, 1, 0, 0, 0]


def test_a_flip_rate_counts_every_answered_pair() -> None:
    r = run([0, 2, 0, 1, E], {"tone": [[1], [2], [0], [M], [1]]})  # c5's plain verdict is an error: left out
    pairs, events = case_counts(r, "tone", IDS, Y)
    assert pairs.tolist() == [1, 1, 1, 0, 0] and events.tolist() == [1, 0, 0, 0, 0]


def test_a_case_one_run_did_not_finish_has_no_pair_on_its_side() -> None:
    short = run([0, 2], {"tone": [[0], [0]]}, ids=IDS[:2])
    pairs, events = case_counts(short, "tone", IDS, Y)
    assert pairs.tolist() == [1, 1, 0, 0, 0] and events.tolist() == [0, 1, 0, 0, 0]


def test_the_change_its_interval_and_the_gate_by_hand() -> None:
    base = (np.array([1.0, 1, 1, 1, 0]), np.array([0.0, 0, 1, 0, 0]))  # 1 of 4
    new = (np.array([1.0, 1, 1, 1, 2]), np.array([1.0, 1, 1, 0, 2]))  # 5 of 6
    delta = probe_delta(base, new, alpha=0.05, max_rise=0.01, n_boot=400, seed=3)
    assert (delta["base"], delta["new"], delta["delta"]) == (0.25, pytest.approx(5 / 6), pytest.approx(5 / 6 - 0.25))
    changes = []
    for idx in resample_indices(5, n_boot=400, seed=3, chunk=memory_chunk(5)):
        for row in idx:
            b_n, b_k, n_n, n_k = base[0][row].sum(), base[1][row].sum(), new[0][row].sum(), new[1][row].sum()
            if b_n and n_n:
                changes.append(n_k / n_n - b_k / b_n)
    assert delta["ci"] == pytest.approx(list(np.percentile(changes, [2.5, 97.5])))
    assert delta["p"] == pytest.approx(np.mean(np.array(changes) <= 0))
    assert delta["regression"] is (delta["ci"][0] > 0)
    assert not delta["higher_is_better"] and delta["p_holm"] is None
    # a rise within the tolerance is no regression, whatever its interval
    assert not probe_delta(base, new, alpha=0.05, max_rise=0.6, n_boot=400, seed=3)["regression"]
    # the other way round: a fall, never a regression
    assert not probe_delta(new, base, alpha=0.05, max_rise=0.0, n_boot=400, seed=3)["regression"]


def test_a_rise_every_resample_shows_is_a_regression_and_no_pairs_give_no_figure() -> None:
    base = (np.ones(6), np.zeros(6))
    new = (np.ones(6), np.ones(6))
    delta = probe_delta(base, new, alpha=0.05, max_rise=0.01, n_boot=100, seed=0)
    assert (delta["delta"], delta["ci"], delta["p"], delta["regression"]) == (1.0, [1.0, 1.0], 0.0, True)
    empty = probe_delta((np.zeros(6), np.zeros(6)), new, alpha=0.05, max_rise=0.0, n_boot=50, seed=0)
    assert (empty["base"], empty["delta"], empty["regression"]) == (None, None, False)


def test_only_the_probes_both_runs_asked() -> None:
    a = run([0, 2, 0, 1, 2], {"tone": [[0]] * 5, "inject": [[M]] * 5})
    b = run([0, 2, 0, 1, 2], {"tone": [[0]] * 5})
    found = probe_deltas(a, b, IDS, Y, ["tone", "inject", "length"], alpha=0.05, max_rise=0.0, n_boot=20, seed=0)
    assert list(found) == ["tone_flip_rate"]
    # tone: plain verdicts low, high, low, medium, high against low everywhere: 3 flips of 5 on both sides
    assert (found["tone_flip_rate"]["base"], found["tone_flip_rate"]["delta"]) == (0.6, 0.0)


def test_a_run_with_epochs_pairs_each_epoch_with_its_own_plain_verdict() -> None:
    from dataclasses import replace

    # two epochs; the reduced y_pred (all low) is not what the epochs said: the epochs are what the pairs compare
    r = replace(run([0, 0, 0, 0, 0], {"tone": [[2, 1], [2, 2], [0, 0], [1, 0], [2, 2]]}),
                epochs=np.array([[2, 1], [2, 1], [0, 0], [1, 1], [2, 2]]))  # fmt: skip
    pairs, events = case_counts(r, "tone", IDS, Y)
    assert pairs.tolist() == [2, 2, 2, 2, 2] and events.tolist() == [0, 1, 0, 1, 0]


@pytest.mark.filterwarnings("error")
def test_no_bootstrap_no_interval_and_no_warning_for_a_resample_without_pairs() -> None:
    base = (np.array([1.0, 0.0]), np.array([0.0, 0.0]))  # case 2 has no pair: some resamples hold none
    new = (np.array([1.0, 0.0]), np.array([1.0, 0.0]))
    none = probe_delta(base, new, alpha=0.05, max_rise=0.0, n_boot=0, seed=0)
    assert (none["delta"], none["ci"], none["p"], none["regression"]) == (1.0, None, None, False)
    some = probe_delta(base, new, alpha=0.05, max_rise=0.0, n_boot=200, seed=0)
    assert some["ci"] == [1.0, 1.0] and some["regression"]


def test_the_interval_takes_alpha_and_the_seed() -> None:
    base = (np.ones(8), np.array([0.0, 1, 0, 0, 1, 0, 0, 0]))
    new = (np.ones(8), np.array([1.0, 1, 0, 1, 1, 0, 1, 0]))
    changes = []
    for idx in resample_indices(8, n_boot=300, seed=4, chunk=memory_chunk(8)):
        changes.extend((new[1][row].sum() - base[1][row].sum()) / 8 for row in idx)
    at_90 = probe_delta(base, new, alpha=0.1, max_rise=0.0, n_boot=300, seed=4)
    assert at_90["ci"] == pytest.approx(list(np.percentile(changes, [5, 95])))
    assert probe_delta(base, new, alpha=0.1, max_rise=0.0, n_boot=300, seed=5)["ci"] != at_90["ci"]
    a, b = run([0, 2, 0, 1, 2], {"tone": [[0]] * 5}), run([0, 2, 0, 1, 2], {"tone": [[2]] * 5})
    seeded = probe_deltas(a, b, IDS, Y, ["tone"], alpha=0.05, max_rise=0.0, n_boot=100, seed=4)["tone_flip_rate"]
    direct = probe_delta(case_counts(a, "tone", IDS, Y), case_counts(b, "tone", IDS, Y), alpha=0.05, max_rise=0.0,
                         n_boot=100, seed=4)  # fmt: skip
    assert seeded == direct


def test_a_rise_of_exactly_the_tolerance_passes_and_a_side_without_pairs_has_no_figure() -> None:
    base, new = (np.ones(4), np.zeros(4)), (np.ones(4), np.ones(4))
    assert probe_delta(base, new, alpha=0.05, max_rise=1.0, n_boot=50, seed=0)["regression"] is False
    assert probe_delta(base, new, alpha=0.05, max_rise=0.999, n_boot=50, seed=0)["regression"] is True
    # the new run compared no pair: no figure, no delta, no p, whatever the resamples of the base say
    empty = probe_delta(base, (np.zeros(4), np.zeros(4)), alpha=0.05, max_rise=0.0, n_boot=50, seed=0)
    assert (empty["base"], empty["new"], empty["delta"], empty["p"]) == (0.0, None, None, None)


def test_the_minimum_detectable_rise_of_a_probe_figure() -> None:
    from harness.leaderboard.noise import detectable

    base = (np.ones(8), np.array([0.0, 1, 0, 0, 1, 0, 0, 0]))
    new = (np.ones(8), np.array([1.0, 1, 0, 1, 1, 0, 1, 0]))
    changes = []
    for idx in resample_indices(8, n_boot=300, seed=4, chunk=memory_chunk(8)):
        changes.extend((new[1][row].sum() - base[1][row].sum()) / 8 for row in idx)
    got = probe_delta(base, new, alpha=0.05, max_rise=0.0, n_boot=300, seed=4)
    assert got["mde"] == pytest.approx(detectable(np.array(changes), 0.05))
    assert probe_delta(base, new, alpha=0.05, max_rise=0.0, n_boot=0, seed=4)["mde"] is None
