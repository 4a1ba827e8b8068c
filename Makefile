# The two commands of a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_DEV := $(VENV)/.installed-dev
STAMP_RUN := $(VENV)/.installed

.PHONY: demo test lint typecheck unit bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(STAMP_RUN)

## demo: install agentjudge and run it on examples/ (until the embedded judge lands: the
## fake judge, which is plumbing, not a quality signal).
demo: $(STAMP_RUN)
	$(BIN)/agentjudge validate examples/trajectories/
	$(BIN)/agentjudge score examples/trajectories/ --judge fake --no-cache -o demo-results.json

## test: install with dev extras, then lint, type-check and run the whole suite.
test: $(STAMP_DEV) lint typecheck unit

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

unit: $(STAMP_DEV)
	$(BIN)/pytest

bench: $(STAMP_RUN)
	$(BIN)/python bench/validate_throughput.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
