"""``fcb suite`` end to end: the real CLI in a subprocess, built-in detectors and real HTTP detector servers on
127.0.0.1, two small data sets written here. Requests are counted at the server; figures are computed again here
from the cases and the server's own reply function."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import Server, read_jsonl, run_cli
from servers.detector_server import reply_for
from sklearn.metrics import f1_score

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

RISKS = ["low", "medium", "high"]
SIZES = {"a": 12, "b": 9}  # different sizes: a request count tells which pairs were sent


def data_sets(tmp_path: Path) -> dict[str, Path]:
    return {"a": write_cases(tmp_path / "a.jsonl", 12, seed=7), "b": write_cases(tmp_path / "b.jsonl", 9, seed=11)}


def detector(name: str, spec: str, extra: str = "") -> str:
    return f'[[detectors]]\nname = "{name}"\nspec = "{spec}"\nconcurrency = 2\n{extra}\n'


def dataset(name: str, path: Path) -> str:
    return f'[[datasets]]\nname = "{name}"\ncases = "{path.name}"\n\n'  # relative to the suite file's folder


def write_suite(tmp_path: Path, *parts: str) -> Path:
    path = tmp_path / "suite.toml"
    path.write_text("bootstrap = 200\n\n" + "".join(parts))
    return path


def suite(path: Path, out: Path) -> tuple[int, str, str]:
    proc = run_cli("suite", str(path), "--out", str(out), "--quiet", timeout=240)
    return proc.returncode, proc.stdout, proc.stderr


def status_of(stdout: str, data_set: str, name: str) -> str:
    """The status column of a pair in the printed summary table."""
    for line in stdout.splitlines():
        cells = line.split()
        if cells[:2] == [data_set, name]:
            return " ".join(cells[2:4]) if cells[2] == "complete" else cells[2]
    raise AssertionError(f"no row for {name} on {data_set} in:\n{stdout}")


def web_macro_f1(cases_file: Path) -> float:
    """The HTTP detector's macro-F1, from the server's reply function and the labels, by scikit-learn."""
    cases = read_jsonl(cases_file)
    truth = [c["expected_risk"] for c in cases]
    views = [{"task": c["question"], "answers": [{"text": a["text"]} for a in c["answers"]]} for c in cases]
    predicted = [reply_for(v)["false_consensus_risk"] for v in views]  # type: ignore[index]
    return float(f1_score(truth, predicted, labels=RISKS, average="macro", zero_division=0))


def always_low_macro_f1(cases_file: Path) -> float:
    """All "low": the low class's F1 is 2p/(p+1) with p the share of low cases; the other two are 0."""
    share = Counter(c["expected_risk"] for c in read_jsonl(cases_file))["low"] / len(read_jsonl(cases_file))
    return 2 * share / (share + 1) / 3


def board_value(out: Path, data_set: str, name: str) -> float:
    (board,) = json.loads((out / "board" / data_set / "leaderboard.json").read_text())
    (row,) = [r for r in board["rows"] if r["detector"] == name]
    return float(row["values"]["macro_f1"])


def test_every_pair_runs_once_and_the_board_gathers_them(tmp_path: Path, detector_server) -> None:
    server: Server = detector_server()
    files = data_sets(tmp_path)
    path = write_suite(
        tmp_path,
        detector("agree", "builtin:agreement"),
        detector("low", "builtin:always-low"),
        detector("web", server.url),
        *(dataset(name, f) for name, f in files.items()),
    )
    out = tmp_path / "out"
    code, stdout, stderr = suite(path, out)
    assert code == 0, stderr
    assert server.stats()["count"] == 12 + 9  # one request a case of each data set, the preflight among them
    for name, f in files.items():
        assert board_value(out, name, "web") == pytest.approx(web_macro_f1(f), abs=1e-12)
        assert board_value(out, name, "low") == pytest.approx(always_low_macro_f1(f), abs=1e-12)
        items = json.loads((out / "board" / name / "case-analysis.json").read_text())  # three detectors: the analysis
        assert {d["detector"] for d in items["detectors"]} == {"agree", "low", "web"}
        assert len(items["cases"]) == SIZES[name]
        assert (out / "board" / name / "case-analysis.md").is_file() and (
            out / "board" / name / "leaderboard.md"
        ).is_file()
        assert status_of(stdout, name, "web") == "ran"
    index = (out / "board" / "index.md").read_text()
    for name in files:
        for det in ("agree", "low", "web"):
            link = f"(../runs/{name}/{det}/report.html)"
            assert link in index and (out / "board" / link[1:-1]).is_file()
    assert "[board.html](board.html)" in index  # the fcb board page over every run, one section a data set
    page = (out / "board" / "board.html").read_text()
    assert page.count('<section class="ds"') == 2 and page.count('class="hm"') == 2 * 3 * 8  # 8 categories
    for name in files:
        for det in ("agree", "low", "web"):
            assert f'href="../runs/{name}/{det}/report.html"' in page

    code, stdout, stderr = suite(path, out)  # again: every pair is complete, nothing is sent
    assert code == 0, stderr
    assert server.stats()["count"] == 12 + 9
    assert all(status_of(stdout, n, d) == "complete (skipped)" for n in files for d in ("agree", "low", "web"))
    assert board_value(out, "a", "web") == pytest.approx(web_macro_f1(files["a"]), abs=1e-12)


def test_an_interrupted_pair_resumes_where_it_stopped(tmp_path: Path, detector_server) -> None:
    server: Server = detector_server()
    files = data_sets(tmp_path)
    sets = [dataset(name, f) for name, f in files.items()]
    out = tmp_path / "out"
    capped = write_suite(tmp_path, detector("web", server.url, "max_requests = 4"), *sets)
    code, stdout, _ = suite(capped, out)
    assert code == 1  # stopped pairs are not complete: CI sees it
    assert status_of(stdout, "a", "web") == status_of(stdout, "b", "web") == "stopped"
    assert server.stats()["count"] == 4 + 4
    assert len(read_jsonl(out / "runs" / "a" / "web" / "predictions.jsonl")) == 4

    free = write_suite(tmp_path, detector("web", server.url), *sets)
    code, stdout, stderr = suite(free, out)
    assert code == 0, stderr
    assert status_of(stdout, "a", "web") == status_of(stdout, "b", "web") == "resumed"
    assert server.stats()["count"] == 12 + 9  # only the cases not yet journaled were sent: 8 + 5 more
    ids = [r["id"] for r in read_jsonl(out / "runs" / "a" / "web" / "predictions.jsonl")]
    assert sorted(ids) == sorted(c["id"] for c in read_jsonl(files["a"]))
    assert board_value(out, "a", "web") == pytest.approx(web_macro_f1(files["a"]), abs=1e-12)


def test_a_failing_detector_fails_the_suite_and_the_others_still_run(tmp_path: Path, detector_server) -> None:
    server: Server = detector_server()
    refusing: Server = detector_server("--status", "404")
    files = data_sets(tmp_path)
    path = write_suite(
        tmp_path,
        detector("missing", "builtin:no-such-detector"),  # does not load
        detector("refusing", refusing.url),  # fails its preflight
        detector("web", server.url),
        *(dataset(name, f) for name, f in files.items()),
    )
    out = tmp_path / "out"
    code, stdout, stderr = suite(path, out)
    assert code == 1
    for name in files:
        assert status_of(stdout, name, "missing") == status_of(stdout, name, "refusing") == "failed"
        assert status_of(stdout, name, "web") == "ran"
        assert board_value(out, name, "web") == pytest.approx(web_macro_f1(files[name]), abs=1e-12)
        assert not (out / "board" / name / "case-analysis.json").exists()  # one detector ran: no case-level analysis
    assert server.stats()["count"] == 12 + 9
    assert refusing.stats()["count"] == 2  # one preflight request a data set, then that pair stopped
    assert "no-such-detector" in stderr


def test_a_gate_regression_exits_1(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "c.jsonl", 60, seed=3)
    answers = tmp_path / "answers.json"  # a server that answers every case right: the baseline to keep up with
    answers.write_text(json.dumps({c["question"]: c["expected_risk"] for c in read_jsonl(cases)}))
    perfect: Server = detector_server("--answers", str(answers))
    for spec, run_dir in ((perfect.url, "perfect-run"), ("builtin:agreement", "agree-run")):
        proc = run_cli("eval", str(cases), "-d", spec, "--out", str(tmp_path / run_dir), "--quiet")
        assert proc.returncode == 0, proc.stderr
    gates = "".join(
        f'[[gates]]\ndetector = "{d}"\ndataset = "c"\nbaseline = "{b}"\n\n'
        for d, b in (("low", "perfect-run"), ("agree", "agree-run"))
    )
    path = write_suite(
        tmp_path,
        detector("low", "builtin:always-low"),
        detector("agree", "builtin:agreement"),
        dataset("c", cases),
        gates,
    )
    code, stdout, stderr = suite(path, tmp_path / "out")
    assert code == 1, stdout + stderr
    assert "gate low on c: regressed" in stdout  # all low against all right: every headline drops
    assert "gate agree on c: passed" in stdout  # the same detector on the same cases: no drop
    assert status_of(stdout, "c", "low") == "ran"


def test_a_bad_suite_file_names_file_line_and_key(tmp_path: Path) -> None:
    files = data_sets(tmp_path)
    path = write_suite(tmp_path, detector("agree", "builtin:agreement", "concurency = 4"), dataset("a", files["a"]))
    code, _, stderr = suite(path, tmp_path / "out")
    assert code == 2
    assert f"{path}:7: detectors[0].concurency: unknown key" in stderr  # line 1 bootstrap, 3 header, 7 the key
    assert not (tmp_path / "out").exists()


def test_a_complete_run_of_an_edited_cases_file_is_not_taken_as_done(tmp_path: Path) -> None:
    files = data_sets(tmp_path)
    path = write_suite(tmp_path, detector("agree", "builtin:agreement"), dataset("a", files["a"]))
    out = tmp_path / "out"
    assert suite(path, out)[0] == 0
    write_cases(files["a"], 13, seed=7)  # one case more: the run in the folder is of the old file
    code, stdout, stderr = suite(path, out)
    assert code == 1
    assert status_of(stdout, "a", "agree") == "failed"
    assert "another version of" in stderr and "remove it" in stderr


def test_the_response_cache_is_honoured(tmp_path: Path, detector_server) -> None:
    server: Server = detector_server()
    files = data_sets(tmp_path)
    path = write_suite(
        tmp_path, detector("web", server.url, 'cache = true\ncache_dir = "replies"'), dataset("a", files["a"])
    )
    assert suite(path, tmp_path / "first")[0] == 0
    assert server.stats()["count"] == 12
    assert (tmp_path / "replies").is_dir()  # relative to the suite file's folder
    code, _, stderr = suite(path, tmp_path / "second")  # a new run folder, every reply from the cache
    assert code == 0, stderr
    assert server.stats()["count"] == 12
    assert board_value(tmp_path / "second", "a", "web") == pytest.approx(web_macro_f1(files["a"]), abs=1e-12)


def test_a_detector_config_file_gives_the_spec_and_settings(tmp_path: Path, detector_server) -> None:
    server: Server = detector_server()
    files = data_sets(tmp_path)
    (tmp_path / "web.toml").write_text(f'detector = "{server.url}"\nconcurrency = 1\n')
    path = write_suite(tmp_path, '[[detectors]]\nname = "web"\nconfig = "web.toml"\n\n', dataset("b", files["b"]))
    code, _, stderr = suite(path, tmp_path / "out")
    assert code == 0, stderr
    assert server.stats()["count"] == 9 and server.stats()["max_in_flight"] == 1
    run = json.loads((tmp_path / "out" / "runs" / "b" / "web" / "run.json").read_text())
    assert run["settings"]["concurrency"] == 1 and run["identity"]["detector"] == server.url


def test_a_spec_file_is_read_relative_to_the_suite_file(tmp_path: Path) -> None:
    """Issue 45, item 13: ``cases`` and ``config`` were relative to the suite file but ``spec = "my_detector.py:f"``
    to the current folder. All three are now read from the suite file's folder (the CLI runs from the checkout)."""
    folder = tmp_path / "mine"
    folder.mkdir()
    write_cases(folder / "a.jsonl", 5, seed=7)
    (folder / "my_detector.py").write_text("def assess(request):\n    return 'high'\n")
    path = write_suite(folder, detector("mine", "my_detector.py:assess"), dataset("a", folder / "a.jsonl"))
    code, stdout, stderr = suite(path, tmp_path / "out")
    assert code == 0, stderr
    assert status_of(stdout, "a", "mine") == "ran"
    journal = read_jsonl(next((tmp_path / "out").rglob("predictions.jsonl")))
    assert [r["risk"] for r in journal] == ["high"] * 5


def test_a_spec_file_found_only_in_the_current_folder_is_refused_naming_both(tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    folder.mkdir()
    write_cases(folder / "a.jsonl", 3, seed=7)
    here = Path("tests/known_detectors.py")  # relative to the checkout, where the CLI runs
    path = write_suite(folder, detector("known", f"{here}:blind"), dataset("a", folder / "a.jsonl"))
    code, stdout, stderr = suite(path, tmp_path / "out")
    said = stdout + stderr
    assert (
        code == 1
        and status_of(stdout, "a", "known") == "failed"
        and f"{folder / here} does not exist" in said
        and "relative to the suite file" in said
    ), said
