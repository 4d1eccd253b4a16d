"""The built-in detectors (harness/detectors/builtin.py) unit by unit: the registry and its spec options, the
always-low floor, `builtin:agreement`'s thresholds and `vote_rule`, each figure worked by hand on requests written for
these tests."""

from __future__ import annotations

import asyncio
import hashlib
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from harness._version import __version__
from harness.detectors.builtin import (
    BEST_BUILTIN,
    BUILTIN_OPTIONS,
    BUILTINS,
    Agreement,
    AlwaysLow,
    Vote,
    builtin_fingerprint,
    load_builtin,
    vote_rule,
)
from harness.errors import DetectorLoadError
from harness.final_answer import Votes
from harness.spec import parse_spec
from harness.types import Prediction

CHOICES = (
    "choose from: builtin:always-low, builtin:agreement, builtin:vote, builtin:heuristic, builtin:learned?train=PATH"
)
"""The list every load error ends with: the five built-ins in registry order, learned with its one option."""


def _request(texts: list[str]) -> dict[str, Any]:
    return {"task": "How many?", "answers": [{"agent_id": f"a{i}", "text": t} for i, t in enumerate(texts)]}


def _assess(detector: Any, texts: list[str]) -> Prediction:
    return asyncio.run(detector.assess(_request(texts)))


def _load(text: str) -> Any:
    return load_builtin(parse_spec(text))


# --- the registry -------------------------------------------------------------------------------------------------


def test_every_name_loads_its_own_detector_and_reports_its_name() -> None:
    from harness.detectors.heuristic import Heuristic

    for text, kind in [
        ("builtin:always-low", AlwaysLow),
        ("builtin:agreement", Agreement),
        ("builtin:vote", Vote),
        ("builtin:heuristic", Heuristic),
    ]:
        detector = _load(text)
        assert type(detector) is kind
        assert detector.name == text  # the name a run folder and a board show
        assert asyncio.run(detector.aclose()) is None
    assert list(BUILTINS) == ["always-low", "agreement", "vote", "heuristic", "learned"]
    assert BUILTIN_OPTIONS == {"learned": ("train",)}
    assert BEST_BUILTIN == "builtin:heuristic"


class _FakeLearned:
    """Stands in for `harness.detectors.learned.Learned` (no scikit-learn import, no fit): records what it was given."""

    def __init__(self, train: str | None) -> None:
        self.train = train


def test_learned_gets_its_training_file_from_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``train=`` option reaches `Learned` as given; without it, `Learned` gets None (it then asks for a file)."""
    monkeypatch.setitem(sys.modules, "harness.detectors.learned", types.SimpleNamespace(Learned=_FakeLearned))
    assert _load("builtin:learned?train=dev.jsonl").train == "dev.jsonl"
    assert _load("builtin:learned").train is None
    assert _load("builtin:learned?train=").train == ""  # a blank value is kept (Learned refuses it by name)
    assert _load("builtin:learned?train=a+b.jsonl").train == "a+b.jsonl"  # a literal plus stays a plus
    assert _load("builtin:learned?train=a%20b.jsonl").train == "a b.jsonl"  # percent-decoded


def test_an_unknown_name_or_another_kind_lists_the_choices() -> None:
    with pytest.raises(DetectorLoadError) as raised:
        _load("builtin:nope")
    assert str(raised.value) == f"unknown built-in detector 'builtin:nope'; {CHOICES}"
    with pytest.raises(DetectorLoadError) as raised:
        load_builtin(parse_spec("http://127.0.0.1:9"))  # a URL names no built-in, even if its target were one
    assert str(raised.value) == f"unknown built-in detector 'http://127.0.0.1:9'; {CHOICES}"
    with pytest.raises(DetectorLoadError):
        load_builtin(parse_spec("llm:vote"))  # target "vote" is a built-in's name, but the kind is llm


def test_options_a_builtin_does_not_take_are_named() -> None:
    with pytest.raises(DetectorLoadError) as raised:
        _load("builtin:vote?z=1&a=2")
    assert str(raised.value) == f"built-in detector builtin:vote takes no options (got a, z); {CHOICES}"  # sorted
    with pytest.raises(DetectorLoadError) as raised:
        _load("builtin:learned?train=x&seed=1")
    assert str(raised.value) == f"built-in detector builtin:learned takes only train (got seed); {CHOICES}"


def test_options_must_be_pairs_and_given_once() -> None:
    with pytest.raises(DetectorLoadError) as raised:
        _load("builtin:learned?train")  # no "=": strict parsing refuses it
    assert str(raised.value) == "built-in detector 'builtin:learned?train': options must read ?key=value&key=value"
    with pytest.raises(DetectorLoadError) as raised:
        _load("builtin:learned?train=a&train=b")
    assert str(raised.value) == "built-in detector 'builtin:learned?train=a&train=b': an option is given twice"


def test_fingerprint_names_the_builtin_and_hashes_its_training_file(tmp_path: Path) -> None:
    assert builtin_fingerprint(parse_spec("builtin:vote")) == {
        "kind": "builtin",
        "name": "builtin:vote",
        "harness_version": __version__,
    }
    train = tmp_path / "dev.jsonl"
    train.write_bytes(b'{"id": "c1"}\n')
    digest = hashlib.sha256(b'{"id": "c1"}\n').hexdigest()
    assert builtin_fingerprint(parse_spec(f"builtin:learned?train={train}")) == {
        "kind": "builtin",
        "name": "builtin:learned",
        "harness_version": __version__,
        "train_sha256": digest,
    }
    # a file that is not there is not hashed (the load itself refuses it)
    missing = builtin_fingerprint(parse_spec(f"builtin:learned?train={tmp_path / 'gone.jsonl'}"))
    assert "train_sha256" not in missing and missing["name"] == "builtin:learned"
    # a directory is not a file either
    assert "train_sha256" not in builtin_fingerprint(parse_spec(f"builtin:learned?train={tmp_path}"))


# --- always-low ------------------------------------------------------------------------------------------------------


def test_always_low_is_low_with_score_zero() -> None:
    found = _assess(AlwaysLow(), ["7", "8", "9"])
    assert (found.risk, found.score) == ("low", 0.0)


# --- agreement ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "risk", "score", "share"),
    [
        # unanimous: share 1.0 -> low 0.15
        (["7", "7", "7"], "low", 0.15, 1.0),
        # exactly the threshold: 3 of 5 = 0.6 -> high, score 0.6 + (1 - 0.6) = 1.0
        (["7", "7", "7", "8", "9"], "high", 1.0, 0.6),
        # 2 of 3 = 0.6667 -> high, 0.6 + 1/3 = 0.93333 -> 0.9333 (4 places)
        (["7", "7", "8"], "high", 0.9333, 2 / 3),
        # 3 of 4 = 0.75 -> high, 0.6 + 0.25 = 0.85
        (["7", "7", "7", "8"], "high", 0.85, 0.75),
        # just under the threshold: 4 of 7 = 0.5714 -> medium 0.4
        (["7", "7", "7", "7", "8", "9", "10"], "medium", 0.4, 4 / 7),
        # no two alike: 1 of 3 -> medium 0.4
        (["7", "8", "9"], "medium", 0.4, 1 / 3),
    ],
)
def test_agreement_thresholds(texts: list[str], risk: str, score: float, share: float) -> None:
    found = _assess(Agreement(), texts)
    assert found.risk == risk
    assert found.score == score
    assert dict(found.extra) == {"agreement": pytest.approx(share)}


def test_agreement_reads_anchored_final_values_when_every_answer_has_one() -> None:
    """Every answer states a final value at an anchor (``A:``), so those values are counted. Three ``A: 12``: one
    value -> low 0.15. "A: 12, not 9", "A: 9", "A: 9": values "12, not 9", "9", "9" -> 2 of 3 -> high,
    0.6 + 1/3 = 0.9333; their last numbers (9, 9, 9) would have been unanimous -> low."""
    found = _assess(Agreement(), ["A: 12", "A: 12", "A: 12"])
    assert (found.risk, found.score) == ("low", 0.15)
    found = _assess(Agreement(), ["A: 12, not 9", "A: 9", "A: 9"])
    assert (found.risk, found.score) == ("high", 0.9333)
    assert dict(found.extra) == {"agreement": pytest.approx(2 / 3)}


def test_agreement_falls_back_to_claims_when_an_answer_has_no_anchor() -> None:
    """ "I think seven", "seven", "eight": no anchor (each read whole), so the claim share is used: "i" and "think"
    are stop words, so the claims are {seven}, {seven}, {eight}: 2 of 3 -> high 0.9333. Counting the whole texts as
    votes would give three distinct values, 1 of 3 -> medium."""
    found = _assess(Agreement(), ["I think seven", "seven", "eight"])
    assert (found.risk, found.score) == ("high", 0.9333)
    assert dict(found.extra) == {"agreement": pytest.approx(2 / 3)}


# --- vote -----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("counted", "risk", "score"),
    [
        (Votes(n=0, top=0, distinct=0, unread=0), "medium", 0.4),  # nothing read: no consensus
        (Votes(n=5, top=2, distinct=4, unread=0), "medium", 0.4),  # 2 of 5 = 40%: below 60%
        (Votes(n=5, top=3, distinct=3, unread=0), "high", 1.0),  # exactly 60%: 0.6 + (1 - 0.6) = 1.0
        (Votes(n=4, top=4, distinct=1, unread=0), "low", 0.15),  # unanimous
        (Votes(n=4, top=3, distinct=2, unread=0), "high", 0.85),  # 0.6 + (1 - 0.75)
        # 11/13 = 0.846153.. is rounded to 0.8462 first, then 0.6 + (1 - 0.8462) = 0.7538 (rounding to 5 places
        # first would give 0.84615 -> 0.75385 -> 0.7539)
        (Votes(n=13, top=11, distinct=3, unread=0), "high", 0.7538),
        # 21/32 = 0.65625 exactly -> 0.6562 (an exact half rounds to even) -> 0.6 + 0.3438 = 0.9438
        (Votes(n=32, top=21, distinct=5, unread=0), "high", 0.9438),
    ],
)
def test_vote_rule(counted: Votes, risk: str, score: float) -> None:
    assert vote_rule(counted) == (risk, score)


def test_vote_detector_reports_its_counts() -> None:
    """ "A: 12" x3, "A: 9", and a text with no value: 5 answers, top 3 (60%), 2 distinct values, 1 unread."""
    found = _assess(Vote(), ["A: 12", "A: 12", "A: 12", "A: 9", "word " * 100])
    assert (found.risk, found.score) == ("high", 1.0)
    assert dict(found.extra) == {"top_share": 0.6, "distinct": 2, "unread": 1}
    # top share is shown to 4 places: 2 of 3 -> 0.6667
    found = _assess(Vote(), ["A: 12", "A: 12", "A: 9"])
    assert dict(found.extra) == {"top_share": 0.6667, "distinct": 2, "unread": 0}


def test_a_builtin_with_two_options_lists_them_in_messages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only learned takes an option today; with a second one the lists read "train, seed" and "train=PATH&seed=PATH"."""
    monkeypatch.setitem(BUILTIN_OPTIONS, "learned", ("train", "seed"))
    with pytest.raises(DetectorLoadError) as raised:
        _load("builtin:learned?x=1")
    choices = CHOICES.replace("train=PATH", "train=PATH&seed=PATH")
    assert str(raised.value) == f"built-in detector builtin:learned takes only train, seed (got x); {choices}"


def test_fingerprint_of_a_malformed_spec_names_the_spec() -> None:
    with pytest.raises(DetectorLoadError) as raised:
        builtin_fingerprint(parse_spec("builtin:learned?train"))
    assert str(raised.value) == "built-in detector 'builtin:learned?train': options must read ?key=value&key=value"


def test_agreement_counts_claims_unless_every_answer_is_anchored() -> None:
    """Two anchored answers ("Final answer: 42") and three that are not ("Paris is the answer" twice, "Paris"):
    not every answer has an anchor, so claims are grouped: {42} twice, {paris} three times ("is", "the" and
    "answer" say nothing), 3 of 5 = 0.6: high, 0.6 + (1 - 0.6) = 1.0. The anchored votes alone would give the top
    value 2 of 5 (the two 42s; the others read whole as two texts): 0.4, medium."""
    texts = ["Final answer: 42", "Final answer: 42", "Paris is the answer", "Paris is the answer", "Paris"]
    found = _assess(Agreement(), texts)
    assert (found.risk, found.score) == ("high", 1.0)
    assert dict(found.extra) == {"agreement": pytest.approx(0.6)}
