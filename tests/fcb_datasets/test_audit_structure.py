"""Structure baselines (fcb_datasets/audit/structure.py): what counting votes is worth, on five hand-made TEST cases
whose vote-rule risks, risk macro-F1 and consensus figures are worked out here, and a TRAIN too small for a tree to
split (fewer than 2 x 20 cases: scikit-learn's trees then predict the commonest class and one probability for all)."""

from __future__ import annotations

import itertools
import math

import pytest
from sklearn.metrics import f1_score, roc_auc_score

from fcb_datasets.audit import structure
from fcb_datasets.audit.structure import _high_low, _labels, _risk, _unread, features, structure_baselines
from fcb_datasets.audit.view import CaseView, Settings
from harness.final_answer import Votes
from harness.types import Outcome

_serial = itertools.count(1)


def view(category: str, answers: tuple[str, ...], majority_correct: bool | None, file: str = "test",
         source: str = "s", evidence: bool = False) -> CaseView:  # fmt: skip
    i = next(_serial)
    return CaseView(file=file, line=i, case_id=f"c{i}", category=category, question="q", answers=answers,  # type: ignore[arg-type]
                    source_dataset=source, source_identity=f"{source}:{i}", origin="natural", has_evidence=evidence,
                    majority_correct=majority_correct)  # fmt: skip


def test_features_by_hand() -> None:
    # four answers of 5, 5, 10 and 12 characters, two hedged ("maybe", "I think"); votes given: 4 answers, 3 on the
    # top value, 2 values, 1 unread. mean 8, min 5, max 12, std sqrt((9 + 9 + 4 + 16) / 4) = sqrt(9.5);
    # top share 3/4; not unanimous; 5 * 3 = 15 >= 3 * 4 = 12: a consensus; distinct per answer 2/4; hedged 2/4
    it = view("echo_cascade", ("Paris", "paris", "maybe Lyon", "I think Nice"), None)
    got = features(it, Votes(n=4, top=3, distinct=2, unread=1))
    assert got == pytest.approx([4, 3, 2, 1, 0.75, 0.0, 1.0, 0.5, 8.0, 5.0, 12.0, math.sqrt(9.5), 0.5])


def test_features_of_a_unanimous_case_and_the_hedges() -> None:
    # three answers, all on one value: unanimous 1, consensus 1, one value of three. Hedges are whole words in any
    # case: "Perhaps", "not sure", "LIKELY", "possibly", "uncertain", "probably", "might" each count; "mighty" and
    # "maybelline" do not
    it = view("echo_cascade", ("Perhaps 4", "4", "4"), None)
    got = features(it, Votes(n=3, top=3, distinct=1, unread=0))
    assert got[4:8] == pytest.approx([1.0, 1.0, 1.0, 1 / 3])
    assert got[12] == pytest.approx(1 / 3)
    hedged = ("not sure", "LIKELY", "possibly", "uncertain", "probably", "might", "I think", "maybe")
    plain = ("mighty", "maybelline", "thinking", "unsure")
    for text in hedged:
        assert features(view("echo_cascade", (text, "x"), None), Votes(2, 1, 2, 0))[12] == 0.5, text
    for text in plain:
        assert features(view("echo_cascade", (text, "x"), None), Votes(2, 1, 2, 0))[12] == 0.0, text


def test_high_is_a_wrong_consensus_low_a_right_one_and_medium_neither() -> None:
    assert (_high_low("high"), _high_low("low"), _high_low("medium")) == (False, True, None)


def test_a_risk_is_read_back_from_its_text() -> None:
    assert [_risk(r) for r in ("low", "medium", "high")] == ["low", "medium", "high"]
    with pytest.raises(StopIteration):
        _risk("severe")


def test_the_labels_of_a_test_case() -> None:
    it = view("numeric_consensus_error", ("1", "2", "2"), False, source="gsm", evidence=True)
    lab = _labels(it, 7)
    assert (lab.line, lab.case_id, lab.category, lab.expected_risk, lab.majority_correct, lab.n_answers) == (
        it.line, "7", "numeric_consensus_error", "high", False, 3)  # fmt: skip
    assert (lab.has_evidence, lab.source_dataset, lab.source_item) == (True, "gsm", it.source_identity)


def test_unread_answers_are_summed_per_source() -> None:
    # source b: 3 + 2 answers, 1 + 0 unread; a: 4 answers, 2 unread; sources by name
    cases = [view("echo_cascade", ("x",) * 3, None, source="b"), view("echo_cascade", ("x",) * 2, None, source="b"),
             view("echo_cascade", ("x",) * 4, None, source="a")]  # fmt: skip
    counted = [Votes(3, 2, 1, 1), Votes(2, 2, 1, 0), Votes(4, 1, 2, 2)]
    got = _unread(cases, counted)
    assert got == {"a": {"answers": 4, "unread": 2}, "b": {"answers": 5, "unread": 1}}
    assert list(got) == ["a", "b"]


def five_cases() -> list[CaseView]:
    """Five TEST cases. The vote rule (60% of the answers on one value: a consensus; all: unanimous):
    t1 low truth, "4 4 4": unanimous -> low, 0.15; a right consensus.
    t2 high truth, "5 5 4": 2 of 3 (5 * 2 >= 3 * 3) -> high, 0.6 + (1 - 0.6667) = 0.9333; a wrong consensus.
    t3 medium truth, "1 2 3": no consensus -> medium, 0.4; no majority.
    t4 high truth, "7 7 7": unanimous -> low, 0.15; a wrong consensus.
    t5 high truth, "1 2 3 4": no consensus -> medium, 0.4; no majority."""
    return [
        view("genuine_agreement_correct", ("4", "4", "4"), True),
        view("majority_wrong_fact", ("5", "5", "4"), False),
        view("genuine_disagreement", ("1", "2", "3"), None),
        view("echo_cascade", ("7", "7", "7"), False),
        view("numeric_consensus_error", ("1", "2", "3", "4"), None),
    ]


TRUTH = ["low", "high", "medium", "high", "high"]
RULE = ["low", "high", "medium", "low", "medium"]
RULE_SCORES = [0.15, 0.9333, 0.4, 0.15, 0.4]


def small_train() -> list[CaseView]:
    # 3 high (2 wrong consensus, 1 none) and 2 low (right consensus): too few for a tree to split
    return [
        view("majority_wrong_fact", ("1", "1", "2"), False, "train"),
        view("echo_cascade", ("3", "3", "3"), False, "train"),
        view("lone_correct_dissenter", ("1", "2"), None, "train"),
        view("genuine_agreement_correct", ("9", "9", "9"), True, "train"),
        view("genuine_agreement_correct", ("8", "8", "8"), True, "train"),
    ]


@pytest.fixture(scope="module")
def scored() -> dict:
    return structure_baselines(small_train(), five_cases(), Settings(n_boot=30, max_structure_auc=0.65), lambda _: None)


def test_the_vote_rule_baseline_by_hand(scored: dict) -> None:
    got = scored
    rule = got["baselines"][0]
    assert rule["name"] == "vote rule"
    assert rule["description"] == "builtin:vote: no value held by 60% medium, unanimous low, else high"
    # risk macro-F1: low P 1/2 R 1 -> 2/3; medium (t3 right, t5 called medium) P 1/2 R 1 -> 2/3; high (t2 of t2, t4,
    # t5) P 1 R 1/3 -> 1/2. Mean (2/3 + 2/3 + 1/2) / 3 = 0.6111; scikit-learn agrees
    assert rule["risk_macro_f1"] == pytest.approx(11 / 18)
    assert rule["risk_macro_f1"] == pytest.approx(f1_score(TRUTH, RULE, average="macro"))
    assert len(rule["risk_ci"]) == 2 and rule["risk_ci"][0] <= rule["risk_ci"][1]
    # consensus: t1 right, t2 and t4 wrong. Wrong called high: t2 of 2 = 0.5; right called high: 0 of 1; balanced
    # (0.5 + 1) / 2 = 0.75. ROC-AUC of the scores: wrong 0.9333 and 0.15 against right 0.15: (1 + 0.5) / 2 = 0.75
    block = rule["consensus"]
    assert (block["n_wrong"], block["n_right"], block["n_scored"]) == (2, 1, 3)
    assert (block["wrong_caught"], block["right_alarmed"], block["balanced_accuracy"]) == (0.5, 0.0, 0.75)
    assert block["roc_auc"] == pytest.approx(0.75) == roc_auc_score([0, 1, 1], [0.15, 0.9333, 0.15])
    # high against low: the high truths t2, t4, t5 are the "wrong", the low t1 "right"; t3 (medium) stands aside.
    # Caught: t2 of 3; ROC-AUC: 0.9333, 0.15, 0.4 against 0.15: (1 + 0.5 + 1) / 3 = 0.8333
    split = rule["high_vs_low"]
    assert (split["n_wrong"], split["n_right"], split["wrong_caught"]) == (3, 1, pytest.approx(1 / 3))
    assert split["roc_auc"] == pytest.approx(2.5 / 3)
    assert got["max_structure_auc"] == 0.65


def test_the_structure_model_on_a_train_too_small_to_split(scored: dict) -> None:
    # trees on 5 TRAIN cases predict the commonest risk, high (3 of 5), for all five TEST cases: high F1 with P 3/5,
    # R 1 = 0.75; low and medium 0 (labels without a prediction count): 0.75 / 3 = 0.25
    got = scored
    model = got["baselines"][1]
    assert (model["name"], model["description"]) == (
        "structure model", "trees over the votes, answer lengths and hedging; knows no truth")  # fmt: skip
    assert model["risk_macro_f1"] == pytest.approx(0.25)
    # the consensus model: 4 TRAIN cases with a consensus (2 wrong, 2 right), one probability for all: every TEST
    # case the same score, ROC-AUC 0.5; called high everywhere: wrong caught 2 of 2, right alarmed 1 of 1
    block = model["consensus"]
    assert block["roc_auc"] == 0.5 and block["n_scored"] == 3
    assert (block["wrong_caught"], block["right_alarmed"], block["balanced_accuracy"]) == (1.0, 1.0, 0.5)


def test_a_train_with_one_kind_of_consensus_gives_no_scores() -> None:
    # every TRAIN consensus wrong: no model of wrong against right, no score, no ROC-AUC (0 cases scored)
    train = [view("majority_wrong_fact", ("1", "1", "2"), False, "train"), view("echo_cascade", ("3", "3"), False,
                                                                                "train"),
             view("genuine_agreement_correct", ("9", "8", "7"), None, "train")]  # fmt: skip
    got = structure_baselines(train, five_cases(), Settings(n_boot=20), lambda _: None)
    block = got["baselines"][1]["consensus"]
    assert (block["n_scored"], block["roc_auc"]) == (0, None)


def test_unread_answers_on_test_and_the_progress_line() -> None:
    # TEST: "" and "..." hold no value: source a 3 answers, 1 unread; b 2 answers, 1 unread
    test = [
        view("echo_cascade", ("", "4", "4"), None, source="a"),
        view("echo_cascade", ("...", "4"), None, source="b"),
    ]
    said: list[str] = []
    got = structure_baselines(small_train(), test, Settings(n_boot=20), said.append)
    assert got["unread"] == {"a": {"answers": 3, "unread": 1}, "b": {"answers": 2, "unread": 1}}
    assert said == ["structure baselines: final values read and counted (the vote rule, trees over the votes)"]


def test_the_labels_carry_no_families_tags_or_shared_context() -> None:
    # the audit knows no families, tags or hash: empty and False, as written
    lab = _labels(view("echo_cascade", ("1", "1"), True), 0)
    assert (lab.content_hash, lab.families, lab.families_complete, lab.tags) == ("", (), False, ())
    assert (lab.any_saw_other_answers, lab.any_shared_context) == (False, False)
    assert lab.families_complete is False and lab.any_saw_other_answers is False
    assert lab.any_shared_context is False


def test_the_trees_settings() -> None:
    params = structure._trees(7).get_params()  # type: ignore[attr-defined]
    assert (params["max_iter"], params["max_depth"], params["learning_rate"], params["random_state"]) == (
        100, 3, 0.1, 7)  # fmt: skip


def test_the_seed_reaches_every_model_and_bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    # Settings(seed=13): both trees, the macro-F1 interval and both consensus blocks of both baselines get seed 13
    seeds: dict[str, list] = {"trees": [], "f1": [], "consensus": []}
    real_trees, real_f1, real_consensus = structure._trees, structure.macro_f1_interval, structure.consensus

    def trees(seed: int) -> object:
        seeds["trees"].append(seed)
        return real_trees(seed)

    def f1(*args: object) -> object:
        seeds["f1"].append(args[4])
        return real_f1(*args)  # type: ignore[arg-type]

    def block(labels: object, outcomes: object, *, n_boot: int, seed: int) -> object:
        seeds["consensus"].append(seed)
        return real_consensus(labels, outcomes, n_boot=n_boot, seed=seed)  # type: ignore[arg-type]

    monkeypatch.setattr(structure, "_trees", trees)
    monkeypatch.setattr(structure, "macro_f1_interval", f1)
    monkeypatch.setattr(structure, "consensus", block)
    structure_baselines(small_train(), five_cases(), Settings(n_boot=10, seed=13), lambda _: None)
    assert seeds == {"trees": [13, 13], "f1": [13, 13], "consensus": [13, 13, 13, 13]}


def test_the_outcomes_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    # each case's outcome: its id, no hash, the risk and score given, no error, one attempt, no latency
    seen: list[dict] = []

    def block(labels: object, outcomes: dict, *, n_boot: int, seed: int) -> dict:
        seen.append(outcomes)
        return {}

    monkeypatch.setattr(structure, "consensus", block)
    cases = five_cases()[:2]
    labels = [_labels(v, i) for i, v in enumerate(cases)]
    structure._scored("n", "d", cases, labels, ["low", "high"], [0.1, None], Settings(n_boot=5))
    assert seen[0] == seen[1]
    assert seen[0] == {
        "0": Outcome("0", "", "low", 0.1, None, 1, 0.0),
        "1": Outcome("1", "", "high", None, None, 1, 0.0),
    }
    one = seen[0]["0"]
    assert (one.case_id, one.content_hash, one.attempts, one.latency_s) == ("0", "", 1, 0.0)


def test_risks_scores_and_labels_of_unequal_length_are_refused() -> None:
    cases = five_cases()[:2]
    labels = [_labels(v, i) for i, v in enumerate(cases)]
    with pytest.raises(ValueError):
        structure._scored("n", "d", cases, labels, ["low", "high"], [0.1], Settings(n_boot=5))
    with pytest.raises(ValueError):
        _unread(cases, [Votes(3, 3, 1, 0)])


def test_a_train_large_enough_to_split_scores_a_wrong_consensus_above_a_right_one() -> None:
    # TRAIN: 20 wrong consensus cases "5 5 4" (top share 2/3, not unanimous) and 20 right ones "4 4 4" (unanimous):
    # one split on unanimity separates them, so P(wrong) is near 1 for a TEST case like the first and near 0 for
    # one like the second (labels flipped, right read as wrong, the order would flip)
    train = [view("majority_wrong_fact", ("5", "5", "4"), False, "train") for _ in range(20)]
    train += [view("genuine_agreement_correct", ("4", "4", "4"), True, "train") for _ in range(20)]
    test = [view("majority_wrong_fact", ("5", "5", "4"), False), view("genuine_agreement_correct", ("4", "4", "4"),
                                                                      True)]  # fmt: skip
    got = structure_baselines(train, test, Settings(n_boot=10), lambda _: None)
    block = got["baselines"][1]["consensus"]
    # one wrong scored above the one right: ROC-AUC 1; the risk trees call the first high, the second low: F1 of
    # high and low both 1, medium absent from truth and predictions
    assert block["roc_auc"] == 1.0
    assert got["baselines"][1]["risk_macro_f1"] == pytest.approx(f1_score(["high", "low"], ["high", "low"],
                                                                          average="macro"))  # fmt: skip
