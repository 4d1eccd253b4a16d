"""The equivalents file of make mutation (tests/mutation/equivalent.txt) stays readable: every line names a listed
module, a function, the changed lines and a reason. make mutation itself checks that each line matches a fault."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from run import EQUIVALENTS, Module, load_equivalents, load_modules, unplanted


def test_every_equivalent_names_a_listed_module_and_gives_a_reason() -> None:
    modules = {m.path for m in load_modules()}
    found = load_equivalents()
    assert found, "the file lists no fault"
    for key, why in found.items():
        assert key.split("::")[0] in modules, key
        assert len(why) >= 20, key  # a reason, not a word


def test_a_malformed_line_is_refused_with_its_line_number(tmp_path: Path) -> None:
    bad = tmp_path / "equivalent.txt"
    bad.write_text(EQUIVALENTS.read_text("utf-8").splitlines()[1] + "\nharness/metrics.py::f: a ==> b\n")
    with pytest.raises(SystemExit, match=r"equivalent.txt:2: expected"):
        load_equivalents(bad)


def test_every_module_and_test_file_exists_and_the_tests_are_unit_level() -> None:
    # mutmut runs the listed files with "-m 'not slow'": a slow file would select no test and catch nothing
    root = Path(__file__).resolve().parents[2]
    for module in load_modules():
        assert (root / module.path).is_file(), module.path
        assert module.tests, module.path
        for test in module.tests:
            text = (root / test).read_text("utf-8")
            assert "pytest.mark.slow" not in text, f"{module.path}: {test} is marked slow"


def test_the_decorated_functions_mutmut_leaves_alone_are_named() -> None:
    # utility.py decorates two properties (rival, must_assign); its plain functions and methods are planted
    assert unplanted(Module("harness/scenario/utility.py", [])) == ["rival", "must_assign"]
    assert unplanted(Module("harness/metrics.py", [])) == []
