# The two commands of the README's quickstart: `make demo` and `make test`.
# Both create .venv on first use (torch pinned to 2.13.0, then qatui itself), saying what each
# step does and how long it takes; later runs skip the set-up.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# PyTorch's CPU-only wheel index, for machines where pip's default torch is the multi-GB CUDA
# build (stock x86_64 Linux): make demo TORCH_INDEX=<that index's URL>. Empty: pip's own choice.
TORCH_INDEX ?=
TORCH_FROM := $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX),)

.PHONY: demo test setup clean-venv

$(STAMP): pyproject.toml
	@echo "qatui set-up: about 15 minutes on 2 cores and 2.1 GB the first time (llama.cpp compiles); seconds afterwards"
	@echo "[1/4] virtualenv $(VENV) with $$($(PYTHON) --version)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip
	@echo "[2/4] torch 2.13.0 (CPU build where available; about a minute)"
	@$(BIN)/pip install --quiet torch==2.13.0 $(TORCH_FROM)
	@echo "[3/4] qatui and its dependencies; llama-cpp-python compiles from source the first time (about 10 minutes on 2 cores, then pip reuses the wheel)"
	@$(BIN)/pip install --quiet -e '.[dev]'
	@echo "[4/4] checking the install: $$($(BIN)/qatui --version), torch $$($(BIN)/python -c 'import torch; print(torch.__version__)')"
	@touch $(STAMP)
	@echo "ready: run $(BIN)/qatui (or 'source $(BIN)/activate', then qatui)"

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/qatui demo

test: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q

clean-venv:
	rm -rf $(VENV)
