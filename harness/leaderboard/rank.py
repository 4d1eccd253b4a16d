"""Rank detectors from their runs: one board per data set, medians over repeated runs, ranks the data supports.

A detector's rank is 1 + the number of detectors that are significantly better on a paired bootstrap over the
shared cases, the pairs' p-values adjusted by Holm's step-down over every pair on the board (`assign_ranks`). Two
detectors that no test separates can therefore share a rank (shown as ``2=``), and the table never claims an order
the data does not support.

When the cases carry origin tags, every board also shows the ranking metric on the natural and assembled cases
alone (``macro_f1_real``), with its own paired-bootstrap interval, so constructed cases never carry a ranking on
their own; ``metric="macro_f1_real"`` ranks on that subset.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from harness.documents import BoardCard, BoardDataset, BoardMethod
from harness.errors import UsageError
from harness.leaderboard.noise import holm
from harness.leaderboard.runs import (
    NATURAL_SUFFIX,
    REAL_SUFFIX,
    Run,
    align,
    aligned_clusters,
    aligned_origins,
    natural_mask,
    real_mask,
)
from harness.metrics import HEADLINE_METRICS, cluster_codes, finite_interval, paired_headline

COLUMNS = ("accuracy", "high_risk_recall", "false_alarm_rate", "weighted_kappa", "error_rate")
LATENCY = "operational.latency_s.p95"
ECE = "ece"
ECE_BINS = "ece_bins"
"""Row values: the median ECE of risk_score over a detector's runs (checked against their journals) and its bins."""
REPEATS: dict[str, str] = {
    "epoch_sd": "epochs.spread.macro_f1.sd",
    "self_agreement": "epochs.self_agreement.all_agree",
    "order_flip_rate": "probes.order.flip_rate",
    "names_flip_rate": "probes.names.flip_rate",
    "evidence_order_flip_rate": "probes.evidence-order.flip_rate",
    "format_flip_rate": "probes.format.flip_rate",
    "tone_flip_rate": "probes.tone.flip_rate",
    "length_flip_rate": "probes.length.flip_rate",
    "restate_flip_rate": "probes.restate.flip_rate",
    "inject_attack_success": "probes.inject.falls.fall_rate",
    "duplicate_fall_rate": "probes.duplicate.falls.fall_rate",
    "escalation_rate_high": "operating_points.policies.high.escalation_rate",
    "escalation_rate_medium_high": "operating_points.policies.high_or_medium.escalation_rate",
    "caught_medium_high": "operating_points.policies.high_or_medium.false_consensus_caught",
    "aurc": "operating_points.risk_coverage.aurc",
}
"""Row values from runs with --epochs or --probe (checked against their journals): the sd of macro-F1 over a run's
epochs, the share of cases whose epochs all agree, each probe's figure (the robustness card: a flip rate, inject's
attack success rate, duplicate's fall rate on high); and every run's operating points: escalating the verdicts
called high, the share of cases escalated; called medium or high, the share escalated and of false consensus caught;
and the AURC (`harness.operating`; a
baseline file keeps no scores: no AURC); medians over the runs. Escalating high catches high_risk_recall of the
false consensus and escalates false_alarm_rate of the right: those columns already show it."""
RUNS_MIN, RUNS_MAX = "runs_min", "runs_max"
"""Row values: the lowest and highest ranking metric over a detector's runs (None for one run): the spread that
repeated runs show beside their median."""
CONSENSUS = "consensus.balanced_accuracy"
"""Row value: the median over the runs of their balanced accuracy on the cases with a consensus (``consensus`` in
metrics.json: wrong consensus called high, right consensus not); None for runs written before the block existed."""
VOTE = "builtin:vote"
VOTE_MARGIN = "vote_margin"
"""Row value: the ranking metric's base on all cases less that of the board's ``builtin:vote`` run (the vote count, the
floor a detector is read against), on the representative runs, with its paired-bootstrap interval in ``cis``; None
when the board holds no such run."""
RANK_METRICS: tuple[str, ...] = (*HEADLINE_METRICS, *(f"{m}{REAL_SUFFIX}" for m in HEADLINE_METRICS))
"""Metrics a board can be ranked on: the headline ones on all cases, and on the natural + assembled cases."""


def natural_of(metric: str) -> str:
    """The metric on the natural cases alone: a column beside the ranking, never a ranking of its own."""
    return f"{metric_pair(metric)[0]}{NATURAL_SUFFIX}"


def metric_pair(metric: str) -> tuple[str, str]:
    """The metric on all cases and on the natural + assembled ones, whichever of the two ``metric`` names."""
    base = metric.removesuffix(REAL_SUFFIX)
    return base, f"{base}{REAL_SUFFIX}"


@dataclass
class Row:
    """One detector on one data set."""

    detector: str
    runs: list[Run]
    values: dict[str, float | None]  # medians over the runs
    representative: Run  # the run whose primary metric is the median, used for the paired bootstrap
    incomplete: bool
    left_out: int = 0  # incomplete runs of this detector not counted in the row
    fingerprint_id: str = ""  # the detector code's fingerprint digest shared by these runs
    note: str = ""  # why this detector has more than one row
    ci95: tuple[float, float] | None = None  # of the ranking metric
    cis: dict[str, tuple[float, float] | None] = field(default_factory=dict)  # of both metrics of `metric_pair`
    rank: int | None = None
    shared_rank: bool = False

    @property
    def rank_label(self) -> str:
        if self.rank is None:
            return "-"
        return f"{self.rank}=" if self.shared_rank else str(self.rank)

    @property
    def date(self) -> str:
        return max(r.created for r in self.runs)

    @property
    def cases(self) -> int:
        return int(self.representative.doc["metrics"]["n_cases"])


@dataclass
class Board:
    """The ranking for one data set; ``rows`` are ranked first, then the unranked (incomplete) ones."""

    dataset: BoardDataset
    metric: str
    method: BoardMethod
    card: BoardCard
    rows: list[Row] = field(default_factory=list)
    real_cases: int | None = None  # natural + assembled cases; None when no case carries an origin tag
    natural_cases: int | None = None  # natural cases alone; None when no case carries an origin tag


def _median(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def make_row(detector: str, runs: list[Run], metric: str, incomplete: bool) -> Row:
    """A row from a detector's runs: every column is the median over them."""
    names = (*metric_pair(metric), natural_of(metric), *COLUMNS, LATENCY, CONSENSUS)
    values = {name: _median([r.metric(name) for r in runs]) for name in names}
    values |= _ece_values(runs)
    values |= {key: _median([r.metric(path) for r in runs if key != "aurc" or r.scores is not None])
               for key, path in REPEATS.items()}  # fmt: skip  # a baseline's AURC is not checked (no scores): none
    values |= _run_spread(runs, metric)
    values[VOTE_MARGIN] = None  # set by `_rank` when the board holds a builtin:vote run
    higher_better = HEADLINE_METRICS.get(metric_pair(metric)[0], True)
    ordered = sorted(runs, key=lambda r: (r.metric(metric) is None, r.metric(metric) or 0.0), reverse=not higher_better)
    row = Row(detector, runs, values, ordered[(len(ordered) - 1) // 2], incomplete)
    if values[ECE] is None and len({bins for _, bins in filter(None, (r.ece() for r in runs))}) > 1:
        row.note = f"the runs of {detector} binned their ECE differently (fcb eval --ece-bins): no median is shown"
    return row


def _run_spread(runs: list[Run], metric: str) -> dict[str, float | None]:
    """The lowest and highest ``metric`` over two or more runs; None for both with one run (or none defined)."""
    found = [v for v in (r.metric(metric) for r in runs) if v is not None]
    if len(runs) < 2 or not found:
        return {RUNS_MIN: None, RUNS_MAX: None}
    return {RUNS_MIN: min(found), RUNS_MAX: max(found)}


def _ece_values(runs: list[Run]) -> dict[str, float | None]:
    """The median ECE over the runs that report one, and its bin count; None for both when there is none, or when
    the runs used different bin counts (a median of figures over different bins would mean nothing)."""
    found = [e for e in (r.ece() for r in runs) if e is not None]
    bins = {b for _, b in found}
    if len(bins) != 1:
        return {ECE: None, ECE_BINS: None}
    return {ECE: statistics.median(e for e, _ in found), ECE_BINS: bins.pop()}


def pair_p(diff: np.ndarray) -> float | None:
    """The two-sided bootstrap p-value of a difference (row j - row i, signed so that positive is better for j):
    twice the smaller share of finite resamples on either side of zero (a resample at zero counts on both), at most
    1; None without a finite resample."""
    finite = diff[np.isfinite(diff)]
    if not len(finite):
        return None
    return float(min(1.0, 2 * min(np.mean(finite <= 0), np.mean(finite >= 0))))


def assign_ranks(rows: list[Row], boot: np.ndarray, *, higher_better: bool, alpha: float) -> None:
    """Rank rows from their bootstrap metric values (shape rows x resamples, drawn on the same case resamples): row j
    is significantly better than row i when the pair's two-sided p-value (`pair_p`), adjusted by Holm's step-down
    over every pair compared, is below ``alpha`` and the resamples favour j. Holm holds the chance of any false
    separation on the board at ``alpha`` whatever the pairs' dependence."""
    sign = 1.0 if higher_better else -1.0
    k = len(rows)
    pvalues: dict[str, float] = {}
    favoured: dict[str, int] = {}
    for i in range(k):
        for j in range(i + 1, k):
            diff = sign * (boot[j] - boot[i])
            if (p := pair_p(diff)) is not None:
                pvalues[f"{i},{j}"] = p
                finite = diff[np.isfinite(diff)]
                favoured[f"{i},{j}"] = j if np.mean(finite > 0) > np.mean(finite < 0) else i
    adjusted = holm(pvalues)
    better = np.zeros((k, k), dtype=bool)  # better[i, j]: row j is significantly better than row i
    for pair, p in adjusted.items():
        i, j = map(int, pair.split(","))
        if p < alpha:
            winner = favoured[pair]
            better[i + j - winner, winner] = True
    for i, row in enumerate(rows):
        row.rank = 1 + int(better[i].sum())
    counts: defaultdict[int | None, int] = defaultdict(int)
    for row in rows:
        counts[row.rank] += 1
    for row in rows:
        row.shared_rank = counts[row.rank] > 1


def _card(runs: list[Run]) -> BoardCard:
    ids, categories, y_true, _ = align(runs)
    by_cat: dict[str, dict[str, int]] = defaultdict(lambda: {"low": 0, "medium": 0, "high": 0})
    for cat, truth in zip(categories, y_true, strict=True):
        by_cat[str(cat)][("low", "medium", "high")[truth]] += 1
    card: BoardCard = {"cases": len(ids), "by_category": dict(sorted(by_cat.items()))}
    if (origins := aligned_origins(runs, ids)) is not None:
        names, counts = np.unique(origins.astype(str), return_counts=True)
        card["by_origin"] = {str(k): int(v) for k, v in zip(names, counts, strict=True)}
        card["real_cases"] = int(real_mask(origins).sum())
        card["natural_cases"] = int(natural_mask(origins).sum())
    return card


def build_board(
    runs: list[Run], *, metric: str, include_incomplete: bool, n_boot: int, seed: int, alpha: float
) -> Board:
    """The board for runs that share one data set."""
    first = runs[0]
    board = Board(
        dataset={"name": first.dataset["name"], "sha256": first.sha256, "cases": first.dataset["cases"]},
        metric=metric,
        method={"bootstrap_resamples": n_boot, "seed": seed, "alpha": alpha, "include_incomplete": include_incomplete},
        card=_card(runs),
    )
    board.real_cases = board.card.get("real_cases")
    board.natural_cases = board.card.get("natural_cases")
    # one row per detector name and code fingerprint: a median never mixes two different detectors' runs
    by_detector: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for run in runs:
        by_detector[(run.label, run.fingerprint_id)].append(run)
    versions: defaultdict[str, int] = defaultdict(int)
    for label, _ in by_detector:
        versions[label] += 1
    ranked, unranked = [], []
    for (label, fp_id), group in sorted(by_detector.items()):
        shown = f"{label} [{fp_id}]" if versions[label] > 1 else label
        usable = group if include_incomplete else [r for r in group if r.complete]
        if usable:
            row = make_row(shown, usable, metric, incomplete=not all(r.complete for r in usable))
            row.left_out = len(group) - len(usable)
            ranked.append(row)
        else:
            row = make_row(shown, group, metric, incomplete=True)
            unranked.append(row)
        row.fingerprint_id = fp_id
        if versions[label] > 1:
            merged = (
                f"{label} ran as {versions[label]} different detectors (code fingerprints differ: an edited file, "
                f"or another detector at the same URL); their runs are not merged"
            )
            row.note = f"{merged}. {row.note}" if row.note else merged
    if ranked:
        _rank(ranked, metric, n_boot=n_boot, seed=seed, alpha=alpha)
    if metric.endswith(REAL_SUFFIX) and not board.real_cases:
        board.method["note"] = "no natural or assembled case in this data set: nothing to rank on"
    higher_better = HEADLINE_METRICS[metric_pair(metric)[0]]

    def order(r: Row) -> tuple[bool, int, float]:
        value = r.values[metric] or 0.0
        return (r.rank is None, r.rank or 0, -value if higher_better else value)

    ranked.sort(key=order)
    board.rows = ranked + unranked
    return board


def _rank(rows: list[Row], metric: str, *, n_boot: int, seed: int, alpha: float) -> None:
    """Paired-bootstrap intervals of both metrics of `metric_pair` and ranks on ``metric``.

    Without natural or assembled cases, the ``_real`` metric has no interval, and ranking on it leaves every
    row without a rank.
    """
    representatives = [r.representative for r in rows]
    ids, _, y_true, preds = align(representatives)
    groups = aligned_clusters(representatives, ids)
    base, real = metric_pair(metric)
    subsets = {base: np.ones(len(ids), dtype=bool)}
    if (origins := aligned_origins(representatives, ids)) is not None:
        subsets[real] = real_mask(origins)
        subsets[natural_of(metric)] = natural_mask(origins)
    for name, mask in subsets.items():
        if not mask.any():
            continue
        truth, subset_preds = y_true[mask], [p[mask] for p in preds]
        clusters = cluster_codes(groups[mask].tolist())
        points, boots = paired_headline(truth, subset_preds, n_boot=n_boot, seed=seed, clusters=clusters)
        values = boots[base]  # rows x resamples
        for row, v in zip(rows, values, strict=True):
            row.cis[name] = finite_interval(v)
        if name == metric:
            assign_ranks(rows, values, higher_better=HEADLINE_METRICS[base], alpha=alpha)
        if name == base:
            _vote_margins(rows, points[base], values)
    for row in rows:
        row.ci95 = row.cis.get(metric)


def _vote_margins(rows: list[Row], points: np.ndarray, boots: np.ndarray) -> None:
    """Each row's `VOTE_MARGIN` over the first ``builtin:vote`` row: the difference of the representatives' values and
    its interval over the same paired resamples (none for the vote row itself)."""
    vote = next((k for k, r in enumerate(rows) if r.representative.detector == VOTE), None)
    if vote is None:
        return
    for k, row in enumerate(rows):
        row.values[VOTE_MARGIN] = float(points[k] - points[vote])
        row.cis[VOTE_MARGIN] = None if k == vote else finite_interval(boots[k] - boots[vote])


def build_boards(
    runs: list[Run],
    *,
    metric: str = "macro_f1",
    include_incomplete: bool = False,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> list[Board]:
    """One board per data set (by sha256), largest first."""
    if metric not in RANK_METRICS:
        raise UsageError(f"--metric {metric!r}: choose from {', '.join(RANK_METRICS)}")
    by_sha: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_sha[run.sha256].append(run)
    boards = [
        build_board(group, metric=metric, include_incomplete=include_incomplete, n_boot=n_boot, seed=seed, alpha=alpha)
        for group in by_sha.values()
    ]
    return sorted(boards, key=lambda b: (-b.dataset["cases"], b.dataset["name"]))
