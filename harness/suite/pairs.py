"""Run every (detector, data set) pair of a suite that is not complete yet, each in its own run folder.

A pair's folder is ``OUT/runs/DATASET/DETECTOR``: a finished run there is skipped, an unfinished one (a journal
without a complete ``metrics.json``) is resumed through the runner's resume, anything else starts. One pair failing
(a detector that does not load, a failed preflight) is recorded and the others still run.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from harness.errors import FcbError, RunLoadError, UsageError
from harness.run.runner import INTERRUPTED, run
from harness.run.settings import EvalSettings, with_settings
from harness.runfolder.names import PREDICTIONS
from harness.runfolder.read import read_metrics
from harness.spec import DetectorSpec, parse_spec
from harness.suite.spec import EMBEDDED, Suite, SuiteDataset, SuiteDetector, cases_file, resolve
from harness.types import BUDGET_STOP, PROVIDER_STOP, RunResult

SKIPPED, RAN, RESUMED = "complete (skipped)", "ran", "resumed"
FAILED, STOPPED, STOPPED_INTERRUPTED = "failed", "stopped", "interrupted"
GOOD = (SKIPPED, RAN, RESUMED)


@dataclass
class Pair:
    """One (detector, data set) pair and what became of it."""

    detector: str
    dataset: str
    run_dir: Path
    status: str = ""
    message: str = ""
    gate: str = ""  # "", "passed" or "regressed"

    @property
    def ok(self) -> bool:
        return self.status in GOOD and self.gate != "regressed"


def cases_path(base: Path, dataset: SuiteDataset) -> str:
    if dataset.cases == EMBEDDED:
        from harness.cases.reader import embedded_cases_path

        return str(embedded_cases_path())
    return cases_file(base, dataset)


NOT_SETTINGS = {"name", "spec", "config", "cases", "split"}
"""The suite file's keys of a detector or a data set that are not a run's settings: each other key is one."""


def pair_settings(suite: Suite, base: Path, det: SuiteDetector, ds: SuiteDataset, run_dir: Path) -> EvalSettings:
    """The `EvalSettings` ``fcb eval`` would build from the same flags: a detector config file first, the suite's
    keys over it (as flags over a config), each by its setting's name."""
    from harness.detectors.config import load_detector_config
    from harness.detectors.options import DetectorOptions

    spec, options = (None, DetectorOptions())
    if det.config:
        spec, options = load_detector_config(resolve(base, det.config))
    if not (det.spec or spec):
        raise UsageError(f"detector {det.name}: {det.config} names no detector; give spec in the suite file")
    given = {
        **det.model_dump(exclude=NOT_SETTINGS),
        **ds.model_dump(exclude=NOT_SETTINGS),
        "cache_dir": resolve(base, det.cache_dir) if det.cache_dir else None,
        "name": det.name,
        "n_boot": suite.bootstrap,
        "seed": suite.seed,
        "out": str(run_dir),
        "resume": (run_dir / PREDICTIONS).exists(),
    }
    detector = suite_spec(base, det) if det.spec else parse_spec(spec or "")
    start = EvalSettings(cases=cases_path(base, ds), detector=detector, options=options)
    return with_settings(start, given)


def suite_spec(base: Path, det: SuiteDetector) -> DetectorSpec:
    """A detector's ``spec`` as the suite file gives it, a ``file.py:function``'s path read relative to the suite
    file's folder as ``cases`` and ``config`` are. A file found only relative to the current folder, as specs
    were read before, is refused with both paths: the suite must mean the same wherever it is run from."""
    parsed = parse_spec(str(det.spec))
    if parsed.kind != "python" or not parsed.target.endswith(".py") or Path(parsed.target).is_absolute():
        return parsed
    here = Path(resolve(base, parsed.target))
    if not here.is_file() and Path(parsed.target).is_file():
        raise UsageError(f"detector {det.name}: spec {det.spec!r}: {here} does not exist; a spec's file is read "
                         f"relative to the suite file, not the current folder ({Path(parsed.target).resolve()}): give "
                         "that path relative to the suite file, or an absolute one")  # fmt: skip
    return parse_spec(f"{here}:{parsed.attribute}")


def is_complete(run_dir: Path) -> bool:
    try:
        return bool(read_metrics(run_dir)["complete"])
    except RunLoadError:  # absent or unreadable: not complete, so it runs (or resumes) and is rewritten
        return False


def result_status(result: RunResult) -> tuple[str, str]:
    """(status, message) of a run that returned, by the rules of ``fcb eval``'s exit code."""
    ops = result.figures["operational"]
    if result.stopped == INTERRUPTED or (result.stopped is None and result.figures["n_not_run"]):
        return STOPPED_INTERRUPTED, "interrupted; run the suite again to resume it"
    if result.stopped and result.stopped.startswith((BUDGET_STOP, PROVIDER_STOP)):
        return STOPPED, result.stopped.removeprefix(BUDGET_STOP).removeprefix(PROVIDER_STOP)
    if result.stopped:
        return STOPPED, f"stopped after {result.stopped}"
    if ops["cases"] and ops["errors"] == ops["cases"]:
        return FAILED, f"every case errored ({ops['errors']} of {ops['cases']})"
    return RAN, f"{ops['errors']} case(s) ended in an error" if ops["errors"] else ""


def stale(settings: EvalSettings, run_dir: Path) -> str:
    """Why the complete run in ``run_dir`` is not this pair's any more (its cases file or detector changed since),
    or "": a suite never presents a run of other cases or another detector as this pair's."""
    import hashlib

    from harness.runfolder.manifest import read_manifest

    manifest = read_manifest(run_dir)
    if manifest is None:
        return ""
    identity = manifest["identity"]
    if identity["detector"] != settings.detector.display or identity["limit"] != settings.limit:
        return f"holds a run of {identity['detector']} (limit {identity['limit']}), not of this suite's settings"
    digest = hashlib.sha256()
    with open(settings.cases, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != identity["dataset_sha256"]:
        return f"holds a run of another version of {settings.cases} (its sha256 differs)"
    return ""


def run_pair(settings: EvalSettings, pair: Pair) -> None:
    """Run or resume one pair, recording its status; a refusal (`FcbError`) fails this pair alone."""
    if is_complete(pair.run_dir):
        why = stale(settings, pair.run_dir)
        pair.status = FAILED if why else SKIPPED
        pair.message = f"{pair.run_dir} {why}; remove it to run this pair again" if why else ""
        return
    resumed = settings.resume
    try:
        result = asyncio.run(run(settings))
    except FcbError as exc:
        pair.status, pair.message = FAILED, str(exc)
        return
    pair.status, pair.message = result_status(result)
    if pair.status == RAN and resumed:
        pair.status = RESUMED


def run_suite(suite: Suite, base: Path, out: Path, quiet: bool = False) -> list[Pair]:
    """Every pair, data set by data set; stops early only on an interruption (Ctrl-C), which it re-raises."""
    pairs: list[Pair] = []
    total = len(suite.detectors) * len(suite.datasets)
    for ds in suite.datasets:
        for det in suite.detectors:
            pair = Pair(det.name, ds.name, out / "runs" / ds.name / det.name)
            pairs.append(pair)
            if not quiet:
                print(f"[{len(pairs)}/{total}] {det.name} on {ds.name}", file=sys.stderr)
            try:
                settings = pair_settings(suite, base, det, ds, pair.run_dir)
            except FcbError as exc:  # a detector config file that cannot be read
                pair.status, pair.message = FAILED, str(exc)
                continue
            pair.run_dir.parent.mkdir(parents=True, exist_ok=True)
            run_pair(replace(settings, progress="bar" if sys.stderr.isatty() and not quiet else False), pair)
            if pair.status == STOPPED_INTERRUPTED:
                return pairs
    return pairs
