"""The HTTP transport on hand-worked examples: the detector API's default path, and Retry-After in both forms."""

from __future__ import annotations

import time
from email.utils import formatdate

import pytest
from tenacity import AsyncRetrying, RetryCallState

from harness.detectors.http import endpoint
from harness.detectors.limits import ProviderStopped
from harness.detectors.options import DetectorOptions
from harness.detectors.transport import Transport, _Transient, check_status, quota_spent, retry_after_seconds
from harness.types import DetectorError


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


def _state_after(exc: BaseException, attempt: int) -> RetryCallState:
    state = RetryCallState(AsyncRetrying(), None, (), {})
    state.attempt_number = attempt
    state.set_exception((type(exc), exc, None))
    return state


def test_a_429_without_retry_after_waits_as_a_first_retry_however_often_it_came() -> None:
    # backoff: 10 * 2 ** (attempt - 1) plus up to 1 s of jitter, at most 1,000 s
    transport = Transport(["http://127.0.0.1:9/v1/consensus"], DetectorOptions(backoff_initial=10, backoff_max=1000))
    throttled = _state_after(_Transient("http", "429", status=429), attempt=6)
    assert all(10 <= transport._wait(throttled) <= 11 for _ in range(20))  # not 320 s: the pace keeps the limit
    overloaded = _state_after(_Transient("http", "503", status=503), attempt=6)
    assert all(320 <= transport._wait(overloaded) <= 321 for _ in range(20))  # 10 * 2 ** 5: backing off
    told = _state_after(_Transient("http", "429", retry_after=7.5, status=429), attempt=6)
    assert transport._wait(told) == 7.5  # Retry-After said how long


def test_the_jitter_is_up_to_a_second_or_twice_the_first_wait_when_that_is_less() -> None:
    failed = _Transient("http", "503", status=503)
    short = Transport(["http://127.0.0.1:9/v1/consensus"], DetectorOptions(backoff_initial=0.01, backoff_max=5))
    for attempt, base in ((1, 0.01), (3, 0.04)):
        waits = [short._wait(_state_after(failed, attempt)) for _ in range(200)]
        assert base <= min(waits) and max(waits) <= base + 0.02 and max(waits) > base + 0.01  # jitter of 0.02
    default = Transport(["http://127.0.0.1:9/v1/consensus"], DetectorOptions())
    waits = [default._wait(_state_after(failed, 1)) for _ in range(200)]
    assert min(waits) >= 0.5 and max(waits) <= 1.5 and max(waits) > 1.0  # 0.5 s plus up to 1 s, as before


def test_a_retry_after_of_other_digits_reads_as_absent() -> None:
    """Issue 45, item 5: "²" passes str.isdigit and then broke float(): the case became a detector_exception."""
    assert retry_after_seconds("²") is None and retry_after_seconds("٣") is None
    assert retry_after_seconds(" 7 ") == 7.0


def test_a_429_saying_retry_after_zero_still_waits_the_first_backoff_step() -> None:
    """Issue 45, item 4: a zero wait never added to the case's patience, so a provider answering
    ``Retry-After: 0`` for good was asked again at once, forever."""
    transport = Transport(["http://127.0.0.1:9"], DetectorOptions(backoff_initial=0.25, backoff_max=1.0))
    zero = _state_after(_Transient("http_status", "HTTP 429", 0.0, status=429), attempt=3)
    assert transport._wait(zero) == 0.25
    later = _state_after(_Transient("http_status", "HTTP 429", 3.0, status=429), attempt=3)
    assert transport._wait(later) == 3.0
    unavailable = _state_after(_Transient("http_status", "HTTP 503", 0.0, status=503), attempt=3)
    assert transport._wait(unavailable) == 0.0  # a 503 counts against --retries: no floor needed


def test_a_429_saying_the_quota_is_spent_stops_the_run_and_a_rate_limit_is_retried() -> None:
    """Issue 45, item 6: OpenAI's insufficient_quota (its code, or its message) is no throttling to wait out."""
    spent = b'{"error": {"message": "You exceeded your current quota, please check your plan", "code": null}}'
    assert quota_spent(spent) and quota_spent(b'{"error": {"type": "insufficient_quota"}}')
    assert not quota_spent(b'{"error": {"message": "Rate limit reached for requests", "code": "rate_limit_exceeded"}}')
    with pytest.raises(ProviderStopped, match=r"quota is spent: HTTP 429: .*exceeded your current quota"):
        check_status(429, "1", spent)
    with pytest.raises(_Transient) as throttled:  # a 503 saying the same is an overloaded server: retried
        check_status(503, None, spent)
    assert throttled.value.raw is not None and "exceeded" in throttled.value.raw  # the body rides along
    with pytest.raises(DetectorError, match="HTTP 402"):  # other statuses stay final, as before
        check_status(402, None, spent)
