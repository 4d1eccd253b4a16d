"""Detector adapters and `load_detector`, which turns a spec string into one of them.

Specs: ``http(s)://host[:port][/path]``, ``builtin:NAME``, ``package.module:function``, ``path/file.py:function``.
"""

from __future__ import annotations

from harness.detectors.options import DetectorOptions
from harness.types import Detector


def load_detector(spec: str, options: DetectorOptions | None = None) -> Detector:
    """The adapter for ``spec``. Raises ValueError for a spec that names nothing loadable."""
    options = options or DetectorOptions()
    if spec.startswith(("http://", "https://")):
        from harness.detectors.http import HttpDetector

        return HttpDetector(spec, options)
    if spec.startswith("builtin:"):
        from harness.detectors.builtin import BUILTINS

        name = spec.removeprefix("builtin:")
        if name not in BUILTINS:
            raise ValueError(
                f"unknown built-in detector {spec!r}; choose from: " + ", ".join(f"builtin:{n}" for n in BUILTINS)
            )
        return BUILTINS[name]()  # type: ignore[return-value]
    from harness.detectors.callable import CallableDetector, load_callable

    return CallableDetector(load_callable(spec), spec, options)


__all__ = ["DetectorOptions", "load_detector"]
