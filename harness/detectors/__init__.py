"""Detector adapters and `load_detector`, which turns a spec string into one of them.

Specs: ``http(s)://host[:port][/path]``, ``builtin:NAME`` (``builtin:learned?train=PATH`` for the built-in that takes
an option), ``package.module:function``, ``path/file.py:function``.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from harness.detectors.options import DetectorOptions
from harness.types import Detector


def load_detector(spec: str, options: DetectorOptions | None = None) -> Detector:
    """The adapter for ``spec``. Raises ValueError for a spec that names nothing loadable."""
    options = options or DetectorOptions()
    if spec.startswith(("http://", "https://")):
        from harness.detectors.http import HttpDetector

        return HttpDetector(spec, options)
    if spec.startswith("llm:"):
        from harness.detectors.llm import LlmDetector

        return LlmDetector(spec, options)
    if spec.startswith("builtin:"):
        return _load_builtin(spec)
    from harness.detectors.callable import CallableDetector, load_callable

    return CallableDetector(load_callable(spec), spec, options)


def _builtin_choices() -> str:
    """Every built-in spec, for error messages: ``builtin:NAME`` or ``builtin:NAME?option=PATH``."""
    from harness.detectors.builtin import BUILTIN_OPTIONS, BUILTINS

    def shown(name: str) -> str:
        options = "&".join(f"{o}=PATH" for o in BUILTIN_OPTIONS.get(name, ()))
        return f"builtin:{name}" + (f"?{options}" if options else "")

    return "choose from: " + ", ".join(shown(n) for n in BUILTINS)


def _builtin_options(spec: str, query: str) -> dict[str, str]:
    """The ``?key=value&...`` options of a built-in spec, percent-decoded; a literal ``+`` stays a plus."""
    try:
        pairs = parse_qsl(query.replace("+", "%2B"), keep_blank_values=True, strict_parsing=True)
    except ValueError:
        raise ValueError(f"built-in detector {spec!r}: options must read ?key=value&key=value") from None
    options = dict(pairs)
    if len(options) != len(pairs):
        raise ValueError(f"built-in detector {spec!r}: an option is given twice")
    return options


def _load_builtin(spec: str) -> Detector:
    """A built-in detector: ``builtin:NAME`` or ``builtin:NAME?option=value`` (see `BUILTIN_OPTIONS`)."""
    from harness.detectors.builtin import BUILTIN_OPTIONS, BUILTINS

    name, _, query = spec.removeprefix("builtin:").partition("?")
    if name not in BUILTINS:
        raise ValueError(f"unknown built-in detector {spec!r}; {_builtin_choices()}")
    options = _builtin_options(spec, query)
    allowed = BUILTIN_OPTIONS.get(name, ())
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = f"takes only {', '.join(allowed)}" if allowed else "takes no options"
        raise ValueError(f"built-in detector builtin:{name} {takes} (got {', '.join(unknown)}); {_builtin_choices()}")
    return BUILTINS[name](**options)  # type: ignore[no-any-return]


__all__ = ["DetectorOptions", "load_detector"]
