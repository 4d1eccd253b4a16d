"""What a new user types wrong in the first hour gets a message that says what was meant, before any work is done."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli, run_fcb_process

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.mark.parametrize(
    ("given", "suggested"),
    [
        ("htp://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("localhost:8080/detect", "http://localhost:8080/detect"),
        ("HTTPS://detector.example/api", "https://detector.example/api"),
    ],
)
def test_a_url_without_its_scheme_is_named_not_imported(tmp_path: Path, given: str, suggested: str) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    proc = run_cli("eval", str(cases), "-d", given, "--out", str(tmp_path / "run"), "--quiet")
    assert proc.returncode == 2 and f"try -d {suggested} instead" in proc.stderr, proc.stderr
    assert "No module named" not in proc.stderr and not (tmp_path / "run").exists()


def test_python_specs_are_left_alone() -> None:
    from harness.spec import looks_like_spec, meant, parse_spec

    for spec in ("mypkg.detectors:assess", "path/to/zoo.py:hashrisk", "zoo.py:Detector"):
        assert meant(parse_spec(spec)) is None
    assert not looks_like_spec("data/cases.jsonl") and looks_like_spec("builtin:agreement")


@pytest.mark.parametrize("spec", ["builtin:agreement", "http://127.0.0.1:8765", "zoo.py:assess"])
def test_a_spec_given_as_the_cases_file_says_to_use_d(tmp_path: Path, spec: str) -> None:
    proc = run_cli("eval", spec, "--quiet")
    assert proc.returncode == 2 and f"did you mean -d {spec}?" in proc.stderr, proc.stderr


def test_baseline_check_refuses_a_missing_or_foreign_baseline_before_any_run(tmp_path: Path) -> None:
    shipped = ROOT / "results" / "baselines" / "builtin-agreement-embedded.json"
    ok = run_cli("baseline", "check", str(shipped))
    assert ok.returncode == 0 and "240 cases" in ok.stderr, ok.stderr
    missing = run_cli("baseline", "check", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "nope.json" in missing.stderr
    other = write_cases(tmp_path / "cases.jsonl", 8)
    foreign = run_cli("baseline", "check", str(shipped), str(other))
    assert foreign.returncode == 2 and "made on embedded_cases.jsonl" in foreign.stderr
    broken = tmp_path / "broken.json"
    doc = json.loads(shipped.read_text())
    doc["cases"]["expected"] = doc["cases"]["expected"][:-1]
    broken.write_text(json.dumps(doc))
    assert run_cli("baseline", "check", str(broken)).returncode == 2


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_regress_with_a_wrong_baseline_fails_before_evaluating(tmp_path: Path) -> None:
    # BIN holds an fcb that runs this checkout, RUNTIME is empty: the Makefile's documented way to use an installed
    # package
    fcb = tmp_path / "bin" / "fcb"
    fcb.parent.mkdir()
    fcb.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m harness "$@"\n')
    fcb.chmod(0o755)
    results = tmp_path / "results"
    proc = subprocess.run(
        ["make", "-s", "regress", f"BASELINE={tmp_path / 'missing.json'}", "DETECTOR=builtin:always-low",
         f"BIN={fcb.parent}", "RUNTIME=", f"REGRESS_RUN={results / 'r'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode != 0 and "missing.json" in proc.stderr + proc.stdout
    assert not results.exists()  # no evaluation ran


def test_building_the_benchmark_without_its_extra_says_which_to_install(tmp_path: Path) -> None:
    # a `make eval` install has no math-verify: block it on the process's path, as the export tests block pyarrow
    blocker = tmp_path / "block" / "math_verify"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ModuleNotFoundError('no math_verify here', name='math_verify')\n")
    env = {"PYTHONPATH": str(tmp_path / "block")}
    proc = run_fcb_process("build-dataset", "--gsm8k", str(tmp_path / "x.jsonl"), "--out", str(tmp_path / "o"), env=env)
    assert proc.returncode == 2 and not (tmp_path / "o").exists()
    assert proc.stderr.splitlines() == [
        "fcb build-dataset: needs the datasets extra (math_verify is not installed): "
        "pip install 'fcb-harness[datasets]'"
    ]
    assert run_fcb_process("build-dataset", "--help", env=env).returncode == 0  # the options are the harness's
