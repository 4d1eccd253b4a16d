"""What a run writes into its folder (`harness.run.outputs`) at unit level: the identity ``run.json`` holds, the run
folder a run opens (new, resumed, refused), the ``metrics.json`` document (which cases the data set counts, its name
for a subset, the problems kept, the detector with its secrets removed, the completeness it is given) and the three
files written from it. The figures themselves come from `harness.metrics` and are tested there."""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from casegen import write_cases

import harness.run.outputs as outputs
from harness._version import __version__
from harness.cases.reader import Scan, scan
from harness.cases.validate import Problem
from harness.detectors.options import DetectorOptions
from harness.errors import RunError, RunMismatchError
from harness.figures import compute
from harness.run.outputs import (
    dataset_info,
    detector_info,
    is_complete,
    metrics_document,
    open_run_dir,
    run_identity,
    write_outputs,
)
from harness.run.settings import EvalSettings, resumed_settings, settings_record
from harness.runfolder.journal import JournalWriter, item_key, outcome_of, record
from harness.runfolder.manifest import new_manifest, write_manifest
from harness.runfolder.scope import write_scope
from harness.spec import parse_spec
from harness.types import CaseLabels, DetectorError, Prediction

SPEC = parse_spec("http://user:hunter2@example.org/detect?api_key=abcd1234&x=1")
SPEC_REDACTED = "http://REDACTED@example.org/detect?api_key=REDACTED&x=1"  # the password and the key value go
NAME = "llm:gpt-x@https://bob:pw99@api.example.org/v1?token=zz99zz"
NAME_REDACTED = "llm:gpt-x@https://REDACTED@api.example.org/v1?token=REDACTED"
FILE_SHA = "f" * 64
SUBSET_SHA = "d" * 64
CREATED = "2001-02-03T04:05:06+00:00"
FINGERPRINT = {"kind": "url", "source": "GET /v1/info", "version": "7"}


def labels(case_id: str, category: str, tags: tuple[str, ...]) -> CaseLabels:
    return CaseLabels(
        line=int(case_id[-2:]),
        case_id=case_id,
        content_hash=f"hash-{case_id}",
        category=category,
        expected_risk="high",
        majority_correct=False,
        n_answers=3,
        has_evidence=False,
        families=(),
        families_complete=False,
        any_saw_other_answers=False,
        any_shared_context=False,
        tags=tags,
        source_dataset="original",
        source_item=case_id,
    )


# Nine cases; the subset chosen below (categories echo_cascade or genuine_disagreement, tags t-a or t-b) holds
# C01, C03, C06, C08: 4. The categories alone hold C01 C02 C03 C05 C06 C08 C09: 7; the tags alone C01 C03 C04 C06
# C07 C08: 6.
LABELS = [
    labels("C01", "echo_cascade", ("t-a",)),
    labels("C02", "echo_cascade", ()),
    labels("C03", "genuine_disagreement", ("t-b", "x")),
    labels("C04", "majority_wrong_fact", ("t-a",)),
    labels("C05", "genuine_disagreement", ("x",)),
    labels("C06", "echo_cascade", ("t-a", "t-b")),
    labels("C07", "lone_correct_dissenter", ("t-b",)),
    labels("C08", "genuine_disagreement", ("t-b",)),
    labels("C09", "echo_cascade", ("y",)),
]
CATEGORIES = ("genuine_disagreement", "echo_cascade")  # given out of order: the document sorts them
TAGS = ("t-b", "t-a")


def problems(n: int) -> list[Problem]:
    return [Problem("cases.jsonl", i + 1, "answers", f"problem {i}", warning=i % 2 == 1) for i in range(n)]


def scanned(n_problems: int = 203) -> Scan:
    """A scan of a file of 12 lines, 3 of them invalid, with ``n_problems`` problems (errors and warnings)."""
    return Scan(path="cases.jsonl", sha256=FILE_SHA, lines=12, labels=list(LABELS), problems=problems(n_problems),
                invalid_lines=3)  # fmt: skip


class Named:
    name = NAME


class Nameless:
    pass


@pytest.fixture
def fixed_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(outputs, "now", lambda: CREATED)


# ---- the identity run.json holds ---------------------------------------------------------------------------------


def test_the_identity_holds_what_a_resume_must_match_with_the_spec_redacted() -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, limit=7, shard=(2, 5), anonymize_agents=True,
                            strict=False, options=DetectorOptions(risk_field=("verdict", "risk")))  # fmt: skip
    identity = run_identity(settings, scanned(), FINGERPRINT)
    assert identity == {
        "dataset_sha256": FILE_SHA,
        "detector": SPEC_REDACTED,
        "limit": 7,
        "shard": "2/5",
        "anonymize_agents": True,
        "strict": False,
        "risk_field": "verdict.risk",
        "fingerprint": FINGERPRINT,
    }
    other = run_identity(EvalSettings(cases="c", detector=parse_spec("builtin:agreement"), strict=True), scanned(), {})
    assert (other["limit"], other["shard"], other["anonymize_agents"], other["strict"]) == (None, None, False, True)
    assert other["risk_field"] == "false_consensus_risk" and other["fingerprint"] == {}


def test_the_identity_of_a_subset_names_its_categories_and_tags_sorted() -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, categories=CATEGORIES, tags=TAGS)
    identity = run_identity(settings, scanned(), FINGERPRINT)
    assert identity["subset"] == {"categories": ["echo_cascade", "genuine_disagreement"], "tags": ["t-a", "t-b"]}
    assert list(identity)[-1] == "subset"
    assert identity["dataset_sha256"] == FILE_SHA  # the whole file's: a resume reads the same file
    assert "subset" not in run_identity(EvalSettings(cases="c", detector=SPEC), scanned(), FINGERPRINT)


def test_the_identity_of_a_run_with_epochs_and_probes_holds_them_and_a_plain_run_s_does_not() -> None:
    settings = EvalSettings(cases="c", detector=SPEC, epochs=2, probes=("order", "names"), probe_seed=7)
    identity = run_identity(settings, scanned(), FINGERPRINT)
    # a resume or a merge must ask the same items: 2 epochs, these probes, this seed
    assert (identity["epochs"], identity["probes"], identity["probe_seed"]) == (2, ["order", "names"], 7)
    assert type(identity["probes"]) is list  # JSON's own type, as run.json reads back
    probes_only = run_identity(EvalSettings(cases="c", detector=SPEC, probes=("names",)), scanned(), FINGERPRINT)
    assert "epochs" not in probes_only and (probes_only["probes"], probes_only["probe_seed"]) == (["names"], 0)
    epochs_only = run_identity(EvalSettings(cases="c", detector=SPEC, epochs=3), scanned(), FINGERPRINT)
    assert epochs_only["epochs"] == 3 and "probes" not in epochs_only and "probe_seed" not in epochs_only
    plain = run_identity(EvalSettings(cases="c", detector=SPEC, epochs=1), scanned(), FINGERPRINT)
    assert not {"epochs", "probes", "probe_seed"} & set(plain)  # a plain run's identity as before epochs


# ---- the run folder a run opens ----------------------------------------------------------------------------------


def _identity(settings: EvalSettings) -> Any:
    return run_identity(settings, scanned(), FINGERPRINT)


def test_a_new_run_in_a_named_folder_gets_a_fresh_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixed_time: None
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("harness.runfolder.manifest.now", lambda: CREATED)
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, out=str(tmp_path / "run"), seed=11)
    identity = _identity(settings)
    run_dir, manifest = open_run_dir(settings, identity)
    assert run_dir == tmp_path / "run"
    assert not run_dir.exists()  # made later, once the preflight passed
    assert manifest == {
        "identity": identity,
        "cases": str(tmp_path / "cases.jsonl"),  # the cases file's absolute path
        "settings": settings_record(settings),
        "created": CREATED,
        "sessions": [],
    }
    assert manifest["settings"]["seed"] == 11


def test_a_new_run_is_refused_a_folder_that_holds_a_run_unless_it_may_overwrite_it(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_bytes(b"")
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, out=str(run))
    with pytest.raises(RunMismatchError, match="already holds an unfinished run"):
        open_run_dir(settings, _identity(settings))
    overwriting = EvalSettings(cases="cases.jsonl", detector=SPEC, out=str(run), overwrite=True)
    run_dir, manifest = open_run_dir(overwriting, _identity(overwriting))
    assert run_dir == run and manifest["sessions"] == []
    assert (run / "predictions.jsonl").exists()  # cleared later, once the preflight passed


def test_a_new_run_without_a_folder_gets_one_under_the_results_root_named_by_its_label_or_spec(tmp_path: Path) -> None:
    root = tmp_path / "results"
    labelled = EvalSettings(cases="cases.jsonl", detector=parse_spec("builtin:agreement"), results_root=str(root),
                            name="My Label!")  # fmt: skip
    run_dir, _ = open_run_dir(labelled, _identity(labelled))
    assert run_dir.parent == root
    assert re.fullmatch(r"\d{8}-\d{6}-My-Label", run_dir.name), run_dir.name
    plain = EvalSettings(cases="cases.jsonl", detector=parse_spec("builtin:agreement"), results_root=str(root))
    run_dir, _ = open_run_dir(plain, _identity(plain))
    assert re.fullmatch(r"\d{8}-\d{6}-builtin-agreement", run_dir.name), run_dir.name


def test_a_resume_needs_the_folder(tmp_path: Path) -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, resume=True)
    with pytest.raises(RunError) as info:
        open_run_dir(settings, _identity(settings))
    assert str(info.value) == "resume needs the run folder"


def test_a_resume_reads_the_run_s_manifest_and_checks_its_identity(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    first = EvalSettings(cases=str(tmp_path / "cases.jsonl"), detector=SPEC, out=str(run), limit=5)
    stored = new_manifest(_identity(first), str(tmp_path / "cases.jsonl"), settings_record(first))
    stored["sessions"].append({"started": CREATED, "wall_s": 2.5, "cases": 5})
    write_manifest(run, stored)
    (run / "predictions.jsonl").write_bytes(b"")  # an unfinished run: resuming is the way on
    resumed = EvalSettings(cases=str(tmp_path / "cases.jsonl"), detector=SPEC, out=str(run), limit=5, resume=True)
    run_dir, manifest = open_run_dir(resumed, _identity(resumed))
    assert run_dir == run
    assert manifest == orjson.loads(orjson.dumps(stored))
    changed = EvalSettings(cases=str(tmp_path / "cases.jsonl"), detector=SPEC, out=str(run), limit=6, resume=True)
    with pytest.raises(RunMismatchError, match="limit was 5, now 6"):
        open_run_dir(changed, _identity(changed))


def test_a_resumed_run_keeps_its_ece_bins_and_a_run_from_before_them_gets_15(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    first = EvalSettings(cases=str(tmp_path / "cases.jsonl"), detector=SPEC, out=str(run), ece_bins=7)
    stored = new_manifest(_identity(first), str(tmp_path / "cases.jsonl"), settings_record(first))
    assert stored["settings"]["ece_bins"] == 7
    write_manifest(run, stored)
    (run / "predictions.jsonl").write_bytes(b"")
    assert resumed_settings(run).ece_bins == 7
    del stored["settings"]["ece_bins"]  # run.json of a version that did not report calibration
    write_manifest(run, stored)
    assert resumed_settings(run).ece_bins == 15


# ---- metrics.json ------------------------------------------------------------------------------------------------


def expected_problems(n: int) -> list[str]:
    """Problem i as ``PATH:LINE: FIELD: MESSAGE``, warnings (every odd one) said so."""
    return [f"cases.jsonl:{i + 1}: answers: {'warning: ' if i % 2 else ''}problem {i}" for i in range(n)]


def _document(settings, scan_result, digest, detector, fingerprint, metrics, *, complete):  # type: ignore[no-untyped-def]
    """metrics.json as a run makes it: its data set and detector blocks, then the document."""
    dataset = dataset_info(settings, scan_result, digest)
    return metrics_document(
        settings, dataset, detector_info(settings, detector, fingerprint), metrics, complete=complete
    )


COMPLETE = {"stopped": None, "not_run": 0, "unasked": 0, "counted": 40, "in_scope": 40, "invalid_lines": 0,
            "sharded": False}  # fmt: skip


def test_a_run_is_complete_only_when_nothing_was_left_out() -> None:
    assert is_complete(**COMPLETE)
    for key, value in (("stopped", "budget: --max-requests 5 reached"), ("stopped", "interrupted"), ("not_run", 1),
                       ("unasked", 1), ("counted", 39), ("invalid_lines", 1), ("sharded", True)):  # fmt: skip
        assert not is_complete(**{**COMPLETE, key: value}), key
    # --limit past the end of the data set leaves no case out: complete (a merge of its shards too, as a run)
    assert is_complete(**{**COMPLETE, "counted": 40, "in_scope": 40})


def test_the_document_of_a_whole_file_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fixed_time: None) -> None:
    monkeypatch.chdir(tmp_path)
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, name="nightly", seed=11, n_boot=300)
    metrics: Any = {"accuracy": 0.5, "headline_real": None}
    doc = _document(settings, scanned(), FILE_SHA, Named(), FINGERPRINT, metrics, complete=True)
    assert list(doc) == ["metrics_version", "harness_version", "created", "complete", "dataset", "detector",
                         "settings", "metrics", "stopped"]  # fmt: skip
    assert doc == {
        "metrics_version": 2,
        "harness_version": __version__,
        "created": CREATED,
        "complete": True,
        "dataset": {
            "path": str(tmp_path / "cases.jsonl"),
            "name": "cases.jsonl",
            "sha256": FILE_SHA,
            "file_sha256": FILE_SHA,
            "subset": None,
            "cases": 9,
            "lines": 12,
            "skipped_invalid": 3,
            "problems": expected_problems(200),  # the first 200 of 203
        },
        "detector": {"spec": SPEC_REDACTED, "name": NAME_REDACTED, "label": "nightly", "fingerprint": FINGERPRINT},
        "settings": settings_record(settings),
        "metrics": metrics,
        "stopped": None,
    }
    assert doc["metrics"] is metrics
    assert (doc["settings"]["seed"], doc["settings"]["bootstrap_resamples"]) == (11, 300)


def test_the_document_of_a_subset_counts_its_own_cases_under_its_own_name_and_digest(
    tmp_path: Path, fixed_time: None
) -> None:
    cases = tmp_path / "data" / "cases.jsonl"
    settings = EvalSettings(cases=str(cases), detector=SPEC, categories=CATEGORIES, tags=TAGS)
    doc = _document(settings, scanned(0), SUBSET_SHA, Nameless(), {}, {}, complete=False)  # type: ignore[arg-type]
    assert doc["complete"] is False
    assert doc["dataset"] == {
        "path": str(cases),
        "name": "cases.jsonl [category=echo_cascade,genuine_disagreement; tag=t-a,t-b]",
        "sha256": SUBSET_SHA,
        "file_sha256": FILE_SHA,
        "subset": {"categories": ["echo_cascade", "genuine_disagreement"], "tags": ["t-a", "t-b"]},
        "cases": 4,  # C01, C03, C06, C08
        "lines": 12,
        "skipped_invalid": 3,
        "problems": [],
    }
    assert doc["detector"] == {"spec": SPEC_REDACTED, "name": "", "label": None, "fingerprint": {}}


@pytest.mark.parametrize(
    ("categories", "tags", "name", "cases"),
    [
        (CATEGORIES, (), "cases.jsonl [category=echo_cascade,genuine_disagreement]", 7),
        ((), TAGS, "cases.jsonl [tag=t-a,t-b]", 6),
        (("lone_correct_dissenter",), ("t-b",), "cases.jsonl [category=lone_correct_dissenter; tag=t-b]", 1),
    ],
)
def test_a_subset_of_categories_or_of_tags_alone_is_named_by_what_chose_it(
    categories: tuple[str, ...], tags: tuple[str, ...], name: str, cases: int
) -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC, categories=categories, tags=tags)
    doc = _document(settings, scanned(1), SUBSET_SHA, Named(), {}, {}, complete=True)  # type: ignore[arg-type]
    assert (doc["dataset"]["name"], doc["dataset"]["cases"]) == (name, cases)
    assert doc["dataset"]["problems"] == expected_problems(1)


def test_exactly_200_problems_are_all_kept() -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC)
    doc = _document(settings, scanned(200), FILE_SHA, Named(), {}, {}, complete=True)  # type: ignore[arg-type]
    assert doc["dataset"]["problems"] == expected_problems(200)
    doc = _document(settings, scanned(201), FILE_SHA, Named(), {}, {}, complete=True)  # type: ignore[arg-type]
    assert doc["dataset"]["problems"] == expected_problems(200)


# ---- the files written from it -----------------------------------------------------------------------------------


def test_metrics_json_the_markdown_and_the_html_report_are_written_the_html_from_the_spool(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    written_cases = {c["id"]: c for c in map(orjson.loads, cases.read_bytes().splitlines())}
    scan_result = scan(cases, spool=True)
    try:
        run = tmp_path / "run"
        run.mkdir()
        write_scope(run, scan_result.labels)
        writer = JournalWriter(run / "predictions.jsonl")
        outcomes, kept = {}, {}
        for i, lab in enumerate(scan_result.labels):
            if i == 5:
                rec = record(lab, None, DetectorError("timeout", "no reply"), 2, 30.0)
            else:
                rec = record(lab, Prediction(lab.expected_risk if i % 3 else "low", score=0.5), None, 1, 0.25)
            outcomes[lab.case_id] = outcome_of(writer.write(rec))
            kept[item_key(rec)] = {**rec, "latency_s": 9.5}  # not what the journal on disk says
        writer.close()
        metrics = compute(scan_result.labels, outcomes, wall_s=4.0, n_boot=20, seed=3)
        settings = EvalSettings(cases=str(cases), detector=parse_spec("builtin:agreement"), name="unit run")
        doc = _document(settings, scan_result, scan_result.sha256, Named(), {}, metrics, complete=True)
        doc["stopped"] = None
        cases.unlink()  # the HTML's case explorer reads the run's own copy, never the file again
        write_outputs(run, doc, scan_result)
        read_back = _explorer(run)
        write_outputs(run, doc, scan_result, kept)  # the records the run kept: the journal is not read
        from_memory = _explorer(run)
    finally:
        scan_result.close()
    assert sorted(row["p"][0]["l"] for row in read_back["cases"]) == [0.25] * 7 + [30.0]
    assert [row["p"][0]["l"] for row in from_memory["cases"]] == [9.5] * 8
    written = (run / "metrics.json").read_bytes()
    assert orjson.loads(written) == orjson.loads(orjson.dumps(doc))
    assert orjson.loads(written)["metrics"]["headline_real"] is None  # no case has an origin: undefined
    assert b'"headline_real": null' in written  # an undefined figure is null, never 0 or NaN
    assert b'"stopped": null' in written
    assert "unit run" in (run / "report.md").read_text()
    explorer = _explorer(run)
    assert explorer["note"] == ""
    assert {row["id"]: row["case"] for row in explorer["cases"]} == written_cases  # whole, from the run's scan


def _explorer(run: Path) -> Any:
    """The case explorer's data packed in a run's report.html."""
    html = (run / "report.html").read_text()
    packed = re.search(r"<script type='application/octet-stream' id='cases-data'>([^<]*)</script>", html)
    assert packed is not None
    return orjson.loads(gzip.decompress(base64.b64decode(packed.group(1))))


def test_a_merged_runs_document_names_its_shards_and_a_run_s_does_not() -> None:
    settings = EvalSettings(cases="cases.jsonl", detector=SPEC)
    plain = _document(settings, scanned(), FILE_SHA, Named(), FINGERPRINT, {}, complete=True)  # type: ignore[arg-type]
    assert "merged_from" not in plain and plain["stopped"] is None
    dataset, detector = dataset_info(settings, scanned(), FILE_SHA), detector_info(settings, Named(), FINGERPRINT)
    merged = metrics_document(settings, dataset, detector, {}, complete=False, stopped="budget: x",  # type: ignore[arg-type]
                              merged_from=["runs/s1", "runs/s2"])  # fmt: skip
    assert merged["merged_from"] == ["runs/s1", "runs/s2"] and list(merged)[-1] == "merged_from"
    assert (merged["complete"], merged["stopped"]) == (False, "budget: x")
