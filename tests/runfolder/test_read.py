"""One reader for run folders (`harness.runfolder.read`): every command that reads a run refuses a half-written or
foreign folder the same way, exit 2 with a message naming the file and the field, never an internal error (exit 3)
and never a worse page written in silence. Each test here failed before the reader (issue 23)."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 30


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("read")
    cases = write_cases(tmp / "cases.jsonl", N)
    run = tmp / "run"
    proc = run_cli("eval", str(cases), "-d", "builtin:agreement", "--out", str(run), "-q", "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    return run


def _copy(run: Path, tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name
    shutil.copytree(run, copy)
    return copy


def _drop(run: Path, *path: str) -> None:
    doc = json.loads((run / "metrics.json").read_text())
    node = doc
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    (run / "metrics.json").write_text(json.dumps(doc))


READERS = {
    "leaderboard": lambda run, good: ("leaderboard", str(run)),
    "compare": lambda run, good: ("compare", str(good), str(run)),
    "history": lambda run, good: ("history", str(run)),
    "view": lambda run, good: ("view", str(run), "--no-open"),
    "baseline": lambda run, good: ("baseline", "save", str(run), "--name", "x", "--dir", str(run.parent / "bl")),
}


@pytest.mark.parametrize("command", sorted(READERS))
def test_a_metrics_document_missing_a_field_is_refused_by_every_reader(
    command: str, finished: Path, tmp_path: Path
) -> None:
    # deleting one key from a real metrics.json made `fcb leaderboard` and `fcb compare` exit 3, "internal error"
    broken = _copy(finished, tmp_path, "broken")
    _drop(broken, "metrics", "accuracy")
    proc = run_cli(*READERS[command](broken, finished))
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert f"{broken / 'metrics.json'}: metrics.accuracy: Field required" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_field_of_the_wrong_type_is_named_with_its_path(finished: Path, tmp_path: Path) -> None:
    broken = _copy(finished, tmp_path, "typed")
    doc = json.loads((broken / "metrics.json").read_text())
    doc["metrics"]["per_class"]["low"]["f1"] = "0.5"
    (broken / "metrics.json").write_text(json.dumps(doc))
    proc = run_cli("leaderboard", str(broken))
    assert proc.returncode == 2 and "metrics.per_class.low.f1: Input should be a valid number" in proc.stderr


def test_view_refuses_a_folder_without_its_journal(finished: Path, tmp_path: Path) -> None:
    # `fcb view` on a folder without predictions.jsonl wrote an empty page and exited 0 (`fcb history` refused it)
    bare = _copy(finished, tmp_path, "bare")
    (bare / "predictions.jsonl").unlink()
    before = (bare / "report.html").read_bytes()
    for args in (("view", str(bare), "--no-open"), ("history", str(bare))):
        proc = run_cli(*args)
        assert proc.returncode == 2 and f"{bare / 'predictions.jsonl'}: no such file" in proc.stderr, args
    assert (bare / "report.html").read_bytes() == before


def test_view_keeps_the_page_with_case_text_when_the_cases_file_has_moved(finished: Path, tmp_path: Path) -> None:
    # `fcb view` on a run whose cases file had moved rewrote report.html without any case text, exit 0, no warning
    run = _copy(finished, tmp_path, "moved")
    cases = Path(json.loads((run / "metrics.json").read_text())["dataset"]["path"])
    moved = tmp_path / "elsewhere.jsonl"
    shutil.copy(cases, moved)
    first_id = json.loads(cases.read_text().splitlines()[0])["id"]
    question = json.loads(cases.read_text().splitlines()[0])["question"]
    before = (run / "report.html").read_bytes()
    cases.rename(tmp_path / "gone.jsonl")
    try:
        proc = run_cli("view", str(run), "--no-open")
        assert proc.returncode == 2 and "is left as it was" in proc.stderr and "--cases" in proc.stderr
        assert (run / "report.html").read_bytes() == before
        # pointed at where the cases are now, the page is written with their text
        proc = run_cli("view", str(run), "--no-open", "--cases", str(moved))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == str(run / "report.html")
        assert _case_ids_with_text(run / "report.html") >= {first_id} and question
        # --force writes the page without them, and says so
        proc = run_cli("view", str(run), "--no-open", "--force")
        assert proc.returncode == 0 and "the page has no case text" in proc.stderr
        assert _case_ids_with_text(run / "report.html") == set()
    finally:
        (tmp_path / "gone.jsonl").rename(cases)


def _point_at(run: Path, path: str) -> None:
    doc = json.loads((run / "metrics.json").read_text())
    doc["dataset"]["path"] = path
    (run / "metrics.json").write_text(json.dumps(doc))


def _limited_fcb(*args: str, stdin: int | None = None) -> subprocess.CompletedProcess:
    """``fcb ARGS`` under a 1.5 GB address-space limit (reading /dev/zero whole would end in MemoryError) and a
    timeout (reading a FIFO with no writer would wait for ever)."""
    return subprocess.run(
        [sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=60, cwd=ROOT, stdin=stdin,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20)),
    )  # fmt: skip


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "/dev/stdin"])
def test_view_and_compare_read_case_text_only_from_a_regular_file(kind: str, finished: Path, tmp_path: Path) -> None:
    # a run whose metrics.json names /dev/zero exhausted memory in `fcb view` and `fcb compare --format html`
    # (exit 3 under a limit); a FIFO with no writer, or /dev/stdin on a pipe nobody writes, hung them
    run = _copy(finished, tmp_path, "run")
    path = kind
    if kind == "fifo":
        path = str(tmp_path / "cases.fifo")
        os.mkfifo(path)
    _point_at(run, path)
    before = (run / "report.html").read_bytes()
    read_end, write_end = os.pipe()  # standard input: a pipe whose writer stays open and silent
    try:
        proc = _limited_fcb("view", str(run), "--no-open", stdin=read_end)
        assert proc.returncode == 2, (proc.returncode, proc.stderr)
        assert f"case text unavailable: {path}: not a regular file" in proc.stderr and "Traceback" not in proc.stderr
        assert (run / "report.html").read_bytes() == before
        out = tmp_path / "compare.html"
        proc = _limited_fcb("compare", str(finished), str(run), "--format", "html", "--out", str(out),
                            "--bootstrap", "20", stdin=read_end)  # fmt: skip
    finally:
        os.close(write_end)
        os.close(read_end)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert f"warning: case text unavailable: {path}: not a regular file" in proc.stderr
    assert _case_ids_with_text(out) == set()


@pytest.mark.parametrize("command", sorted(READERS))
def test_a_run_folder_file_that_is_not_a_regular_file_is_refused(command: str, finished: Path, tmp_path: Path) -> None:
    # predictions.jsonl linked to /dev/zero exhausted memory in every reader (exit 3 under a limit); a metrics.json
    # that is a FIFO hung them
    zero = _copy(finished, tmp_path, "zero")
    (zero / "predictions.jsonl").unlink()
    (zero / "predictions.jsonl").symlink_to("/dev/zero")
    fifo = _copy(finished, tmp_path, "fifo")
    (fifo / "metrics.json").unlink()
    os.mkfifo(fifo / "metrics.json")
    for run, name in ((zero, "predictions.jsonl"), (fifo, "metrics.json")):
        proc = _limited_fcb(*READERS[command](run, finished))
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, (proc.returncode, proc.stderr)
        # leaderboard and history look for runs by a regular metrics.json: a FIFO there is no run for them
        assert f"{run / name}: not a regular file" in proc.stderr or "no runs" in proc.stderr, proc.stderr


def test_load_run_refuses_a_run_made_from_a_fifo_instead_of_hanging(tmp_path: Path) -> None:
    # harness.load_run read a run's cases again from where it read them: from a FIFO it waited for ever
    cases = write_cases(tmp_path / "cases.jsonl", 8)
    fifo = tmp_path / "cases.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(cases.read_bytes()))
    writer.start()
    run = tmp_path / "run"
    proc = run_cli("eval", str(fifo), "-d", "builtin:agreement", "--out", str(run), "-q", "--bootstrap", "20")
    writer.join()
    assert proc.returncode == 0, proc.stderr
    code = f"import harness\ntry:\n    harness.load_run({str(run)!r})\nexcept harness.errors.RunError as e:\n print(e)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert f"{fifo}: not a regular file: the cases this run read cannot be read again" in proc.stdout, proc.stderr


def test_view_refuses_a_cases_file_whose_content_changed_since_the_run(finished: Path, tmp_path: Path) -> None:
    # a cases file rewritten after the run (same ids, other text) was shown as the run's cases, exit 0
    run = _copy(finished, tmp_path, "changed")
    lines = Path(json.loads((run / "metrics.json").read_text())["dataset"]["path"]).read_text().splitlines()
    edited = tmp_path / "edited.jsonl"
    first = json.loads(lines[0])
    first["question"] = "A question the run never sent"
    edited.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    before = (run / "report.html").read_bytes()
    proc = run_cli("view", str(run), "--no-open", "--cases", str(edited))
    assert proc.returncode == 2 and "is not the cases file this run read" in proc.stderr, proc.stderr
    assert (run / "report.html").read_bytes() == before
    proc = run_cli("view", str(run), "--no-open", "--cases", str(edited), "--force")
    assert proc.returncode == 0 and "the page has no case text" in proc.stderr
    assert _case_ids_with_text(run / "report.html") == set()
    assert "A question the run never sent" not in _page_data(run / "report.html")


def _page_data(page: Path) -> str:
    import base64
    import gzip
    import re

    (blob,) = re.findall(r"id='cases-data'>([^<]+)<", page.read_text())
    return gzip.decompress(base64.b64decode(blob.strip())).decode()


def _case_ids_with_text(page: Path) -> set[str]:
    """The ids of the cases whose text rides in the page's explorer data (gzip + base64 JSON in the page)."""
    import base64
    import gzip
    import re

    html = page.read_text()
    (blob,) = re.findall(r"id='cases-data'>([^<]+)<", html)
    data = json.loads(gzip.decompress(base64.b64decode(blob.strip())))
    return {row["id"] for row in data["cases"] if "case" in row}


def test_a_baseline_whose_letters_do_not_match_its_ids_is_refused(finished: Path, tmp_path: Path) -> None:
    proc = run_cli("baseline", "save", str(finished), "--name", "b", "--dir", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "b.json").read_text())
    doc["cases"]["predicted"] = doc["cases"]["predicted"][:-1]
    (tmp_path / "b.json").write_text(json.dumps(doc))
    proc = run_cli("compare", str(tmp_path / "b.json"), str(finished))
    assert proc.returncode == 2 and f"cases.predicted: {N - 1} entries for {N} ids" in proc.stderr
