"""`builtin:learned` (harness/detectors/learned.py) on training files written for these tests: what it reads from the
file (features, labels, source items, provenance), the files it refuses and why, the model it fits (held to the same
scikit-learn pipeline built here), and the risk and score it returns (worked by hand on a stand-in model)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from harness.cases.reader import scan
from harness.cases.request import build_request
from harness.detectors.heuristic import features
from harness.detectors.learned import TRAIN_HINT, Learned, read_training_set, source_item
from harness.errors import DetectorLoadError

HINT = "name a dev cases file with builtin:learned?train=path/to/dev.jsonl (never the file being evaluated)"


def _case(n: int, risk: str, texts: list[str], source: Any = "original") -> dict[str, Any]:
    """A valid case on "What is 3 + 4?" (truth 7) whose labels follow from its answers."""
    category, majority = {
        "low": ("genuine_agreement_correct", True),
        "high": ("lone_correct_dissenter", False),
        "medium": ("genuine_disagreement", None),
    }[risk]
    answers = [{"agent_id": f"a{k}", "text": t, "correct": t == "7"} for k, t in enumerate(texts)]
    return {
        "id": f"FCB-{n:04d}",
        "category": category,
        "question": "What is 3 + 4?",
        "answers": answers,
        "ground_truth": "7",
        "expected_risk": risk,
        "majority_correct": majority,
        "rationale": "written for the tests",
        "source": source,
        "tags": [],
    }


LOW = [["7", "7", "7"], ["7", "7", "7", "7"]]  # independent unanimity
HIGH = [["8", "8", "7"], ["8", "8", "8", "7"], ["9", "9", "7"]]  # a majority against one dissenter


def _write(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def train(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two low cases and three high ones (imbalanced on purpose: the class weights matter)."""
    cases = [_case(i + 1, "low", t) for i, t in enumerate(LOW)] + [_case(i + 3, "high", t) for i, t in enumerate(HIGH)]
    return _write(tmp_path_factory.mktemp("learned") / "dev.jsonl", cases)


@pytest.fixture(scope="module")
def learned(train: Path) -> Learned:
    return Learned(str(train))


def _request(texts: list[str]) -> dict[str, Any]:
    return {"task": "What is 3 + 4?", "answers": [{"agent_id": f"a{i}", "text": t} for i, t in enumerate(texts)]}


# --- what the training file gives ------------------------------------------------------------------------------------


def test_source_item() -> None:
    assert source_item({"id": "FCB-0001", "source": "original"}) == "FCB-0001"
    assert source_item({"id": "FCB-0002", "source": {"dataset": "gsm8k", "item": "q7"}}) == "gsm8k:q7"
    assert source_item({"id": 12}) == "12"


def test_training_set_rows_labels_and_items(tmp_path: Path) -> None:
    sourced = {
        "dataset": "gsm8k",
        "license": "MIT",
        "citation": "Cobbe et al. 2021",
        "url": "https://github.com/openai/grade-school-math",
        "item": "q1",
    }
    cases = [_case(1, "low", LOW[0]), _case(2, "high", HIGH[0], sourced), _case(3, "high", HIGH[1], sourced)]
    path = _write(tmp_path / "dev.jsonl", cases)
    data = read_training_set(str(path))
    assert data.path == path
    assert data.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert data.labels == ["low", "high", "high"]
    assert data.items == {"FCB-0001", "gsm8k:q1"}  # two cases of one source item count once
    first = features(build_request(cases[0]))  # type: ignore[arg-type]
    assert data.names == list(first)
    assert data.rows[0] == list(first.values())
    assert data.rows[2] == list(features(build_request(cases[2])).values())  # type: ignore[arg-type]
    assert len(data.rows) == 3


def test_learned_exposes_what_it_was_trained_on(learned: Learned, train: Path) -> None:
    assert learned.name == "builtin:learned"
    assert learned.train_path == str(train.resolve())
    assert learned.train_sha256 == hashlib.sha256(train.read_bytes()).hexdigest()
    assert learned.train_source_items == frozenset({"FCB-0001", "FCB-0002", "FCB-0003", "FCB-0004", "FCB-0005"})
    assert learned.train_cases == 5
    assert learned.feature_names == tuple(features(_request(["7"])))  # type: ignore[arg-type]


# --- files it refuses -------------------------------------------------------------------------------------------------


def test_a_training_file_must_be_named(tmp_path: Path) -> None:
    assert TRAIN_HINT == HINT
    for train in (None, "", "   "):
        with pytest.raises(DetectorLoadError) as raised:
            Learned(train)
        assert str(raised.value) == f"builtin:learned needs a training file: {HINT}"
    for missing in (tmp_path / "missing.jsonl", tmp_path):  # absent, or a folder
        with pytest.raises(DetectorLoadError) as raised:
            Learned(str(missing))
        assert (
            str(raised.value)
            == f"builtin:learned: training file {str(missing)!r} does not exist or is not a file; {HINT}"
        )


def test_an_invalid_training_file_shows_its_first_three_problems(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n[1\n{\n42\n", encoding="utf-8")
    problems = scan(path).errors
    assert len(problems) == 4
    with pytest.raises(DetectorLoadError) as raised:
        Learned(str(path))
    shown = f"{problems[0]}; {problems[1]}; {problems[2]}"
    assert str(raised.value) == f"builtin:learned: training file {str(path)!r} is not a valid cases file: {shown}"
    # one bad line among good ones refuses the whole file
    good = [_case(1, "low", LOW[0]), _case(2, "high", HIGH[0])]
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(json.dumps(c) + "\n" for c in good) + "not json\n", encoding="utf-8")
    with pytest.raises(DetectorLoadError, match="is not a valid cases file"):
        Learned(str(mixed))


def test_an_empty_training_file_has_no_case(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(DetectorLoadError) as raised:
        Learned(str(path))
    assert str(raised.value) == f"builtin:learned: training file {str(path)!r} is not a valid cases file: no case in it"


def test_a_training_file_needs_two_risk_levels(tmp_path: Path) -> None:
    path = _write(tmp_path / "one.jsonl", [_case(1, "low", LOW[0]), _case(2, "low", LOW[1])])
    with pytest.raises(DetectorLoadError) as raised:
        Learned(str(path))
    assert str(raised.value) == f"builtin:learned: training file {str(path)!r} needs cases of at least two risk levels"
    two = _write(tmp_path / "two.jsonl", [_case(1, "low", LOW[0]), _case(2, "high", HIGH[0])])
    assert Learned(str(two)).train_cases == 2  # exactly two levels is enough


# --- the model and what it returns --------------------------------------------------------------------------------


def _reference(train: Path) -> tuple[Any, Any, list[str]]:
    """The documented model, built here: standardised features into a class-balanced logistic regression, C = 0.3."""
    data = read_training_set(str(train))
    x = np.asarray(data.rows, dtype=float)
    scaler = StandardScaler().fit(x)
    model = LogisticRegression(C=0.3, class_weight="balanced", max_iter=5000).fit(scaler.transform(x), data.labels)
    return scaler, model, data.names


def test_the_model_is_the_documented_pipeline(learned: Learned, train: Path) -> None:
    """Its probabilities for a training request and a new one match the reference pipeline's to the 6 places the
    score is rounded to; the score is the probability of high."""
    scaler, model, names = _reference(train)
    assert [str(c) for c in model.classes_] == ["high", "low"]
    for texts in (["7", "7", "7"], ["8", "8", "7"], ["5", "5", "5", "5", "4"], ["1", "2"]):
        f = features(_request(texts))  # type: ignore[arg-type]
        proba = model.predict_proba(scaler.transform(np.asarray([[f[n] for n in names]], dtype=float)))[0]
        risk, score = learned.predict(_request(texts))  # type: ignore[arg-type]
        assert risk == ("high" if proba[0] > proba[1] else "low")
        assert score == round(float(proba[0]), 6)


def test_clear_cases_get_their_class(learned: Learned) -> None:
    """Unanimity was always low in training, a lone dissenter always high: so they are read here."""
    low = learned.predict(_request(["7", "7", "7"]))  # type: ignore[arg-type]
    high = learned.predict(_request(["8", "8", "7"]))  # type: ignore[arg-type]
    assert low[0] == "low" and low[1] < 0.5
    assert high[0] == "high" and high[1] > 0.5


def test_assess_shows_the_training_hash(learned: Learned, train: Path) -> None:
    found = asyncio.run(learned.assess(_request(["8", "8", "7"])))  # type: ignore[arg-type]
    assert (found.risk, found.score) == learned.predict(_request(["8", "8", "7"]))  # type: ignore[arg-type]
    assert dict(found.extra) == {"train_sha256": hashlib.sha256(train.read_bytes()).hexdigest()[:12]}
    assert asyncio.run(learned.aclose()) is None


class _Stub:
    """A stand-in fitted model: fixed classes and probabilities, so that the risk and score can be worked by hand."""

    def __init__(self, classes: list[str], proba: list[float]) -> None:
        self.classes_ = np.asarray(classes)
        self.proba = proba

    def predict_proba(self, x: Any) -> Any:
        assert x.shape == (1, len(self.names))
        return np.asarray([self.proba])

    names: tuple[str, ...] = ()


def _with(learned: Learned, classes: list[str], proba: list[float]) -> Learned:
    stub = _Stub(classes, proba)
    stub.names = learned.feature_names
    clone = object.__new__(Learned)
    clone.feature_names = learned.feature_names
    clone.model = stub  # type: ignore[assignment]
    clone.train_sha256 = learned.train_sha256
    return clone


@pytest.mark.parametrize(
    ("classes", "proba", "risk", "score"),
    [
        (["high", "low", "medium"], [0.2, 0.5, 0.3], "low", 0.2),  # the most probable class; score = P(high)
        (["high", "low", "medium"], [0.1234567, 0.3, 0.5765433], "medium", 0.123457),  # rounded to 6 places
        (["low", "medium", "high"], [0.1, 0.2, 0.7], "high", 0.7),  # high found by name, not by place
        (["low", "medium"], [0.4, 0.6], "medium", 0.0),  # trained without high: P(high) = 0
        (["high", "low"], [0.5, 0.5], "high", 0.5),  # a tie goes to the first class
    ],
)
def test_risk_is_the_most_probable_class_and_score_the_chance_of_high(
    learned: Learned, classes: list[str], proba: list[float], risk: str, score: float
) -> None:
    assert _with(learned, classes, proba).predict(_request(["7"])) == (risk, score)  # type: ignore[arg-type]


def test_an_unknown_class_is_refused(learned: Learned) -> None:
    with pytest.raises(DetectorLoadError) as raised:
        _with(learned, ["high", "bogus"], [0.3, 0.7]).predict(_request(["7"]))  # type: ignore[arg-type]
    assert str(raised.value) == "builtin:learned: the training file has an unknown risk 'bogus'"
