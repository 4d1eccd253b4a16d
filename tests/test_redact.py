"""Redaction of URLs and specs on hand-worked examples (`harness.redact`), and credentials split from a URL."""

from __future__ import annotations

from harness.detectors.transport import split_credentials
from harness.redact import redact_spec, redact_url


def test_redaction() -> None:
    assert redact_url("https://u:p@h.example:8443/x?api_key=abc&mode=fast") == (
        "https://REDACTED@h.example:8443/x?api_key=REDACTED&mode=fast"
    )
    assert redact_spec("pkg.mod:fn") == "pkg.mod:fn"
    url, auth = split_credentials("http://user:pa%3Ass@127.0.0.1:9/v1/consensus")
    assert url == "http://127.0.0.1:9/v1/consensus" and auth == "Basic dXNlcjpwYTpzcw=="  # base64 of user:pa:ss
