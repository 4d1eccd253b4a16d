"""Redaction of URLs and specs on hand-worked examples (`harness.redact`), and credentials split from a URL."""

from __future__ import annotations

import os
import re

import pytest

from harness.detectors.transport import split_credentials
from harness.redact import (
    clip,
    env_secrets,
    header_secrets,
    redact_spec,
    redact_url,
    scrub_json,
    scrub_secrets,
    scrub_text,
    scrub_value,
    url_secrets,
)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No environment variable whose name looks secret, so that only the ones a test sets are scrubbed."""
    for name in list(os.environ):
        if re.search("key|token|secret|passw|credential|jwt", name, re.IGNORECASE):
            monkeypatch.delenv(name)
    return monkeypatch


def test_redaction() -> None:
    assert redact_url("https://u:p@h.example:8443/x?api_key=abc&mode=fast") == (
        "https://REDACTED@h.example:8443/x?api_key=REDACTED&mode=fast"
    )
    assert redact_spec("pkg.mod:fn") == "pkg.mod:fn"
    url, auth = split_credentials("http://user:pa%3Ass@127.0.0.1:9/v1/consensus")
    assert url == "http://127.0.0.1:9/v1/consensus" and auth == "Basic dXNlcjpwYTpzcw=="  # base64 of user:pa:ss


# --------------------------------------------------------------------------------------------------------------
# redact_url


@pytest.mark.parametrize(
    ("url", "redacted"),
    [
        # the user info goes whole, up to the last "@" (a password may hold one)
        ("https://alice:p@ss@host.example/v1", "https://REDACTED@host.example/v1"),
        ("https://bob@host.example/?q=1", "https://REDACTED@host.example/?q=1"),
        # nothing secret in the query: kept as written, escapes and all
        ("https://h.example/search?q=a%20b&page=2+3", "https://h.example/search?q=a%20b&page=2+3"),
        ("https://h.example/plain", "https://h.example/plain"),
        # a secret: the query is written again, the secret values masked, a blank one too
        ("https://h.example/cb?token=&state=xyz", "https://h.example/cb?token=REDACTED&state=xyz"),
        ("https://h.example/p?code=4%2F0Ab&scope=a%20b", "https://h.example/p?code=REDACTED&scope=a+b"),
        ("https://h.example/p?sig=zz#frag", "https://h.example/p?sig=REDACTED#frag"),
        ("wss://u:p@h.example/s?Access=1", "wss://REDACTED@h.example/s?Access=REDACTED"),
    ],
)
def test_redact_url(url: str, redacted: str) -> None:
    assert redact_url(url) == redacted


SECRET_NAMES = [
    "api_key",
    "KEY",
    "access_token",
    "client_secret",
    "password",
    "pwd",
    "auth",
    "X-Amz-Signature",
    "jwt",
    "session_id",
    "phpsessid",
    "credential",
    "cookie",
    "bearer",
    "private",
    "otp",
    "hmac",
    "code",
    "sid",
    "SID",
    "user_sid",
]
PLAIN_NAMES = ["side", "inside", "sids", "mode", "q", "page", "limit"]  # "sid" only as a word of its own


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_secret_query_names(name: str) -> None:
    assert redact_url(f"https://h.example/?{name}=v4lue&page=1") == f"https://h.example/?{name}=REDACTED&page=1"
    assert url_secrets(f"https://h.example/?{name}=v4lue&page=1") == ["v4lue"]


@pytest.mark.parametrize("name", PLAIN_NAMES)
def test_plain_query_names(name: str) -> None:
    assert redact_url(f"https://h.example/?{name}=v4lue&page=1") == f"https://h.example/?{name}=v4lue&page=1"
    assert url_secrets(f"https://h.example/?{name}=v4lue&page=1") == []


# --------------------------------------------------------------------------------------------------------------
# redact_spec


@pytest.mark.parametrize(
    ("spec", "stored"),
    [
        (
            "http://a:pw1@h1.example/v1,http://h2.example/v1?token=t2",
            "http://REDACTED@h1.example/v1,http://h2.example/v1?token=REDACTED",
        ),
        ("http://h1.example/?k=1, https://u:p@h2.example", "http://h1.example/?k=1, https://REDACTED@h2.example"),
        # a comma inside a query is not a replica's: one URL, its query written again
        ("http://h.example/?ids=1,2&api_key=zz", "http://h.example/?ids=1%2C2&api_key=REDACTED"),
        ("llm:gpt-4o@https://user:sk-pass@api.example/v1", "llm:gpt-4o@https://REDACTED@api.example/v1"),
        ("HTTP://U:P@H.EXAMPLE/", "http://REDACTED@H.EXAMPLE/"),  # urlsplit writes the scheme in lower case
        ("builtin:heuristic?token=abc&mode=x", "builtin:heuristic?token=REDACTED&mode=x"),
        ("builtin:heuristic?mode=x&n=2", "builtin:heuristic?mode=x&n=2"),
        # options start at the first "?", as parse_spec reads them: the token's value runs to the end
        ("builtin:heuristic?token=zz?b=1", "builtin:heuristic?token=REDACTED"),
        ("builtin:heuristic", "builtin:heuristic"),
    ],
)
def test_redact_spec(spec: str, stored: str) -> None:
    assert redact_spec(spec) == stored


# --------------------------------------------------------------------------------------------------------------
# the secrets of a URL, a header, the environment


def test_url_secrets() -> None:
    url = "https://user:pw-1234@h.example/?api_key=k-5678&mode=m&token=&sid=s-9"
    assert url_secrets(url) == ["pw-1234", "k-5678", "s-9"]  # the user name and a blank value are not secrets
    assert url_secrets("https://user@h.example/") == []
    assert url_secrets("https://h.example/?q=1") == []


@pytest.mark.parametrize(
    ("value", "secrets"),
    [
        ("Bearer abc.def.ghi", ["Bearer abc.def.ghi", "abc.def.ghi"]),
        # base64 of alice:s3cr:et! -- the password is what follows the first colon
        ("Basic YWxpY2U6czNjcjpldCE=", ["Basic YWxpY2U6czNjcjpldCE=", "YWxpY2U6czNjcjpldCE=", "s3cr:et!"]),
        ("BASIC YWxpY2U6czNjcjpldCE=", ["BASIC YWxpY2U6czNjcjpldCE=", "YWxpY2U6czNjcjpldCE=", "s3cr:et!"]),
        ("Basic bm9jb2xvbmhlcmU=", ["Basic bm9jb2xvbmhlcmU=", "bm9jb2xvbmhlcmU="]),  # "nocolonhere": no password
        ("Basic //46cHc=", ["Basic //46cHc=", "//46cHc="]),  # bytes ff fe : p w, not UTF-8
        ("Basic abc", ["Basic abc", "abc"]),  # not base64 (bad padding)
        ("Bearer", ["Bearer"]),
        ("sk-only-token", ["sk-only-token"]),
    ],
)
def test_header_secrets(value: str, secrets: list[str]) -> None:
    assert header_secrets(value) == secrets


def test_env_secrets(clean_env: pytest.MonkeyPatch) -> None:
    named = {
        "FCB_T_TOKEN": "tok-value-1",
        "my_api_key": "key-value-2",
        "DB_PASSWORD": "pw-value-3",
        "AWS_CREDENTIALS": "cred-value-4",
        "SESSION_JWT": "jwt-value-5",
        "CLIENT_SECRET": "sec-value-6",
    }
    for name, value in named.items():
        clean_env.setenv(name, value)
    clean_env.setenv("EMPTY_TOKEN", "")
    clean_env.setenv("PWD", "/home/someone")  # the working directory, not a password
    clean_env.setenv("FCB_T_MODE", "fast")
    assert sorted(env_secrets()) == sorted(named.values())


# --------------------------------------------------------------------------------------------------------------
# scrubbing text


@pytest.mark.parametrize(
    ("text", "secrets", "scrubbed"),
    [
        ("pin 123 and code abcd", ["123", "abcd"], "pin 123 and code [REDACTED]"),  # under 4 characters: kept
        ("key=abcdefgh12345", ["abcd", "abcdefgh12345"], "key=[REDACTED]"),  # the longest first
        ("key=azzzzzzz9", ["zzzz", "azzzzzzz9"], "key=[REDACTED]"),  # by length, not by the letters
        ("a tok-0123456789 b tok-0123456789 c", ["tok-0123456789"], "a [REDACTED] b [REDACTED] c"),
        ("x=tok-0123456789;y", ["tok-0123456789"], "x=[REDACTED];y"),
        ("tok-0123456789tok-0123456789", ["tok-0123456789"], "[REDACTED][REDACTED]"),  # one right after the other
        ("x tok-tok-tok-12345 y", ["tok-tok-tok-12345"], "x [REDACTED] y"),  # its start recurs inside it: one mask
        ("x abcdefghabcdefgh99 y", ["abcdefghabcdefgh99"], "x [REDACTED] y"),  # two whole copies of its start
        ("ababababab12", ["abababab12"], "[REDACTED]"),  # its start occurs just before it: the overlap is masked too
        ("x ababababXY abababab12 y", ["abababab12"], "x [REDACTED]XY [REDACTED] y"),
        ("tok-tok-tok-tok-1", ["tok-tok-1"], "[REDACTED]"),  # three overlapping starts, the last one whole
        # a secret cut short: 8 characters or more of its start go, and whatever more of it follows
        ("sent sk-abcdefghij", ["sk-abcdefghijklmnop"], "sent [REDACTED]"),
        ("sent sk-abcdefXYZ", ["sk-abcdefghijklmnop"], "sent [REDACTED]XYZ"),
        ("sent sk-abcde", ["sk-abcdefghijklmnop"], "sent [REDACTED]"),
        ("sent sk-abcd.", ["sk-abcdefghijklmnop"], "sent sk-abcd."),  # 7 characters: too short to tell
        ("nothing here", ["tok-0123456789"], "nothing here"),
        ("nothing here", [], "nothing here"),
    ],
)
def test_scrub_secrets(text: str, secrets: list[str], scrubbed: str) -> None:
    assert scrub_secrets(text, secrets) == scrubbed


def test_scrub_text(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("FCB_T_TOKEN", "env-secret-7777")
    text = "GET HTTP://u:pw@h.example/a?token=t1&x=2 failed: env-secret-7777 and given-secret-42"
    assert scrub_text(text, ["given-secret-42"]) == (
        "GET http://REDACTED@h.example/a?token=REDACTED&x=2 failed: [REDACTED] and [REDACTED]"
    )
    assert scrub_text("url='https://u:pw@h.example/a' next") == "url='https://REDACTED@h.example/a' next"


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        # URLs urlsplit refuses (an unclosed IPv6 bracket): the user info and the whole query are masked
        ("see http://user:pw@[::1/x?token=abc now", "see http://REDACTED@[::1/x?REDACTED now"),
        ("see http://a:b@[::1/y now", "see http://REDACTED@[::1/y now"),
        ("see http://[::1/z?q=1 now", "see http://[::1/z?REDACTED now"),
        ("see http://[::1/w now", "see http://[::1/w now"),
    ],
)
def test_scrub_text_unreadable_url(clean_env: pytest.MonkeyPatch, text: str, scrubbed: str) -> None:
    assert scrub_text(text) == scrubbed


def test_clip_scrubs_before_it_cuts(clean_env: pytest.MonkeyPatch) -> None:
    # "token [REDACTED] is long"[:12]; cut first, "tok-01" would be too short a start to be recognised
    assert clip("token tok-0123456789 is long", 12, ["tok-0123456789"]) == "token [REDAC"
    assert clip("short", 12) == "short"


# --------------------------------------------------------------------------------------------------------------
# scrubbing JSON values


def test_scrub_value_scrubs_strings_only() -> None:
    value = {
        "tok-0123456789": ["tok-0123456789 x", 1234, 2.5, True, None, ("tok-0123456789",)],
        "n": {"k": "tok-0123456789"},
    }
    assert scrub_value(value, ["tok-0123456789", "1234", "true"]) == {
        "tok-0123456789": ["[REDACTED] x", 1234, 2.5, True, None, ["[REDACTED]"]],  # keys and numbers stay
        "n": {"k": "[REDACTED]"},
    }


class _Opaque:
    def __repr__(self) -> str:
        return "Opaque(tok-0123456789)"


def test_scrub_json() -> None:
    value = {1: "tok-0123456789", "o": _Opaque(), "l": [0.5]}
    assert scrub_json(value, []) is value  # no secrets: the value itself, untouched
    assert scrub_json(value, ["tok-0123456789"]) == {"1": "[REDACTED]", "o": "Opaque([REDACTED])", "l": [0.5]}
