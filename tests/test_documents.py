"""Outputs are a contract: each document is defined once (`harness.documents`), its shipped JSON Schema is what
that definition generates, the files of a real CLI run validate against both, ``fcb schema NAME`` prints each, and
a document with a field missing or of the wrong type fails validation."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from harness import documents
from harness.documents import SCHEMAS
from tests.conftest import EMBEDDED, ROOT, once, read_jsonl, run_cli

# A detector that fails on a known set of cases (by question length), so the journal holds both kinds of record
FLAKY = """
def assess(request):
    if len(request["task"]) % 5 == 0:
        raise ValueError("planted failure")
    return {"false_consensus_risk": "high" if len(request["answers"]) > 3 else "low", "risk_score": 0.25}
"""

# under pytest -n these tests are to share one worker (--dist loadgroup; see the Makefile), so that
# the module-scoped outputs are made once, not once on every worker
pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def printed_schemas() -> dict[str, dict]:
    """Every schema as ``fcb schema NAME`` prints it (the real CLI), by name."""
    found = {}
    for name in SCHEMAS:
        proc = run_cli("schema", name)
        assert proc.returncode == 0, proc.stderr
        found[name] = json.loads(proc.stdout)
    return found


@pytest.fixture(scope="module")
def schemas() -> dict[str, dict]:
    return printed_schemas()


@pytest.fixture(scope="module")
def validators(schemas: dict[str, dict]) -> dict[str, Draft202012Validator]:
    # the baseline schema refers to the metrics schema by its $id: resolved from the printed schemas, offline
    registry: Registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return {name: Draft202012Validator(s, registry=registry) for name, s in schemas.items()}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory, embedded_audit: Path) -> dict[str, object]:
    """Real outputs of real commands: two evaluations, a baseline, a leaderboard, a case-level analysis and a data set
    audit (the embedded set's, `conftest.embedded_audit`). Made once a session (`once`): the xdist workers that run
    this module's tests share them and read them back each."""
    tmp = once(tmp_path_factory, "documents-outputs", _make_outputs)
    runs = {"agreement": tmp / "agreement", "flaky": tmp / "flaky"}
    return {
        "runs": runs,
        "baseline": json.loads((tmp / "baselines" / "b1.json").read_text()),
        "audit": json.loads(embedded_audit.read_text()),
        **{
            name: json.loads((tmp / f"{name}.json").read_text()) for name in ("leaderboard", "compare", "case-analysis")
        },
    }


def _make_outputs(tmp: Path) -> None:
    flaky = tmp / "flaky.py"
    flaky.write_text(FLAKY)
    runs = {"agreement": tmp / "agreement", "flaky": tmp / "flaky"}
    for args in (
        ("-d", "builtin:agreement", "--out", str(runs["agreement"])),
        ("-d", f"{flaky}:assess", "--out", str(runs["flaky"]), "--no-preflight", "--max-consecutive-errors", "0"),
    ):
        proc = run_cli("eval", *args, "--limit", "60", "--bootstrap", "50", "-q")
        assert proc.returncode in (0, 1), proc.stderr
    proc = run_cli("baseline", "save", str(runs["agreement"]), "--name", "b1", "--dir", str(tmp / "baselines"))
    assert proc.returncode == 0, proc.stderr
    board = run_cli("leaderboard", str(runs["agreement"]), str(runs["flaky"]), "--format", "json", "--bootstrap", "50")
    assert board.returncode == 0, board.stderr
    compare = run_cli("compare", str(runs["agreement"]), str(runs["flaky"]), "--format", "json", "--bootstrap", "50")
    assert compare.returncode in (0, 1), compare.stderr
    items = run_cli("cases", str(runs["agreement"]), str(runs["flaky"]), "--strongest", "2", "--format", "json")
    assert items.returncode == 0, items.stderr
    for name, proc in (("leaderboard", board), ("compare", compare), ("case-analysis", items)):
        (tmp / f"{name}.json").write_text(proc.stdout)


def errors_of(validator: Draft202012Validator, doc: object) -> list[str]:
    return [f"{'.'.join(map(str, e.absolute_path))}: {e.message[:200]}" for e in validator.iter_errors(doc)]


NAMES = [
    "metrics",
    "journal",
    "run",
    "scope",
    "baseline",
    "leaderboard",
    "compare",
    "audit",
    "case-analysis",
    "suite",
    "threshold",
]


def test_every_schema_is_printed_as_a_valid_json_schema(schemas: dict[str, dict]) -> None:
    assert sorted(schemas) == sorted(NAMES)
    for name, schema in schemas.items():
        Draft202012Validator.check_schema(schema)
        shipped = json.loads((ROOT / "harness" / "data" / f"{name}.schema.json").read_text())
        assert schema == shipped, name


def test_each_shipped_schema_is_what_its_definition_generates() -> None:
    # one definition per document: a schema edited by hand, or a definition changed without `python -m
    # harness.documents`, fails here
    assert tuple(NAMES) == SCHEMAS
    for name in SCHEMAS:
        shipped = (ROOT / "harness" / "data" / f"{name}.schema.json").read_text()
        assert shipped == documents.schema_file_text(name), f"{name}: run python -m harness.documents"


def test_an_unknown_schema_name_is_bad_usage_and_lists_the_names() -> None:
    proc = run_cli("schema", "metric")
    assert proc.returncode == 2 and proc.stdout == ""
    for name in NAMES:
        assert name in proc.stderr


def test_run_folder_files_validate(outputs: dict, validators: dict) -> None:
    for run in outputs["runs"].values():
        for name, file in (("metrics", "metrics.json"), ("run", "run.json"), ("scope", "scope.json")):
            doc = json.loads((run / file).read_text())
            assert errors_of(validators[name], doc) == [] and documents.check(name, doc) == [], (run, file)
        for rec in read_jsonl(run / "predictions.jsonl"):
            assert errors_of(validators["journal"], rec) == [] and documents.check("journal", rec) == [], rec


def test_the_flaky_run_has_both_kinds_of_journal_record(outputs: dict) -> None:
    records = read_jsonl(outputs["runs"]["flaky"] / "predictions.jsonl")
    failed = [r for r in records if r["error"] is not None]
    assert failed and len(failed) < len(records)
    assert all(r["risk"] is None and r["error"]["kind"] == "detector_exception" for r in failed)


def test_error_rate_is_in_the_headline_and_counts_the_journal_errors(outputs: dict) -> None:
    run = outputs["runs"]["flaky"]
    records = read_jsonl(run / "predictions.jsonl")
    expected = sum(r["error"] is not None for r in records) / len(records)  # counted from the journal itself
    doc = json.loads((run / "metrics.json").read_text())
    assert doc["metrics"]["error_rate"] == pytest.approx(expected)


def test_baseline_leaderboard_compare_and_audit_validate(outputs: dict, validators: dict) -> None:
    for name in ("baseline", "leaderboard", "compare", "case-analysis"):
        assert errors_of(validators[name], outputs[name]) == [] and documents.check(name, outputs[name]) == [], name
    assert (
        len(outputs["case-analysis"]["cases"]) == 60 and outputs["case-analysis"]["summary"]["errored_predictions"] > 0
    )
    assert len(outputs["leaderboard"][0]["rows"]) == 2
    assert errors_of(validators["audit"], outputs["audit"]) == []


def test_the_committed_baselines_validate(validators: dict) -> None:
    found = sorted((ROOT / "results" / "baselines").glob("*.json"))
    assert found
    for path in found:
        assert errors_of(validators["baseline"], json.loads(path.read_text())) == [], path


def _mutations(outputs: dict) -> list[tuple[str, object, str]]:
    """(schema, a real document with one field removed or of the wrong type, what was done)."""
    run = outputs["runs"]["agreement"]
    metrics = json.loads((run / "metrics.json").read_text())
    manifest = json.loads((run / "run.json").read_text())
    record = read_jsonl(run / "predictions.jsonl")[0]
    cases: list[tuple[str, object, str]] = []

    def mutate(name: str, doc: object, path: list, value: object, what: str) -> None:
        changed = copy.deepcopy(doc)
        node = changed
        for key in path[:-1]:
            node = node[key]
        if value is KeyError:
            del node[path[-1]]
        else:
            node[path[-1]] = value
        cases.append((name, changed, what))

    mutate("metrics", metrics, ["metrics", "accuracy"], KeyError, "accuracy missing")
    mutate("metrics", metrics, ["metrics", "accuracy"], "0.5", "accuracy a string")
    mutate("metrics", metrics, ["metrics", "accuracy"], 1.5, "accuracy above 1")
    mutate("metrics", metrics, ["complete"], "yes", "complete a string")
    mutate("metrics", metrics, ["metrics", "operational", "cases"], -1, "negative case count")
    mutate("journal", record, ["expected"], KeyError, "expected missing")
    mutate("journal", record, ["risk"], "severe", "risk not a risk level")
    mutate("journal", record, ["attempts"], "1", "attempts a string")
    mutate("journal", record, ["error"], {"kind": "timeout", "message": "x"}, "an error with a risk")
    mutate("run", manifest, ["sessions"], KeyError, "sessions missing")
    mutate("run", manifest, ["settings", "seed"], "0", "seed a string")
    mutate("baseline", outputs["baseline"], ["cases", "predicted"], "lmx", "an unknown letter")
    mutate("baseline", outputs["baseline"], ["doc", "metrics", "n_cases"], KeyError, "n_cases missing in doc")
    mutate("leaderboard", outputs["leaderboard"], [0, "rows", 0, "rank_label"], KeyError, "rank_label missing")
    mutate("leaderboard", outputs["leaderboard"], [0, "rows", 0, "cases"], "40", "cases a string")
    mutate("audit", outputs["audit"], ["verdict"], KeyError, "verdict missing")
    mutate("compare", outputs["compare"], ["regression"], "no", "regression a string")
    mutate("compare", outputs["compare"], ["metrics", "macro_f1", "delta"], KeyError, "a delta missing")
    mutate("case-analysis", outputs["case-analysis"], ["cases", 0, "predicted"], "lx", "an unknown prediction letter")
    mutate("case-analysis", outputs["case-analysis"], ["summary", "suspects"], KeyError, "the suspect count missing")
    return cases


def test_a_mutated_document_fails_validation(outputs: dict, validators: dict) -> None:
    cases = _mutations(outputs)
    assert len(cases) == 20
    for name, doc, what in cases:
        assert errors_of(validators[name], doc), f"{name}: {what} was accepted"
        assert documents.check(name, doc), f"{name}: {what} passed its definition"


def test_the_api_result_has_typed_figures(tmp_path: Path) -> None:
    import harness

    result = harness.evaluate(EMBEDDED, "builtin:agreement", limit=20, n_boot=0, out=str(tmp_path / "run"))
    doc = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert result.figures == doc["metrics"] == result.document["metrics"]
    with pytest.warns(DeprecationWarning, match="use .document"):  # the old name works for one release, and warns
        assert result.metrics is result.document
    assert result.document["dataset"]["sha256"] == doc["dataset"]["sha256"]
    counts = doc["metrics"]["confusion_matrix"]["counts"]
    assert result.figures["n_cases"] == sum(map(sum, counts)) == 20


def test_a_run_answered_from_the_cache_validates_and_reads_back(tmp_path: Path, validators: dict) -> None:
    # replayed replies are journaled with attempts 0; the journal reader once refused them (leaderboard exit 2)
    for out in ("first", "second"):
        args = ("-d", "builtin:agreement", "--limit", "5", "--cache", str(tmp_path / "cache"), "--bootstrap", "0")
        assert run_cli("eval", *args, "--out", str(tmp_path / out), "-q").returncode == 0
    records = read_jsonl(tmp_path / "second" / "predictions.jsonl")
    assert len(records) == 5 and all(r["cached"] is True and r["attempts"] == 0 for r in records)
    assert all(errors_of(validators["journal"], r) == [] for r in records)
    assert errors_of(validators["journal"], {**records[0], "cached": False})  # 0 attempts only when replayed
    board = run_cli("leaderboard", str(tmp_path / "second"), "--format", "json", "--bootstrap", "10")
    assert board.returncode == 0, board.stderr
