"""What decides what a run does: `EvalSettings`, the ``--shard K/N`` text, and the settings as ``run.json`` and
``metrics.json`` store them (and read back to resume a run)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from harness.calibration import DEFAULT_BINS
from harness.detectors.options import DetectorOptions
from harness.documents import RunManifest, Settings
from harness.errors import UsageError
from harness.run.engines import EngineSettings
from harness.runfolder.manifest import resumable_manifest
from harness.spec import DetectorSpec, parse_spec
from harness.types import PROBES, REDUCERS


@dataclass(frozen=True)
class EvalSettings:
    """Everything that decides what a run does. ``out`` None makes a new folder under ``results_root``."""

    cases: str
    detector: DetectorSpec  # parsed once, where the string came in (-d, a suite file, run.json, the Python API)
    options: DetectorOptions = field(default_factory=DetectorOptions)
    out: str | None = None
    results_root: str = "results"
    resume: bool = False
    limit: int | None = None
    shard: tuple[int, int] | None = None  # (K, N): only the K-th of N deterministic parts of the cases
    anonymize_agents: bool = False
    skip_invalid: bool = False
    strict: bool = False
    progress: bool | str = False  # True or "bar": a tqdm bar; "lines": a plain line every 10 s or 5%
    n_boot: int = 1000
    seed: int = 0
    ece_bins: int = DEFAULT_BINS  # equal-width bins of the expected calibration error (harness.calibration)
    epochs: int = 1  # each case asked this many times (harness.run.items); the headline on one verdict a case
    epoch_reducer: str = "mode"  # how a case's epochs reduce to that verdict (harness.epochs)
    probes: tuple[str, ...] = ()  # variants asked besides each request (harness.cases.variants), in PROBES order
    probe_seed: int = 0  # the seed of the variants' generator
    name: str | None = None  # shown in reports and leaderboards instead of the spec
    categories: tuple[str, ...] = ()  # only cases of these categories (a subset: its own data set)
    tags: tuple[str, ...] = ()  # only cases with one of these tags
    preflight: bool = True  # call the first case alone before the others; stop at once if it cannot work
    max_consecutive_errors: int = 25  # stop after this many errors of one kind in a row (0: never)
    retry_errors: bool = False  # resuming: ask the cases that ended in an error again
    overwrite: bool = False  # ``out`` may hold a run: it is replaced (once the preflight passed)
    # where a Python detector runs (harness.run.engines): none of these changes a run's results
    engine: str = "local"  # "local", "processes" or "ray"
    workers: int | None = None
    ray_address: str | None = None
    num_cpus: float | None = None
    num_gpus: float | None = None

    def __post_init__(self) -> None:
        if not (isinstance(self.epochs, int) and self.epochs >= 1):
            raise UsageError(f"epochs {self.epochs!r}: a whole number of 1 or more")
        if self.epoch_reducer not in REDUCERS:
            raise UsageError(f"epoch reducer {self.epoch_reducer!r}: one of {', '.join(REDUCERS)}")
        if unknown := [p for p in self.probes if p not in PROBES]:
            raise UsageError(f"probe {unknown[0]!r}: one of {', '.join(PROBES)}")
        if len(set(self.probes)) != len(self.probes):
            raise UsageError(f"probes {list(self.probes)}: each probe once")

    def engine_settings(self) -> EngineSettings:
        return EngineSettings(self.engine, self.workers, self.ray_address, self.num_cpus, self.num_gpus)


ENGINE_FIELDS = ("engine", "workers", "ray_address", "num_cpus", "num_gpus")


def shard_text(shard: tuple[int, int] | None) -> str | None:
    return f"{shard[0]}/{shard[1]}" if shard else None


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"K/N"`` (1 <= K <= N) as (K, N); None for None. Raises `UsageError` otherwise."""
    if text is None:
        return None
    k, sep, n = text.partition("/")
    if not (sep and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise UsageError(f"--shard {text!r}: expected K/N with 1 <= K <= N, e.g. 2/4")
    return int(k), int(n)


def settings_record(settings: EvalSettings) -> Settings:
    """The settings as stored in ``run.json`` and ``metrics.json``; `resumed_settings` reads them back.

    Header values are not stored: ``headers`` maps a header name to the environment variable that holds it.
    """
    options = asdict(settings.options)
    options["risk_field"] = ".".join(options["risk_field"])
    record: dict[str, Any] = {
        "limit": settings.limit,
        "shard": shard_text(settings.shard),
        "anonymize_agents": settings.anonymize_agents,
        "skip_invalid": settings.skip_invalid,
        "strict": settings.strict,
        "bootstrap_resamples": settings.n_boot,
        "seed": settings.seed,
        "ece_bins": settings.ece_bins,
        **items_record(settings),
        "name": settings.name,
        "categories": list(settings.categories),
        "tags": list(settings.tags),
        **{key: getattr(settings, key) for key in ENGINE_FIELDS},
        **options,
    }
    return cast(Settings, record)  # the options spread in by name: `Settings` lists every field of theirs


def items_record(settings: EvalSettings) -> dict[str, Any]:
    """The epochs and probes settings, only those in use: a plain run's record is as it was before them."""
    record: dict[str, Any] = {}
    if settings.epochs > 1:
        record.update(epochs=settings.epochs, epoch_reducer=settings.epoch_reducer)
    if settings.probes:
        record.update(probes=list(settings.probes), probe_seed=settings.probe_seed)
    return record


def resumed_settings(run_dir: str | Path) -> EvalSettings:
    """The settings an interrupted run was started with, read from its ``run.json``, ready to continue it."""
    return replace(manifest_settings(resumable_manifest(run_dir)), out=str(run_dir), resume=True)


def manifest_settings(manifest: RunManifest) -> EvalSettings:
    """The settings a run folder's ``run.json`` records, as `EvalSettings` (`settings_record` read back)."""
    record: dict[str, Any] = dict(manifest["settings"])
    flags = {k: record.pop(k) for k in ("limit", "anonymize_agents", "skip_invalid", "strict")}
    flags["shard"] = parse_shard(record.pop("shard"))
    n_boot, seed = record.pop("bootstrap_resamples"), record.pop("seed")
    ece_bins = record.pop("ece_bins", DEFAULT_BINS)  # absent from runs written before calibration was reported
    items = {"epochs": record.pop("epochs", 1), "epoch_reducer": record.pop("epoch_reducer", "mode"),
             "probes": tuple(record.pop("probes", ())), "probe_seed": record.pop("probe_seed", 0)}  # fmt: skip
    name = record.pop("name", None)  # the last three are absent from runs of older versions
    categories, tags = tuple(record.pop("categories", ())), tuple(record.pop("tags", ()))
    engine = {key: record.pop(key) for key in ENGINE_FIELDS if key in record}
    record["risk_field"] = tuple(record["risk_field"].split("."))
    return EvalSettings(
        cases=manifest["cases"],
        detector=parse_spec(manifest["identity"]["detector"]),
        options=DetectorOptions(**record),
        n_boot=n_boot,
        seed=seed,
        ece_bins=ece_bins,
        name=name,
        categories=categories,
        tags=tags,
        **engine,
        **flags,
        **items,
    )
