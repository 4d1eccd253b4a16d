"""--cluster-by through the real CLI: what a run's journal keeps, what its metrics and report say, and that fcb
compare, a baseline and a resume follow the run's clusters. The synthetic cases carry tags group_0, group_1 and
group_2 (case i: group_{i mod 3}), so tag:group_ makes three clusters; the expected figures come from that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.leaderboard.runs import aligned_clusters, read_run
from tests.casegen import write_cases
from tests.conftest import run_cli

N = 48


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("clusters")
    cases = write_cases(root / "cases.jsonl", N)
    out = {"cases": cases}
    for name, spec, by in (("grouped", "builtin:heuristic", "tag:group_"), ("vote", "builtin:vote", "tag:group_"),
                           ("plain", "builtin:heuristic", "none")):  # fmt: skip
        folder = root / name
        done = run_cli("eval", str(cases), "-d", spec, "--out", str(folder), "--cluster-by", by, "--bootstrap", "300")
        assert done.returncode == 0, done.stderr
        out[name] = folder
    return out


def journal(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "predictions.jsonl").read_text().splitlines()]


def test_the_journal_keeps_each_case_s_cluster_and_the_metrics_count_them(runs: dict[str, Path]) -> None:
    records = journal(runs["grouped"])
    assert {int(r["id"][4:]) - 1: r["cluster"] for r in records} == {i: f"tag:group_{i % 3}" for i in range(N)}
    assert all("cluster" not in r for r in journal(runs["plain"]))  # a case alone keeps the journal as it was
    doc = json.loads((runs["grouped"] / "metrics.json").read_text())
    block = doc["metrics"]["clusters"]
    assert (block["by"], block["n_cases"], block["n_clusters"], block["largest"]) == ("tag:group_", N, 3, 16)
    assert doc["settings"]["cluster_by"] == "tag:group_"
    manifest = json.loads((runs["grouped"] / "run.json").read_text())
    assert manifest["identity"]["cluster_by"] == "tag:group_"  # a resume must keep it: the journal's keys follow it
    assert json.loads((runs["plain"] / "run.json").read_text())["identity"]["cluster_by"] == "none"
    plain = json.loads((runs["plain"] / "metrics.json").read_text())
    assert plain["metrics"]["clusters"]["n_clusters"] == N
    assert plain["metrics"]["clusters"]["design_effect"]["accuracy"] == 1.0


def test_the_report_says_what_the_intervals_draw(runs: dict[str, Path]) -> None:
    text = (runs["grouped"] / "report.md").read_text()
    assert "of 3 clusters of the 48 cases (--cluster-by tag\\:group\\_; the largest holds 16)" in text
    assert "Design effect of the 3 clusters" in text
    assert "(--cluster-by none: no two cases share a cluster)" in (runs["plain"] / "report.md").read_text()


def test_compare_draws_the_clusters_the_journals_name(runs: dict[str, Path]) -> None:
    done = run_cli("compare", str(runs["grouped"]), str(runs["vote"]), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    gate = json.loads(done.stdout)["gate"]
    assert gate["clusters"] == 3
    assert "the 3 clusters of cases that the runs' journals name" in gate["statement"]
    alone = run_cli("compare", str(runs["plain"]), str(runs["vote"]), "--format", "json")
    assert json.loads(alone.stdout)["gate"]["clusters"] == 3  # vote's journal groups them: the coarser clustering


def test_aligned_clusters_join_what_either_run_put_together(runs: dict[str, Path]) -> None:
    grouped, plain = read_run(runs["grouped"]), read_run(runs["plain"])
    assert plain.clusters is None
    codes = aligned_clusters([plain, grouped], grouped.ids)
    assert codes.tolist() == [(int(i[4:]) - 1) % 3 for i in grouped.ids]
    assert aligned_clusters([plain], plain.ids).tolist() == list(range(N))


def test_a_baseline_keeps_the_clusters(runs: dict[str, Path], tmp_path: Path) -> None:
    saved = run_cli("baseline", "save", str(runs["grouped"]), "--name", "g", "--dir", str(tmp_path))
    assert saved.returncode == 0, saved.stderr
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["cases"]["clusters"] == [i % 3 for i in range(N)]
    done = run_cli("compare", str(tmp_path / "g.json"), str(runs["plain"]), "--format", "json")
    assert json.loads(done.stdout)["gate"]["clusters"] == 3


def test_a_bad_cluster_by_is_refused_before_any_case(runs: dict[str, Path], tmp_path: Path) -> None:
    done = run_cli("eval", str(runs["cases"]), "-d", "builtin:vote", "--out", str(tmp_path / "x"),
                   "--cluster-by", "question")  # fmt: skip
    assert done.returncode == 2
    assert "--cluster-by 'question': expected one of source.item, source.dataset, none or tag:PREFIX" in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_resume_keeps_the_run_s_clusters(runs: dict[str, Path], tmp_path: Path) -> None:
    folder = tmp_path / "r"
    first = run_cli("eval", str(runs["cases"]), "-d", "builtin:vote", "--out", str(folder), "--limit", "10",
                    "--cluster-by", "tag:group_")  # fmt: skip
    assert first.returncode == 0, first.stderr
    lines = (folder / "predictions.jsonl").read_text().splitlines()
    (folder / "predictions.jsonl").write_text("\n".join(lines[:4]) + "\n")
    other = run_cli("eval", "--resume", str(folder), "--cluster-by", "none")
    assert other.returncode == 2 and "cluster_by" in other.stderr
    same = run_cli("eval", "--resume", str(folder))
    assert same.returncode == 0, same.stderr
    assert {r["cluster"] for r in journal(folder)} == {"tag:group_0", "tag:group_1", "tag:group_2"}


def test_a_baseline_whose_clusters_do_not_match_its_ids_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    assert run_cli("baseline", "save", str(runs["grouped"]), "--name", "g", "--dir", str(tmp_path)).returncode == 0
    doc = json.loads((tmp_path / "g.json").read_text())
    doc["cases"]["clusters"] = doc["cases"]["clusters"][:-1]
    (tmp_path / "g.json").write_text(json.dumps(doc))
    done = run_cli("compare", str(tmp_path / "g.json"), str(runs["plain"]))
    assert done.returncode == 2 and f"cases.clusters: {N - 1} entries for {N} ids" in done.stderr


def test_the_page_says_what_the_intervals_draw(runs: dict[str, Path]) -> None:
    page = (runs["grouped"] / "report.html").read_text()
    assert "of 3 clusters of the 48 cases (--cluster-by tag:group_; the largest holds 16)" in page
    assert "Design effect of the 3 clusters" in page
