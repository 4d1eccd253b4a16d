"""Reading a run folder back (`harness.runfolder.read`), unit by unit: which journal lines a reader keeps (a later
line wins, a torn last line is left out, a line outside scope.json is left out), the message that names the file and
line, and the one record a case that a run with epochs reduces to (which epoch's line stands, with which score).
Journals are written by hand here, each line's fate worked out in the test. (tests/runfolder/test_read.py drives
the readers through the CLI.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import harness.runfolder.read as read_mod
from harness.errors import RunLoadError
from harness.runfolder.read import (
    MAX_JOURNAL_BYTES,
    case_records,
    has_items,
    item_records,
    journal_records,
    read_metrics,
    records_by_case,
    reduced_records,
)
from harness.types import ItemKey


def _rec(
    case_id: str,
    risk: str | None = "high",
    *,
    digest: str = "h1",
    score: float | None = None,
    epoch: int | None = None,
    variant: str | None = None,
    error: str | None = None,
    permutation: list[int] | None = None,
) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": case_id, "hash": digest, "category": "echo_cascade", "expected": "high"}
    if epoch is not None:
        rec["epoch"] = epoch
    if variant is not None:
        rec["variant"] = variant
    if permutation is not None:
        rec["permutation"] = permutation
    rec |= {"attempts": 1, "latency_s": 0.5, "risk": risk, "score": score}
    if error is None:
        rec |= {"response": {}, "error": None}
    else:
        rec |= {"risk": None, "score": None, "error": {"kind": error, "message": "boom"}}
    return rec


def _journal(run: Path, records: list[dict[str, Any]], tail: str = "") -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + tail)
    return run


def _scope(run: Path, pairs: list[tuple[str, str]]) -> None:
    (run / "scope.json").write_text(json.dumps({"cases": [list(p) for p in pairs]}))


# --- read_metrics ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run of 4 cases, each answered "high" (in process, in a few milliseconds)."""
    from casegen import write_cases

    from harness.run.api import evaluate

    tmp = tmp_path_factory.mktemp("finished")
    cases = write_cases(tmp / "cases.jsonl", 4)
    evaluate(cases, lambda request: "high", out=str(tmp / "run"), n_boot=10)
    return tmp / "run"


def test_read_metrics_is_the_file_as_written(finished: Path) -> None:
    doc = read_metrics(finished)
    assert doc == json.loads((finished / "metrics.json").read_text())
    assert doc["metrics"]["n_cases"] == 4


def test_read_metrics_of_an_unfinished_run_says_how_to_finish_it(tmp_path: Path) -> None:
    run = tmp_path / "my run"
    run.mkdir()
    with pytest.raises(RunLoadError) as err:
        read_metrics(run)
    assert str(err.value) == (
        f"{run / 'metrics.json'}: no such file; a run that has not finished has none (fcb eval --resume '{run}')"
    )


# --- journal_records ------------------------------------------------------------------------------------------------


def test_a_later_line_wins_and_a_torn_last_line_is_left_out_and_left_in_place(tmp_path: Path) -> None:
    """Lines: a=high, b=low, a=low, then "{"id": "c"... without its newline. Kept: a=low (line 3 wins), b=low;
    c is not there; the file is as it was."""
    torn = '{"id": "c", "hash": "h1"'
    run = _journal(tmp_path / "run", [_rec("a", "high"), _rec("b", "low"), _rec("a", "low")], tail=torn)
    before = (run / "predictions.jsonl").read_bytes()
    recs = journal_records(run)
    assert list(recs) == ["a", "b"]
    assert recs["a"]["risk"] == "low" and recs["b"]["risk"] == "low"
    assert (run / "predictions.jsonl").read_bytes() == before


def test_one_line_journal_and_empty_journal(tmp_path: Path) -> None:
    assert list(journal_records(_journal(tmp_path / "one", [_rec("a")]))) == ["a"]
    assert journal_records(_journal(tmp_path / "none", [])) == {}


def test_scope_leaves_out_other_ids_and_older_contents_unless_unscoped(tmp_path: Path) -> None:
    """scope.json: (a, h1), (b, h2). Lines: a/h1, b/h1 (an older content of b), c/h1 (not counted), b/h2.
    Scoped: a and b/h2; unscoped: a, b/h2 (the later b line wins), c."""
    run = _journal(tmp_path / "run", [_rec("a"), _rec("b", "low"), _rec("c"), _rec("b", "medium", digest="h2")])
    _scope(run, [("a", "h1"), ("b", "h2")])
    scoped = journal_records(run)
    assert sorted(scoped) == ["a", "b"] and scoped["b"]["hash"] == "h2" and scoped["b"]["risk"] == "medium"
    unscoped = journal_records(run, scoped=False)
    assert sorted(unscoped) == ["a", "b", "c"] and unscoped["b"]["hash"] == "h2"
    # with the older line last, the scoped read still keeps h2 and the unscoped one takes the last line (h1)
    run2 = _journal(tmp_path / "run2", [_rec("b", "medium", digest="h2"), _rec("b", "low")])
    _scope(run2, [("b", "h2")])
    assert journal_records(run2)["b"]["risk"] == "medium"
    assert journal_records(run2, scoped=False)["b"]["risk"] == "low"


def test_without_a_scope_file_every_line_counts(tmp_path: Path) -> None:
    run = _journal(tmp_path / "run", [_rec("a"), _rec("z", digest="h9")])
    assert sorted(journal_records(run)) == ["a", "z"]


def test_a_journal_of_items_is_refused_naming_its_first_item_line(tmp_path: Path) -> None:
    """Line 1 plain, line 2 the first with an epoch, line 3 a variant: the message names line 2 and ``epoch``."""
    run = _journal(tmp_path / "run", [_rec("a"), _rec("b", epoch=2), _rec("c", variant="order")])
    path = run / "predictions.jsonl"
    with pytest.raises(RunLoadError) as err:
        journal_records(run)
    assert str(err.value).startswith(f"{path}:2: epoch: the journal of a run with --epochs or --probe")
    run = _journal(tmp_path / "v", [_rec("c", variant="order")])
    with pytest.raises(RunLoadError, match=r"predictions.jsonl:1: variant: "):
        journal_records(run)


def test_a_missing_journal_and_a_directory_in_its_place(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    with pytest.raises(RunLoadError) as err:
        journal_records(run)
    path = run / "predictions.jsonl"
    assert str(err.value) == f"{path}: no such file; not a run folder, or one whose run never started"
    path.mkdir()
    with pytest.raises(RunLoadError) as err:
        item_records(run)
    assert str(err.value).startswith(f"{path}: ") and "no such file" not in str(err.value)


def test_the_journal_is_read_with_a_16_gib_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """16 << 30 = 16 * 1024**3 = 17,179,869,184 bytes, the cap handed to the reader of regular files."""
    assert MAX_JOURNAL_BYTES == 17_179_869_184
    seen: list[int] = []
    real = read_mod.read_regular

    def spy(path: Path, max_bytes: int) -> bytes:
        seen.append(max_bytes)
        return real(path, max_bytes)

    monkeypatch.setattr(read_mod, "read_regular", spy)
    journal_records(_journal(tmp_path / "run", [_rec("a")]))
    assert seen == [17_179_869_184]


def test_an_over_cap_journal_is_refused_with_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read_mod, "MAX_JOURNAL_BYTES", 10)
    run = _journal(tmp_path / "run", [_rec("a")])
    with pytest.raises(RunLoadError) as err:
        journal_records(run)
    size = len((run / "predictions.jsonl").read_bytes())
    assert str(err.value) == f"{run / 'predictions.jsonl'}: {size} bytes, over the 10-byte limit"


# --- item_records, has_items, records_by_case -------------------------------------------------------------------


def test_item_records_key_each_line_by_case_epoch_variant(tmp_path: Path) -> None:
    """A plain line is (a, 1, None); epoch lines (b, 1), (b, 2); a variant (b, 2, order); a repeated (b, 2) wins."""
    recs = [_rec("a"), _rec("b", epoch=1), _rec("b", "low", epoch=2), _rec("b", epoch=2, variant="order"),
            _rec("b", "medium", epoch=2)]  # fmt: skip
    items = item_records(_journal(tmp_path / "run", recs))
    assert list(items) == [ItemKey("a"), ItemKey("b", 1), ItemKey("b", 2), ItemKey("b", 2, "order")]
    assert items[ItemKey("b", 2)]["risk"] == "medium"
    assert has_items(items)
    assert not has_items({ItemKey("a"): _rec("a")})  # type: ignore[dict-item]
    assert not has_items({})


def test_item_records_are_scoped_unless_asked_not_to_be(tmp_path: Path) -> None:
    """scope.json counts (a, h1) only: the (b, 1) and (a, 2)/h2 lines are left out unless scoped=False."""
    run = _journal(tmp_path / "run", [_rec("a", epoch=1), _rec("b", epoch=1), _rec("a", epoch=2, digest="h2")])
    _scope(run, [("a", "h1")])
    assert list(item_records(run)) == [ItemKey("a", 1)]
    assert list(item_records(run, scoped=False)) == [ItemKey("a", 1), ItemKey("b", 1), ItemKey("a", 2)]


def test_a_malformed_line_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    """Line 2 says risk "huge": the message names predictions.jsonl, line 2 and the field risk."""
    run = _journal(tmp_path / "run", [_rec("a"), _rec("b", "huge")])
    with pytest.raises(RunLoadError) as err:
        item_records(run)
    assert str(err.value).startswith(f"{run / 'predictions.jsonl'}:2: risk: ")


def test_a_plain_runs_records_by_case_are_the_records_themselves() -> None:
    a, b = _rec("a"), _rec("b", "low")
    items = {ItemKey("a"): a, ItemKey("b"): b}
    got = records_by_case(items, "first")  # type: ignore[arg-type]
    assert got == {"a": a, "b": b} and got["a"] is a


# --- reduced_records --------------------------------------------------------------------------------------------------


def test_mode_keeps_the_earliest_epoch_that_gave_the_winning_verdict_with_the_mean_score() -> None:
    """Epochs (given out of order): 3 high 0.9, 1 low 0.1, 2 high 0.6. Votes: high 2, low 1 -> high; the earliest
    epoch that said high is 2, so its line stands; score = mean(0.1, 0.6, 0.9) = 1.6 / 3 = 0.5333...; no item
    fields. The variant line (epoch 1, order, risk medium) takes no part."""
    items = {
        ItemKey("a", 3): _rec("a", "high", epoch=3, score=0.9),
        ItemKey("a", 1, "order"): _rec("a", "medium", epoch=1, variant="order", permutation=[1, 0], score=0.0),
        ItemKey("a", 1): _rec("a", "low", epoch=1, score=0.1),
        ItemKey("a", 2): {**_rec("a", "high", epoch=2, score=0.6), "latency_s": 2.0},
    }
    out = reduced_records(items, "mode")  # type: ignore[arg-type]
    assert list(out) == ["a"]
    one = out["a"]
    assert one["risk"] == "high" and one["latency_s"] == 2.0  # epoch 2's line
    assert one["score"] == pytest.approx(1.6 / 3)
    assert not {"epoch", "variant", "permutation"} & set(one)


def test_first_keeps_epoch_one_and_its_own_score() -> None:
    """Reducer first: epoch 1 (low, 0.1) stands, whatever epochs 2 and 3 said; its score is its own, 0.1."""
    items = {
        ItemKey("a", 2): _rec("a", "high", epoch=2, score=0.6),
        ItemKey("a", 1): {**_rec("a", "low", epoch=1, score=0.1), "latency_s": 3.0},
        ItemKey("a", 3): _rec("a", "high", epoch=3, score=0.9),
    }
    one = reduced_records(items, "first")["a"]  # type: ignore[arg-type]
    assert (one["risk"], one["score"], one["latency_s"]) == ("low", 0.1, 3.0)
    assert "epoch" not in one


def test_a_tie_goes_to_the_earlier_epoch_and_a_case_of_errors_keeps_the_lowest_epochs_error() -> None:
    """a: epoch 1 medium (no score), 2 low 0.2 -> a 1-1 tie, the earlier (medium) wins; score = mean of the one
    score given = 0.2. b: epochs 2 and 1 both errors -> b's epoch 1 error line, score None as written."""
    items = {
        ItemKey("a", 1): {**_rec("a", "medium", epoch=1), "latency_s": 7.0},
        ItemKey("a", 2): _rec("a", "low", epoch=2, score=0.2),
        ItemKey("b", 2): _rec("b", epoch=2, error="timeout"),
        ItemKey("b", 1): {**_rec("b", epoch=1, error="http_error"), "latency_s": 9.0},
    }
    out = reduced_records(items, "mode")  # type: ignore[arg-type]
    assert (out["a"]["risk"], out["a"]["score"], out["a"]["latency_s"]) == ("medium", 0.2, 7.0)
    assert out["b"]["risk"] is None and out["b"]["score"] is None
    assert out["b"]["error"] == {"kind": "http_error", "message": "boom"} and out["b"]["latency_s"] == 9.0


def test_a_case_with_only_variants_is_left_out() -> None:
    items = {ItemKey("a", 1, "order"): _rec("a", epoch=1, variant="order"), ItemKey("b", 1): _rec("b", epoch=1)}
    assert list(reduced_records(items, "mode")) == ["b"]  # type: ignore[arg-type]


# --- case_records ---------------------------------------------------------------------------------------------------


def _epochs_run(tmp_path: Path, reducer: str | None) -> Path:
    """A real run of 2 cases with 2 epochs (so run.json holds the reducer), its journal then written by hand for
    its first case: epoch 1 low 0.1, epoch 2 high 0.7."""
    from casegen import write_cases

    from harness.run.api import evaluate

    cases = write_cases(tmp_path / "cases.jsonl", 2)
    extra = {} if reducer is None else {"epoch_reducer": reducer}
    evaluate(cases, lambda request: "high", out=str(tmp_path / "run"), n_boot=10, epochs=2, **extra)
    run = tmp_path / "run"
    first = json.loads((run / "predictions.jsonl").read_text().splitlines()[0])
    case_id, digest = first["id"], first["hash"]
    _journal(run, [_rec(case_id, "low", digest=digest, epoch=1, score=0.1),
                   {**_rec(case_id, "high", digest=digest, epoch=2, score=0.7), "latency_s": 4.0},
                   _rec(case_id, "high", digest=digest, epoch=3, score=0.4)])  # fmt: skip
    return run


def test_case_records_reduce_by_the_runs_own_reducer(tmp_path: Path) -> None:
    """With --epoch-reducer first the case is epoch 1's low, 0.1; asked for mode, high wins 2 to 1 and epoch 2's
    line stands (latency 4.0) with the mean score (0.1 + 0.7 + 0.4) / 3 = 0.4; a reducer given wins over the
    run's; an empty one is mode too."""
    run = _epochs_run(tmp_path, "first")
    (case_id,) = case_records(run)
    assert (case_records(run)[case_id]["risk"], case_records(run)[case_id]["score"]) == ("low", 0.1)
    for reducer in ("mode", ""):
        moded = case_records(run, reducer=reducer)[case_id]
        assert (moded["risk"], moded["latency_s"]) == ("high", 4.0) and moded["score"] == pytest.approx(0.4)


def test_case_records_default_to_mode_when_the_run_names_none(tmp_path: Path) -> None:
    """The run's settings keep no reducer (an older run.json): mode, so epoch 2's high stands with the mean score
    0.4 (first would give epoch 1's low, 0.1)."""
    run = _epochs_run(tmp_path, None)
    manifest = json.loads((run / "run.json").read_text())
    manifest["settings"].pop("epoch_reducer", None)
    (run / "run.json").write_text(json.dumps(manifest))
    (only,) = case_records(run).values()
    assert (only["risk"], only["latency_s"]) == ("high", 4.0) and only["score"] == pytest.approx(0.4)


def test_case_records_read_items_given_and_plain_runs(tmp_path: Path) -> None:
    """Items given are used as they are (the journal is not read: here there is none); a plain run's records are
    its journal's, unscoped when asked."""
    given = {ItemKey("x", 1): _rec("x", "low", epoch=1, score=0.2), ItemKey("x", 2): _rec("x", "low", epoch=2)}
    got = case_records(tmp_path / "nowhere", reducer="mode", items=given)  # type: ignore[arg-type]
    assert got["x"]["risk"] == "low" and got["x"]["score"] == 0.2
    run = _journal(tmp_path / "run", [_rec("a"), _rec("c", digest="h3")])
    _scope(run, [("a", "h1")])
    assert list(case_records(run)) == ["a"]
    assert list(case_records(run, scoped=False)) == ["a", "c"]
