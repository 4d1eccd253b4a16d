"""Keep secrets out of everything the harness writes: URLs lose their credentials and secret-looking query values."""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_SECRET_PARAM = re.compile(r"(key|token|secret|password|passwd|auth|signature|sig)", re.IGNORECASE)
MASK = "REDACTED"
_URL = re.compile(r"https?://[^\s'\"<>]+")
_SECRET_ENV = re.compile(r"(key|token|secret|password|passwd|credential)", re.IGNORECASE)


def redact_url(url: str) -> str:
    """``url`` with any user:password and secret-looking query values replaced by ``REDACTED``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, MASK if _SECRET_PARAM.search(k) else v) for k, v in pairs], safe=MASK)
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def redact_spec(spec: str) -> str:
    """A detector spec fit to store: URLs (one, or several comma-separated replicas, or an ``llm:`` base URL) are
    redacted; other specs name code and are kept as they are."""
    if spec.startswith("llm:") and "@" in spec:  # llm:MODEL@BASE_URL: the URL part may carry a key
        model, _, base = spec.partition("@")
        return f"{model}@{redact_spec(base)}"
    if not spec.startswith(("http://", "https://")):
        return spec
    return ",".join(redact_url(u.strip()) for u in spec.split(","))


def url_secrets(url: str) -> list[str]:
    """The secret parts of a URL: its password and secret-looking query values (user names are not secret)."""
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if v and _SECRET_PARAM.search(k)]
    return found


def header_secrets(value: str) -> list[str]:
    """A header value and, for ``Bearer``/``Basic`` credentials, the token and the decoded password."""
    found = [value]
    scheme, _, credential = value.partition(" ")
    if credential:
        found.append(credential)
        if scheme.lower() == "basic":
            with contextlib.suppress(binascii.Error, UnicodeDecodeError):
                found += base64.b64decode(credential).decode().split(":", 1)[1:]
    return found


def env_secrets() -> list[str]:
    """Values of environment variables whose names look secret (``*_TOKEN``, ``*_API_KEY``, ``*PASSWORD*``...)."""
    return [value for name, value in os.environ.items() if value and _SECRET_ENV.search(name)]


def _redact_match(match: re.Match[str]) -> str:
    try:
        return redact_url(match.group(0))
    except ValueError:  # not a URL urlsplit can read: leave it, the secrets below are still replaced
        return match.group(0)


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Free text (a traceback, an error message) fit to store: URLs lose credentials and key-like query values;
    the given secrets and the values of secret-looking environment variables become ``[REDACTED]``."""
    text = _URL.sub(_redact_match, text)
    for value in sorted({v for v in (*secrets, *env_secrets()) if len(v) >= 4}, key=len, reverse=True):
        text = text.replace(value, "[REDACTED]")
    return text
