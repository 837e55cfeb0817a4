# The two commands of the README's quickstart: `make demo` and `make test`.
# Both create .venv on first use (torch pinned to the CPU build 2.13.0, then qatui itself).

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test setup clean-venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/qatui demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

clean-venv:
	rm -rf $(VENV)
