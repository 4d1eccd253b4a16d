"""Runs read back from their folders (harness/leaderboard/runs.py), on small runs made in-process by a detector whose
every verdict is chosen by hand: the arrays, the metric lookups, the verdict matrices of a repeated run, the one
finder of run folders (depth, links, what counts as a run) and the case list runs are aligned on (issue 46)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest
from casegen import write_cases

import harness
from harness.errors import RunLoadError
from harness.leaderboard.runs import (
    DISCOVER_DEPTH,
    MISSING,
    Run,
    align,
    aligned_origins,
    baseline_document,
    discover,
    find_runs,
    item_verdicts,
    natural_mask,
    read_run,
    real_mask,
)
from harness.types import ItemKey

# The six cases write_cases(6) makes: FCB-0001..0005 expect high, FCB-0006 low. Origins given here by hand.
ORIGIN = {"FCB-0001": "natural", "FCB-0002": "assembled"}  # the other four: constructed
# What the detector answers on each case (None: a reply without a valid risk, an error) and its risk_score
ANSWER: dict[str, tuple[str | None, float | None]] = {
    "FCB-0001": ("high", 0.9),  # right
    "FCB-0002": ("low", None),  # wrong, no score
    "FCB-0003": (None, None),  # an error
    "FCB-0004": ("medium", 0.5),  # wrong
    "FCB-0005": ("high", 0.7),  # right
    "FCB-0006": ("low", 0.1),  # right
}


def cases_file(path: Path, origins: bool = True) -> Path:
    write_cases(path, 6)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for case in rows:
        case["tags"] = [t for t in case["tags"] if not t.startswith("origin_")]
        if origins:
            case["tags"].append(f"origin_{ORIGIN.get(case['id'], 'constructed')}")
    path.write_text("".join(json.dumps(c) + "\n" for c in rows))
    return path


def chosen(cases: Path) -> Any:
    """The detector: ANSWER's verdict and score for each case, found by its question."""
    by_task = {json.loads(line)["question"]: json.loads(line)["id"] for line in cases.read_text().splitlines()}

    def assess(request: dict[str, Any]) -> dict[str, Any]:
        risk, score = ANSWER[by_task[request["task"]]]
        reply: dict[str, Any] = {"false_consensus_risk": risk or "bogus"}
        if score is not None:
            reply["risk_score"] = score
        return reply

    return assess


def evaluate(cases: Path, out: Path, **settings: Any) -> Path:
    result = harness.evaluate(str(cases), chosen(cases), out=str(out), n_boot=0, retries=0, progress=False, **settings)
    return Path(result.run_dir)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("runs")
    cases = cases_file(tmp / "cases.jsonl")
    plain = evaluate(cases, tmp / "results" / "plain", name="chosen")
    repeated = evaluate(cases, tmp / "results" / "deep" / "er" / "repeated", epochs=2, epoch_reducer="first",
                        probes=("order",))  # fmt: skip
    untagged = evaluate(cases_file(tmp / "untagged.jsonl", origins=False), tmp / "untagged")
    return {"tmp": tmp, "cases": cases, "plain": plain, "repeated": repeated, "untagged": untagged}


# ---- read_run: the arrays ------------------------------------------------------------------------------------------


def test_a_run_reads_back_as_its_cases_in_id_order(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    assert list(run.ids) == [f"FCB-000{i}" for i in range(1, 7)]
    assert list(run.y_true) == [2, 2, 2, 2, 2, 0]  # high x5, low
    assert list(run.y_pred) == [2, 0, 3, 1, 2, 0]  # high, low, error (3), medium, high, low
    assert list(run.origins) == ["natural", "assembled", *["constructed"] * 4]  # type: ignore[arg-type]
    assert list(run.categories[:2]) == ["majority_wrong_fact", "echo_cascade"]
    assert run.scores is not None
    np.testing.assert_array_equal(run.scores, [0.9, np.nan, np.nan, 0.5, 0.7, 0.1])  # no score: NaN
    assert run.epochs is None and run.variants == {} and run.n_epochs == 1 and run.reducer == "mode"
    assert run.path == made["plain"] and run.complete is True
    assert run.label == "chosen"
    assert run.sha256 == run.dataset["sha256"] and len(run.sha256) == 64 and run.dataset["cases"] == 6
    assert run.created == json.loads((made["plain"] / "metrics.json").read_text())["created"]


def test_a_run_of_untagged_cases_has_no_origins_and_is_named_by_its_spec(made: dict[str, Path]) -> None:
    run = read_run(made["untagged"])
    assert run.origins is None
    assert run.label == run.detector  # no --name: the spec
    assert run.metric("accuracy_real") is None  # no headline_real without origins


def test_metric_reads_headline_real_natural_and_dotted_names(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    # right: FCB-0001, 0005, 0006 of 6 (the error counts against): 3 / 6
    assert run.metric("accuracy") == pytest.approx(0.5)
    # real: FCB-0001 (right) and 0002 (wrong): 1 / 2; natural: FCB-0001 alone: 1 / 1
    assert run.metric("accuracy_real") == pytest.approx(0.5)
    assert run.metric("accuracy_natural") == pytest.approx(1.0)
    assert run.metric("error_rate") == pytest.approx(1 / 6)  # one error of six
    assert run.metric("operational.cases") == 6 and run.metric("operational.errors") == 1
    assert run.metric("per_class") is None  # a block, not a number
    assert run.metric("accuracy.high") is None  # below a number: nothing
    assert run.metric("no_such_figure") is None and run.metric("operational.nothing") is None


def test_error_rate_falls_back_on_operational_for_older_documents() -> None:
    # a document stored before error_rate was: errors / cases = 1 / 4
    doc = {"metrics": {"operational": {"cases": 4, "errors": 1}}}
    assert plain_run(doc).metric("error_rate") == pytest.approx(0.25)


def test_ece_needs_scores_a_figure_and_its_bins(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    ece = run.ece()
    assert ece is not None and ece[1] == 15  # the default bins
    assert ece[0] == run.metric("scores.calibration.ece")
    calibration = {"metrics": {"scores": {"calibration": {"ece": 0.25, "bins": 4}}}}
    assert plain_run(calibration, scores=np.array([0.5])).ece() == (0.25, 4)
    assert plain_run(calibration).ece() is None  # no scores (a baseline)
    assert plain_run({"metrics": {"scores": {"calibration": {"bins": 4}}}}, scores=np.array([0.5])).ece() is None
    assert plain_run({"metrics": {"scores": {"calibration": {"ece": 0.25}}}}, scores=np.array([0.5])).ece() is None


def test_label_is_the_name_given_else_the_spec() -> None:
    assert plain_run({"detector": {"spec": "x.py:f", "label": "mine"}}).label == "mine"
    named = plain_run({"detector": {"spec": "x.py:f", "label": None}})
    assert (named.label, named.detector) == ("x.py:f", "x.py:f")


def test_fingerprint_and_its_short_digest() -> None:
    import hashlib

    fingerprint = {"kind": "python", "sha256": "ab"}
    run = plain_run({"detector": {"spec": "x.py:f", "fingerprint": fingerprint}})
    assert run.fingerprint == fingerprint
    assert run.fingerprint_id == hashlib.sha256(b'{"kind":"python","sha256":"ab"}').hexdigest()[:8]
    assert len(run.fingerprint_id) == 8
    old = plain_run({"detector": {"spec": "x.py:f"}})
    assert old.fingerprint is None and old.fingerprint_id == ""
    assert plain_run({"detector": {"spec": "x.py:f", "fingerprint": "text"}}).fingerprint is None


def plain_run(doc: dict[str, Any], scores: np.ndarray | None = None) -> Run:
    one = np.array(["a"], dtype=object)
    return Run(Path("r"), doc, one, one, np.array([0]), np.array([0]), scores=scores)  # type: ignore[arg-type]


# ---- a repeated run ------------------------------------------------------------------------------------------------


def test_a_repeated_run_keeps_each_epochs_verdicts_and_its_reducer(made: dict[str, Path]) -> None:
    run = read_run(made["repeated"])
    # the same answer every epoch: each row is the case's verdict twice
    codes = [2, 0, 3, 1, 2, 0]
    assert run.n_epochs == 2 and run.reducer == "first"
    assert run.epochs is not None and run.epochs.tolist() == [[c, c] for c in codes]
    # the order probe has a variant only where the answers' texts differ: FCB-0004's lone dissenter (medium, 1);
    # every other case's answers are alike, so no other order is possible (-1: no variant)
    m = MISSING
    assert sorted(run.variants) == ["order"]
    assert run.variants["order"].tolist() == [[m, m], [m, m], [m, m], [1, 1], [m, m], [m, m]]
    assert list(run.y_pred) == codes
    # every item is a request: 6 cases x 2 epochs + FCB-0004's variant x 2 = 14; errors: FCB-0003 x 2 epochs
    assert run.metric("operational.cases") == 14 and run.metric("operational.errors") == 2


def test_a_run_without_run_json_reduces_by_the_mode(made: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(made["repeated"], copy)
    (copy / "run.json").unlink()
    assert read_run(copy).reducer == "mode"


def test_item_verdicts_by_case_and_epoch() -> None:
    ids = np.array(["a", "b", "c"], dtype=object)
    items = {
        ItemKey("zz", 2): {"risk": "high"},  # not in ids: left out, and the others still read
        ItemKey("a", 1): {"risk": "low"},
        ItemKey("a", 3): {"risk": "high"},
        ItemKey("b", 2): {"risk": None},  # an error
        ItemKey("b", 2, "order"): {"risk": "medium"},
    }
    plain, variants = item_verdicts(items, ids)
    m = MISSING
    # three epochs (the highest seen); a: low, -, high; b: -, error, -; c: nothing
    assert plain.tolist() == [[0, m, 2], [m, 3, m], [m, m, m]]
    assert list(variants) == ["order"] and variants["order"].tolist() == [[m, m, m], [m, 1, m], [m, m, m]]
    empty, none = item_verdicts({}, ids)
    assert empty.shape == (3, 1) and (empty == MISSING).all() and none == {}


# ---- refusals ------------------------------------------------------------------------------------------------------


def test_a_figure_the_journal_does_not_give_is_refused_with_the_resume_hint(made: dict[str, Path],
                                                                             tmp_path: Path) -> None:  # fmt: skip
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(made["plain"], copy)
    doc = json.loads((copy / "metrics.json").read_text())
    doc["metrics"]["accuracy"] = 0.75  # the journal gives 3 / 6
    (copy / "metrics.json").write_text(json.dumps(doc))
    with pytest.raises(RunLoadError) as info:
        read_run(copy)
    message = str(info.value)
    assert message.startswith(f"{copy / 'metrics.json'}: metrics.accuracy: 0.75, but its journal (predictions.jsonl)")
    assert f"fcb eval --resume {copy}" in message


def test_a_complete_run_missing_cases_of_its_scope_is_refused(made: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "short"
    shutil.copytree(made["plain"], copy)
    lines = (copy / "predictions.jsonl").read_text().splitlines()
    (copy / "predictions.jsonl").write_text("\n".join(lines[:5]) + "\n")  # FCB-0006 (low, right) never journaled
    doc = json.loads((copy / "metrics.json").read_text())
    # stated again from the five lines left: right 0001, 0005 of 5; one not run
    with pytest.raises(RunLoadError) as info:
        read_run(copy)
    assert "metrics" in str(info.value)  # its figures no longer follow from the journal
    assert doc["metrics"]["n_not_run"] == 0


def test_a_complete_run_whose_scope_names_more_cases_than_its_journal(made: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "scoped"
    shutil.copytree(made["plain"], copy)
    scope = json.loads((copy / "scope.json").read_text())
    scope["cases"].append(["FCB-0099", "0000000000000000"])  # 7 in scope, 6 journaled: one not run
    (copy / "scope.json").write_text(json.dumps(scope))
    doc = json.loads((copy / "metrics.json").read_text())
    doc["metrics"]["n_not_run"] = 1
    (copy / "metrics.json").write_text(json.dumps(doc))
    with pytest.raises(RunLoadError) as info:
        read_run(copy)
    assert "complete: true, but 1 case(s) of its scope.json have no line in its journal" in str(info.value)
    doc["complete"] = False  # an unfinished run with one case not run reads (it does not rank)
    (copy / "metrics.json").write_text(json.dumps(doc))
    assert read_run(copy).complete is False
    doc["metrics"]["n_not_run"] = 0  # 7 - 6 = 1 not run: a stated 0 is refused
    (copy / "metrics.json").write_text(json.dumps(doc))
    with pytest.raises(RunLoadError, match="n_not_run: 0, but"):
        read_run(copy)


# ---- baselines -----------------------------------------------------------------------------------------------------


def test_a_baseline_reads_back_as_the_run_it_was_saved_from(made: dict[str, Path], tmp_path: Path) -> None:
    run = read_run(made["plain"])
    doc = baseline_document(run, "before")
    assert (doc["name"], doc["source_run"], doc["doc"]) == ("before", str(made["plain"]), run.doc)
    path = tmp_path / "before.json"
    path.write_bytes(orjson.dumps(doc))
    back = read_run(path)
    assert back.path == path and back.scores is None and back.epochs is None and back.doc == run.doc
    assert (back.ids.dtype, back.categories.dtype, back.origins.dtype) == (object, object, object)  # type: ignore[union-attr]
    assert list(back.ids) == list(run.ids) and list(back.y_pred) == [2, 0, 3, 1, 2, 0]
    assert list(back.y_true) == [2, 2, 2, 2, 2, 0] and list(back.categories) == list(run.categories)
    assert list(back.origins) == ["natural", "assembled", *["constructed"] * 4]  # type: ignore[arg-type]
    untagged = tmp_path / "untagged.json"
    untagged.write_bytes(orjson.dumps(baseline_document(read_run(made["untagged"]), "u")))
    assert read_run(untagged).origins is None


def test_a_baseline_whose_letters_contradict_its_figures_is_refused(made: dict[str, Path], tmp_path: Path) -> None:
    doc = baseline_document(read_run(made["plain"]), "before")
    doc["doc"]["metrics"]["accuracy"] = 1.0  # its letters give 3 / 6
    path = tmp_path / "edited.json"
    path.write_bytes(orjson.dumps(doc))
    with pytest.raises(RunLoadError) as info:
        read_run(path)
    assert str(info.value).startswith(f"{path}: doc.metrics.accuracy: 1.0, but its cases (the letters of cases.")


# ---- the one finder ------------------------------------------------------------------------------------------------


def fake_run(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "metrics.json").write_text("{}")
    return folder


def test_discover_goes_three_levels_down_and_not_into_a_run(tmp_path: Path) -> None:
    assert DISCOVER_DEPTH == 3
    one = fake_run(tmp_path / "a")
    three = fake_run(tmp_path / "b" / "c" / "d")
    fake_run(tmp_path / "b" / "c" / "e" / "four")  # four levels down: not found
    fake_run(tmp_path / "a" / "inner")  # inside a run folder: not searched
    two = fake_run(tmp_path / "0" / "z")
    assert discover(tmp_path) == [two, one, three]  # in path order
    assert discover(tmp_path / "b") == [three, tmp_path / "b" / "c" / "e" / "four"]  # depth from the folder given
    assert discover(one) == [one]  # the folder itself is a run
    (tmp_path / "empty").mkdir()
    assert discover(tmp_path / "empty") == []


def test_discover_follows_a_link_and_refuses_a_missing_folder(tmp_path: Path) -> None:
    elsewhere = fake_run(tmp_path / "elsewhere" / "run")
    (tmp_path / "root").mkdir()
    os.symlink(tmp_path / "elsewhere", tmp_path / "root" / "linked")
    os.symlink(tmp_path / "root", tmp_path / "root" / "loop")  # a cycle: the depth bounds it
    # root/linked/run (depth 2), root/loop/linked/run (3); root/loop/loop/linked (3) is searched no deeper
    root = tmp_path / "root"
    assert discover(root) == [root / "linked" / "run", root / "loop" / "linked" / "run"]
    assert find_runs([str(root)]) == [root / "linked" / "run"]  # one real run: once
    with pytest.raises(RunLoadError, match=r"nothing: no such folder$"):
        discover(tmp_path / "nothing")
    with pytest.raises(RunLoadError, match="no such folder"):
        discover(elsewhere / "metrics.json")  # a file is no folder


def test_find_runs_by_path_glob_and_folder_each_run_once(tmp_path: Path) -> None:
    a = fake_run(tmp_path / "r" / "a")
    b = fake_run(tmp_path / "r" / "b")
    deep = fake_run(tmp_path / "s" / "runs" / "ds" / "det")
    base = tmp_path / "base.json"
    base.write_text("{}")
    assert find_runs([str(b), str(tmp_path / "r" / "*")]) == [b, a]  # b named first, then a; b once
    assert find_runs([str(tmp_path / "s")]) == [deep]
    assert find_runs([str(base)]) == [base]
    os.symlink(a, tmp_path / "alias")
    assert find_runs([str(tmp_path / "alias"), str(a)]) == [tmp_path / "alias"]  # the first name it was reached by
    assert find_runs([str(tmp_path / "r" / "[ab]"), str(tmp_path / "s")]) == [a, b, deep]
    assert find_runs([]) == []


def test_find_runs_refuses_what_is_no_run(tmp_path: Path) -> None:
    with pytest.raises(RunLoadError) as info:
        find_runs([str(tmp_path / "missing")])
    assert str(info.value) == f"{tmp_path / 'missing'}: no such folder"
    text = tmp_path / "notes.txt"
    text.write_text("")
    with pytest.raises(RunLoadError) as info:
        find_runs([str(text)])
    assert str(info.value) == f"{text}: no run folder (no metrics.json) here"
    (tmp_path / "bare").mkdir()
    assert find_runs([str(tmp_path / "bare")]) == []  # a folder holding no run: nothing, not a refusal


# ---- align ---------------------------------------------------------------------------------------------------------


def made_run(ids: list[str], truth: list[int], pred: list[int], origins: list[str] | None = None) -> Run:
    tagged = None if origins is None else np.array(origins, dtype=object)
    categories = np.array([f"cat-{i}" for i in ids], dtype=object)
    return Run(Path("r"), {}, np.array(ids, dtype=object), categories, np.array(truth), np.array(pred), origins=tagged)  # type: ignore[arg-type]


def test_align_puts_runs_on_the_union_of_their_cases_a_missing_case_an_error() -> None:
    first = made_run(["b", "d"], [1, 2], [1, 0])
    second = made_run(["a", "b", "c"], [0, 1, 2], [0, 2, 2])
    ids, categories, y_true, preds = align([first, second])
    assert list(ids) == ["a", "b", "c", "d"]
    assert list(categories) == ["cat-a", "cat-b", "cat-c", "cat-d"]
    assert list(y_true) == [0, 1, 2, 2]
    assert [list(p) for p in preds] == [[3, 1, 3, 0], [0, 2, 2, 3]]  # 3: not finished by that run, an error
    one = align([second])
    assert list(one[0]) == ["a", "b", "c"] and list(one[3][0]) == [0, 2, 2]


def test_align_takes_a_cases_label_from_the_first_run_that_has_it() -> None:
    first = made_run(["a"], [2], [2])
    second = made_run(["a"], [0], [0])  # a disagreeing label for the same case: the first run's stands
    assert list(align([first, second])[2]) == [2]
    assert list(align([second, first])[2]) == [0]


def test_aligned_origins_from_whichever_run_recorded_one() -> None:
    ids = np.array(["a", "b", "c"], dtype=object)
    first = made_run(["a", "b"], [0, 0], [0, 0], ["natural", "unknown"])
    second = made_run(["b"], [0], [0], ["assembled"])
    untagged = made_run(["c"], [0], [0])
    got = aligned_origins([first, untagged, second], ids)
    assert got is not None and list(got) == ["natural", "assembled", "unknown"]  # c: no run knows it
    assert aligned_origins([untagged], ids) is None
    assert aligned_origins([made_run(["a"], [0], [0], ["unknown"])], ids) is None  # only unknown: none recorded


def test_the_real_and_natural_masks() -> None:
    origins = np.array(["natural", "assembled", "constructed", "unknown"], dtype=object)
    assert real_mask(origins).tolist() == [True, True, False, False]
    assert natural_mask(origins).tolist() == [True, False, False, False]


# ---- what read_run checks, and the types of what it gives ----------------------------------------------------------


def edited(source: Path, target: Path, metrics: dict[str, Any] | None = None, journal: Any = None) -> Path:
    """A copy of a run folder, its journal lines passed through ``journal`` and ``metrics`` merged into its figures
    (a dotted key: a nested figure)."""
    import shutil

    shutil.copytree(source, target)
    if journal is not None:
        rows = [journal(json.loads(line)) for line in (target / "predictions.jsonl").read_text().splitlines()]
        (target / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    doc = json.loads((target / "metrics.json").read_text())
    for dotted, value in (metrics or {}).items():
        *parents, last = dotted.split(".")
        node = doc["metrics"]
        for key in parents:
            node = node[key]
        node[last] = value
    (target / "metrics.json").write_text(json.dumps(doc))
    return target


def test_the_arrays_types(made: dict[str, Path]) -> None:
    run = read_run(made["plain"])
    assert (run.ids.dtype, run.categories.dtype, run.origins.dtype) == (object, object, object)  # type: ignore[union-attr]
    assert (run.y_true.dtype, run.y_pred.dtype) == (np.int64, np.int64)
    assert run.scores is not None and run.scores.dtype == np.float64


def test_integer_scores_are_read_as_floats(tmp_path: Path) -> None:
    # every score a whole number and none missing (no error, no reply without one): still a float array
    cases = cases_file(tmp_path / "cases.jsonl", origins=False)

    def sure(request: dict[str, Any]) -> dict[str, Any]:
        return {"false_consensus_risk": "high", "risk_score": 1}

    result = harness.evaluate(str(cases), sure, out=str(tmp_path / "run"), n_boot=0, progress=False)
    journal = tmp_path / "run" / "predictions.jsonl"
    journal.write_text(journal.read_text().replace('"score":1.0,', '"score":1,'))  # as a JSON writer may give it
    assert journal.read_text().count('"score":1,') == 6
    run = read_run(result.run_dir)
    assert run.scores is not None and run.scores.dtype == np.float64 and run.scores.tolist() == [1.0] * 6


def test_a_run_folder_whose_name_ends_json_is_a_run(made: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    shutil.copytree(made["plain"], tmp_path / "run.json")
    assert list(read_run(tmp_path / "run.json").y_pred) == [2, 0, 3, 1, 2, 0]


def test_a_score_figure_the_journal_does_not_give_is_refused(made: dict[str, Path], tmp_path: Path) -> None:
    # scored: FCB-0001 (0.9), 0004 (0.5), 0005 (0.7), 0006 (0.1); no score on 0002 and the error 0003: 4
    assert read_run(made["plain"]).metric("scores.n_scored") == 4
    with pytest.raises(RunLoadError, match=r"metrics\.scores\.n_scored: 5, but its journal"):
        read_run(edited(made["plain"], tmp_path / "scored", {"scores.n_scored": 5}))


def test_an_epochs_figure_the_journal_does_not_give_is_refused(made: dict[str, Path], tmp_path: Path) -> None:
    # the same verdict in both epochs on every case: all agree, 6 of 6 = 1.0
    assert read_run(made["repeated"]).metric("epochs.self_agreement.all_agree") == 1.0
    with pytest.raises(RunLoadError, match=r"metrics\.epochs\.self_agreement\.all_agree: 0\.5, but its journal"):
        read_run(edited(made["repeated"], tmp_path / "agree", {"epochs.self_agreement.all_agree": 0.5}))


def test_latency_of_a_line_without_one_is_zero(made: dict[str, Path], tmp_path: Path) -> None:
    def no_latency(rec: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in rec.items() if k != "latency_s"}

    zero = {"p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0}  # every latency 0: each quantile 0
    copy = edited(made["plain"], tmp_path / "zero", {"operational.latency_s": zero}, journal=no_latency)
    assert read_run(copy).metric("operational.latency_s.p99") == 0.0


def test_a_replayed_answer_has_no_latency(made: dict[str, Path], tmp_path: Path) -> None:
    def replayed_first(rec: dict[str, Any]) -> dict[str, Any]:
        cached = rec["id"] == "FCB-0001"
        return {**rec, "latency_s": 9.0 if cached else 0.5, "cached": cached}

    # the five asked took 0.5 s each: every quantile 0.5; the replayed one's 9 s is left out
    half = {"p50": 0.5, "p90": 0.5, "p95": 0.5, "p99": 0.5}
    copy = edited(made["plain"], tmp_path / "cached", {"operational.latency_s": half}, journal=replayed_first)
    assert read_run(copy).metric("operational.latency_s.p50") == 0.5
    wrong = {"p50": 0.5, "p90": 0.5, "p95": 0.5, "p99": 9.0}  # as if the replayed one counted
    with pytest.raises(RunLoadError, match="latency_s"):
        read_run(edited(made["plain"], tmp_path / "counted", {"operational.latency_s": wrong}, journal=replayed_first))


def test_a_repeated_run_whose_run_json_names_no_reducer_reduces_by_the_mode(made: dict[str, Path],
                                                                            tmp_path: Path) -> None:  # fmt: skip
    import shutil

    copy = tmp_path / "older"
    shutil.copytree(made["repeated"], copy)
    manifest = json.loads((copy / "run.json").read_text())
    assert manifest["settings"].pop("epoch_reducer") == "first"
    (copy / "run.json").write_text(json.dumps(manifest))
    assert read_run(copy).reducer == "mode"


def test_an_epoch_never_asked_counts_as_an_error(tmp_path: Path) -> None:
    """A repeated run stopped by a streak of errors: some cases have an item in one epoch only. The verdict matrix
    is counted again here from the journal lines (a case and epoch without a line: an error, 3)."""
    cases = cases_file(tmp_path / "cases.jsonl")
    calls = [0]

    def three_then_bogus(request: dict[str, Any]) -> dict[str, Any]:
        calls[0] += 1
        return {"false_consensus_risk": "high" if calls[0] <= 3 else "bogus"}

    result = harness.evaluate(str(cases), three_then_bogus, out=str(tmp_path / "run"), n_boot=0, retries=0,
                              progress=False, epochs=2, concurrency=1, max_consecutive_errors=2)  # fmt: skip
    lines = [json.loads(line) for line in (tmp_path / "run" / "predictions.jsonl").read_text().splitlines()]
    ids = sorted({r["id"] for r in lines})
    expected = [[3, 3] for _ in ids]
    for r in lines:
        expected[ids.index(r["id"])][r["epoch"] - 1] = 3 if r["risk"] is None else 2
    run = read_run(result.run_dir)
    assert run.complete is False and list(run.ids) == ids
    assert len(lines) < 2 * len(ids)  # some epoch was never asked
    assert run.epochs is not None and run.epochs.tolist() == expected and run.epochs.dtype == np.int64


def test_a_malformed_run_is_refused_not_cut_short() -> None:
    short = Run(Path("r"), {}, np.array(["a", "b"], dtype=object), np.array(["x"], dtype=object), np.array([0, 0]),  # type: ignore[arg-type]
                np.array([0, 0]), origins=np.array(["natural"], dtype=object))  # fmt: skip
    with pytest.raises(ValueError):
        align([short])
    with pytest.raises(ValueError):
        aligned_origins([short], np.array(["a", "b"], dtype=object))
    with pytest.raises(ValueError):
        baseline_document(short, "b")


def test_align_of_no_runs_and_the_types_it_gives() -> None:
    ids, categories, y_true, preds = align([])
    assert (len(ids), len(categories), len(y_true), preds) == (0, 0, 0, [])
    assert (ids.dtype, categories.dtype, y_true.dtype) == (object, object, np.int64)
    ids, categories, y_true, _ = align([made_run(["a"], [1], [1])])
    assert (ids.dtype, categories.dtype, y_true.dtype) == (object, object, np.int64)
    got = aligned_origins([made_run(["a"], [1], [1], ["natural"])], ids)
    assert got is not None and got.dtype == object


def test_a_run_whose_cases_are_tagged_in_part_keeps_its_origins(tmp_path: Path) -> None:
    """Only FCB-0001 (natural) and FCB-0002 (assembled) carry an origin tag; the four others none. The run has
    origins (two known, four unknown) and its headline on the real cases counts those two, as metrics.json does:
    one known origin is enough for them to count."""
    cases = cases_file(tmp_path / "part.jsonl", origins=False)
    rows = [json.loads(line) for line in cases.read_text().splitlines()]
    for case in rows:
        if case["id"] in ORIGIN:
            case["tags"].append(f"origin_{ORIGIN[case['id']]}")
    cases.write_text("".join(json.dumps(c) + "\n" for c in rows))
    run = read_run(evaluate(cases, tmp_path / "part"))
    assert run.origins is not None
    assert list(run.origins) == ["natural", "assembled", *["unknown"] * 4]
    assert run.metric("accuracy_real") == 0.5  # FCB-0001 right (high), FCB-0002 wrong (low for high): 1 of 2


def test_a_fingerprints_digest_does_not_depend_on_the_order_of_its_keys() -> None:
    """{"sha256": "ab", "kind": "python"} and {"kind": "python", "sha256": "ab"} are one fingerprint: both are hashed
    with their keys sorted, as b'{"kind":"python","sha256":"ab"}', and keep its first 8 hex digits."""
    import hashlib

    expected = hashlib.sha256(b'{"kind":"python","sha256":"ab"}').hexdigest()[:8]
    unsorted = plain_run({"detector": {"spec": "x.py:f", "fingerprint": {"sha256": "ab", "kind": "python"}}})
    ordered = plain_run({"detector": {"spec": "x.py:f", "fingerprint": {"kind": "python", "sha256": "ab"}}})
    assert unsorted.fingerprint_id == ordered.fingerprint_id == expected


@pytest.mark.parametrize(
    ("path", "value"),
    [(("policies", "high", "escalation_rate"), 0.01), (("risk_coverage", "aurc"), 0.99)],
)
def test_an_operating_point_the_journal_does_not_give_is_refused(
    made: dict[str, Path], tmp_path: Path, path: tuple[str, ...], value: float
) -> None:
    import shutil

    copy = tmp_path / "edited"
    shutil.copytree(made["plain"], copy)
    doc = json.loads((copy / "metrics.json").read_text())
    node = doc["metrics"]["operating_points"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (copy / "metrics.json").write_text(json.dumps(doc))
    with pytest.raises(RunLoadError) as info:
        read_run(copy)
    assert str(info.value).startswith(f"{copy / 'metrics.json'}: metrics.operating_points.{'.'.join(path)}: {value}")


def test_a_baseline_s_operating_points_are_checked_against_its_letters(made: dict[str, Path], tmp_path: Path) -> None:
    doc = baseline_document(read_run(made["plain"]), "b")
    doc["doc"]["metrics"]["operating_points"]["policies"]["high_or_medium"]["escalation_rate"] = 0.01
    target = tmp_path / "b.json"
    target.write_text(json.dumps(doc))
    with pytest.raises(RunLoadError) as info:
        read_run(target)
    assert "doc.metrics.operating_points.policies.high_or_medium.escalation_rate: 0.01" in str(info.value)
    # an AURC a baseline cannot check (no scores) is not read: edited, the file still loads
    fine = baseline_document(read_run(made["plain"]), "b")
    fine["doc"]["metrics"]["operating_points"]["risk_coverage"]["aurc"] = 0.99
    target.write_text(json.dumps(fine))
    assert read_run(target).scores is None
