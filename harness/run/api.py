"""The Python API: `evaluate` (and `evaluate_async`) runs a detector from Python; `load_result` reads a run back."""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.cases.reader import scan
from harness.detectors import adapt
from harness.detectors.options import DetectorOptions
from harness.epochs import reduce_items
from harness.errors import RunError, UsageError
from harness.files import NotRegular, open_regular
from harness.run.details import case_details
from harness.run.runner import run
from harness.run.selection import in_scope
from harness.run.settings import ENGINE_FIELDS, SETTING_NAMES, EvalSettings, resumed_settings, with_settings
from harness.runfolder.journal import read_items
from harness.runfolder.names import PREDICTIONS
from harness.runfolder.read import read_metrics
from harness.spec import parse_spec
from harness.types import Detector, RunResult


def _api_settings(
    cases: str | Path, detector: Any, name: str | None, kwargs: dict[str, Any]
) -> tuple[EvalSettings, Detector | None]:
    """`EvalSettings` from `evaluate`'s keyword arguments: the CLI's settings, by their names (`SETTING_NAMES`)."""
    given = dict(kwargs)
    base = given.pop("options", None) or DetectorOptions()
    known = SETTING_NAMES - {"cases", "detector", "options"}
    if unknown := sorted(set(given) - known):
        raise TypeError(f"evaluate() has no setting {unknown[0]!r}; the settings are: {', '.join(sorted(known))}")
    if not isinstance(detector, str):
        _runs_here(given)
    spec = parse_spec(detector if isinstance(detector, str) else "")
    settings = with_settings(EvalSettings(cases=str(cases), detector=spec, options=base, name=name), given)
    if isinstance(detector, str):
        return settings, None
    adapted = adapt(detector, settings.options, name)
    return replace(settings, detector=parse_spec(adapted.name)), adapted  # the run records the object's label


def _runs_here(given: dict[str, Any]) -> None:
    """A Python object runs in this process whatever the engine asked: the run records the engine that ran
    ("local"), and says so when another was asked for (only a spec string can be loaded in other processes)."""
    asked = given.get("engine", "local")
    if asked != "local":
        warnings.warn(
            f"engine={asked!r} runs detectors given as spec strings ('file.py:function'); a Python object runs in "
            "this process, and the run records engine 'local'",
            stacklevel=4,
        )
    for key in ENGINE_FIELDS:
        given.pop(key, None)


async def evaluate_async(
    cases: str | Path,
    detector: Any,
    *,
    name: str | None = None,
    concurrency: int = 8,
    timeout: float = 30.0,
    retries: int = 3,
    **settings: Any,
) -> RunResult:
    """`evaluate` for code that already runs an event loop."""
    config, adapted = _api_settings(
        cases, detector, name, {"concurrency": concurrency, "timeout": timeout, "retries": retries, **settings}
    )
    try:
        return await run(config, adapted)
    except OSError as exc:  # an unreadable cases file or run folder: an FcbError naming it, as the CLI says it
        raise RunError(f"{exc.filename or cases}: {exc.strerror or exc}") from exc
    finally:
        if adapted is not None:
            await adapted.aclose()


def evaluate(
    cases: str | Path,
    detector: Any,
    *,
    name: str | None = None,
    concurrency: int = 8,
    timeout: float = 30.0,
    retries: int = 3,
    **settings: Any,
) -> RunResult:
    """Run a detector over a cases file from Python: ``evaluate("cases.jsonl", "builtin:agreement")``.

    ``detector`` is a spec string (as ``fcb eval -d``), a plain or ``async`` function of the request dict, or an
    object with an ``assess(request)`` method; a function or method returns a reply dict, a risk string or a
    `Prediction`. Anything else raises TypeError at once. Other keyword arguments are the CLI's settings by their
    Python names (``risk_field``, ``headers``, ``limit``, ``shard``, ``categories``, ``tags``, ``anonymize_agents``,
    ``skip_invalid``, ``strict``, ``out``, ``results_root``, ``n_boot``, ``seed``, ``ece_bins``, ``cluster_by``,
    ``preflight``, ``max_consecutive_errors``, ``progress``...). Inside a running event loop (a notebook) await
    `evaluate_async`.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop running: the usual case
        pass
    else:  # checked before any coroutine exists: nothing is left never awaited
        raise UsageError("evaluate() cannot run inside a running event loop (a notebook, an async app); "
                         "use `await harness.evaluate_async(...)` with the same arguments")  # fmt: skip
    return asyncio.run(
        evaluate_async(
            cases, detector, name=name, concurrency=concurrency, timeout=timeout, retries=retries, **settings
        )
    )


MAX_CASES_BYTES = 1 << 40
"""No size bound on a cases file read back (it is read in bounded memory), only a regular-file check."""


def load_result(run_dir: str | Path) -> RunResult:
    """A finished run read back from its folder, as the `RunResult` that `evaluate` returned (``.frame()`` too)."""
    path = Path(run_dir)
    document = read_metrics(path)
    settings = resumed_settings(path)
    try:  # read again: only a regular file (a FIFO or standard input would hang, or give other content)
        open_regular(settings.cases, MAX_CASES_BYTES).close()
    except NotRegular as exc:
        raise RunError(f"{exc}: the cases this run read cannot be read again (copy them to a file)") from None
    scanned = scan(settings.cases, strict=settings.strict)
    if scanned.sha256 != document["dataset"].get("file_sha256", document["dataset"]["sha256"]):
        raise RunError(f"{settings.cases}: not the cases file this run evaluated (its sha256 differs)")
    _, labels, _ = in_scope(settings, scanned)
    hashes = {lab.case_id: lab.content_hash for lab in labels}
    journaled = read_items(path / PREDICTIONS, repair=False)
    items = [o for key, o in journaled.items() if hashes.get(key.case_id) == o.content_hash]
    outcomes = list(reduce_items(items, settings.epoch_reducer).values())  # one a case, as the run counted them
    problems = [str(p) for p in scanned.problems]
    details = case_details(path, settings.cases, scanned.sha256)
    return RunResult(str(path), document, labels, outcomes, bool(document["complete"]), problems,
                     document.get("stopped"), case_details=details)  # fmt: skip
