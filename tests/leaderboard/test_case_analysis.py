"""``fcb cases`` on real run folders: five detectors served over HTTP on 127.0.0.1, each answering a chosen risk (or
a reply without one, an error) per case, evaluated by the real CLI. Every figure is checked against a second
computation written here from the chosen answers alone: macro-F1 with scikit-learn, difficulty by counting, the
point-biserial correlation by its textbook formula, the suspect list by its stated rule."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from casegen import write_cases
from conftest import Server, run_cli
from sklearn.metrics import f1_score

from harness import documents

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

RISKS = ("low", "medium", "high")
N_CASES = 48
# how often each detector is right on the unplanted cases: five distinct levels, so macro-F1 orders them
RIGHT_SHARE = {"d-best": 0.85, "d-good": 0.7, "d-fair": 0.55, "d-weak": 0.4, "d-poor": 0.25}
ERROR_SHARE = {"d-best": 0.0, "d-good": 0.05, "d-fair": 0.1, "d-weak": 0.0, "d-poor": 0.08}


def shifted(risk: str, by: int) -> str:
    return RISKS[(RISKS.index(risk) + by) % 3]


def choose_answers(cases: list[dict]) -> dict[str, dict[str, str | None]]:
    """Each detector's answer per case id (None: a reply without a risk, which the harness journals as an error):
    drawn with a seed, then planted cases whose outcome the suspect rule must decide."""
    rng = np.random.default_rng(5)
    answers: dict[str, dict[str, str | None]] = {name: {} for name in RIGHT_SHARE}
    for case in cases:
        for name in RIGHT_SHARE:
            draw = rng.random()
            if draw < ERROR_SHARE[name]:
                answers[name][case["id"]] = None
            elif draw < ERROR_SHARE[name] + RIGHT_SHARE[name] * (1 - ERROR_SHARE[name]):
                answers[name][case["id"]] = case["expected_risk"]
            else:
                answers[name][case["id"]] = shifted(case["expected_risk"], int(rng.integers(1, 3)))
    expected = {c["id"]: c["expected_risk"] for c in cases}
    top3, rest = ("d-best", "d-good", "d-fair"), ("d-weak", "d-poor")

    def plant(case_id: str, top: tuple, others: tuple) -> None:
        for name, answer in zip(top3 + rest, top + others, strict=True):
            answers[name][case_id] = answer if answer in (None, *RISKS) else shifted(expected[case_id], answer)

    # suspects: the three strongest agree on one wrong risk; all five (5 agreeing), four, and three of them
    plant("FCB-0001", (1, 1, 1), (1, 1))
    plant("FCB-0002", (2, 2, 2), (1, 0))
    plant("FCB-0003", (1, 1, 1), (0, 0))
    plant("FCB-0004", (2, 2, 2), (2, 0))  # 4 agreeing, as FCB-0002's and FCB-0009's ties are broken by distance
    plant("FCB-0009", (1, 1, 1), (1, 0))
    # not suspects: the strongest wrong but split; wrong alike with one of them errored; all errored; one right
    plant("FCB-0005", (1, 2, 1), (1, 1))
    plant("FCB-0006", (1, None, 1), (1, 1))
    plant("FCB-0007", (None, None, None), (1, 1))
    plant("FCB-0008", (0, 1, 1), (1, 1))
    plant("FCB-0010", (0, 0, 0), (0, 0))  # every detector right: discrimination undefined
    return answers


def macro_f1(truth: list[str], answers: list[str | None]) -> float:
    """scikit-learn's macro-F1 over the classes present in the labels or the predictions; an error (coded "error")
    is a wrong prediction of no class."""
    predicted = [a or "error" for a in answers]
    labels = [r for r in RISKS if r in truth or r in predicted]
    return float(f1_score(truth, predicted, labels=labels, average="macro", zero_division=0))


def point_biserial(right: list[bool], scores: list[float]) -> float | None:
    """r = (M1 - M0) / s * sqrt(p * q), s the population standard deviation of the scores; None when undefined."""
    n, n1 = len(right), sum(right)
    if n1 in (0, n):
        return None
    m1 = sum(s for s, r in zip(scores, right, strict=True) if r) / n1
    m0 = sum(s for s, r in zip(scores, right, strict=True) if not r) / (n - n1)
    mean = sum(scores) / n
    s = math.sqrt(sum((x - mean) ** 2 for x in scores) / n)
    return (m1 - m0) / s * math.sqrt(n1 / n * (n - n1) / n)


@pytest.fixture(scope="module")
def cases_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_cases(tmp_path_factory.mktemp("items-data") / "cases.jsonl", N_CASES, origins=True)


def evaluate(cases: Path, answers: dict[str, str | None], name: str, server: Callable[..., Server], out: Path) -> Path:
    """A real run folder: the CLI against a server answering from ``answers`` (by question text)."""
    by_task = {c["question"]: answers[c["id"]] for c in map(json.loads, cases.read_text().splitlines())}
    table = out.parent / f"{name}-answers.json"
    table.parent.mkdir(parents=True, exist_ok=True)
    table.write_text(json.dumps(by_task))
    url = server("--answers", str(table)).url
    args = ("-d", url, "--name", name, "--out", str(out), "--bootstrap", "0", "-q", "--no-preflight")
    proc = run_cli("eval", str(cases), *args, "--max-consecutive-errors", "0", "--retries", "0")
    assert proc.returncode == 0, proc.stderr
    return out


def test_figures_match_a_computation_from_the_chosen_answers(
    cases_file: Path, tmp_path: Path, detector_server: Callable[..., Server]
) -> None:
    cases = [json.loads(line) for line in cases_file.read_text().splitlines()]
    answers = choose_answers(cases)
    runs = [evaluate(cases_file, answers[n], n, detector_server, tmp_path / "runs" / n) for n in RIGHT_SHARE]
    proc = run_cli("cases", *map(str, runs), "--out", str(tmp_path / "cases"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "cases" / "case-analysis.json").read_text())
    assert documents.check("case-analysis", doc) == []
    assert list(documents.validator("case-analysis").iter_errors(doc)) == []

    ids = [c["id"] for c in cases]
    truth = [c["expected_risk"] for c in cases]
    names = list(RIGHT_SHARE)
    scores = [macro_f1(truth, [answers[n][i] for i in ids]) for n in names]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 5  # distinct, in the chosen order
    assert [d["detector"] for d in doc["detectors"]] == names
    assert [d["macro_f1"] for d in doc["detectors"]] == pytest.approx(scores)
    assert [d["strongest"] for d in doc["detectors"]] == [True, True, True, False, False]
    assert [d["errors"] for d in doc["detectors"]] == [sum(answers[n][i] is None for i in ids) for n in names]

    by_id = {c["id"]: c for c in doc["cases"]}
    assert sorted(by_id) == ids
    for case in cases:
        row, cid = by_id[case["id"]], case["id"]
        right = [answers[n][cid] == case["expected_risk"] for n in names]
        assert row["right"] == sum(right), cid
        assert row["errored"] == sum(answers[n][cid] is None for n in names), cid
        assert row["difficulty"] == pytest.approx(sum(right) / 5), cid
        assert row["predicted"] == "".join((answers[n][cid] or "e")[0] for n in names), cid
        assert row["expected"] == case["expected_risk"] and row["category"] == case["category"]
        assert row["origin"] == next(t for t in case["tags"] if t.startswith("origin_")).removeprefix("origin_")
        wanted = point_biserial(right, scores)
        if wanted is None:
            assert row["discrimination"] is None, cid
        else:
            assert row["discrimination"] == pytest.approx(wanted, abs=1e-9), cid

    # the suspect rule, applied here from the answers: the three strongest agree on one risk that is not the label
    suspects = []
    for cid, label in zip(ids, truth, strict=True):
        top = {answers[n][cid] for n in names[:3]}
        if len(top) == 1 and None not in top and label not in top:
            (risk,) = top
            agreeing = sum(answers[n][cid] == risk for n in names)
            distance = abs(RISKS.index(risk) - RISKS.index(label))
            suspects.append((-agreeing, -distance, cid, risk))
    suspects.sort()
    assert [s["id"] for s in doc["suspects"]] == [s[2] for s in suspects]
    assert [s["predicted"] for s in doc["suspects"]] == [s[3] for s in suspects]
    assert [s["agreeing"] for s in doc["suspects"]] == [-s[0] for s in suspects]
    planted = {"FCB-0001", "FCB-0002", "FCB-0003", "FCB-0004", "FCB-0009"}
    assert planted <= {s["id"] for s in doc["suspects"]}
    assert not {"FCB-0005", "FCB-0006", "FCB-0007", "FCB-0008", "FCB-0010"} & {s["id"] for s in doc["suspects"]}
    assert doc["suspects"][0]["id"] == "FCB-0001"  # all five agree
    assert by_id["FCB-0010"]["discrimination"] is None and by_id["FCB-0007"]["errored"] == 3

    summary = doc["summary"]
    errored = sum(answers[n][i] is None for n in names for i in ids)
    assert summary["errored_predictions"] == errored > 0
    assert summary["suspects"] == len(suspects) == sum(c["suspect"] for c in doc["cases"])
    assert summary["all_right"] == sum(all(answers[n][i] == t for n in names) for i, t in zip(ids, truth, strict=True))
    assert summary["discrimination_undefined"] == sum(c["discrimination"] is None for c in doc["cases"])

    markdown = (tmp_path / "cases" / "case-analysis.md").read_text()
    section = markdown.split("### Suspect labels")[1].split("###")[0]
    listed = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| FCB-")]
    assert listed == [s[2] for s in suspects][:20]
    printed = run_cli("cases", *map(str, runs), "--format", "json")
    assert printed.returncode == 0 and json.loads(printed.stdout) == doc


def test_runs_on_different_data_sets_are_refused(cases_file: Path, tmp_path: Path) -> None:
    other = write_cases(tmp_path / "other.jsonl", 20, seed=3)
    runs = []
    for cases, spec in (
        (cases_file, "builtin:heuristic"),
        (cases_file, "builtin:agreement"),
        (other, "builtin:always-low"),
    ):
        out = tmp_path / spec.split(":")[1]
        assert run_cli("eval", str(cases), "-d", spec, "--out", str(out), "--bootstrap", "0", "-q").returncode == 0
        runs.append(str(out))
    proc = run_cli("cases", *runs)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "fcb cases: the runs are on 2 different data sets" in proc.stderr
    assert "cases.jsonl (sha256" in proc.stderr and "other.jsonl (sha256" in proc.stderr
    assert "give runs of one data set" in proc.stderr
    ok = run_cli("cases", *runs[:2], "--strongest", "2", "--format", "json")  # the two of one data set are fine
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["summary"]["detectors"] == 2


def test_runs_on_different_cases_and_a_detector_given_twice_are_refused(cases_file: Path, tmp_path: Path) -> None:
    def run(name: str, *extra: str) -> str:
        out = tmp_path / name
        args = ("-d", "builtin:agreement", "--name", name, "--out", str(out), "--bootstrap", "0", "-q", *extra)
        assert run_cli("eval", str(cases_file), *args).returncode == 0
        return str(out)

    first, second, again = run("a"), run("b"), run("a-again")
    metrics = json.loads((Path(again) / "metrics.json").read_text())
    metrics["detector"]["label"] = "a"  # as two runs given the same --name
    (Path(again) / "metrics.json").write_text(json.dumps(metrics))
    twice = run_cli("cases", first, second, again)
    assert twice.returncode == 2 and "two runs of detector 'a'" in twice.stderr
    limited = run("limited", "--limit", "10")
    proc = run_cli("cases", first, second, limited)
    assert proc.returncode == 2
    assert f"{limited}: 10 of the data set's {N_CASES} cases, and {N_CASES - 10} case(s) are in one" in proc.stderr
    assert "every run must hold the same cases" in proc.stderr
    few = run_cli("cases", first, second)
    assert few.returncode == 2 and "at least --strongest (3) runs" in few.stderr


def test_the_old_names_fcb_items_and_the_items_schema_still_work() -> None:
    shown = run_cli("items", "--help")
    assert shown.returncode == 0 and shown.stdout == run_cli("cases", "--help").stdout and "--strongest" in shown.stdout
    assert run_cli("schema", "items").stdout == run_cli("schema", "case-analysis").stdout != ""
