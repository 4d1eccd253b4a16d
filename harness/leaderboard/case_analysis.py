"""Case-level analysis over several detectors' runs on one data set: per case, how many detectors get it right
(difficulty) and how well being right on it tracks a detector's overall score (discrimination); and the cases
whose label the strongest detectors all dispute with the same prediction (suspect labels: the first place to look
for a label error).

Pure functions over aligned arrays (`harness.leaderboard.runs.align`): ``right`` is a detectors x cases matrix of
booleans, ``scores`` each detector's headline macro-F1. `case_analysis` checks the runs and puts it all together;
the board can call the parts directly.

An errored prediction is wrong for difficulty and discrimination (as in every metric of a run), is counted apart
(``errored``), and is never "the same prediction" of a suspect: a case that any strongest detector failed on is not
a suspect.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

from harness.documents import (
    CaseAnalysisCase,
    CaseAnalysisDetector,
    CaseAnalysisDocument,
    CaseAnalysisMethod,
    CaseAnalysisSummary,
    CaseAnalysisSuspect,
)
from harness.errors import IncomparableRuns, RunLoadError, UsageError
from harness.files import shell_path
from harness.leaderboard.runs import Run, align, aligned_origins
from harness.metrics import ERROR
from harness.types import RISKS

SCORE = "macro_f1"
"""Each detector's overall score: its run's headline macro-F1 over all its cases."""
DEFAULT_STRONGEST = 3
LETTERS = "lmhe"  # a prediction as one letter: low, medium, high, error
ORIGINS = ("natural", "assembled", "constructed")

DEFINITIONS = {
    "difficulty": "the share of detectors whose prediction equals the label (1: every detector right)",
    "discrimination": (
        "the point-biserial correlation (Pearson's r, scipy.stats.pearsonr) between being right on the case (1/0) "
        "and each detector's headline macro-F1 over all its cases (the case included); null when every detector "
        "is right, every one is wrong, or all macro-F1 are equal"
    ),
    "suspect": (
        "every one of the strongest detectors (the --strongest best by macro-F1, more on a tie at the boundary) "
        "predicts the same risk, and it is not the label"
    ),
    "errors": (
        "an errored prediction counts as wrong for difficulty and discrimination, is counted in errored, and is "
        "never the same prediction: a case any strongest detector errored on is not a suspect"
    ),
}
"""The definitions the document states beside its figures (``method``)."""


# ---- the pure parts ------------------------------------------------------------------------------------------------


def correct(y_true: np.ndarray, preds: Sequence[np.ndarray]) -> np.ndarray:
    """Detectors x cases: True where a detector's prediction equals the label (an error, code `ERROR`, never does)."""
    return np.array([np.asarray(p) == y_true for p in preds], dtype=bool).reshape(len(preds), len(y_true))


def difficulty(right: np.ndarray) -> np.ndarray:
    """Per case, the share of detectors right."""
    result: np.ndarray = right.mean(axis=0)
    return result


def discrimination(right: np.ndarray, scores: np.ndarray) -> list[float | None]:
    """Per case, the point-biserial correlation between being right on it and the detectors' scores; None where it is
    undefined (every detector right, every one wrong, or all scores equal: a constant has no correlation).

    The point-biserial correlation is Pearson's r with one variable 0/1 (`scipy.stats.pointbiserialr` returns
    `scipy.stats.pearsonr`): one vectorised `pearsonr` over the cases where it is defined takes some 40 ms for 20
    detectors x 10,000 cases, where `pointbiserialr`, which loops over them, took 7.5 s."""
    from scipy.stats import pearsonr

    scores = np.asarray(scores)
    out: list[float | None] = [None] * right.shape[1]
    if len(scores) < 2 or np.ptp(scores) == 0:
        return out
    defined = np.flatnonzero(right.any(axis=0) & ~right.all(axis=0))
    if not len(defined):
        return out
    x = right[:, defined].astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning here would mean a figure we cannot vouch for: a bug
        r = pearsonr(x, np.broadcast_to(scores[:, None], x.shape), axis=0).statistic
    for i, value in zip(defined, np.atleast_1d(r), strict=True):
        out[i] = round(float(value), 12) + 0.0  # a correlation of exactly 0 stays 0, not -5e-17 (a "negative" one)
    return out


def strongest(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` detectors with the highest scores, and of every detector tied with the k-th: which of
    two equal detectors is "stronger" is not ours to pick."""
    scores = np.asarray(scores)
    if not 1 <= k <= len(scores):
        raise ValueError(f"k={k} for {len(scores)} detectors")
    bar = np.sort(scores)[::-1][k - 1]
    return np.flatnonzero(scores >= bar)


def suspect_cases(y_true: np.ndarray, preds: Sequence[np.ndarray], best: np.ndarray) -> np.ndarray:
    """Per case, the prediction (0..2) that every detector of ``best`` made when they all made the same one and it is
    not the label; -1 elsewhere (an error among them, a disagreement, or the label)."""
    stack = np.array([np.asarray(preds[i]) for i in best]).reshape(len(best), len(y_true))
    lowest = stack.min(axis=0)
    same = (lowest == stack.max(axis=0)) & (lowest != ERROR) & (lowest != y_true)
    return np.where(same, lowest, -1)


def suspect_order(ids: np.ndarray, shared: np.ndarray, agreeing: np.ndarray, distance: np.ndarray) -> list[int]:
    """The suspects' positions, most suspect first: more detectors agreeing on the prediction, then a prediction
    farther from the label (low for high is more telling than medium for high), then by id."""
    found = np.flatnonzero(shared >= 0)
    return sorted(found.tolist(), key=lambda i: (-int(agreeing[i]), -int(distance[i]), str(ids[i])))


# ---- the runs checked and the document -----------------------------------------------------------------------------


def check_runs(runs: Sequence[Run], k: int) -> None:
    """Refuse what would give a figure that may be wrong: runs on different data sets or on different cases of one
    (an interrupted run, runs of different --limit), the same detector twice, a run without a macro-F1, fewer runs
    than ``k``. Runs that all stopped at the same cases (the same --limit) are analysed on those cases: each
    detector's macro-F1 is then over those very cases."""
    if k < 2:
        raise UsageError(f"--strongest {k}: at least 2 (one detector alone cannot make a suspect)")
    if len(runs) < k:
        raise UsageError(f"{len(runs)} run(s) given; case-level analysis needs at least --strongest ({k}) runs")
    data_sets: dict[str, Run] = {}
    for run in runs:
        data_sets.setdefault(run.sha256, run)  # the first run of each data set names it
    if len(data_sets) > 1:
        listed = "; ".join(f"{r.path}: {r.dataset['name']} (sha256 {r.sha256[:12]})" for r in data_sets.values())
        raise IncomparableRuns(
            f"the runs are on {len(data_sets)} different data sets ({listed}); case-level analysis compares "
            "detectors on the same cases: give runs of one data set"
        )
    seen: dict[str, Run] = {}
    for run in runs:
        if run.path.is_file():
            raise RunLoadError(f"{run.path}: a baseline file; fcb cases reads run folders")
        if not np.array_equal(run.ids, runs[0].ids):
            only = len(set(runs[0].ids) ^ set(run.ids))
            raise RunLoadError(
                f"{run.path}: {len(run.ids)} of the data set's {run.dataset['cases']} cases, and {only} case(s) "
                f"are in one of it and {runs[0].path} ({len(runs[0].ids)} cases) alone; every run must hold the same "
                f"cases, or a missing case would count as wrong (an interrupted run: fcb eval --resume "
                f"{shell_path(run.path)})"
            )
        if run.metric(SCORE) is None:
            raise RunLoadError(f"{run.path}: metrics.json has no {SCORE}: nothing to rank its detector by")
        if run.label in seen:
            raise UsageError(
                f"two runs of detector {run.label!r} ({seen[run.label].path} and {run.path}); each run counts as "
                "one detector here: give one run per detector, or tell them apart with fcb eval --name"
            )
        seen[run.label] = run


def case_analysis(runs: Sequence[Run], *, k: int = DEFAULT_STRONGEST) -> CaseAnalysisDocument:
    """The case-level analysis of ``runs`` (distinct detectors on the same cases of one data set; `check_runs`)."""
    check_runs(runs, k)
    ids, categories, y_true, preds = align(list(runs))
    origins = aligned_origins(list(runs), ids)
    scores = np.array([run.metric(SCORE) for run in runs], dtype=float)
    stack = np.array(preds).reshape(len(runs), len(ids))
    right, errored = correct(y_true, preds), stack == ERROR
    share, disc = difficulty(right), discrimination(right, scores)
    best = strongest(scores, k)
    shared = suspect_cases(y_true, preds, best)
    agreeing = (stack == shared).sum(axis=0)
    distance = np.abs(shared - y_true)

    def case(i: int) -> CaseAnalysisCase:
        row: CaseAnalysisCase = {
            "id": str(ids[i]),
            "category": str(categories[i]),
            "expected": RISKS[y_true[i]],
            "predicted": "".join(LETTERS[p] for p in stack[:, i]),
            "right": int(right[:, i].sum()),
            "errored": int(errored[:, i].sum()),
            "difficulty": float(share[i]),
            "discrimination": disc[i],
            "suspect": bool(shared[i] >= 0),
        }
        if origins is not None and origins[i] in ORIGINS:
            row["origin"] = origins[i]
        return row

    def suspect(i: int) -> CaseAnalysisSuspect:
        row: CaseAnalysisSuspect = {
            "id": str(ids[i]),
            "category": str(categories[i]),
            "expected": RISKS[y_true[i]],
            "predicted": RISKS[shared[i]],
            "distance": int(distance[i]),
            "agreeing": int(agreeing[i]),
            "difficulty": float(share[i]),
            "discrimination": disc[i],
        }
        if origins is not None and origins[i] in ORIGINS:
            row["origin"] = origins[i]
        return row

    suspects = [suspect(i) for i in suspect_order(ids, shared, agreeing, distance)]
    in_best = set(best.tolist())
    detectors: list[CaseAnalysisDetector] = [
        {"detector": run.label, "spec": run.detector, "run": str(run.path), "macro_f1": float(scores[j]),
         "errors": int(errored[j].sum()), "strongest": j in in_best, "complete": run.complete}
        for j, run in enumerate(runs)
    ]  # fmt: skip
    first = runs[0]
    return {
        "dataset": {"name": first.dataset["name"], "sha256": first.sha256, "cases": first.dataset["cases"]},
        "method": method(k),
        "summary": summary(right, errored, disc, len(best), len(suspects)),
        "detectors": detectors,
        "suspects": suspects,
        "cases": [case(i) for i in range(len(ids))],
    }


def method(k: int) -> CaseAnalysisMethod:
    """How each figure is defined, as the document states it."""
    return {"score": "macro_f1", "strongest_requested": k, **DEFINITIONS}  # type: ignore[typeddict-item]


def summary(
    right: np.ndarray, errored: np.ndarray, disc: Sequence[float | None], n_best: int, n_suspects: int
) -> CaseAnalysisSummary:
    """The counts over all cases."""
    n_cases = right.shape[1]
    return {
        "cases": n_cases,
        "detectors": right.shape[0],
        "strongest": n_best,
        "errored_predictions": int(errored.sum()),
        "cases_with_errors": int(errored.any(axis=0).sum()),
        "all_right": int(right.all(axis=0).sum()),
        "all_wrong": int((~right).all(axis=0).sum()),
        "discrimination_undefined": sum(d is None for d in disc),
        "negative_discrimination": sum(d is not None and d < 0 for d in disc),
        "suspects": n_suspects,
        "mean_difficulty": float(right.mean()) if n_cases else None,
    }
