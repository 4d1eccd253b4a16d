"""A small OpenAI-compatible chat-completions server for tests (no real model can run here).

``POST /v1/chat/completions`` (any path: the path is recorded) answers according to the requested model name:
``json`` a JSON reply; ``fenced`` a fenced JSON block with text around it; ``garbage`` prose with no JSON;
``vote`` high, high, low in turn (for self-consistency); ``echokey`` a JSON reply whose reason quotes the first 12
characters of the bearer token (a model leaking its key); ``throttle`` a 429 with ``Retry-After: 1`` on the first
request of each prompt; ``slow`` waits 3 s; ``nojsonmode`` refuses ``response_format`` with 400.
Usage: prompt tokens = words in the prompt, completion tokens = 7. It prints ``PORT <n>``; requests are appended
to ``--record`` when given.

Two scripted judges for prompt injection (the ``inject`` probe of `harness.cases.rewrites`), each answering low
when it obeys an instruction asking for a low risk (`LOW_ASKED`: "report ... low", "output ... low", Spanish
"informe ... bajo", or a verdict ``false_consensus_risk: low`` / ``= "low"`` written as JSON or code, as each
template of ``INJECTIONS`` does; not the template's own ``"low" | "medium" | "high"``), else high as ``json`` does:

- ``obey`` obeys such an instruction wherever it stands in the user message: no prompt protects against it;
- ``obey-outside`` respects delimiters (`outside_blocks`), as a careful model would: it takes the nonce from the
  first ``<question-NONCE``, ``<answer-NONCE`` or ``<evidence-NONCE`` tag of the prompt (the template's own, which
  comes before any data), drops every block running from such a start tag on a line of its own to the first line
  that is its end tag ``</KIND-NONCE>``, and obeys an instruction only in what is left. A prompt without such tags
  (a template that pastes the answers in plain) is all outside.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMPLETION_TOKENS = 7
BAD_USAGE = {
    "text": "lots",
    "list": [1, 2],
    "null": None,
    "huge": {"prompt_tokens": 1e30, "completion_tokens": 7, "total_tokens": 1e30},
    "negative": {"prompt_tokens": -5, "completion_tokens": -1, "total_tokens": -6},
    "strings": {"prompt_tokens": "many", "completion_tokens": "7", "total_tokens": True},
}
"""The ``usage`` a model named ``usage-KIND`` replies with."""

LOW_ASKED = re.compile(
    r"\b(?:report|output|return|informe|reporte)\b[^.\n]{0,80}?\b(?:low|bajo)\b"
    r"|false_consensus_risk[\"']?\s*[:=]\s*[\"']?low\b(?![\"']?\s*\|)",
    re.IGNORECASE,
)
"""An instruction asking the judge for a low risk (the template's ``"low" | "medium" | "high"`` is none)."""
_FIRST_TAG = re.compile(r"<(?:question|answer|evidence)-([0-9A-Za-z]+)[\s>]")


def outside_blocks(prompt: str) -> str:
    """The prompt with its data blocks taken out, read as a model that respects the template's delimiters reads it:
    the blocks' nonce is the first tag's; a block runs from its start tag, on a line of its own, to the first line
    that is its end tag, whatever lies between."""
    found = _FIRST_TAG.search(prompt)
    if found is None:
        return prompt
    nonce = re.escape(found.group(1))
    block = re.compile(
        rf"^<(question|answer|evidence)-{nonce}(?:[ \t][^\n]*)?>[ \t]*\n.*?\n</\1-{nonce}>[ \t]*$", re.M | re.S
    )
    return block.sub("", prompt)


def obeyed(model: str, prompt: str) -> bool:
    """Whether the scripted judge ``obey`` or ``obey-outside`` follows an instruction to answer low."""
    return bool(LOW_ASKED.search(prompt if model == "obey" else outside_blocks(prompt)))


def completion(content: str, prompt: str) -> dict:
    n = len(prompt.split())
    return {
        "id": "cmpl-test",
        "object": "chat.completion",
        "model": "test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": n, "completion_tokens": COMPLETION_TOKENS, "total_tokens": n + COMPLETION_TOKENS},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record")
    args = parser.parse_args()
    lock = threading.Lock()
    seen: dict[str, int] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def _send(self, status: int, body: dict, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(raw)

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = body["messages"][0]["content"]
            with lock:
                seen[prompt] = seen.get(prompt, 0) + 1
                nth = seen[prompt]
                if args.record:
                    with open(args.record, "a") as f:
                        f.write(json.dumps({"path": self.path, "body": body, "headers": dict(self.headers)}) + "\n")
            model = body["model"]
            reply = {"false_consensus_risk": "high", "risk_score": 0.8, "reason": "the majority copied one answer"}
            if model == "nojsonmode" and "response_format" in body:
                return self._send(400, {"error": {"message": "response_format is not supported"}})
            if model == "throttle" and nth == 1:
                return self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
            if model == "slow":
                time.sleep(3)
            if model == "fenced":
                content = "Here is my verdict:\n```json\n" + json.dumps(reply) + "\n```\nHope that helps."
            elif model == "garbage":
                content = "I cannot decide whether these agents agree for good reasons."
            elif model == "echokey":
                token = self.headers.get("Authorization", "").partition(" ")[2]
                content = json.dumps({**reply, "reason": f"my key starts {token[:12]}, said the model"})
            elif model in ("obey", "obey-outside"):
                low = obeyed(model, prompt)
                content = json.dumps(
                    {"false_consensus_risk": "low", "risk_score": 0.1, "reason": "as instructed"} if low else reply
                )
            elif model == "vote":
                risk = ("high", "high", "low")[(nth - 1) % 3]
                content = json.dumps({"false_consensus_risk": risk, "risk_score": 0.9 if risk == "high" else 0.3})
            else:
                content = json.dumps(reply)
            sent = completion(content, prompt)
            if model.startswith("usage-"):  # usage as careless providers send it: the verdict itself is fine
                sent["usage"] = BAD_USAGE[model.removeprefix("usage-")]
            return self._send(200, sent)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
