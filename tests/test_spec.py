"""A detector spec parsed once (`harness.spec`): each form's kind and parts, the form fit to show, and an identity that
tells apart two specs differing only in a secret without showing it."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.spec import parse_spec


@pytest.mark.parametrize(
    ("text", "kind", "target", "attribute", "query"),
    [
        ("http://127.0.0.1:8765", "http", "http://127.0.0.1:8765", "", ""),
        ("https://a.example/v1,https://b.example/v1", "http", "https://a.example/v1,https://b.example/v1", "", ""),
        ("llm:qwen2.5-7b@http://127.0.0.1:8000/v1", "llm", "qwen2.5-7b@http://127.0.0.1:8000/v1", "", ""),
        ("builtin:heuristic", "builtin", "heuristic", "", ""),
        ("builtin:learned?train=/data/dev.jsonl", "builtin", "learned", "", "train=/data/dev.jsonl"),
        ("my_pkg.detect:assess", "python", "my_pkg.detect", "assess", ""),
        ("path/to/zoo.py:always_high", "python", "path/to/zoo.py", "always_high", ""),
        ("C:/detectors/zoo.py:hashrisk", "python", "C:/detectors/zoo.py", "hashrisk", ""),  # the last colon
        ("no_function_named", "python", "", "no_function_named", ""),  # its loader says what is missing
    ],
)
def test_each_form_is_read_into_its_parts(text: str, kind: str, target: str, attribute: str, query: str) -> None:
    spec = parse_spec(text)
    assert (spec.text, spec.kind, spec.target, spec.attribute, spec.query) == (text, kind, target, attribute, query)


def test_two_functions_of_one_file_and_two_secrets_are_two_detectors() -> None:
    # the response cache once keyed a file's detectors by the file alone, and URLs by their redacted form
    a, b = parse_spec("zoo.py:always_high"), parse_spec("zoo.py:hashrisk")
    assert a.identity != b.identity
    one = parse_spec("http://127.0.0.1:9/?design=alpha&token=s3cret-one")
    two = parse_spec("http://127.0.0.1:9/?design=beta&token=s3cret-two")
    assert one.display == two.display  # both shown without their secret-looking values
    assert one.identity != two.identity and "s3cret" not in one.identity + one.display


def test_a_file_spec_is_made_portable_and_others_stay_as_given(tmp_path: Path) -> None:
    (tmp_path / "zoo.py").write_text("def f(r):\n    return 'low'\n")
    import os

    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert parse_spec("zoo.py:f").portable() == f"{tmp_path.resolve() / 'zoo.py'}:f"
    finally:
        os.chdir(here)
    for text in ("builtin:agreement", "my_pkg.detect:assess", "http://127.0.0.1:1"):
        assert parse_spec(text).portable() == text
