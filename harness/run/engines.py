"""Where a Python detector runs: in the harness's process (``local``), in a pool of worker processes
(``processes``), or in Ray actors (``ray``), on this machine or a Ray cluster.

An engine is a `Detector` to the runner: the runner keeps the journal, retries, timeouts, progress, secrets
scrubbing and metrics on the driver whatever the engine, so a run gives the same figures under each. The engines
ship label-free requests in small batches to workers that each load the detector once (a class's model is loaded
once per worker) and assess them with the very adapters a local run uses, the per-case timeout included. A worker
that dies mid-run (killed, out of memory) costs no case: its batch is sent again to a live worker, and each case is
still journaled once.
"""

from __future__ import annotations

import abc
import asyncio
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any

from harness.detectors import fingerprint, load_detector
from harness.detectors.batch import Batcher
from harness.detectors.functions import exception_error
from harness.detectors.options import DetectorOptions
from harness.errors import DetectorLoadError, UsageError
from harness.files import drop_output_on_broken_pipe
from harness.redact import scrub_text
from harness.spec import parse_spec
from harness.types import Detector, DetectorError, HasSecrets, HasTrainingItems, Prediction, Request

ENGINES = ("local", "processes", "ray")
MIN_CHUNK = 32  # measured: 8 gave 1.2x with 2 processes on 2 cores, 32 gave 1.6-1.8x
RESTART_POLLS, RESTART_POLL_S = 600, 0.1  # how long a lost Ray actor may take to come back: a minute
MAX_WORKER_DEATHS = 3  # a batch whose worker died this often fails its cases (a case that kills every worker)


@dataclass(frozen=True)
class EngineSettings:
    """``--engine``, ``--workers``, ``--ray-address``, ``--num-cpus``, ``--num-gpus``."""

    engine: str = "local"
    workers: int | None = None  # default: the machine's CPU count (processes), or the cluster's CPUs (ray)
    ray_address: str | None = None
    num_cpus: float | None = None
    num_gpus: float | None = None

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise UsageError(f"--engine {self.engine!r}: choose from {', '.join(ENGINES)}")
        if self.workers is not None and self.workers < 1:
            raise UsageError(f"--workers must be at least 1, got {self.workers}")
        if self.engine != "ray" and (self.ray_address or self.num_cpus is not None or self.num_gpus is not None):
            raise UsageError("--ray-address, --num-cpus and --num-gpus go with --engine ray")


def open_detector(spec: str, options: DetectorOptions, engine: EngineSettings) -> Detector:
    """The detector for ``spec`` under ``engine``. Raises `DetectorLoadError` for a spec no worker can load."""
    if engine.engine == "local":
        return load_detector(spec, options)
    parsed = parse_spec(spec)
    if parsed.kind in ("http", "llm"):
        raise UsageError(
            f"--engine {engine.engine} runs Python detectors (builtin:, module:function, file.py:function); "
            "an HTTP detector scales on its own side (replicas: several URLs, comma-separated)"
        )
    spec = parsed.portable()  # a file's path made absolute: a worker started elsewhere finds it
    if engine.engine == "processes":
        return ProcessEngine(spec, options, engine.workers or os.cpu_count() or 1)
    return RayEngine(spec, options, engine)


# --- the worker side: the same in a worker process and in a Ray actor -------------------------------------------


def _wire(prediction: Prediction | None, error: DetectorError | None) -> tuple[Any, ...]:
    """A result as plain data: exceptions with their own constructors do not cross process boundaries well."""
    if prediction is not None:
        return ("ok", prediction.risk, prediction.score, prediction.extra, prediction.attempts)
    assert error is not None
    return ("error", error.kind, error.message, error.attempts, error.raw, error.traceback, error.status,
            error.connect_failed)  # fmt: skip


async def _assess_one(detector: Detector, request: Request) -> tuple[Any, ...]:
    try:
        return _wire(await detector.assess(request), None)
    except DetectorError as exc:
        return _wire(None, exc)
    except Exception as exc:  # a broken detector costs its case, as in a local run
        return _wire(None, exception_error(exc))


async def assess_all(detector: Detector, requests: list[Request]) -> list[tuple[Any, ...]]:
    """Each request's result, assessed concurrently (a batch detector batches them again)."""
    return list(await asyncio.gather(*(_assess_one(detector, r) for r in requests)))


async def describe(detector: Detector, spec: str) -> dict[str, Any]:
    """What the driver needs to know of a worker's detector: name, fingerprint, secrets, training items."""
    return {
        "name": getattr(detector, "name", spec),
        "fingerprint": await fingerprint(detector, spec),
        "secrets": list(detector.secrets()) if isinstance(detector, HasSecrets) else [],
        "train_source_items": sorted(detector.train_source_items) if isinstance(detector, HasTrainingItems) else [],
    }


def _worker_options(options: DetectorOptions, chunk: int) -> DetectorOptions:
    # a worker holds one batch (of `chunk` requests) at a time: its threads and batches are sized for that
    return replace(options, concurrency=max(chunk, options.batch_size))


class _ProcessState:
    """The detector loaded in this worker process, and the event loop it runs on (both kept between batches)."""

    spec = ""
    detector: Detector | None = None
    failed: BaseException | None = None
    loop: asyncio.AbstractEventLoop | None = None


def _load_in_process(spec: str, options: DetectorOptions, path: list[str]) -> None:
    """A worker process's start: load the detector once. A failure is kept for the first call to raise, with its
    message (an initializer that raises only breaks the pool, without saying why)."""
    state = _ProcessState
    drop_output_on_broken_pipe()  # a detector's print() after fcb's reader went away must not fail its case
    sys.path.extend(p for p in path if p not in sys.path)  # the driver's: module:function specs import alike
    state.spec, state.loop = spec, asyncio.new_event_loop()
    try:
        state.detector = load_detector(spec, options)
    except Exception as exc:
        state.failed = exc


def _in_process(call: str, requests: list[Request]) -> Any:
    """Runs in a worker process: describe the detector, or assess ``requests``."""
    state = _ProcessState
    if state.failed is not None:
        raise state.failed
    assert state.detector is not None and state.loop is not None
    if call == "describe":
        return state.loop.run_until_complete(describe(state.detector, state.spec))
    return state.loop.run_until_complete(assess_all(state.detector, requests))


# --- the driver side -----------------------------------------------------------------------------------------------


def _unwire(result: tuple[Any, ...], secrets: list[str]) -> Prediction:
    if result[0] == "ok":
        _, risk, score, extra, attempts = result
        return Prediction(risk, score, extra, attempts)
    _, kind, message, attempts, raw, traceback, status, connect_failed = result
    # scrubbed here too: a worker on another machine does not know this machine's secrets
    raise DetectorError(
        kind,
        scrub_text(message, secrets),
        attempts,
        raw=raw,
        traceback=scrub_text(traceback, secrets) if traceback else traceback,
        status=status,
        connect_failed=connect_failed,
    )


class _Engine(abc.ABC):
    """What the process and Ray engines share: batching on the driver, the detector's description, the results."""

    def __init__(self, spec: str, options: DetectorOptions, workers: int) -> None:
        self.spec, self.options, self.workers = spec, options, workers
        # a batch per worker at work and one waiting, so that no worker idles while results travel back
        # (at least MIN_CHUNK cases a batch: each batch costs the driver a round trip)
        self.chunk = max(options.batch_size, -(-options.concurrency // (2 * workers)), MIN_CHUNK)
        self.concurrency = max(options.concurrency, 2 * workers * self.chunk)
        self.name = spec
        self.deaths = 0  # workers lost during the run (for tests and the report)
        self._batcher = Batcher(self._send, self.chunk, wait=0)  # what the runner queued in one turn of the loop
        self._info: dict[str, Any] = {}

    def _described(self, info: dict[str, Any]) -> None:
        self._info = info
        self.name = info["name"]
        if info["train_source_items"]:
            self.train_source_items = set(info["train_source_items"])

    def fingerprint(self) -> dict[str, Any]:
        return dict(self._info["fingerprint"])

    def secrets(self) -> list[str]:
        return list(self._info["secrets"])

    async def assess(self, request: Request) -> Prediction:
        return _unwire(await self._batcher.submit(request), self._info.get("secrets", []))

    async def _send(self, requests: list[Request]) -> list[tuple[Any, ...]]:
        for _ in range(MAX_WORKER_DEATHS):
            try:
                return await self._call(requests)
            except _WorkerDied:
                self.deaths += 1  # the batch goes again, to a live or replacement worker
        raise DetectorError(
            "detector_exception", f"the worker running this case died {MAX_WORKER_DEATHS} times (killed or crashed)"
        )

    @abc.abstractmethod
    async def _call(self, requests: list[Request]) -> list[tuple[Any, ...]]:
        """Run one batch on a worker; raise `_WorkerDied` when the worker is lost."""


class _WorkerDied(Exception):
    pass


class ProcessEngine(_Engine):
    """``--engine processes --workers N``: N worker processes, each importing the detector once."""

    def __init__(self, spec: str, options: DetectorOptions, workers: int) -> None:
        super().__init__(spec, options, workers)
        self._worker_options = _worker_options(options, self.chunk)
        self._pool = self._new_pool()
        try:
            # one call per worker: each starts its process, which loads the detector before the run begins
            started = [self._pool.submit(_in_process, "describe", []) for _ in range(workers)]
            self._described(started[0].result())
            for future in started[1:]:
                future.result()
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            raise DetectorLoadError(f"detector {spec!r}: the worker process died while loading it") from None
        except BaseException:
            self._pool.shutdown(wait=False, cancel_futures=True)
            raise

    def _new_pool(self) -> ProcessPoolExecutor:
        import multiprocessing

        # spawn, not fork: the driver may hold threads and an event loop that a forked child must not inherit
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_load_in_process,
            initargs=(self.spec, self._worker_options, list(sys.path)),
        )

    async def _call(self, requests: list[Request]) -> list[tuple[Any, ...]]:
        pool = self._pool
        try:
            return await asyncio.wrap_future(pool.submit(_in_process, "assess", requests))
        except BrokenProcessPool:
            if pool is self._pool:  # the first batch to notice replaces the pool; the others just go again
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._new_pool()
            raise _WorkerDied from None

    async def aclose(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayWorker:
    """A Ray actor holding one instance of the detector (wrapped with `ray.remote` when the engine starts)."""

    def __init__(self, spec: str, options: DetectorOptions, path: list[str]) -> None:
        sys.path.extend(p for p in path if p not in sys.path)
        self.spec = spec
        self.detector = load_detector(spec, options)

    async def describe(self) -> dict[str, Any]:
        return await describe(self.detector, self.spec)

    async def assess(self, requests: list[Request]) -> list[tuple[Any, ...]]:
        return await assess_all(self.detector, requests)


class RayEngine(_Engine):
    """``--engine ray --workers N``: N Ray actors, each with one instance of the detector, scheduled with
    ``--num-cpus`` and ``--num-gpus`` each. Without ``--ray-address`` a local Ray is started, on 127.0.0.1 and
    without its dashboard, and stopped at the end."""

    def __init__(self, spec: str, options: DetectorOptions, settings: EngineSettings) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no usage report leaves this machine
        try:
            import ray
        except ImportError:
            raise UsageError("--engine ray needs Ray: pip install 'fcb-harness[ray]'") from None
        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            _start_ray(ray, settings.ray_address)
        workers = settings.workers or max(1, int(ray.cluster_resources().get("CPU", 1) // (settings.num_cpus or 1)))
        super().__init__(spec, options, workers)
        resources = {"num_cpus": 1 if settings.num_cpus is None else settings.num_cpus}
        if settings.num_gpus:
            resources["num_gpus"] = settings.num_gpus
        # Ray restarts a dead actor (loading the detector again); the driver sends its batch again meanwhile
        self._actor_class = ray.remote(RayWorker).options(max_restarts=-1, max_task_retries=0, **resources)
        worker_options = _worker_options(options, self.chunk)
        # Any: Ray's type hints show an actor handle's methods as plain methods, without their ``.remote``
        self._actors: list[Any] = [
            self._actor_class.remote(spec, worker_options, list(sys.path)) for _ in range(workers)
        ]
        self._load = [0] * workers
        try:
            # every actor up, its detector loaded, before the run's clock starts
            self._described(ray.get([actor.describe.remote() for actor in self._actors])[0])
        except ray.exceptions.RayActorError as exc:
            self._shutdown()
            raise DetectorLoadError(
                f"detector {spec!r}: the Ray actor failed to load it: {_actor_cause(exc)}"
            ) from None

    async def _call(self, requests: list[Request]) -> list[tuple[Any, ...]]:
        index = min(range(len(self._actors)), key=self._load.__getitem__)  # the least busy actor
        self._load[index] += 1
        try:
            return await self._actors[index].assess.remote(requests)
        except self._ray.exceptions.RayActorError:
            await self._restarted(self._actors[index])
            raise _WorkerDied from None
        finally:
            self._load[index] -= 1

    async def _restarted(self, actor: Any) -> None:
        """Wait while Ray restarts a lost actor: a batch sent again at once meets the same actor still down (under
        load, in several tries in a row) and would count one death as many."""
        for _ in range(RESTART_POLLS):
            try:
                await actor.__ray_ready__.remote()
                return
            except self._ray.exceptions.ActorUnavailableError:
                await asyncio.sleep(RESTART_POLL_S)  # restarting: not yet reachable
            except self._ray.exceptions.RayActorError:
                return  # dead for good (its detector no longer loads): the next try reports it

    def _shutdown(self) -> None:
        for actor in getattr(self, "_actors", []):
            self._ray.kill(actor)
        if self._started:
            self._ray.shutdown()

    async def aclose(self) -> None:
        self._shutdown()


def _start_ray(ray: Any, address: str | None) -> None:
    import logging

    if address:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        return
    # a local Ray for this run only: bound to 127.0.0.1, no dashboard
    ray.init(
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        logging_level=logging.WARNING,
        log_to_driver=False,
    )


def _actor_cause(exc: BaseException) -> str:
    text = str(exc)
    for line in reversed(text.splitlines()):
        if "Error" in line or "error" in line:
            return line.strip()[:300]
    return text[:300]
