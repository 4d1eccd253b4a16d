"""Keep secrets out of everything the harness writes: URLs lose their credentials and secret-looking query values."""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_SECRET_PARAM = re.compile(r"(key|token|secret|password|passwd|auth|signature|sig)", re.IGNORECASE)
MASK = "REDACTED"


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
    """A detector spec fit to store: URLs (one, or several comma-separated replicas) are redacted; other specs
    name code and are kept as they are."""
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
