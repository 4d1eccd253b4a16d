"""Keep secrets out of everything the harness writes: URLs lose their credentials and secret-looking query values."""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson

# A query name containing any of these is taken for a secret (``api_key``, ``jwt``, ``session_id``, ``pwd``,
# ``code`` of an OAuth redirect, ``hmac``, ``access``...); ``sid`` only as a word of its own (not ``side``).
_SECRET_PARAM = re.compile(
    r"(key|token|secret|pass|pwd|auth|sig|jwt|session|sessid|cred|cookie|bearer|private|otp|hmac|access|code)"
    r"|(?<![a-z])sid(?![a-z])",
    re.IGNORECASE,
)
MASK = "REDACTED"
SCRUBBED = "[REDACTED]"
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")  # any scheme, in any case (HTTP://, wss://...)
_SECRET_ENV = re.compile(r"(key|token|secret|passw|credential|jwt)", re.IGNORECASE)  # not PWD: the directory
_REPLICAS = re.compile(r",(?=\s*[A-Za-z][A-Za-z0-9+.-]*://)")  # the commas between replica URLs, not in a query
PREFIX_MIN = 8
"""A cut-off start of a known secret this long or longer is scrubbed too (a message truncated mid-token)."""


def redact_url(url: str) -> str:
    """``url`` with any user:password and secret-looking query values replaced by ``REDACTED``."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    return urlunsplit(parts._replace(netloc=netloc, query=_redact_query(parts.query)))


def _redact_query(query: str) -> str:
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(_SECRET_PARAM.search(k) for k, _ in pairs):
        return query  # as written: nothing to hide
    return urlencode([(k, MASK if _SECRET_PARAM.search(k) else v) for k, v in pairs])  # MASK: letters, kept as is


def redact_spec(spec: str) -> str:
    """A detector spec fit to store, whatever its form: every URL in it (a plain URL, comma-separated replicas,
    an ``llm:MODEL@BASE_URL``'s base, a URL given as an option) loses its credentials and secret-looking query
    values, and so does the ``?key=value`` part of a spec that is not a URL (``builtin:NAME?token=...``)."""
    return ",".join(_redact_part(part) for part in _REPLICAS.split(spec))


def _redact_part(part: str) -> str:
    if _URL.search(part):
        return _URL.sub(_redact_match, part)
    head, sep, query = part.partition("?")  # as parse_spec reads a builtin's options; no "?": no query, kept
    return head + sep + _redact_query(query)


def url_secrets(url: str) -> list[str]:
    """The secret parts of a URL: its password and secret-looking query values (user names are not secret)."""
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query) if _SECRET_PARAM.search(k)]  # blank values left out
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
    except ValueError:  # not a URL urlsplit can read: mask what looks like credentials and the query
        url = re.sub(r"(://)[^/?#\s]*@", rf"\1{MASK}@", match.group(0))
        return url.partition("?")[0] + (f"?{MASK}" if "?" in url else "")


def scrub_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with each secret (4 characters or more) replaced by ``[REDACTED]``, and so is any start of one that
    is `PREFIX_MIN` characters or longer: what is left of a secret when a message was cut in the middle of it."""
    for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
        text = _scrub_one(text, secret)
    return text


def _scrub_one(text: str, secret: str) -> str:
    head = secret[:PREFIX_MIN]  # the whole of a short secret
    if head not in text:
        return text  # the common case, and quick
    # Every copy of the head, overlapping ones too ("abababab12" inside "ababababab12" starts at the second copy):
    # each masks the head and whatever more of the secret follows it, and masks that overlap merge into one.
    spans: list[list[int]] = []
    for found in re.finditer(f"(?={re.escape(head)})", text):  # a for loop: a planted fault cannot loop forever
        at = found.start()
        # the rest of the secret, compared character by character (what RUF071 warns of)
        reach = at + len(os.path.commonprefix([text[at : at + len(secret)], secret]))  # noqa: RUF071
        if spans and at < spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], reach)
        else:
            spans.append([at, reach])  # one right after the other stays two masks
    out, start = [], 0
    for at, reach in spans:
        out += [text[start:at], SCRUBBED]
        start = reach
    return "".join(out) + text[start:]


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """Free text (a traceback, an error message) fit to store: URLs lose credentials and key-like query values;
    the given secrets and the values of secret-looking environment variables (and long starts of them) become
    ``[REDACTED]``."""
    return scrub_secrets(_URL.sub(_redact_match, text), (*secrets, *env_secrets()))


def clip(text: str, limit: int, secrets: Iterable[str] = ()) -> str:
    """The first ``limit`` characters of ``text`` once scrubbed: scrubbing first means that a cut can never leave
    part of a secret behind."""
    return scrub_text(text, secrets)[:limit]


def scrub_value(value: Any, secrets: list[str]) -> Any:
    """A decoded JSON value with `scrub_secrets` applied to every string value in it. Keys are left as they are
    (a record's own field names, a detector's votes counted by risk), and so are numbers, booleans and null: a
    secret that happens to be a word such as ``hash``, ``risk`` or ``null`` must never change what a document
    means. Recursive: callers hold values nested at most `harness.jsoncheck.MAX_DEPTH` levels."""
    if isinstance(value, str):
        return scrub_secrets(value, secrets)
    if isinstance(value, dict):
        return {k: scrub_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_value(v, secrets) for v in value]
    return value


def scrub_json(value: Any, secrets: list[str]) -> Any:
    """`scrub_value` of ``value`` as JSON writes it: what JSON cannot hold becomes its ``repr`` first (as the journal
    and the cache write it), so that a secret inside such a value is scrubbed too."""
    if not secrets:
        return value
    plain = orjson.loads(orjson.dumps(value, default=repr, option=orjson.OPT_NON_STR_KEYS))
    return scrub_value(plain, secrets)
