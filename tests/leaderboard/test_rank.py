"""Ranking detectors (harness/leaderboard/rank.py) on runs made by hand: medians over a detector's runs, the run that
represents it, the significance test behind a rank (the percentile exactly at zero, alpha one step either side),
shared ranks, intervals, the vote margin and the board's card, each worked out in the comments (issue 46: ranks and
intervals were exercised through fixtures but never held to a hand-worked value)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.errors import UsageError
from harness.leaderboard.rank import (
    RANK_METRICS,
    Row,
    assign_ranks,
    build_board,
    build_boards,
    make_row,
    metric_pair,
    natural_of,
    pair_p,
)
from harness.leaderboard.runs import Run
from harness.metrics import finite_interval, paired_headline

IDS = ["c1", "c2", "c3", "c4"]
CATS = ["x", "x", "y", "y"]
Y = [0, 2, 2, 1]  # low high high medium
RIGHT = [0, 2, 2, 1]
WRONG = [1, 0, 0, 2]  # every case wrong: macro-F1 0 (no class has a true positive)


def run(
    label: str,
    preds: list[int] = RIGHT,
    *,
    f1: float | None = 0.5,
    metrics: dict[str, Any] | None = None,
    complete: bool = True,
    spec: str | None = None,
    fingerprint: dict | None = None,
    sha: str = "a" * 64,
    dataset: str = "toy",
    cases: int = 4,
    created: str = "2026-12-01T00:00:00Z",
    origins: list[str] | None = None,
    ece: tuple[float, int] | None = None,
    ids: list[str] = IDS,
) -> Run:
    block: dict[str, Any] = {"macro_f1": f1, "accuracy": f1, "error_rate": 0.0, "n_cases": len(ids), **(metrics or {})}
    if ece is not None:
        block["scores"] = {"calibration": {"ece": ece[0], "bins": ece[1]}}
    detector: dict[str, Any] = {"spec": spec or label, "label": label}
    if fingerprint is not None:
        detector["fingerprint"] = fingerprint
    doc = {
        "detector": detector,
        "dataset": {"name": dataset, "sha256": sha, "cases": cases},
        "created": created,
        "complete": complete,
        "metrics": block,
    }
    n = len(ids)
    return Run(
        Path(f"runs/{label}"),
        doc,  # type: ignore[arg-type]
        np.array(ids, dtype=object),
        np.array([CATS[IDS.index(i)] for i in ids], dtype=object),
        np.array([Y[IDS.index(i)] for i in ids]),
        np.array(preds[:n]),
        origins=None if origins is None else np.array(origins, dtype=object),
        scores=np.full(n, 0.5) if ece is not None else None,
    )


def test_metric_names() -> None:
    assert metric_pair("macro_f1") == ("macro_f1", "macro_f1_real")
    assert metric_pair("accuracy_real") == ("accuracy", "accuracy_real")
    assert natural_of("macro_f1_real") == "macro_f1_natural" and natural_of("accuracy") == "accuracy_natural"
    assert RANK_METRICS[:2] == ("accuracy", "macro_f1") and "false_alarm_rate_real" in RANK_METRICS
    assert len(RANK_METRICS) == 12


# --- a row: medians over a detector's runs and the run that represents it -----------------------------------------


def test_a_row_is_the_median_of_each_column_over_the_runs() -> None:
    # three runs: macro-F1 0.9, 0.7, 0.8: median 0.8, spread 0.7 .. 0.9; accuracy 0.6, 0.9 and absent: the median of
    # the two present (0.75); latency p95 1, 2, 6: 2; consensus 0.5 in one run only: 0.5; epochs sd absent: None
    runs = [
        run("d", f1=0.9, metrics={"accuracy": 0.6, "operational": {"latency_s": {"p95": 1.0}}}),
        run("d", f1=0.7, metrics={"accuracy": 0.9, "operational": {"latency_s": {"p95": 2.0}}}),
        run(
            "d",
            f1=0.8,
            metrics={
                "accuracy": None,
                "operational": {"latency_s": {"p95": 6.0}},
                "consensus": {"balanced_accuracy": 0.5},
            },
        ),
    ]
    row = make_row("d", runs, "macro_f1", incomplete=False)
    assert row.values["macro_f1"] == 0.8
    assert row.values["accuracy"] == pytest.approx(0.75)
    assert row.values["operational.latency_s.p95"] == 2.0
    assert row.values["consensus.balanced_accuracy"] == 0.5
    assert row.values["epoch_sd"] is None and row.values["macro_f1_real"] is None
    assert (row.values["runs_min"], row.values["runs_max"]) == (0.7, 0.9)
    assert row.values["vote_margin"] is None and row.values["ece"] is None and row.values["ece_bins"] is None
    assert row.note == "" and row.incomplete is False and row.runs == runs


def test_the_repeat_columns_are_medians_too() -> None:
    # order flip rate 0.1 and 0.4: median 0.25; names 0.2 in one; epoch sd 0.02 and 0.04: 0.03; all agree 0.5, 0.7
    a = {"probes": {"order": {"flip_rate": 0.1}, "names": {"flip_rate": 0.2}},
         "epochs": {"spread": {"macro_f1": {"sd": 0.02}}, "self_agreement": {"all_agree": 0.5}}}  # fmt: skip
    b = {"probes": {"order": {"flip_rate": 0.4}},
         "epochs": {"spread": {"macro_f1": {"sd": 0.04}}, "self_agreement": {"all_agree": 0.7}}}  # fmt: skip
    row = make_row("d", [run("d", metrics=a), run("d", metrics=b)], "macro_f1", incomplete=False)
    assert row.values["order_flip_rate"] == pytest.approx(0.25)
    assert row.values["names_flip_rate"] == 0.2
    assert row.values["epoch_sd"] == pytest.approx(0.03)
    assert row.values["self_agreement"] == pytest.approx(0.6)


def test_one_run_has_no_spread_and_two_do() -> None:
    one = make_row("d", [run("d", f1=0.6)], "macro_f1", incomplete=False)
    assert (one.values["runs_min"], one.values["runs_max"]) == (None, None)
    two = make_row("d", [run("d", f1=0.6), run("d", f1=0.4)], "macro_f1", incomplete=False)
    assert (two.values["runs_min"], two.values["runs_max"]) == (0.4, 0.6)
    assert two.values["macro_f1"] == pytest.approx(0.5)  # the mean of the two middles
    none = make_row("d", [run("d", f1=None), run("d", f1=None)], "macro_f1", incomplete=False)
    assert (none.values["runs_min"], none.values["runs_max"], none.values["macro_f1"]) == (None, None, None)
    # one of the two defined: its value is both ends
    half = make_row("d", [run("d", f1=None), run("d", f1=0.3)], "macro_f1", incomplete=False)
    assert (half.values["runs_min"], half.values["runs_max"]) == (0.3, 0.3)


def test_the_representative_is_the_median_run_and_the_worse_middle_of_an_even_count() -> None:
    # higher is better: runs 0.9, 0.7, 0.8 -> ascending 0.7 0.8 0.9, index (3 - 1) // 2 = 1: the 0.8 run
    runs = [run("d", f1=0.9), run("d", f1=0.7), run("d", f1=0.8)]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[2]
    # four: 0.1 0.2 0.3 0.4, index 1: the 0.2 run (the lower of the two middles)
    runs = [run("d", f1=v) for v in (0.3, 0.1, 0.4, 0.2)]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[3]
    # lower is better (false_alarm_rate): descending 0.4 0.3 0.2 0.1, index 1: the 0.3 run (again the worse middle)
    runs = [run("d", metrics={"false_alarm_rate": v}) for v in (0.3, 0.1, 0.4, 0.2)]
    assert make_row("d", runs, "false_alarm_rate", incomplete=False).representative is runs[0]
    # two runs: the worse one; one run: itself
    runs = [run("d", f1=0.6), run("d", f1=0.4)]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[1]
    runs = [run("d", metrics={"false_alarm_rate": 0.1}), run("d", metrics={"false_alarm_rate": 0.3})]
    assert make_row("d", runs, "false_alarm_rate", incomplete=False).representative is runs[1]
    only = run("d")
    assert make_row("d", [only], "macro_f1", incomplete=False).representative is only
    # on the _real metric the _real figure decides: 0.2 and 0.9 on the real cases, against 0.9 and 0.2 overall
    runs = [run("d", f1=0.9, metrics={"headline_real": {"macro_f1": 0.2}}),
            run("d", f1=0.2, metrics={"headline_real": {"macro_f1": 0.9}})]  # fmt: skip
    assert make_row("d", runs, "macro_f1_real", incomplete=False).representative is runs[0]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[1]


def test_a_figure_of_exactly_zero_is_a_value_not_a_gap() -> None:
    # 0.0, 0.5, 0.7 ascending: the median run is the 0.5 one (0.0 sorts first as itself, never as another number)
    runs = [run("d", f1=0.5), run("d", f1=0.7), run("d", f1=0.0)]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[0]
    # lower is better: 0.0 is the best; descending 0.7 0.5 0.0: the 0.5 run again
    runs = [run("d", metrics={"false_alarm_rate": v}) for v in (0.0, 0.7, 0.5)]
    assert make_row("d", runs, "false_alarm_rate", incomplete=False).representative is runs[2]


def test_a_run_without_the_figure_sorts_after_those_with_it() -> None:
    # higher is better: defined 0.2, 0.6 ascending, then the undefined: index 1 -> the 0.6 run
    runs = [run("d", f1=None), run("d", f1=0.6), run("d", f1=0.2)]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[1]
    runs = [run("d", f1=None), run("d", f1=0.6), run("d", f1=0.2), run("d", f1=0.4)]
    assert make_row("d", runs, "macro_f1", incomplete=False).representative is runs[3]


def test_ece_median_only_over_one_bin_count() -> None:
    # ECE 0.1, 0.3, 0.2 over 10 bins: median 0.2; a run without scores does not count
    runs = [run("d", ece=(0.1, 10)), run("d", ece=(0.3, 10)), run("d", ece=(0.2, 10)), run("d")]
    row = make_row("d", runs, "macro_f1", incomplete=False)
    assert (row.values["ece"], row.values["ece_bins"]) == (0.2, 10) and row.note == ""
    # 10 and 15 bins: no median, and a note saying why
    row = make_row("d", [run("d", ece=(0.1, 10)), run("d", ece=(0.3, 15))], "macro_f1", incomplete=False)
    assert (row.values["ece"], row.values["ece_bins"]) == (None, None)
    assert row.note == "the runs of d binned their ECE differently (fcb eval --ece-bins): no median is shown"
    # no ECE anywhere: none, and no note
    row = make_row("d", [run("d"), run("d")], "macro_f1", incomplete=False)
    assert (row.values["ece"], row.values["ece_bins"], row.note) == (None, None, "")
    # one run with an ECE: its own
    row = make_row("d", [run("d", ece=(0.25, 5))], "macro_f1", incomplete=False)
    assert (row.values["ece"], row.values["ece_bins"]) == (0.25, 5)


def test_row_labels_date_and_cases() -> None:
    a = run("d", created="2026-11-02T00:00:00Z", metrics={"n_cases": 7})
    b = run("d", created="2026-11-09T00:00:00Z", metrics={"n_cases": 9})
    row = Row("d", [a, b], {}, a, incomplete=False)
    assert (row.left_out, row.fingerprint_id, row.note, row.ci95, row.cis) == (0, "", "", None, {})
    assert (row.rank, row.shared_rank) == (None, False)
    assert row.rank_label == "-"
    row.rank = 2
    assert row.rank_label == "2"
    row.shared_rank = True
    assert row.rank_label == "2="
    assert row.date == "2026-11-09T00:00:00Z"
    assert row.cases == 7  # the representative's cases


# --- the significance test behind a rank ----------------------------------------------------------------------------


def _rows(k: int) -> list[Row]:
    r = run("d")
    return [Row(f"d{i}", [r], {}, r, incomplete=False) for i in range(k)]


def test_better_only_when_the_pairs_holm_adjusted_p_is_below_alpha() -> None:
    # 101 resampled differences (row 1 - row 0): five zeros, then ones. Two-sided p: 2 x min(share <= 0, share >= 0)
    # = 2 x 5/101 = 0.0990 (one pair: Holm leaves it as it is)
    boot = np.stack([np.zeros(101), np.r_[np.zeros(5), np.ones(96)]])
    rows = _rows(2)
    assert pair_p(boot[1] - boot[0]) == pytest.approx(10 / 101)
    assign_ranks(rows, boot, higher_better=True, alpha=0.08)
    assert [(r.rank, r.shared_rank, r.rank_label) for r in rows] == [(1, True, "1="), (1, True, "1=")]
    assign_ranks(rows, boot, higher_better=True, alpha=0.1)
    assert [(r.rank, r.shared_rank, r.rank_label) for r in rows] == [(2, False, "2"), (1, False, "1")]
    # exactly at alpha: not below it, no separation; just under and just over 10/101 = 0.09901
    assign_ranks(rows, boot, higher_better=True, alpha=10 / 101)
    assert [r.rank for r in rows] == [1, 1]
    assign_ranks(rows, boot, higher_better=True, alpha=0.0990)
    assert [r.rank for r in rows] == [1, 1]
    assign_ranks(rows, boot, higher_better=True, alpha=0.0991)
    assert [r.rank for r in rows] == [2, 1]


def test_holm_counts_every_pair_on_the_board() -> None:
    # three rows; rows 1 and 2 beat row 0 with p = 2 x 3/101 = 0.0594 each, and tie each other (p = 1). Holm over the
    # three pairs: sorted 0.0594, 0.0594, 1: adjusted 3 x 0.0594 = 0.178, max(0.178, 2 x 0.0594) = 0.178, 1
    separated = np.r_[np.zeros(3), np.ones(98)]
    boot = np.stack([np.zeros(101), separated, separated])
    rows = _rows(3)
    assign_ranks(rows, boot, higher_better=True, alpha=0.1)  # 0.178 > 0.1: no separation
    assert [r.rank_label for r in rows] == ["1=", "1=", "1="]
    assign_ranks(rows, boot, higher_better=True, alpha=0.18)
    assert [r.rank_label for r in rows] == ["3", "1=", "1="]
    # the same pair alone (two rows) separates at 0.1: the family is what made the difference
    two = _rows(2)
    assign_ranks(two, boot[:2], higher_better=True, alpha=0.1)
    assert [r.rank for r in two] == [2, 1]
    assert pair_p(np.array([np.nan])) is None and pair_p(np.array([0.0, 0.0])) == 1.0


def test_lower_is_better_turns_the_difference_round() -> None:
    # row 1 is higher everywhere: better when higher is better, worse when lower is
    boot = np.stack([np.zeros(20), np.full(20, 0.5)])
    rows = _rows(2)
    assign_ranks(rows, boot, higher_better=True, alpha=0.05)
    assert [r.rank for r in rows] == [2, 1]
    assign_ranks(rows, boot, higher_better=False, alpha=0.05)
    assert [r.rank for r in rows] == [1, 2]


def test_a_rank_counts_the_rows_significantly_better_and_ties_share_it() -> None:
    # A 3 everywhere; B 2 or 4 (A - B: +1 or -1, not separated); C 0: A and B both beat C everywhere
    # ranks: A 1 (none better), B 1 (A does not beat it), C 1 + 2 = 3; A and B share rank 1
    n = 40
    boot = np.stack([np.full(n, 3.0), np.tile([2.0, 4.0], n // 2), np.zeros(n)])
    rows = _rows(3)
    assign_ranks(rows, boot, higher_better=True, alpha=0.05)
    assert [r.rank_label for r in rows] == ["1=", "1=", "3"]
    # a difference with no finite resample separates nothing; NaN resamples are left out of the others
    boot = np.stack([np.full(n, np.nan), np.zeros(n), np.r_[np.full(n - 1, 1.0), np.nan]])
    assign_ranks(rows, boot, higher_better=True, alpha=0.05)
    assert [r.rank_label for r in rows] == ["1=", "2", "1="]
    # one row: rank 1, not shared
    one = _rows(1)
    assign_ranks(one, np.zeros((1, 5)), higher_better=True, alpha=0.05)
    assert one[0].rank_label == "1"


# --- the board --------------------------------------------------------------------------------------------------------


def test_a_board_ranks_ties_and_intervals_by_hand() -> None:
    # good and twin answer every case right: accuracy 1 in every resample; bad every case wrong: 0 in every resample.
    # good - twin is 0 everywhere: not separated (1=); each beats bad everywhere: bad's rank is 1 + 2 = 3
    runs = [run("good", RIGHT, f1=1.0), run("bad", WRONG, f1=0.0), run("twin", RIGHT, f1=1.0)]
    board = build_board(runs, metric="accuracy", include_incomplete=False, n_boot=50, seed=0, alpha=0.05)
    assert [(r.detector, r.rank_label) for r in board.rows] == [("good", "1="), ("twin", "1="), ("bad", "3")]
    assert [r.ci95 for r in board.rows] == [(1.0, 1.0), (1.0, 1.0), (0.0, 0.0)]
    assert board.rows[0].cis == {"accuracy": (1.0, 1.0)}  # no origins: no _real interval
    assert board.method == {"bootstrap_resamples": 50, "seed": 0, "alpha": 0.05, "include_incomplete": False}
    assert board.dataset == {"name": "toy", "sha256": "a" * 64, "cases": 4}
    assert board.metric == "accuracy" and board.real_cases is None and board.natural_cases is None
    # macro-F1 averages over the classes of the whole data set, so a resample that lacks a class scores 0 for it:
    # good's macro-F1 is at least 1/3 in every resample (one class present, all right), bad's 0: still 1=, 1=, 3
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=50, seed=0, alpha=0.05)
    assert [r.rank_label for r in board.rows] == ["1=", "1=", "3"] and board.rows[2].ci95 == (0.0, 0.0)
    assert board.rows[0].ci95[0] >= 1 / 3  # type: ignore[index]
    assert all(r.values["vote_margin"] is None for r in board.rows)  # no builtin:vote run on the board


def test_the_interval_is_the_paired_bootstrap_of_the_representatives() -> None:
    # "mid" misses c2 (high called low); its interval over 300 resamples, seed 4, against paired_headline itself
    mid = [0, 0, 2, 1]
    runs = [run("good", RIGHT), run("mid", mid)]
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=300, seed=4, alpha=0.05)
    _, boots = paired_headline(np.array(Y), [np.array(RIGHT), np.array(mid)], n_boot=300, seed=4)
    by_name = {r.detector: r for r in board.rows}
    assert by_name["mid"].ci95 == pytest.approx(finite_interval(boots["macro_f1"][1]))
    assert by_name["good"].ci95 == pytest.approx(finite_interval(boots["macro_f1"][0]))
    assert by_name["mid"].ci95 != by_name["good"].ci95
    # some resamples leave c2 out (the two tie there): mid is not significantly worse on 4 cases: both 1=
    assert [r.rank_label for r in board.rows] == ["1=", "1="]


def test_the_median_run_represents_a_detector_on_the_board() -> None:
    # "d" ran three times; its metrics.json figures 0.9, 0.3, 0.6: the 0.6 run represents it, and that run is the one
    # answering every case right: its interval is [1, 1], and it beats "bad" (all wrong)
    runs = [run("d", WRONG, f1=0.9), run("d", WRONG, f1=0.3), run("d", RIGHT, f1=0.6), run("bad", WRONG, f1=0.0)]
    board = build_board(runs, metric="accuracy", include_incomplete=False, n_boot=50, seed=0, alpha=0.05)
    d = next(r for r in board.rows if r.detector == "d")
    assert d.representative is runs[2] and d.ci95 == (1.0, 1.0) and d.rank_label == "1"
    assert d.values["accuracy"] == 0.6 and len(d.runs) == 3
    assert [r.detector for r in board.rows] == ["d", "bad"]


def test_the_rank_orders_rows_before_their_figure() -> None:
    # "good" answers right (rank 1) but its metrics.json median reads 0.2; "bad" answers wrong (rank 2) and reads
    # 0.9: the rank, from the paired bootstrap, decides the order, not the median figure
    runs = [run("bad", WRONG, f1=0.9), run("good", RIGHT, f1=0.2)]
    board = build_board(runs, metric="accuracy", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    assert [(r.detector, r.rank_label, r.values["accuracy"]) for r in board.rows] == [("good", "1", 0.2),
                                                                                      ("bad", "2", 0.9)]  # fmt: skip


def test_rows_of_one_rank_are_ordered_by_their_value() -> None:
    # b, a and c identical on the cases (all right): one shared rank; shown by their macro-F1 figure, highest first
    runs = [run("a", f1=0.5), run("b", f1=0.9), run("c", f1=0.7)]
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    assert [r.detector for r in board.rows] == ["b", "c", "a"]
    # lower is better: the lowest first
    runs = [run("a", metrics={"false_alarm_rate": 0.5}), run("b", metrics={"false_alarm_rate": 0.1}),
            run("c", metrics={"false_alarm_rate": 0.3})]  # fmt: skip
    board = build_board(runs, metric="false_alarm_rate", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    assert [r.detector for r in board.rows] == ["b", "c", "a"]
    # a row without the figure shows after those with one (as 0), whichever way the metric points
    runs = [run("a", f1=None), run("b", f1=0.9), run("c", f1=0.2)]
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    assert [r.detector for r in board.rows] == ["b", "c", "a"]


def test_the_vote_margin_over_the_builtin_vote_run() -> None:
    # vote all wrong (accuracy 0), good all right (1): good's margin 1 - 0 = 1, its interval [1, 1]; the vote row's
    # own margin 0 and no interval
    runs = [run("vote", WRONG, spec="builtin:vote"), run("good", RIGHT)]
    board = build_board(runs, metric="accuracy", include_incomplete=False, n_boot=40, seed=0, alpha=0.05)
    by_name = {r.detector: r for r in board.rows}
    assert by_name["good"].values["vote_margin"] == 1.0 and by_name["good"].cis["vote_margin"] == (1.0, 1.0)
    assert by_name["vote"].values["vote_margin"] == 0.0 and by_name["vote"].cis["vote_margin"] is None
    # the margin is new minus vote: a detector below the vote has a negative margin
    runs = [run("vote", RIGHT, spec="builtin:vote"), run("bad", WRONG)]
    board = build_board(runs, metric="accuracy", include_incomplete=False, n_boot=40, seed=0, alpha=0.05)
    by_name = {r.detector: r for r in board.rows}
    assert by_name["bad"].values["vote_margin"] == -1.0 and by_name["bad"].cis["vote_margin"] == (-1.0, -1.0)


def test_incomplete_runs_are_left_out_or_unranked() -> None:
    # d: one complete run (all right) and one incomplete (all wrong): the row is the complete run's, left_out 1;
    # e: only an incomplete run: a row without a rank after the ranked ones
    runs = [run("d", RIGHT, f1=1.0), run("d", WRONG, f1=0.0, complete=False), run("e", RIGHT, f1=1.0, complete=False),
            run("a", WRONG, f1=0.0)]  # fmt: skip
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=30, seed=0, alpha=0.05)
    assert board.rows[2].ci95 is None and board.rows[2].cis == {}  # an unranked row has no interval
    assert [(r.detector, r.rank_label, r.incomplete, r.left_out) for r in board.rows] == [
        ("d", "1", False, 1),
        ("a", "2", False, 0),
        ("e", "-", True, 0),
    ]
    assert board.rows[0].runs == [runs[0]]
    # with --include-incomplete: every run counts; d's row is marked incomplete, e is ranked
    board = build_board(runs, metric="macro_f1", include_incomplete=True, n_boot=30, seed=0, alpha=0.05)
    by_name = {r.detector: r for r in board.rows}
    assert (by_name["d"].incomplete, by_name["d"].left_out, len(by_name["d"].runs)) == (True, 0, 2)
    assert (by_name["e"].incomplete, by_name["e"].rank) == (True, 1)
    assert by_name["a"].incomplete is False
    assert board.method["include_incomplete"] is True


def test_two_fingerprints_of_one_name_are_two_rows() -> None:
    one, two = {"kind": "python", "sha256": "1"}, {"kind": "python", "sha256": "2"}
    runs = [run("d", fingerprint=one, f1=0.9), run("d", fingerprint=two, f1=0.8), run("e", fingerprint=one)]
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    fp1, fp2 = runs[0].fingerprint_id, runs[1].fingerprint_id
    assert len(fp1) == 8 and fp1 != fp2
    by_name = {r.detector: r for r in board.rows}
    assert set(by_name) == {f"d [{fp1}]", f"d [{fp2}]", "e"}
    note = "d ran as 2 different detectors (code fingerprints differ: an edited file, or another detector at the same URL); their runs are not merged"  # noqa: E501
    assert by_name[f"d [{fp1}]"].note == note and by_name[f"d [{fp1}]"].fingerprint_id == fp1
    assert by_name["e"].note == "" and by_name["e"].fingerprint_id == runs[2].fingerprint_id
    # both notes together: the fingerprints first, then the ECE bins
    runs = [run("d", fingerprint=one, ece=(0.1, 10)), run("d", fingerprint=one, ece=(0.2, 5)),
            run("d", fingerprint=two)]  # fmt: skip
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    row = next(r for r in board.rows if r.detector == f"d [{fp1}]")
    assert (
        row.note
        == f"{note}. the runs of d [{fp1}] binned their ECE differently (fcb eval --ece-bins): no median is shown"
    )
    # an unranked (incomplete) row of a name with two fingerprints carries the note too
    runs = [run("d", fingerprint=one), run("d", fingerprint=two, complete=False)]
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=20, seed=0, alpha=0.05)
    assert [r.note for r in board.rows] == [note, note] and board.rows[1].fingerprint_id == fp2


def test_the_card_counts_cases_by_category_and_origin() -> None:
    # union of the runs' cases: c1..c4 (one run lacks c4); x: low, high; y: high, medium
    runs = [run("a", origins=["natural", "assembled", "synthetic", "natural"]),
            run("b", ids=IDS[:3], origins=["natural", "assembled", "synthetic"])]  # fmt: skip
    board = build_board(runs, metric="macro_f1", include_incomplete=False, n_boot=10, seed=0, alpha=0.05)
    assert board.card == {
        "cases": 4,
        "by_category": {"x": {"low": 1, "medium": 0, "high": 1}, "y": {"low": 0, "medium": 1, "high": 1}},
        "by_origin": {"assembled": 1, "natural": 2, "synthetic": 1},
        "real_cases": 3,
        "natural_cases": 2,
    }
    assert (board.real_cases, board.natural_cases) == (3, 2)
    without = build_board([run("a")], metric="macro_f1", include_incomplete=False, n_boot=10, seed=0, alpha=0.05)
    assert without.card == {"cases": 4, "by_category": {"x": {"low": 1, "medium": 0, "high": 1},
                                                          "y": {"low": 0, "medium": 1, "high": 1}}}  # fmt: skip


def test_the_card_counts_every_case_of_a_category() -> None:
    # six cases: x holds three lows and a high, y a medium and a high
    ids = np.array(["a", "b", "c", "d", "e", "f"], dtype=object)
    y = np.array([0, 0, 2, 0, 1, 2])
    cats = np.array(["x", "x", "x", "x", "y", "y"], dtype=object)
    doc = {"detector": {"spec": "d"}, "dataset": {"name": "six", "sha256": "b" * 64, "cases": 6},
           "created": "2026-12-01T00:00:00Z", "complete": True, "metrics": {"n_cases": 6, "macro_f1": 1.0}}  # fmt: skip
    r = Run(Path("runs/six"), doc, ids, cats, y, y)  # type: ignore[arg-type]
    board = build_board([r], metric="macro_f1", include_incomplete=False, n_boot=10, seed=0, alpha=0.05)
    assert board.card == {
        "cases": 6,
        "by_category": {"x": {"low": 3, "medium": 0, "high": 1}, "y": {"low": 0, "medium": 1, "high": 1}},
    }


def test_ranking_on_the_real_cases() -> None:
    # c3 is synthetic; "slip" is wrong on c3 alone. On all cases a resample without c3 ties them: no separation on
    # four cases; on the real cases (c1, c2, c4) both are right everywhere: accuracy 1 in every resample, 1= for sure
    origins = ["natural", "assembled", "synthetic", "natural"]
    slip = [0, 2, 0, 1]
    runs = [run("good", RIGHT, origins=origins, metrics={"headline_real": {"accuracy": 1.0}}),
            run("slip", slip, origins=origins, metrics={"headline_real": {"accuracy": 1.0}})]  # fmt: skip
    board = build_board(runs, metric="accuracy_real", include_incomplete=False, n_boot=60, seed=2, alpha=0.05)
    assert [r.rank_label for r in board.rows] == ["1=", "1="]
    good, bad = board.rows
    assert good.ci95 == (1.0, 1.0) and good.cis["accuracy_real"] == (1.0, 1.0)
    assert set(good.cis) == {"accuracy", "accuracy_real", "accuracy_natural"}
    # the natural cases c1 and c4: both right in both runs
    assert bad.cis["accuracy_natural"] == (1.0, 1.0)
    # on all cases: slip's interval against paired_headline over the four cases (seeded alike)
    _, boots = paired_headline(np.array(Y), [np.array(RIGHT), np.array(slip)], n_boot=60, seed=2)
    assert bad.cis["accuracy"] == pytest.approx(finite_interval(boots["accuracy"][1]))
    assert bad.cis["accuracy"][0] < 1.0  # type: ignore[index]
    assert bad.ci95 == bad.cis["accuracy_real"] == (1.0, 1.0)
    assert "note" not in board.method
    # on all cases with c3 the only difference, a 3-row board where "bad" (all wrong) trails: ranked on the real
    # cases, good and slip share 1 and bad is 3; the margin over the vote is on all cases
    runs.append(run("vote", WRONG, spec="builtin:vote", origins=origins, metrics={"headline_real": {"accuracy": 0.0}}))
    board = build_board(runs, metric="accuracy_real", include_incomplete=False, n_boot=60, seed=2, alpha=0.05)
    assert [(r.detector, r.rank_label) for r in board.rows] == [("good", "1="), ("slip", "1="), ("vote", "3")]
    assert board.rows[1].values["vote_margin"] == 0.75  # slip 3/4 - vote 0 on all four cases
    assert board.rows[1].cis["vote_margin"] == pytest.approx(finite_interval(boots["accuracy"][1]))


def test_ranking_on_the_real_cases_without_any_leaves_every_row_unranked() -> None:
    board = build_board([run("a"), run("b", WRONG)], metric="accuracy_real", include_incomplete=False, n_boot=10,
                        seed=0, alpha=0.05)  # fmt: skip
    assert board.method["note"] == "no natural or assembled case in this data set: nothing to rank on"
    assert [r.rank_label for r in board.rows] == ["-", "-"] and [r.ci95 for r in board.rows] == [None, None]
    assert board.rows[0].cis == {"accuracy": (1.0, 1.0)}
    # origins that are all synthetic: the same, although the cases carry tags
    runs = [run("a", origins=["synthetic"] * 4), run("b", WRONG, origins=["synthetic"] * 4)]
    board = build_board(runs, metric="accuracy_real", include_incomplete=False, n_boot=10, seed=0, alpha=0.05)
    assert board.real_cases == 0 and board.method["note"].startswith("no natural or assembled case")
    assert [r.rank for r in board.rows] == [None, None]
    assert board.rows[0].cis == {"accuracy": (1.0, 1.0)}
    # ranked on all cases, the same board has ranks and no note
    board = build_board(runs, metric="accuracy", include_incomplete=False, n_boot=10, seed=0, alpha=0.05)
    assert [r.rank_label for r in board.rows] == ["1", "2"] and "note" not in board.method


def test_build_boards_one_per_data_set_largest_first() -> None:
    runs = [
        run("a", sha="1" * 64, dataset="small", cases=4),
        run("a", sha="2" * 64, dataset="big", cases=9),
        run("b", sha="1" * 64, dataset="small", cases=4),
        run("a", sha="3" * 64, dataset="also", cases=4),
    ]
    boards = build_boards(runs, n_boot=10)
    assert [b.dataset["name"] for b in boards] == ["big", "also", "small"]  # 9 cases first; then 4, by name
    assert [len(b.rows) for b in boards] == [1, 1, 2]
    assert boards[0].metric == "macro_f1" and boards[0].method == {
        "bootstrap_resamples": 10, "seed": 0, "alpha": 0.05, "include_incomplete": False
    }  # fmt: skip
    defaults = build_boards([run("a")])[0].method
    assert defaults == {"bootstrap_resamples": 1000, "seed": 0, "alpha": 0.05, "include_incomplete": False}
    chosen = build_boards([run("a", complete=False)], metric="accuracy", include_incomplete=True, n_boot=5, seed=3,
                          alpha=0.1)[0]  # fmt: skip
    assert chosen.metric == "accuracy" and chosen.rows[0].rank == 1
    assert chosen.method == {"bootstrap_resamples": 5, "seed": 3, "alpha": 0.1, "include_incomplete": True}
    with pytest.raises(UsageError) as raised:
        build_boards([run("a")], metric="f1")
    assert str(raised.value) == f"--metric 'f1': choose from {', '.join(RANK_METRICS)}"


def test_a_rows_cases_are_its_representatives_even_when_it_is_not_the_first_run() -> None:
    """Runs a (7 cases, 2 Nov) and b (9 cases, 9 Nov), b representing the row: cases 9 (b's, not the first run's 7);
    the date is the later of the two, 9 Nov, whichever run represents the row."""
    a = run("d", created="2026-11-02T00:00:00Z", metrics={"n_cases": 7})
    b = run("d", created="2026-11-09T00:00:00Z", metrics={"n_cases": 9})
    row = Row("d", [a, b], {}, b, incomplete=False)
    assert (row.cases, row.date) == (9, "2026-11-09T00:00:00Z")


def test_a_baseline_file_has_no_aurc_and_a_run_folder_its_median() -> None:
    from dataclasses import replace

    folder = run("d")
    doc = {**folder.doc, "metrics": {**folder.doc["metrics"], "operating_points": {"risk_coverage": {"aurc": 0.3}}}}
    with_scores = replace(folder, doc=doc, scores=np.zeros(len(folder.ids)))  # type: ignore[arg-type]
    baseline = replace(with_scores, scores=None)
    assert make_row("d", [with_scores], "macro_f1", False).values["aurc"] == 0.3
    assert make_row("d", [baseline], "macro_f1", False).values["aurc"] is None
    assert make_row("d", [with_scores, baseline], "macro_f1", False).values["aurc"] == 0.3  # the folder's alone
