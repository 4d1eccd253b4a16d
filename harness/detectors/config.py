"""Detector settings from a TOML file under ``configs/detectors/``; flags given on the command line win."""

from __future__ import annotations

import tomllib
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from harness.detectors.options import DetectorOptions
from harness.detectors.reply import parse_risk_field
from harness.errors import UsageError

_LLM_KEYS = {
    "api_key_env",
    "model",
    "base_url",
    "temperature",
    "max_tokens",
    "prompt",
    "samples",
    "json_mode",
    "price_prompt_per_mtok",
    "price_completion_per_mtok",
}
_KEYS = _LLM_KEYS | {
    "detector",
    "url",
    "concurrency",
    "timeout",
    "retries",
    "headers",
    "risk_field",
    "token_env",
    "max_response_bytes",
    "backoff_initial",
    "backoff_max",
    "batch_size",
    "rpm",
    "tpm",
    "max_requests",
    "max_cost",
}


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


def override(options: DetectorOptions, **flags: Any) -> DetectorOptions:
    """``options`` with every flag that was given (not None) put in its place."""
    known = {f.name for f in fields(DetectorOptions)}
    return replace(options, **{k: v for k, v in flags.items() if v is not None and k in known})
