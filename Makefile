# Two commands on a fresh clone (see README):
#   make demo   set up .venv; parse, lower and run the bundled example (an MLP in stablehlo)
#   make test   set up .venv with the dev extra (pytest, hypothesis, iree oracle) and run every test
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXAMPLE := examples/mlp_stablehlo.mlir
LOWERED := .venv/mlp.llvm.mlir
INPUTS  := --input=4x8xf32=0.5 --input=8x16xf32=0.25 --input=16xf32=-0.5 --input=16x4xf32=0.125 --input=4xf32=1

.PHONY: demo test bench clean ext-test e2e gpu-deps import-deps cluster-deps onnx-status bytecode-status format-status hostile sweep-report

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

# GPU targets (cuda, rocm, vulkan-spirv, opencl-spirv; see README "GPU targets"): the tools that
# validate the generated code (ld.lld + llvm-readelf for AMDGPU, spirv-val for SPIR-V), the
# software Vulkan driver (Mesa lavapipe) that the `vulkan` device runs on, the OpenCL CPU driver
# (pocl) and SPIR-V reader (llvm-spirv-15) that the `opencl` device runs on, and the `gpu` extra
# (the `vulkan` binding, pyopencl, a ptxas from PyPI). Debian packages only where apt-get exists
# and we are root.
GPU_APT := llvm-22 lld-22 spirv-tools mesa-vulkan-drivers libvulkan1 pocl-opencl-icd ocl-icd-libopencl1 llvm-spirv-15
gpu-deps: | $(BIN)/python
	@if command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ]; then \
	  missing=$$(for p in $(GPU_APT); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  fi; \
	else echo "gpu-deps: not root or no apt-get; install $(GPU_APT) by hand (GPU tests skip without them)"; fi
	$(BIN)/python -m pip install --quiet -e '.[gpu]'

# Framework importers (README "Importing models"): the jax, torch and onnx extras, so the
# import tests and the ONNX conformance run (tests/onnx_status.py) run in CI. About 1.6 GB and
# under 2 minutes on a fresh venv; nothing when already installed.
$(VENV)/.installed-import: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[jax,torch,onnx]'
	touch $@
import-deps: $(VENV)/.installed-import

# Sweeps and remote devices on Ray (README "Sweeps"): the `cluster` extra (ray).
$(VENV)/.installed-cluster: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[cluster]'
	touch $@
cluster-deps: $(VENV)/.installed-cluster

test: $(VENV)/.installed-dev gpu-deps import-deps cluster-deps
	$(BIN)/python -m pytest tests -q

# ONNX conformance (README "Importing models", "Sweeps"): every ONNX node test through torch-mlir to
# StableHLO, one Ray task each (`mlirtext sweep onnx`), run on the reference and local-task devices;
# prints converted / ran / matched and fails on any test worse than tests/expected/onnx.tsv says.
# ONNX_BUDGET=SECONDS starts no test after that (CI bounds its time so; the summary says so).
ONNX_BUDGET ?= 0
onnx-status: $(VENV)/.installed-dev import-deps cluster-deps
	$(BIN)/python -m tests.onnx_status --budget $(ONNX_BUDGET) --tsv $(VENV)/onnx_status.tsv \
	  --expect tests/expected/onnx.tsv

# The latest sweep against the previous one and the best ever (README "Sweeps").
sweep-report: $(VENV)/.installed-cluster
	$(BIN)/mlirtext sweep report --html $(VENV)/sweep-report.html

# MLIR bytecode: every corpus case iree-opt accepts, written as bytecode by iree-opt and read by
# mlirtext, compared in generic form (tests/bytecode_status.py); CI runs a sample (test_bytecode.py).
bytecode-status: $(VENV)/.installed-dev
	$(BIN)/python -m tests.bytecode_status

# The formatter over every corpus chunk that parses: same IR, formats to itself, every comment kept
# (tests/format_status.py); tests/test_format.py runs every second file in CI.
format-status: $(VENV)/.installed-dev
	$(BIN)/python -m tests.format_status -v

# The hostile-input suite (README "Hostile input"; tests/hostile_suite.py): 300 cases of each
# family, each in a child process with a 30 s limit; fails on any traceback, signal, hang,
# unanswered request, file lost or replaced, or exit status other than 0/1. CI runs 10 of each
# (tests/test_hostile_suite.py). HOSTILE_SEED varies the cases.
HOSTILE_SEED ?= 0
hostile: $(VENV)/.installed-dev
	$(BIN)/python -m tests.hostile_suite --full --seed $(HOSTILE_SEED)

bench: $(VENV)/.installed-dev
	$(BIN)/python -m pip install --quiet xdsl
	$(BIN)/python benchmarks/parse_speed.py
	$(BIN)/python benchmarks/opt_process.py

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
