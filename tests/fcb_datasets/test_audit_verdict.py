"""The audit's verdict (fcb_datasets/audit/verdict.py): which figure crosses which line, held at every boundary.

Every input is a small hand-made document section; each test names the line, puts a figure exactly on it (no
finding: every line but the warnings' is "over", strictly) and one step over it (a finding), and reads the message a
user sees back against the figure it shows (issue 46: no unit test reached this module, and the risk macro-F1 line
went unchecked).
"""

from __future__ import annotations

from typing import Any

import pytest

from fcb_datasets.audit.verdict import CATEGORY_F1_WARNING, verdict
from fcb_datasets.audit.view import Settings

SETTINGS = Settings(max_surface_f1=0.45, max_shape_auc=0.60, max_structure_auc=0.60)


def pairs(n: int = 0) -> dict[str, Any]:
    return {"pairs": n, "cases": 2 * n, "listed": []}


def pairset(**counts: int) -> dict[str, Any]:
    kinds = ("across_files", "within_train_different_source", "within_test_different_source",
             "within_train_same_source", "within_test_same_source")  # fmt: skip
    return {k: pairs(counts.get(k, 0)) for k in kinds}


def overlap(shared: int = 0, shared_test: int = 0, identical: Any = None, near: Any = None, reuse: Any = None) -> Any:
    return {
        "shared_source_items": {"count": shared, "test_cases": shared_test, "listed": []},
        "identical_questions": identical or pairset(),
        "near_duplicate_questions": near or pairset(),
        "answer_reuse": reuse or pairset(),
        "thresholds": {"near_duplicate_cosine": 0.8, "answer_reuse_share": 0.5},
    }


def baseline(name: str, f1: float = 0.2, risk_f1: float = 0.2, per_category: dict[str, float] | None = None) -> Any:
    return {"name": name, "description": "", "params": {}, "cv_macro_f1": None, "macro_f1": f1, "ci": [0.0, 1.0],
            "risk_macro_f1": risk_f1, "risk_ci": [0.0, 1.0], "per_category": per_category or {}}  # fmt: skip


def surface(*baselines: Any) -> Any:
    return {"baselines": list(baselines), "test_cases": 10, "train_cases": 10}


def rules(listed: list[Any] | None = None, by_target: dict[str, Any] | None = None) -> Any:
    return {"rules": listed or [], "total": 0, "by_target": by_target or {}, "min_cases": 5, "top_ngrams": {},
            "thresholds": {"precision": 0.95, "recall": 0.3, "listed_per_target": 20}}  # fmt: skip


def shape(origin: list[Any] | None = None, truth: list[Any] | None = None, pos: list[Any] | None = None) -> Any:
    return {"origin": origin or [], "truth_inside": truth or [], "positions": pos or [],
            "thresholds": {"max_shape_auc": 0.6, "origin_auc_warning": 0.9, "position_effect": 0.2,
                           "position_z": 3.29, "min_side": 20}}  # fmt: skip


def structure(*baselines: Any, line: float = 0.6) -> Any:
    return {"baselines": list(baselines), "max_structure_auc": line, "unread": {}}


def run(surf: Any = None, rul: Any = None, shp: Any = None, struct: Any = None, ov: Any = None,
        settings: Settings = SETTINGS) -> Any:  # fmt: skip
    return verdict(surf or surface(), rul or rules(), shp or shape(), struct or structure(), ov or overlap(), settings)


def messages(found: Any, part: str) -> list[tuple[str, str]]:
    return [(f["kind"], f["message"]) for f in found[part]]


def test_nothing_over_any_line_passes_with_no_finding_and_no_warning() -> None:
    found = run()
    assert found == {"status": "pass", "findings": [], "warnings": []}


# --- surface baselines: category macro-F1 and risk macro-F1, each strictly over --max-surface-f1 ---------------------


def test_a_category_macro_f1_on_the_line_passes_and_one_step_over_fails() -> None:
    # the line is 0.45: 0.45 is not over it; 0.451 is, and the message shows 0.451 and the line 0.45
    assert run(surface(baseline("TF-IDF answers", f1=0.45)))["status"] == "pass"
    found = run(surface(baseline("TF-IDF answers", f1=0.451)))
    assert found["status"] == "fail"
    assert messages(found, "findings") == [
        ("surface_baseline", "TF-IDF answers: category macro-F1 0.451 on TEST exceeds --max-surface-f1 0.45")
    ]


def test_a_risk_macro_f1_on_the_line_passes_and_one_step_over_fails() -> None:
    # the risk line is the same --max-surface-f1: risk 0.45 passes, 0.4501 (shown 0.450) fails on its own
    assert run(surface(baseline("answer count only", f1=0.1, risk_f1=0.45)))["status"] == "pass"
    found = run(surface(baseline("answer count only", f1=0.1, risk_f1=0.4501)))
    assert messages(found, "findings") == [
        ("surface_baseline", "answer count only: risk macro-F1 0.450 on TEST exceeds --max-surface-f1 0.45")
    ]


def test_both_figures_over_give_two_findings_category_first() -> None:
    found = run(surface(baseline("all surface features", f1=0.8, risk_f1=0.7)))
    assert [m for _, m in messages(found, "findings")] == [
        "all surface features: category macro-F1 0.800 on TEST exceeds --max-surface-f1 0.45",
        "all surface features: risk macro-F1 0.700 on TEST exceeds --max-surface-f1 0.45",
    ]


def test_the_line_is_read_from_the_settings() -> None:
    # a line of 0.85: 0.8 is under it; the message writes the line with two decimals
    assert run(surface(baseline("x", f1=0.8, risk_f1=0.8)), settings=Settings(max_surface_f1=0.85))["status"] == "pass"
    found = run(surface(baseline("x", f1=0.86)), settings=Settings(max_surface_f1=0.85))
    assert messages(found, "findings") == [("surface_baseline", "x: category macro-F1 0.860 on TEST exceeds "
                                            "--max-surface-f1 0.85")]  # fmt: skip


def test_the_majority_class_is_never_a_finding_nor_a_warning() -> None:
    # always one category: on a TEST of one category its macro-F1 can be 1; it is the floor, not a shortcut
    found = run(surface(baseline("majority class", f1=1.0, risk_f1=1.0, per_category={"echo_cascade": 1.0})))
    assert found == {"status": "pass", "findings": [], "warnings": []}
    # and skipping it does not stop the next baseline being read
    found = run(surface(baseline("majority class", f1=1.0), baseline("TF-IDF question", f1=0.5)))
    assert [m for _, m in messages(found, "findings")] == [
        "TF-IDF question: category macro-F1 0.500 on TEST exceeds --max-surface-f1 0.45"
    ]


def test_a_category_f1_warns_from_exactly_0_9() -> None:
    assert CATEGORY_F1_WARNING == 0.9
    # 0.9 warns (at least), 0.8999 does not; both baselines stay under the macro line, so the status is pass
    found = run(surface(baseline("TF-IDF answers", per_category={"echo_cascade": 0.9, "genuine_disagreement": 0.8999})))
    assert found["status"] == "pass" and found["findings"] == []
    assert messages(found, "warnings") == [("surface_category", "TF-IDF answers: F1 0.900 for echo_cascade on TEST")]


# --- exact rules: every target with rules is a finding, its best rule shown -------------------------------------------


def test_every_rule_target_is_a_finding_with_its_first_rule() -> None:
    first = {"kind": "answer prefix", "text": "as the", "target": ["echo_cascade"], "precision": 0.96, "recall": 0.5,
             "in_target": 24, "with_feature": 25}  # fmt: skip
    other = {**first, "text": "reviewer", "precision": 1.0, "recall": 0.4}
    pair = {"kind": "answer count", "text": "answers = 7", "target": ["echo_cascade", "majority_wrong_fact"],
            "precision": 1.0, "recall": 0.3, "in_target": 6, "with_feature": 6}  # fmt: skip
    by_target = {"echo_cascade": {"distinct_rules": 2, "features": 5},
                 "echo_cascade + majority_wrong_fact": {"distinct_rules": 1, "features": 1}}  # fmt: skip
    found = run(rul=rules([first, other, pair], by_target))
    assert found["status"] == "fail"
    assert messages(found, "findings") == [
        ("exact_rule", 'echo_cascade: 2 exact rule(s), e.g. answer prefix "as the" (precision 0.96, recall 0.50, '
                       "24 of 25 cases)"),
        ("exact_rule", 'echo_cascade + majority_wrong_fact: 1 exact rule(s), e.g. answer count "answers = 7" '
                       "(precision 1.00, recall 0.30, 6 of 6 cases)"),
    ]  # fmt: skip


# --- shape: origin rules and classifier, truth inside a shape, answer position ----------------------------------------


def origin(auc: float | None, rule_list: list[Any] | None = None) -> Any:
    return {"source": "mmlu", "constructed": 30, "real": 40, "rules": rule_list or [], "auc": auc}


def test_an_origin_rule_is_a_finding() -> None:
    rule = {"kind": "question n-gram", "text": "which of", "target": ["constructed"], "precision": 0.96,
            "recall": 0.64}  # fmt: skip
    found = run(shp=shape(origin=[origin(None, [rule])]))
    assert messages(found, "findings") == [
        (
            "origin_rule",
            'mmlu: question n-gram "which of" picks out its constructed cases (precision 0.96, recall 0.64)',
        )
    ]
    assert found["warnings"] == []


def test_an_origin_classifier_warns_from_exactly_its_line() -> None:
    # origin_auc_warning 0.9: 0.9 warns (at least), 0.8999 does not, no AUC (too few cases) does not
    assert run(shp=shape(origin=[origin(0.8999), origin(None)]))["warnings"] == []
    found = run(shp=shape(origin=[origin(0.9)]))
    assert found["status"] == "pass"
    assert messages(found, "warnings") == [
        ("origin_classifier", "mmlu: a TF-IDF classifier tells constructed cases from real ones at ROC-AUC 0.900 "
                              "(what that buys: the source-and-origin baseline and the truth-inside check)")
    ]  # fmt: skip


def test_the_origin_warning_line_is_read_from_the_thresholds() -> None:
    shp = shape(origin=[origin(0.85)])
    shp["thresholds"]["origin_auc_warning"] = 0.85
    assert len(run(shp=shp)["warnings"]) == 1
    shp["thresholds"]["origin_auc_warning"] = 0.8501
    assert run(shp=shp)["warnings"] == []


def truth(auc: float, low: float, text_auc: float, text_low: float, finding: bool, origin: str = "constructed") -> Any:
    return {"source": "mmlu", "origin": origin, "train_cases": 50, "test_cases": 50, "wrong_majorities_test": 25,
            "auc": auc, "auc_low": low, "text_auc": text_auc, "text_auc_low": text_low, "finding": finding}  # fmt: skip


def shape_message(what: str, auc: float, low: float, origin: str = "constructed") -> str:
    return (f"mmlu ({origin}): {what} tell wrong majorities from right ones at ROC-AUC {auc:.3f} on TEST, "
            f"at least {low:.3f} (line 0.60)")  # fmt: skip


def test_truth_inside_is_a_finding_when_its_lower_end_is_over_the_line() -> None:
    # shape features: low 0.61 > 0.60, a finding; their words: AUC 0.5, under everything, nothing
    found = run(shp=shape(truth=[truth(0.75, 0.61, 0.5, 0.4, True)]))
    assert messages(found, "findings") == [("truth_inside", shape_message("shape features", 0.75, 0.61))]
    assert found["warnings"] == []


def test_truth_inside_with_the_lower_end_on_the_line_is_only_a_warning() -> None:
    # low exactly 0.60 is not over the line: no finding; the AUC 0.75 is over it and 0.60 > 0.5: a warning
    found = run(shp=shape(truth=[truth(0.75, 0.60, 0.5, 0.4, True)]))
    assert found["findings"] == []
    assert messages(found, "warnings") == [("truth_inside", shape_message("shape features", 0.75, 0.60))]


def test_truth_inside_warns_only_over_the_line_and_beyond_chance() -> None:
    # not a finding (natural): the AUC must be over 0.60 (0.60 itself is not) and the lower end over 0.5
    on_line = truth(0.60, 0.55, 0.5, 0.4, False, "natural")
    chance = truth(0.70, 0.50, 0.5, 0.4, False, "natural")  # lower end exactly 0.5: not beyond doubt
    assert run(shp=shape(truth=[on_line, chance]))["warnings"] == []
    over = truth(0.6001, 0.5001, 0.5, 0.4, False, "natural")
    assert messages(run(shp=shape(truth=[over])), "warnings") == [
        ("truth_inside", shape_message("shape features", 0.6001, 0.5001, "natural"))
    ]


def test_a_natural_stratum_over_the_line_is_a_warning_not_a_finding() -> None:
    # the figures of a finding, but finding False (the builder did not make natural cases): a warning
    found = run(shp=shape(truth=[truth(0.9, 0.8, 0.5, 0.4, False, "natural")]))
    assert found["findings"] == []
    assert messages(found, "warnings") == [("truth_inside", shape_message("shape features", 0.9, 0.8, "natural"))]


def test_the_words_model_is_read_with_its_own_figures() -> None:
    # the shape features under everything; the words AUC 0.8, lower end 0.7: a finding showing 0.800 and 0.700
    found = run(shp=shape(truth=[truth(0.5, 0.3, 0.8, 0.7, True)]))
    assert messages(found, "findings") == [("truth_inside", shape_message("their words", 0.8, 0.7))]


def test_the_truth_inside_line_is_read_from_the_thresholds() -> None:
    shp = shape(truth=[truth(0.75, 0.65, 0.5, 0.4, True)])
    shp["thresholds"]["max_shape_auc"] = 0.7
    # low 0.65 <= 0.7: no finding; AUC 0.75 > 0.7 and 0.65 > 0.5: a warning that names the line 0.70
    found = run(shp=shp)
    assert found["findings"] == []
    assert [m for _, m in messages(found, "warnings")] == [
        "mmlu (constructed): shape features tell wrong majorities from right ones at ROC-AUC 0.750 on TEST, "
        "at least 0.650 (line 0.70)"
    ]


def position(gap: float, finding: bool = True) -> Any:
    return {"source": "mmlu", "category": "echo_cascade", "cases": 40, "gap": gap, "z": 4.5, "finding": finding}


def test_an_answer_position_finding_says_later_or_earlier_by_the_gap() -> None:
    found = run(shp=shape(pos=[position(0.25), position(-0.3), position(0.9, finding=False)]))
    assert messages(found, "findings") == [
        ("answer_position", "mmlu / echo_cascade: correct answers sit 0.25 later than wrong ones among answers of "
                            "one kind (40 cases, z 4.5)"),
        ("answer_position", "mmlu / echo_cascade: correct answers sit 0.30 earlier than wrong ones among answers of "
                            "one kind (40 cases, z 4.5)"),
    ]  # fmt: skip


# --- structure: a model over the votes, its consensus and high-vs-low ROC-AUC -----------------------------------------


def block(auc: float | None, ci: list[float] | None) -> Any:
    return {"roc_auc": auc, "roc_auc_ci95": ci}


def struct(name: str, consensus: Any, high_low: Any = None) -> Any:
    return {"name": name, "description": "", "risk_macro_f1": 0.3, "risk_ci": [0.2, 0.4], "consensus": consensus,
            "high_vs_low": high_low}  # fmt: skip


def test_a_structure_model_sure_over_the_line_is_a_finding() -> None:
    # AUC 0.7 > 0.6, its interval's lower end 0.51 > 0.5: a finding, with the interval shown
    found = run(struct=structure(struct("structure model", block(0.7, [0.51, 0.85]))))
    assert found["status"] == "fail"
    assert messages(found, "findings") == [
        ("structure", "structure model: tells a wrong consensus from a right one at ROC-AUC 0.700 [0.510, 0.850] on "
                      "TEST (line 0.60): counting votes scores on this benchmark")
    ]  # fmt: skip
    assert found["warnings"] == []


def test_a_structure_model_on_the_line_is_nothing() -> None:
    # AUC exactly 0.6 is not over the line, however sure; None (no consensus block or no AUC) is nothing either
    assert run(struct=structure(struct("m", block(0.6, [0.55, 0.7]), block(None, None))))["warnings"] == []
    found = run(struct=structure(struct("m", None, block(0.6, [0.55, 0.7]))))
    assert found == {"status": "pass", "findings": [], "warnings": []}


def test_a_structure_model_over_the_line_but_unsure_is_a_warning() -> None:
    # lower end exactly 0.5: not beyond chance, a warning without the closing clause; no interval at all: a warning
    # showing the AUC alone
    found = run(struct=structure(struct("m", block(0.6001, [0.5, 0.7]), block(0.8, None))))
    assert found["findings"] == []
    assert messages(found, "warnings") == [
        (
            "structure",
            "m: tells a wrong consensus from a right one at ROC-AUC 0.600 [0.500, 0.700] on TEST (line 0.60)",
        ),
        ("structure", "m: tells a high-risk case from a low-risk one at ROC-AUC 0.800 on TEST (line 0.60)"),
    ]


def test_the_high_vs_low_block_is_read_and_the_line_comes_from_the_structure() -> None:
    found = run(struct=structure(struct("m", None, block(0.8, [0.7, 0.9])), line=0.75))
    assert [m for _, m in messages(found, "findings")] == [
        "m: tells a high-risk case from a low-risk one at ROC-AUC 0.800 [0.700, 0.900] on TEST (line 0.75): counting "
        "votes scores on this benchmark"
    ]
    assert run(struct=structure(struct("m", None, block(0.75, [0.7, 0.9])), line=0.75))["status"] == "pass"


def test_the_vote_rule_is_never_a_finding() -> None:
    # the floor a detector is read against; the model after it is still read
    found = run(struct=structure(struct("vote rule", block(0.99, [0.9, 1.0])), struct("m", block(0.9, [0.6, 1.0]))))
    assert [m.split(":")[0] for _, m in messages(found, "findings")] == ["m"]
    assert found["warnings"] == []


# --- overlap: shared items and identical questions are findings; the rest warnings ------------------------------------


def test_shared_source_items_are_a_finding() -> None:
    found = run(ov=overlap(shared=2, shared_test=3))
    assert messages(found, "findings") == [
        ("shared_source_items", "2 source item(s) in both files (3 TEST cases): TRAIN leaks into TEST")
    ]
    assert run(ov=overlap(shared=0, shared_test=0))["status"] == "pass"


def test_identical_questions_across_the_files_are_a_finding_within_a_file_a_warning() -> None:
    found = run(ov=overlap(identical=pairset(across_files=1, within_train_different_source=2,
                                            within_test_different_source=3, within_train_same_source=9,
                                            within_test_same_source=9)))  # fmt: skip
    assert messages(found, "findings") == [
        ("identical_questions", "1 pair(s) of identical questions across the files: TRAIN leaks into TEST")
    ]
    # the same source item asked twice within a file (9 pairs each) is no warning: only different sources are
    assert messages(found, "warnings") == [
        ("identical_questions", "2 pair(s) of identical questions within TRAIN from different source items"),
        ("identical_questions", "3 pair(s) of identical questions within TEST from different source items"),
    ]


@pytest.mark.parametrize(
    ("section", "label"),
    [("near_duplicate_questions", "near-duplicate questions"),
     ("answer_reuse", "cases reusing half or more of another case's answers")],
)  # fmt: skip
def test_near_duplicates_and_answer_reuse_are_warnings_by_where(section: str, label: str) -> None:
    counts = pairset(across_files=4, within_train_different_source=5, within_test_different_source=6,
                     within_train_same_source=7, within_test_same_source=8)  # fmt: skip
    found = run(ov=overlap(**{"near" if section.startswith("near") else "reuse": counts}))
    assert found["status"] == "pass"
    assert messages(found, "warnings") == [
        (section, f"4 pair(s) of {label}, across files"),
        (section, f"5 pair(s) of {label}, within train different source"),
        (section, f"6 pair(s) of {label}, within test different source"),
    ]


def test_findings_and_warnings_come_in_their_order_and_any_finding_fails() -> None:
    found = run(
        surface(baseline("x", f1=0.5, per_category={"echo_cascade": 0.95})),
        shp=shape(truth=[truth(0.7, 0.55, 0.5, 0.4, False)]),
        ov=overlap(shared=1, shared_test=1, near=pairset(across_files=1)),
    )
    assert found["status"] == "fail"
    assert [k for k, _ in messages(found, "findings")] == ["surface_baseline", "shared_source_items"]
    assert [k for k, _ in messages(found, "warnings")] == [
        "surface_category",
        "truth_inside",
        "near_duplicate_questions",
    ]
