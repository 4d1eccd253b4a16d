"""fcb-harness: evaluate false-consensus detectors on benchmark cases.

The contract lives in `harness.types`; `harness.evaluate` runs a detector from Python and `harness.load_run` reads a
finished run back. Attributes are imported on first use so that the command line starts fast.

Packages, from the command line down (the import layers of pyproject.toml):
- ``cli``: the ``fcb`` command, one module a command
- ``run``: one evaluation: settings, the runner, what it writes, the Python API, engines, the cache, shard merging
- ``leaderboard``: finished runs read back, ranked, compared and rendered
- ``datasets``: the embedded set, the synthetic generator, the real-data build, the shortcut audit, stats
- ``scenario``: two-party mediation scenarios (stands apart from the detector harness)
- ``report``: one run rendered: terminal summary, report.md, metrics.json, report.html, plots
- ``runfolder``: the run folder: journal, manifest, scope, lock
- ``detectors``: detector adapters and `load_detector`; the built-in detectors
- ``cases``: reading and checking cases files; requests stripped of labels

Foundation modules:
- ``metrics``: metrics from predictions and labels, pure functions over arrays
- ``redact``, ``jsoncheck``, ``schema_messages``, ``files``: secrets kept out, JSON checks, schema messages,
  atomic writes
- ``types``: the input contract; ``errors``: the error tree
- ``documents``: the output documents, typed; ``_version``: the version
- ``__main__``: ``python -m harness``, the ``fcb`` command
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness._version import __version__

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time each is imported on first use (`__getattr__`)
    from harness.cases.reader import scan
    from harness.detectors import load_detector
    from harness.detectors.options import DetectorOptions
    from harness.run.api import evaluate, evaluate_async
    from harness.run.api import load_result as load_run
    from harness.run.settings import EvalSettings

_LAZY = {
    "evaluate": ("harness.run.api", "evaluate"),
    "evaluate_async": ("harness.run.api", "evaluate_async"),
    "load_run": ("harness.run.api", "load_result"),
    "EvalSettings": ("harness.run.settings", "EvalSettings"),
    "DetectorOptions": ("harness.detectors.options", "DetectorOptions"),
    "load_detector": ("harness.detectors", "load_detector"),
    "scan": ("harness.cases.reader", "scan"),
}

__all__ = [
    "DetectorOptions",
    "EvalSettings",
    "__version__",
    "evaluate",
    "evaluate_async",
    "load_detector",
    "load_run",
    "scan",
]


def __dir__() -> list[str]:
    """What ``dir(harness)`` and completion show: the lazy attributes too."""
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    import importlib

    module, attr = _LAZY[name]
    return getattr(importlib.import_module(module), attr)
