"""``fcb audit-dataset``: generated benchmarks with one planted shortcut each are caught; a clean one passes.

The generator here writes cases valid under the schema and the label scheme whose text, answer counts, lengths and
sources are drawn the same way for every category, unless a shortcut is planted on purpose.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import pytest
from conftest import ROOT, run_cli

from fcb_datasets.audit import audit
from fcb_datasets.audit.view import Settings, case_view
from fcb_datasets.audit_report import render
from harness.types import CATEGORIES, CATEGORY_RISK

pytestmark = pytest.mark.slow

SYLLABLES = ["ka", "lo", "mi", "tu", "re", "sa", "po", "ne", "vi", "da", "gu", "fe", "zo", "bi", "ha"]
PHRASE = "as the reviewer already established"  # no syllable word can contain these words
THREE = ("majority_wrong_fact", "genuine_agreement_correct", "genuine_disagreement")
SCHEMA = json.loads((ROOT / "harness" / "data" / "audit.schema.json").read_text())


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(SYLLABLES) + rng.choice(SYLLABLES) for _ in range(rng.randint(lo, hi)))


def _flags(category: str, n: int) -> list[bool]:
    if category == "lone_correct_dissenter":
        return [True] + [False] * (n - 1)
    if category == "genuine_disagreement":
        return [True] * ((3 * n - 1) // 5) + [False] * (n - (3 * n - 1) // 5)  # under 60% correct
    return [CATEGORY_RISK[category] != "high"] * n


def make_case(
    category: str,
    i: int,
    rng: random.Random,
    *,
    n: int | None = None,
    words: tuple[int, int] = (5, 15),
    dataset: str | None = None,
    question: str | None = None,
    item: str | None = None,
    phrase: str | None = None,
    origin: str | None = None,
    last_correct: bool = False,
) -> dict:
    n = n or rng.randint(3, 5)
    answers = []
    flags = _flags(category, n)
    if not last_correct:
        rng.shuffle(flags)
    else:  # the correct answer planted last
        flags = sorted(flags)
    for k, ok in enumerate(flags):
        text = _words(rng, *words)
        if phrase and k == 1:
            text = f"{text} {phrase} {_words(rng, 1, 3)}"
        answers.append(
            {
                "agent_id": f"agent-{k + 1}",
                "text": text,
                "correct": ok,
                "metadata": {
                    "saw_other_answers": category == "echo_cascade" and k > 0,
                    "shared_context": category == "anchoring_injected_premise",
                },
            }
        )
    risk = CATEGORY_RISK[category]
    return {
        "id": f"FCB-{i:04d}",
        "category": category,
        "question": question or _words(rng, 10, 16) + "?",
        "answers": answers,
        "ground_truth": "42",
        "expected_risk": risk,
        "majority_correct": None if category == "genuine_disagreement" else risk != "high",
        "rationale": "generated for the audit tests",
        "source": {
            "dataset": dataset or rng.choice(["alpha set", "beta set"]),
            "license": "MIT",
            "citation": "generated",
            "url": "https://example.org/generated",
            "item": item or f"item-{i}",
        },
        **({"tags": [origin]} if origin else {}),
    }


def make_split(
    seed: int,
    first_id: int,
    per_category: int = 25,
    categories: tuple[str, ...] = CATEGORIES,
    plant: dict | None = None,
) -> list[dict]:
    """Cases of the given categories; ``plant`` = {"category": ..., **make_case keyword arguments} for that one."""
    rng = random.Random(seed)
    cases = []
    for _ in range(per_category):
        for c in categories:
            extra = (
                {k: v for k, v in (plant or {}).items() if k != "category"} if plant and c == plant["category"] else {}
            )
            cases.append(make_case(c, first_id + len(cases), rng, **extra))
    rng.shuffle(cases)
    return cases


def write(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def audit_of(train: list[dict], test: list[dict]) -> dict:
    """The audit in-process (the CLI tests below cover the command itself), each surface model at one setting: a
    planted shortcut shows without the grid search, which the clean benchmark's test runs."""
    tr = [case_view(c, "train", k + 1) for k, c in enumerate(train)]
    te = [case_view(c, "test", k + 1) for k, c in enumerate(test)]
    info = (
        {"path": "train", "sha256": "0" * 64, "cases": len(tr)},
        {"path": "test", "sha256": "0" * 64, "cases": len(te)},
    )
    return audit(tr, te, info, Settings(n_boot=200, search=False))


def test_items_that_do_not_name_their_file_are_refused() -> None:
    # the composition and the overlap inside each file count items by the name of their file: an item named by its
    # path would be counted nowhere, silently
    rng = random.Random(0)
    cases = [make_case(c, k, rng) for k, c in enumerate(THREE * 3)]
    items = [case_view(c, "/data/dev.jsonl", k) for k, c in enumerate(cases)]
    with pytest.raises(ValueError, match="TRAIN item must have file='train'"):
        audit(items, [case_view(c, "test", k) for k, c in enumerate(cases)], (), Settings(n_boot=10))


def baseline(doc: dict, name: str) -> dict:
    return next(b for b in doc["surface"]["baselines"] if b["name"] == name)


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("clean")
    return write(folder / "train.jsonl", make_split(1, 0)), write(folder / "test.jsonl", make_split(2, 5000))


def test_a_clean_benchmark_passes_with_every_surface_baseline_near_chance(clean: tuple[Path, Path]) -> None:
    proc = run_cli("audit-dataset", str(clean[0]), str(clean[1]), "--format", "json", "--bootstrap", "200")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, SCHEMA)
    assert doc["verdict"] == {"status": "pass", "findings": [], "warnings": []}
    # Chance, derived apart from the code: a guesser that predicts each class as often as it occurs, blind to the
    # case, gets F1 = share on each class (precision = recall = share), so macro-F1 = mean share = 1/number of
    # classes: 1/8 for the categories, 1/3 for the risks their guesses map to.
    category_chance, risk_chance = 1 / 8, 1 / 3
    for b in doc["surface"]["baselines"]:
        assert b["macro_f1"] <= category_chance + 0.1, b
        assert b["risk_macro_f1"] <= risk_chance + 0.1, b
    assert doc["rules"]["total"] == 0
    assert doc["overlap"]["shared_source_items"]["count"] == 0
    # the one test that runs the grid search: every fitted model chose its setting by cross-validation
    assert doc["settings"]["search"] is True
    assert all(b["cv_macro_f1"] is not None for b in doc["surface"]["baselines"] if b["name"] != "majority class")


def test_a_fixed_phrase_is_named_by_an_exact_rule(tmp_path: Path) -> None:
    plant = {"category": "echo_cascade", "phrase": PHRASE}
    train = write(tmp_path / "train.jsonl", make_split(3, 0, plant=plant))
    test = write(tmp_path / "test.jsonl", make_split(4, 5000, plant=plant))
    out = tmp_path / "audit.json"
    proc = run_cli("audit-dataset", str(train), str(test), "--format", "json", "--out", str(out), "-q", "--quick")
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    rules = [r for r in doc["rules"]["rules"] if r["target"] == ["echo_cascade"]]
    assert rules and all(r["text"] in PHRASE and r["longest_equivalent"] in PHRASE for r in rules)
    assert any(len(r["longest_equivalent"].split()) == 4 for r in rules)  # n-grams go up to 4 words
    best = rules[0]
    # every echo case has the phrase, no other case has it: 25 + 25 of 50, precision and recall 1
    assert (best["in_target"], best["with_feature"], best["target_size"]) == (50, 50, 50)
    assert any(f["kind"] == "exact_rule" and "echo_cascade" in f["message"] for f in doc["verdict"]["findings"])
    text = render(doc)
    assert f'"{best["text"]}"' in text and f'"{best["longest_equivalent"]}"' in text and "verdict: FAIL" in text
    # --quick: each model at its one setting, no cross-validation, and the report says so
    assert doc["settings"]["search"] is False
    assert {json.dumps(b["params"]) for b in doc["surface"]["baselines"]} == {
        "{}",
        '{"max_depth": 3, "learning_rate": 0.1}',
        '{"C": 3.0}',
    }
    assert all(b["cv_macro_f1"] is None for b in doc["surface"]["baselines"])
    assert "without a search (--quick)" in text


def test_an_answer_count_marking_a_category_is_caught() -> None:
    plant = {"category": "genuine_disagreement", "n": 7}
    doc = audit_of(make_split(5, 0, plant=plant), make_split(6, 5000, plant=plant))
    assert doc["count_leakage"]["by_category"]["genuine_disagreement"] == {"7": 50}
    counts = [r for r in doc["rules"]["rules"] if r["kind"] == "answer count"]
    assert [(r["target"], r["text"], r["precision"], r["recall"]) for r in counts] == [
        (["genuine_disagreement"], "answers = 7", 1.0, 1.0)
    ]
    assert baseline(doc, "answer count only")["per_category"]["genuine_disagreement"] == 1.0
    assert doc["verdict"]["status"] == "fail"


def test_answer_length_marking_a_category_is_caught() -> None:
    plant = {"category": "genuine_disagreement", "words": (40, 60)}
    doc = audit_of(make_split(7, 0, 40, THREE, plant), make_split(8, 5000, 40, THREE, plant))
    lengths = baseline(doc, "answer count + lengths")
    assert lengths["per_category"]["genuine_disagreement"] == 1.0
    # one class of three found exactly, the other two at about chance: (1 + 2 * 0.5) / 3 = 0.67 > 0.45
    assert lengths["macro_f1"] > 0.55
    assert any(
        f["kind"] == "surface_baseline" and f["message"].startswith("answer count + lengths")
        for f in doc["verdict"]["findings"]
    )
    assert baseline(doc, "answer count only")["macro_f1"] < 0.45


def test_a_source_data_set_marking_a_category_is_caught() -> None:
    plant = {"category": "genuine_agreement_correct", "dataset": "gamma set"}
    doc = audit_of(make_split(9, 0, 40, THREE, plant), make_split(10, 5000, 40, THREE, plant))
    source = baseline(doc, "source data set only")
    assert source["per_category"]["genuine_agreement_correct"] == 1.0 and source["macro_f1"] > 0.55
    assert any(f["message"].startswith("source data set only") for f in doc["verdict"]["findings"])
    rows = {(r["category"], r["source"]): r["train"] + r["test"] for r in doc["composition"]["rows"]}
    assert rows[("genuine_agreement_correct", "gamma set")] == 80


def test_a_question_or_source_item_shared_across_the_files_fails(clean: tuple[Path, Path], tmp_path: Path) -> None:
    train = [json.loads(line) for line in clean[0].read_text().splitlines()]
    test = [json.loads(line) for line in clean[1].read_text().splitlines()]
    test[3]["question"] = "  " + train[10]["question"].upper()  # the same question, other case and white space
    test[5]["source"] = train[20]["source"]  # the same source item, other wording
    proc = run_cli("audit-dataset", str(clean[0]), str(write(tmp_path / "test.jsonl", test)), "--format", "json",
                   "--quick", "--bootstrap", "200")  # fmt: skip
    assert proc.returncode == 1
    overlap = json.loads(proc.stdout)["overlap"]
    assert overlap["identical_questions"]["across_files"]["pairs"] == 1
    pair = overlap["identical_questions"]["across_files"]["listed"][0]
    assert (pair["a"]["id"], pair["b"]["id"]) == (train[10]["id"], test[3]["id"])
    assert overlap["shared_source_items"]["count"] == 1
    source = train[20]["source"]
    assert overlap["shared_source_items"]["listed"] == [f"{source['dataset']}:{source['item']}"]


def test_a_near_duplicate_question_is_listed_as_a_warning(clean: tuple[Path, Path], tmp_path: Path) -> None:
    test = [json.loads(line) for line in clean[1].read_text().splitlines()]
    train = [json.loads(line) for line in clean[0].read_text().splitlines()]
    test[7]["question"] = train[30]["question"].rstrip("?") + " kaka?"  # one word more
    proc = run_cli("audit-dataset", str(clean[0]), str(write(tmp_path / "test.jsonl", test)), "--format", "json",
                   "--quick", "--bootstrap", "200")  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-1500:]  # a warning, not a failure
    doc = json.loads(proc.stdout)
    near = doc["overlap"]["near_duplicate_questions"]["across_files"]
    assert near["pairs"] == 1 and near["listed"][0]["b"]["id"] == test[7]["id"] and near["listed"][0]["cosine"] >= 0.8
    assert doc["overlap"]["identical_questions"]["across_files"]["pairs"] == 0
    assert any(w["kind"] == "near_duplicate_questions" for w in doc["verdict"]["warnings"])


def test_one_file_split_by_source_item(clean: tuple[Path, Path]) -> None:
    proc = run_cli("audit-dataset", str(clean[0]), "--split-by", "source-item", "--format", "json", "-q", "--quick")
    assert proc.returncode == 0, proc.stdout[-1500:]
    files = json.loads(proc.stdout)["files"]
    n = sum(1 for _ in clean[0].open())
    assert files["train"]["cases"] + files["test"]["cases"] == n
    assert abs(files["train"]["cases"] - n / 2) < n * 0.15  # a hash split: about half each
    assert json.loads(proc.stdout)["overlap"]["shared_source_items"]["count"] == 0


def test_bad_usage_and_invalid_files(clean: tuple[Path, Path], tmp_path: Path) -> None:
    assert run_cli("audit-dataset", str(clean[0])).returncode == 2  # one file needs --split-by
    assert run_cli("audit-dataset", str(clean[0]), str(clean[1]), "--split-by", "source-item").returncode == 2
    missing = run_cli("audit-dataset", str(clean[0]), str(tmp_path / "nope.jsonl"))
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr
    assert run_cli("audit-dataset", str(clean[0]), str(clean[1]), "--max-surface-f1", "2").returncode == 2
    lines = clean[1].read_text().splitlines()
    broken = json.loads(lines[1])
    broken["majority_correct"] = "yes"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    proc = run_cli("audit-dataset", str(clean[0]), str(bad), "--quick")
    validate = run_cli("validate", str(bad))
    assert proc.returncode == 1 and validate.returncode == 1
    # validate prints its findings on stdout; the audit, for which they are errors, on stderr
    first = next(line for line in validate.stdout.splitlines() if line.startswith(f"{bad}:2:"))
    assert first in proc.stderr.splitlines() and first.startswith(f"{bad}:2: majority_correct:")
    assert proc.stdout == ""


def _tagged(
    seed: int, first_id: int, plant_words: tuple[int, int] | None = None, phrase: str | None = None
) -> list[dict]:
    """Half the cases of every category constructed, half natural, from one source; ``plant_words`` makes the
    constructed cases with a wrong majority long-winded, ``phrase`` marks every constructed case."""
    rng = random.Random(seed)
    cases = []
    for _ in range(30):
        for c in THREE:
            for origin in ("origin_constructed", "origin_natural"):
                words = plant_words if plant_words and origin == "origin_constructed" and c == THREE[0] else (5, 15)
                mark = phrase if origin == "origin_constructed" else None
                cases.append(make_case(c, first_id + len(cases), rng, dataset="alpha set", origin=origin, words=words,
                                       phrase=mark))  # fmt: skip
    return cases


def test_a_phrase_that_marks_the_constructed_cases_is_an_origin_rule() -> None:
    doc = audit_of(_tagged(21, 0, phrase=PHRASE), _tagged(22, 5000, phrase=PHRASE))
    jsonschema.validate(doc, SCHEMA)
    (origin,) = doc["shape"]["origin"]
    assert origin["constructed"] == 180 and origin["real"] == 180  # 30 x 3 categories x 2 files each
    rules = [r for r in origin["rules"] if r["target"] == ["constructed"]]
    assert rules and rules[0]["precision"] == 1.0 and rules[0]["recall"] == 1.0
    assert origin["auc"] is not None and origin["auc"] > 0.95
    assert any(f["kind"] == "origin_rule" for f in doc["verdict"]["findings"])
    # no category rule: the phrase marks three categories alike
    assert not [r for r in doc["rules"]["rules"] if r["kind"] != "answer count"]


def test_wrong_majorities_told_from_right_ones_by_their_shape_are_a_finding() -> None:
    doc = audit_of(_tagged(23, 0, plant_words=(60, 80)), _tagged(24, 5000, plant_words=(60, 80)))
    strata = {(t["origin"]): t for t in doc["shape"]["truth_inside"]}
    # the constructed wrong majorities (majority_wrong_fact) have answers four times as long as the constructed right
    # ones (genuine_agreement_correct): length alone separates them, AUC 1
    assert strata["constructed"]["auc"] == 1.0 and strata["constructed"]["finding"]
    assert strata["natural"]["auc"] < 0.75 and not strata["natural"]["finding"]
    assert any(f["kind"] == "truth_inside" for f in doc["verdict"]["findings"])
    clean = audit_of(_tagged(25, 0), _tagged(26, 5000))
    assert all(not t["finding"] for t in clean["shape"]["truth_inside"])


def test_wrong_majorities_told_from_right_ones_by_their_words_are_a_finding() -> None:
    # a recipe that words its false claims its own way: in the constructed cases the first answer opens with "qqxx"
    # for a wrong majority and "qqyy" for a right one, in place of a word of the same length, so that no shape differs
    def tagged(seed: int, first_id: int) -> list[dict]:
        cases = _tagged(seed, first_id)
        for case in cases:
            if "origin_constructed" in case["tags"]:
                first = case["answers"][0]
                marker = "qqxx" if case["majority_correct"] is False else "qqyy"
                first["text"] = " ".join([marker, *first["text"].split()[1:]])
        return cases

    doc = audit_of(tagged(31, 0), tagged(32, 5000))
    jsonschema.validate(doc, SCHEMA)
    strata = {(t["origin"]): t for t in doc["shape"]["truth_inside"]}
    # one word among a few dozen of random syllables: the words model finds it (its interval clears 0.6); the shape
    # model cannot
    assert strata["constructed"]["text_auc_low"] > 0.6 and strata["constructed"]["finding"]
    assert strata["constructed"]["auc_low"] < 0.6
    assert not strata["natural"]["finding"]
    assert any(f["kind"] == "truth_inside" and "their words" in f["message"] for f in doc["verdict"]["findings"])
    assert not any(f["kind"] == "truth_inside" and "shape" in f["message"] for f in doc["verdict"]["findings"])


def test_a_correct_answer_always_last_is_an_answer_position_finding() -> None:
    plant = {"category": "lone_correct_dissenter", "last_correct": True}
    doc = audit_of(make_split(27, 0, plant=plant), make_split(28, 5000, plant=plant))
    lone = {p["source"]: p for p in doc["shape"]["positions"] if p["category"] == "lone_correct_dissenter"}
    # the one correct answer of n sits at position n-1: gap = 1 - mean(0..n-2)/(n-1) = 1 - (n-2)/(2(n-1)) = n/(2(n-1)),
    # for n = 3, 4, 5: 0.75, 0.667, 0.625; per source, the mean over its cases
    cases = [c for c in make_split(27, 0, plant=plant) + make_split(28, 5000, plant=plant)
             if c["category"] == "lone_correct_dissenter"]  # fmt: skip
    assert set(lone) == {c["source"]["dataset"] for c in cases}
    for source, found in lone.items():
        mine = [c for c in cases if c["source"]["dataset"] == source]
        expected = sum(len(c["answers"]) / (2 * (len(c["answers"]) - 1)) for c in mine) / len(mine)
        assert found["cases"] == len(mine) and abs(found["gap"] - expected) < 1e-3 and found["finding"]
    assert any(f["kind"] == "answer_position" for f in doc["verdict"]["findings"])
    others = [p for p in doc["shape"]["positions"] if p["category"] != "lone_correct_dissenter"]
    assert others and not any(p["finding"] for p in others)  # shuffled answers: no tell


def test_an_origin_tag_that_gives_the_category_away_fails_the_source_and_origin_baseline() -> None:
    rng = random.Random(29)

    def split(first: int) -> list[dict]:
        out = []
        for _ in range(40):
            for c in THREE:
                origin = "origin_constructed" if c == THREE[0] else "origin_natural"
                out.append(make_case(c, first + len(out), rng, dataset="alpha set", origin=origin))
        return out

    doc = audit_of(split(0), split(5000))
    b = baseline(doc, "source and origin")
    assert b["per_category"][THREE[0]] == 1.0 and b["macro_f1"] > 0.55
    assert any(f["message"].startswith("source and origin") for f in doc["verdict"]["findings"])


def test_a_source_whose_consensus_cases_are_all_in_train_reads_as_no_stratum() -> None:
    """A build whose matching left one source x origin no case with a consensus in TEST: nothing to fit there, and
    no crash (an empty selection was once a float array, which ``~`` refuses)."""
    from fcb_datasets.audit.shape import truth_inside

    rng = random.Random(3)
    train = [case_view(make_case(c, k, rng), "train", k) for k, c in enumerate(THREE * 30)]
    test = [case_view(c, "test", k) for k, c in enumerate(make_split(2, 5000)) if c["majority_correct"] is None]
    assert train and test and all(v.majority_correct is None for v in test)
    assert truth_inside(train, test, Settings(n_boot=10, search=False)) == []
