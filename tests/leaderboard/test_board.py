"""What ``fcb board`` embeds (`harness.leaderboard.board`), from four real runs in tmp_path: each figure is worked
out again here from the journals and the cases file, read with ``json`` alone (per-category accuracy by counting,
the "all wrong" and "only the best right" sets by their definitions, macro-F1 with scikit-learn)."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from casegen import write_cases
from sklearn.metrics import f1_score

import harness
from harness.errors import RunLoadError
from harness.leaderboard.board import best_run, board_views, prediction_letters, relative_link
from harness.leaderboard.board_page import board_html, heatmap_table, natural_table
from harness.leaderboard.rank import build_boards
from harness.leaderboard.runs import baseline_document, discover, read_run

RISKS = ["low", "medium", "high"]
N = 40
# how often each detector answers the label on a case (otherwise one level up, wrapping): distinct, so no two
# detectors' figures coincide; "flaky" fails on every seventh case, "dull" gives no risk_score
SKILL = {"sharp": 0.8, "fair": 0.6, "dull": 0.35, "flaky": 0.5}
KEYS = {
    "runs",
    "best",
    "ids",
    "cats",
    "cat",
    "exp",
    "origin",
    "pred",
    "score",
    "err",
    "reply",
    "analysis",
    "text",
    "notes",
}
"""What the page's script reads of a data set (harness/data/board.js): nothing more is embedded."""


def plan(cases: list[dict], name: str) -> dict[str, dict | None]:
    """question -> this detector's reply (None: it raises). "fair" gives a reason of exactly 400 characters of
    JSON on the first case and a longer one on the second (the page keeps 400)."""
    rng = np.random.default_rng(sorted(SKILL).index(name) + 11)
    out: dict[str, dict | None] = {}
    for i, case in enumerate(cases):
        if name == "flaky" and i % 7 == 3:
            out[case["question"]] = None
            continue
        expected = case["expected_risk"]
        right = rng.random() < SKILL[name]
        risk = expected if right else RISKS[(RISKS.index(expected) + 1) % 3]
        reason = {0: "x" * 387, 1: "y" * 600}.get(i, f"said {risk}") if name == "fair" else f"said {risk}"
        reply = {"false_consensus_risk": risk, "reason": reason}
        if name != "dull":
            reply["risk_score"] = round(float(rng.random()), 6)
        out[case["question"]] = reply
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
            reply = answers[request["task"]]
            if reply is None:
                raise RuntimeError("flaky refuses this one")
            return reply

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
    (only,) = board_views(runs, tmp / "page", n_boot=200, seed=1, strongest=3)
    return only


def truth_and_predictions(made, view) -> tuple[list[str], dict[str, dict[str, str]]]:
    """Ids in id order, and per detector (by label) each case's risk or "error", from the journals."""
    _, cases, folders = made
    ids = sorted(c["id"] for c in cases)
    return ids, {name: {i: r["risk"] or "error" for i, r in journal(f).items()} for name, f in folders.items()}


def by_hand_suspects(made, k: int) -> list[int]:
    """1 where the k detectors of highest macro-F1 (scikit-learn; ties impossible here) all predict the same risk and
    it is not the label (an error is never that prediction), else 0; in id order."""
    ids, preds = truth_and_predictions(made, None)
    by_id = {c["id"]: c for c in made[1]}
    truth = [by_id[i]["expected_risk"] for i in ids]
    f1 = {n: f1_score(truth, [p[i] for i in ids], labels=RISKS, average="macro", zero_division=0)
          for n, p in preds.items()}  # fmt: skip
    top = sorted(f1, key=f1.get, reverse=True)[:k]
    out = []
    for i, t in zip(ids, truth, strict=True):
        said = {preds[n][i] for n in top}
        out.append(int(len(said) == 1 and said != {"error"} and said != {t}))
    return out


def point_biserial(right: list[int], scores: list[float]) -> float | None:
    """r = (M1 - M0) / s * sqrt(p q), s the population standard deviation of the scores."""
    n, n1 = len(right), sum(right)
    if n1 in (0, n):
        return None
    m1 = sum(s for s, r in zip(scores, right, strict=True) if r) / n1
    m0 = sum(s for s, r in zip(scores, right, strict=True) if not r) / (n - n1)
    mean = sum(scores) / n
    sd = (sum((x - mean) ** 2 for x in scores) / n) ** 0.5
    return (m1 - m0) / sd * (n1 / n * (n - n1) / n) ** 0.5


def test_discover_finds_run_folders_three_levels_down_and_no_deeper(made, tmp_path: Path) -> None:
    tmp, _, folders = made
    assert discover(tmp) == sorted(folders.values())  # tmp/runs/NAME: two levels down
    assert discover(folders["fair"]) == [folders["fair"]]
    for depth in (3, 4):
        deep = tmp_path / f"d{depth}" / Path(*["x"] * (depth - 1)) / "run"
        shutil.copytree(folders["fair"], deep)
        assert discover(tmp_path / f"d{depth}") == ([deep] if depth == 3 else [])
    with pytest.raises(RunLoadError, match="no such folder"):
        discover(tmp / "absent")


def test_the_data_holds_what_the_page_reads_and_nothing_else(made, view) -> None:
    assert set(view.data) == KEYS and set(view.data["analysis"]) == {"difficulty", "discrimination", "suspect"}
    assert all(set(r) == {"label", "path", "report"} for r in view.data["runs"])
    assert view.data["notes"] == view.notes == []


def test_runs_are_in_board_order_and_each_case_is_described(made, view) -> None:
    ids, preds = truth_and_predictions(made, view)
    by_id = {c["id"]: c for c in made[1]}
    labels = [r["label"] for r in view.data["runs"]]
    assert sorted(labels) == sorted(SKILL) and labels == [row.detector for row in view.board.rows]
    assert view.data["ids"] == ids
    assert view.data["exp"] == "".join(by_id[i]["expected_risk"][0] for i in ids)
    assert [view.data["cats"][c] for c in view.data["cat"]] == [by_id[i]["category"] for i in ids]
    origin = [next(t.removeprefix("origin_") for t in by_id[i]["tags"] if t.startswith("origin_")) for i in ids]
    assert view.data["origin"] == origin
    for k, label in enumerate(labels):
        assert view.data["pred"][k] == "".join("e" if preds[label][i] == "error" else preds[label][i][0] for i in ids)
    assert prediction_letters(np.array([0, 3, 2, 1]), np.array([True, True, False, True])) == "le-m"


def test_scores_errors_and_replies_per_run(made, view) -> None:
    ids, preds = truth_and_predictions(made, view)
    labels = [r["label"] for r in view.data["runs"]]
    for name, folder in made[2].items():
        k = labels.index(name)
        records = journal(folder)
        want = [None if records[i]["score"] is None else round(records[i]["score"], 4) for i in ids]
        assert view.data["score"][k] == (None if name == "dull" else want), name
        assert view.data["score"][k] != [None] * len(ids)
    flaky = labels.index("flaky")
    errors = view.data["err"][flaky]
    assert sorted(errors) == [ids.index(c["id"]) for i, c in enumerate(made[1]) if i % 7 == 3]
    assert all(e[0] == "detector_exception" and "flaky refuses this one" in e[1] for e in errors.values())
    assert sorted(view.data["reply"][flaky]) == sorted(set(range(len(ids))) - set(errors))
    sharp = view.data["reply"][labels.index("sharp")]
    assert sharp[0] == json.dumps({"reason": f"said {preds['sharp'][ids[0]]}"}, separators=(",", ":"))
    fair = view.data["reply"][labels.index("fair")]
    first, second = (ids.index(c["id"]) for c in made[1][:2])
    assert fair[first] == json.dumps({"reason": "x" * 387}, separators=(",", ":")) and len(fair[first]) == 400
    assert fair[second] == '{"reason":"' + "y" * 389 + "..."  # the first 400 characters, and a mark


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

    class NoScore:
        def metric(self, name: str) -> None:
            return None

    assert best_run([NoScore(), NoScore()]) is None  # type: ignore[list-item]


def test_the_items_columns_by_hand(made, view) -> None:
    ids, preds = truth_and_predictions(made, view)
    by_id = {c["id"]: c for c in made[1]}
    truth = [by_id[i]["expected_risk"] for i in ids]
    names = list(made[2])
    f1 = [f1_score(truth, [preds[n][i] for i in ids], labels=RISKS, average="macro", zero_division=0) for n in names]
    items = view.data["analysis"]
    for pos, i in enumerate(ids):
        right = [int(preds[n][i] == by_id[i]["expected_risk"]) for n in names]
        assert items["difficulty"][pos] == pytest.approx(sum(right) / 4)
        want, got = point_biserial(right, f1), items["discrimination"][pos]
        assert got is None if want is None else (got == pytest.approx(want, abs=5e-4) and got == round(got, 3))
    assert sum(d is not None and d != round(d, 2) for d in items["discrimination"]) > 5  # 3 decimals kept
    assert items["suspect"] == by_hand_suspects(made, 3) and sum(items["suspect"]) > 0
    runs = [read_run(p) for p in made[2].values()]
    (two,) = board_views(runs, made[0] / "page", n_boot=0, seed=0, strongest=2)
    assert two.data["analysis"]["suspect"] == by_hand_suspects(made, 2) != items["suspect"]


def test_the_leaderboard_is_fcb_leaderboards_and_the_natural_ranking_its_twin(made, view) -> None:
    runs = [read_run(p) for p in made[2].values()]
    (board,) = build_boards(runs, n_boot=200, seed=1)
    assert [(r.detector, r.ci95, r.rank_label) for r in view.board.rows] == [
        (r.detector, r.ci95, r.rank_label) for r in board.rows
    ]
    _, preds = truth_and_predictions(made, view)
    natural = [c for c in made[1] if "origin_natural" in c["tags"]]
    assert 0 < len(natural) < N
    truth = [c["expected_risk"] for c in natural]
    for row in view.natural:
        got = [preds[row["detector"]][c["id"]] for c in natural]
        assert row["cases"] == len(natural) and row["errors"] == got.count("error")
        assert row["accuracy"] == pytest.approx(sum(g == t for g, t in zip(got, truth, strict=True)) / len(natural))
        f1 = f1_score(truth, got, labels=sorted(set(truth) | set(got) - {"error"}), average="macro", zero_division=0)
        assert row["macro_f1"] == pytest.approx(f1)
        lo, hi = row["macro_f1_ci"]
        assert lo <= row["macro_f1"] + 1e-9 and row["macro_f1"] - 1e-9 <= hi
    assert sum(r["errors"] for r in view.natural) > 0  # flaky failed on natural cases too
    assert [r["detector"] for r in view.natural] == [r["label"] for r in view.data["runs"]]
    numbers = [int(r["rank"].rstrip("=")) for r in view.natural]
    assert numbers[0] == 1 and all(a <= b for a, b in itertools.pairwise(numbers))
    for r, n in zip(view.natural, numbers, strict=True):
        assert r["rank"].endswith("=") == (numbers.count(n) > 1)
    assert len(set(numbers)) not in (1, len(numbers))  # some share a rank and some do not: both marks are seen
    (again,) = board_views(runs, made[0] / "page", n_boot=200, seed=1, strongest=3)
    assert again.natural == view.natural  # the same seed, the same resamples


def test_case_text_once_and_links_to_each_report(made, view) -> None:
    tmp, cases, folders = made
    by_id = {c["id"]: c for c in cases}
    for i, text in zip(view.data["ids"], view.data["text"], strict=True):
        case = by_id[i]
        answers = [[a["agent_id"], a["text"]] for a in case["answers"]]
        assert text == [case["question"], answers, case.get("evidence", []), case["ground_truth"], case["rationale"]]
    assert 0 < sum(bool(t[2]) for t in view.data["text"]) < N  # some cases have evidence and some none
    for entry in view.data["runs"]:
        target = os.path.normpath(tmp / "page" / entry["report"])
        assert target == str(folders[entry["label"]] / "report.html") and Path(target).is_file()
    page = board_html([view])
    assert page.count(cases[0]["question"]) == 0  # the text is packed (gzip), never repeated in the markup
    assert "http://" not in page and "https://" not in page and "<script src" not in page


def test_a_run_without_its_page_links_its_markdown_or_nothing(made, tmp_path: Path) -> None:
    folders = made[2]
    md_only, bare = tmp_path / "md-only", tmp_path / "bare"
    for folder in (md_only, bare):
        shutil.copytree(folders["fair"], folder)
        (folder / "report.html").unlink()
    (bare / "report.md").unlink()
    (only,) = board_views([read_run(md_only), read_run(bare)], tmp_path, n_boot=0, seed=0, strongest=3)
    links = {Path(r["path"]).name: r["report"] for r in only.data["runs"]}
    assert links == {"md-only": "./md-only/report.md", "bare": None}


def test_a_changed_cases_file_gives_no_text_and_says_why(made, tmp_path: Path) -> None:
    tmp, _, folders = made
    copied = tmp_path / "runs" / "fair"
    shutil.copytree(folders["fair"], copied)
    metrics = json.loads((copied / "metrics.json").read_text())
    edited = tmp_path / "cases.jsonl"
    edited.write_text((tmp / "cases.jsonl").read_text() + "\n")  # one byte more: another sha256
    metrics["dataset"]["path"] = str(edited)
    (copied / "metrics.json").write_text(json.dumps(metrics))
    (only,) = board_views([read_run(copied)], tmp_path, n_boot=0, seed=0, strongest=3)
    assert only.data["text"] is None and only.notes[1].startswith(f"case text unavailable: {edited} is not the")
    assert only.data["analysis"] is None  # one run: no case analysis, and a note says so
    assert only.notes[0].startswith("the case analysis (difficulty, discrimination, suspects) needs at least 3")
    assert only.data["notes"] == only.notes


def test_untagged_cases_have_no_origin_and_no_natural_ranking(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "plain.jsonl", 16, seed=2)
    run = Path(harness.evaluate(str(cases), "builtin:agreement", out=str(tmp_path / "run"), n_boot=0).run_dir)
    (only,) = board_views([read_run(run)], tmp_path, n_boot=20, seed=0, strongest=3)
    assert only.data["origin"] is None and only.natural == []
    assert "no case carries an origin tag" in natural_table(only)


def test_a_baseline_file_is_refused(made, tmp_path: Path) -> None:
    run = read_run(made[2]["fair"])
    path = tmp_path / "fair.json"
    path.write_text(json.dumps(baseline_document(run, "fair")))
    with pytest.raises(RunLoadError, match=r"fair\.json: a baseline file; fcb board reads run folders"):
        board_views([run, read_run(path)], tmp_path, n_boot=0, seed=0, strongest=3)


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
    (only,) = board_views(runs, tmp_path, n_boot=0, seed=0, strongest=3)
    assert sorted(r["label"] for r in only.data["runs"]) == ["fair (fair)", "fair (fair-again)", "sharp"]
    assert "two runs of detector 'fair'" in " ".join(only.notes)  # no case analysis over one detector twice


def test_the_text_is_the_very_line_the_run_sent(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 8, seed=1)
    lines = cases.read_text().splitlines()
    impostor = {**json.loads(lines[0]), "question": "an invalid line with the same id"}
    del impostor["expected_risk"]
    cases.write_text("\n".join([json.dumps(impostor), *lines]) + "\n")  # skipped by the run (--skip-invalid)
    run = harness.evaluate(str(cases), "builtin:agreement", out=str(tmp_path / "run"), n_boot=0, skip_invalid=True)
    (only,) = board_views([read_run(run.run_dir)], tmp_path, n_boot=0, seed=0, strongest=3)
    assert only.data["text"][0][0] == json.loads(lines[0])["question"]  # matched by the journal's content hash


def test_a_case_a_run_did_not_finish_is_marked_and_wrong(made, tmp_path: Path) -> None:
    tmp, cases, folders = made
    part = harness.evaluate(str(tmp / "cases.jsonl"), "builtin:always-low", name="part", out=str(tmp_path / "part"),
                            n_boot=0, limit=10)  # fmt: skip
    runs = [read_run(folders["sharp"]), read_run(part.run_dir)]
    (only,) = board_views(runs, tmp_path, n_boot=0, seed=0, strongest=3)
    k = [r["label"] for r in only.data["runs"]].index("part")
    first = {c["id"] for c in cases[:10]}
    assert only.data["pred"][k] == "".join("l" if i in first else "-" for i in only.data["ids"])
    assert sum(n for _, n in only.heatmap[k]) == N and sum(r for r, _ in only.heatmap[k]) == sum(
        c["expected_risk"] == "low" for c in cases[:10]
    )  # the 30 cases it did not finish count as wrong


def test_the_note_names_each_run_asked_more_than_once(view) -> None:
    """Issue 45, item 9: the page says which runs show reduced verdicts, each with its epochs, reducer and probes."""
    from dataclasses import replace as changed

    from harness.leaderboard.board import repeats_note

    plain, other, third = view.runs[:3]
    assert repeats_note([plain, other]) == ""  # one epoch, no probe: nothing to say
    cases = len(plain.ids)
    epochs = changed(plain, epochs=np.zeros((cases, 2), dtype=np.int64), reducer="first")
    probed = changed(other, variants={"order": np.zeros((cases, 1), dtype=np.int64),
                                      "names": np.zeros((cases, 1), dtype=np.int64)})  # fmt: skip
    both = changed(third, epochs=np.zeros((cases, 3), dtype=np.int64), variants={"order": np.zeros((cases, 3))})
    assert repeats_note([epochs, plain, probed, both]) == (
        f"{plain.label} (2 epochs, first), {other.label} (probe order, probe names), {third.label} (3 epochs, mode, "
        "probe order): each case shows one verdict, its epochs reduced by the run's --epoch-reducer as its figures "
        "are; the probes' variants are not shown (their figures are in the leaderboard above and in each run's "
        "report)"
    )
