# Two commands set everything up on a fresh machine: `make eval` and `make test` each create .venv when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
STAMP := $(VENV)/.installed
DATASETS_EXTRA := $(VENV)/.datasets

DETECTOR ?=
CASES ?=
ARGS ?=

PORT ?= 8765

BASELINE ?=
REGRESS_RUN := results/regress/$(shell date -u +%Y%m%d-%H%M%S-%N)

SHARED ?= ../shared/data
DATASET ?= results/real-benchmark

.PHONY: eval serve regress dataset dataset-check bench mutation test test-fast lint browser bytecode stats validate clean

# The package with its runtime dependencies: all that eval, serve, stats and validate need (not build-dataset).
$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m compileall -q harness fcb_datasets
	touch $(RUNTIME)
	@echo "installed fcb into $(VENV): run it as $(BIN)/fcb, or activate the environment with: . $(BIN)/activate"

# The benchmark builder's extra on top (math-verify, json-repair): for make dataset.
$(DATASETS_EXTRA): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[datasets]'
	touch $(DATASETS_EXTRA)

# The development extras on top (pytest, Playwright, schemathesis, ruff, ...) and every other extra: for test,
# lint and bench.
$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install --quiet -e '.[dev,ray,datasets]'
	touch $(STAMP) $(DATASETS_EXTRA)

## make eval [DETECTOR=url|builtin:NAME|module:function|file.py:function] [CASES=path/to/cases.jsonl] [ARGS=...]
## Relative DETECTOR= and CASES= paths resolve against this folder (make runs here, also under make -C).
eval: $(RUNTIME)
	$(BIN)/fcb eval $(CASES) $(if $(DETECTOR),--detector '$(DETECTOR)') $(ARGS)

## make serve [DETECTOR=builtin:NAME|module:function|file.py:function] [PORT=8765]
serve: $(RUNTIME)
	$(BIN)/fcb serve --detector '$(or $(DETECTOR),builtin:agreement)' --port $(PORT) $(ARGS)

## make regress DETECTOR=... BASELINE=results/baselines/NAME.json [CASES=...]: eval, then compare; fails on a
## significant regression. The comparison (Markdown, fit for a pull-request comment) lands in the run folder.
## An environment that has the package already can be used as it is: make regress BIN=/path/to/venv/bin RUNTIME=
regress: $(RUNTIME)
	@test -n "$(BASELINE)" || { echo "usage: make regress DETECTOR=... BASELINE=results/baselines/NAME.json"; exit 2; }
	@$(BIN)/fcb baseline check '$(BASELINE)' $(CASES)
	$(BIN)/fcb eval $(CASES) $(if $(DETECTOR),--detector '$(DETECTOR)') --out $(REGRESS_RUN) -q $(ARGS)
	@$(BIN)/fcb compare '$(BASELINE)' $(REGRESS_RUN) --format md --out $(REGRESS_RUN)/compare.md; rc=$$?; \
	  cat $(REGRESS_RUN)/compare.md; exit $$rc

## make dataset [SHARED=../shared/data] [DATASET=results/real-benchmark]: the real-data benchmark (dev/test)
dataset: $(DATASETS_EXTRA)
	$(BIN)/fcb build-dataset --gsm8k $(SHARED)/gsm8k/example_model_solutions.jsonl --truthfulqa $(SHARED)/truthfulqa \
	  --dylan $(SHARED)/dylan --mmlu-pro $(SHARED)/mmlu-pro --zeroeval $(SHARED)/zeroeval --out $(DATASET) --audit

## make dataset-check [DATASET=results/real-benchmark]: the benchmark's targets (sizes, categories, origins, model
## families, the shortcut audit) checked on a built folder; make dataset first (the build is too slow for make test)
dataset-check: $(STAMP)
	FCB_BENCHMARK=$(DATASET) $(BIN)/python -m pytest -q tests/fcb_datasets/test_realdata.py -k whole -p no:cacheprovider
	$(BIN)/fcb stats $(DATASET)/test.jsonl

## make bench: the harness's own cost (prints figures; writes results/bench/*.json; a few minutes)
bench: $(STAMP) bytecode
	$(BIN)/python benchmarks/bench.py

stats: $(RUNTIME)
	$(BIN)/fcb stats $(CASES)

validate: $(RUNTIME)
	$(BIN)/fcb validate $(or $(CASES),harness/data/embedded_cases.jsonl)

lint: $(STAMP)
	$(BIN)/ruff check harness fcb_datasets tests benchmarks
	$(BIN)/ruff format --check harness fcb_datasets tests benchmarks
	$(BIN)/lint-imports
	$(BIN)/mypy

# Debian's Chromium, for the test that opens the HTML leaderboard (installed once, as root, from Debian's packages)
browser:
	@command -v chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }

# The suite on 6 pytest-xdist workers, each taking the next test as it frees (--dist worksteal): about two thirds of
# its time is CPU, the rest waits (servers, retries, rate limits, killed runs), so 6 workers on 2 cores end sooner
# than 4 (143 s against 210 s) and 8 no sooner than 6, for more CPU. The CLI runs inside the test process
# (tests/conftest.py run_cli); the tests that need it as a process are named in docs/development.md.
WORKERS ?= 6

# Bytecode compiled ahead. Where PYTHONDONTWRITEBYTECODE is set (as on this project's machines and its CI) Python
# caches nothing it compiles, so every process (each CLI run a test starts) compiled the package from source again:
# 0.2 s of a one-case `fcb eval`, a tenth of the suite's time. compileall writes the caches, only for what changed
# (0.06 s when nothing did); a cache older than its source is never used.
bytecode: $(RUNTIME)
	$(BIN)/python -m compileall -q harness fcb_datasets tests benchmarks

test: lint browser bytecode
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist worksteal --durations=15

## make test-fast: the unit-level tests only (about 20 s on 2 cores); make test runs everything
test-fast: $(STAMP) bytecode
	$(BIN)/python -m pytest -q -m "not slow" -n 2

## make mutation [MODULE=harness/metrics.py]: plant faults in the modules that compute reported figures and count
## the ones the unit-level tests catch (mutmut; modules in pyproject.toml [tool.fcb-mutation.modules]); exits 1
## below 95% caught. About 20 minutes on 2 cores; .ci/run does not call it.
MODULE ?=
mutation: $(STAMP)
	$(BIN)/python tests/mutation/run.py $(foreach m,$(MODULE),--module $(m))

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis
