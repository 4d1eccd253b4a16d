"""Detector adapters and `load_detector`, which turns a parsed spec (`harness.spec.DetectorSpec`) into one of them.

`ADAPTERS` below is the one map from a spec's kind (`harness.spec`, where the string is parsed, once) to its adapter:

- ``http(s)://host[:port][/path]`` (comma-separated: replicas): `http.HttpDetector`, the detector API over HTTP;
- ``llm:MODEL@BASE_URL``: `llm.LlmDetector`, a chat-completions endpoint asked with a prompt;
- ``builtin:NAME`` (``builtin:learned?train=PATH``): `builtin.load_builtin`, the detectors that ship with the harness;
- anything else names Python code, ``package.module:NAME`` or ``path/file.py:NAME``: a plain or ``async`` function
  (`functions.CallableDetector`) or a class, constructed once (`functions.class_detector`).

Each adapter's module is imported only when a spec needs it: aiohttp, scikit-learn and the heuristic cost start-up
time.

Modules:
- ``options``: the settings shared by every adapter; ``config``: the same from a TOML file under ``configs/detectors/``
- ``reply``: a detector's reply read into a `Prediction`, or why it is not one
- ``transport``: the HTTP client every adapter speaking HTTP shares (aiohttp, retries, replicas, body caps)
- ``http``: the detector API over HTTP; ``llm``: a chat-completions endpoint asked with a prompt
- ``functions``: Python functions and classes as detectors; ``pool``: the threads that run plain functions
- ``batch``: single requests gathered into batches (``assess_batch``, worker engines)
- ``builtin``: the built-in detectors (``builtin:NAME``); ``answers``: the answer-text helpers they share
- ``heuristic/``: ``builtin:heuristic``, structural features and a hand-set rule; ``learned``: ``builtin:learned``,
  a scikit-learn model on the same features
- ``service``: ``fcb serve``: any loadable detector served over HTTP
"""

from __future__ import annotations

import builtins
import inspect
from collections.abc import Callable
from typing import Any

from harness.detectors.options import DetectorOptions
from harness.errors import DetectorLoadError
from harness.redact import scrub_text
from harness.spec import DetectorSpec, SpecKind, parse_spec
from harness.types import Detector, HasFingerprint


def _http(spec: DetectorSpec, options: DetectorOptions) -> Detector:
    from harness.detectors.http import HttpDetector

    return HttpDetector(spec.text, options)


def _llm(spec: DetectorSpec, options: DetectorOptions) -> Detector:
    from harness.detectors.llm import LlmDetector

    return LlmDetector(spec, options)


def _builtin(spec: DetectorSpec, options: DetectorOptions) -> Detector:
    from harness.detectors.builtin import load_builtin

    return load_builtin(spec)


def _python(spec: DetectorSpec, options: DetectorOptions) -> Detector:
    """``module:function`` or ``file.py:function``; a class named so is constructed once (its model loaded once)."""
    from harness.detectors.functions import CallableDetector, class_detector, construct, load_callable

    target = load_callable(spec)
    if inspect.isclass(target):
        return class_detector(construct(target, spec.text), spec.text, options)
    return CallableDetector(target, spec.text, options)


ADAPTERS: dict[SpecKind, Callable[[DetectorSpec, DetectorOptions], Detector]] = {
    "http": _http,
    "llm": _llm,
    "builtin": _builtin,
    "python": _python,
}
"""A spec's kind (`harness.spec.parse_spec`) -> its adapter."""


def load_detector(spec: DetectorSpec | str, options: DetectorOptions | None = None) -> Detector:
    """The adapter for ``spec`` (a string, as a user gives it, is parsed here). Raises `DetectorLoadError` for a
    spec that names nothing loadable."""
    parsed = parse_spec(spec) if isinstance(spec, str) else spec
    make = ADAPTERS[parsed.kind]
    try:
        return make(parsed, options or DetectorOptions())
    except DetectorLoadError as exc:
        # the messages quote the spec, which may be a URL no adapter took (``HTTP://``, ``llm:M@ftp://``): its
        # credentials and key-like query values never reach the terminal
        exc.args = (scrub_text(str(exc)),)
        raise


def adapt(detector: Any, options: DetectorOptions | None = None, name: str | None = None) -> Detector:
    """A detector from what a Python caller hands over, through the same adapters as the command line.

    Accepts a spec string, a plain or ``async`` function of the request dict, or an object with an ``assess``
    method (plain or ``async``); the function or method may return a reply dict, a risk string or a `Prediction`.
    Raises TypeError at once for anything else.
    """
    from harness.detectors.functions import CallableDetector, class_detector

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
    if builtins.callable(detector):
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


async def fingerprint(detector: Detector, spec: DetectorSpec) -> dict[str, Any]:
    """What identifies the code behind a detector, for run.json and the leaderboard.

    A Python function: the content hash of its file; a built-in: the harness version (and a training file's
    hash); a language model: model, base URL, prompt hash and settings; a URL: its ``GET /v1/info`` reply.
    """
    if isinstance(detector, HasFingerprint):
        value = detector.fingerprint()
        return dict(await value if inspect.isawaitable(value) else value)
    if spec.kind == "builtin":
        from harness.detectors.builtin import builtin_fingerprint

        return builtin_fingerprint(spec)
    return {"kind": "object", "type": f"{type(detector).__module__}.{type(detector).__qualname__}"}


__all__ = ["ADAPTERS", "DetectorOptions", "adapt", "fingerprint", "load_detector"]
