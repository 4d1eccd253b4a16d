"""A stand-in rate-limited provider: the detector API and an OpenAI-compatible chat API behind rpm/tpm limits.

Run ``python limited_server.py --port 0 [options]``; it prints ``PORT <n>`` once it listens. In-process:
``url, stop, stats = serve_in_thread(rpm=600, minute=6)`` (the options are the command line's, with underscores).

``POST /v1/consensus`` answers ``reply_for(request)`` of detector_server.py. ``POST /v1/chat/completions`` answers a
chat completion whose content is the JSON text ``{"false_consensus_risk", "risk_score"}`` of
``reply_for({"task": "\\x00".join(contents), "answers": []})``, contents being the messages' texts in order.

Tokens: a request's prompt tokens are ``ceil(chars / 4)``, chars being the length (code points) of all message
contents together (chat), or of the task and every answer text together (detector API); completion tokens are
always ``COMPLETION_TOKENS``. The chat reply's ``usage`` states both.

Limits, the token bucket OpenAI and Anthropic describe for theirs: a minute lasts ``--minute S`` seconds (60 by
default). ``--rpm N`` and ``--tpm N`` each keep one bucket, shared by both APIs, holding at most
``C = max(1, N * burst / 60)`` (``--burst`` counts sixtieths of a minute: the default 1 gives a sixtieth of the
minute's allowance, ``--burst 60`` a whole minute's), starting full and refilled continuously at N per minute, i.e.
N / S per real second. A request costs 1 request and prompt + completion tokens. It is answered when every bucket
holds at least ``min(cost, C)``, and then each loses its cost (a request larger than the bucket waits for a full
bucket and leaves it in debt); otherwise it gets 429 and nothing is taken. Its wait is the longest of
``(min(cost, C) - level) / rate`` over the buckets short of it; ``--retry-after seconds`` (default) sends it as
``Retry-After: ceil(wait)``, ``date`` as the HTTP date ``ceil(now + wait)``, ``none`` not at all.
``--ratelimit-headers`` adds, for each configured limit, ``x-ratelimit-limit-{requests,tokens}`` (N),
``-remaining-`` (the bucket's level after this request, rounded down, at least 0) and ``-reset-`` (the time until
the bucket is full again, written as OpenAI does: "20ms", "1.5s", "6m0s") to every reply of the APIs.

Answered requests wait ``--latency`` seconds (0.05) before the reply; 429s and 503s come at once.
``--fail-503-every K`` answers 503 to the K-th, 2K-th, ... API request (counted on arrival, before the limits, at no
cost). Refusals for good come before the limits, at no cost: ``--quota-spent`` answers every request 429 with
OpenAI's ``insufficient_quota``; ``--refuse-every K`` answers 429 (``Retry-After: 1``) to every request whose text's
sha256 is a multiple of K, the same requests each time. ``--usage none|null|negative`` sends chat replies without
usable ``usage``. ``GET /stats``: ``requests``, ``answered``, ``throttled`` (429), ``unavailable`` (503), ``refused``,
``tokens`` (answered),
``answer_times``/``throttle_times``/``unavailable_times`` (arrival, in seconds after the first API request), and
``max_answered_per_minute``/``max_tokens_per_minute`` (the most in any window of S seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from email.utils import formatdate
from typing import Any

from aiohttp import web

try:
    from .detector_server import reply_for
except ImportError:  # run as a script
    from detector_server import reply_for  # type: ignore[no-redef]

COMPLETION_TOKENS = 20


def prompt_tokens(texts: list[str]) -> int:
    return math.ceil(sum(len(t) for t in texts) / 4)


def text_of(content: Any) -> str:
    """A message's text: its content, or the text of its content parts."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def completion(model: str, texts: list[str]) -> dict:
    reply = reply_for({"task": "\x00".join(texts), "answers": []})
    content = json.dumps({"false_consensus_risk": reply["false_consensus_risk"], "risk_score": reply["risk_score"]})
    n, m = prompt_tokens(texts), COMPLETION_TOKENS
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    usage = {"prompt_tokens": n, "completion_tokens": m, "total_tokens": n + m}
    return {"id": "cmpl-limited", "object": "chat.completion", "model": model, "choices": [choice], "usage": usage}


def go_duration(seconds: float) -> str:
    """A duration as OpenAI's x-ratelimit-reset-* headers write it (Go's style, to the millisecond)."""
    ms = max(0, round(seconds * 1000))
    if ms < 1000:
        return f"{ms}ms" if ms else "0s"
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s = f"{rest // 1000}" + (f".{rest % 1000:03d}".rstrip("0") if rest % 1000 else "") + "s"
    return f"{h}h{m}m{s}" if h else f"{m}m{s}" if m else s


class Bucket:
    def __init__(self, kind: str, per_minute: int, minute_s: float, burst: float) -> None:
        self.kind, self.limit = kind, per_minute
        self.capacity = max(1.0, per_minute * burst / 60)
        self.rate = per_minute / minute_s  # per real second
        self.level, self.at = self.capacity, time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait(self, cost: float) -> float:
        """Seconds until this bucket admits the cost (0 when it does now)."""
        return max(0.0, (min(cost, self.capacity) - self.level) / self.rate)

    def headers(self) -> dict[str, str]:
        reset = (self.capacity - self.level) / self.rate
        return {
            f"x-ratelimit-limit-{self.kind}": str(self.limit),
            f"x-ratelimit-remaining-{self.kind}": str(max(0, math.floor(self.level))),
            f"x-ratelimit-reset-{self.kind}": go_duration(reset),
        }


def max_in_window(times: list[float], weights: list[int], span: float) -> int:
    """The largest total weight of the times in any half-open window [t, t + span)."""
    best = total = i = 0
    for j, t in enumerate(times):
        total += weights[j]
        while t - times[i] >= span:
            total -= weights[i]
            i += 1
        best = max(best, total)
    return best


class Limited:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.buckets = [
            Bucket(kind, n, args.minute, args.burst) for kind, n in (("requests", args.rpm), ("tokens", args.tpm)) if n
        ]
        self.t0: float | None = None
        self.requests = 0
        self.answers: list[float] = []
        self.answer_tokens: list[int] = []
        self.throttles: list[float] = []
        self.unavailable: list[float] = []
        self.refusals = 0

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/consensus", self.consensus)
        app.router.add_post("/v1/chat/completions", self.chat)
        app.router.add_get("/stats", self.stats)
        return app

    async def consensus(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        texts = [body["task"], *(a["text"] for a in body["answers"])]
        return await self.answer(texts, lambda: reply_for(body))

    async def chat(self, request: web.Request) -> web.Response:
        body = json.loads(await request.read())
        texts = [text_of(m.get("content")) for m in body["messages"]]
        return await self.answer(texts, lambda: self.with_usage(completion(body.get("model", "limited"), texts)))

    def with_usage(self, reply: dict) -> dict:
        """The reply's ``usage`` as ``--usage`` says: as counted, absent, null, or negative counts."""
        kind = self.args.usage
        if kind == "none":
            del reply["usage"]
        elif kind == "null":
            reply["usage"] = None
        elif kind == "negative":
            reply["usage"] = {"prompt_tokens": -5, "completion_tokens": -1, "total_tokens": -6}
        return reply

    def refused(self, texts: list[str]) -> web.Response | None:
        """429 for good: every request with ``--quota-spent``; with ``--refuse-every K``, the requests whose text's
        digest is a multiple of K (the same requests every time, as a filter refusing one kind of request)."""
        if self.args.quota_spent:
            error = {"message": "You exceeded your current quota, please check your plan and billing details.",
                     "type": "insufficient_quota", "code": "insufficient_quota"}  # fmt: skip
            return self.reply(429, {"error": error}, {"Retry-After": "1"})
        k = self.args.refuse_every
        if k and int(hashlib.sha256("\x00".join(texts).encode()).hexdigest(), 16) % k == 0:
            self.refusals += 1
            error = {"message": "Rate limit reached for this kind of request", "code": "rate_limit_exceeded"}
            return self.reply(429, {"error": error}, {"Retry-After": "1"})
        return None

    async def answer(self, texts: list[str], make: Callable[[], Any]) -> web.Response:
        now = time.monotonic()
        self.t0 = now if self.t0 is None else self.t0
        self.requests += 1
        if (refusal := self.refused(texts)) is not None:
            return refusal
        at = round(now - self.t0, 6)
        tokens = prompt_tokens(texts) + COMPLETION_TOKENS
        for b in self.buckets:
            b.refill(now)
        k = self.args.fail_503_every
        if k and self.requests % k == 0:
            self.unavailable.append(at)
            return self.reply(503, {"error": {"message": "overloaded", "type": "unavailable"}})
        costs = [(b, 1 if b.kind == "requests" else tokens) for b in self.buckets]
        wait, short = max(((b.wait(c), b.kind) for b, c in costs), default=(0.0, ""))
        if wait > 0:
            self.throttles.append(at)
            headers = {}
            if self.args.retry_after == "seconds":
                headers["Retry-After"] = str(math.ceil(wait))
            elif self.args.retry_after == "date":
                headers["Retry-After"] = formatdate(math.ceil(time.time() + wait), usegmt=True)
            error = {"message": f"Rate limit reached for {short} per minute", "code": "rate_limit_exceeded"}
            return self.reply(429, {"error": {**error, "type": short}}, headers)
        for b, c in costs:
            b.level -= c
        self.answers.append(at)
        self.answer_tokens.append(tokens)
        headers = self.limit_headers()  # the state at admission, as the client's request left it
        await asyncio.sleep(self.args.latency)
        return self.reply(200, make(), headers)

    def limit_headers(self) -> dict[str, str]:
        if not self.args.ratelimit_headers:
            return {}
        return {k: v for b in self.buckets for k, v in b.headers().items()}

    def reply(self, status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
        headers = headers if status == 200 else {**(headers or {}), **self.limit_headers()}
        return web.Response(status=status, body=json.dumps(body), content_type="application/json", headers=headers)

    def snapshot(self) -> dict:
        minute = self.args.minute
        return {
            "requests": self.requests,
            "answered": len(self.answers),
            "throttled": len(self.throttles),
            "unavailable": len(self.unavailable),
            "refused": self.refusals,
            "tokens": sum(self.answer_tokens),
            "answer_times": self.answers,
            "throttle_times": self.throttles,
            "unavailable_times": self.unavailable,
            "max_answered_per_minute": max_in_window(self.answers, [1] * len(self.answers), minute),
            "max_tokens_per_minute": max_in_window(self.answers, self.answer_tokens, minute),
            "options": vars(self.args),
        }

    async def stats(self, _: web.Request) -> web.Response:
        return self.reply(200, self.snapshot())


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--rpm", type=int, default=0, help="requests per minute (0: no limit)")
    p.add_argument("--tpm", type=int, default=0, help="tokens per minute (0: no limit)")
    p.add_argument("--minute", type=float, default=60.0, help="the length of a minute in seconds")
    p.add_argument("--burst", type=float, default=1.0, help="bucket capacity, in sixtieths of a minute's allowance")
    p.add_argument("--latency", type=float, default=0.05, help="seconds an answered request waits")
    p.add_argument("--retry-after", choices=("none", "seconds", "date"), default="seconds")
    p.add_argument("--ratelimit-headers", action="store_true", help="OpenAI's x-ratelimit-* headers")
    p.add_argument("--fail-503-every", type=int, default=0, help="answer 503 to every K-th request")
    p.add_argument("--usage", choices=("given", "none", "null", "negative"), default="given", help="chat usage")
    p.add_argument("--refuse-every", type=int, default=0, help="429 for good to one request in K (by its text)")
    p.add_argument("--quota-spent", action="store_true", help="429 insufficient_quota to every request")
    return p


async def start(args: argparse.Namespace) -> tuple[web.AppRunner, Limited, int]:
    limited = Limited(args)
    runner = web.AppRunner(limited.app(), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, args.host, args.port).start()
    return runner, limited, runner.addresses[0][1]


def serve_in_thread(**options: Any) -> tuple[str, Callable[[], None], Callable[[], dict]]:
    """Serve on a thread of its own: (base url, stop(), stats()); options are the command line's (rpm=..., ...)."""
    defaults = vars(parser().parse_args([]))
    if unknown := set(options) - set(defaults):
        raise TypeError(f"unknown options {sorted(unknown)}")
    args = argparse.Namespace(**{**defaults, **options})
    loop = asyncio.new_event_loop()
    ready: Future = Future()

    def run() -> None:
        try:
            ready.set_result(loop.run_until_complete(start(args)))
        except BaseException as exc:
            ready.set_exception(exc)
            return
        loop.run_forever()
        loop.run_until_complete(ready.result()[0].cleanup())
        loop.close()

    thread = threading.Thread(target=run, name="limited-server", daemon=True)
    thread.start()
    _, limited, port = ready.result(timeout=30)

    def stop() -> None:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)

    def stats() -> dict:
        async def snap() -> dict:
            return json.loads(json.dumps(limited.snapshot()))  # a copy, made on the server's own thread

        return asyncio.run_coroutine_threadsafe(snap(), loop).result(timeout=10)

    return f"http://{args.host}:{port}", stop, stats


async def main_async(args: argparse.Namespace) -> None:
    _, _, port = await start(args)
    print(f"PORT {port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main_async(parser().parse_args()))
