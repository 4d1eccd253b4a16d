"""Small parts checked on hand-worked examples: built-in detectors, redaction, endpoints, Retry-After, imports."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from email.utils import formatdate

import pytest

from harness.detectors import load_detector
from harness.detectors.answers import agreement_share, answer_key
from harness.detectors.http import endpoint
from harness.detectors.transport import retry_after_seconds, split_credentials
from harness.errors import DetectorLoadError
from harness.redact import redact_spec, redact_url


def test_answer_key_prefers_the_last_number() -> None:
    assert answer_key("I checked 12 rows and got 1,234") == ("number", 1234.0)
    assert answer_key("Canberra is the capital")[0] == "words"


@pytest.mark.parametrize(
    ("texts", "share"),
    [
        (["It is 42.", "42", "The answer is 42"], 1.0),
        (["It is 42.", "42", "41", "42", "42"], 0.8),  # 4 of 5 say 42
        (["1", "2", "3", "4"], 0.25),
        (["The capital is Canberra.", "Canberra is the capital.", "The capital is Sydney."], 2 / 3),
    ],
)
def test_agreement_share(texts: list[str], share: float) -> None:
    assert agreement_share(texts) == pytest.approx(share)


def _risk(spec: str, texts: list[str]) -> str:
    request = {"task": "q", "answers": [{"agent_id": str(i), "text": t} for i, t in enumerate(texts)]}
    return asyncio.run(load_detector(spec).assess(request)).risk


def test_builtin_detectors() -> None:
    assert _risk("builtin:agreement", ["7", "7", "7"]) == "low"  # unanimous
    assert _risk("builtin:agreement", ["7", "7", "7", "8"]) == "high"  # a majority with a dissenter
    assert _risk("builtin:agreement", ["7", "8", "9"]) == "medium"  # no 60% majority
    assert _risk("builtin:always-low", ["7", "8"]) == "low"
    with pytest.raises(DetectorLoadError, match="builtin:agreement"):
        load_detector("builtin:nope")


def test_bad_specs_explain_themselves(tmp_path) -> None:
    with pytest.raises(DetectorLoadError, match="does not exist"):
        load_detector(str(tmp_path / "missing.py") + ":f")
    with pytest.raises(DetectorLoadError, match="cannot import"):
        load_detector("no_such_module_here:f")
    with pytest.raises(DetectorLoadError, match="module:function"):
        load_detector("just-a-word")


def test_redaction() -> None:
    assert redact_url("https://u:p@h.example:8443/x?api_key=abc&mode=fast") == (
        "https://REDACTED@h.example:8443/x?api_key=REDACTED&mode=fast"
    )
    assert redact_spec("pkg.mod:fn") == "pkg.mod:fn"
    url, auth = split_credentials("http://user:pa%3Ass@127.0.0.1:9/v1/consensus")
    assert url == "http://127.0.0.1:9/v1/consensus" and auth == "Basic dXNlcjpwYTpzcw=="  # base64 of user:pa:ss


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


def test_cli_start_does_not_import_heavy_libraries() -> None:
    heavy = "('numpy', 'pandas', 'sklearn', 'aiohttp')"
    code = f"import sys, harness.cli; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_sync_detector_thread_that_outlives_its_event_loop_prints_nothing() -> None:
    """A plain function still running when an interrupted run's loop closes must not raise in its thread."""
    import asyncio
    import threading

    from harness.detectors.pool import THREAD_NAME, ThreadPool

    release, raised = threading.Event(), []
    previous = threading.excepthook
    threading.excepthook = lambda args: raised.append(args.exc_value)
    pool = ThreadPool(2)
    kept = []
    try:

        async def start() -> None:
            kept.append(asyncio.ensure_future(pool.run(lambda _: release.wait(10) and "low", {})))
            await asyncio.sleep(0.1)  # the call is under way on a pool thread

        loop = asyncio.new_event_loop()
        loop.run_until_complete(start())
        loop.close()  # the run is over; the detector's call is not
        pool.close()
        release.set()
        for thread in threading.enumerate():
            if thread.name == THREAD_NAME:
                thread.join(5)
                assert not thread.is_alive()
    finally:
        threading.excepthook = previous
    assert raised == []


def test_a_request_requires_task_and_answers_and_evidence_is_optional() -> None:
    from harness.types import Request

    assert Request.__required_keys__ == {"task", "answers"}
    assert Request.__optional_keys__ == {"evidence"}


def test_each_spec_form_reaches_its_adapter(tmp_path) -> None:
    from harness.detectors.builtin import Agreement
    from harness.detectors.functions import CallableDetector
    from harness.detectors.http import HttpDetector
    from harness.detectors.llm import LlmDetector

    code = "def detect(request):\n    return 'low'\n\nclass Model:\n    def assess(self, request):\n        return 1\n"
    (tmp_path / "mine.py").write_text(code)
    expected = {
        "http://127.0.0.1:9": HttpDetector,  # nothing is sent until a case is assessed
        "https://127.0.0.1:9/custom": HttpDetector,
        "llm:some-model@http://127.0.0.1:9/v1": LlmDetector,
        "builtin:agreement": Agreement,
        f"{tmp_path / 'mine.py'}:detect": CallableDetector,
        f"{tmp_path / 'mine.py'}:Model": CallableDetector,
    }
    for spec, adapter in expected.items():
        assert type(load_detector(spec)) is adapter, spec


def test_optional_abilities_are_found_by_isinstance(tmp_path) -> None:
    from harness.types import HasFingerprint, HasPreflight, HasSecrets, HasTrainingItems

    abilities = (HasSecrets, HasPreflight, HasFingerprint, HasTrainingItems)
    http = load_detector("http://user:s3cret-pass@127.0.0.1:9")
    assert [isinstance(http, a) for a in abilities] == [True, True, True, False]
    assert "s3cret-pass" in http.secrets()  # type: ignore[attr-defined]
    agreement = load_detector("builtin:agreement")
    assert [isinstance(agreement, a) for a in abilities] == [False, False, False, False]
    code = (
        "class Held:\n    def assess(self, request):\n        return 'low'\n    def secrets(self):\n"
        "        return ['tok-123456']\n    train_source_items = frozenset({'set:1'})\n\n"
        "class ListOnly:\n    secrets = ['not-a-method']\n    def assess(self, request):\n        return 'low'\n"
    )
    (tmp_path / "owners.py").write_text(code)
    held = load_detector(f"{tmp_path / 'owners.py'}:Held")
    assert held.secrets() == ["tok-123456"]  # type: ignore[attr-defined]
    assert isinstance(held, HasTrainingItems) and held.train_source_items == frozenset({"set:1"})
    listed = load_detector(f"{tmp_path / 'owners.py'}:ListOnly")
    assert listed.secrets() == [] and not isinstance(listed, HasTrainingItems)  # type: ignore[attr-defined]
