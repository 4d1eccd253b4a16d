"""No import cycles in the packages (harness, and fcb_datasets beside it), counting every import statement: at
module level, inside functions and under ``TYPE_CHECKING``. import-linter's layers hold imports between packages;
this holds them inside each package too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest


def cycles(*packages: str) -> list[tuple[str, ...]]:
    """Each import cycle once, as the chain of modules that closes it (grimp reads every import statement)."""
    graph = grimp.build_graph(*packages, cache_dir=None)
    found: set[frozenset[str]] = set()
    chains: list[tuple[str, ...]] = []
    for module in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back and frozenset(back) not in found:
                found.add(frozenset(back))
                chains.append((module, *back))
    return chains


def test_the_harness_and_the_benchmark_package_have_no_import_cycle() -> None:
    assert cycles("harness", "fcb_datasets") == []


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check can fail: a package whose only cycle runs through a function-level import."""
    package = tmp_path / "tangled"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("def late():\n    from tangled import second\n    return second\n")
    (package / "second.py").write_text("from tangled import first\n")
    (package / "third.py").write_text("from tangled import second\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert cycles("tangled") == [("tangled.first", "tangled.second", "tangled.first")]
    finally:
        sys.modules.pop("tangled", None)
