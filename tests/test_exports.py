"""The package's public surface: the names `harness/__init__.py` exports, pinned, and each one importable."""

from __future__ import annotations

import ast
from pathlib import Path

import harness

EXPORTED = {
    "DetectorOptions",
    "EvalSettings",
    "__version__",
    "evaluate",
    "evaluate_async",
    "load_detector",
    "load_run",
    "scan",
}


def test_the_exported_names_are_pinned_and_each_resolves() -> None:
    assert set(harness.__all__) == EXPORTED
    for name in harness.__all__:
        assert getattr(harness, name) is not None, name


def test_all_is_a_literal_list_that_tools_can_read() -> None:
    tree = ast.parse(Path(harness.__file__).read_text())
    (node,) = [n for n in tree.body if isinstance(n, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)]  # fmt: skip
    assert isinstance(node.value, ast.List)
    assert {ast.literal_eval(e) for e in node.value.elts} == EXPORTED
