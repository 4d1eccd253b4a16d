"""The runner (`harness.run.runner`) in process: a scripted detector object, a tmp_path run folder, a few cases.
Held to values worked out here: how many cases ran, errored and were left pending, what the journal holds, what a
resumed run counts as already spent against --max-requests (the journal's attempts or the sessions' record, the
larger), when a streak of errors stops a run, which case the preflight asks and what it says when it fails, and the
messages a user reads when a run is refused. tests/run/test_api.py and its neighbours drive it end to end."""

from __future__ import annotations

import asyncio
import errno
import json
import random
from pathlib import Path
from typing import Any

import pytest
from casegen import write_cases

from harness.detectors.limits import Budget, BudgetSpent, ProviderStopped, RunStopped
from harness.detectors.options import DetectorOptions
from harness.errors import InvalidCasesError, PreflightFailed, RunError, UsageError
from harness.run.runner import (
    FATAL_STATUSES,
    INTERRUPTED,
    _assess,
    _attempts,
    _changed_settings,
    _count_spent,
    _out_of_space,
    _session_spent,
    _Streak,
    fatal,
    first_plain,
    run,
    send_order,
)
from harness.run.settings import EvalSettings
from harness.spec import parse_spec
from harness.types import DetectorError, ItemKey, Outcome, Prediction

N = 6


# --- a scripted detector ------------------------------------------------------------------------------------------


class Scripted:
    """Answers by the case's question: ``script`` maps a question to a risk, an exception to raise, or a list of
    them (one a call, the last repeated); anything else "high". Counts its calls."""

    name = "scripted"

    def __init__(self, script: dict[str, Any] | None = None, default: Any = "high") -> None:
        self.script = script or {}
        self.default = default
        self.calls: list[str] = []
        self.closed = 0

    async def assess(self, request: Any) -> Prediction:
        question = request["task"]
        self.calls.append(question)
        await asyncio.sleep(0)  # a real detector awaits its reply: the others run meanwhile
        todo = self.script.get(question, self.default)
        if isinstance(todo, list):
            n = sum(1 for q in self.calls if q == question)
            todo = todo[min(n, len(todo)) - 1]
        if isinstance(todo, BaseException):
            raise todo
        if isinstance(todo, Prediction):
            return todo
        return Prediction(todo)

    async def aclose(self) -> None:
        self.closed += 1


class Counted(Scripted):
    """Sends requests: each call is counted against its `Budget` (--max-requests), as the HTTP adapters count."""

    def __init__(self, max_requests: int | None, attempts: int = 1, **kw: Any) -> None:
        super().__init__(**kw)
        self._budget = Budget(max_requests=max_requests)
        self.attempts = attempts

    @property
    def budget(self) -> Budget:
        return self._budget

    async def assess(self, request: Any) -> Prediction:
        for _ in range(self.attempts):  # each try is a request
            self._budget.reserve_now(0.0)
            self._budget.settle(0.0, 0.0)
        got = await super().assess(request)
        return Prediction(got.risk, attempts=self.attempts)


def _cases(tmp_path: Path, n: int = N) -> tuple[Path, list[dict[str, Any]]]:
    path = write_cases(tmp_path / "cases.jsonl", n)
    return path, [json.loads(line) for line in path.read_text().splitlines()]


def _settings(cases: Path, out: Path, **kw: Any) -> EvalSettings:
    options = kw.pop("options", None) or DetectorOptions(concurrency=kw.pop("concurrency", 1))
    return EvalSettings(cases=str(cases), detector=parse_spec("scripted.py:Scripted"), options=options, out=str(out),
                        n_boot=0, **kw)  # fmt: skip


def _run(settings: EvalSettings, detector: Any) -> Any:
    return asyncio.run(run(settings, detector))


def _journal(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]


def _sent(ids: list[str], seed: int = 0) -> list[str]:
    """The send order, by hand: the ids shuffled by random.Random("send-order:SEED")."""
    order = list(ids)
    random.Random(f"send-order:{seed}").shuffle(order)
    return order


def _first_sent(ids: list[str]) -> str:
    """The case the preflight asks: the first of the file (one item a case: each a request as it is)."""
    return ids[0]


# --- pure helpers ---------------------------------------------------------------------------------------------------


def test_send_order_is_the_seeded_shuffle_and_leaves_its_input_alone() -> None:
    todo = list(range(10))
    expected = list(range(10))
    random.Random("send-order:3").shuffle(expected)
    assert send_order(todo, 3) == expected and todo == list(range(10))
    assert send_order(todo, 3) != send_order(todo, 4)


def test_the_preflight_asks_the_first_pending_request_as_it_is_in_file_order() -> None:
    """[v1, v2, p3, p4] in file order: p3, the first without a variant; only variants: the first of them; none: no
    preflight."""
    v1, v2 = (None, ItemKey("a", 1, "order")), (None, ItemKey("b", 1, "names"))
    p3, p4 = (None, ItemKey("c")), (None, ItemKey("d"))
    assert first_plain([v1, v2, p3, p4]) is p3  # type: ignore[list-item]
    assert first_plain([v2, p4]) is p4  # type: ignore[list-item]
    assert first_plain([p4, v1, p3]) is p4  # type: ignore[list-item]
    assert first_plain([v2, v1]) is v2  # type: ignore[list-item]
    assert first_plain([]) is None


def test_attempts_of_a_prediction_or_an_error() -> None:
    assert _attempts(Prediction("low", attempts=2), None) == 2
    assert _attempts(None, DetectorError("timeout", "t", attempts=4)) == 4


def test_the_streak_counts_errors_of_one_kind_in_a_row() -> None:
    """Limit 3: timeout, timeout, http_error (a new kind: 1), http_error, an answer (reset), http_error x3 -> stop
    at the third."""
    streak = _Streak(3)
    t, h = DetectorError("timeout", "slow"), DetectorError("http_error", "503 from the server")
    assert [streak.add(e) for e in (t, t, h, h, None, h, h)] == [False] * 7
    assert streak.count == 2
    assert streak.add(h) is True
    assert streak.reason() == "3 consecutive http_error errors (the last: 503 from the server)"
    assert streak.add(h) is True  # 4 >= 3
    never = _Streak(0)
    assert not any(never.add(t) for _ in range(50))
    one = _Streak(1)
    assert one.add(t) is True


def test_what_makes_a_first_error_fatal() -> None:
    assert {401, 403, 404} == FATAL_STATUSES
    assert fatal(DetectorError("detector_exception", "x"))
    assert fatal(DetectorError("http_error", "x", connect_failed=True))
    for status in (401, 403, 404):
        assert fatal(DetectorError("http_status", "x", status=status))
    assert fatal(DetectorError("invalid_response", "x", misread=True))
    assert not fatal(DetectorError("http_status", "x", status=500))
    assert not fatal(DetectorError("http_status", "x", status=400))
    assert not fatal(DetectorError("timeout", "x"))


def test_assess_turns_errors_into_results_but_lets_a_stop_through() -> None:
    class WithPreflight(Scripted):
        async def preflight(self, request: Any) -> Prediction:
            return Prediction("medium")

    req = {"task": "q"}
    assert asyncio.run(_assess(Scripted(default="low"), req)) == (Prediction("low"), None)
    assert asyncio.run(_assess(WithPreflight(default="low"), req, preflight=True)) == (Prediction("medium"), None)
    assert asyncio.run(_assess(WithPreflight(default="low"), req)) == (Prediction("low"), None)
    assert asyncio.run(_assess(Scripted(default="low"), req, preflight=True)) == (Prediction("low"), None)
    error = DetectorError("timeout", "slow")
    assert asyncio.run(_assess(Scripted(default=error), req)) == (None, error)
    pred, exc = asyncio.run(_assess(Scripted(default=ValueError("boom")), req))
    assert pred is None and exc is not None and exc.kind == "detector_exception" and "ValueError: boom" in exc.message
    with pytest.raises(BudgetSpent):
        asyncio.run(_assess(Scripted(default=BudgetSpent("cap")), req))


def _outcome(attempts: int, prompt: int = 0, completion: int = 0) -> Outcome:
    return Outcome("a", "h", "low", None, None, attempts, 0.1, prompt_tokens=prompt, completion_tokens=completion)


def test_a_resumed_run_counts_the_larger_of_the_journal_and_the_sessions() -> None:
    """Journal attempts 1 + 3 + 2 = 6; sessions recorded 2 + 3 = 5 requests: 6 counted. Cost at $2 and $10 a
    million: the journal 1,000,000 * 2 + 100,000 * 10 = $3.00 (over 1e6); the sessions $1.50 + $0.25 = $1.75:
    $3.00 counted. The other way round (sessions 4 + 4 = 8, $5): 8 and $5."""
    budget = Budget(max_requests=100, prices=(2.0, 10.0))
    journaled = [_outcome(1, 1_000_000, 100_000), _outcome(3), _outcome(2)]
    sessions = [{"wall_s": 1, "cases": 1, "requests": 2, "cost_usd": 1.5}, {"wall_s": 1, "cases": 1, "requests": 3,
                                                                             "cost_usd": 0.25}]  # fmt: skip
    _count_spent(budget, iter(journaled), {"sessions": sessions})  # type: ignore[typeddict-item]
    assert (budget.spent_requests, budget.earlier_requests) == (6, 6)
    assert budget.spent_cost == pytest.approx(3.0) and budget.earlier_cost == pytest.approx(3.0)
    more = [{"requests": 4, "cost_usd": 2.5}, {"requests": 4, "cost_usd": 2.5}]
    _count_spent(budget, journaled, {"sessions": more})  # type: ignore[typeddict-item]
    assert (budget.spent_requests, budget.spent_cost) == (8, 5.0)
    _count_spent(budget, [], {"sessions": [{"wall_s": 1.0, "cases": 0}]})  # type: ignore[typeddict-item]
    assert (budget.spent_requests, budget.spent_cost) == (0, 0.0)


def test_what_a_session_spent_is_what_it_sent_beyond_the_earlier_sessions() -> None:
    """Started from 6 requests and $3; now at 9 and $4.5: this session sent 3, costing $1.5."""
    det = Counted(None)
    det.budget.start_from(6, 3.0)
    det.budget.spent_requests, det.budget.spent_cost = 9, 4.5
    assert _session_spent(det) == (3, 1.5)
    assert _session_spent(Scripted()) is None


def test_out_of_space_names_the_file_and_how_to_go_on(tmp_path: Path) -> None:
    run_dir = tmp_path / "my run"
    (run_dir / "sub").mkdir(parents=True)
    (run_dir / "run.json").write_text("{}")
    exc = OSError(errno.ENOSPC, "No space left on device", str(run_dir / "sub" / "predictions.jsonl"))
    assert str(_out_of_space(exc)) == (
        f"{run_dir / 'sub' / 'predictions.jsonl'}: No space left on device; the cases that finished are kept in "
        f"{run_dir}: free some space, then go on with `fcb eval --resume '{run_dir}'` (the same cases file and "
        "detector)"
    )
    outside = OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x"))
    assert str(_out_of_space(outside)) == f"{tmp_path / 'x'}: No space left on device"
    assert str(_out_of_space(OSError(errno.ENOSPC, ""))) == "a file: no space left on device"


# --- whole runs -------------------------------------------------------------------------------------------------------


def test_a_run_journals_every_case_in_file_order_with_its_errors(tmp_path: Path) -> None:
    """6 cases, one (case 3) fails with a timeout after 3 attempts, one (case 5) raises: 4 answered, 2 errors; the
    retries are 3 - 1 = 2; the journal holds 6 lines in the file's order; one session of 6 cases."""
    cases, docs = _cases(tmp_path)
    det = Scripted({docs[2]["question"]: DetectorError("timeout", "slow", attempts=3),
                    docs[4]["question"]: RuntimeError("broken")})  # fmt: skip
    result = _run(_settings(cases, tmp_path / "run"), det)
    journal = _journal(tmp_path / "run")
    assert [r["id"] for r in journal] == [d["id"] for d in docs]
    assert [r["error"]["kind"] if r["error"] else r["risk"] for r in journal] == [
        "high", "high", "timeout", "high", "detector_exception", "high"
    ]  # fmt: skip
    assert journal[2]["attempts"] == 3
    op = result.document["metrics"]["operational"]
    assert (op["cases"], op["errors"], op["retries"]) == (6, 2, 2)
    assert result.document["metrics"]["n_cases"] == 6 and result.document["metrics"]["n_not_run"] == 0
    assert result.complete is True and result.stopped is None
    assert len(det.calls) == 6 and det.closed == 0  # the run did not open it: it does not close it
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert [s["cases"] for s in manifest["sessions"]] == [6]
    assert "requests" not in manifest["sessions"][0]
    scope = json.loads((tmp_path / "run" / "scope.json").read_text())["cases"]
    assert scope == [[d["id"], r["hash"]] for d, r in zip(docs, journal, strict=True)]


def test_the_preflight_asks_the_first_case_of_the_file_once(tmp_path: Path) -> None:
    cases, docs = _cases(tmp_path)
    det = Scripted()
    _run(_settings(cases, tmp_path / "run", seed=5, concurrency=1), det)
    by_question = {d["question"]: d["id"] for d in docs}
    assert by_question[det.calls[0]] == docs[0]["id"]
    assert sorted(det.calls) == sorted(d["question"] for d in docs)  # every case once: the preflight's stands


def test_a_failing_preflight_says_why_and_sends_nothing_else(tmp_path: Path) -> None:
    cases, docs = _cases(tmp_path)
    det = Scripted(default=DetectorError("http_status", "HTTP 401", attempts=2, status=401, raw="denied"))
    with pytest.raises(PreflightFailed) as err:
        _run(_settings(cases, tmp_path / "run"), det)
    first = _first_sent([d["id"] for d in docs])
    assert str(err.value) == (
        f"preflight: the detector failed on the first case ({first}) after 2 attempt(s): http_status: HTTP 401; "
        "it answered: denied; no other case was sent (--no-preflight skips this check)"
    )
    assert len(det.calls) == 1 and not (tmp_path / "run").exists()


def test_a_preflight_error_that_may_pass_is_journaled_and_the_run_goes_on(tmp_path: Path) -> None:
    cases, docs = _cases(tmp_path)
    first = _first_sent([d["id"] for d in docs])
    question = next(d["question"] for d in docs if d["id"] == first)
    det = Scripted({question: DetectorError("http_status", "HTTP 500", status=500)})
    result = _run(_settings(cases, tmp_path / "run"), det)
    assert len(det.calls) == N and result.document["metrics"]["operational"]["errors"] == 1
    without = Scripted(default=DetectorError("http_status", "HTTP 401", status=401))
    result = _run(_settings(cases, tmp_path / "nopre", preflight=False, max_consecutive_errors=0), without)
    assert len(without.calls) == N and result.document["metrics"]["operational"]["errors"] == N


def test_a_streak_of_errors_stops_the_run(tmp_path: Path) -> None:
    """Every case times out; --max-consecutive-errors 3, one worker: the preflight's error (journaled, not counted
    in the streak) and 3 more, then the stop: 4 lines, 2 cases not run, the run incomplete."""
    cases, _ = _cases(tmp_path)
    det = Scripted(default=DetectorError("timeout", "slow"))
    result = _run(_settings(cases, tmp_path / "run", max_consecutive_errors=3), det)
    assert result.stopped == "3 consecutive timeout errors (the last: slow)"
    assert len(_journal(tmp_path / "run")) == 4
    assert result.document["metrics"]["n_not_run"] == 2 and result.complete is False
    assert result.document["stopped"] == result.stopped


def test_a_provider_stop_leaves_the_case_pending(tmp_path: Path) -> None:
    """The second case sent meets a provider stop: only the preflight's case is journaled, the rest pending."""
    cases, docs = _cases(tmp_path)
    ids = [d["id"] for d in docs]
    first, second = ids[0], _sent(ids[1:])[0]  # the preflight's, then the first of the send order
    det = Scripted({next(d["question"] for d in docs if d["id"] == second): ProviderStopped("quota spent")})
    result = _run(_settings(cases, tmp_path / "run"), det)
    assert result.stopped == "provider: quota spent"
    assert INTERRUPTED == "interrupted"
    journal = _journal(tmp_path / "run")
    assert len(journal) == 1 and journal[0]["id"] == first  # the preflight's case; the stopped one pending
    assert result.document["metrics"]["n_not_run"] == N - 1


def test_max_requests_counts_earlier_sessions_of_the_run_folder(tmp_path: Path) -> None:
    """6 cases, 1 request each. Session 1, --max-requests 2: 2 sent, stopped; journal 2; its session records 2
    requests. Session 2 (resume), --max-requests 5: 2 already spent -> 3 more (5 in all), stopped; journal 5.
    Session 3, --max-requests 9: 5 spent -> the last 1 case; complete."""
    cases, _ = _cases(tmp_path)
    out = tmp_path / "run"
    det = Counted(2)
    first = _run(_settings(cases, out, options=DetectorOptions(concurrency=1, max_requests=2)), det)
    assert first.stopped == "budget: --max-requests 2 reached (2 sent in all, 2 in this session)"
    assert len(_journal(out)) == 2
    manifest = json.loads((out / "run.json").read_text())
    assert [(s["cases"], s["requests"]) for s in manifest["sessions"]] == [(2, 2)]
    second = _run(
        _settings(cases, out, resume=True, options=DetectorOptions(concurrency=1, max_requests=5)), Counted(5)
    )
    assert second.stopped == "budget: --max-requests 5 reached (5 sent in all, 3 in this session)"
    assert len(_journal(out)) == 5
    third = _run(_settings(cases, out, resume=True, options=DetectorOptions(concurrency=1, max_requests=9)), Counted(9))
    assert third.stopped is None and third.complete is True and len(_journal(out)) == 6
    manifest = json.loads((out / "run.json").read_text())
    assert [(s["cases"], s["requests"]) for s in manifest["sessions"]] == [(2, 2), (3, 3), (1, 1)]
    assert manifest["sessions"][1]["settings"] == {"max_requests": 5}


def test_a_resume_counts_requests_the_sessions_recorded_beyond_the_journal(tmp_path: Path) -> None:
    """Session 1 spent 2 requests on 2 journaled cases; run.json then says 4 (cases stopped mid-retry): the resume
    starts from max(2, 4) = 4, so --max-requests 5 leaves 1 request: one more case."""
    cases, _ = _cases(tmp_path)
    out = tmp_path / "run"
    _run(_settings(cases, out, options=DetectorOptions(concurrency=1, max_requests=2)), Counted(2))
    manifest = json.loads((out / "run.json").read_text())
    manifest["sessions"][0]["requests"] = 4
    (out / "run.json").write_text(json.dumps(manifest))
    result = _run(
        _settings(cases, out, resume=True, options=DetectorOptions(concurrency=1, max_requests=5)), Counted(5)
    )
    assert result.stopped == "budget: --max-requests 5 reached (5 sent in all, 1 in this session)"
    assert len(_journal(out)) == 3


def test_a_resume_counts_the_journals_attempts_when_no_session_recorded_them(tmp_path: Path) -> None:
    """3 attempts a case; session 1 (--max-requests 6) answers 2 cases: 6 requests. run.json's record dropped (a
    killed session): the journal's 3 + 3 = 6 count; --max-requests 9 leaves 3: one more case."""
    cases, _ = _cases(tmp_path)
    out = tmp_path / "run"
    _run(_settings(cases, out, options=DetectorOptions(concurrency=1, max_requests=6)), Counted(6, attempts=3))
    assert [r["attempts"] for r in _journal(out)] == [3, 3]
    manifest = json.loads((out / "run.json").read_text())
    del manifest["sessions"][0]["requests"]
    (out / "run.json").write_text(json.dumps(manifest))
    result = _run(_settings(cases, out, resume=True, options=DetectorOptions(concurrency=1, max_requests=9)),
                  Counted(9, attempts=3))  # fmt: skip
    assert result.stopped == "budget: --max-requests 9 reached (9 sent in all, 3 in this session)"
    assert len(_journal(out)) == 3


def test_a_resume_asks_only_the_cases_not_yet_answered_and_retry_errors_asks_the_errors(tmp_path: Path) -> None:
    """Session 1: case 2 times out (5 answered, 1 error). Resume: nothing to ask (0 calls), still 1 error.
    Resume with --retry-errors: only case 2 is asked again, answered now; 0 errors; the journal keeps both lines
    of case 2 (7 lines), the later winning."""
    cases, docs = _cases(tmp_path)
    out = tmp_path / "run"
    q2 = docs[1]["question"]
    _run(_settings(cases, out), Scripted({q2: DetectorError("timeout", "slow")}))
    again = Scripted()
    result = _run(_settings(cases, out, resume=True), again)
    assert again.calls == [] and result.document["metrics"]["operational"]["errors"] == 1
    retry = Scripted()
    result = _run(_settings(cases, out, resume=True, retry_errors=True), retry)
    assert retry.calls == [q2]
    assert result.document["metrics"]["operational"]["errors"] == 0 and result.complete is True
    manifest = json.loads((out / "run.json").read_text())
    assert [s["cases"] for s in manifest["sessions"]] == [6, 0, 1]


def test_a_journal_line_of_another_content_is_asked_again_on_resume(tmp_path: Path) -> None:
    """Case 4's line carries another content hash (an older version of the case): the resume asks it again."""
    cases, docs = _cases(tmp_path)
    out = tmp_path / "run"
    _run(_settings(cases, out), Scripted())
    lines = _journal(out)
    lines[3]["hash"] = "0000000000000000"
    (out / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    again = Scripted()
    result = _run(_settings(cases, out, resume=True), again)
    assert again.calls == [docs[3]["question"]] and result.document["metrics"]["n_cases"] == N


def test_changed_settings_are_those_that_differ_from_the_first_session(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path)
    out = tmp_path / "run"
    _run(_settings(cases, out, limit=2), Scripted())
    manifest = json.loads((out / "run.json").read_text())
    same = _settings(cases, out, limit=2)
    assert _changed_settings(same, manifest) == {}
    other = _settings(cases, out, limit=3, options=DetectorOptions(concurrency=4))
    assert _changed_settings(other, manifest) == {"limit": 3, "concurrency": 4}


def test_a_detector_that_wants_more_in_flight_gets_it(tmp_path: Path) -> None:
    """--concurrency 1 but the detector wants 3: up to 3 cases at once (6 cases, so 3 workers); a batch of 3
    calls waits for each other here, so fewer workers would never finish."""
    cases, _ = _cases(tmp_path)

    class Batch(Scripted):
        concurrency = 3

        def __init__(self) -> None:
            super().__init__()
            self.waiting: list[asyncio.Future[None]] = []
            self.most = 0

        async def assess(self, request: Any) -> Prediction:
            self.calls.append(request["task"])
            if len(self.calls) == 1:  # the preflight: alone
                return Prediction("high")
            fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append(fut)
            self.most = max(self.most, sum(1 for f in self.waiting if not f.done()))
            if sum(1 for f in self.waiting if not f.done()) >= 3 or len(self.calls) == N:
                for f in self.waiting:
                    if not f.done():
                        f.set_result(None)
            await asyncio.wait_for(fut, 2.0)
            return Prediction("high")

    det = Batch()
    result = _run(_settings(cases, tmp_path / "run"), det)
    assert det.most == 3 and result.document["metrics"]["operational"]["errors"] == 0


def test_a_file_with_errors_is_refused_before_any_call(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 3)
    with cases.open("a") as f:
        f.write('{"id": "broken"}\n')
        f.write("not json\n")
    det = Scripted()
    with pytest.raises(InvalidCasesError) as err:
        _run(_settings(cases, tmp_path / "run"), det)
    assert str(err.value).startswith(f"{cases}: ")
    assert " error(s) in 2 line(s)" in str(err.value)
    assert det.calls == []
    result = _run(_settings(cases, tmp_path / "run", skip_invalid=True), det)
    assert result.document["metrics"]["n_cases"] == 3 and result.complete is False  # 2 invalid lines skipped


def test_nothing_to_evaluate_is_refused_with_the_reason(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 3)
    with pytest.raises(RunError) as err:
        _run(_settings(cases, tmp_path / "run", limit=0), Scripted())
    assert str(err.value) == f"{cases}: no valid case to evaluate (3 line(s) read)"
    with pytest.raises(RunError) as err:
        _run(_settings(cases, tmp_path / "run", tags=("nowhere",)), Scripted())
    assert str(err.value) == (
        f"{cases}: no valid case matching {{'categories': [], 'tags': ['nowhere']}} to evaluate (3 line(s) read)"
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(RunError) as err:
        _run(_settings(empty, tmp_path / "run"), Scripted())
    assert str(err.value) == f"{empty}: no cases: the file is empty"


def test_limits_are_refused_for_a_detector_that_sends_no_requests(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 2)
    options = DetectorOptions(concurrency=1, rpm=60, max_requests=5)
    with pytest.raises(UsageError) as err:
        _run(_settings(cases, tmp_path / "run", options=options), Scripted())
    assert str(err.value) == "--rpm, --max-requests: only for HTTP and llm: detectors, which send requests"
    options = DetectorOptions(concurrency=1, tpm=1000, max_cost=1.0, price_prompt_per_mtok=1.0,
                              price_completion_per_mtok=1.0)  # fmt: skip
    with pytest.raises(UsageError, match=r"^--tpm, --max-cost: only for"):
        _run(_settings(cases, tmp_path / "run", options=options), Scripted())
    assert not (tmp_path / "run").exists()


def test_a_detector_trained_on_the_files_items_is_refused(tmp_path: Path) -> None:
    """Trained on 4 of the file's source items (original cases: their ids) and one other: 4 shared, the first 3
    named in sorted order."""
    cases, docs = _cases(tmp_path)
    det = Scripted()
    ids = [d["id"] for d in docs]
    det.train_source_items = ("elsewhere:1", ids[4], ids[0], ids[2], ids[1])  # type: ignore[attr-defined]
    with pytest.raises(RunError) as err:
        _run(_settings(cases, tmp_path / "run"), det)
    assert str(err.value) == (
        f"refusing to evaluate: the detector was trained on 4 source item(s) of this file (e.g. {ids[0]}, {ids[1]}, "
        f"{ids[2]}); train on a split that shares no source question"
    )
    assert det.calls == []
    fine = Scripted()
    fine.train_source_items = ("elsewhere:1",)  # type: ignore[attr-defined]
    assert _run(_settings(cases, tmp_path / "ok"), fine).complete is True


def test_the_response_cache_is_used_when_asked(tmp_path: Path) -> None:
    """--cache: the second run asks nothing, every line marked cached; --cache-refresh alone turns it on and asks
    again."""
    cases, _ = _cases(tmp_path, 3)
    opts = DetectorOptions(concurrency=1, cache=True, cache_dir=str(tmp_path / "cache"))
    first = Scripted()
    _run(_settings(cases, tmp_path / "one", options=opts), first)
    second = Scripted()
    result = _run(_settings(cases, tmp_path / "two", options=opts), second)
    assert len(first.calls) == 3 and second.calls == []
    assert all(r.get("cached") is True for r in _journal(tmp_path / "two"))
    assert result.document["metrics"]["operational"]["cached"] == 3
    refresh = Scripted()
    ropts = DetectorOptions(concurrency=1, cache_refresh=True, cache_dir=str(tmp_path / "cache"))
    _run(_settings(cases, tmp_path / "three", options=ropts), refresh)
    assert len(refresh.calls) == 3 and second.closed == 0
    off = Scripted()
    _run(_settings(cases, tmp_path / "four"), off)  # a Python object: no cache by default
    assert len(off.calls) == 3


def test_a_stop_from_the_preflight_leaves_every_case_pending(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 3)
    result = _run(_settings(cases, tmp_path / "run"), Scripted(default=BudgetSpent("--max-requests 0 reached")))
    assert result.stopped == "budget: --max-requests 0 reached"
    assert _journal(tmp_path / "run") == [] and result.document["metrics"]["n_not_run"] == 3
    assert isinstance(BudgetSpent("x"), RunStopped)


def test_a_taken_folder_is_refused_and_overwrite_replaces_it(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 2)
    out = tmp_path / "run"
    _run(_settings(cases, out), Scripted())
    with pytest.raises(RunError):
        _run(_settings(cases, out), Scripted())
    result = _run(_settings(cases, out, overwrite=True), Scripted(default="low"))
    assert [r["risk"] for r in _journal(out)] == ["low", "low"] and result.complete is True


# --- what the run writes on its way, and what it returns ---------------------------------------------------------


class Fingerprinted(Scripted):
    def __init__(self, version: int, **kw: Any) -> None:
        super().__init__(**kw)
        self.version = version

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "test", "version": self.version}


SECRET = "hunter2-not-a-word-0123456789"


class Secretive(Scripted):
    def secrets(self) -> list[str]:
        return [SECRET]


def test_epochs_journal_each_items_fields_and_every_latency_is_small(tmp_path: Path) -> None:
    """2 epochs of 3 cases: 6 lines, each with its epoch (1 or 2), the preflight's too; every latency the few
    milliseconds the call took (well under 1 s), and the session's wall time too."""
    cases, docs = _cases(tmp_path, 3)
    result = _run(_settings(cases, tmp_path / "run", epochs=2), Scripted())
    journal = _journal(tmp_path / "run")
    assert sorted((r["id"], r["epoch"]) for r in journal) == sorted((d["id"], e) for d in docs for e in (1, 2))
    assert all(0 <= r["latency_s"] < 1.0 for r in journal)
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert 0 <= manifest["sessions"][0]["wall_s"] < 5.0
    assert result.document["metrics"]["operational"]["wall_s"] < 5.0


def test_the_run_returns_its_folder_labels_outcomes_problems_and_details(tmp_path: Path) -> None:
    """One case's expected risk departs from its category's (a warning): the run goes on, and says so in problems."""
    cases, docs = _cases(tmp_path, 3)
    docs[0]["expected_risk"] = "low" if docs[0]["expected_risk"] != "low" else "high"
    cases.write_text("".join(json.dumps(d) + "\n" for d in docs))
    result = _run(_settings(cases, tmp_path / "run"), Scripted(default="medium"))
    assert result.run_dir == str(tmp_path / "run")
    assert [lab.case_id for lab in result.labels] == [d["id"] for d in docs]
    assert sorted(o.case_id for o in result.outcomes) == sorted(d["id"] for d in docs)
    assert {o.risk for o in result.outcomes} == {"medium"}
    assert len(result.problems) == 1 and "departs from" in result.problems[0] and str(cases) in result.problems[0]
    assert result.case_details is not None
    assert result.case_details()[docs[1]["id"]]["question"] == docs[1]["question"]


def _explorer(run_dir: Path) -> dict[str, Any]:
    """The case explorer's data in report.html: base64 of gzip of JSON, unpacked here."""
    import base64
    import gzip
    import re

    html = (run_dir / "report.html").read_text()
    packed = re.search(r"id='cases-data'>([^<]*)</script>", html)
    assert packed is not None
    return json.loads(gzip.decompress(base64.b64decode(packed.group(1))))


def test_the_pages_case_text_comes_from_what_the_run_read(tmp_path: Path) -> None:
    """The cases file is changed while the run goes on (the second call): the page still shows the questions the
    detector was sent, read from the run's own copy, not the file as it is now."""
    cases, docs = _cases(tmp_path, 3)

    class Changer(Scripted):
        async def assess(self, request: Any) -> Prediction:
            if len(self.calls) == 1:
                cases.write_text(cases.read_text().replace("what is", "WHAT IS"))
            return await super().assess(request)

    _run(_settings(cases, tmp_path / "run"), Changer())
    text = json.dumps(_explorer(tmp_path / "run"))
    assert all(d["question"] in text for d in docs)


def test_a_strict_run_counts_a_warning_as_an_error(tmp_path: Path) -> None:
    cases, docs = _cases(tmp_path, 3)
    docs[0]["expected_risk"] = "low" if docs[0]["expected_risk"] != "low" else "high"
    cases.write_text("".join(json.dumps(d) + "\n" for d in docs))
    with pytest.raises(InvalidCasesError) as err:
        _run(_settings(cases, tmp_path / "run", strict=True), Scripted())
    assert str(err.value) == f"{cases}: 1 error(s) in 1 line(s)"
    assert len(err.value.problems) == 1 and "departs from" in str(err.value.problems[0])


def test_a_shard_validates_only_its_own_cases_and_is_never_complete(tmp_path: Path) -> None:
    """An invalid line (no question) whose id falls in shard 2 of 2: shard 1 runs, shard 2 is refused. Shard 1 is
    incomplete: a shard is a part."""
    import hashlib

    def shard_of(case_id: str) -> int:  # by hand: the first 12 hex digits of sha256(id), mod 2, plus one
        return int(hashlib.sha256(case_id.encode()).hexdigest()[:12], 16) % 2 + 1

    cases, docs = _cases(tmp_path, 4)
    bad_id = next(f"BAD-{i}" for i in range(100) if shard_of(f"BAD-{i}") == 2)
    bad = {k: v for k, v in docs[0].items() if k != "question"} | {"id": bad_id}
    with cases.open("a") as f:
        f.write(json.dumps(bad) + "\n")
    result = _run(_settings(cases, tmp_path / "one", shard=(1, 2)), Scripted())
    assert result.complete is False and result.stopped is None and result.document["metrics"]["n_not_run"] == 0
    with pytest.raises(InvalidCasesError):
        _run(_settings(cases, tmp_path / "two", shard=(2, 2)), Scripted())


def test_a_run_whose_last_case_ends_a_streak_is_stopped_and_incomplete(tmp_path: Path) -> None:
    """3 cases all time out, --max-consecutive-errors 2, one worker: the preflight's error, then 2 in the streak:
    the third case ends it; every case has a line, none is not run, yet the run stopped: incomplete."""
    cases, _ = _cases(tmp_path, 3)
    result = _run(
        _settings(cases, tmp_path / "run", max_consecutive_errors=2), Scripted(default=DetectorError("timeout", "t"))
    )
    assert result.stopped == "2 consecutive timeout errors (the last: t)"
    assert result.document["metrics"]["n_not_run"] == 0 and result.complete is False


def test_the_send_order_is_the_seeded_shuffle_of_the_pending_cases(tmp_path: Path) -> None:
    """One worker asks the cases one by one: the preflight the file's first, then the others in the send order worked
    out by hand, seed 5."""
    cases, docs = _cases(tmp_path)
    det = Scripted()
    _run(_settings(cases, tmp_path / "run", seed=5), det)
    question = {d["id"]: d["question"] for d in docs}
    ids = [d["id"] for d in docs]
    assert det.calls == [question[i] for i in [ids[0], *_sent(ids[1:], 5)]]


def test_the_run_folder_may_be_deep_and_run_json_is_there_while_cases_run(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 3)
    out = tmp_path / "a" / "b" / "run"
    seen: list[Any] = []

    class Peek(Scripted):
        async def assess(self, request: Any) -> Prediction:
            seen.append(json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else None)
            return await super().assess(request)

    _run(_settings(cases, out), Peek())
    assert seen[0] is None  # the preflight: no folder yet
    assert all(isinstance(s, dict) and "identity" in s for s in seen[1:]) and len(seen) == 3


def test_secrets_are_scrubbed_from_the_journal_and_the_preflights_message(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 2)
    det = Secretive(default=Prediction("low", extra={"echo": f"token {SECRET}"}))
    _run(_settings(cases, tmp_path / "run"), det)
    assert SECRET not in (tmp_path / "run" / "predictions.jsonl").read_text()
    failing = Secretive(
        default=DetectorError("http_status", f"denied {SECRET}", status=403, raw=f"no {SECRET} " + "x" * 400)
    )
    with pytest.raises(PreflightFailed) as err:
        _run(_settings(cases, tmp_path / "two"), failing)
    message = str(err.value)
    assert SECRET not in message and "http_status: denied " in message
    answered = message.split("; it answered: ")[1].split("; no other case was sent")[0]
    assert len(answered) == 300 and answered.startswith("no ") and answered.endswith("x")


def test_a_preflight_that_raises_fails_the_run_and_says_so_without_a_reply(tmp_path: Path) -> None:
    cases, docs = _cases(tmp_path, 3)
    with pytest.raises(PreflightFailed) as err:
        _run(_settings(cases, tmp_path / "run"), Scripted(default=ValueError("boom")))
    first = _first_sent([d["id"] for d in docs])
    assert str(err.value) == (
        f"preflight: the detector failed on the first case ({first}) after 1 attempt(s): detector_exception: "
        "ValueError: boom; no other case was sent (--no-preflight skips this check)"
    )


def test_the_preflight_goes_through_the_detectors_own_preflight(tmp_path: Path) -> None:
    cases, docs = _cases(tmp_path, 3)

    class Own(Scripted):
        async def preflight(self, request: Any) -> Prediction:
            self.calls.append("preflight")
            return Prediction("medium")

    det = Own(default="low")
    _run(_settings(cases, tmp_path / "run"), det)
    first = _first_sent([d["id"] for d in docs])
    risks = {r["id"]: r["risk"] for r in _journal(tmp_path / "run")}
    assert risks == {d["id"]: "medium" if d["id"] == first else "low" for d in docs}
    assert det.calls[0] == "preflight" and len(det.calls) == 3


def _variants_pending(tmp_path: Path, cases: Path) -> Path:
    """A run with the order probe whose variant lines are then dropped from the journal: a resume has only
    variants left to ask, so its preflight asks a variant."""
    out = tmp_path / "run"
    _run(_settings(cases, out, probes=("order",)), OnVariants(set(), None))
    plain = [r for r in _journal(out) if "variant" not in r]
    assert plain and len(plain) < len(_journal(out))
    (out / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in plain))
    return out


class OnVariants(Scripted):
    """Answers a request as it is; fails on a reordered one (its answers' first text is not the case's)."""

    def __init__(self, firsts: set[str], error: BaseException | None) -> None:
        super().__init__()
        self.firsts, self.error = firsts, error

    async def assess(self, request: Any) -> Prediction:
        self.calls.append(request["task"])
        if self.error is not None and request["answers"][0]["text"] not in self.firsts:
            raise self.error
        return Prediction("high")


def test_a_variant_preflight_fails_the_run_only_for_a_refusal(tmp_path: Path) -> None:
    """Only variants pending. A detector that raises on a variant, or misreads it: journaled, the run goes on (what a
    variant alone fails on says little). One refused (401) on it: the preflight fails."""
    cases, docs = _cases(tmp_path, 4)
    firsts = {d["answers"][0]["text"] for d in docs}
    out = _variants_pending(tmp_path, cases)
    n_plain = len(_journal(out))
    det = OnVariants(firsts, ValueError("cannot reorder"))
    result = _run(_settings(cases, out, resume=True, probes=("order",)), det)
    assert len(_journal(out)) > n_plain and result.stopped is None
    (tmp_path / "m").mkdir()
    out2 = _variants_pending(tmp_path / "m", cases)
    misread = OnVariants(firsts, DetectorError("invalid_response", "no risk", misread=True))
    assert _run(_settings(cases, out2, resume=True, probes=("order",)), misread).stopped is None
    (tmp_path / "r").mkdir()
    out3 = _variants_pending(tmp_path / "r", cases)
    refused = OnVariants(firsts, DetectorError("http_status", "HTTP 401", status=401))
    with pytest.raises(PreflightFailed, match="http_status: HTTP 401"):
        _run(_settings(cases, out3, resume=True, probes=("order",)), refused)


def test_the_preflight_is_cached_under_its_epoch(tmp_path: Path) -> None:
    """Run 1 without a preflight stores every answer under its (request, epoch) key; run 2 with one asks nothing:
    its preflight found its case's epoch-1 answer."""
    cases, _ = _cases(tmp_path, 3)
    opts = DetectorOptions(concurrency=1, cache=True, cache_dir=str(tmp_path / "cache"))
    _run(_settings(cases, tmp_path / "one", options=opts, preflight=False), Scripted())
    det = Scripted()
    _run(_settings(cases, tmp_path / "two", options=opts), det)
    assert det.calls == []


def test_refresh_alone_turns_the_cache_on_and_stores_anew(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 3)
    refresh = DetectorOptions(concurrency=1, cache_refresh=True, cache_dir=str(tmp_path / "cache"))
    _run(_settings(cases, tmp_path / "one", options=refresh), Scripted())
    det = Scripted()
    use = DetectorOptions(concurrency=1, cache=True, cache_dir=str(tmp_path / "cache"))
    _run(_settings(cases, tmp_path / "two", options=use), det)
    assert det.calls == []


def test_an_llm_spec_is_cached_by_default_only_when_deterministic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same scripted object run as an llm: spec: at temperature 0 and one sample the second run replays; at
    temperature 0.5, or with 3 samples, it asks again. The cache is in $XDG_CACHE_HOME unless --cache-dir."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cases, _ = _cases(tmp_path, 2)

    def go(out: str, **opts: Any) -> int:
        det = Scripted()
        settings = _settings(cases, tmp_path / out, options=DetectorOptions(concurrency=1, **opts))
        _run(EvalSettings(**{**settings.__dict__, "detector": parse_spec("llm:m@http://127.0.0.1:9/v1")}), det)
        return len(det.calls)

    assert (go("a"), go("b")) == (2, 0)
    assert (tmp_path / "xdg" / "fcb-harness" / "responses.sqlite3").exists()
    assert (go("c", temperature=0.5), go("d", temperature=0.5)) == (2, 2)
    assert (go("e", samples=3), go("f", samples=3)) == (2, 2)
    assert (go("g", cache_dir=str(tmp_path / "own")), go("h", cache_dir=str(tmp_path / "own"))) == (2, 0)
    assert (tmp_path / "own" / "responses.sqlite3").exists()


def test_the_cache_keys_the_detectors_fingerprint(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 2)
    opts = DetectorOptions(concurrency=1, cache=True, cache_dir=str(tmp_path / "cache"))
    calls = []
    for i, version in enumerate((1, 2, 2)):
        det = Fingerprinted(version)
        result = _run(_settings(cases, tmp_path / f"r{i}", options=opts), det)
        calls.append(len(det.calls))
        assert result.document["detector"]["fingerprint"] == {"kind": "test", "version": version}
    assert calls == [2, 2, 0]
    manifest = json.loads((tmp_path / "r0" / "run.json").read_text())
    assert manifest["identity"]["fingerprint"] == {"kind": "test", "version": 1}


def test_the_metrics_name_the_detector(tmp_path: Path) -> None:
    cases, _ = _cases(tmp_path, 2)
    result = _run(_settings(cases, tmp_path / "run", name="mine"), Scripted())
    assert result.document["detector"] == {
        "spec": "scripted.py:Scripted",
        "name": "scripted",
        "label": "mine",
        "fingerprint": {"kind": "object", "type": f"{Scripted.__module__}.Scripted"},
    }


def test_a_detector_the_run_opened_is_closed_by_it_cached_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No detector given: the run opens one (with the spec, the options and the engine settings) and closes it;
    behind the cache too; and it says what it is opening while it lasts, only when showing progress."""
    import harness.run.runner as runner_mod

    cases, _ = _cases(tmp_path, 2)
    opened: list[Any] = []
    beats: list[str] = []

    def fake_open(spec: Any, options: Any, engine: Any) -> Scripted:
        det = Scripted()
        opened.append((spec, options, engine, det))
        return det

    class Beat:
        def __init__(self, what: str) -> None:
            beats.append(what)

        def __enter__(self) -> None:
            return None

        def __exit__(self, *a: object) -> None:
            return None

    monkeypatch.setattr(runner_mod, "open_detector", fake_open)
    monkeypatch.setattr(runner_mod, "heartbeat", Beat)
    settings = _settings(cases, tmp_path / "plain")
    _run(settings, None)
    spec, options, engine, det = opened[-1]
    assert (spec, options, engine) == (settings.detector, settings.options, settings.engine_settings())
    assert det.closed == 1 and len(det.calls) == 2 and beats == []
    cached = _settings(cases, tmp_path / "cached", options=DetectorOptions(concurrency=1, cache=True,
                                                                            cache_dir=str(tmp_path / "c")))  # fmt: skip
    _run(cached, None)
    assert opened[-1][3].closed == 1
    _run(_settings(cases, tmp_path / "shown", progress="lines"), None)
    assert beats == ["fcb eval: opening scripted.py:Scripted"]


def test_progress_lines_count_cases_and_errors_from_where_the_run_stands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """6 cases, the preflight's case and one other fail: lines after each case (6 / 20 rounds up to 1); the last
    says 6/6 and 2 errors. A resume after dropping 2 lines starts at 4/6."""
    import re

    cases, docs = _cases(tmp_path)
    first = _first_sent([d["id"] for d in docs])
    q_first = next(d["question"] for d in docs if d["id"] == first)
    q_other = next(d["question"] for d in docs if d["id"] != first)
    det = Scripted({q_first: DetectorError("timeout", "t"), q_other: DetectorError("timeout", "t")})
    out = tmp_path / "run"
    _run(_settings(cases, out, progress="lines"), det)
    lines = re.findall(r"fcb eval: (\d+)/(\d+) cases .*?, (\d+) error\(s\)", capsys.readouterr().err)
    assert lines[-1] == ("6", "6", "2") and [int(n) for n, _, _ in lines] == [1, 2, 3, 4, 5, 6]
    assert lines[0][2] == "1"  # the preflight's case failed: counted at once
    journal = _journal(out)
    keep = [r for r in journal if r["error"] is None][:4]
    (out / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    _run(_settings(cases, out, progress="lines", resume=True), Scripted())
    lines = re.findall(r"fcb eval: (\d+)/(\d+) cases .*?, (\d+) error\(s\)", capsys.readouterr().err)
    assert [(int(n), int(t), int(e)) for n, t, e in lines] == [(5, 6, 0), (6, 6, 0)]


def test_a_signal_stops_the_run_with_its_cases_pending(tmp_path: Path) -> None:
    """SIGINT while the third case is asked (one worker): the run stops "interrupted"; that case and those after
    it stay pending; the folder is written."""
    import os
    import signal

    cases, _ = _cases(tmp_path)

    class Interrupting(Scripted):
        async def assess(self, request: Any) -> Prediction:
            if len(self.calls) == 2:
                os.kill(os.getpid(), signal.SIGINT)
            return await super().assess(request)

    result = _run(_settings(cases, tmp_path / "run"), Interrupting())
    assert result.stopped == "interrupted" and result.complete is False
    assert len(_journal(tmp_path / "run")) == 2 and result.document["metrics"]["n_not_run"] == N - 2


def test_a_full_disk_is_said_with_how_to_go_on_and_other_errors_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import harness.run.runner as runner_mod

    cases, _ = _cases(tmp_path, 2)
    out = tmp_path / "run"

    def full(run_dir: Path, document: Any, scanned: Any, items: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(run_dir / "metrics.json"))

    monkeypatch.setattr(runner_mod, "write_outputs", full)
    with pytest.raises(RunError) as err:
        _run(_settings(cases, out), Scripted())
    assert str(err.value).startswith(f"{out / 'metrics.json'}: No space left on device; the cases that finished")

    def denied(run_dir: Path, document: Any, scanned: Any, items: Any) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(run_dir / "metrics.json"))

    monkeypatch.setattr(runner_mod, "write_outputs", denied)
    with pytest.raises(PermissionError):
        _run(_settings(cases, tmp_path / "two"), Scripted())


def test_the_details_leave_the_question_out_once_the_cases_file_changed(tmp_path: Path) -> None:
    """The file gets one more blank line after the run: no case's content changed, but the file is not the one the
    run read (its sha256 differs), so no question is shown: its text may not be what the detector saw."""
    cases, docs = _cases(tmp_path, 2)
    result = _run(_settings(cases, tmp_path / "run"), Scripted())
    assert result.case_details()[docs[0]["id"]]["question"] == docs[0]["question"]
    with cases.open("a") as f:
        f.write("\n")
    details = result.case_details()
    assert sorted(details) == sorted(d["id"] for d in docs)
    assert all("question" not in d for d in details.values())
