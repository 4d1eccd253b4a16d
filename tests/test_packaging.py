"""The wheel holds what an installed harness needs: built from the checkout, installed into a folder of its own, and
run from outside the checkout, so a file the package reads from the repository (not from itself) fails here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import OPENAI_SERVER, ROOT

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _wheel(tmp_path: Path) -> Path:
    out = tmp_path / "wheel"
    # no build isolation: the build runs offline with the setuptools of this environment
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)]
    proc = subprocess.run(build, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("fcb_harness-*.whl")
    return wheel


def test_the_installed_wheel_runs_an_llm_detector_with_its_default_prompt(tmp_path: Path, detector_server) -> None:
    site = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target", str(site)]
    proc = subprocess.run([*install, str(_wheel(tmp_path))], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}  # the wheel's files first; its dependencies from this environment
    where = subprocess.run(
        [sys.executable, "-c", "import harness; print(harness.__file__)"],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
    )
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    server = detector_server(script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    run = [sys.executable, "-m", "harness", "eval", str(cases), "-d", f"llm:packaged@{server.url}/v1"]
    proc = subprocess.run(
        [*run, "-q", "--bootstrap", "0", "--results", str(tmp_path / "results")],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = (tmp_path / "results").iterdir()
    journal = (run_dir / "predictions.jsonl").read_text().splitlines()
    assert len(journal) == 8 and '"error":null' in journal[0].replace(" ", "")
