"""``fcb build-dataset``: read the sources, grade their answers, make the cases, split, sample, match the agreement
structure of wrong and right consensus (`structure`), write, audit.

Each source is read from the path given (nothing of them is stored in this repository), by its own module:
`gsm8k`, `truthfulqa`, `dylan`, `mmlu_pro`, `zeroeval`. Grading (math-verify) runs in worker processes, one job per
model file or block of debates; everything else runs here. The same inputs and seed give byte-identical files.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Executor, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Literal

import orjson

from fcb_datasets.audit.view import Settings
from fcb_datasets.realdata import card as cards
from fcb_datasets.realdata import dylan, gsm8k, mmlu_pro, structure, truthfulqa, wording, zeroeval
from fcb_datasets.realdata.cases import Candidate
from fcb_datasets.realdata.sampling import panel_shares, sample
from fcb_datasets.realdata.splits import families, split_of
from harness import heartbeat as beats
from harness.heartbeat import heartbeat

DEBATES_PER_JOB = 100


@dataclass
class Paths:
    """The source paths given; None for a source left out."""

    gsm8k: str | Path | None = None
    truthfulqa: str | Path | None = None
    dylan: str | Path | None = None
    mmlu_pro: str | Path | None = None
    zeroeval: str | Path | None = None

    def given(self) -> dict[str, Path]:
        return {k: Path(v) for k, v in vars(self).items() if v is not None}


def shares(candidates: Sequence[Candidate]) -> dict[str, dict[str, float]]:
    """Each source's strata and their shares (`sampling`): sizes set here, panels in the mix of the wrong
    majorities the candidates hold (`sampling.panel_shares`)."""
    out: dict[str, dict[str, float]] = {
        gsm8k.SOURCE.short: {str(k): v for k, v in gsm8k.SIZES.items()},
        truthfulqa.SOURCE.short: {str(truthfulqa.SIZE): 1.0},
        dylan.SOURCE.short: {str(k): v for k, v in dylan.SIZES.items()},
        dylan.ROUND_ONE.short: {str(k): v for k, v in dylan.ROUND_ONE_SIZES.items()},
        mmlu_pro.SOURCE.short: panel_shares(candidates, mmlu_pro.SOURCE.short, [p.name for p in mmlu_pro.PANELS]),
    }
    for task, source in zeroeval.SOURCES.items():
        out[source.short] = panel_shares(candidates, source.short, [p.name for p in zeroeval.PANELS[task]])
    return out


CAP = 260
"""The most cases a category takes from one unit (`Candidate.unit`: a source, or the recipe of a constructed case)
over both splits."""
CAPS: dict[tuple[str, str], int] = {
    ("echo_cascade", "dylan"): 480,
    **{(c, "mmlu_pro"): 560 for c in ("majority_wrong_fact", "lone_correct_dissenter", "genuine_agreement_correct",
                                      "genuine_disagreement")},
    # constructed cases: in each recipe, as many around false claims as around true ones (`STRICT`)
    ("anchoring_injected_premise", "gsm8k/note"): 200, ("correct_but_unsupported", "gsm8k/note"): 200,
    ("echo_cascade", "gsm8k/echo"): 120, ("correct_but_unsupported", "gsm8k/echo"): 120,
    # TruthfulQA's true and false claims differ in their words (a text model tells them apart at ROC-AUC 0.65-0.70
    # inside its constructed cases): few of them
    ("anchoring_injected_premise", "truthfulqa/note"): 40, ("correct_but_unsupported", "truthfulqa/note"): 40,
    ("echo_cascade", "truthfulqa/echo"): 20, ("correct_but_unsupported", "truthfulqa/echo"): 20,
    ("genuine_agreement_correct", "gsm8k"): 400,
}  # fmt: skip
"""Caps that differ from `CAP` (category, unit)."""
RECIPES = ("gsm8k/note", "gsm8k/echo", "truthfulqa/note", "truthfulqa/echo")
STRICT = frozenset({"zeroeval_gsm", "zeroeval_math", *RECIPES})
"""Units whose risk levels are held level with their smallest (`sampling.balanced`). ZeroEval's strong panels agree
on the right answer, or scatter, far more often than they agree on a wrong one, and the numbers in their JSON replies
show which, so that at twice the smallest level they alone lift the surface models of `fcb audit-dataset`. A
recipe's false and true claims: a note or an echo we wrote must say nothing of the truth of what it repeats (with
more notes around false claims than true ones, a note alone would say "high")."""
BY_NEXT = frozenset({"dylan"})
"""Units whose largest risk level is held to its next largest instead of its smallest: DyLAN's debates converge on
a right answer after a split so seldom (a few dozen) that its smallest level would leave almost no echo cascade."""
THINNED: dict[str, frozenset[str]] = {
    "mmlu_pro": frozenset({"genuine_agreement_correct", "genuine_disagreement"}),
    "gsm8k": frozenset({"genuine_agreement_correct", "genuine_disagreement", "correct_but_unsupported"}),
    "dylan": frozenset({"echo_cascade"}),
}
"""The plentiful categories of each source, thinned to the difficulty mix of the rest of their unit
(`sampling.matched`): in MMLU-Pro agreement and disagreement to the subjects of the wrong majorities, in GSM8K to
the steps of the wrong ones (and a recipe's true claims to the steps of its false ones), in DyLAN's debates echo
cascades to the MATH levels of the rest."""


@dataclass
class Graded:
    """What the readers gave, per source, before any case is made."""

    gsm8k: list[gsm8k.Problem] = field(default_factory=list)
    truthfulqa: list[truthfulqa.Question] = field(default_factory=list)
    debates: list[dylan.Debate] = field(default_factory=list)
    mmlu: dict[str, dict[int, mmlu_pro.Record]] = field(default_factory=dict)
    zeroeval: dict[str, dict[str, dict[str, zeroeval.Record]]] = field(default_factory=dict)


def _grade(paths: dict[str, Path], pool: Executor, stage: Callable[[str], None]) -> Graded:
    jobs: dict[str, list[tuple[Any, Future[Any]]]] = {"mmlu": [], "zeroeval": [], "dylan": []}
    if "mmlu_pro" in paths:
        for stem, path in mmlu_pro.files(paths["mmlu_pro"]).items():
            jobs["mmlu"].append((stem, pool.submit(mmlu_pro.grade_file, path)))
    if "zeroeval" in paths:
        for task in zeroeval.TASKS:
            for stem, path in zeroeval.files(paths["zeroeval"], task).items():
                jobs["zeroeval"].append(((task, stem), pool.submit(zeroeval.grade_file, task, path)))
    if "dylan" in paths:
        lines = dylan.read_lines(paths["dylan"])
        for start in range(0, len(lines), DEBATES_PER_JOB):
            jobs["dylan"].append((start, pool.submit(dylan.grade_debates, lines[start : start + DEBATES_PER_JOB])))
    try:
        return _collect(paths, jobs, stage)
    except BaseException:
        pool.shutdown(cancel_futures=True)  # a source that does not read: stop the rest at once
        raise


def _collect(
    paths: dict[str, Path], jobs: dict[str, list[tuple[Any, Future[Any]]]], stage: Callable[[str], None]
) -> Graded:
    out = Graded()
    if "gsm8k" in paths:
        stage(f"reading GSM8K solutions from {paths['gsm8k']}")
        out.gsm8k = gsm8k.read(paths["gsm8k"])
    if "truthfulqa" in paths:
        stage(f"reading TruthfulQA from {paths['truthfulqa']}")
        out.truthfulqa = truthfulqa.read(paths["truthfulqa"])
    if any(jobs.values()):
        stage(f"grading {sum(map(len, jobs.values()))} files and blocks of debates (math-verify) in worker processes")
        _wait_saying([job for kind in jobs.values() for _, job in kind], stage)
    out.mmlu = {stem: job.result() for stem, job in jobs["mmlu"]}
    for (task, stem), job in jobs["zeroeval"]:
        out.zeroeval.setdefault(task, {})[stem] = job.result()
    out.debates = [d for _, job in jobs["dylan"] for d in job.result()]
    return out


def _wait_saying(futures: list[Future[Any]], stage: Callable[[str], None], every: float | None = None) -> None:
    """Wait for every job, saying how many are done every ``every`` seconds (a loaded machine grades for minutes).
    A job that failed ends the wait at once: its error is raised where its result is read."""
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=every or beats.EVERY_S, return_when=FIRST_EXCEPTION)
        if any(f.exception() is not None for f in done):
            return
        if pending:
            stage(f"graded {len(futures) - len(pending)} of {len(futures)}")


def _questions(graded: Graded) -> dict[str, str]:
    """Every item's question text (for splitting by family)."""
    out = {f"gsm8k:{p.key}": p.question for p in graded.gsm8k}
    out.update({f"truthfulqa:{q.key}": q.question for q in graded.truthfulqa})
    out.update({f"math:{d.problem_id}": d.problem for d in graded.debates})
    for model in graded.mmlu.values():
        for qid, record in model.items():
            out.setdefault(f"mmlu-pro:{qid}", orjson.loads(record.revision)[0])
    for task, models in graded.zeroeval.items():
        for records in models.values():
            for key, r in records.items():
                out.setdefault(zeroeval.item_of(task, key, r.question), r.question)
    return out


def _candidates(graded: Graded, split: dict[str, str], seed: int, test_wording: wording.Pool) -> list[Candidate]:
    def pool(item: str) -> wording.Pool:
        return "dev" if split[item] == "dev" else test_wording

    out: list[Candidate] = []
    for p in graded.gsm8k:
        out.extend(gsm8k.cases(p, seed, pool(f"gsm8k:{p.key}")))
    for q in graded.truthfulqa:
        out.extend(truthfulqa.cases(q, seed, pool(f"truthfulqa:{q.key}")))
    out.extend(c for _, _, c in dylan.cases(graded.debates, seed))
    if graded.mmlu:
        out.extend(c for _, _, c in mmlu_pro.cases(graded.mmlu, seed))
    for task, models in sorted(graded.zeroeval.items()):
        out.extend(c for _, _, c in zeroeval.cases(task, models, seed))
    return out


def build(
    paths: Paths,
    out_dir: str | Path,
    seed: int = 0,
    test_wording: wording.Pool = "test",
    progress: Callable[[str], None] = lambda _msg: None,
    audit: Literal["full", "quick"] | None = None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Write ``dev.jsonl``, ``test.jsonl`` and ``card.json`` into ``out_dir``; returns the card.

    ``test_wording="heldout"`` builds the test split with the held-back wording families (the template-shift check).
    ``progress`` receives a line as each stage starts, with the time since the start. ``audit`` also runs the
    shortcut audit on the two splits (``"quick"``: `Settings.search` off): ``audit.json`` beside them, its figures in
    the card. ``workers``: grading processes (default: one per core).
    """
    started = time.monotonic()

    def stage(text: str) -> None:
        progress(f"[{time.monotonic() - started:5.1f} s] {text}")

    given = paths.given()
    with _pool(workers) as pool:
        graded = _grade(given, pool, stage)
    stage("splitting by question family")
    questions = _questions(graded)
    family = families(questions)
    split = {item: split_of(family[item], seed) for item in questions}
    candidates = _candidates(graded, split, seed, test_wording)
    stage(f"{len(candidates)} valid candidate cases in all; sampling them")
    with heartbeat("... still sampling", say=stage):
        kept = sample(candidates, shares(candidates), _caps(candidates), seed, STRICT, BY_NEXT, split, THINNED)
    stage(f"{len(kept)} cases sampled; matching the agreement structure of wrong and right consensus")
    with heartbeat("... still matching", say=stage):
        kept = structure.match(kept, candidates, split, seed)
    stage(f"{len(kept)} cases kept; writing the splits to {out_dir}")
    splits = write(kept, split, Path(out_dir))
    card = cards.card(splits, seed, test_wording, given, Path(out_dir), graded_summary(graded), candidates)
    if audit:
        stage("auditing the splits for shortcuts (fcb audit-dataset dev.jsonl test.jsonl)")
        with heartbeat("... still auditing", say=stage):
            card["audit"] = cards.audit(splits, Path(out_dir), Settings(seed=seed, search=audit == "full"))
        stage(f"audit: {card['audit']['verdict']}")
    (Path(out_dir) / "card.json").write_bytes(orjson.dumps(card, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))
    return card


def _caps(candidates: Iterable[Candidate]) -> dict[tuple[str, str], int]:
    return {(c.category, c.unit): CAPS.get((c.category, c.unit), CAP) for c in candidates}


def _pool(workers: int | None) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers or os.cpu_count() or 1, mp_context=get_context("fork"))


def write(kept: list[Candidate], split: dict[str, str], out_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The two splits written, ids numbered dev first; returns the cases by split."""
    splits: dict[str, list[dict[str, Any]]] = {"dev": [], "test": []}
    for c in kept:
        splits[split[c.item]].append(c.case)
    out_dir.mkdir(parents=True, exist_ok=True)
    number = 0
    for name in ("dev", "test"):
        for case in splits[name]:
            number += 1
            case["id"] = f"FCB-{number:04d}"
        (out_dir / f"{name}.jsonl").write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in splits[name]))
    return splits


def graded_summary(graded: Graded) -> dict[str, Any]:
    """What the readers read and could not read, per source and model, for the card."""
    return cards.reading_summary(graded.debates, graded.mmlu, graded.zeroeval)
