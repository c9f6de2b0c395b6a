# The two commands: `make demo` and `make test`. Each installs what it needs into .venv.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
export TQDM_DISABLE ?= 1
export HF_HUB_OFFLINE = 1

.PHONY: install demo test test-faults test-fast notebooks notebook-html marimo-html lab marimo bench-dev bench-dev-fast clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# torch pinned first: 2.13.0 is a CPU wheel; an unpinned torch pulls a multi-GB CUDA build
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dense,int8,e5,notebooks,test,peers]'
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

demo: install  ## the paper's seven methods and TagGraph-Fusion on the bundled demo data
	$(VENV)/bin/taggraph bench --out runs/demo --force  # runs/demo is this target's own folder: a rerun replaces it

test: install  ## the layering contract, the whole test suite, notebooks included
	$(VENV)/bin/lint-imports
	# one pytest run for tests/ and the notebooks (--nbmake), so the notebooks fill the workers' idle tail
	$(PY) -m pytest -q -n auto --dist worksteal --durations=15 --nbmake tests notebooks --ignore=tests/faults

test-faults: install  ## the fault tier (tests/faults: attacks, killed processes, fake servers), about 3 minutes; CI runs it
	$(PY) -m pytest -q -n auto --dist worksteal tests/faults

test-fast: install  ## the unit tier alone (tests/unit): the edit-test loop, about a minute
	$(PY) -m pytest -q -n auto tests/unit

notebooks: install  ## regenerate the .ipynb twins from the marimo sources
	$(PY) tools/make_twins.py notebooks/[0-9][0-9]_*.py

notebook-html: install  ## self-contained HTML of each executed notebook twin in notebooks/html/ (opens offline)
	$(PY) tools/export_html.py notebooks/html notebooks/[0-9][0-9]_*.ipynb

ESBUILD := $(VENV)/esbuild/node_modules/.bin/esbuild

$(ESBUILD):  # esbuild for marimo-html (npm, not a Python dependency); the version is tools/export_marimo_html.py's
	npm install --prefix $(VENV)/esbuild --no-save --no-audit --no-fund esbuild@$$(sed -n 's/^ESBUILD_VERSION = "\(.*\)"$$/\1/p' tools/export_marimo_html.py)

marimo-html: install $(ESBUILD)  ## marimo's own export of each notebook, in notebooks/html/marimo/ (opens offline; needs npm once)
	$(PY) tools/export_marimo_html.py notebooks/html/marimo notebooks/[0-9][0-9]_*.py

lab: install
	$(VENV)/bin/jupyter lab notebooks/

marimo: install
	$(VENV)/bin/marimo edit notebooks/

S_DEV = $${TAGGRAPH_DATA:-../shared/data/longmemeval}/longmemeval_s_dev.json.gz

bench-dev: install  ## all seven methods on LongMemEval-S dev, MiniLM (cold: ~2 h of embedding on 2 CPU cores)
	$(VENV)/bin/taggraph embed --data $(S_DEV)
	$(VENV)/bin/taggraph bench --data $(S_DEV) --workers 2 --out runs/s_dev

bench-dev-fast: install  ## the same with the static MiniLM embedder (cold: minutes)
	$(VENV)/bin/taggraph bench --data $(S_DEV) --workers 2 --embedder minilm-static --out runs/s_dev_static

clean:
	rm -rf $(VENV) runs .pytest_cache
