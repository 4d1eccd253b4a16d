"""The HTTP transport on hand-worked examples: the detector API's default path, and Retry-After in both forms."""

from __future__ import annotations

import time
from email.utils import formatdate

from harness.detectors.http import endpoint
from harness.detectors.transport import retry_after_seconds


def test_endpoint_default_path() -> None:
    assert endpoint("http://127.0.0.1:8765") == "http://127.0.0.1:8765/v1/consensus"
    assert endpoint("http://127.0.0.1:8765/") == "http://127.0.0.1:8765/v1/consensus"
    assert endpoint("http://127.0.0.1:8765/custom") == "http://127.0.0.1:8765/custom"


def test_retry_after_forms() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("100000") == 120.0  # capped
    in_ten = retry_after_seconds(formatdate(time.time() + 10, usegmt=True))
    assert in_ten is not None and 8.0 <= in_ten <= 10.0
