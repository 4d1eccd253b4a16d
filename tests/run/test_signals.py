"""The third Ctrl-C aborts without a report even when its `RunAborted` lands where Python only reports exceptions
(a weakref's callback): the case behind an intermittent failure of test_resume's third-Ctrl-C test, forced here."""

from __future__ import annotations

import asyncio
import sys
import weakref
from typing import Any

import pytest

from harness.run.signals import Signals
from harness.types import RunAborted


class _Thing:
    pass


def _raise_in_a_weakref_callback(exc: BaseException) -> None:
    """Python calls the callback when the object goes and reports what it raises to ``sys.unraisablehook``."""

    def callback(_: object) -> None:
        raise exc

    thing = _Thing()
    ref = weakref.ref(thing, callback)
    del thing
    assert ref() is None


def test_a_lost_third_signal_is_not_reported_and_still_aborts_before_the_report() -> None:
    seen: list[Any] = []

    async def run() -> None:
        with Signals() as signals:
            _raise_in_a_weakref_callback(RunAborted())
            _raise_in_a_weakref_callback(ValueError("a real fault elsewhere"))
            signals.abort_if_asked()  # two signals so far: no abort
            signals.count = 3  # as if the lost RunAborted came from the third signal
            with pytest.raises(RunAborted):
                signals.abort_if_asked()
        assert sys.unraisablehook is record  # restored

    def record(unraisable: Any) -> None:
        seen.append(type(unraisable.exc_value).__name__)

    old, sys.unraisablehook = sys.unraisablehook, record
    try:
        asyncio.run(run())
    finally:
        sys.unraisablehook = old
    assert seen == ["ValueError"]  # the RunAborted is not reported as a trace; anything else still is
