"""A secret that is also a word of the journal (issue 24, item 5): ``hash``, ``risk``, ``null`` or ``high`` as a
query key's value or a header's value must leave the journal's keys and values alone (scrubbing reaches only free
text) and the metrics equal to those of the same detector reached without the secret; an echoed secret is still
scrubbed from the free text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from casegen import write_cases
from conftest import read_jsonl, run_cli

from harness.redact import redact_spec, scrub_json, url_secrets

pytestmark = [pytest.mark.slow, pytest.mark.e2e]

N = 16


def _run(cases: Path, spec: str, out: Path, *args: str, env: dict | None = None) -> dict:
    proc = run_cli("eval", str(cases), "-d", spec, "--out", str(out), "-q", "--bootstrap", "0", *args, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "metrics.json").read_text())["metrics"]


def _figures(metrics: dict) -> dict:
    return {k: metrics[k] for k in ("accuracy", "confusion_matrix", "per_category")}


def test_a_secret_that_is_a_word_of_the_journal_changes_nothing(tmp_path: Path, detector_server) -> None:
    server = detector_server("--echo-headers")
    cases = write_cases(tmp_path / "cases.jsonl", N)
    plain = _figures(_run(cases, f"{server.url}/", tmp_path / "plain"))
    plain_ids = [r["id"] for r in read_jsonl(tmp_path / "plain" / "predictions.jsonl")]
    for word in ("hash", "risk", "null"):  # each broke the journal: a crash, accuracy 0, a crash
        out = tmp_path / f"key-{word}"
        assert _figures(_run(cases, f"{server.url}/?api_key={word}", out)) == plain, word
        assert [r["id"] for r in read_jsonl(out / "predictions.jsonl")] == plain_ids
    out = tmp_path / "header"
    with_header = _run(cases, f"{server.url}/", out, "--header", "X-Priority=PRIO", env={"PRIO": "high"})
    assert _figures(with_header) == plain
    journal = read_jsonl(out / "predictions.jsonl")
    # the server echoes every header it saw: the value is scrubbed there, in free text, and nowhere else
    assert all(r["response"]["headers_seen"]["X-Priority"] == "[REDACTED]" for r in journal)
    assert sum(r["risk"] == "high" for r in journal) == sum(
        r["risk"] == "high" for r in read_jsonl(tmp_path / "plain" / "predictions.jsonl")
    )


def test_scrubbing_reaches_string_values_only() -> None:
    value = {"high": 2, "risk": "high", "note": "a high risk", "n": None, "ok": True, "list": ["high", 1.5]}
    assert scrub_json(value, ["high"]) == {
        "high": 2,
        "risk": "[REDACTED]",
        "note": "a [REDACTED] risk",
        "n": None,
        "ok": True,
        "list": ["[REDACTED]", 1.5],
    }

    class Holder:
        def __repr__(self) -> str:
            return "Holder(tok-SECRET-1234)"

    assert scrub_json({"obj": Holder()}, ["tok-SECRET-1234"]) == {"obj": "Holder([REDACTED])"}  # written as its repr


@pytest.mark.parametrize("name", ["sid", "SID", "x_sid", "PHPSESSID", "code", "hmac", "access", "X-Access"])
def test_more_secret_looking_query_names(name: str) -> None:
    assert redact_spec(f"http://h/v1?{name}=SECRET&page=2") == f"http://h/v1?{name}=REDACTED&page=2"
    assert url_secrets(f"http://h/v1?{name}=SECRET&page=2") == ["SECRET"]


@pytest.mark.parametrize("name", ["side", "inside", "page", "mode"])
def test_plain_query_names_stay_as_written(name: str) -> None:
    assert redact_spec(f"http://h/v1?{name}=left") == f"http://h/v1?{name}=left"


def test_sid_code_hmac_and_access_values_reach_no_output(tmp_path: Path, detector_server) -> None:
    server = detector_server()
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    spec = f"{server.url}/?sid=SIDSECRET1&code=CODESECRET2&hmac=HMACSECRET3&access=ACCESSSECRET4&page=2"
    results = tmp_path / "results"
    proc = run_cli("eval", str(cases), "-d", spec, "--results", str(results), "--bootstrap", "0")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = results.iterdir()
    written = "".join(p.read_text() for p in run_dir.rglob("*") if p.is_file())
    assert "SECRET" not in run_dir.name + written + proc.stdout + proc.stderr
    assert "page=2" in written  # what is no secret is shown as given
