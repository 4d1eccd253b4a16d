"""Python detectors whose behaviour is known, for the tests that check figures of repeated and probed runs against
what such a detector must give. A test runs one through the real CLI as ``-d tests/known_detectors.py:NAME``
(`KNOWN`); each verdict follows from a hash of what the detector was sent, so the test can work out the expected
figure from the cases on its own. Call counts live in the detector's process: one ``fcb eval`` each."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from harness.types import Prediction

KNOWN = Path(__file__).resolve()
RISKS = ("low", "medium", "high")
_LOCK = threading.Lock()
_CALLS: dict[str, int] = {}


def h(text: str) -> int:
    """A stable hash of a text, as an integer."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def _call(key: str) -> int:
    """How many times this exact request was asked before (0 on the first call)."""
    with _LOCK:
        k = _CALLS[key] = _CALLS.get(key, -1) + 1
    return k


def first_only(request: dict[str, Any]) -> Prediction:
    """Reads the first answer only; appends every request it was sent to the file named by ``SEEN``."""
    with _LOCK, open(os.environ["SEEN"], "a") as f:
        f.write(json.dumps(request) + "\n")
    first = request["answers"][0]["text"]
    return Prediction(RISKS[h(first) % 3], score=h(first) % 101 / 100)


def blind(request: dict[str, Any]) -> Prediction:
    """Blind to the order of answers and passages and to agent ids: reads the sorted texts."""
    texts = sorted(a["text"] for a in request["answers"]) + sorted(request.get("evidence", []))
    return Prediction(RISKS[h("|".join(texts)) % 3])


def noisy(request: dict[str, Any]) -> Prediction:
    """A fixed verdict for each request, but on 30% of calls (call k of a request) a verdict drawn for the call."""
    key = json.dumps(request, sort_keys=True)
    k = _call(key)
    if h(f"{key}:{k}") % 10 < 3:
        return Prediction(RISKS[h(f"draw:{key}:{k}") % 3])
    return Prediction(RISKS[h(key) % 3])


def swayed(request: dict[str, Any]) -> Prediction:
    """Reads the first answer only and answers at random on 30% of calls, with a score from the first answer: every
    figure of a repeated, probed run is then away from its bound."""
    key = json.dumps(request, sort_keys=True)
    k = _call(key)
    first = request["answers"][0]["text"]
    risk = RISKS[h(f"draw:{key}:{k}") % 3] if h(f"{key}:{k}") % 10 < 3 else RISKS[h(first) % 3]
    return Prediction(risk, score=h(f"score:{first}") % 101 / 100)


def fresh(request: dict[str, Any]) -> Prediction:
    """A verdict and a score drawn afresh on every call: epochs disagree and variants flip."""
    key = json.dumps(request, sort_keys=True)
    k = _call(key)
    return Prediction(RISKS[h(f"{key}:{k}") % 3], score=h(f"s:{key}:{k}") % 101 / 100)
