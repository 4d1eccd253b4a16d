"""MMLU-Pro cases from graded records: the question a case shows is the one its panel answered."""

from __future__ import annotations

import orjson
import pytest

from fcb_datasets.realdata import mmlu_pro
from fcb_datasets.realdata.mmlu_pro import PANELS, REFERENCE, Record

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

QUESTION = "Which of these statements best describes the UK Constitution?"
RIGHT, WRONG = "It is uncodified and found in a number of sources", "It is based solely on common law"
OTHERS = [f"Distractor {i}" for i in range(8)]


def _revision(options: list[str], gold: str) -> str:
    return orjson.dumps([QUESTION, options, gold]).decode()


def test_a_case_shows_the_options_in_the_order_its_panel_saw_them() -> None:
    # two revisions of question 7: the panels saw the right option as H; one other model saw it as E
    seen = [*OTHERS[:4], WRONG, *OTHERS[4:6], RIGHT, *OTHERS[6:]]  # A-D others, E wrong, H right
    other = [*OTHERS[:4], RIGHT, *OTHERS[4:6], WRONG, *OTHERS[6:]]  # E right, H wrong
    graded: dict[str, dict[int, Record]] = {
        m: {7: Record("The answer is (H).", "H", "agrees", "H", _revision(seen, "H"))}
        for m in {m for p in PANELS for m in p.models} | set(REFERENCE)
    }
    graded["AAA-sorted-first"] = {7: Record("The answer is (E).", "E", "agrees", "E", _revision(other, "E"))}
    made = list(mmlu_pro.cases(graded, seed=0))
    assert len(made) == len(PANELS)  # every panel answered H, the gold: one agreement case each
    for _item, _question, case in made:
        assert case.category == "genuine_agreement_correct"
        shown = case.case["question"]
        assert f"H. {RIGHT}" in shown and f"E. {WRONG}" in shown, shown
        assert case.case["ground_truth"] == f"(H) {RIGHT}"
        assert all(a["correct"] for a in case.case["answers"])


def test_a_question_repeated_under_another_id_is_one_item_even_when_a_copy_differs_by_a_space() -> None:
    options = [*OTHERS[:7], RIGHT, *OTHERS[7:], WRONG]
    graded: dict[str, dict[int, Record]] = {
        m: {q: Record("The answer is (H).", "H", "agrees", "H", _revision(options, "H")) for q in (7, 8)}
        for m in {m for p in PANELS for m in p.models} | set(REFERENCE)
    }
    spaced = orjson.dumps([QUESTION + " ", options, "H"]).decode()
    graded["zz-one-model"] = {8: Record("The answer is (H).", "H", "agrees", "H", spaced)}
    assert {item for item, _q, _c in mmlu_pro.cases(graded, seed=0)} == {"mmlu-pro:7"}
