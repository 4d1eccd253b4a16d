"""Settings shared by every detector adapter, whether they come from flags or a TOML file."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.errors import UsageError


@dataclass(frozen=True, slots=True)
class DetectorOptions:
    """How to call a detector. ``headers`` maps a header name to the environment variable holding its value."""

    concurrency: int = 8
    timeout: float = 30.0
    retries: int = 3
    risk_field: tuple[str, ...] = ("false_consensus_risk",)
    headers: dict[str, str] = field(default_factory=dict)
    token_env: str = "FCB_DETECTOR_TOKEN"
    max_response_bytes: int = 4 * 1024 * 1024
    backoff_initial: float = 0.5  # seconds before the first retry, doubled at each next one (plus jitter)
    backoff_max: float = 30.0
    throttle_patience: float = 600.0  # seconds one case may wait out 429 replies before they count as its failure
    stall_patience: float = 300.0  # seconds without a healthy reply, while throttled, before the run stops
    # language-model detectors (llm:MODEL@BASE_URL) only
    temperature: float = 0.0
    max_tokens: int = 300
    prompt: str | None = None  # a template file; None: harness/data/prompts/false-consensus.txt in the package
    samples: int = 1  # self-consistency: ask K times (temperature above 0) and take the majority risk
    json_mode: bool = True  # ask for the endpoint's JSON response format (dropped if the endpoint refuses it)
    price_prompt_per_mtok: float | None = None  # USD per million prompt tokens, for the run's cost
    price_completion_per_mtok: float | None = None
    # the response cache (harness.run.cache): None means on for llm: detectors at temperature 0, off otherwise
    cache: bool | None = None
    cache_dir: str | None = None  # None: $XDG_CACHE_HOME/fcb-harness
    cache_refresh: bool = False  # ask again and store the fresh answers, ignoring stored ones
    batch_size: int = 1  # a class with assess_batch gets up to this many requests at once
    # limits for HTTP and llm: detectors (harness.detectors.limits); None: no limit
    rpm: int | None = None  # requests per minute, on the client's side
    tpm: int | None = None  # tokens per minute (llm: only), counted at their most: the prompt's and max_tokens
    max_requests: int | None = None  # requests this run may send in all (its earlier sessions included)
    max_cost: float | None = None  # USD this run may spend in all, from the prices above

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise UsageError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.timeout <= 0:
            raise UsageError(f"timeout must be positive, got {self.timeout}")
        if self.retries < 0:
            raise UsageError(f"retries must be 0 or more, got {self.retries}")
        if not 0 < self.backoff_initial <= self.backoff_max:
            raise UsageError(
                f"backoff_initial must be above 0 and at most backoff_max ({self.backoff_max} s), got "
                f"{self.backoff_initial}"
            )
        if self.batch_size < 1:
            raise UsageError(f"batch size must be at least 1, got {self.batch_size}")
        if self.samples < 1:
            raise UsageError(f"samples must be at least 1, got {self.samples}")
        for name in ("rpm", "tpm", "max_requests"):
            if (value := getattr(self, name)) is not None and value < 1:
                raise UsageError(f"{name.replace('_', '-')} must be at least 1, got {value}")
        if self.max_cost is not None and not self.max_cost > 0:
            raise UsageError(f"max-cost must be above 0 USD, got {self.max_cost}")
        if self.max_cost is not None and None in (self.price_prompt_per_mtok, self.price_completion_per_mtok):
            raise UsageError(
                "max-cost needs the detector's prices, or nothing would count against it: give --price-prompt and "
                "--price-completion (USD per million tokens), or price_prompt_per_mtok and "
                "price_completion_per_mtok in a detector config (--detector-config)"
            )
        for name in ("throttle_patience", "stall_patience"):
            if not (value := getattr(self, name)) > 0:
                raise UsageError(f"{name} must be above 0 seconds, got {value}")
