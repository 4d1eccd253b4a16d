"""harness.run.pace: the garbage collector's threshold while runs are on, restored when the last one ends."""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from casegen import write_cases

import harness
from harness.run import pace


@pytest.fixture(autouse=True)
def _default_threshold() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*before)


def test_raised_while_on_and_restored_after() -> None:
    with pace.fewer_collections():
        assert gc.get_threshold() == (pace.YOUNG_THRESHOLD, 10, 10)
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_when_the_run_raises() -> None:
    with pytest.raises(KeyError), pace.fewer_collections():
        raise KeyError("x")
    assert gc.get_threshold() == (700, 10, 10)


def test_interleaved_runs_restore_only_when_the_last_ends() -> None:
    first, second = contextlib.ExitStack(), contextlib.ExitStack()
    first.enter_context(pace.fewer_collections())
    second.enter_context(pace.fewer_collections())
    first.close()  # the first run ends while the second is still on
    assert gc.get_threshold()[0] == pace.YOUNG_THRESHOLD
    second.close()
    assert gc.get_threshold() == (700, 10, 10)


def test_never_lowers_a_higher_threshold_and_keeps_the_older_generations() -> None:
    gc.set_threshold(pace.YOUNG_THRESHOLD + 1, 3, 4)
    with pace.fewer_collections():
        assert gc.get_threshold() == (pace.YOUNG_THRESHOLD + 1, 3, 4)
    gc.set_threshold(5, 6, 7)
    with pace.fewer_collections():
        assert gc.get_threshold() == (pace.YOUNG_THRESHOLD, 6, 7)
    assert gc.get_threshold() == (5, 6, 7)


def test_a_run_raises_it_and_gives_it_back(tmp_path: Path) -> None:
    seen = []

    def detector(request):
        seen.append(gc.get_threshold())
        return "low"

    cases = write_cases(tmp_path / "cases.jsonl", 3)
    harness.evaluate(str(cases), detector, results_root=str(tmp_path / "results"), n_boot=0)
    assert seen == [(pace.YOUNG_THRESHOLD, 10, 10)] * 3
    assert gc.get_threshold() == (700, 10, 10)


def test_then_calls_after_once_the_source_is_empty() -> None:
    calls: list[str] = []
    items = pace.then(iter(["a", "b"]), lambda: calls.append("after"))
    assert next(items) == "a" and next(items) == "b" and calls == []
    assert next(items, None) is None and calls == ["after"]
    assert next(items, None) is None and calls == ["after"]


def _imports_thread() -> threading.Thread:
    return next(t for t in threading.enumerate() if t.name == "fcb-imports")


def test_the_imports_run_in_a_daemon_thread_and_a_failed_one_is_left_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the local engine, a daemon thread named fcb-imports imports each module (one that fails to import is
    passed over in silence: the run's own import raises it); with worker processes, no thread at all."""
    (tmp_path / "fcb_pace_fails.py").write_text("raise ImportError('no')\n")
    (tmp_path / "fcb_pace_probe.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(pace, "AFTER_ANSWERS", ("fcb_pace_fails", "fcb_pace_probe"))
    raised: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    for name in ("fcb_pace_fails", "fcb_pace_probe"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    pace.import_after_answers("processes")
    assert not any(t.name == "fcb-imports" for t in threading.enumerate())
    assert "fcb_pace_probe" not in sys.modules
    gate = threading.Lock()
    with gate:  # the thread cannot end before it is found: the probe's import waits on the gate
        (tmp_path / "fcb_pace_probe.py").write_text("import test_pace_gate\ntest_pace_gate.GATE.acquire()\n")
        (tmp_path / "test_pace_gate.py").write_text("")
        monkeypatch.delitem(sys.modules, "test_pace_gate", raising=False)
        import test_pace_gate  # type: ignore[import-not-found]

        test_pace_gate.GATE = gate
        pace.import_after_answers("local")
        thread = _imports_thread()
    thread.join(timeout=30)
    assert not thread.is_alive() and thread.daemon
    assert "fcb_pace_probe" in sys.modules and raised == []
