"""docs/development.md stays true to the code: its module map (the tree and the table) names every package and
module and nothing that is not a file, and its list of the tests that start ``fcb`` as a process names exactly the
test files that do."""

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


PACKAGES = ("harness", "fcb_datasets")


def modules(root: Path = ROOT) -> set[str]:
    """Every module of the two packages but ``__init__`` and ``__main__``, as a path from the checkout."""
    return {
        path.relative_to(root).as_posix()
        for package in PACKAGES
        for path in (root / package).rglob("*.py")
        if path.name not in ("__init__.py", "__main__.py")
    }


def tree_names(text: str) -> set[str]:
    """What the tree block names: each line's first word(s) up to the description, as paths under its package."""
    block = text[text.index("```text\n") + 8 : text.index("```", text.index("```text\n") + 8)]
    names, package = set(), ""
    for line in block.splitlines():
        if line.startswith("│"):  # a description's second line
            continue
        if not line.startswith(("├", "└")):
            package = line.split()[0].rstrip("/")
            continue
        head = line.lstrip("├└│─ ").split("  ")[0]
        names |= {f"{package}/{n.strip().rstrip('/')}" for n in head.split(",") if n.strip()}
    return names


def map_names(text: str) -> set[str]:
    """What the module table names: full paths, and names relative to the folder its row's first cell gives."""
    found: set[str] = set()
    start = text.index("One module per step:")
    table = text[start : text.find("\n\n", text.index("\n|", start))]  # up to the table's end
    for first, *rest in _table_rows(table):
        folders = [f for f in re.findall(r"`([\w/]+/)`", first)]
        found |= {name for name in re.findall(r"`([\w/.]+\.(?:py|js|css))`", first)}
        for name in re.findall(r"`([\w/]+\.py)`", " ".join(rest)):
            found |= {name} if name.startswith(PACKAGES) else {folder + name for folder in folders}
    return found


def test_the_module_map_names_every_package_and_module_and_nothing_else() -> None:
    text = DOC.read_text(encoding="utf-8")
    found = modules()
    named = map_names(text)
    assert sorted(found - named) == [], "modules the table of docs/development.md does not name"
    assert sorted(n for n in named if not (ROOT / n).exists()) == [], "names in the table that are no file"
    tree = tree_names(text)
    top = {
        p.relative_to(ROOT).as_posix()
        for pkg in PACKAGES
        for p in (ROOT / pkg).iterdir()
        if not p.name.startswith("__") and (p.suffix == ".py" or p.is_dir())
    }
    assert sorted(top - tree) == [], "packages and modules the tree of docs/development.md leaves out"
    assert sorted(n for n in tree if not (ROOT / n).exists()) == [], "names in the tree that are no file"


def test_the_map_check_sees_a_module_left_out(tmp_path: Path) -> None:
    for name in ("harness/run/new.py", "harness/run/old.py", "fcb_datasets/x.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    text = "One module per step:\n\n| module | step |\n| --- | --- |\n| `harness/run/` | `old.py` the old step |\n"
    assert modules(tmp_path) - map_names(text) == {"harness/run/new.py", "fcb_datasets/x.py"}


def test_the_tests_that_start_fcb_as_a_process_are_the_ones_listed() -> None:
    found = process_test_files()
    assert found, "the pattern finds no file: it no longer matches how tests start a process"
    assert listed_process_files() == found


def test_the_check_of_the_list_sees_a_file_that_starts_a_process(tmp_path: Path) -> None:
    (tmp_path / "test_new.py").write_text('subprocess.run([sys.executable, "-m", "harness", "eval"])\n')
    (tmp_path / "test_plain.py").write_text('run_cli("eval")\n')
    (tmp_path / "conftest.py").write_text("def run_fcb_process(): ...\n")
    assert {Path(p).name for p in process_test_files(tmp_path)} == {"test_new.py"}
