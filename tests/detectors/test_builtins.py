"""The built-in detectors: `features` on hand-written requests, the heuristic's rule, and the learned model."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cases.request import build_request
from harness.detectors import load_detector
from harness.detectors.heuristic import arithmetic_checks, calculate, features
from harness.errors import DetectorLoadError
from harness.run.api import evaluate
from harness.types import Prediction

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

ROOT = Path(__file__).resolve().parents[2]
EMBEDDED = ROOT / "harness" / "data" / "embedded_cases.jsonl"


def req(*texts: str, task: str = "What is the answer?", evidence: list[str] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {
        "task": task,
        "answers": [{"agent_id": f"agent-{i}", "text": t} for i, t in enumerate(texts, start=1)],
    }
    if evidence:
        request["evidence"] = evidence
    return request


def assess(detector: Any, request: dict[str, Any]) -> Prediction:
    return asyncio.run(detector.assess(request))


# --- features -------------------------------------------------------------------------------------------------


def test_one_wrong_calculation_is_one_mismatch() -> None:
    f = features(req("12 * 3 = 36", "12 * 3 = 35"))
    assert (f["arith_checked"], f["arith_mismatches"], f["arith_wrong_share"]) == (2.0, 1.0, 0.5)


def test_gsm8k_annotations_are_rechecked() -> None:
    good = "She has 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = $<<9*2=18>>18.\nA: 18"
    bad = "She has 16 - 3 = <<16-3=13>>13 eggs.\nShe makes 13 * 2 = $<<13*2=24>>24.\nA: 24"
    assert arithmetic_checks(good) == (2, 0)  # the <<...>> annotations (a chain ending "= <<" has no result)
    assert arithmetic_checks(bad) == (2, 1)
    f = features(req(good, good, bad))
    assert f["majority_arith_wrong"] == 0.0 and f["minority_arith_wrong"] == 1.0


def test_arithmetic_is_calculated_safely() -> None:
    assert calculate("6 + 5 x 5") == 31.0  # x and × between numbers are multiplication; precedence is kept
    assert calculate("$1,200 / 4") == 300.0
    assert calculate("__import__('os').system('true')") is None
    assert calculate("2 ** 10") is None  # only + - * /
    assert calculate("1 / 0") is None
    assert arithmetic_checks("10 / 3 = 3.33 and 7 * 1.5 = 10.5") == (2, 0)  # rounding to the written decimals
    assert arithmetic_checks("Each takes .5*10=<<.5*10=5.0>>5 hours") == (1, 0)  # .5 keeps its decimal point
    assert arithmetic_checks("So x = 3 * 4 = 12.") == (1, 0)  # "= 3 * 4" rewrites x; only "3 * 4 = 12" is a result
    assert arithmetic_checks("66 fish * 1/3 = 22 fish") == (0, 0)  # the run "* 1/3" lost its first operand to a unit


def test_three_identical_answers_agree_fully() -> None:
    f = features(req("The answer is 42.", "The answer is 42.", "The answer is 42."))
    assert f["agreement"] == 1.0 and f["unanimous"] == 1.0 and f["n_groups"] == 1.0
    assert f["max_jaccard"] == 1.0 and f["near_duplicate_share"] == 1.0
    assert f["copy_phrase_share"] == 0.0


def test_numbers_compare_as_numbers() -> None:
    f = features(req("The total is 1,000.", "1000", "It comes to 1000.0 dollars."))
    assert f["agreement"] == 1.0 and f["numeric_share"] == 1.0


def test_dates_and_yes_no_are_not_confused() -> None:
    assert features(req("It is 2019-03-07.", "It is 2019-04-07."))["n_groups"] == 2.0  # not "both end in 7"
    assert features(req("Yes, it is allowed.", "No, it is not allowed."))["n_groups"] == 2.0


def test_one_dissenter() -> None:
    f = features(req("7", "7", "7", "8"))
    assert (f["agreement"], f["largest_group"], f["n_groups"], f["one_dissenter"], f["has_majority"]) == (
        0.75,
        3.0,
        2.0,
        1.0,
        1.0,
    )
    assert f["second_share"] == 0.25


def test_no_majority() -> None:
    f = features(req("7", "8", "9"))
    assert f["has_majority"] == 0.0 and f["distinct_ratio"] == 1.0 and f["one_dissenter"] == 0.0


def test_a_copied_answer_is_flagged() -> None:
    f = features(req("Paris.", "I agree with the previous answer: Paris.", "Lyon."))
    assert f["copy_phrase_share"] == pytest.approx(1 / 3)
    assert f["later_copy_share"] == 0.5  # of the two answers after the first, one repeats an earlier claim


def test_long_shared_passage_is_found() -> None:
    passage = "first we take the seven boxes then we split every box into three equal piles of marbles"
    f = features(req(f"{passage} so 21.", f"Well, {passage} giving 21.", "I count 20 piles."))
    assert f["max_shared_ngram"] == 17.0  # the whole passage, which the task does not contain
    assert f["shared_ngram_ratio"] == 17 / 19  # over the shorter answer of the pair: the passage, "so", "21"


def test_a_note_in_the_question_that_the_answers_repeat() -> None:
    task = "Note from the team: the capital of Australia is Sydney.\n\nWhat is the capital of Australia?"
    f = features(req("Per the note, Sydney.", "Sydney.", "It is Sydney.", task=task))
    assert f["has_premise"] == 1.0 and f["premise_majority_support"] == 1.0
    assert f["note_mention_share"] == pytest.approx(1 / 3)
    plain = features(req("Sydney.", "Sydney.", task="What is the capital of Australia?"))
    assert plain["has_premise"] == 0.0 and plain["premise_majority_support"] == 0.0


def test_evidence_for_the_dissenter() -> None:
    f = features(
        req(
            "Sydney.",
            "It is Sydney.",
            "Sydney.",
            "Canberra.",
            task="What is the capital of Australia?",
            evidence=["Canberra is the capital of Australia."],
        )
    )
    assert f["has_evidence"] == 1.0
    assert (f["evidence_majority_support"], f["evidence_minority_support"], f["evidence_margin"]) == (0.0, 1.0, -1.0)
    assert f["evidence_silent"] == 1.0


def test_hedges_dissent_and_lengths() -> None:
    f = features(req("Maybe 5.", "I think it is 5.", "5.", "Actually it is 6, because 2 * 3 = 6."))
    assert f["hedge_share"] == 0.5 and f["majority_hedge_share"] == pytest.approx(2 / 3)
    assert f["minority_dissent"] == 1.0 and f["minority_reason_share"] == 1.0
    assert f["mean_words"] == pytest.approx((2 + 5 + 1 + 8) / 4)


def test_feature_names_are_fixed_and_values_finite() -> None:
    a = features(req("7", "8"))
    b = features(req("x " * 300, "Per the note, 12 * 3 = 36.", "y", task="Hint: it is 36.\nWhat?", evidence=["36"]))
    assert list(a) == list(b)
    assert all(isinstance(v, float) and math.isfinite(v) for v in (*a.values(), *b.values()))


def test_features_of_the_largest_request_grow_linearly_with_its_size() -> None:
    # a guard against a quadratic turn, counted in steps rather than seconds: the features of a request a quarter
    # the size take about a quarter of the Python work (function calls profiled), not a sixteenth
    import cProfile
    import pstats

    huge = "1 + 1 = 2 = " * 1400  # 16,000 characters of chained arithmetic, the most an answer may hold

    def calls(n_chars: int) -> int:
        request = req(*[huge[:n_chars]] * 16, task="q " * (n_chars // 4))
        profile = cProfile.Profile()
        profile.runcall(features, request)
        return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]

    small, large = calls(4000), calls(16000)
    assert large < 8 * small  # linear work gives about 4x; a quadratic turn would give about 16x


# --- the heuristic --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def heuristic() -> Any:
    return load_detector("builtin:heuristic")


def test_heuristic_independent_unanimity_is_low(heuristic: Any) -> None:
    p = assess(heuristic, req("Paris is the capital of France.", "The capital is Paris.", "Paris."))
    assert p.risk == "low" and p.score is not None and p.score < 0.5


def test_heuristic_no_majority_is_medium(heuristic: Any) -> None:
    assert assess(heuristic, req("7", "8", "9")).risk == "medium"


def test_heuristic_majority_with_dissenter_is_high(heuristic: Any) -> None:
    p = assess(heuristic, req("7", "7", "7", "8"))
    assert p.risk == "high" and p.score is not None and p.score >= 0.6


def test_heuristic_echo_with_error_signs_is_high(heuristic: Any) -> None:
    first = "Possibly Rio de Janeiro, though I have not double-checked."
    p = assess(heuristic, req(first, "I agree with the previous answer: Rio de Janeiro.", "Same as above, Rio."))
    assert p.risk == "high" and "copying" in p.extra["signals"]


def test_heuristic_copied_consensus_without_error_signs_is_medium(heuristic: Any) -> None:
    p = assess(heuristic, req("Austin.", "I agree with the previous answer: Austin.", "Agreeing with it: Austin."))
    assert p.risk == "medium"


def test_heuristic_wrong_arithmetic_in_the_majority_is_high(heuristic: Any) -> None:
    assert assess(heuristic, req("6 + 5 * 5 = 55", "So 6 + 5 * 5 = 55.", "6 + 5 * 5 = 55")).risk == "high"


def test_heuristic_evidence_decides(heuristic: Any) -> None:
    task = "What is the capital of Australia?"
    against = req("Sydney.", "Sydney.", "Sydney.", "Canberra.", task=task, evidence=["Canberra is the capital."])
    assert assess(heuristic, against).risk == "high"
    supports = req("Canberra.", "Canberra.", "Canberra.", "Sydney.", task=task, evidence=["Canberra is the capital."])
    assert assess(heuristic, supports).risk == "low"


# --- the learned model ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The embedded set split by case number: even ids to train, odd ids held out."""
    lines = EMBEDDED.read_text(encoding="utf-8").splitlines(keepends=True)
    folder = tmp_path_factory.mktemp("halves")
    even, odd = folder / "even.jsonl", folder / "odd.jsonl"
    even.write_text("".join(x for x in lines if int(json.loads(x)["id"][4:]) % 2 == 0), encoding="utf-8")
    odd.write_text("".join(x for x in lines if int(json.loads(x)["id"][4:]) % 2 == 1), encoding="utf-8")
    return even, odd


@pytest.fixture(scope="module")
def learned(halves: tuple[Path, Path]) -> Any:
    return load_detector(f"builtin:learned?train={halves[0]}")


def _ids(path: Path) -> set[str]:
    return {json.loads(x)["id"] for x in path.read_text(encoding="utf-8").splitlines()}


def test_learned_is_trained_on_the_named_file(learned: Any, halves: tuple[Path, Path]) -> None:
    even, _ = halves
    assert learned.name == "builtin:learned" and learned.train_cases == 120
    assert learned.train_path == str(even.resolve())
    assert learned.train_sha256 == hashlib.sha256(even.read_bytes()).hexdigest()
    assert learned.train_source_items == frozenset(_ids(even))  # original cases count by id


def test_learned_source_items_of_a_sourced_file(tmp_path: Path, halves: tuple[Path, Path]) -> None:
    cases = [json.loads(x) for x in halves[0].read_text(encoding="utf-8").splitlines()]
    for n, case in enumerate(cases[:10]):
        case["source"] = {
            "dataset": "gsm8k",
            "license": "MIT",
            "citation": "Cobbe et al. 2021",
            "url": "https://github.com/openai/grade-school-math",
            "item": f"q{n // 2}",
        }
    path = tmp_path / "sourced.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    items = load_detector(f"builtin:learned?train={path}").train_source_items  # type: ignore[attr-defined]
    assert {i for i in items if i.startswith("gsm8k:")} == {f"gsm8k:q{k}" for k in range(5)}
    assert {i for i in items if not i.startswith("gsm8k:")} == {c["id"] for c in cases[10:]}


def test_learned_refuses_a_bad_training_file(tmp_path: Path) -> None:
    with pytest.raises(DetectorLoadError, match=r"train=path/to/dev\.jsonl"):
        load_detector("builtin:learned")
    with pytest.raises(DetectorLoadError, match="does not exist"):
        load_detector(f"builtin:learned?train={tmp_path / 'missing.jsonl'}")
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text("not json\n", encoding="utf-8")
    with pytest.raises(DetectorLoadError, match="not a valid cases file"):
        load_detector(f"builtin:learned?train={garbage}")
    with pytest.raises(DetectorLoadError, match="twice"):
        load_detector(f"builtin:learned?train={garbage}&train={garbage}")
    with pytest.raises(DetectorLoadError, match="takes only train"):
        load_detector(f"builtin:learned?train={garbage}&seed=1")


def test_builtin_specs_list_every_builtin() -> None:
    with pytest.raises(DetectorLoadError, match=r"builtin:heuristic, builtin:learned\?train=PATH"):
        load_detector("builtin:nope")
    with pytest.raises(DetectorLoadError, match="takes no options"):
        load_detector("builtin:agreement?train=x")


def test_learned_is_deterministic(learned: Any, halves: tuple[Path, Path]) -> None:
    even, odd = halves
    again = load_detector(f"builtin:learned?train={even}")
    requests = [dict(build_request(json.loads(x))) for x in odd.read_text(encoding="utf-8").splitlines()[:40]]
    first = [assess(learned, r) for r in requests]
    second = [assess(again, r) for r in requests]
    assert [(p.risk, p.score) for p in first] == [(p.risk, p.score) for p in second]
    assert all(p.score is not None and 0.0 <= p.score <= 1.0 for p in first)


def test_learned_beats_always_low_on_held_out_cases(halves: tuple[Path, Path], tmp_path: Path) -> None:
    even, odd = halves
    learned = evaluate(str(odd), f"builtin:learned?train={even}", out=str(tmp_path / "learned"), n_boot=50)
    floor = evaluate(str(odd), "builtin:always-low", out=str(tmp_path / "floor"), n_boot=50)
    assert learned.complete and learned.document["metrics"]["n_cases"] == 120
    assert learned.document["metrics"]["macro_f1"] > floor.document["metrics"]["macro_f1"] + 0.3


def test_scikit_learn_is_loaded_only_by_the_learned_detector() -> None:
    code = (
        "import sys, harness.cli\n"
        "from harness.detectors import load_detector\n"
        "load_detector('builtin:agreement'); load_detector('builtin:heuristic')\n"
        "assert 'sklearn' not in sys.modules, 'sklearn imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)
