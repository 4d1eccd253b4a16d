"""Detector settings from a TOML file under ``configs/detectors/``; flags given on the command line win."""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path
from typing import Any

from harness.detectors.options import DetectorOptions
from harness.detectors.reply import parse_risk_field
from harness.errors import UsageError

RUN_CHOSEN = frozenset({"cache", "cache_dir", "cache_refresh"})
"""Options a run chooses (by its flags), not a detector's file: whether its answers are replayed."""
_KEYS = frozenset(f.name for f in fields(DetectorOptions)) - RUN_CHOSEN | {"detector", "url", "model", "base_url",
                                                                          "api_key_env"}  # fmt: skip
"""What a detector file may hold: every option of `DetectorOptions` by its name (`RUN_CHOSEN` aside), the detector
(``detector`` or ``url``; for llm:, ``model`` and ``base_url``) and ``api_key_env`` (``token_env`` by its llm: name)."""


def load_detector_config(path: str | Path) -> tuple[str | None, DetectorOptions]:
    """(detector spec or None, options) from a TOML file. Unknown keys are an error, naming the file and key.

    Example::

        detector = "http://127.0.0.1:8765"   # or url = ...
        concurrency = 16
        timeout = 10
        retries = 2
        risk_field = "result.risk"
        [headers]
        X-Api-Key = "MY_DETECTOR_KEY"       # header name = environment variable that holds its value
    """
    path = Path(path)
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"{path}: {exc}") from exc
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise UsageError(f"{path}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_KEYS))}")
    spec = data.pop("detector", None) or data.pop("url", None)
    data.pop("url", None)
    model, base_url = data.pop("model", None), data.pop("base_url", None)
    if model and base_url and not spec:
        spec = f"llm:{model}@{base_url}"
    if "api_key_env" in data:
        data["token_env"] = data.pop("api_key_env")
    if "prompt" in data:  # a template path in a config file is relative to that file
        data["prompt"] = str((path.parent / data["prompt"]).resolve())
    if "risk_field" in data:
        if not isinstance(data["risk_field"], str):
            raise UsageError(f'{path}: risk_field: expected a dotted path such as "result.risk"')
        data["risk_field"] = parse_risk_field(data["risk_field"])
    headers = data.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise UsageError(f"{path}: headers: a table of header name = environment variable name")
    try:
        return spec, DetectorOptions(**data)
    except (TypeError, UsageError) as exc:  # TypeError: a key DetectorOptions does not take
        raise UsageError(f"{path}: {exc}") from exc
