"""Detectors behind an HTTP endpoint: ``POST {url}`` (``/v1/consensus`` when the URL has no path).

This module holds the detector API's side only: the default path, the request as the JSON body, the reply read by
the risk field, and ``GET /v1/info`` for the fingerprint. Sending, retries, replicas and bounded reading are the
shared `Transport`'s (``transport.py``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from harness.detectors.limits import Budget
from harness.detectors.options import DetectorOptions
from harness.detectors.reply import parse_prediction
from harness.detectors.transport import Transport, decode_json
from harness.errors import DetectorLoadError
from harness.redact import clip, redact_url
from harness.types import Prediction, Request

DEFAULT_PATH = "/v1/consensus"
INFO_PATH = "/v1/info"
INFO_TIMEOUT_S = 5.0


def endpoint(url: str) -> str:
    """The URL to post to: the given one, or its ``/v1/consensus`` when it has no path."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise DetectorLoadError(f"detector URL {redact_url(url)!r} has no host")
    if parts.path in ("", "/"):
        parts = parts._replace(path=DEFAULT_PATH)
    return urlunsplit(parts)


class HttpDetector:
    """Posts each request as JSON and reads the risk from the reply; retries transient failures with exponential
    backoff and jitter.

    Several comma-separated URLs are replicas of one detector (see `Transport`): a failing replica's cases are
    retried on the others rather than failed.
    """

    def __init__(self, url: str, options: DetectorOptions) -> None:
        urls = [endpoint(u.strip()) for u in url.split(",") if u.strip()]
        if options.tpm or options.max_cost:
            raise DetectorLoadError("--tpm and --max-cost need an llm: detector: a detector's reply counts no tokens")
        self._options = options
        self._transport = Transport(urls, options)
        self.name = self._transport.name

    def secrets(self) -> list[str]:
        """Values that must never be written anywhere: credentials in headers and in the URL, longest first."""
        return self._transport.secrets()

    @property
    def budget(self) -> Budget:
        """The run's caps on requests (``--max-requests``), counted here as they are sent."""
        return self._transport.budget

    async def assess(self, request: Request) -> Prediction:
        prediction, attempts = await self._transport.post(orjson.dumps(request), self._interpret)
        return replace(prediction, attempts=attempts)

    async def preflight(self, request: Request) -> Prediction:
        """`assess`, except that a single endpoint that cannot be reached at all fails at once."""
        with self._transport.failing_fast():
            return await self.assess(request)

    async def info(self) -> list[Any]:
        """Each replica's ``GET /v1/info`` reply (``{"name", "version"}``), or None where it has none."""
        replies = await self._transport.get_each(INFO_PATH, INFO_TIMEOUT_S)
        return [self._info(reply) for reply in replies]

    def _info(self, reply: Any) -> Any:
        if not isinstance(reply, dict):
            return None
        secrets = self.secrets()
        return {k: clip(str(reply[k]), 200, secrets) for k in ("name", "version") if k in reply} or None

    async def fingerprint(self) -> dict[str, Any]:
        infos = await self.info()
        return {"kind": "http", "url": self.name, "info": infos[0] if len(infos) == 1 else infos}

    def _interpret(self, payload: bytes) -> Prediction:
        return parse_prediction(decode_json(payload, self.secrets()), self._options.risk_field)

    async def aclose(self) -> None:
        await self._transport.aclose()
