# Two commands on a fresh clone (see README):
#   make demo   set up .venv; parse, lower and run the bundled example (an MLP in stablehlo)
#   make test   set up .venv with the dev extra (pytest, hypothesis, iree oracle) and run every test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXAMPLE := mlirtext/examples/mlp_stablehlo.mlir
LOWERED := .venv/mlp.llvm.mlir
INPUTS  := --input=4x8xf32=0.5 --input=8x16xf32=0.25 --input=16xf32=-0.5 --input=16x4xf32=0.125 --input=4xf32=1

.PHONY: demo test bench clean ext-test e2e

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
	@echo "== compiled to native code in a .vmpack, its sections, and run on the VM's thread pool"
	$(BIN)/mlirtext compile $(EXAMPLE) -o $(VENV)/mlp.vmpack --print-statistics
	$(BIN)/mlirtext dump $(VENV)/mlp.vmpack
	$(BIN)/mlirtext run $(VENV)/mlp.vmpack --device=local-task $(INPUTS) --print-statistics

test: $(VENV)/.installed-dev
	$(BIN)/python -m pytest tests -q

bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install --quiet xdsl
	$(BIN)/python benchmarks/parse_speed.py

# The VS Code extension (vscode-extension/): unit tests with Node's test runner, and the
# packaged .vsix tested end to end in a real VS Code (code-server + Chromium, set up
# and cached under .e2e/ by setup.sh; screenshots in .e2e/out/).
EXT := vscode-extension
$(EXT)/node_modules/.installed: $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

ext-test: $(EXT)/node_modules/.installed
	cd $(EXT) && npx tsc -p . && node --test out/test/unit/

e2e: $(VENV)/.installed ext-test
	bash $(EXT)/test/e2e/setup.sh
	cd $(EXT) && npx vsce package --allow-missing-repository --out mlirtext.vsix >/dev/null
	node $(EXT)/test/e2e/run.mjs --vsix $(EXT)/mlirtext.vsix --python $(BIN)/python || \
	  { echo "e2e: a UI step failed; running the whole e2e once more (a real failure fails twice)"; \
	    node $(EXT)/test/e2e/run.mjs --vsix $(EXT)/mlirtext.vsix --python $(BIN)/python; }

clean:
	rm -rf $(VENV) build *.egg-info
