"""Readers of finished runs (leaderboard, compare, history, baseline save) rank and show only figures that follow
from the run's journal, count a run once however often it is reached, and show a run by the name it was given
(issue 24, items 6 and 21)."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli
from sklearn.metrics import f1_score

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 60


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two named runs (``good``: builtin:agreement, ``weak``: builtin:always-low) on cases half of which are natural,
    under ``results/``."""
    tmp = tmp_path_factory.mktemp("figures")
    cases = write_cases(tmp / "cases.jsonl", N)
    rows = read_jsonl(cases)
    for i, case in enumerate(rows):
        case["tags"] = [t for t in case.get("tags", []) if not t.startswith("origin_")]
        case["tags"].append("origin_natural" if i % 2 else "origin_constructed")
    cases.write_text("".join(json.dumps(c) + "\n" for c in rows))
    for name, spec in (("good", "builtin:agreement"), ("weak", "builtin:always-low")):
        out = tmp / "results" / name
        proc = run_cli("eval", str(cases), "-d", spec, "--name", name, "--out", str(out), "-q", "--bootstrap", "50")
        assert proc.returncode == 0, proc.stderr
    return tmp / "results"


def _copy(runs: Path, tmp_path: Path, name: str = "weak") -> Path:
    return Path(shutil.copytree(runs / name, tmp_path / "results" / name))


def _set(run: Path, path: str, value: object) -> None:
    doc = json.loads((run / "metrics.json").read_text())
    node = doc["metrics"]
    *parents, last = path.split(".")
    for key in parents:
        node = node[key]
    node[last] = value
    (run / "metrics.json").write_text(json.dumps(doc))


def _board(*paths: Path) -> list[dict]:
    proc = run_cli("leaderboard", *map(str, paths), "--format", "json", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_ranked_figures_are_the_journal_s(runs: Path) -> None:
    # the figures a leaderboard shows, against an independent computation from the journal (scikit-learn)
    rows = {r["detector"]: r for r in _board(runs)[0]["rows"]}
    for name in ("good", "weak"):
        journal = read_jsonl(runs / name / "predictions.jsonl")
        truth = [r["expected"] for r in journal]
        pred = [r["risk"] or "error" for r in journal]
        present = sorted(set(truth) | set(pred) - {"error"})
        values = rows[name]["values"]
        assert values["accuracy"] == pytest.approx(sum(t == p for t, p in zip(truth, pred, strict=True)) / N)
        assert values["macro_f1"] == pytest.approx(
            f1_score(truth, pred, labels=present, average="macro", zero_division=0)
        )


def test_the_ece_shown_is_the_journal_s(runs: Path) -> None:
    # weak is builtin:always-low: every score 0, all in the first bin, so its ECE is the share of high-risk cases.
    # good is builtin:agreement: its ECE over 15 bins worked out here (a bin: the inner edges k/15 below a score).
    board = _board(runs)[0]
    rows = {r["detector"]: r for r in board["rows"]}
    weak = read_jsonl(runs / "weak" / "predictions.jsonl")
    assert rows["weak"]["values"]["ece"] == pytest.approx(sum(r["expected"] == "high" for r in weak) / N, abs=1e-12)
    good = read_jsonl(runs / "good" / "predictions.jsonl")
    groups: dict[int, list[tuple[float, float]]] = {}
    for r in good:
        groups.setdefault(sum(r["score"] > k / 15 for k in range(1, 15)), []).append(
            (r["expected"] == "high", r["score"])
        )
    ece = sum(len(g) / N * abs(sum(y for y, _ in g) / len(g) - sum(s for _, s in g) / len(g)) for g in groups.values())
    assert rows["good"]["values"]["ece"] == pytest.approx(ece, abs=1e-12)
    assert rows["good"]["values"]["ece_bins"] == rows["weak"]["values"]["ece_bins"] == 15
    md = run_cli("leaderboard", str(runs), "--bootstrap", "50").stdout
    assert "ECE of risk_score (bins)" in md and f"{ece:.3f} (15 bins)" in md
    csv_text = run_cli("leaderboard", str(runs), "--format", "csv", "--bootstrap", "50").stdout
    lines = list(csv.DictReader(io.StringIO(csv_text)))
    assert len(lines) == 2 and all(line["ece_bins"] == "15" for line in lines)
    assert float(next(line for line in lines if line["detector"] == "good")["ece"]) == pytest.approx(ece, abs=1e-12)
    history = run_cli("history", str(runs), "--metric", "ece", "--detector", "good")
    assert history.returncode == 0 and f"{ece:.4f} (15 bins)" in history.stdout, history.stderr


FAKES = {  # a figure of metrics.json and a value its journal does not give
    "macro_f1": 0.99,
    "accuracy": 0.99,
    "error_rate": 0.5,
    "weighted_kappa": 0.9,
    "headline_real.macro_f1": 0.99,
    "n_cases": N - 1,
    "confusion_matrix.counts": [[N, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    "operational.latency_s.p95": 0.0001234,
    "per_category.genuine_disagreement.accuracy": 1.0,
    "scores.calibration.ece": 0.0123,
    "scores.n_scored": N - 2,
}


@pytest.mark.parametrize("path", sorted(FAKES))
def test_a_figure_its_journal_does_not_give_is_refused_by_every_reader(
    runs: Path, tmp_path: Path, path: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    faked = _copy(runs, tmp_path)
    _set(faked, path, FAKES[path])
    said = f"{faked / 'metrics.json'}: metrics.{path}: "
    for args in (("leaderboard", str(runs / "good"), str(faked)), ("history", str(faked)),
                 ("compare", str(runs / "good"), str(faked))):  # fmt: skip
        if path == "macro_f1":  # the real command in a subprocess, as a user runs it
            proc = run_cli(*args)
            code, out, err = proc.returncode, proc.stdout, proc.stderr
        else:  # the same entry point in this process: the other figures without an interpreter start each
            code = main(list(args))
            out, err = capsys.readouterr()
        assert code == 2, (args, out, err)
        assert said in err and "but its journal (predictions.jsonl) gives" in err, err
        assert "Traceback" not in err


def test_an_ece_over_a_journal_without_scores_is_refused(runs: Path, tmp_path: Path) -> None:
    faked = _copy(runs, tmp_path, "good")
    journal = faked / "predictions.jsonl"
    journal.write_text("".join(json.dumps({**r, "score": None}) + "\n" for r in read_jsonl(journal)))
    proc = run_cli("leaderboard", str(faked))
    assert proc.returncode == 2 and f"{faked / 'metrics.json'}: metrics.scores: " in proc.stderr, proc.stderr


def test_a_run_marked_complete_with_cases_missing_from_its_journal_is_refused(runs: Path, tmp_path: Path) -> None:
    # the figures recomputed without the line agree with the journal; `complete` does not
    faked = _copy(runs, tmp_path)
    journal = faked / "predictions.jsonl"
    lines = journal.read_text().splitlines(keepends=True)
    journal.write_text("".join(lines[:-1]))
    proc = run_cli("leaderboard", str(faked))
    assert proc.returncode == 2 and f"{faked / 'metrics.json'}: " in proc.stderr, proc.stderr


def test_a_baseline_whose_figures_its_cases_do_not_give_is_refused(runs: Path, tmp_path: Path) -> None:
    assert run_cli("baseline", "save", str(runs / "weak"), "--name", "w", "--dir", str(tmp_path)).returncode == 0
    saved = tmp_path / "w.json"
    doc = json.loads(saved.read_text())
    doc["doc"]["metrics"]["macro_f1"] = 0.99
    saved.write_text(json.dumps(doc))
    proc = run_cli("leaderboard", str(saved), str(runs / "good"))
    assert proc.returncode == 2 and f"{saved}: doc.metrics.macro_f1: 0.99, but its cases" in proc.stderr


def test_a_run_reached_twice_counts_once(runs: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    shutil.copytree(runs, results)
    (results / "weak-again").symlink_to(results / "weak")  # a symbolic link to a run beside it
    (tmp_path / "link").symlink_to(results)
    for args in ((results,), (results / "weak", results / "weak"), (results, tmp_path / "link" / "weak")):
        rows = {r["detector"]: r for r in _board(*args)[0]["rows"]}
        assert len(rows["weak"]["runs"]) == 1, args
    history = run_cli("history", str(results), "--detector", "weak")
    assert history.returncode == 0 and len(history.stdout.splitlines()[2:]) == 1, history.stdout


def test_compare_and_history_show_and_find_a_run_by_its_name(runs: Path) -> None:
    md = run_cli("compare", str(runs / "weak"), str(runs / "good"), "--format", "md")
    assert md.returncode in (0, 1), md.stderr
    assert "good against baseline weak on" in md.stdout  # names as text (escaped, not in code spans)
    text = run_cli("compare", str(runs / "weak"), str(runs / "good")).stdout
    assert "base: weak (" in text and "new:  good (" in text
    cmp = json.loads(run_cli("compare", str(runs / "weak"), str(runs / "good"), "--format", "json").stdout)
    assert cmp["new"]["detector"] == "good" and cmp["new"]["spec"] == "builtin:agreement"
    for wanted in ("good", "builtin:agreement"):  # by its name, or by its spec
        proc = run_cli("history", str(runs), "--detector", wanted)
        assert proc.returncode == 0, proc.stderr
        rows = [line.split() for line in proc.stdout.splitlines()[2:]]
        assert [row[1] for row in rows] == ["good"], proc.stdout
