"""linalg-fuse-elementwise-ops folds a generic's splat-constant inputs into its body only while the
indexing maps left still give every loop its size (MLIR's fold-scalar-or-splat-constant checks that
they stay invertible). A reduction of a splat into a 0-d accumulator once lost its one input and
became a generic with maps `(d0) -> ()` only, which neither verifies nor iree-opt accepts: the
corpus's argmax_float32_1 and five convolutions failed to compile for the VM."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_module
from mlirtext.compiler.module_writer import pack
from mlirtext.interpreter import Interpreter
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.vm.vm import LoadedModule

from .oracle import generic_form

# argmax_float32_1's reduction, inlined: both inputs are splats (iota of one element is zeros)
ARGMAX = """func.func public @main() -> tensor<i32> {
  %cst = stablehlo.constant dense<1.000000e+00> : tensor<1xf32>
  %0 = stablehlo.iota dim = 0 : tensor<1xi32>
  %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%cst init: %cst_0), (%0 init: %c) across dimensions = [0] : (tensor<1xf32>, tensor<1xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
   reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
    %2 = stablehlo.compare  GT, %arg1, %arg3,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.select %2, %arg1, %arg3 : tensor<i1>, tensor<f32>
    %4 = stablehlo.select %2, %arg2, %arg4 : tensor<i1>, tensor<i32>
    stablehlo.return %3, %4 : tensor<f32>, tensor<i32>
  }
  return %1#1 : tensor<i32>
}
"""

# two sums of splats in one reduce (a variadic reduce lowers to a generic): the inputs alone say how
# long the loop is
SUMS = """func.func public @main() -> (tensor<f32>, tensor<i32>) {
  %cst = stablehlo.constant dense<2.500000e+00> : tensor<6xf32>
  %c = stablehlo.constant dense<3> : tensor<6xi32>
  %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %c_1 = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%cst init: %cst_0), (%c init: %c_1) across dimensions = [0] : (tensor<6xf32>, tensor<6xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)
   reducer(%arg1: tensor<f32>, %arg3: tensor<f32>) (%arg2: tensor<i32>, %arg4: tensor<i32>)  {
    %1 = stablehlo.add %arg1, %arg3 : tensor<f32>
    %2 = stablehlo.add %arg2, %arg4 : tensor<i32>
    stablehlo.return %1, %2 : tensor<f32>, tensor<i32>
  }
  return %0#0, %0#1 : tensor<f32>, tensor<i32>
}
"""

# at the linalg level: the first splat folds (the second input still has d0), the second cannot
TWO_SPLATS = """func.func @main(%acc: tensor<f32>) -> tensor<f32> {
  %a = arith.constant dense<2.0> : tensor<5xf32>
  %b = arith.constant dense<3.0> : tensor<5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]} ins(%a, %b : tensor<5xf32>, tensor<5xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
"""


def _run(text: str, pipeline: str) -> str:
    module = parse_and_verify(text, "t.mlir").module
    assert not PassManager(parse_pipeline(pipeline)).run(module)
    return print_module(module)


@pytest.mark.parametrize("text, want", [(ARGMAX, [np.int32(0)]), (SUMS, [np.float32(15.0), np.int32(18)])],
                         ids=["argmax", "sums"])
def test_a_reduction_of_splats_compiles_and_runs_as_the_interpreter_does(text, want):
    expected = Interpreter(parse_and_verify(text, "t.mlir").module).call("main", [])
    compiled = compile_module(parse_and_verify(text, "t.mlir").module, "llvm-cpu", fold=False)
    got = LoadedModule(pack(compiled), "local-sync").function("main")()
    assert len(got) == len(expected) == len(want)
    for g, e, w in zip(got, expected, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
        np.testing.assert_array_equal(np.asarray(g), w)
        assert np.asarray(g).dtype == w.dtype


@pytest.mark.parametrize("text", [ARGMAX, SUMS], ids=["argmax", "sums"])
def test_the_fused_reduction_keeps_an_input_and_iree_opt_accepts_it(text):
    # lowered to linalg as the VM's compile lowers it (no canonicalize), fusion last
    fused = _run(text, "convert-hlo-to-tosa,cse,convert-tosa-to-linalg,cse,linalg-fuse-elementwise-ops")
    reduction = next(line for line in fused.splitlines() if '"reduction"' in line)
    assert "ins(" in reduction and "affine_map<(d0) -> (d0)>" in reduction, fused
    out, err = generic_form(fused)
    assert out is not None, err


def test_splats_fold_while_another_input_still_sizes_the_loop():
    fused = _run(TWO_SPLATS, "linalg-fuse-elementwise-ops")
    assert "ins(%b : tensor<5xf32>)" in fused and "arith.constant 2.0 : f32" in fused, fused
    out, err = generic_form(fused)
    assert out is not None, err

