# Each target sets itself up on a fresh machine (venv, dependencies, Graphviz) before running.
VENV := .venv
BIN := $(VENV)/bin

.PHONY: setup demo test test-deep bench clean

setup:
	@./scripts/bootstrap.sh

demo: setup
	$(BIN)/topoopt solve instances/llama3-70b-roce-cny.yaml --out out/demo

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -n auto

test-deep: setup
	HYPOTHESIS_PROFILE=deep $(BIN)/python -m pytest -n auto

bench: setup
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf out .pytest_cache .hypothesis
