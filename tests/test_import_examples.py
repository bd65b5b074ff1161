"""examples/: MLP, CNN and transformer block in JAX and PyTorch, imported, lowered to every level,
compiled and run, each step matching the framework's own outputs (`python examples/flow.py`).
Slow (the lower levels run in the interpreter): marked `slow`, run by `make test` and CI."""
from __future__ import annotations

import importlib
import os
import sys

import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


@pytest.mark.slow
@pytest.mark.parametrize("front_end", ["jax", "torch"])
@pytest.mark.parametrize("model", ["cnn", "transformer_block"])
def test_example_matches_its_framework_at_every_step(front_end, model):
    pytest.importorskip(front_end, reason=f"the {front_end} extra is not installed "
                                          f"(pip install 'mlirtext[{front_end}]'; make import-deps)")
    if front_end == "torch":
        pytest.importorskip("torch_mlir", reason="torch-mlir is not installed (pip install 'mlirtext[torch]')")
    sys.path.insert(0, EXAMPLES)
    try:
        flow = importlib.import_module("flow")
    finally:
        sys.path.remove(EXAMPLES)
    errors = flow.check(front_end, model, report=lambda line: None)
    assert list(errors) == ["imported", "tosa", "linalg", "loops", "llvm", "local-task"]
