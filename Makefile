# Two commands on a fresh clone (see README):
#   make demo   set up .venv; parse, print and run the bundled example
#   make test   set up .venv with the dev extra (pytest, hypothesis, iree oracle) and run every test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXAMPLE := mlirtext/examples/mlp.mlir

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
	@echo "== $(EXAMPLE): parse, verify, print (custom form)"
	$(BIN)/mlirtext opt $(EXAMPLE)
	@echo "== the same module in the generic form"
	$(BIN)/mlirtext opt --print-generic $(EXAMPLE)
	@echo "== run @mlp on the reference interpreter (iree-run-module conventions)"
	$(BIN)/mlirtext run $(EXAMPLE) --function mlp --input=f32=0.7

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest tests -q

bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install --quiet xdsl
	$(BIN)/python benchmarks/parse_speed.py

clean:
	rm -rf $(VENV) build *.egg-info
