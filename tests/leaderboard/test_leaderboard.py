"""Leaderboards and comparisons built from runs whose per-case outcomes are chosen, checked against hand-derived
answers: order, shared ranks, the median rule, separate data sets, compare's exit codes and flipped cases."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli
from runkit import ids, make_run

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> Path:
    return write_cases(tmp_path_factory.mktemp("data") / "cases.jsonl", 200)


def board(*paths: Path, extra: tuple[str, ...] = ()) -> list[dict]:
    proc = run_cli("leaderboard", *map(str, paths), "--format", "json", *extra)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_order_shared_ranks_and_median_rule(cases: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    make_run(cases, results, ids(1, 180), "strong")  # right on 180 of 200
    make_run(cases, results, ids(1, 179) | {"FCB-0200"}, "strong-twin")  # differs from strong on two cases only
    make_run(cases, results, ids(1, 100), "middling")  # 100 of 200
    for last in (40, 60, 160):  # three runs: 40, 60 and 160 right; the median run has 60 right
        make_run(cases, results, ids(1, last), "erratic")
    boards = board(results, extra=("--metric", "accuracy"))
    assert len(boards) == 1
    rows = {r["detector"]: r for r in boards[0]["rows"]}
    # strong and strong-twin cannot be told apart (they differ on 2 cases): they share rank 1
    assert rows["strong"]["rank_label"] == "1=" and rows["strong-twin"]["rank_label"] == "1="
    # 180 vs 100 right of 200 is far outside bootstrap noise: both strong detectors beat middling
    assert rows["middling"]["rank"] == 3
    # erratic's median run has 60 right: accuracy 0.30, below middling's 0.50 by 40 cases
    assert rows["erratic"]["values"]["accuracy"] == pytest.approx(60 / 200)
    assert len(rows["erratic"]["runs"]) == 3
    assert rows["erratic"]["rank"] == 4
    assert [r["detector"] for r in boards[0]["rows"]][:2] == ["strong", "strong-twin"]  # ties ordered by value


def test_data_sets_are_never_mixed_and_incomplete_runs_are_marked(cases: Path, tmp_path: Path) -> None:
    other = write_cases(tmp_path / "other.jsonl", 80, seed=11)
    results = tmp_path / "results"
    make_run(cases, results, ids(1, 150), "alpha")
    make_run(other, results, ids(1, 10), "alpha")
    limited = run_cli("eval", str(cases), "-d", "builtin:always-low", "--limit", "20", "-q", "--results", str(results))
    assert limited.returncode == 0
    boards = board(results)
    assert [b["dataset"]["cases"] for b in boards] == [200, 80]
    assert {b["dataset"]["name"] for b in boards} == {"cases.jsonl", "other.jsonl"}
    big = {r["detector"]: r for r in boards[0]["rows"]}
    assert big["alpha"]["values"]["accuracy"] == pytest.approx(150 / 200)
    assert big["builtin:always-low"]["rank"] is None and big["builtin:always-low"]["incomplete"]
    assert {r["detector"]: r for r in boards[1]["rows"]}["alpha"]["values"]["accuracy"] == pytest.approx(10 / 80)
    included = {r["detector"]: r for r in board(results, extra=("--include-incomplete",))[0]["rows"]}
    assert included["builtin:always-low"]["rank"] == 2  # ranked, with its 180 unfinished cases as errors
    md = run_cli("leaderboard", str(results)).stdout
    assert "other.jsonl (sha256" in md and "(incomplete)" in md


def test_compare_exit_codes_and_flipped_cases(cases: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    base = make_run(cases, results, ids(1, 150), "v1")
    same = make_run(cases, results, ids(1, 150), "v1-again")
    worse = make_run(cases, results, ids(51, 160), "v2")  # loses FCB-0001..0050, gains FCB-0151..0160
    one_off = make_run(cases, results, ids(1, 149), "v1-minus-one")

    assert run_cli("compare", str(base), str(same)).returncode == 0
    assert run_cli("compare", str(base), str(one_off)).returncode == 0  # 0.5% drop: under --max-drop
    proc = run_cli("compare", str(base), str(worse), "--format", "json")
    assert proc.returncode == 1
    cmp = json.loads(proc.stdout)
    flips = cmp["flipped"]
    assert {f["id"] for f in flips["right_to_wrong"]} == ids(1, 50)
    assert {f["id"] for f in flips["wrong_to_right"]} == ids(151, 160)
    categories = {json.loads(line)["id"]: json.loads(line)["category"] for line in cases.read_text().splitlines()}
    assert all(f["category"] == categories[f["id"]] for f in flips["right_to_wrong"])
    accuracy = cmp["metrics"]["accuracy"]
    assert accuracy["base"] == pytest.approx(0.75) and accuracy["new"] == pytest.approx(110 / 200)
    assert accuracy["delta"] == pytest.approx(-0.2) and accuracy["regression"]
    assert accuracy["ci"][1] < 0
    # an accuracy drop of 0.2 is not a regression when up to 0.25 is tolerated
    tolerant = run_cli("compare", str(base), str(worse), "--max-drop", "0.25", "--format", "json")
    verdicts = json.loads(tolerant.stdout)["metrics"]
    assert verdicts["accuracy"]["regression"] is False
    assert tolerant.returncode == (1 if any(m["regression"] for m in verdicts.values()) else 0)
    assert run_cli("compare", str(base), str(worse), "--max-drop", "1").returncode == 0  # no metric can drop by 1+

    md = run_cli("compare", str(base), str(worse), "--format", "md").stdout
    assert md.startswith("## :x:") and "FCB-0001 (" in md

    other = write_cases(tmp_path / "other.jsonl", 40, seed=3)
    foreign = make_run(other, results, ids(1, 40), "v1")
    refused = run_cli("compare", str(base), str(foreign))
    assert refused.returncode == 2 and "different data sets" in refused.stderr


def test_baseline_file_stands_in_for_its_run(cases: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    base = make_run(cases, results, ids(1, 150), "v1")
    new = make_run(cases, results, ids(21, 170), "v2")
    baselines = tmp_path / "baselines"
    assert run_cli("baseline", "save", str(base), "--name", "v1", "--dir", str(baselines)).returncode == 0
    saved = baselines / "v1.json"
    assert saved.stat().st_size < (base / "predictions.jsonl").stat().st_size
    from_run = json.loads(run_cli("compare", str(base), str(new), "--format", "json").stdout)
    from_file = json.loads(run_cli("compare", str(saved), str(new), "--format", "json").stdout)
    assert from_file["metrics"] == from_run["metrics"] and from_file["flipped"] == from_run["flipped"]


def test_history_prints_runs_in_time_order_and_writes_a_plot(cases: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    for last in (100, 120, 140):
        make_run(cases, results, ids(1, last), "grower")
    make_run(cases, results, ids(1, 10), "other")
    proc = run_cli("history", str(results), "--detector", "grower", "--metric", "accuracy")
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stdout.splitlines() if "grower" in line]
    assert [float(line.split()[2]) for line in lines] == [0.5, 0.6, 0.7]
    assert "other" not in proc.stdout
    png = results / "history-accuracy.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_make_regress_against_the_committed_baseline() -> None:
    baseline = "BASELINE=results/baselines/builtin-agreement-embedded.json"
    # make runs in the environment running these tests, which has the package already: BIN points at its fcb and
    # an empty RUNTIME drops the target's install step, so no second venv is built (nor anything downloaded)
    make = ["make", "-s", f"BIN={Path(sys.executable).parent}", "RUNTIME="]
    ok = subprocess.run(
        [*make, "regress", "DETECTOR=builtin:agreement", baseline],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "no significant regression" in ok.stdout
    worse = subprocess.run(
        [*make, "regress", "DETECTOR=builtin:always-low", baseline],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert worse.returncode != 0 and "REGRESSION" in worse.stdout


def test_each_detector_shows_its_margin_over_builtin_vote(cases: Path, tmp_path: Path) -> None:
    results = tmp_path / "results"
    strong = make_run(cases, results, ids(1, 180), "strong")
    proc = run_cli("eval", str(cases), "-d", "builtin:vote", "-q", "--results", str(results), "--bootstrap", "200")
    assert proc.returncode == 0, proc.stderr
    vote = next(p for p in results.iterdir() if p != strong)
    docs = {p: json.loads((p / "metrics.json").read_text())["metrics"] for p in (strong, vote)}
    own = {p: m["macro_f1"] for p, m in docs.items()}
    rows = {r["detector"]: r for r in board(results)[0]["rows"]}
    margin = rows["strong"]["values"]["vote_margin"]
    assert margin == pytest.approx(own[strong] - own[vote])  # each run's own macro-F1, read from its folder
    low, high = rows["strong"]["ci95_by_metric"]["vote_margin"]
    assert low < margin < high
    assert (
        rows["builtin:vote"]["values"]["vote_margin"] == 0
        and rows["builtin:vote"]["ci95_by_metric"]["vote_margin"] is None
    )
    text = run_cli("leaderboard", str(results), "--format", "md").stdout
    assert "macro_f1 over builtin:vote [95% CI]" in text and f"{margin:+.3f} [" in text
    assert re.search(r"\| builtin\\:vote \|.*\| baseline +\|", text)  # the vote's own row: no margin to itself
    # each run's balanced accuracy on the cases with a consensus, as its own metrics.json states it
    for name, path in (("strong", strong), ("builtin:vote", vote)):
        assert rows[name]["values"]["consensus.balanced_accuracy"] == docs[path]["consensus"]["balanced_accuracy"]
    assert "consensus balanced accuracy" in text
    csv_text = run_cli("leaderboard", str(results), "--format", "csv").stdout
    (record,) = [r for r in csv.DictReader(io.StringIO(csv_text)) if r["detector"] == "strong"]
    assert float(record["vote_margin"]) == pytest.approx(margin)
    assert float(record["vote_margin_ci_low"]) == pytest.approx(low) and float(record["consensus_balanced_accuracy"])


def test_a_board_without_a_vote_run_says_how_to_get_the_margin(cases: Path, tmp_path: Path) -> None:
    make_run(cases, tmp_path / "results", ids(1, 150), "alone")
    text = run_cli("leaderboard", str(tmp_path / "results"), "--format", "md").stdout
    assert "over builtin:vote" not in text.split("\n\n")[1]  # no such column in the table
    assert "fcb eval CASES -d builtin:vote" in text
