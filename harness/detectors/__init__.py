"""Detector adapters and `load_detector`, which turns a spec string into one of them.

Specs: ``http(s)://host[:port][/path]``, ``builtin:NAME`` (``builtin:learned?train=PATH`` for the built-in that takes
an option), ``package.module:function``, ``path/file.py:function``.
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from harness._version import __version__
from harness.detectors.options import DetectorOptions
from harness.errors import DetectorLoadError
from harness.types import Detector


def load_detector(spec: str, options: DetectorOptions | None = None) -> Detector:
    """The adapter for ``spec``. Raises `DetectorLoadError` for a spec that names nothing loadable."""
    options = options or DetectorOptions()
    if spec.startswith(("http://", "https://")):
        from harness.detectors.http import HttpDetector

        return HttpDetector(spec, options)
    if spec.startswith("llm:"):
        from harness.detectors.llm import LlmDetector

        return LlmDetector(spec, options)
    if spec.startswith("builtin:"):
        return _load_builtin(spec)
    from harness.detectors.callable import CallableDetector, class_detector, construct, load_callable

    target = load_callable(spec)
    if inspect.isclass(target):  # a stateful detector: constructed once, its model loaded once
        return class_detector(construct(target, spec), spec, options)
    return CallableDetector(target, spec, options)


def adapt(detector: Any, options: DetectorOptions | None = None, name: str | None = None) -> Detector:
    """A detector from what a Python caller hands over, through the same adapters as the command line.

    Accepts a spec string, a plain or ``async`` function of the request dict, or an object with an ``assess``
    method (plain or ``async``); the function or method may return a reply dict, a risk string or a `Prediction`.
    Raises TypeError at once for anything else.
    """
    from harness.detectors.callable import CallableDetector, class_detector

    options = options or DetectorOptions()
    if isinstance(detector, str):
        return load_detector(detector, options)
    if inspect.isclass(detector):
        raise TypeError(f"detector {detector.__name__} is a class; pass an instance of it")
    assess = getattr(detector, "assess", None)
    if assess is not None or getattr(detector, "assess_batch", None) is not None:
        method = "assess_batch" if getattr(detector, "assess_batch", None) is not None else "assess"
        _takes_one_argument(getattr(detector, method), f"{type(detector).__name__}.{method}")
        label = name or getattr(detector, "name", None) or type(detector).__name__
        return class_detector(detector, str(label), options)
    if builtins.callable(detector):  # the name `callable` here is this package's submodule
        _takes_one_argument(detector, getattr(detector, "__qualname__", type(detector).__name__))
        label = name or f"{getattr(detector, '__module__', '?')}:{getattr(detector, '__qualname__', '?')}"
        return CallableDetector(detector, label, options)
    raise TypeError(
        f"detector: expected a spec string, a function of the request dict, or an object with an assess(request) "
        f"method; got {type(detector).__name__}"
    )


def _takes_one_argument(fn: Callable[..., Any], shown: str) -> None:
    if not builtins.callable(fn):
        raise TypeError(f"detector: {shown} is not callable")
    try:
        inspect.signature(fn).bind(None)
    except TypeError:
        raise TypeError(f"detector: {shown} must take one argument, the request dict") from None
    except ValueError:  # a builtin without a signature: let the first call tell
        return


async def fingerprint(detector: Detector, spec: str) -> dict[str, Any]:
    """What identifies the code behind a detector, for run.json and the leaderboard.

    A Python function: the content hash of its file; a built-in: the harness version (and a training file's
    hash); a language model: model, base URL, prompt hash and settings; a URL: its ``GET /v1/info`` reply.
    """
    method = getattr(detector, "fingerprint", None)
    if method is not None:
        value = method()
        return dict(await value if inspect.isawaitable(value) else value)
    if spec.startswith("builtin:"):
        name, _, query = spec.partition("?")
        found: dict[str, Any] = {"kind": "builtin", "name": name, "harness_version": __version__}
        train = _builtin_options(spec, query).get("train") if query else None
        if train and Path(train).is_file():
            from harness.detectors.callable import file_sha256

            found["train_sha256"] = file_sha256(train)
        return found
    return {"kind": "object", "type": f"{type(detector).__module__}.{type(detector).__qualname__}"}


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
        raise DetectorLoadError(f"built-in detector {spec!r}: options must read ?key=value&key=value") from None
    options = dict(pairs)
    if len(options) != len(pairs):
        raise DetectorLoadError(f"built-in detector {spec!r}: an option is given twice")
    return options


def _load_builtin(spec: str) -> Detector:
    """A built-in detector: ``builtin:NAME`` or ``builtin:NAME?option=value`` (see `BUILTIN_OPTIONS`)."""
    from harness.detectors.builtin import BUILTIN_OPTIONS, BUILTINS

    name, _, query = spec.removeprefix("builtin:").partition("?")
    if name not in BUILTINS:
        raise DetectorLoadError(f"unknown built-in detector {spec!r}; {_builtin_choices()}")
    options = _builtin_options(spec, query)
    allowed = BUILTIN_OPTIONS.get(name, ())
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        takes = f"takes only {', '.join(allowed)}" if allowed else "takes no options"
        raise DetectorLoadError(
            f"built-in detector builtin:{name} {takes} (got {', '.join(unknown)}); {_builtin_choices()}"
        )
    return BUILTINS[name](**options)


__all__ = ["DetectorOptions", "adapt", "fingerprint", "load_detector"]
