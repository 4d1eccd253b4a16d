"""Where a Python detector runs: in the harness's process (``local``), in a pool of worker processes
(``processes``), or in Ray actors (``ray``), on this machine or a Ray cluster.

An engine is a `Detector` to the runner: the runner keeps the journal, retries, timeouts, progress, secrets
scrubbing and metrics on the driver whatever the engine, so a run gives the same figures under each. The engines
ship label-free requests in small batches to workers that each load the detector once (a class's model is loaded
once per worker) and assess them with the very adapters a local run uses, the per-case timeout included. A worker
that dies mid-run (killed, out of memory, crashed by a case) costs at most the case that crashed it: each case of
its batch goes again alone, and each case is still journaled once. The worker side is in `harness.run.worker`.
"""

from __future__ import annotations

import abc
import asyncio
import atexit
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from harness.detectors import load_detector
from harness.detectors.batch import Batcher
from harness.detectors.options import DetectorOptions
from harness.errors import DetectorLoadError, UsageError
from harness.redact import scrub_text
from harness.run.worker import ProcessWorker, WorkerDied, assess_all, describe, wire, worker_options
from harness.spec import DetectorSpec, parse_spec
from harness.types import RISKS, Detector, DetectorError, Prediction, Request
from harness.vocabulary import ENGINES

MIN_CHUNK = 32  # measured: 8 gave 1.2x with 2 processes on 2 cores, 32 gave 1.6-1.8x
RESTART_POLLS, RESTART_POLL_S = 600, 0.1  # how long a lost Ray actor may take to come back: a minute
CASE_DEATHS = 2  # a case whose worker died under it this often, each time alone, is an error: it kills workers


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


def open_detector(spec: DetectorSpec, options: DetectorOptions, engine: EngineSettings) -> Detector:
    """The detector for ``spec`` under ``engine``. Raises `DetectorLoadError` for a spec no worker can load."""
    if engine.engine == "local":
        return load_detector(spec, options)
    if spec.kind in ("http", "llm"):
        raise UsageError(
            f"--engine {engine.engine} runs Python detectors (builtin:, module:function, file.py:function); "
            "an HTTP detector scales on its own side (replicas: several URLs, comma-separated)"
        )
    # what crosses to a worker is the spec's text, a file's path made absolute (a worker started elsewhere finds
    # it), parsed again on the worker's side: a process boundary, not a second reading in this one
    portable = spec.portable()
    if engine.engine == "processes":
        return ProcessEngine(portable, options, engine.workers or os.cpu_count() or 1)
    return RayEngine(portable, options, engine)


# --- the driver side -----------------------------------------------------------------------------------------------


def _unwire(result: tuple[Any, ...], secrets: list[str]) -> Prediction:
    if result[0] == "ok":
        _, risk, score, extra, attempts = result
        # checked again here: the driver journals only plain data of the right shape, whatever a worker sent
        if risk not in RISKS or not isinstance(extra, dict) or not isinstance(attempts, int):
            raise DetectorError("invalid_response", "the worker sent a result that is not a prediction")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1):
            raise DetectorError("invalid_response", "the worker sent a risk_score that is not a number in [0, 1]")
        plain = RISKS[RISKS.index(risk)]  # the plain str, even from a str subclass
        return Prediction(plain, None if score is None else float(score), extra, attempts)
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
    """What the process and Ray engines share: batching on the driver, the detector's description, the results,
    and what happens when a worker dies.

    A worker holds one batch at a time (the next one waits on the driver, ready to go), so a worker that dies held
    exactly the batch it was given. Which of its cases killed it is unknown: each goes again alone, to a live or
    replacement worker, and only a case under which a worker died alone `CASE_DEATHS` times fails."""

    def __init__(self, spec: str, options: DetectorOptions, workers: int) -> None:
        self.spec, self.options, self.workers = spec, options, workers
        # a batch per worker at work and one waiting on the driver, so that no worker idles for long
        # (at least MIN_CHUNK cases a batch: each batch costs the driver a round trip)
        self.chunk = max(options.batch_size, -(-options.concurrency // (2 * workers)), MIN_CHUNK)
        self.concurrency = max(options.concurrency, 2 * workers * self.chunk)
        self.name = spec
        self.deaths = 0  # workers lost during the run (for tests and the report)
        self.retired = 0  # worker processes replaced because a call stuck past its timeout still ran in them
        self._batcher = Batcher(self._send, self.chunk, wait=0)  # what the runner queued in one turn of the loop
        self._info: dict[str, Any] = {}
        self._idle: asyncio.Queue[int] = asyncio.Queue()  # the workers (by index) not holding a batch
        for index in range(workers):
            self._idle.put_nowait(index)

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
        try:
            return await self._on_idle_worker(requests)
        except WorkerDied:
            self.deaths += 1
        # one of them may have killed the worker: each goes again alone, so that only such a case can fail
        return list(await asyncio.gather(*(self._alone(r, died=int(len(requests) == 1)) for r in requests)))

    async def _alone(self, request: Request, died: int) -> tuple[Any, ...]:
        while died < CASE_DEATHS:
            try:
                (result,) = await self._on_idle_worker([request])
                return result
            except WorkerDied:
                self.deaths += 1
                died += 1
        error = DetectorError(
            "detector_exception",
            f"the worker died {died} times running this case alone: the detector crashed it (os._exit, a "
            "segfault, running out of memory) or it was killed",
        )
        return wire(None, error)

    async def _on_idle_worker(self, requests: list[Request]) -> list[tuple[Any, ...]]:
        index = await self._idle.get()
        try:
            return await self._call(index, requests)
        finally:
            self._idle.put_nowait(index)

    @abc.abstractmethod
    async def _call(self, index: int, requests: list[Request]) -> list[tuple[Any, ...]]:
        """Run one batch on worker ``index``; raise `WorkerDied` when the worker is lost (the engine brings up
        another in its place: Ray restarts an actor, a process is started for the next batch)."""


class ProcessEngine(_Engine):
    """``--engine processes --workers N``: N worker processes, each importing the detector once."""

    def __init__(self, spec: str, options: DetectorOptions, workers: int) -> None:
        super().__init__(spec, options, workers)
        self._start_args = (spec, worker_options(options, self.chunk), list(sys.path))
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="fcb-engine")  # each waits on one worker
        self._workers: list[ProcessWorker | None] = []
        # should the run end without closing its detector, the workers are still stopped at exit (multiprocessing
        # would wait for them, and they wait for the driver)
        atexit.register(self._stop)
        try:
            # every worker started, its detector loaded, before the run begins
            for _ in range(workers):
                self._workers.append(ProcessWorker(*self._start_args))
            described = [self._describe(worker) for worker in self._workers if worker is not None]
            self._described(described[0])
        except BaseException:
            self._stop()
            raise

    def _describe(self, worker: ProcessWorker) -> dict[str, Any]:
        try:
            info: dict[str, Any] = worker.call("describe", [])
            return info
        except WorkerDied:
            raise DetectorLoadError(f"detector {self.spec!r}: the worker process died while loading it") from None

    def _replacement(self) -> ProcessWorker:
        """A fresh worker, its detector loaded (blocking; run in a thread)."""
        worker = ProcessWorker(*self._start_args)
        try:
            self._describe(worker)
        except BaseException:
            worker.stop()
            raise
        return worker

    async def _call(self, index: int, requests: list[Request]) -> list[tuple[Any, ...]]:
        loop = asyncio.get_running_loop()
        worker = self._workers[index]
        if worker is None:  # lost with its last batch: a fresh one takes its place, else this batch fails
            try:
                worker = await loop.run_in_executor(self._threads, self._replacement)
            except DetectorLoadError as exc:
                raise DetectorError("detector_exception", f"no worker could be started: {exc}") from None
            self._workers[index] = worker
        try:
            result: list[tuple[Any, ...]] = await loop.run_in_executor(self._threads, worker.call, "assess", requests)
        except WorkerDied:
            self._workers[index] = None  # replaced when this slot is next used: a batch goes to it at once
            await loop.run_in_executor(self._threads, worker.stop)
            raise
        if worker.retiring:  # it holds a call stuck past its timeout: a fresh process takes its place
            self.retired += 1
            self._workers[index] = None
            await loop.run_in_executor(self._threads, worker.stop)
        return result

    def _stop(self) -> None:
        atexit.unregister(self._stop)
        workers, self._workers = self._workers, [None] * len(self._workers)
        for worker in workers:
            if worker is not None:
                worker.stop()
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def aclose(self) -> None:
        self._stop()


class RayWorker:
    """A Ray actor holding one instance of the detector (wrapped with `ray.remote` when the engine starts)."""

    def __init__(self, spec: str, options: DetectorOptions, path: list[str]) -> None:
        sys.path.extend(p for p in path if p not in sys.path)
        self.spec = parse_spec(spec)  # the text that crossed from the driver
        self.detector = load_detector(self.spec, options)

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
        self._ray: Any = ray  # an optional extra, without type hints on what is used here
        self._started = not ray.is_initialized()
        if self._started:
            _start_ray(ray, settings.ray_address)
        cpus = self._ray.cluster_resources().get("CPU", 1)
        workers = settings.workers or max(1, int(cpus // (settings.num_cpus or 1)))
        super().__init__(spec, options, workers)
        resources = {"num_cpus": 1 if settings.num_cpus is None else settings.num_cpus}
        if settings.num_gpus:
            resources["num_gpus"] = settings.num_gpus
        # Ray restarts a dead actor (loading the detector again); the driver sends its batch again meanwhile
        self._actor_class = ray.remote(RayWorker).options(max_restarts=-1, max_task_retries=0, **resources)
        sized = worker_options(options, self.chunk)
        # Any: Ray's type hints show an actor handle's methods as plain methods, without their ``.remote``
        self._actors: list[Any] = [self._actor_class.remote(spec, sized, list(sys.path)) for _ in range(workers)]
        try:
            # every actor up, its detector loaded, before the run's clock starts
            self._described(ray.get([actor.describe.remote() for actor in self._actors])[0])
        except ray.exceptions.RayActorError as exc:
            self._shutdown()
            raise DetectorLoadError(
                f"detector {spec!r}: the Ray actor failed to load it: {_actor_cause(exc)}"
            ) from None

    async def _call(self, index: int, requests: list[Request]) -> list[tuple[Any, ...]]:
        try:
            result: list[tuple[Any, ...]] = await self._actors[index].assess.remote(requests)
            return result
        except self._ray.exceptions.RayActorError:
            await self._restarted(self._actors[index])
            raise WorkerDied from None

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
