"""What a transformer's elementwise code needs on llvm-cpu: splat-constant inputs of a generic
folded into its body (ONNX's expanded erf passes each coefficient as a tensor as big as the
activation), and `powf` by 2, 3 or 4 as multiplications (GPT-2's GELU cubes x) so the loop
vectorises instead of calling pow per element."""
from __future__ import annotations

import numpy as np

from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.module_writer import pack
from mlirtext.interpreter import Interpreter
from mlirtext.runtime import load_module
from mlirtext.syntax.printer import print_module
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

MAP = "affine_map<(d0, d1) -> (d0, d1)>"


def _generic(body: str, inputs: list[str], shape: str = "4x32") -> str:
    """A function whose one elementwise generic reads `%x` and the constants `inputs` name."""
    consts = "\n".join(f"  %c{i} = arith.constant {c} : tensor<{shape}xf32>" for i, c in enumerate(inputs))
    names = ", ".join(["%x"] + [f"%c{i}" for i in range(len(inputs))])
    types = ", ".join([f"tensor<{shape}xf32>"] * (len(inputs) + 1))
    args = ", ".join(["%a: f32"] + [f"%k{i}: f32" for i in range(len(inputs))] + ["%o: f32"])
    return f"""func.func @main(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{
{consts}
  %e = tensor.empty() : tensor<{shape}xf32>
  %r = linalg.generic {{indexing_maps = [{", ".join([MAP] * (len(inputs) + 2))}],
                       iterator_types = ["parallel", "parallel"]}} ins({names} : {types}) outs(%e : tensor<{shape}xf32>) {{
  ^bb0({args}):
{body}
  }} -> tensor<{shape}xf32>
  return %r : tensor<{shape}xf32>
}}
"""


def _run_pass(text: str, pipeline: str) -> str:
    module = parse_and_verify(text).module
    assert not PassManager(parse_pipeline(pipeline)).run(module)
    return print_module(module)


def _native_and_reference(text: str, x: np.ndarray):
    compiled = compile_source(text, "t.mlir")
    got = load_module(pack(compiled), "local-sync").main(x)
    want = Interpreter(parse_and_verify(text).module).call("main", [x])[0]
    return compiled, np.asarray(got), np.asarray(want)


def test_splat_constant_inputs_become_scalars_in_the_body():
    text = _generic("    %m = arith.mulf %a, %k0 : f32\n    %s = arith.addf %m, %k1 : f32\n    linalg.yield %s : f32",
                    ["dense<2.5>", "dense<-1.0>"])
    out = _run_pass(text, "linalg-fuse-elementwise-ops,canonicalize")
    assert "tensor<4x32xf32> = dense" not in out and "dense<2.5>" not in out, out
    assert "arith.constant 2.5 : f32" in out and "ins(%x : tensor<4x32xf32>)" in out, out
    x = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    compiled, got, want = _native_and_reference(text, x)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x * np.float32(2.5) - np.float32(1.0))
    assert not compiled.constants   # nothing left for the module to store


def test_a_constant_that_is_not_a_splat_stays_an_input():
    values = ", ".join(["[" + ", ".join(str(float(i * 32 + j)) for j in range(32)) + "]" for i in range(4)])
    text = _generic("    %m = arith.mulf %a, %k0 : f32\n    linalg.yield %m : f32", [f"dense<[{values}]>"])
    out = _run_pass(text, "linalg-fuse-elementwise-ops")
    assert "ins(%x, %c0 :" in out, out


def test_powf_by_a_small_integer_is_products_that_vectorise_and_match_pow():
    body = ("    %p = math.powf %a, %k0 : f32\n    %q = math.powf %a, %k1 : f32\n    %r = math.powf %a, %k2 : f32\n"
            "    %s = arith.addf %p, %q : f32\n    %t = arith.addf %s, %r : f32\n    linalg.yield %t : f32")
    text = _generic(body, ["dense<3.0>", "dense<2.0>", "dense<4.0>"], "8x64")
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32) * 3
    compiled, got, want = _native_and_reference(text, x)
    assert "pow" not in compiled.llvm_ir, "a call to pow is left"
    assert "<8 x float>" in compiled.llvm_ir or "<16 x float>" in compiled.llvm_ir   # the loop vectorised
    exact = x.astype(np.float64)
    np.testing.assert_allclose(got, (exact ** 3 + exact ** 2 + exact ** 4).astype(np.float32), rtol=2e-6, atol=1e-5)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-5)


def test_powf_by_another_exponent_keeps_pow():
    text = _generic("    %p = math.powf %a, %k0 : f32\n    linalg.yield %p : f32", ["dense<2.5>"], "8x64")
    x = np.abs(np.random.default_rng(2).standard_normal((8, 64)).astype(np.float32))
    compiled, got, want = _native_and_reference(text, x)
    np.testing.assert_allclose(got, want, rtol=2e-6)
    np.testing.assert_allclose(got, x.astype(np.float64) ** 2.5, rtol=2e-6)
