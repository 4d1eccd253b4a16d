"""Detector adapters on hand-worked examples: the answer helpers, the built-ins, each spec form reaching its
adapter, specs that name nothing, and the optional abilities found by isinstance."""

from __future__ import annotations

import asyncio

import pytest

from harness.detectors import load_detector
from harness.detectors.answers import agreement_share, answer_key
from harness.errors import DetectorLoadError


def test_answer_key_prefers_the_last_number() -> None:
    assert answer_key("I checked 12 rows and got 1,234") == ("number", 1234.0)
    assert answer_key("Canberra is the capital")[0] == "words"


@pytest.mark.parametrize(
    ("texts", "share"),
    [
        (["It is 42.", "42", "The answer is 42"], 1.0),
        (["It is 42.", "42", "41", "42", "42"], 0.8),  # 4 of 5 say 42
        (["1", "2", "3", "4"], 0.25),
        (["The capital is Canberra.", "Canberra is the capital.", "The capital is Sydney."], 2 / 3),
    ],
)
def test_agreement_share(texts: list[str], share: float) -> None:
    assert agreement_share(texts) == pytest.approx(share)


def _risk(spec: str, texts: list[str]) -> str:
    request = {"task": "q", "answers": [{"agent_id": str(i), "text": t} for i, t in enumerate(texts)]}
    return asyncio.run(load_detector(spec).assess(request)).risk


def test_builtin_detectors() -> None:
    assert _risk("builtin:agreement", ["7", "7", "7"]) == "low"  # unanimous
    assert _risk("builtin:agreement", ["7", "7", "7", "8"]) == "high"  # a majority with a dissenter
    assert _risk("builtin:agreement", ["7", "8", "9"]) == "medium"  # no 60% majority
    assert _risk("builtin:always-low", ["7", "8"]) == "low"
    with pytest.raises(DetectorLoadError, match="builtin:agreement"):
        load_detector("builtin:nope")


def test_bad_specs_explain_themselves(tmp_path) -> None:
    with pytest.raises(DetectorLoadError, match="does not exist"):
        load_detector(str(tmp_path / "missing.py") + ":f")
    with pytest.raises(DetectorLoadError, match="cannot import"):
        load_detector("no_such_module_here:f")
    with pytest.raises(DetectorLoadError, match="module:function"):
        load_detector("just-a-word")


def test_each_spec_form_reaches_its_adapter(tmp_path) -> None:
    from harness.detectors.builtin import Agreement
    from harness.detectors.functions import CallableDetector
    from harness.detectors.http import HttpDetector
    from harness.detectors.llm import LlmDetector

    code = "def detect(request):\n    return 'low'\n\nclass Model:\n    def assess(self, request):\n        return 1\n"
    (tmp_path / "mine.py").write_text(code)
    expected = {
        "http://127.0.0.1:9": HttpDetector,  # nothing is sent until a case is assessed
        "https://127.0.0.1:9/custom": HttpDetector,
        "llm:some-model@http://127.0.0.1:9/v1": LlmDetector,
        "builtin:agreement": Agreement,
        f"{tmp_path / 'mine.py'}:detect": CallableDetector,
        f"{tmp_path / 'mine.py'}:Model": CallableDetector,
    }
    for spec, adapter in expected.items():
        assert type(load_detector(spec)) is adapter, spec


def test_optional_abilities_are_found_by_isinstance(tmp_path) -> None:
    from harness.types import HasFingerprint, HasPreflight, HasSecrets, HasTrainingItems

    abilities = (HasSecrets, HasPreflight, HasFingerprint, HasTrainingItems)
    http = load_detector("http://user:s3cret-pass@127.0.0.1:9")
    assert [isinstance(http, a) for a in abilities] == [True, True, True, False]
    assert "s3cret-pass" in http.secrets()  # type: ignore[attr-defined]
    agreement = load_detector("builtin:agreement")
    assert [isinstance(agreement, a) for a in abilities] == [False, False, False, False]
    code = (
        "class Held:\n    def assess(self, request):\n        return 'low'\n    def secrets(self):\n"
        "        return ['tok-123456']\n    train_source_items = frozenset({'set:1'})\n\n"
        "class ListOnly:\n    secrets = ['not-a-method']\n    def assess(self, request):\n        return 'low'\n"
    )
    (tmp_path / "owners.py").write_text(code)
    held = load_detector(f"{tmp_path / 'owners.py'}:Held")
    assert held.secrets() == ["tok-123456"]  # type: ignore[attr-defined]
    assert isinstance(held, HasTrainingItems) and held.train_source_items == frozenset({"set:1"})
    listed = load_detector(f"{tmp_path / 'owners.py'}:ListOnly")
    assert listed.secrets() == [] and not isinstance(listed, HasTrainingItems)  # type: ignore[attr-defined]


def test_a_misspelled_function_name_gets_a_did_you_mean(tmp_path) -> None:
    """Issue 45, item 16: ``-d file.py:asses`` said only that the file had no such function."""
    path = tmp_path / "mine.py"
    path.write_text("import json\n\ndef assess(request):\n    return 'low'\n\ndef helper():\n    pass\n")
    with pytest.raises(DetectorLoadError, match=r"has no function 'asses'; did you mean 'assess'\?"):
        load_detector(f"{path}:asses")
    with pytest.raises(DetectorLoadError, match=r"has no function 'run' \(it has: assess, helper\)"):
        load_detector(f"{path}:run")  # nothing close: its own functions listed, not what it imported
