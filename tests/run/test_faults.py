"""Fault injection: a detector server (its own process, 127.0.0.1) that fails on command. Every case is accounted
for, transient faults are retried away, permanent ones become errors of the right kind, nothing hangs or blows up
memory, and --concurrency is honoured."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli, short_backoff
from servers.detector_server import PERMANENT_FAULTS, TRANSIENT_FAULTS, fault_for

pytestmark = [pytest.mark.slow, pytest.mark.e2e]


def _metrics(run: Path) -> dict:
    m = json.loads((run / "metrics.json").read_text())["metrics"]
    m.pop("operational")
    return m


def _views(cases: Path) -> list[dict]:
    return [
        {
            "task": c["question"],
            "answers": [{"agent_id": a["agent_id"], "text": a["text"]} for a in c["answers"]],
            **({"evidence": c["evidence"]} if "evidence" in c else {}),
        }
        for c in read_jsonl(cases)
    ]


def test_transient_faults_are_retried_to_the_fault_free_metrics(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 250)
    clean = detector_server()
    faulty = detector_server(
        "--fault-rate", "0.3", "--faults", ",".join(TRANSIENT_FAULTS), "--slow-s", "2", "--seed", "1"
    )
    common = ["-q", "--concurrency", "16", "--timeout", "1", "--retries", "3", "--bootstrap", "100",
              *short_backoff(tmp_path)]  # fmt: skip
    assert run_cli("eval", str(cases), "-d", clean.url, "--out", str(tmp_path / "clean"), *common).returncode == 0
    proc = run_cli("eval", str(cases), "-d", faulty.url, "--out", str(tmp_path / "faulty"), *common, timeout=300)
    assert proc.returncode == 0, proc.stderr

    journal = read_jsonl(tmp_path / "faulty" / "predictions.jsonl")
    assert sorted(r["id"] for r in journal) == sorted(c["id"] for c in read_jsonl(cases))  # each case once
    assert all(r["error"] is None for r in journal)
    views = dict(zip((c["id"] for c in read_jsonl(cases)), _views(cases), strict=True))
    faulted = {cid for cid, v in views.items() if fault_for(v, 0.3, TRANSIENT_FAULTS, 1)}
    kinds = Counter(fault_for(v, 0.3, TRANSIENT_FAULTS, 1) for v in views.values())
    assert 55 <= len(faulted) <= 95 and len(kinds) == len(TRANSIENT_FAULTS) + 1  # every kind was injected
    retried = {r["id"] for r in journal if r["attempts"] > 1}
    # every faulted case was tried again; a few others may be too, when a keep-alive connection that a
    # faulty reply broke is reused and fails on first use
    assert faulted <= retried and len(retried - faulted) <= 0.05 * len(journal)
    assert _metrics(tmp_path / "faulty") == _metrics(tmp_path / "clean")


@pytest.mark.parametrize(
    ("fault", "kind"),
    [
        ("notjson", "invalid_response"),
        ("norisk", "invalid_response"),
        ("badrisk", "invalid_response"),
        ("wrongtype", "invalid_response"),
        ("huge", "invalid_response"),
        ("redirect", "http_status"),
        ("503", "http_status"),
        ("hang", "timeout"),
        ("reset", "connection"),
        ("truncated", "connection"),
    ],
)
def test_permanent_faults_become_errors_of_the_right_kind(
    tmp_path: Path, detector_server, fault: str, kind: str
) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 6)
    server = detector_server("--fault-rate", "1", "--faults", fault, "--fault-every-attempt")
    out = tmp_path / "run"
    proc = run_cli(
        "eval",
        str(cases),
        "-d",
        server.url,
        "--out",
        str(out),
        "-q",
        "--timeout",
        "1",
        "--retries",
        "1",
        "--fail-on-error",
        "0.5",
        *short_backoff(tmp_path),
        # a reply without the risk at the first case stops a preflight (it would be every reply's); here every case
        # must meet the fault and end as its error
        *(("--no-preflight",) if fault == "norisk" else ()),
        timeout=120,
    )
    assert proc.returncode == 1 and "exceeds --fail-on-error" in proc.stderr  # the gate acts on the errors
    journal = read_jsonl(out / "predictions.jsonl")
    assert len(journal) == 6 and {r["error"]["kind"] for r in journal} == {kind}
    retried = {r["attempts"] for r in journal}
    assert retried == ({2} if fault in TRANSIENT_FAULTS else {1})  # only transient kinds are tried again
    doc = json.loads((out / "metrics.json").read_text())
    assert (
        doc["metrics"]["confusion_matrix"]["counts"][0][3]
        + doc["metrics"]["confusion_matrix"]["counts"][1][3]
        + doc["metrics"]["confusion_matrix"]["counts"][2][3]
        == 6
    )  # counted, in the error column


def test_permanent_kinds_are_the_ones_the_server_treats_so() -> None:
    assert set(PERMANENT_FAULTS) & set(TRANSIENT_FAULTS) == set()


@pytest.mark.parametrize("concurrency", [1, 5])
def test_concurrency_is_honoured(tmp_path: Path, detector_server, concurrency: int) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 30)
    server = detector_server("--delay", "0.05")
    proc = run_cli(
        "eval", str(cases), "-d", server.url, "-q", "--concurrency", str(concurrency), "--results", str(tmp_path)
    )
    assert proc.returncode == 0
    assert server.stats()["max_in_flight"] == concurrency  # reached, never exceeded


def test_replicas_share_the_load_and_a_failing_one_is_avoided(tmp_path: Path, detector_server) -> None:
    cases = write_cases(tmp_path / "cases.jsonl", 60)
    a, b = detector_server("--delay", "0.02"), detector_server("--delay", "0.02")
    out = tmp_path / "shared"
    proc = run_cli("eval", str(cases), "-d", f"{a.url},{b.url}", "--concurrency", "6", "-q", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert a.stats()["count"] + b.stats()["count"] == 60 and min(a.stats()["count"], b.stats()["count"]) >= 15

    healthy, broken = detector_server(), detector_server("--status", "503")
    out = tmp_path / "failover"
    proc = run_cli(
        "eval", str(cases), "-d", f"{broken.url},{healthy.url}", "--concurrency", "4", "-q", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    journal = read_jsonl(out / "predictions.jsonl")
    assert len(journal) == 60 and all(r["error"] is None for r in journal)  # no case failed
    assert broken.stats()["count"] <= 8  # tried, found failing, then left alone for the rest of the run
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["detector"]["spec"] == f"{broken.url},{healthy.url}"  # the replicas, as given
