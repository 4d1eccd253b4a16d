"""What decides what a run does: `EvalSettings`, the ``--shard K/N`` text, and the settings as ``run.json`` and
``metrics.json`` store them (and read back to resume a run)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, cast

from harness.cases.clusters import DEFAULT_CLUSTER_BY, check_cluster_by
from harness.detectors.options import DetectorOptions
from harness.detectors.reply import parse_risk_field
from harness.documents import RunManifest, Settings, ThresholdDocument
from harness.errors import UsageError
from harness.run.engines import EngineSettings
from harness.runfolder.manifest import resumable_manifest
from harness.spec import DetectorSpec, parse_spec
from harness.vocabulary import DEFAULT_BINS, MAX_BOOTSTRAP, MAX_SEED, PROBES, REDUCERS, Engine, ProbeName, Reducer

MAX_ECE_BINS = 10_000
"""The most calibration bins: more than any run has cases to fill."""


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
    epoch_reducer: Reducer = "mode"  # how a case's epochs reduce to that verdict (harness.epochs)
    probes: tuple[ProbeName, ...] = ()  # variants asked besides each request (harness.cases.variants), in PROBES order
    probe_seed: int = 0  # the seed of the variants' generator
    threshold: str | None = None  # a threshold file (fcb threshold) whose promise the run's figures are held to
    cluster_by: str = DEFAULT_CLUSTER_BY  # what every interval resamples (harness.cases.clusters)
    name: str | None = None  # shown in reports and leaderboards instead of the spec
    categories: tuple[str, ...] = ()  # only cases of these categories (a subset: its own data set)
    tags: tuple[str, ...] = ()  # only cases with one of these tags
    preflight: bool = True  # call the first case alone before the others; stop at once if it cannot work
    max_consecutive_errors: int = 25  # stop after this many errors of one kind in a row (0: never)
    retry_errors: bool = False  # resuming: ask the cases that ended in an error again
    overwrite: bool = False  # ``out`` may hold a run: it is replaced (once the preflight passed)
    # where a Python detector runs (harness.run.engines): none of these changes a run's results
    engine: Engine = "local"
    workers: int | None = None
    ray_address: str | None = None
    num_cpus: float | None = None
    num_gpus: float | None = None

    def __post_init__(self) -> None:
        # ranges checked here, before any detector is called, for flags, suite keys and the Python API alike
        for name, low, high in (("seed", 0, MAX_SEED), ("probe_seed", 0, MAX_SEED), ("n_boot", 0, MAX_BOOTSTRAP),
                                ("ece_bins", 1, MAX_ECE_BINS)):  # fmt: skip
            value = getattr(self, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high):
                shown = STORED_AS.get(name, name)
                raise UsageError(f"{shown} {value!r}: a whole number from {low} to {high}")
        if not (isinstance(self.epochs, int) and self.epochs >= 1):
            raise UsageError(f"epochs {self.epochs!r}: a whole number of 1 or more")
        if self.epoch_reducer not in REDUCERS:
            raise UsageError(f"epoch reducer {self.epoch_reducer!r}: one of {', '.join(REDUCERS)}")
        if unknown := [p for p in self.probes if p not in PROBES]:
            raise UsageError(f"probe {unknown[0]!r}: one of {', '.join(PROBES)}")
        if len(set(self.probes)) != len(self.probes):
            raise UsageError(f"probes {list(self.probes)}: each probe once")
        check_cluster_by(self.cluster_by)
        if self.threshold is not None:
            self.held_threshold()

    def held_threshold(self) -> ThresholdDocument | None:
        """The ``--threshold`` file, read and checked (`UsageError` naming the file and field), for this detector
        alone: a threshold chosen on another detector's scores promises nothing here."""
        if self.threshold is None:
            return None
        from harness.threshold import read_threshold

        doc = read_threshold(self.threshold)
        if doc["detector"] != self.detector.display:
            raise UsageError(
                f"--threshold {self.threshold}: chosen for {doc['detector']}, not {self.detector.display}; a "
                "threshold holds for the detector whose dev run chose it"
            )
        return doc

    def engine_settings(self) -> EngineSettings:
        return EngineSettings(self.engine, self.workers, self.ray_address, self.num_cpus, self.num_gpus)


ENGINE_FIELDS = ("engine", "workers", "ray_address", "num_cpus", "num_gpus")

SETTINGS_VERSION = 2
"""The version of the settings' serialised form (``run.json`` and ``metrics.json``): 2 writes ``settings_version``;
1 (none written) is read the same way, a key it lacks taking its default from the definitions above."""

SESSION_ONLY = frozenset({"cases", "detector", "out", "results_root", "resume", "progress", "preflight",
                          "max_consecutive_errors", "retry_errors", "overwrite"})  # fmt: skip
"""`EvalSettings` fields that say how this session runs, not what the run is: not stored (cases and detector are the
run's identity, stored apart)."""

STORED_AS = {"n_boot": "bootstrap_resamples"}
"""The one field stored under another name (the name documents have always used)."""

RUN_FIELDS = frozenset(f.name for f in fields(EvalSettings)) - {"options"}
OPTION_FIELDS = frozenset(f.name for f in fields(DetectorOptions))
SETTING_NAMES = RUN_FIELDS | OPTION_FIELDS
"""Every setting by its one name: a field of `EvalSettings` or of `DetectorOptions`. Flags (their ``dest``), a suite
file's keys, `harness.evaluate`'s keywords and the stored record (but for `STORED_AS`) all name settings so."""


def with_settings(settings: EvalSettings, given: Mapping[str, Any]) -> EvalSettings:
    """``settings`` with each given value that is not None put in its place, by its name (`SETTING_NAMES`); the
    text forms are read here: ``detector`` a spec string, ``shard`` "K/N", ``risk_field`` "a.b.c", a list as a
    tuple. An unknown name raises `TypeError` (a caller's mistake, not a user's: flags and files are checked first).
    """
    values = {name: value for name, value in given.items() if value is not None}
    if unknown := sorted(set(values) - SETTING_NAMES):
        raise TypeError(f"no setting {unknown[0]!r}; the settings are: {', '.join(sorted(SETTING_NAMES))}")
    values = {name: _read(name, value) for name, value in values.items()}
    options = replace(settings.options, **{k: v for k, v in values.items() if k in OPTION_FIELDS})
    return replace(settings, options=options, **{k: v for k, v in values.items() if k in RUN_FIELDS})


def _read(name: str, value: Any) -> Any:
    if name == "detector" and isinstance(value, str):
        return parse_spec(value)
    if name == "shard" and isinstance(value, str):
        return parse_shard(value)
    if name == "risk_field" and isinstance(value, str):
        return parse_risk_field(value)
    if name in ("categories", "tags") and isinstance(value, str):
        return (value,)
    return tuple(value) if isinstance(value, list) else value


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
    """The settings as stored in ``run.json`` and ``metrics.json`` (`SETTINGS_VERSION`), every stored field by its
    name (`STORED_AS` aside) in text form; `manifest_settings` reads them back. The epochs and probes settings are
    stored only when in use, so that a plain run's record is as it was before them. Header values are not stored:
    ``headers`` maps a header name to the environment variable that holds it."""
    run = {f.name: getattr(settings, f.name) for f in fields(EvalSettings) if f.name in RUN_FIELDS - SESSION_ONLY}
    if settings.epochs == 1:
        run = {k: v for k, v in run.items() if k not in ("epochs", "epoch_reducer")}
    if not settings.probes:
        run = {k: v for k, v in run.items() if k not in ("probes", "probe_seed")}
    if settings.threshold is None:
        run.pop("threshold", None)
    if settings.cluster_by == DEFAULT_CLUSTER_BY:
        run.pop("cluster_by")
    values = {**run, **asdict(settings.options), "shard": shard_text(settings.shard)}
    values["risk_field"] = ".".join(settings.options.risk_field)
    record = {STORED_AS.get(k, k): list(v) if isinstance(v, tuple) else v for k, v in values.items()}
    return cast(Settings, {"settings_version": SETTINGS_VERSION, **record})  # checked: tests/run/test_outputs.py


def resumed_settings(run_dir: str | Path) -> EvalSettings:
    """The settings an interrupted run was started with, read from its ``run.json``, ready to continue it."""
    return replace(manifest_settings(resumable_manifest(run_dir)), out=str(run_dir), resume=True)


def manifest_settings(manifest: RunManifest) -> EvalSettings:
    """The settings a run folder's ``run.json`` records, as `EvalSettings` (`settings_record` read back, of any
    version: what an older record lacks keeps its default)."""
    record = {k: v for k, v in manifest["settings"].items() if k != "settings_version"}
    given = {next((f for f, s in STORED_AS.items() if s == k), k): v for k, v in record.items()}
    base = EvalSettings(cases=manifest["cases"], detector=parse_spec(manifest["identity"]["detector"]))
    return with_settings(base, given)
