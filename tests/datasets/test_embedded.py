"""The embedded data set: valid, balanced, and exactly what its seeded generator writes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import jsonschema
from conftest import EMBEDDED, ROOT, run_cli, shared_file

from harness import types
from harness.cases.reader import scan
from harness.datasets import embedded
from harness.datasets.embedded import assembly


def test_shipped_file_is_what_the_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "regenerated.jsonl"
    seed = str(embedded.DEFAULT_SEED)
    command = [sys.executable, "-m", "harness.datasets.embedded", "--out", str(out), "--seed", seed]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes() == EMBEDDED.read_bytes()


def test_the_generators_copy_of_the_label_scheme_is_the_contracts() -> None:
    # The generator may not import harness.types, so it keeps its own category -> risk table.
    assert assembly.CATEGORY_RISK == types.CATEGORY_RISK


def test_valid_balanced_and_varied() -> None:
    result = scan(EMBEDDED, strict=True)
    assert result.problems == [] and len(result.labels) >= 200
    cases = [json.loads(line) for line in EMBEDDED.read_text().splitlines()]
    by_category = Counter(c["category"] for c in cases)
    assert len(by_category) == 8 and min(by_category.values()) >= 25
    assert all(c["source"] == "original" for c in cases)
    assert {len(c["answers"]) for c in cases} >= {2, 16}
    assert 0.2 < sum("evidence" in c for c in cases) / len(cases) < 0.8
    assert all(
        set(a["metadata"]) == {"model_family", "saw_other_answers", "shared_context"}
        for c in cases
        for a in c["answers"]
    )
    subjects = Counter(t for c in cases for t in c["tags"])
    assert {"arithmetic", "units", "dates", "science", "geography", "code", "everyday_reasoning"} <= set(subjects)


def test_valid_under_the_shared_schema_with_a_general_validator() -> None:
    packaged = ROOT / "harness" / "data" / "fcb-case.schema.json"
    shared = shared_file("schemas", "fcb-case.schema.json")
    assert packaged.read_bytes() == shared.read_bytes()  # the packaged copy is the shared spec, byte for byte
    schema = json.loads((ROOT / "harness" / "data" / "fcb-case.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    for line in EMBEDDED.read_text().splitlines():
        assert not list(validator.iter_errors(json.loads(line)))


def test_make_eval_equivalent_runs_on_the_embedded_set(tmp_path: Path) -> None:
    proc = run_cli("eval", "--results", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert "macro-F1" in proc.stdout and "genuine_disagreement" in proc.stdout
    doc = json.loads(next(tmp_path.glob("*/metrics.json")).read_text())
    assert doc["detector"]["spec"] == "builtin:heuristic" and doc["complete"]
    assert doc["metrics"]["n_cases"] == len(EMBEDDED.read_text().splitlines())
