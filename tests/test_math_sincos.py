"""math.sincos: syntax from its declared format, the interpreter's meaning, the llvm lowering."""
from __future__ import annotations

import numpy as np

from mlirtext.api import parse_and_verify, to_text
from mlirtext.interpreter import Interpreter
from mlirtext.transforms.conversions.levels import lowering_pipeline
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline
from mlirtext.transforms.semantics_check import CheckSemantics

SRC = """func.func @f(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %e = tensor.empty() : tensor<5xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<5xf32>) outs(%e, %e : tensor<5xf32>, tensor<5xf32>) {
  ^bb0(%a: f32, %o1: f32, %o2: f32):
    %s, %c = math.sincos %a fastmath<contract> : f32
    linalg.yield %s, %c : f32, f32
  } -> (tensor<5xf32>, tensor<5xf32>)
  return %r#0, %r#1 : tensor<5xf32>, tensor<5xf32>
}
"""


def test_prints_as_written_and_names_its_results():
    result = parse_and_verify(SRC)
    assert result.ok, [d.format() for d in result.diagnostics]
    assert "%s, %c = math.sincos %a fastmath<contract> : f32\n" in to_text(result)
    op = next(o for o in result.module.walk() if o.name == "math.sincos")
    assert op.result_named("sin") is op.results[0] and op.result_named("cos") is op.results[1]


def test_mismatched_types_are_rejected():
    """The custom form writes one type for all three; the generic form can spell a mismatch."""
    result = parse_and_verify('func.func @g(%a: f32) -> f64 {\n'
                              '  %s, %c = "math.sincos"(%a) : (f32) -> (f32, f64)\n  return %c : f64\n}\n')
    assert not result.ok
    assert "all of {operand, sin, cos} have same type" in result.diagnostics[0].message


def test_interpreter_and_llvm_lowering_agree():
    x = np.array([0.0, 0.5, -1.25, 3.0, 100.0], np.float32)
    result = parse_and_verify(SRC)
    sin, cos = Interpreter(result.module).call("f", [x])
    np.testing.assert_allclose(sin, np.sin(x), rtol=1e-6)
    np.testing.assert_allclose(cos, np.cos(x), rtol=1e-6)
    lines = []
    checker = CheckSemantics(lines.append, seed=3)
    pm = PassManager(parse_pipeline(lowering_pipeline(result.module, "llvm")), instrumentations=[checker])
    assert not pm.run(result.module)
    assert checker.differences and all(d.ok for d in checker.differences)
    text = to_text(result)
    assert "math.sincos" not in text
    assert "%s = llvm.intr.sin" in text and "%c = llvm.intr.cos" in text
