# The two commands a newcomer needs: `make demo` and `make test`.
VENV   ?= .venv
PYTHON ?= python3
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint typecheck pytest bench clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "truegrade needs Python >= 3.10")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples

typecheck: $(STAMP)
	$(VENV)/bin/mypy

pytest: $(STAMP)
	$(VENV)/bin/pytest

test: lint typecheck pytest

bench: $(STAMP)
	$(VENV)/bin/truegrade bench engine

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build src/*.egg-info
