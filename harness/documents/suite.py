"""The suite file of ``fcb suite`` (a TOML document): detectors, data sets and gates, as pydantic models.

An input document, unlike the others here: its checks are pydantic's own (strict, no unknown key), and
``fcb schema suite`` prints the JSON Schema they generate. Read and checked by `harness.suite.spec.load_suite`,
which gives each refusal as ``FILE:LINE: key: message``. Importing this module imports pydantic:
`harness.documents` loads it only when it is asked for (`harness.documents.generated`).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from harness.vocabulary import MAX_BOOTSTRAP, MAX_SEED, Engine

NAME = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=80)]  # a folder name too
_STRICT = ConfigDict(extra="forbid", strict=True)


class SuiteDetector(BaseModel):
    """One detector: a spec as ``fcb eval -d`` takes, and the settings ``fcb eval`` offers as flags, each by its
    setting's name (`harness.run.settings.SETTING_NAMES`); one not given (null) keeps the default ``fcb eval`` has."""

    model_config = _STRICT
    name: NAME
    spec: str | None = None  # None: the spec of ``config`` (a detector config file), as ``fcb eval``
    config: str | None = None  # --detector-config
    concurrency: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0)
    retries: int | None = Field(None, ge=0)
    rpm: int | None = Field(None, ge=1)
    tpm: int | None = Field(None, ge=1)
    max_requests: int | None = Field(None, ge=1)
    max_cost: float | None = Field(None, gt=0)
    risk_field: str | None = None
    batch_size: int | None = Field(None, ge=1)
    cache: bool | None = None
    cache_dir: str | None = None
    engine: Engine | None = None
    workers: int | None = Field(None, ge=1)
    ray_address: str | None = None
    num_cpus: float | None = Field(None, gt=0)
    num_gpus: float | None = Field(None, ge=0)
    anonymize_agents: bool | None = None
    preflight: bool | None = None
    max_consecutive_errors: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _spec_or_config(self) -> SuiteDetector:
        if self.spec is None and self.config is None:
            raise ValueError("give spec (as fcb eval -d takes) or config (a detector config file)")
        return self


class SuiteDataset(BaseModel):
    """One data set: a cases file, ``"embedded"``, or a built benchmark folder with ``split``; the settings that
    choose its cases by their settings' names, as `SuiteDetector`."""

    model_config = _STRICT
    name: NAME
    cases: str = Field(description='a cases file, "embedded", or a benchmark folder built by fcb build-dataset')
    split: Literal["dev", "test"] | None = Field(None, description="the split of a built benchmark folder")
    limit: int | None = Field(None, ge=1)
    categories: list[str] = []
    tags: list[str] = []
    skip_invalid: bool | None = None
    strict: bool | None = None


class SuiteGate(BaseModel):
    """A baseline a detector's run on a data set must not regress from, compared as ``fcb compare`` does."""

    model_config = _STRICT
    detector: str
    dataset: str
    baseline: str
    max_drop: float = Field(0.01, ge=0)
    alpha: float = Field(0.05, gt=0, lt=1)


class Suite(BaseModel):
    """The suite file of fcb suite (TOML): detectors x data sets, each pair run or resumed, then a board folder;
    optional gates. Relative paths are read from the file's folder (harness.documents.suite.Suite)."""

    model_config = _STRICT
    detectors: list[SuiteDetector] = Field(min_length=1)
    datasets: list[SuiteDataset] = Field(min_length=1)
    gates: list[SuiteGate] = []
    bootstrap: int = Field(1000, ge=0, le=MAX_BOOTSTRAP)
    seed: int = Field(0, ge=0, le=MAX_SEED)
    strongest: int = Field(3, ge=1)  # fcb cases --strongest
