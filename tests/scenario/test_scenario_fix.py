"""``fcb scenario validate --fix-ascii`` edits a symlink's target, keeps the file's mode and leaves a read-only file
alone (issue 15, item 17)."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

SCENARIOS = ROOT / "tests" / "data" / "scenarios"
DASH = "\u2014".encode()  # the em dash in non_ascii.json's description, which the fix writes as "--"


def test_fix_ascii_edits_a_symlinks_target_and_keeps_its_mode(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "non_ascii.json"
    shutil.copy(SCENARIOS / "non_ascii.json", target)
    target.chmod(0o640)
    link = tmp_path / "non_ascii.json"
    link.symlink_to(target)
    proc = run_cli("scenario", "validate", "--fix-ascii", str(link))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert link.is_symlink() and link.resolve() == target  # still a link, to the same file
    assert DASH not in target.read_bytes() and b"--" in target.read_bytes()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not list((tmp_path / "real").glob(".*.tmp")) and not list(tmp_path.glob(".*.tmp"))


def test_fix_ascii_refuses_a_read_only_file(tmp_path: Path) -> None:
    path = tmp_path / "non_ascii.json"
    shutil.copy(SCENARIOS / "non_ascii.json", path)
    path.chmod(0o444)
    before = path.read_bytes()
    proc = run_cli("scenario", "validate", "--fix-ascii", str(path))
    assert proc.returncode == 1  # still invalid: nothing was fixed
    assert f"{path}: (root): not fixed: the file is read-only; make it writable to fix it" in proc.stdout
    assert path.read_bytes() == before and DASH in before
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
