"""The real-data benchmark built from ../shared/data: reproducible, valid, split by question family, labels that agree
with the raw source records (read here on their own, not through the builder), natural cases exactly as the sources
gave them, and no source text in the repository. The label checks read a build from an eighth of every source's
questions (the same formats: `sources.subset`), audited with `--audit quick`; the properties of the builder itself
(byte-identical rebuilds, held-back wording, disjoint builds) are checked on builds from a thirty-second, taken from
inside that eighth; `make dataset-check` checks the issue's targets on the whole benchmark."""

from __future__ import annotations

import csv
import gzip
import hashlib
import json
import random
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import ROOT, run_cli
from sources import build_args, gz_rows, norm_gsm, norm_math, once, part, shared, subset

from fcb_datasets.realdata import dylan
from fcb_datasets.realdata.card import HAND_AUDIT
from harness import documents
from harness.cases.reader import scan
from harness.types import CATEGORY_RISK

pytestmark = [pytest.mark.timeout(900), pytest.mark.slow]  # builds wait


def _build(sources: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    proc = run_cli("build-dataset", *build_args(sources), "--out", str(out), *extra)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stages = [line for line in proc.stderr.splitlines() if re.match(r"fcb build-dataset: \[\s*\d+\.\d s\] ", line)]
    assert "reading GSM8K" in stages[0]
    if "--audit" in extra:  # the audit's stage, then its verdict (issue 45, item 12: it was never printed)
        assert "auditing" in stages[-2] and re.search(r"\] audit: (pass|fail)$", stages[-1]), stages[-2:]
    else:
        assert "writing the splits" in stages[-1]
    return proc


def _cases(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _both(folder: Path) -> list[dict]:
    return _cases(folder / "dev.jsonl") + _cases(folder / "test.jsonl")


@pytest.fixture(scope="module")
def eighth(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return once(tmp_path_factory, "eighth-src", lambda out: subset(out, part(1, 8)))


@pytest.fixture(scope="module")
def built(eighth: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return once(tmp_path_factory, "eighth-built", lambda out: _build(eighth, out, "--audit", "quick"))


# part(1, 32) and part(9, 32) hold buckets 1 and 9 of 32: both inside part(1, 8)'s bucket 1 of 8, and disjoint
@pytest.fixture(scope="module")
def small(eighth: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return once(tmp_path_factory, "small-src", lambda out: subset(out, part(1, 32), src=eighth))


@pytest.fixture(scope="module")
def small_built(small: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return once(tmp_path_factory, "small-built", lambda out: _build(small, out))


def _key(question: str) -> str:
    """A GSM8K or TruthfulQA item key as the issue defines it, computed here: sha256 of the normalised question."""
    return hashlib.sha256(norm_gsm(question).encode()).hexdigest()[:16]


def _source(case: dict) -> str:
    return case["tags"][0]


def _origin(case: dict) -> str:
    (origin,) = [t for t in case["tags"] if t.startswith("origin_")]
    return origin


def test_same_inputs_and_seed_give_byte_identical_outputs(small: Path, small_built: Path, tmp_path: Path) -> None:
    # one grading process against one a core: the order of the workers changes nothing (the audit, seeded, is left
    # to its own tests)
    _build(small, tmp_path / "b", "--workers", "1")
    for name in ("dev.jsonl", "test.jsonl", "card.json"):
        assert (small_built / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert "audit" not in json.loads((small_built / "card.json").read_text())


def test_valid_and_split_by_question_across_sources(built: Path) -> None:
    for path in (built / "dev.jsonl", built / "test.jsonl"):
        assert scan(path, strict=True).problems == []
    dev, test = _cases(built / "dev.jsonl"), _cases(built / "test.jsonl")
    assert not {c["source"]["item"] for c in dev} & {c["source"]["item"] for c in test}
    assert not {c["id"] for c in dev} & {c["id"] for c in test}
    # a GSM8K question from ../gsm8k and from ZeroEval is one item; a MATH problem from DyLAN and from ZeroEval too
    datasets = defaultdict(set)
    for c in dev + test:
        datasets[c["source"]["item"]].add(_source(c))
    assert any({"gsm8k", "zeroeval_gsm"} <= d for d in datasets.values())
    assert any("zeroeval_math" in d and d & {"dylan", "dylan_round1"} for d in datasets.values())


def test_gsm8k_labels_agree_with_the_source_records(eighth: Path, built: Path) -> None:
    rows = {
        hashlib.sha256(norm_gsm(r["question"]).encode()).hexdigest()[:16]: r
        for r in map(json.loads, (eighth / "gsm8k" / "example_model_solutions.jsonl").read_text().splitlines())
    }
    for case in (c for c in _both(built) if _source(c) == "gsm8k"):
        row = rows[case["source"]["item"].split(":")[1]]
        assert float(case["ground_truth"]) == float(row["ground_truth"].rpartition("A:")[2].replace(",", ""))
        solutions = {}
        for k, v in row.items():
            if isinstance(v, dict):
                solutions.setdefault(v["solution"], set()).add((v["is_correct"], "cobbe-gpt3-" + k.split("_")[0]))
        for a in case["answers"]:
            if a["text"] in solutions:  # a real solution: flag and model from the source, never marked as ours
                assert (a["correct"], a["metadata"]["model_family"]) in solutions[a["text"]]
                assert not a["metadata"]["saw_other_answers"] and not a["metadata"]["shared_context"]
            else:  # our text: only in constructed cases, flagged, with no model, in the source's format
                assert _origin(case) == "origin_constructed" and "model_family" not in a["metadata"]
                assert a["metadata"]["saw_other_answers"] or a["metadata"]["shared_context"]
                assert re.search(r"\nA: -?[\d.]+$", a["text"]), a["text"]
        if _origin(case) == "origin_natural":
            assert {a["text"] for a in case["answers"]} == set(solutions)


def _letters(text: str) -> set[str]:
    found = re.findall(r"answer (?:is|should be|would be):?\s*\(?([A-J])\b|Answer:\s*\(?([A-J])\b", text)
    return {a or b for a, b in found}


def test_mmlu_pro_cases_are_fixed_panels_as_the_source_gave_them(eighth: Path, built: Path) -> None:
    from fcb_datasets.realdata.mmlu_pro import PANELS

    panels = {p.name: p.models for p in PANELS}
    raw: dict[str, dict[int, dict]] = {}
    for path in (eighth / "mmlu-pro" / "outputs").glob("*.jsonl.gz"):
        raw[path.name.removesuffix(".jsonl.gz")] = {int(r["question_id"]): r for r in gz_rows(path)}
    cases = [c for c in _both(built) if _source(c) == "mmlu_pro"]
    assert cases
    checked = 0
    for case in cases:
        qid = int(case["source"]["item"].split(":")[1])
        (panel,) = [name for name in panels if f"panel {name} " in case["source"]["modification"]]
        records = [raw[m][qid] for m in panels[panel]]
        texts = Counter((r.get("generated_text") or r.get("model_outputs") or r.get("response") or "").strip()
                        for r in records)  # fmt: skip
        assert Counter(a["text"] for a in case["answers"]) == texts  # the whole panel, every answer unchanged
        gold = records[0]["answer"]
        assert case["ground_truth"].startswith(f"({gold}) ")
        # the options in the order this panel saw them (revisions of one question order them differently)
        listed = "\n".join(f"{'ABCDEFGHIJ'[i]}. {o}" for i, o in enumerate(records[0]["options"]))
        assert case["question"].endswith("Options:\n" + listed)
        for a in case["answers"]:
            letters = _letters(a["text"])
            names_choice = re.search(r"(?:option|choice|statement|match|diagnosis) (?:is|would be)", a["text"])
            if (
                len(letters) == 1
                # a run-on over the options ("let's summarize", "The answer is ... B, I, J") is unreadable by design
                and not re.search(r"[Aa]nswer:|would be|\)\s*(,|or|and)\s*\(|\*\*|summari[sz]e|\.\.\.", a["text"])
                and not names_choice
            ):
                assert a["correct"] == (letters == {gold}), a["text"][-200:]
                checked += 1
            elif not letters and not names_choice and "**" not in a["text"]:
                assert not a["correct"]
        assert CATEGORY_RISK[case["category"]] == case["expected_risk"]
    assert checked > 100


def test_zeroeval_cases_are_panels_and_their_numbers_agree(eighth: Path, built: Path) -> None:
    cases = [c for c in _both(built) if _source(c).startswith("zeroeval_")]
    outputs: dict[str, str] = {}
    for path in (eighth / "zeroeval").rglob("*.jsonl.gz"):
        for r in gz_rows(path):
            outputs[r["output"][0].strip()] = str(r["answer"]).lstrip("# ").strip()
    checked = 0
    for case in cases:
        for a in case["answers"]:
            assert a["text"] in outputs  # a reply exactly as the model wrote it
            assert outputs[a["text"]] == case["ground_truth"]  # and to this question's gold
            try:
                stated = json.loads(a["text"].removeprefix("```json").removesuffix("```").strip())["answer"]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(stated, str) and re.fullmatch(r"-?\d+", stated.strip()):
                assert a["correct"] == (int(stated) == int(float(case["ground_truth"].replace(",", ""))))
                checked += 1
    assert checked > 100


def _boxed_ints(text: str) -> set[str]:
    return set(re.findall(r"\\boxed\{(-?\d+)\}", text))


def test_dylan_cases_are_debates_as_they_ran(eighth: Path, built: Path) -> None:
    debates = {}
    for name in ("math_cot.jsonl.gz", "math_complex.jsonl.gz"):
        for r in gz_rows(eighth / "dylan" / name):
            debates.setdefault(r["problem_id"], []).append(r)
    cases = [c for c in _both(built) if _source(c) == "dylan"]
    assert cases
    echoes = 0
    for case in cases:
        turns = [[m["content"] for m in h if m["role"] == "assistant"] for r in debates[case["source"]["item"][5:]]
                 for h in r["responses"]]  # fmt: skip
        first = [a for a in case["answers"] if not a["metadata"]["saw_other_answers"]]
        later = [a for a in case["answers"] if a["metadata"]["saw_other_answers"]]
        assert all("(round 1)" in a["agent_id"] for a in first) and later
        assert all(any(a["text"] == t[0] for t in turns) for a in first)  # round-1 answers as stored
        assert all(any(a["text"] in t[1:] for t in turns) for a in later)  # later answers as stored
        assert {a["metadata"]["model_family"] for a in case["answers"]} == {"gpt-3.5-turbo-0301"}
        agents = {a["agent_id"].split()[0] for a in later}
        assert agents <= {a["agent_id"].split()[0] for a in first}  # every final agent has its round 1 here
    # the echo cascades the debates give, before sampling (the build keeps those with a right mirror of their shape,
    # `structure.py`: few in an eighth); the first 300 debates of the eighth, graded here
    graded = dylan.grade_debates(dylan.read_lines(eighth / "dylan")[:300])
    for _, _, candidate in dylan.cases(graded, 0):
        case = candidate.case
        values = [_boxed_ints(a["text"]) for a in case["answers"]]
        if case["category"] == "echo_cascade" and all(len(v) == 1 for v in values):
            final = {next(iter(v)) for a, v in zip(case["answers"], values, strict=True) if "(final" in a["agent_id"]}
            (value,) = final  # unanimous in the final round
            assert value != case["ground_truth"].strip()  # on a wrong value
            pairs = zip(case["answers"], values, strict=True)
            round1 = [next(iter(v)) for a, v in pairs if "(round 1)" in a["agent_id"]]
            assert value in round1 and set(round1) != {value}  # that a peer gave in a split round 1
            echoes += 1
    assert echoes > 5


def test_the_builds_audit_counts_every_case_of_both_splits(built: Path) -> None:
    # the audit written beside the splits sees dev as its TRAIN and test as its TEST: its composition counts every
    # case, and its overlap checks look inside each file (they saw none when the files were named by their paths)
    dev, test = _cases(built / "dev.jsonl"), _cases(built / "test.jsonl")
    audit = json.loads((built / "audit.json").read_text())
    # the document `fcb audit-dataset` writes, whole: the build once wrote its files without their sha256
    assert documents.check("audit", audit) == []
    assert list(documents.validator("audit").iter_errors(audit)) == []
    assert audit["files"]["test"]["sha256"] == hashlib.sha256((built / "test.jsonl").read_bytes()).hexdigest()
    rows = audit["composition"]["rows"]
    assert sum(r["train"] for r in rows) == len(dev) and sum(r["test"] for r in rows) == len(test)
    expected = Counter((c["category"], c["source"]["dataset"]) for c in test)
    found: Counter = Counter()
    for r in rows:  # one row per category x source x origin
        found[(r["category"], r["source"])] += r["test"]
    assert +found == expected
    within = {k for k in audit["overlap"]["identical_questions"] if k.startswith("within_")}
    assert within == {f"within_{f}_{s}_source" for f in ("train", "test") for s in ("same", "different")}
    # a question asked of two sources (DyLAN's debate and its round 1, GSM8K and ZeroEval) is one item in one split
    pairs = audit["overlap"]["identical_questions"]
    assert pairs["across_files"]["pairs"] == 0
    assert pairs["within_train_different_source"]["pairs"] + pairs["within_test_different_source"]["pairs"] > 0


def test_every_case_says_how_it_was_made(built: Path) -> None:
    for case in _both(built):
        origin = _origin(case)
        meta = [a["metadata"] for a in case["answers"]]
        ours = [m for m in meta if m["shared_context"] or (m["saw_other_answers"] and "model_family" not in m)]
        if origin == "origin_constructed":
            assert ours and ("ours" in case["source"]["modification"] or "We added" in case["source"]["modification"])
        else:
            assert not ours  # natural and assembled cases hold real answers only
        if origin == "origin_natural" and _source(case) != "truthfulqa":
            assert all("model_family" in a["metadata"] for a in case["answers"])  # the real model behind each
        if case["category"] == "anchoring_injected_premise":
            assert all(a["metadata"]["shared_context"] for a in case["answers"]) and origin == "origin_constructed"
        staged = [t for t in case["tags"] if t.startswith("staged_")]  # a case whose dynamics we wrote says which
        assert staged in (["staged_note"], ["staged_echo"]) if origin == "origin_constructed" else staged == []
        assert ("staged_note" in staged) == ("We added a note" in case["source"]["modification"])


def test_the_number_of_answers_says_nothing_of_the_category(built: Path) -> None:
    """Within a source, every category draws its answer counts (and panels) from one distribution."""
    cases = _both(built)
    for source in {_source(c) for c in cases}:
        shares: dict[str, dict[int, float]] = {}
        for category in {c["category"] for c in cases if _source(c) == source}:
            sizes = Counter(len(c["answers"]) for c in cases if _source(c) == source and c["category"] == category)
            if sum(sizes.values()) >= 20:
                shares[category] = {n: k / sum(sizes.values()) for n, k in sizes.items()}
        for n in {n for s in shares.values() for n in s}:
            values = [s.get(n, 0.0) for s in shares.values()]
            assert max(values) - min(values) <= 0.1, (source, n, shares)


def test_truthfulqa_reference_answers_are_never_an_agents_answer(built: Path) -> None:
    columns = ("Best Answer", "Correct Answers", "Incorrect Answers")
    with open(shared() / "truthfulqa" / "TruthfulQA.csv", newline="", encoding="utf-8") as f:
        refs = {(_key(r["Question"]), " ".join(s.lower().split()).rstrip("."))
                for r in csv.DictReader(f) for c in columns for s in r[c].split(";")}  # fmt: skip
    real = [
        (c["source"]["item"].split(":")[1], a["text"])
        for c in _both(built)
        if _source(c) == "truthfulqa"
        for a in c["answers"]
        if not (a["metadata"]["saw_other_answers"] or a["metadata"]["shared_context"])
    ]
    assert real and not [t for k, t in real if (k, " ".join(t.lower().split()).rstrip(".")) in refs]


def test_builds_from_disjoint_questions_share_no_item(eighth: Path, small_built: Path, tmp_path: Path) -> None:
    _build(subset(tmp_path / "src2", part(9, 32), src=eighth), tmp_path / "two")  # beside `small`'s thirty-second
    built = [small_built, tmp_path / "two"]
    items = [{c["source"]["item"] for c in _both(b)} for b in built]
    assert items[0] and items[1] and not items[0] & items[1]
    spec = f"builtin:learned?train={built[0] / 'dev.jsonl'}"
    ok = run_cli("eval", str(built[1] / "test.jsonl"), "-d", spec, "-q", "--results", str(tmp_path / "runs"),
                 "--bootstrap", "0")  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    refused = run_cli("eval", str(built[0] / "dev.jsonl"), "-d", spec, "-q", "--results", str(tmp_path / "runs2"))
    assert refused.returncode == 2 and "refusing to evaluate" in refused.stderr


def test_held_back_wording_changes_only_our_words(small: Path, small_built: Path, tmp_path: Path) -> None:
    _build(small, tmp_path / "held", "--test-wording", "heldout")
    assert (tmp_path / "held" / "dev.jsonl").read_bytes() == (small_built / "dev.jsonl").read_bytes()
    same, other = _cases(small_built / "test.jsonl"), _cases(tmp_path / "held" / "test.jsonl")
    assert len(same) == len(other)
    changed = 0
    for a, b in zip(same, other, strict=True):
        assert (a["id"], a["category"], a["source"]["item"]) == (b["id"], b["category"], b["source"]["item"])
        assert [x["correct"] for x in a["answers"]] == [x["correct"] for x in b["answers"]]
        for x, y in zip(a["answers"], b["answers"], strict=True):
            assert x["text"] == y["text"] or "model_family" not in x["metadata"]
            changed += x["text"] != y["text"]
    assert changed > 20


def test_no_source_text_is_stored_in_the_repository() -> None:
    data, rng = shared(), random.Random(5)
    probes = [json.loads(line)["question"] for line in rng.sample(
        (data / "gsm8k" / "example_model_solutions.jsonl").read_text().splitlines(), 20)]  # fmt: skip
    probes += [r["problem"] for r in rng.sample(gz_rows(data / "dylan" / "math_complex.jsonl.gz"), 20)]
    probes += [r["question"] for r in rng.sample(gz_rows(data / "mmlu-pro" / "outputs" / "Yi-6B.jsonl.gz"), 20)]
    replies = gz_rows(data / "zeroeval" / "math-l5" / "gemma-2-9b-it.jsonl.gz")
    probes += [r["output"][0][:300] for r in rng.sample(replies, 20)]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    corpus = "\n".join((ROOT / f).read_text(errors="ignore") for f in tracked.splitlines() if (ROOT / f).is_file())
    assert [p for p in probes if len(p) > 40 and p in corpus] == []


def test_a_source_that_does_not_read_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "mmlu-pro" / "outputs"
    bad.mkdir(parents=True)
    with gzip.open(bad / "Yi-6B.jsonl.gz", "wt") as f:
        f.write('{"question_id": 1}\n')
    proc = run_cli("build-dataset", "--mmlu-pro", str(tmp_path / "mmlu-pro"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and f"{bad / 'Yi-6B.jsonl.gz'}:1: not an MMLU-Pro record" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert run_cli("build-dataset", "--out", str(tmp_path / "o")).returncode == 2  # no source at all


@pytest.fixture(scope="module")
def whole() -> Path:
    """The whole benchmark as `make dataset` builds it (3-4 minutes on 2 cores: too long for `make test`, so this
    check reads a build given by FCB_BENCHMARK; `make dataset` runs it on the folder it has just written)."""
    import os

    folder = os.environ.get("FCB_BENCHMARK")
    if not folder:
        pytest.skip("the whole-build targets are checked by `make dataset` (set FCB_BENCHMARK=DIR to check a build)")
    return Path(folder)


def test_the_whole_build_meets_the_issues_targets(whole: Path) -> None:
    """Issue 22's targets on `make dataset`: sizes, categories, origins, model families, the audit."""
    dev, test = _cases(whole / "dev.jsonl"), _cases(whole / "test.jsonl")
    assert len(test) >= 2000 and len(dev) >= 2000
    assert min(Counter(c["category"] for c in test).values()) >= 100 and len({c["category"] for c in test}) == 8
    natural = [c for c in test if _origin(c) == "origin_natural"]
    assert len(natural) >= 0.6 * len(test)
    assert len({c["category"] for c in natural}) >= 6
    echoes = [c for c in dev + test if c["category"] == "echo_cascade" and _origin(c) == "origin_natural"]
    assert len(echoes) >= 150
    families = {a["metadata"].get("model_family") for c in test for a in c["answers"]} - {None}
    assert len(families) >= 25
    audit = json.loads((whole / "audit.json").read_text())
    assert audit["verdict"]["status"] == "pass", audit["verdict"]["findings"]
    for baseline in audit["surface"]["baselines"]:
        assert baseline["macro_f1"] <= 0.45 and baseline["risk_macro_f1"] <= 0.45, baseline["name"]
    assert audit["count_leakage"]["count_only_macro_f1"] <= 0.30 and audit["rules"]["total"] == 0
    # the source's known errors are left out (first-cousin marriage is legal in Australia)
    key = hashlib.sha256(" ".join("Can you marry your cousin in Australia?".lower().split()).encode()).hexdigest()
    assert f"truthfulqa:{key[:16]}" not in {c["source"]["item"] for c in dev + test}


def test_the_v4_hand_audit_of_natural_cases_is_kept_and_the_card_gives_its_figures() -> None:
    with open(ROOT / "tests" / "data" / "hand_audit" / "v4-labels.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    earlier: set[str] = set()
    for path in (ROOT / "tests" / "data" / "hand_audit").glob("v3-labels*.csv"):
        with open(path, newline="") as f:
            earlier |= {r["item"] for r in csv.DictReader(f)}
    assert not {r["item"] for r in rows} & earlier  # fresh items only
    assert all(r["reason"] for r in rows if r["verdict"] != "ok")
    verdicts = Counter(r["verdict"] for r in rows)
    right = verdicts["ok"] + verdicts["flag"]
    card = HAND_AUDIT["v4"]
    assert (card["cases"], card["right"], card["verdicts"]) == (len(rows), right, dict(verdicts))
    assert len(rows) == 60 and right >= 59


def test_the_hand_audit_of_the_new_sources_is_kept_and_the_card_gives_its_figures() -> None:
    with open(ROOT / "tests" / "data" / "hand_audit" / "v3-labels.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 200
    assert {r["category"] for r in rows} >= set(CATEGORY_RISK) - {"anchoring_injected_premise"}
    data = shared()
    problems = {r["problem_id"] for name in ("math_cot.jsonl.gz", "math_complex.jsonl.gz")
                for r in gz_rows(data / "dylan" / name)}  # fmt: skip
    problems |= {hashlib.sha256(norm_math(r["problem"]).encode()).hexdigest()[:16]
                 for r in gz_rows(data / "zeroeval" / "math-l5" / "gpt-4o-2024-05-13.jsonl.gz")}  # fmt: skip
    gsm = {hashlib.sha256(norm_gsm(r["question"]).encode()).hexdigest()[:16]
           for r in gz_rows(data / "zeroeval" / "gsm" / "gpt-4o-2024-05-13.jsonl.gz")}  # fmt: skip
    mmlu = {str(r["question_id"]) for r in gz_rows(data / "mmlu-pro" / "outputs" / "Yi-6B.jsonl.gz")}
    for r in rows:  # real source items, by keys computed here from the raw files
        kind, key = r["item"].split(":", 1)
        known = {"math": problems, "gsm8k": gsm, "mmlu-pro": mmlu}.get(kind)
        assert known is None or key in known, r["item"]
    assert all(r["reason"] for r in rows if r["verdict"] != "ok")
    right = sum(r["verdict"] in ("ok", "flag") for r in rows)
    # the card reports what the kept verdicts say, and the issue's bar is 97%
    verdicts = Counter(r["verdict"] for r in rows)
    assert (HAND_AUDIT["cases"], HAND_AUDIT["right"], HAND_AUDIT["verdicts"]) == (len(rows), right, dict(verdicts))
    assert HAND_AUDIT["share_right"] == round(right / len(rows), 3) >= 0.97
