# Two commands on a fresh clone (see README):
#   make demo   set up .venv; parse, lower and run the bundled example (an MLP in stablehlo)
#   make test   set up .venv with the dev extra (pytest, hypothesis, iree oracle) and run every test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXAMPLE := mlirtext/examples/mlp_stablehlo.mlir
LOWERED := .venv/mlp.llvm.mlir
INPUTS  := --input=4x8xf32=0.5 --input=8x16xf32=0.25 --input=16xf32=-0.5 --input=16x4xf32=0.125 --input=4xf32=1

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Reinstall only when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	@echo "== $(EXAMPLE): a two-layer perceptron in stablehlo, parsed, verified and printed"
	$(BIN)/mlirtext opt $(EXAMPLE)
	@echo "== lowered to linalg; every pass checked by running the function before and after"
	$(BIN)/mlirtext opt $(EXAMPLE) --lower-to=linalg --check-semantics
	@echo "== lowered to the LLVM dialect"
	$(BIN)/mlirtext opt $(EXAMPLE) --lower-to=llvm -o $(LOWERED)
	@echo "   ($(LOWERED): $$(wc -l < $(LOWERED)) lines)"
	@echo "== run @mlp on the reference interpreter (iree-run-module conventions), source and llvm level"
	$(BIN)/mlirtext run $(EXAMPLE) $(INPUTS)
	$(BIN)/mlirtext run $(LOWERED) $(INPUTS)

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest tests -q

bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install --quiet xdsl
	$(BIN)/python benchmarks/parse_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
