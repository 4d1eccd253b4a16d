"""``fcb serve``: any detector the harness can load, served over HTTP at ``POST /v1/consensus``.

FastAPI on uvicorn. The request model carries the case schema's limits, so a request the harness could never send
is refused with 422 naming the field; bodies over the limit get 413 before they are parsed; a detector failure is a
500 with an error id and no stack trace; ``FCB_API_KEY`` turns on bearer-token auth, checked before a byte of the
body is read; at most ``--max-connections`` requests are served at once (more get 503 at once), so the body bytes
in flight never exceed ``max_connections * max_body``. Every error body is ``{"error": ...}``.
"""

import asyncio
import hashlib
import hmac
import logging
import os
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal, TypedDict, cast

import orjson
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator
from starlette.exceptions import HTTPException as StarletteHTTPException

from harness._version import __version__
from harness.cases.agent_ids import agent_id_problems
from harness.detectors import fingerprint, load_detector
from harness.errors import UsageError
from harness.schema_messages import printable
from harness.spec import parse_spec
from harness.types import Detector, DetectorError
from harness.types import Request as DetectorRequest

DETECTOR_ENV = "FCB_SERVE_DETECTOR"
MAX_BODY_ENV = "FCB_SERVE_MAX_BODY"
BODY_TIMEOUT_ENV = "FCB_SERVE_BODY_TIMEOUT"
DEFAULT_BODY_TIMEOUT = 10.0
API_KEY_ENV = "FCB_API_KEY"
DEFAULT_MAX_BODY = 1024 * 1024
MAX_CONNECTIONS_ENV = "FCB_SERVE_MAX_CONNECTIONS"
DEFAULT_MAX_CONNECTIONS = 64
OPEN_PATHS = frozenset({"/healthz", "/v1/info", "/openapi.json"})  # need no key; every other path does
UNAUTHORISED = "missing or wrong bearer token"

log = logging.getLogger("fcb.serve")

TaskText = Annotated[str, StringConstraints(min_length=1, max_length=8000)]
AgentId = Annotated[str, StringConstraints(min_length=1, max_length=80)]
AnswerText = Annotated[str, StringConstraints(min_length=1, max_length=16000)]
EvidenceText = Annotated[str, StringConstraints(min_length=1, max_length=4000)]


class AnswerIn(BaseModel):
    """One agent's answer."""

    model_config = ConfigDict(extra="forbid")
    agent_id: AgentId
    text: AnswerText


class ConsensusRequest(BaseModel):
    """What a detector receives: the question as ``task``, 2 to 16 answers, optional evidence."""

    model_config = ConfigDict(extra="forbid")
    task: TaskText
    answers: Annotated[list[AnswerIn], Field(min_length=2, max_length=16)]
    evidence: Annotated[list[EvidenceText], Field(min_length=1, max_length=20)] | None = None

    @model_validator(mode="after")
    def _unique_agents(self) -> "ConsensusRequest":
        # the rule of a case's agent ids (harness.cases.agent_ids): unique, and visibly so
        if problems := agent_id_problems([answer.agent_id for answer in self.answers]):
            i, message = problems[0]
            raise ValueError(f"answers[{i}].agent_id: {message}")
        return self


class ConsensusResponse(BaseModel):
    """The detector's verdict. ``details`` holds whatever else the detector returned."""

    model_config = ConfigDict(extra="forbid")
    false_consensus_risk: Literal["low", "medium", "high"]
    risk_score: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class ErrorResponse(BaseModel):
    """A failure: ``error`` says what happened; ``error_id`` finds it in the server log."""

    error: str
    error_id: str | None = None


class Problem(BaseModel):
    field: str
    message: str


class ValidationErrorResponse(BaseModel):
    """A request that breaks the contract: one entry per problem, each naming its field."""

    error: Literal["invalid request"]
    problems: list[Problem]


def _field(loc: tuple[Any, ...]) -> str:
    parts = [p for p in loc if p != "body"]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(body)"


class Info(BaseModel):
    """Which detector answers here: ``fcb eval`` keeps ``name`` and ``version`` as the fingerprint of a URL.

    ``version`` is the harness version and a digest of the served code's fingerprint (the content hash of a
    Python detector's file, taken when the server started), so an edited detector gets a new version.
    """

    name: str
    version: str
    fingerprint: dict[str, Any]


class Health(BaseModel):
    status: Literal["ok"]
    detector: str
    version: str


class _TooLarge(Exception):
    """The body grew past the limit while it was being read."""


async def _reply(
    send: Callable[..., Awaitable[None]], status: int, message: str, extra: tuple[tuple[bytes, bytes], ...] = ()
) -> None:
    body = orjson.dumps({"error": message})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def authorised(headers: list[tuple[bytes, bytes]], api_key: str) -> bool:
    """Whether the request carries ``Authorization: Bearer <api_key>`` (compared in constant time)."""
    scheme, _, given = dict(headers).get(b"authorization", b"").partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), api_key.encode())


def _body_guard(
    app: Callable[..., Awaitable[None]],
    max_bytes: int,
    timeout_s: float,
    *,
    api_key: str | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> Callable[..., Awaitable[None]]:
    """ASGI middleware, in this order: at most ``max_connections`` requests at once (503 beyond, nothing read);
    the key checked from the headers (401 before a byte of the body is read); then the whole body read before
    the app sees it, refusing one over ``max_bytes`` with 413 (before anything parses it) and one that does not
    arrive within ``timeout_s`` with 408, so a slow client cannot hold a worker. Body bytes held at once are thus
    at most ``max_connections * max_bytes``."""
    active = 0

    async def read_body(receive: Callable[..., Awaitable[Any]]) -> bytes | None:
        """The whole body, or None when the client went away; raises _TooLarge past ``max_bytes``."""
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > max_bytes:
                raise _TooLarge
            more = message.get("more_body", False)
        return b"".join(chunks)

    async def middleware(scope: dict[str, Any], receive: Callable[..., Awaitable[Any]], send: Any) -> None:
        nonlocal active
        if scope["type"] != "http":
            return await app(scope, receive, send)
        if active >= max_connections:
            busy = f"server busy: {max_connections} requests in progress (--max-connections); retry"
            return await _reply(send, 503, busy, ((b"retry-after", b"1"),))
        if api_key is not None and scope["path"] not in OPEN_PATHS and not authorised(scope["headers"], api_key):
            return await _reply(send, 401, UNAUTHORISED, ((b"www-authenticate", b"Bearer"),))
        active += 1
        try:
            return await guarded(scope, receive, send)
        finally:
            active -= 1

    async def guarded(scope: dict[str, Any], receive: Callable[..., Awaitable[Any]], send: Any) -> None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > max_bytes:
            return await _reply(send, 413, f"request body exceeds {max_bytes} bytes")
        try:
            async with asyncio.timeout(timeout_s):
                body = await read_body(receive)
        except TimeoutError:
            return await _reply(send, 408, f"request body not received within {timeout_s:g} s")
        except _TooLarge:
            return await _reply(send, 413, f"request body exceeds {max_bytes} bytes")
        if body is None:
            return None
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                message: dict[str, Any] = await receive()
                return message
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, replay, send)

    return middleware


class _State(TypedDict, total=False):
    """What the app holds while it serves: set when it starts (the lifespan), read by the routes."""

    detector: Detector
    info: Info


def create_app(
    detector_spec: str,
    *,
    max_body: int = DEFAULT_MAX_BODY,
    api_key: str | None = None,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> Any:
    """The ASGI application serving ``detector_spec``; wrapped so oversized bodies never reach FastAPI."""
    state: _State = {}
    spec = parse_spec(detector_spec)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        state["detector"] = load_detector(spec)
        served = await fingerprint(state["detector"], spec)  # the code as loaded, not as edited since
        digest = hashlib.sha256(orjson.dumps(served, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]
        state["info"] = Info(name=spec.display, version=f"{__version__}+{digest}", fingerprint=served)
        yield
        await state["detector"].aclose()

    app = FastAPI(title="fcb detector service", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None)
    bearer = HTTPBearer(auto_error=False, description=f"Required when the server has {API_KEY_ENV} set.")

    def authorise(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> None:
        if api_key is None:
            return
        given = credentials.credentials if credentials else ""
        if not hmac.compare_digest(given.encode(), api_key.encode()):
            raise HTTPException(401, UNAUTHORISED, headers={"WWW-Authenticate": "Bearer"})

    @app.exception_handler(RequestValidationError)
    async def invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [{"field": _field(tuple(e["loc"])), "message": e["msg"]} for e in exc.errors()]
        return JSONResponse({"error": "invalid request", "problems": problems}, status_code=422)

    @app.exception_handler(StarletteHTTPException)  # FastAPI's HTTPException too, and routing's 404 and 405
    async def http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(Exception)
    async def internal_error(_: Request, exc: Exception) -> JSONResponse:  # a bug: the documented shape still
        error_id = uuid.uuid4().hex[:12]
        log.error("error %s: internal error: %s", error_id, type(exc).__name__)
        return JSONResponse({"error": "internal error", "error_id": error_id}, status_code=500)

    @app.middleware("http")
    async def access_log(request: Request, call_next: Callable[[Request], Awaitable[Any]]) -> Any:
        started = time.perf_counter()
        response = await call_next(request)
        ms = 1000 * (time.perf_counter() - started)
        # the path as escapes: a request must not write terminal control sequences or fake lines into the log
        log.info("%s %s %d %.1fms", printable(request.method), printable(request.url.path), response.status_code, ms)
        return response

    @app.get("/v1/info", response_model=Info)
    async def info() -> Info:
        return state["info"]

    @app.get("/healthz", response_model=Health)
    async def healthz() -> Health:
        return Health(status="ok", detector=spec.display, version=__version__)  # needs no key

    responses: dict[int | str, dict[str, Any]] = {
        408: {"model": ErrorResponse, "description": "body not received within the body timeout"},
        413: {"model": ErrorResponse, "description": "body over the size limit"},
        422: {"model": ValidationErrorResponse, "description": "request breaks the contract"},
        500: {"model": ErrorResponse, "description": "the detector failed"},
        503: {"model": ErrorResponse, "description": "more than --max-connections requests in progress; retry"},
    }
    if api_key is not None:  # the document declares the bearer scheme only when the server enforces it
        responses[401] = {"model": ErrorResponse, "description": "missing or wrong bearer token"}

    @app.post(
        "/v1/consensus",
        response_model=ConsensusResponse,
        dependencies=[Depends(authorise)] if api_key is not None else [],
        responses=responses,
    )
    async def consensus(body: ConsensusRequest) -> ConsensusResponse | JSONResponse:
        try:
            # the body passed ConsensusRequest's checks, which are the contract's Request and more
            request = cast(DetectorRequest, body.model_dump(exclude_none=True))
            prediction = await state["detector"].assess(request)
        except Exception as exc:  # never a stack trace in the response; the id finds it in the log
            error_id = uuid.uuid4().hex[:12]
            kind = exc.kind if isinstance(exc, DetectorError) else "detector_exception"
            log.error("error %s: %s: %s", error_id, kind, type(exc).__name__)
            return JSONResponse({"error": f"detector failed ({kind})", "error_id": error_id}, status_code=500)
        return ConsensusResponse(
            false_consensus_risk=prediction.risk, risk_score=prediction.score, details=prediction.extra
        )

    return _body_guard(app, max_body, body_timeout, api_key=api_key, max_connections=max_connections)


def api_key_from_env() -> str | None:
    """The bearer token ``FCB_API_KEY`` asks for; None when it is unset. Set but empty (or blank) is refused: it
    would otherwise turn authentication off without a word."""
    key = os.environ.get(API_KEY_ENV)
    if key is not None and not key.strip():
        raise UsageError(
            f"{API_KEY_ENV} is set but empty: set it to the key clients must send, or unset it to serve without "
            "authentication"
        )
    return key


def app_from_env() -> Any:
    """The factory uvicorn calls in each worker; settings arrive through the environment."""
    return create_app(
        os.environ[DETECTOR_ENV],
        max_body=int(os.environ.get(MAX_BODY_ENV, DEFAULT_MAX_BODY)),
        body_timeout=float(os.environ.get(BODY_TIMEOUT_ENV, DEFAULT_BODY_TIMEOUT)),
        api_key=api_key_from_env(),
        max_connections=int(os.environ.get(MAX_CONNECTIONS_ENV, DEFAULT_MAX_CONNECTIONS)),
    )


def serve(
    detector_spec: str,
    *,
    host: str,
    port: int,
    workers: int,
    max_body: int,
    body_timeout: float = DEFAULT_BODY_TIMEOUT,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> None:
    """Run uvicorn in the foreground until interrupted."""
    import uvicorn

    api_key_from_env()  # an empty key refused here, before a worker serves without one
    load_detector(detector_spec)  # fail here, with a clear message, rather than in every worker
    os.environ[DETECTOR_ENV] = detector_spec
    os.environ[MAX_BODY_ENV] = str(max_body)
    os.environ[BODY_TIMEOUT_ENV] = str(body_timeout)
    os.environ[MAX_CONNECTIONS_ENV] = str(max_connections)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    uvicorn.run(
        "harness.detectors.service:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        access_log=False,
        log_level="info",
        timeout_keep_alive=5,
    )
