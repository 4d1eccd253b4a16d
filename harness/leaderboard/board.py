"""What ``fcb board`` embeds in its page: per data set, the runs aligned case by case in compact arrays.

Every figure the page shows is computed here (the page only filters and draws): the leaderboard (`build_boards`),
the ranking on the natural cases alone, per-category accuracy per run (the heatmap), the case-level analysis
(`harness.leaderboard.case_analysis`) and the sets the case table filters on. Predictions are one letter per case and
run (`LETTERS`, ``-`` for a case the run did not finish), so 20 runs x 10,000 cases are 200,000 bytes before
compression; each case's text rides once per data set, whatever the number of runs.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np
import orjson

from harness.errors import FcbError, RunLoadError
from harness.leaderboard.case_analysis import LETTERS, SCORE, case_analysis
from harness.leaderboard.rank import Board, assign_ranks, build_boards
from harness.leaderboard.runs import Run, align, aligned_clusters, aligned_origins
from harness.metrics import ERROR, cluster_codes, finite_interval, paired_headline
from harness.runfolder.names import REPORT, REPORT_HTML
from harness.runfolder.read import case_records

NOT_RUN = "-"
"""The letter of a case a run did not finish (wrong, as in `align`)."""
NATURAL = "natural"
REPLY_MAX = 400  # characters of a detector's reply (JSON) kept per case: the page shows it, the journal keeps all


@dataclass
class DataSetView:
    """One data set's part of the page: its board, its runs in board order, and the arrays the page embeds."""

    board: Board
    runs: list[Run]
    data: dict[str, Any]
    natural: list[dict[str, Any]] = field(default_factory=list)  # one row per ranked detector, or none
    heatmap: list[list[tuple[int, int]]] = field(default_factory=list)  # runs x categories: (right, cases)
    notes: list[str] = field(default_factory=list)


def board_views(runs: Sequence[Run], page_dir: Path, *, n_boot: int, seed: int, strongest: int) -> list[DataSetView]:
    """One view per data set (by sha256, as `build_boards`), largest first; ``page_dir`` is where the page will be
    (its links to each run's report are relative to it)."""
    for run in runs:
        if run.path.is_file():
            raise RunLoadError(f"{run.path}: a baseline file; fcb board reads run folders (it shows their cases)")
    boards = build_boards(list(runs), n_boot=n_boot, seed=seed)
    return [dataset_view(b, page_dir, n_boot=n_boot, seed=seed, strongest=strongest) for b in boards]


def dataset_view(board: Board, page_dir: Path, *, n_boot: int, seed: int, strongest: int) -> DataSetView:
    runs = [run for row in board.rows for run in row.runs]  # the board's order: ranked first
    ids, categories, y_true, preds = align(runs)
    origins = aligned_origins(runs, ids)
    stack = np.array(preds).reshape(len(runs), len(ids))
    present = np.full(stack.shape, False)
    for k, run in enumerate(runs):
        present[k, np.searchsorted(ids, run.ids)] = True  # ids is the sorted union of every run's (`align`)
    cats = sorted({str(c) for c in categories})
    cat_index = np.array([cats.index(str(c)) for c in categories])
    # one record a case: a run with --epochs or --probe shows its reduced verdicts (the page says so), as its figures
    records = [case_records(run.path) for run in runs]  # by the run's own --epoch-reducer, from its run.json
    data: dict[str, Any] = {
        "runs": run_entries(runs, page_dir),
        "best": best_run(runs),
        "ids": [str(i) for i in ids],
        "cats": cats,
        "cat": cat_index.tolist(),
        "exp": "".join(LETTERS[t] for t in y_true),
        "origin": None if origins is None else [str(o) for o in origins],
        "pred": [prediction_letters(stack[k], present[k]) for k in range(len(runs))],
        "score": [scores_of(run, ids) for run in runs],
        "err": [errors_of(rec, ids) for rec in records],
        "reply": [replies_of(rec, ids) for rec in records],
    }
    data["analysis"], analysis_note = case_analysis_columns(runs, ids, strongest)
    data["text"], text_note = case_text(runs, records, ids)
    data["notes"] = [n for n in (analysis_note, text_note, repeats_note(runs)) if n]
    return DataSetView(board, runs, data, natural_rows(board, n_boot=n_boot, seed=seed),
                       category_accuracy(stack == y_true, cat_index), data["notes"])  # fmt: skip


def repeats_note(runs: Sequence[Run]) -> str:
    """What the page says of runs that asked their cases more than once: their verdicts are reduced, one a case."""
    repeated = [run for run in runs if run.n_epochs > 1 or run.variants]
    if not repeated:
        return ""
    named = ", ".join(f"{run.label} ({_repeats(run)})" for run in repeated)
    return (f"{named}: each case shows one verdict, its epochs reduced by the run's --epoch-reducer as its figures "
            "are; the probes' variants are not shown (their figures are in the leaderboard above and in each run's "
            "report)")  # fmt: skip


def _repeats(run: Run) -> str:
    parts = [f"{run.n_epochs} epochs, {run.reducer}"] if run.n_epochs > 1 else []
    return ", ".join(parts + [f"probe {name}" for name in run.variants])


def category_accuracy(right: np.ndarray, cat_index: np.ndarray) -> list[list[tuple[int, int]]]:
    """Runs x categories: (cases right, cases) per run and category (``cat_index``: 0 .. the number of categories
    - 1, each present); an error or an unfinished case is wrong."""
    n = np.bincount(cat_index).tolist()
    return [list(zip(np.bincount(cat_index, weights=r).astype(int).tolist(), n, strict=True)) for r in right]


def prediction_letters(pred: np.ndarray, present: np.ndarray) -> str:
    """One letter a case: l, m, h, e (an error), or `NOT_RUN` where the run has no record of the case."""
    return "".join(np.where(present, np.array(list(LETTERS))[pred], NOT_RUN).tolist())


def best_run(runs: Sequence[Run]) -> int | None:
    """The position of the run with the highest headline macro-F1 (the first of equal ones); None when none has one."""
    scores = [run.metric(SCORE) for run in runs]
    known = [(-s, k) for k, s in enumerate(scores) if s is not None]
    return min(known)[1] if known else None


def run_entries(runs: Sequence[Run], page_dir: Path) -> list[dict[str, Any]]:
    """Each run as the page names it; a detector with several runs here gets its folder's name beside its own."""
    labels = Counter(run.label for run in runs)
    entries = [run_entry(run, page_dir) for run in runs]
    for entry in entries:
        if labels[entry["label"]] > 1:
            entry["label"] = f"{entry['label']} ({Path(entry['path']).name})"
    return entries


def run_entry(run: Run, page_dir: Path) -> dict[str, Any]:
    """A run as the page names it: its detector, folder, headline and a link to its own report (relative)."""
    report = next((run.path / name for name in (REPORT_HTML, REPORT) if (run.path / name).is_file()), None)
    return {
        "label": run.label,
        "path": str(run.path),
        "report": report and relative_link(report, page_dir),
    }


def relative_link(target: Path, page_dir: Path) -> str:
    """A link from the page to ``target`` as a relative URL: percent-encoded, and starting ``./`` or ``../`` so that
    no folder name (``javascript:...``) can read as a scheme."""
    rel = os.path.relpath(target, page_dir).replace(os.sep, "/")
    return quote(rel if rel.startswith("../") else f"./{rel}")


def scores_of(run: Run, ids: np.ndarray) -> list[float | None] | None:
    """The run's risk_score per case, to 4 decimals (None where it gave none); None when it gave none at all."""
    full = np.full(len(ids), np.nan)
    if run.scores is not None:  # a run folder always has them (NaN where none); a baseline file has none
        full[np.searchsorted(ids, run.ids)] = run.scores
    if np.isnan(full).all():
        return None
    return [None if np.isnan(s) else round(s, 4) for s in full.tolist()]


def errors_of(records: dict[str, Any], ids: np.ndarray) -> dict[int, list[str]]:
    """Case position -> [error kind, message] for the run's errored cases."""
    pos = {str(i): k for k, i in enumerate(ids)}
    return {pos[cid]: [r["error"]["kind"], r["error"]["message"][:REPLY_MAX]]
            for cid, r in records.items() if r["error"]}  # fmt: skip


def replies_of(records: dict[str, Any], ids: np.ndarray) -> dict[int, str]:
    """Case position -> the detector's reply beyond risk and score (``response``, as JSON, cut at `REPLY_MAX`)."""
    pos = {str(i): k for k, i in enumerate(ids)}
    out = {}
    for cid, rec in records.items():
        if rec.get("response"):
            text = orjson.dumps(rec["response"]).decode()
            out[pos[cid]] = text if len(text) <= REPLY_MAX else text[:REPLY_MAX] + "..."
    return out


def case_analysis_columns(runs: Sequence[Run], ids: np.ndarray, strongest: int) -> tuple[dict[str, Any] | None, str]:
    """Difficulty, discrimination and the suspect flag per case (``fcb cases``), with the strongest runs; None and a
    note when the runs do not allow the analysis (fewer than 3, the same detector twice, different cases)."""
    if len(runs) < 3:
        return None, "the case analysis (difficulty, discrimination, suspects) needs at least 3 detectors"
    try:
        doc = case_analysis(runs, k=min(strongest, len(runs)))
    except FcbError as exc:
        return None, f"no case analysis: {exc}"
    by_id = {c["id"]: c for c in doc["cases"]}
    rows = [by_id[str(i)] for i in ids]  # the same ids: check_runs refuses runs of different cases
    discrimination = [c["discrimination"] for c in rows]
    return {
        "difficulty": [c["difficulty"] for c in rows],
        "discrimination": [d if d is None else round(d, 3) for d in discrimination],
        "suspect": [int(c["suspect"]) for c in rows],
    }, ""


def case_text(runs: Sequence[Run], records: Sequence[dict[str, Any]], ids: np.ndarray) -> tuple[list[Any] | None, str]:
    """Each case's text, once: [question, [[agent_id, text], ...], evidence, ground_truth, rationale], read from
    the first run's cases file that is still the file it read (`case_texts` checks its sha256 and each case's
    content hash); None and a note when no run's file is."""
    from harness.runfolder.cases import case_texts, file_sha256_of

    wanted: dict[str, str | None] = {}
    for rec in records:
        for cid, r in rec.items():
            wanted.setdefault(cid, r.get("hash"))
    notes = []
    for path, sha256 in dict.fromkeys((r.dataset.get("path"), file_sha256_of(r.dataset)) for r in runs):
        found, note = case_texts(path, wanted, sha256)
        if not note:
            return [_text(found.get(str(i))) for i in ids], ""
        notes.append(note)
    return None, notes[0]  # the first run's file: the one a reader would look for


def _text(case: dict[str, Any] | None) -> list[Any] | None:
    """The parts of a valid case the page shows (the run checked it against the case schema)."""
    if case is None:
        return None
    answers = [[a["agent_id"], a["text"]] for a in case["answers"]]
    return [case["question"], answers, case.get("evidence", []), case["ground_truth"], case["rationale"]]


def natural_rows(board: Board, *, n_boot: int, seed: int) -> list[dict[str, Any]]:
    """The ranked detectors on the cases of origin natural alone: macro-F1 and accuracy with their paired-bootstrap
    intervals and a rank as the board's (1 + the detectors significantly better), over the same resamples."""
    ranked = [row for row in board.rows if row.rank is not None]
    if not ranked:
        return []
    reps = [row.representative for row in ranked]
    ids, _, y_true, preds = align(reps)
    origins = aligned_origins(reps, ids)
    if origins is None:
        return []
    mask = origins == NATURAL
    if not mask.any():
        return []
    clusters = cluster_codes(aligned_clusters(reps, ids)[mask].tolist())
    points, boots = paired_headline(y_true[mask], [p[mask] for p in preds], n_boot=n_boot, seed=seed,
                                    clusters=clusters)  # fmt: skip
    ranks = [_Rank() for _ in ranked]  # as the board ranks (with no resample, every detector shares rank 1)
    assign_ranks(ranks, boots["macro_f1"], higher_better=True, alpha=board.method["alpha"])  # type: ignore[arg-type]
    return [
        {"detector": row.detector, "cases": int(mask.sum()), "macro_f1": float(points["macro_f1"][k]),
         "macro_f1_ci": finite_interval(boots["macro_f1"][k]), "accuracy": float(points["accuracy"][k]),
         "errors": int((preds[k][mask] == ERROR).sum()), "rank": f"{r.rank}{'=' * r.shared_rank}"}
        for k, (row, r) in enumerate(zip(ranked, ranks, strict=True))
    ]  # fmt: skip


@dataclass
class _Rank:
    """What `assign_ranks` writes on a row."""

    rank: int | None = None
    shared_rank: bool = False
