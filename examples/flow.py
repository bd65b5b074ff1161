"""Model to numbers: import a model, lower it through every level, compile it, run it, and compare
each step with the framework's own outputs.

    python examples/flow.py [jax|torch] [MODEL...]

For each model: the imported module and each lower level (tosa, linalg, loops, llvm) run on the
reference interpreter, and the module compiled to native code runs on the VM (`local-task`);
every one of them must match what the framework computes.
"""
from __future__ import annotations

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

from mlirtext.api import parse_and_verify  # noqa: E402
from mlirtext.interpreter import Interpreter  # noqa: E402
from mlirtext.runtime import compile_text, load_module  # noqa: E402
from mlirtext.syntax.printer import print_module  # noqa: E402
from mlirtext.transforms.conversions.levels import level_of, lowering_pipeline  # noqa: E402
from mlirtext.transforms.pass_manager import PassManager  # noqa: E402
from mlirtext.transforms.pipeline import parse_pipeline  # noqa: E402

LEVELS = ["tosa", "linalg", "loops", "llvm"]
RTOL, ATOL = 1e-4, 1e-5


def imported(front_end: str, name: str):
    """(MLIR text, the framework's outputs, the inputs @main takes) for one example model."""
    if front_end == "jax":
        from jax_models import EXAMPLES

        from mlirtext.importers.jax import import_function
        fn, args = EXAMPLES[name]
        return import_function(fn, *args).text, [np.asarray(fn(*args))], args
    import torch
    from torch_models import EXAMPLES

    from mlirtext.importers.torch import import_module
    factory, args = EXAMPLES[name]
    model = factory().eval()
    with torch.no_grad():
        want = model(*[torch.from_numpy(a) for a in args]).numpy()
    return import_module(model, *args).text, [want], args


def lowered(text: str, level: str) -> str:
    """`text` lowered to `level` with mlirtext's pipeline (what `mlirtext opt --lower-to` does)."""
    result = parse_and_verify(text)
    module = result.module
    if level_of(module) != level:
        problems = PassManager(parse_pipeline(lowering_pipeline(module, level))).run(module)
        if problems:
            raise RuntimeError(f"lowering to {level}: " + "; ".join(d.message for d in problems[:3]))
    return print_module(module, aliases=result.aliases)


def check(front_end: str, name: str, report=print) -> dict:
    """Every level and the compiled module against the framework; max abs error per step."""
    text, want, args = imported(front_end, name)
    errors = {}
    steps = [("imported", text)] + [(level, lowered(text, level)) for level in LEVELS]
    for step, mlir in steps:
        got = Interpreter(parse_and_verify(mlir).module).call("main", list(args))
        errors[step] = _compare(got, want, f"{front_end} {name} at {step}")
    compiled = load_module(compile_text(text), "local-task")
    got = compiled.vm_module.function("main")(*args)
    errors["local-task"] = _compare(got, want, f"{front_end} {name} compiled, on local-task")
    report(f"{front_end:5} {name:18} " + "  ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    return errors


def _compare(got, want, what: str) -> float:
    if len(got) != len(want):
        raise AssertionError(f"{what}: {len(got)} results, expected {len(want)}")
    error = 0.0
    for g, w in zip(got, want):
        if not np.allclose(g, w, rtol=RTOL, atol=ATOL):
            raise AssertionError(f"{what}: max abs error {np.abs(g - w).max():.3g}")
        error = max(error, float(np.abs(g - w).max()))
    return error


def main(argv: list[str]) -> int:
    fronts = [a for a in argv if a in ("jax", "torch")] or ["jax", "torch"]
    names = [a for a in argv if a not in ("jax", "torch")] or ["mlp", "cnn", "transformer_block"]
    print("max abs error against the framework, per step:")
    for front_end in fronts:
        for name in names:
            check(front_end, name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
