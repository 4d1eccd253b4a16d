"""Epochs for real (``fcb eval --epochs N``): the HTTP detector on 127.0.0.1 counts what it is sent. Each case
reaches it N times, with the response cache on too (an epoch is never a replay of another); a run killed with
SIGKILL and resumed ends with the metrics of an uninterrupted one, having asked no item twice beyond those in
flight; shards merge to the whole run's figures."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import ROOT, read_jsonl, run_cli

from tests.run.test_resume import _wait_for_lines, _without_timing

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 20


def _eval(cases: Path, out: Path, *args: str) -> dict:
    proc = run_cli("eval", str(cases), "--out", str(out), "-q", "--bootstrap", "200", *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "metrics.json").read_text())


def test_three_epochs_send_three_requests_a_case_also_with_the_cache_on(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", N)
    server = detector_server()
    cache = tmp_path / "cache"
    doc = _eval(cases, tmp_path / "plain-cache", "-d", server.url, "--epochs", "3", "--concurrency", "2")
    assert server.stats()["count"] == 3 * N
    journal = read_jsonl(tmp_path / "plain-cache" / "predictions.jsonl")
    assert Counter((r["id"], r["epoch"]) for r in journal) == {(c["id"], e): 1 for c in read_jsonl(cases)
                                                               for e in (1, 2, 3)}  # fmt: skip
    assert doc["metrics"]["epochs"]["n"] == 3 and doc["metrics"]["operational"]["cases"] == 3 * N

    cached = _eval(cases, tmp_path / "cached", "-d", server.url, "--epochs", "3", "--concurrency", "2",
                   "--cache", str(cache))  # fmt: skip
    assert server.stats()["count"] == 6 * N  # each epoch its own entry: none replayed another epoch's reply
    assert cached["metrics"]["operational"]["cached"] == 0
    again = _eval(cases, tmp_path / "again", "-d", server.url, "--epochs", "3", "--cache", str(cache))
    assert server.stats()["count"] == 6 * N  # a rerun replays every epoch it stored
    assert again["metrics"]["operational"]["cached"] == 3 * N
    assert _without_timing(again) == _without_timing(cached)


def test_an_epochs_run_killed_and_resumed_ends_as_an_uninterrupted_one(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 60)
    record = tmp_path / "seen.jsonl"
    server = detector_server("--delay", "0.005", "--record", str(record))
    concurrency = 3
    common = ["-d", server.url, "-q", "--epochs", "3", "--probe", "order,tone,inject,duplicate", "--concurrency",
              str(concurrency), "--retries", "0", "--bootstrap", "200"]  # fmt: skip
    reference = tmp_path / "reference"
    assert run_cli("eval", str(cases), "--out", str(reference), *common).returncode == 0
    items = len(read_jsonl(reference / "predictions.jsonl"))
    record.unlink()

    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "eval", str(cases), "--out", str(run_dir), *common],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    _wait_for_lines(run_dir / "predictions.jsonl", items // 3, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (run_dir / "metrics.json").exists()
    resumed = run_cli("eval", "--resume", str(run_dir), "-q")
    assert resumed.returncode == 0, resumed.stderr

    journal = read_jsonl(run_dir / "predictions.jsonl")
    keys = [(r["id"], r["epoch"], r.get("variant")) for r in journal]
    assert len(keys) == len(set(keys)) == items  # every item once
    sent = len(read_jsonl(record))
    assert items <= sent <= items + concurrency  # none asked twice, but those in flight when it was killed
    doc = json.loads((run_dir / "metrics.json").read_text())
    ref = json.loads((reference / "metrics.json").read_text())
    assert doc["complete"] and _without_timing(doc) == _without_timing(ref)
    assert doc["metrics"]["epochs"] == ref["metrics"]["epochs"] and doc["metrics"]["probes"] == ref["metrics"]["probes"]
    # each item's variant is the same on --resume: the same permutation or rewrite as the uninterrupted run's
    made = {(r["id"], r["epoch"], r.get("variant")): (r.get("permutation"), r.get("rewrite")) for r in journal}
    assert made == {(r["id"], r["epoch"], r.get("variant")): (r.get("permutation"), r.get("rewrite"))
                    for r in read_jsonl(reference / "predictions.jsonl")}  # fmt: skip
    assert {k[2] for k in made} == {None, "order", "tone", "inject", "duplicate"}


def test_shards_of_an_epochs_run_merge_to_the_whole_run_s_figures(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", N)
    server = detector_server()
    common = ["-d", server.url, "--epochs", "2", "--probe", "names,inject"]
    whole = _eval(cases, tmp_path / "whole", *common)
    for k in (1, 2):
        _eval(cases, tmp_path / f"s{k}", *common, "--shard", f"{k}/2")
    merged = run_cli("merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    doc = json.loads((tmp_path / "merged" / "metrics.json").read_text())
    assert doc["complete"] and _without_timing(doc) == _without_timing(whole)
    inject = sum(2 for c in read_jsonl(cases) if c["expected_risk"] != "low")  # 2 epochs of each high or medium
    assert len(read_jsonl(tmp_path / "merged" / "predictions.jsonl")) == 4 * N + inject
    assert whole["metrics"]["probes"]["inject"]["per_style"]  # the templates' figures, recomputed alike on merge
    board = run_cli("leaderboard", str(tmp_path / "whole"), "--format", "json")
    assert board.returncode == 0, board.stderr
    values = json.loads(board.stdout)[0]["rows"][0]["values"]
    stated = whole["metrics"]
    assert values["self_agreement"] == stated["epochs"]["self_agreement"]["all_agree"] == 1.0  # the server is pure
    assert values["names_flip_rate"] == stated["probes"]["names"]["flip_rate"]
    assert values["order_flip_rate"] is None and values["epoch_sd"] == 0.0
    faked = json.loads((tmp_path / "whole" / "metrics.json").read_text())
    faked["metrics"]["probes"]["names"]["flip_rate"] += 0.25  # a figure the journal does not give is refused
    (tmp_path / "whole" / "metrics.json").write_text(json.dumps(faked))
    refused = run_cli("leaderboard", str(tmp_path / "whole"))
    assert refused.returncode == 2 and "metrics.probes.names.flip_rate" in refused.stderr
    (tmp_path / "whole" / "metrics.json").write_text(json.dumps(whole))
    # readers that pair runs case by case take the reduced verdicts, and check the item-level operational figures
    for command in (["leaderboard", str(tmp_path / "whole")], ["compare", str(tmp_path / "whole"),
                                                                  str(tmp_path / "merged")]):  # fmt: skip
        proc = run_cli(*command)
        assert proc.returncode == 0, proc.stderr


def test_the_request_cap_counts_items_and_a_resume_finishes_them(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 10)
    server = detector_server()
    run = tmp_path / "capped"
    args = ["-d", server.url, "-q", "--epochs", "3", "--max-requests", "14", "--concurrency", "1"]
    proc = run_cli("eval", str(cases), "--out", str(run), *args)
    assert proc.returncode == 130 and "--max-requests 14 reached" in proc.stderr
    assert server.stats()["count"] == 14 and len(read_jsonl(run / "predictions.jsonl")) == 14  # 14 items of 30
    doc = json.loads((run / "metrics.json").read_text())
    assert doc["complete"] is False  # some cases have some of their epochs only
    resumed = run_cli("eval", "--resume", str(run), "--max-requests", "30", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert server.stats()["count"] == 30
    assert json.loads((run / "metrics.json").read_text())["complete"] is True
