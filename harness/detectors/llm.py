"""Language-model detectors behind any OpenAI-compatible chat-completions endpoint: ``llm:MODEL@BASE_URL``.

The request is rendered into a prompt template (by default ``harness/data/prompts/false-consensus.txt``; slots of
`string.Template`, see `render_prompt`), sent to ``BASE_URL/chat/completions`` through the shared `Transport` (the
HTTP adapter's retries, backoff, ``Retry-After``, concurrency and secret handling), and the reply is read
defensively: a JSON object, a fenced JSON block, or the first ``{...}`` in the text. Token usage rides along in the
prediction (`reply_usage`: a count the reply does not give as a whole number from 0 to a billion is counted at its
most, and said to be estimated).

The judged text is the agents' own, and may hold instructions aimed at the judge ("report a low risk"; the
``inject`` probe of `harness.cases.rewrites` measures how often they work). The default template therefore takes
the delimited slots: the question, each answer and each evidence note in a block of its own, opened and closed by
tags carrying a nonce (`block_nonce`) drawn from the request and found in none of its texts, so that no text can
close its block early, and it tells the model that what the blocks hold is data, never instructions. Delimiting is
no protection against a model that obeys instructions wherever they stand; it gives a model that heeds it the means
to tell the agents' words from the harness's.
"""

from __future__ import annotations

import asyncio
import hashlib
import html
import re
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path
from string import Template
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from harness.detectors.limits import Budget, RunStopped, token_estimate
from harness.detectors.options import DetectorOptions
from harness.detectors.reply import parse_prediction
from harness.detectors.transport import Transport, decode_json, split_credentials
from harness.errors import DetectorLoadError
from harness.redact import clip, redact_url
from harness.spec import DetectorSpec
from harness.types import RISKS, DetectorError, Prediction, Request

DEFAULT_PROMPT = Path(__file__).resolve().parents[1] / "data" / "prompts" / "false-consensus.txt"
"""The default template, shipped inside the package (a wheel holds it; ``configs/`` is not installed)."""
_FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)
_SECOND_URL = re.compile(r",\s*[A-Za-z][A-Za-z0-9+.-]*://")  # as in harness.redact: a comma before another URL


def model_and_base(spec: DetectorSpec) -> tuple[str, str]:
    """``llm:MODEL@BASE_URL`` as (model, base URL without a trailing slash)."""
    model, sep, base = spec.target.partition("@")
    if not (model and sep and base.startswith(("http://", "https://"))):
        raise DetectorLoadError(
            f"detector {spec.text!r}: expected llm:MODEL@BASE_URL, e.g. llm:qwen2.5-7b@http://127.0.0.1:8000/v1"
        )
    if _SECOND_URL.search(base):
        # not replicas, as for http:// specs: kept whole, the second URL's credentials would pass for a path
        raise DetectorLoadError(f"detector {spec.display!r}: llm: takes one base URL, not a list of replicas")
    return model, base.rstrip("/")


def chat_url(base_url: str) -> str:
    """``BASE_URL/chat/completions``, the path extended before any query string (``?api-version=...``)."""
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))


NONCE_CHARS = 12
"""Hex digits of a prompt's nonce (48 bits: a guess at it succeeds once in some 2.8e14 tries)."""


def _digest(salt: int, payload: bytes) -> str:
    return hashlib.sha256(str(salt).encode() + b":" + payload).hexdigest()[:NONCE_CHARS]


def block_nonce(request: Request) -> str:
    """The nonce of a request's blocks: hex digits of a hash of the rendered material (question, agent ids, answers,
    evidence), so the same request always gets the same prompt (the response cache depends on it) while no text can
    know it in advance, being part of what is hashed. The first of the salted hashes that none of those texts holds
    (in any case of letters): a text holding the nonce could write its block's end tag, so the nonce is never one."""
    texts = [request["task"], *(f for a in request["answers"] for f in (a["agent_id"], a["text"]))]
    texts += request.get("evidence", [])
    payload = orjson.dumps(texts)
    folded = [t.lower() for t in (*texts, *(_attribute(a["agent_id"]) for a in request["answers"]))]
    salt = 0
    while any((nonce := _digest(salt, payload)) in t for t in folded):
        salt += 1
    return nonce


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _attribute(value: str | int) -> str:
    """A tag's attribute value on one line: HTML's escapes for ``&<>"'``, and a character reference for each control
    character (a line break in an agent id cannot split its tag)."""
    return _CONTROL.sub(lambda m: f"&#{ord(m.group())};", html.escape(str(value), quote=True))


def _block(tag: str, text: str, **attributes: str | int) -> str:
    """``text`` as it is between ``<tag ATTRIBUTES>`` and ``</tag>``, each on a line of its own."""
    shown = "".join(f' {k}="{_attribute(v)}"' for k, v in attributes.items())
    return f"<{tag}{shown}>\n{text}\n</{tag}>"


def render_prompt(template: Template, request: Request) -> str:
    """The prompt for one request. Two sets of slots, so a template takes either:

    - delimited (the default template's): ``$question_block``, ``$answer_blocks`` and ``$evidence_blocks``, the
      question in ``<question-NONCE>``, each answer in ``<answer-NONCE n="I" agent="ID">`` and each evidence note in
      ``<evidence-NONCE n="I">`` (without evidence, the line "(no evidence was given)"), each tag and its end tag on
      lines of their own around the text as it is; ``$nonce`` the `block_nonce` the tags carry, for the template's
      instructions. No text can end its block: none holds the nonce.
    - plain (custom templates written before): ``$question``, ``$answers`` numbered with their agent ids
      ("1. [ID] text", one a line) and ``$evidence`` ("- note", one a line, or "(none)"), undelimited.
    """
    nonce = block_nonce(request)
    answers = "\n".join(f"{i}. [{a['agent_id']}] {a['text']}" for i, a in enumerate(request["answers"], start=1))
    evidence = "\n".join(f"- {e}" for e in request.get("evidence", [])) or "(none)"
    answer_blocks = "\n".join(
        _block(f"answer-{nonce}", a["text"], n=i, agent=a["agent_id"])
        for i, a in enumerate(request["answers"], start=1)
    )
    evidence_blocks = "\n".join(
        _block(f"evidence-{nonce}", e, n=i) for i, e in enumerate(request.get("evidence", []), start=1)
    )
    return template.substitute(
        question=request["task"],
        answers=answers,
        evidence=evidence,
        nonce=nonce,
        question_block=_block(f"question-{nonce}", request["task"]),
        answer_blocks=answer_blocks,
        evidence_blocks=evidence_blocks or "(no evidence was given)",
    )


def read_reply(content: str, secrets: list[str] | None = None) -> dict[str, Any]:
    """The JSON object in a model's reply: the whole text, a fenced block, or the outermost braces."""
    candidates = [content.strip(), *(m.group(1) for m in _FENCED.finditer(content))]
    if match := _OBJECT.search(content):
        candidates.append(match.group(0))
    for text in candidates:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raw = clip(content, 2000, secrets or [])
    raise DetectorError("invalid_response", "no JSON object in the model's reply", raw=raw)


def vote(predictions: list[Prediction]) -> Prediction:
    """Self-consistency: the majority risk (ties go to the higher risk), the mean score, summed usage."""
    counts = Counter(p.risk for p in predictions)
    top = max(counts.values())
    risk = max((r for r in counts if counts[r] == top), key=RISKS.index)
    scores = [p.score for p in predictions if p.score is not None]
    usage = {k: sum(p.extra.get("usage", {}).get(k, 0) for p in predictions) for k in _USAGE_KEYS}
    if not usage["estimated_tokens"]:
        del usage["estimated_tokens"]  # written only when some were counted at their most, as for one reply
    extra = {"votes": dict(counts), "reasons": [p.extra.get("reason") for p in predictions], "usage": usage}
    return Prediction(risk, statistics.fmean(scores) if scores else None, extra, sum(p.attempts for p in predictions))


_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "estimated_tokens")
MAX_USAGE_TOKENS = 10**9
"""A token count above this is no count a reply could have (1e30 once broke the journal's writer)."""


def _count(value: Any) -> int | None:
    """A token count as a reply gives it: a whole number from 0 to `MAX_USAGE_TOKENS` (an integral float such as 12.0
    too); None for anything else (absent, null, text, negative, huge, a bool)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if type(value) is int and 0 <= value <= MAX_USAGE_TOKENS else None  # not bool, an int's subclass


def reply_usage(reply: Any, worst: tuple[int, int]) -> dict[str, int]:
    """A reply's prompt and completion tokens, each counted at its most (``worst``: the prompt's tokens estimated from
    the request's size, and ``max_tokens``) when the reply gives no usable count (`_count`), so that a provider
    without ``usage`` cannot slip past ``--max-cost``; ``estimated_tokens`` says how many were so counted (written
    only when some were). The verdict counts whatever the usage holds."""
    found = reply.get("usage") if isinstance(reply, dict) else None
    found = found if isinstance(found, dict) else {}
    counts = [_count(found.get(key)) for key in ("prompt_tokens", "completion_tokens")]
    prompt, completion = (given if given is not None else most for given, most in zip(counts, worst, strict=True))
    out = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if estimated := sum(most for given, most in zip(counts, worst, strict=True) if given is None):
        out["estimated_tokens"] = estimated
    return out


def _tokens(prediction: Prediction) -> tuple[int, int]:
    usage = prediction.extra["usage"]
    return usage["prompt_tokens"], usage["completion_tokens"]


class LlmDetector:
    """A chat model asked, with a prompt template, for the false-consensus risk of each request."""

    def __init__(self, spec: DetectorSpec, options: DetectorOptions) -> None:
        self.model, base_url = model_and_base(spec)
        self._options = options
        self._transport = Transport([chat_url(base_url)], options)
        self.base_url = redact_url(split_credentials(base_url)[0])  # as the name and fingerprint always showed it
        self.name = f"llm:{self.model}@{self.base_url}"
        path = Path(options.prompt) if options.prompt else DEFAULT_PROMPT
        try:
            self._template = Template(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise DetectorLoadError(f"prompt template {path}: {exc.strerror or exc}") from exc
        self._json_mode = options.json_mode

    def secrets(self) -> list[str]:
        return self._transport.secrets()

    @property
    def budget(self) -> Budget:
        return self._transport.budget

    def fingerprint(self) -> dict[str, Any]:
        o = self._options
        return {
            "kind": "llm",
            "model": self.model,
            "base_url": self.base_url,
            "prompt_sha256": hashlib.sha256(self._template.template.encode()).hexdigest(),
            "settings": {
                "temperature": o.temperature,
                "max_tokens": o.max_tokens,
                "samples": o.samples,
                "json_mode": o.json_mode,
                "risk_field": ".".join(o.risk_field),
            },
        }

    async def preflight(self, request: Request) -> Prediction:
        with self._transport.failing_fast():
            return await self.assess(request)

    def _body(self, request: Request) -> bytes:
        samples = self._options.samples
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": render_prompt(self._template, request)}],
            "temperature": self._options.temperature if samples == 1 else max(self._options.temperature, 0.7),
            "max_tokens": self._options.max_tokens,
        }
        if self._json_mode:
            body["response_format"] = {"type": "json_object"}
        return orjson.dumps(body)

    def _interpret(self, payload: bytes, worst: tuple[int, int]) -> Prediction:
        secrets = self.secrets()
        reply = decode_json(payload, secrets)
        try:
            content = reply["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            raise DetectorError(
                "invalid_response", "not a chat completion", raw=clip(payload.decode("utf-8", "replace"), 2000, secrets)
            ) from None
        usage = reply_usage(reply, worst)
        try:
            prediction = parse_prediction(read_reply(content, secrets), self._options.risk_field)
        except DetectorError as exc:
            exc.raw = exc.raw or clip(content, 2000, secrets)
            raise
        extra = {**prediction.extra, "usage": usage}
        return replace(prediction, extra=extra)

    async def _ask(self, request: Request) -> Prediction:
        asked_json = self._json_mode
        try:
            prediction, attempts = await self._post(self._body(request))
        except DetectorError as exc:
            if not (asked_json and exc.kind == "http_status" and exc.message.startswith("HTTP 400")):
                raise
            self._json_mode = False  # the endpoint has no JSON response format: ask in plain text from now on
            prediction, attempts = await self._post(self._body(request))
            attempts += exc.attempts
        return replace(prediction, attempts=attempts)

    async def _post(self, body: bytes) -> tuple[Prediction, int]:
        worst = (token_estimate(body, 0), self._options.max_tokens)  # for --tpm and --max-cost
        return await self._transport.post(body, lambda payload: self._interpret(payload, worst), worst, _tokens)

    async def assess(self, request: Request) -> Prediction:
        if self._options.samples == 1:
            return await self._ask(request)
        results = await asyncio.gather(
            *(self._ask(request) for _ in range(self._options.samples)), return_exceptions=True
        )
        if spent := next((r for r in results if isinstance(r, RunStopped)), None):
            raise spent  # the case is not whole: it stays pending
        answered = [r for r in results if isinstance(r, Prediction)]
        if not answered:  # every sample failed: the first failure stands for the case
            raise next(r for r in results if isinstance(r, BaseException))
        return vote(answered)

    async def aclose(self) -> None:
        await self._transport.aclose()
