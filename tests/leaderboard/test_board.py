"""What ``fcb board`` embeds (`harness.leaderboard.board`), from four real runs in tmp_path: each figure is worked
out again here from the journals and the cases file, read with ``json`` alone (per-category accuracy by counting,
the "all wrong" and "only the best right" sets by their definitions, macro-F1 with scikit-learn)."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from casegen import write_cases
from sklearn.metrics import f1_score

import harness
from harness.errors import RunLoadError
from harness.leaderboard.board import board_views, discover, prediction_letters, relative_link
from harness.leaderboard.board_page import board_html, heatmap_table
from harness.leaderboard.runs import read_run

RISKS = ["low", "medium", "high"]
N = 40
# how often each detector answers the label on a case (otherwise one level up, wrapping): distinct, so no two
# detectors' figures coincide; "flaky" fails on every seventh case
SKILL = {"sharp": 0.8, "fair": 0.6, "dull": 0.35, "flaky": 0.5}


def plan(cases: list[dict], name: str) -> dict[str, str | None]:
    """question -> the risk this detector answers (None: it raises)."""
    rng = np.random.default_rng(sorted(SKILL).index(name) + 11)
    out: dict[str, str | None] = {}
    for i, case in enumerate(cases):
        if name == "flaky" and i % 7 == 3:
            out[case["question"]] = None
            continue
        expected = case["expected_risk"]
        right = rng.random() < SKILL[name]
        out[case["question"]] = expected if right else RISKS[(RISKS.index(expected) + 1) % 3]
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict], dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("board")
    cases_path = write_cases(tmp / "cases.jsonl", N, seed=5, origins=True)
    cases = [json.loads(line) for line in cases_path.read_text().splitlines()]
    folders = {}
    for name in SKILL:
        answers = plan(cases, name)

        def assess(request: dict, answers: dict = answers) -> dict:
            risk = answers[request["task"]]
            if risk is None:
                raise RuntimeError("flaky refuses this one")
            return {"false_consensus_risk": risk, "risk_score": 0.25, "reason": f"said {risk}"}

        folders[name] = tmp / "runs" / name
        harness.evaluate(str(cases_path), assess, name=name, out=str(folders[name]), n_boot=100, preflight=False,
                         max_consecutive_errors=0, progress=False)  # fmt: skip
    return tmp, cases, folders


def journal(folder: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, (folder / "predictions.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def view(made):
    tmp = made[0]
    runs = [read_run(p) for p in discover(tmp / "runs")]
    (only,) = board_views(runs, tmp / "page", n_boot=200, seed=1)
    return only


def truth_and_predictions(made, view) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Ids in id order, and per detector (by label) each case's risk or "error", from the journals."""
    _, cases, folders = made
    ids = sorted(c["id"] for c in cases)
    return ids, {name: {i: r["risk"] or "error" for i, r in journal(f).items()} for name, f in folders.items()}


def test_discover_finds_run_folders_below_a_folder(made) -> None:
    tmp, _, folders = made
    assert discover(tmp) == sorted(folders.values())  # tmp/runs/NAME: two levels down
    assert discover(folders["fair"]) == [folders["fair"]]
    with pytest.raises(RunLoadError, match="no such folder"):
        discover(tmp / "absent")


def test_runs_are_in_board_order_and_predictions_are_letters(made, view) -> None:
    ids, preds = truth_and_predictions(made, view)
    labels = [r["label"] for r in view.data["runs"]]
    assert sorted(labels) == sorted(SKILL) and labels == [row.detector for row in view.board.rows]
    assert view.data["ids"] == ids
    by_id = {c["id"]: c for c in made[1]}
    assert view.data["exp"] == "".join(by_id[i]["expected_risk"][0] for i in ids)
    for k, label in enumerate(labels):
        assert view.data["pred"][k] == "".join("e" if preds[label][i] == "error" else preds[label][i][0] for i in ids)
    flaky = labels.index("flaky")
    errors = view.data["err"][flaky]
    assert sorted(errors) == [ids.index(c["id"]) for i, c in enumerate(made[1]) if i % 7 == 3]
    assert all(e[0] == "detector_exception" and "flaky refuses this one" in e[1] for e in errors.values())
    sharp = labels.index("sharp")
    assert view.data["reply"][sharp][0] == json.dumps(
        {"reason": f"said {preds['sharp'][ids[0]]}"}, separators=(",", ":")
    )
    assert prediction_letters(np.array([0, 3, 2]), np.array([True, True, False])) == "le-"


def test_heatmap_is_accuracy_per_category_counted_from_the_journals(made, view) -> None:
    ids, preds = truth_and_predictions(made, view)
    by_id = {c["id"]: c for c in made[1]}
    cats = sorted({c["category"] for c in made[1]})
    assert view.data["cats"] == cats
    html = heatmap_table(view, 0)
    for k, entry in enumerate(view.data["runs"]):
        got = preds[entry["label"]]
        for j, cat in enumerate(cats):
            in_cat = [i for i in ids if by_id[i]["category"] == cat]
            right = sum(got[i] == by_id[i]["expected_risk"] for i in in_cat)
            assert view.heatmap[k][j] == (right, len(in_cat)), (entry["label"], cat)
            cell = re.search(rf'data-run="{k}" data-cat="{j}" data-right="(\d+)" data-n="(\d+)"[^>]*>([^<]+)<', html)
            assert cell and cell.groups() == (str(right), str(len(in_cat)), f"{right / len(in_cat):.3f}")
    assert len({tuple(row) for row in view.heatmap}) == len(SKILL)  # no two detectors' rows coincide


def test_the_best_run_and_the_sets_the_filters_show(made, view) -> None:
    ids, preds = truth_and_predictions(made, view)
    by_id = {c["id"]: c for c in made[1]}
    truth = [by_id[i]["expected_risk"] for i in ids]
    f1 = {n: f1_score(truth, [p[i] for i in ids], labels=RISKS, average="macro", zero_division=0)
          for n, p in preds.items()}  # fmt: skip
    labels = [r["label"] for r in view.data["runs"]]
    best = max(f1, key=f1.get)
    assert labels[view.data["best"]] == best == "sharp"
    right = {n: {i for i in ids if p[i] == by_id[i]["expected_risk"]} for n, p in preds.items()}
    all_wrong = set(ids) - set().union(*right.values())
    only_best = right[best] - set().union(*(r for n, r in right.items() if n != best))
    # what the page filters on, from the embedded letters, by the page's own rules
    data, n_runs = view.data, len(labels)
    hits = [sum(data["pred"][k][i] == data["exp"][i] for k in range(n_runs)) for i in range(len(ids))]
    assert {ids[i] for i in range(len(ids)) if hits[i] == 0} == all_wrong and all_wrong
    b = data["best"]
    assert {ids[i] for i in range(len(ids)) if hits[i] == 1 and data["pred"][b][i] == data["exp"][i]} == only_best
    assert only_best
    assert data["items"]["difficulty"] == pytest.approx([sum(i in r for r in right.values()) / 4 for i in ids])


def test_the_natural_ranking_is_over_the_natural_cases_alone(made, view) -> None:
    _, preds = truth_and_predictions(made, view)
    natural = [c for c in made[1] if "origin_natural" in c["tags"]]
    assert 0 < len(natural) < N
    truth = [c["expected_risk"] for c in natural]
    for row in view.natural:
        got = [preds[row["detector"]][c["id"]] for c in natural]
        assert row["cases"] == len(natural)
        assert row["accuracy"] == pytest.approx(sum(g == t for g, t in zip(got, truth, strict=True)) / len(natural))
        f1 = f1_score(truth, got, labels=sorted(set(truth) | set(got) - {"error"}), average="macro", zero_division=0)
        assert row["macro_f1"] == pytest.approx(f1)
        lo, hi = row["macro_f1_ci"]
        assert lo <= row["macro_f1"] + 1e-9 and row["macro_f1"] - 1e-9 <= hi
    assert [r["detector"] for r in view.natural] == [r["label"] for r in view.data["runs"]]
    assert view.natural[0]["rank"].startswith("1")


def test_case_text_once_and_links_to_each_report(made, view) -> None:
    tmp, cases, folders = made
    by_id = {c["id"]: c for c in cases}
    for i, text in zip(view.data["ids"], view.data["text"], strict=True):
        case = by_id[i]
        assert text[0] == case["question"]
        assert text[1] == [[a["agent_id"], a["text"]] for a in case["answers"]]
    for entry in view.data["runs"]:
        target = os.path.normpath(tmp / "page" / entry["report"])
        assert target == str(folders[entry["label"]] / "report.html") and Path(target).is_file()
    page = board_html([view])
    assert page.count(cases[0]["question"]) == 0  # the text is packed (gzip), never repeated in the markup
    assert "http://" not in page and "https://" not in page and "<script src" not in page


def test_a_changed_cases_file_gives_no_text_and_says_why(made, tmp_path: Path) -> None:
    tmp, _, folders = made
    copied = tmp_path / "runs" / "fair"
    shutil.copytree(folders["fair"], copied)
    metrics = json.loads((copied / "metrics.json").read_text())
    edited = tmp_path / "cases.jsonl"
    edited.write_text((tmp / "cases.jsonl").read_text() + "\n")  # one byte more: another sha256
    metrics["dataset"]["path"] = str(edited)
    (copied / "metrics.json").write_text(json.dumps(metrics))
    (only,) = board_views([read_run(copied)], tmp_path, n_boot=0)
    assert only.data["text"] is None and "case text unavailable" in " ".join(only.notes)
    assert only.data["items"] is None  # one run: no items analysis, and a note says so
    assert Counter(n.split(" ")[0] for n in only.notes)["the"] == 1


def test_a_report_link_is_relative_and_never_a_scheme(tmp_path: Path) -> None:
    page = tmp_path / "page"
    odd = tmp_path / "javascript:alert(1)#x" / "report.html"
    assert relative_link(odd, page) == "../javascript%3Aalert%281%29%23x/report.html"
    assert relative_link(page / "runs" / "a b" / "report.html", page) == "./runs/a%20b/report.html"


def test_two_runs_of_one_detector_are_told_apart_by_folder(made, tmp_path: Path) -> None:
    folders = made[2]
    again = tmp_path / "fair-again"
    shutil.copytree(folders["fair"], again)
    runs = [read_run(folders["fair"]), read_run(again), read_run(folders["sharp"])]
    (only,) = board_views(runs, tmp_path, n_boot=0)
    assert sorted(r["label"] for r in only.data["runs"]) == ["fair (fair)", "fair (fair-again)", "sharp"]
    assert "two runs of detector 'fair'" in " ".join(only.notes)  # no items analysis over one detector twice
