"""Sharding (fcb eval --shard K/N) and merging (fcb merge): a split evaluation ends with a single run's metrics."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _metrics(run: Path) -> dict:
    doc = json.loads((run / "metrics.json").read_text())
    doc["metrics"].pop("operational")
    return doc


def test_shards_partition_the_cases_stably_and_merge_to_a_single_run(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 90)
    shuffled = tmp_path / "shuffled.jsonl"
    lines = cases.read_text().splitlines()
    random.Random(1).shuffle(lines)
    shuffled.write_text("\n".join(lines) + "\n")
    members = []
    for k in (1, 2, 3):
        for source, tag in ((cases, "a"), (shuffled, "b")):
            proc = run_cli("eval", str(source), "--shard", f"{k}/3", "-q", "--out", str(tmp_path / f"{tag}{k}"))
            assert proc.returncode == 0, proc.stderr
        ids_a = {r["id"] for r in read_jsonl(tmp_path / f"a{k}" / "predictions.jsonl")}
        ids_b = {r["id"] for r in read_jsonl(tmp_path / f"b{k}" / "predictions.jsonl")}
        assert ids_a == ids_b  # the same cases whatever the file's order
        members.append(ids_a)
    assert set().union(*members) == {c["id"] for c in read_jsonl(cases)} and sum(map(len, members)) == 90
    assert all(len(m) >= 15 for m in members)  # no shard is starved
    assert not json.loads((tmp_path / "a1" / "metrics.json").read_text())["complete"]  # a part, not the whole

    single = tmp_path / "single"
    assert run_cli("eval", str(cases), "-q", "--out", str(single)).returncode == 0
    merged = tmp_path / "merged"
    proc = run_cli("merge", *(str(tmp_path / f"a{k}") for k in (3, 1, 2)), "--out", str(merged), "-q")
    assert proc.returncode == 0, proc.stderr
    got, want = _metrics(merged), _metrics(single)
    assert got["metrics"] == want["metrics"] and got["complete"] is True
    assert sorted(r["id"] for r in read_jsonl(merged / "predictions.jsonl")) == sorted(
        c["id"] for c in read_jsonl(cases)
    )
    page = (merged / "report.html").read_text()  # the merged run has its page: the 3x4 matrix and the cases
    assert page.count('<td class="cell"') == 12 and "cases-data" in page
    # the merged run ranks and compares like any other
    assert run_cli("compare", str(single), str(merged)).returncode == 0


def test_merge_refuses_incomplete_or_mixed_shard_sets(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    other = write_cases(tmp_path / "other.jsonl", 30, seed=9)
    for k in (1, 2):
        assert run_cli("eval", str(cases), "--shard", f"{k}/2", "-q", "--out", str(tmp_path / f"s{k}")).returncode == 0
    assert run_cli("eval", str(other), "--shard", "2/2", "-q", "--out", str(tmp_path / "o2")).returncode == 0
    missing = run_cli("merge", str(tmp_path / "s1"), "--out", str(tmp_path / "m1"))
    assert missing.returncode == 2 and "shards 1/N .. N/N" in missing.stderr
    mixed = run_cli("merge", str(tmp_path / "s1"), str(tmp_path / "o2"), "--out", str(tmp_path / "m2"))
    assert mixed.returncode == 2 and "dataset_sha256" in mixed.stderr
    twice = run_cli("merge", str(tmp_path / "s1"), str(tmp_path / "s1"), "--out", str(tmp_path / "m3"))
    assert twice.returncode == 2


def test_a_merged_run_is_complete_and_costed_by_the_rules_of_a_single_run(tmp_path: Path, detector_server) -> None:
    # --limit past the end of the file leaves no case out; the prices cost every request: a merge of two shards
    # says what the single run says of both (it once called any run with a limit incomplete, and dropped the cost)
    from conftest import OPENAI_SERVER

    server = detector_server(script=OPENAI_SERVER)
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    config = tmp_path / "priced.toml"
    config.write_text(f'detector = "llm:json@{server.url}/v1"\nprice_prompt_per_mtok = 2.0\n'
                      "price_completion_per_mtok = 8.0\n")  # fmt: skip
    common = ["--detector-config", str(config), "--limit", "1000", "-q", "--bootstrap", "100", "--no-cache"]
    assert run_cli("eval", str(cases), *common, "--out", str(tmp_path / "single")).returncode == 0
    for k in (1, 2):
        proc = run_cli("eval", str(cases), *common, "--shard", f"{k}/2", "--out", str(tmp_path / f"s{k}"))
        assert proc.returncode == 0, proc.stderr
    proc = run_cli("merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "merged"), "-q")
    assert proc.returncode == 0, proc.stderr
    single, merged = (json.loads((tmp_path / r / "metrics.json").read_text()) for r in ("single", "merged"))
    assert single["complete"] is True and merged["complete"] is True
    want, got = single["metrics"]["operational"]["tokens"], merged["metrics"]["operational"]["tokens"]
    assert want["cost_usd"] > 0 and got == pytest.approx(want)  # the same tokens, costed at the same prices
    assert merged["settings"] == {**single["settings"], "shard": None} and "merged_from" in merged
