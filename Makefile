# The two commands a newcomer needs: `make demo` and `make test` (`make check` while you work).
VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# `make demo` installs truegrade alone (no extra, no torch): the demo's cards need nothing more.
# The full install below writes this stamp too, so a venv built for the tests serves the demo,
# and a venv built for the demo still gets the extras when `make test` runs.
DEMO_STAMP := $(VENV)/.installed-demo
# The rm extra needs torch; the CPU build is all the tests use. Asking for it by version first
# lets pip take a local CPU wheel (pip's find-links) when there is one, instead of resolving a
# bare `torch` to a CUDA build of several GB (`make TORCH=torch` leaves the choice to pip).
TORCH  ?= torch==2.13.0
# The extras a new venv gets (CI adds the training frameworks: `make install EXTRAS=...,verl,trl`,
# one resolution for all of them). A venv that exists keeps its packages: `make clean` first.
EXTRAS ?= dev,rm,semantic,bench,docs

# The system packages come first (scripts/system-deps.sh holds the list): installed when run as
# root with apt, else one line naming them and the command to run, before anything is built.
# `make test`, `make check` and `make pytest` check for the suite's packages, every other goal for
# the demo's.
DEPS   := $(if $(filter test check pytest coverage,$(MAKECMDGOALS)),test,demo)

.PHONY: system-deps install demo test check lint typecheck pytest pytest-fast coverage bench docs clean

# An editable install compiles nothing (a wheel's install does): the sources' bytecode is written
# once here, so every worker process does not compile the package again as it starts (a machine
# with PYTHONDONTWRITEBYTECODE set never writes it on import).
BYTECODE := $(PY) -m compileall -q src

system-deps:
	@PYTHON='$(PYTHON)' bash scripts/system-deps.sh $(DEPS)

$(STAMP): pyproject.toml | system-deps
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "truegrade needs Python >= 3.10")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet '$(TORCH)'
	@echo '$(TORCH)' > $(VENV)/torch-pin.txt  # the extras keep that torch, never fetch another
	$(PY) -m pip install --quiet -c $(VENV)/torch-pin.txt -e '.[$(EXTRAS)]'
	$(BYTECODE)
	@touch $(STAMP) $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml | system-deps
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "truegrade needs Python >= 3.10")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e .
	$(BYTECODE)
	@touch $(DEMO_STAMP)

install: $(STAMP)

demo: $(DEMO_STAMP)
	$(PY) examples/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# The suite in two processes (up to four where there are more cores), a test file per process at
# a time: most of its time is spent in sandboxes and subprocesses. Coverage is measured in the
# processes that run the tests (xdist's workers) and reported by package against the floor in
# pyproject.toml, which fails the goal (and CI) when the total drops under it. The floor is judged
# once, by scripts/coverage_report.py (pytest-cov's own check is off), so the table by package
# shows under the floor too.
pytest: $(STAMP)
	@rm -f .coverage .coverage.*
	$(VENV)/bin/pytest -n auto --maxprocesses 4 --dist loadfile --durations=20 \
		--cov --cov-report= --cov-fail-under=0
	$(PY) scripts/coverage_report.py

# The suite with every Python process it starts measured too (the engine's workers, the command
# line's subprocesses, the servers: COVERAGE_PROCESS_START starts coverage in each, through the
# .pth file coverage installs), by package. Not part of `make test`: on Python 3.11 the tracer in
# every process adds about a third to the suite's time.
coverage: $(STAMP)
	@rm -f .coverage .coverage.*
	COVERAGE_PROCESS_START=$(CURDIR)/pyproject.toml $(VENV)/bin/coverage run -m pytest -n auto --maxprocesses 4 --dist loadfile -q
	$(PY) scripts/coverage_report.py

test: lint typecheck pytest

# The everyday loop: lint, types and the tests not marked slow, in parallel (under 2 minutes).
pytest-fast: $(STAMP)
	$(VENV)/bin/pytest -n auto --maxprocesses 4 -m "not slow" -q

check: lint typecheck pytest-fast

bench: $(STAMP)
	$(VENV)/bin/truegrade bench engine

# The site, API reference included, into site/; any warning (a broken link or anchor, a docstring
# mkdocstrings cannot read) fails it. A venv made without the docs extra gets it first.
docs: $(STAMP)
	@test -x $(VENV)/bin/mkdocs || $(PY) -m pip install --quiet -e '.[docs]'
	$(VENV)/bin/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build site src/*.egg-info .coverage .coverage.* htmlcov
