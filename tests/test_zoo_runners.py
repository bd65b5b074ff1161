"""The model zoo's runtimes (`benchmarks/models/runners.py`) and `benchmarks/module_load.py` on a
module named as JAX names its exports (`module @jit_f`): IREE binds such a module under that name,
not `module`, and the flax rows of `benchmarks/models.py` failed with `AttributeError: module`."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from mlirtext.bench import iree

ROOT = Path(__file__).resolve().parent.parent


def _script(relative: str):
    """A benchmark module loaded from its file (benchmarks/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(Path(relative).stem + "_under_test", ROOT / relative)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module   # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


runners = _script("benchmarks/models/runners.py")

BODY = """
  func.func public @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.multiply %x, %x : tensor<2x3xf32>
    %1 = stablehlo.add %0, %x : tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
"""

needs_iree = pytest.mark.skipif(iree.available() is not None, reason="IREE is not installed")


@needs_iree
@pytest.mark.parametrize("header", ["module @jit_f", "module"], ids=["named", "unnamed"])
def test_both_runtimes_run_a_module_whatever_its_name(tmp_path, header):
    text = f"{header} {{{BODY}}}\n"
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
    want = [x * x + x]
    theirs = runners.iree_artifact(text, str(tmp_path / "m.vmfb"))
    ours = runners.mlirtext_artifact(text, str(tmp_path / "m.vmpack"))
    for threads in (1, 2):
        for runner in (runners.iree_runner(theirs, "main", [x], threads),
                       runners.mlirtext_runner(ours, "main", [x], threads)):
            assert runners.max_relative_error(runner.outputs(), want) < 1e-6, (runner.runtime, threads)


@needs_iree
def test_module_load_times_an_iree_module_named_as_jax_names_it(tmp_path):
    module_load = _script("benchmarks/module_load.py")
    path = tmp_path / "m.vmfb"
    path.write_bytes(iree.iree_compile(f"module @jit_f {{{BODY}}}\n")[0])
    load, first_call_extra = module_load.iree_times(str(path), 1)
    assert 0 < load < 10 and first_call_extra < 10
