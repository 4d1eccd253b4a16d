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


# --- answers.py: what an answer asserts, worked by hand -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("I checked 12 rows and got 1,234", ("number", 1234.0)),  # the last number, thousands comma dropped
        ("from 3 down to -2.5", ("number", -2.5)),  # a sign and decimals are part of the number
        ("3 then 5", ("number", 5.0)),  # the last, not the one before it
        ("A cat, a Dog", ("words", frozenset({"cat", "dog"}))),  # lower-cased; "a" is a stop word
        ("Yes, the answer is Canberra", ("words", frozenset({"canberra"}))),  # yes, the, answer, is: stop words
        ("maybe yes", ("words", frozenset())),  # hedge and yes (the last stop word) assert nothing
    ],
)
def test_answer_key_by_hand(text: str, key: tuple[str, object]) -> None:
    assert answer_key(text) == key


def test_same_answer_numbers_and_kinds() -> None:
    from harness.detectors.answers import same_answer

    assert same_answer(("number", 7.0), ("number", 7.0))
    assert not same_answer(("number", 7.0), ("number", 8.0))
    assert not same_answer(("number", 7.0), ("words", frozenset({"7"})))  # a number never matches words
    assert not same_answer(("words", frozenset()), ("words", frozenset()))  # nothing asserted: no agreement


def test_same_answer_jaccard_threshold() -> None:
    """{a, b} and {a, c}: 1 shared of 3 in the union = 0.333; {a, b, c} and {a, b, d}: 2 of 4 = 0.5, exactly the
    default threshold (agrees); {a, b, c} and {a, b, d, e}: 2 of 5 = 0.4 (does not)."""
    from harness.detectors.answers import same_answer

    def w(*items: str) -> tuple[str, frozenset[str]]:
        return "words", frozenset(items)

    assert not same_answer(w("a", "b"), w("a", "c"))
    assert same_answer(w("a", "b", "c"), w("a", "b", "d"))
    assert not same_answer(w("a", "b", "c"), w("a", "b", "d", "e"))
    assert same_answer(w("a", "b"), w("a", "c"), threshold=1 / 3)  # 0.333 >= 1/3
    assert not same_answer(w("a", "b", "c"), w("a", "b", "d"), threshold=0.51)


def test_agreement_share_groups_greedily() -> None:
    """Claims {alpha, beta}, {gamma, delta}, {alpha, beta, gamma, delta}, {gamma, delta}. The third agrees with both
    of the first two (Jaccard 2/4 = 0.5) and joins the first group only; the fourth joins the second. Groups
    [1, 3], [2, 4]: largest 2 of 4 = 0.5. (Joining every matching group would make [2, 3, 4]: 0.75.)"""
    texts = ["alpha beta", "gamma delta", "alpha beta gamma delta", "gamma delta"]
    assert agreement_share(texts) == 0.5
    assert agreement_share(["7", "7", "8"]) == pytest.approx(2 / 3)  # the largest group, not the smallest
    assert agreement_share(["7"]) == 1.0  # one answer agrees with itself
