"""Secrets in every spec form, in `fcb serve`'s open endpoints, and in error text cut to length (issue 15, 1-4)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from casegen import write_cases
from conftest import OPENAI_SERVER, read_jsonl, run_cli
from servicekit import Service

from harness.redact import redact_spec, scrub_secrets

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("spec", "kept"),
    [
        ("llm:m@http://alice:pwSECRET@h:8000/v1?api_key=kSECRET", "llm:m@http://REDACTED@h:8000/v1?api_key=REDACTED"),
        ("HTTP://alice:pwSECRET@h/", "http://REDACTED@h/"),  # a scheme in capitals is still a URL
        ("http://a:SECRET1@h1,http://b:SECRET2@h2", "http://REDACTED@h1,http://REDACTED@h2"),
        ("http://h/?ids=1,2&token=SECRET", "http://h/?ids=1%2C2&token=REDACTED"),  # a comma inside one URL
        ("builtin:learned?train=data/t.jsonl&token=SECRET", "builtin:learned?train=data%2Ft.jsonl&token=REDACTED"),
        ("builtin:learned?train=data/t.jsonl", "builtin:learned?train=data/t.jsonl"),  # nothing to hide: as given
        ("pkg.mod:fn", "pkg.mod:fn"),
    ],
)
def test_every_spec_form_is_redacted(spec: str, kept: str) -> None:
    assert redact_spec(spec) == kept


@pytest.mark.parametrize("name", ["jwt", "session", "session_id", "pwd", "pass", "passphrase", "credential", "x-auth"])
def test_secret_looking_query_names(name: str) -> None:
    assert redact_spec(f"http://h/v1?{name}=SECRET&page=2") == f"http://h/v1?{name}=REDACTED&page=2"


def test_a_cut_off_start_of_a_secret_is_scrubbed() -> None:
    token = "tok-0123456789-SECRET-abcdefghijk"  # 33 characters
    cut = f'HTTP 404: {{"echo": "{token[:13]}'  # what a 200-character cut left of it
    assert scrub_secrets(cut, [token]) == 'HTTP 404: {"echo": "[REDACTED]'
    assert scrub_secrets("tok-012 is fine", [token]) == "tok-012 is fine"  # 7 characters: not recognisable
    assert scrub_secrets("a tok-01234567", [token]) == "a [REDACTED]"


def test_llm_spec_secrets_never_reach_any_output(tmp_path: Path, detector_server) -> None:
    server = detector_server(script=OPENAI_SERVER)
    spec = f"llm:json@http://alice:pwSECRET@127.0.0.1:{server.port}/v1?jwt=jwtSECRET&session=sessSECRET"
    cases = write_cases(tmp_path / "cases.jsonl", 4)
    results = tmp_path / "results"
    proc = run_cli("eval", str(cases), "-d", spec, "--results", str(results), "--bootstrap", "50")
    assert proc.returncode == 0, proc.stderr
    (run_dir,) = results.iterdir()
    assert "SECRET" not in run_dir.name and "alice" not in run_dir.name
    written = "".join(p.read_text() for p in run_dir.rglob("*") if p.is_file())
    assert written.count("llm:json@http://REDACTED@127.0.0.1") >= 2  # run.json and metrics.json name it, redacted
    assert "SECRET" not in written + proc.stdout + proc.stderr


def test_serve_health_and_info_never_show_credentials(detector_server) -> None:
    upstream = detector_server()
    spec = upstream.url.replace("http://", "http://user:pwSECRET@") + "/?api_key=kSECRET&jwt=jSECRET"
    svc = Service("--detector", spec)
    try:
        health = httpx.get(f"{svc.url}/healthz", timeout=10)
        info = httpx.get(f"{svc.url}/v1/info", timeout=10)
    finally:
        svc.stop()
    assert health.status_code == 200 and info.status_code == 200
    assert health.json()["detector"].startswith("http://REDACTED@127.0.0.1")
    assert "SECRET" not in health.text + info.text + svc.log()


def test_an_error_cut_in_the_middle_of_a_secret_leaves_none_of_it(tmp_path: Path, detector_server) -> None:
    token = "tok-0123456789-SECRET-abcdefghijk"
    server = detector_server("--status", "404")  # its body echoes the request path, query string included
    # The body is cut to 200 characters; pad the path so that the token starts at character 187 of the body
    head = '{"error": "as configured", "path": "/v1/consensus?pad='
    pad = "p" * (187 - len(head) - len("&api_key="))
    cases = write_cases(tmp_path / "cases.jsonl", 3)
    out = tmp_path / "run"
    url = f"{server.url}/v1/consensus?pad={pad}&api_key={token}"
    proc = run_cli("eval", str(cases), "-d", url, "--out", str(out), "-q", "--no-preflight")
    assert proc.returncode == 1, proc.stderr  # every case errored
    records = read_jsonl(out / "predictions.jsonl")
    assert {r["error"]["kind"] for r in records} == {"http_status"} and len(records) == 3
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file()) + proc.stdout + proc.stderr
    assert "pppp" in written  # the message was kept, up to the secret
    assert token[:8] not in written  # no start of the token of 8 characters or more (the cut left 13)


@pytest.mark.parametrize(
    "spec", ["HTTP://alice:pwSECRET@127.0.0.1:9/v1", "llm:m@ftp://alice:pwSECRET@127.0.0.1:9/v1?api_key=kSECRET"]
)
def test_a_spec_refused_at_load_is_quoted_without_its_secrets(tmp_path: Path, spec: str) -> None:
    # no adapter takes these (a scheme in capitals names Python code; llm: wants http), and the error that says so
    # quoted the spec as given, password and all
    cases = write_cases(tmp_path / "cases.jsonl", 2)
    proc = run_cli("eval", str(cases), "-d", spec, "-q", "--out", str(tmp_path / "run"))
    assert proc.returncode == 2, proc.stderr
    assert "REDACTED@127.0.0.1:9/v1" in proc.stderr
    assert "SECRET" not in proc.stdout + proc.stderr
