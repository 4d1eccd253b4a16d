"""docs/development.md stays true to the code: its module map names every package and module, and its list of the
tests that start ``fcb`` as a process names exactly the test files that do."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

DOC = ROOT / "docs" / "development.md"
# what starts fcb, make, a benchmark or `fcb serve` as a process of its own
PROCESS = re.compile(r'run_fcb_process\(|"-m", "harness"|from servicekit import|\["make"|benchmarks" / "gate\.py"')
# they define the ways (and this file names them); the tests that use them are listed
HELPERS = {"conftest.py", "servicekit.py", Path(__file__).name}


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    return text[start : end if end != -1 else None]


def _table_rows(section: str) -> list[list[str]]:
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows[1:] if not set(row[0]) <= set("- ")]


def process_test_files(root: Path = ROOT / "tests") -> set[str]:
    """The test files whose code starts fcb (or make, gate.py, fcb serve) as a process."""
    return {
        path.relative_to(root.parent).as_posix()
        for path in root.rglob("*.py")
        if path.name not in HELPERS and PROCESS.search(path.read_text(encoding="utf-8"))
    }


def listed_process_files() -> set[str]:
    """The files the table names: full paths, and bare names standing for the folder of the path before them."""
    found: set[str] = set()
    for first, *_ in _table_rows(_section("#### The tests that start `fcb` as a process")):
        folder = ""
        for name in re.findall(r"`([^`]+\.py)`", first):
            if "/" in name:
                folder = name.rsplit("/", 1)[0]
                found.add(name)
            else:
                found.add(f"{folder}/{name}")
    return found


def test_the_tests_that_start_fcb_as_a_process_are_the_ones_listed() -> None:
    found = process_test_files()
    assert found, "the pattern finds no file: it no longer matches how tests start a process"
    assert listed_process_files() == found


def test_the_check_of_the_list_sees_a_file_that_starts_a_process(tmp_path: Path) -> None:
    (tmp_path / "test_new.py").write_text('subprocess.run([sys.executable, "-m", "harness", "eval"])\n')
    (tmp_path / "test_plain.py").write_text('run_cli("eval")\n')
    (tmp_path / "conftest.py").write_text("def run_fcb_process(): ...\n")
    assert {Path(p).name for p in process_test_files(tmp_path)} == {"test_new.py"}
