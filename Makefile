# Two commands do all set-up on a fresh machine (see README): `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: install demo test bench train-default

$(VENV)/installed.stamp: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

install: $(VENV)/installed.stamp

demo: install  ## build the demo index on first run, then serve the UI on http://localhost:8501
	$(PY) -m app $(ARGS)

test: install  ## style (ruff) and the whole test suite (CI runs exactly this through .ci/run)
	$(PY) -m ruff format --check --quiet . && $(PY) -m ruff check --quiet .
	$(PY) -m pytest -q $(ARGS)

bench: install  ## benchmarks: print tables, write nothing the tests use
	$(PY) -m bench.encoder_speed

BUDGET ?= 30
DEVICE ?= cpu
CORPUS ?= ../shared/data/corpus-en
RUN ?= runs/train-default
train-default: install  ## carry on the default model's pretraining by the default recipe for BUDGET minutes on DEVICE, then ship it
	$(PY) -m encoder train --continue default --recipe --corpus $(wildcard $(CORPUS)/shard-*.txt.xz) --out $(RUN) \
	  --time-budget $(BUDGET) --device $(DEVICE) --valid $(CORPUS)/valid.txt.xz \
	  --valid-tokens 50000 --valid-every 2000
	$(PY) -m encoder ship --run $(RUN) --to data/models/default
