"""The hlo -> tosa patterns that read their op's operands by name (elementwise, bitwise on i1
and i32, abs/negate, compare, convert, reshape, broadcast_in_dim, slice, reverse), and the
data-movement ones to linalg (broadcast): each op becomes TOSA's at the tosa level, and every
level down to loops gives the interpreter's numbers (bit for bit but for exp's last bit)."""
from __future__ import annotations

import numpy as np

from mlirtext.api import parse_and_verify, to_text
from mlirtext.interpreter import Interpreter
from mlirtext.transforms.conversions.levels import lowering_pipeline
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

PROGRAM = """
func.func @main(%x: tensor<2x3xf32>, %n: tensor<2x3xi32>, %p: tensor<2x3xi1>, %q: tensor<2x3xi1>)
    -> (tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xf32>,
        tensor<2x3xi1>, tensor<2x3xi32>, tensor<3x2xf32>, tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>,
        tensor<4x2x3xi32>) {
  %0 = stablehlo.exponential %x : tensor<2x3xf32>
  %1 = stablehlo.divide %n, %n : tensor<2x3xi32>
  %2 = stablehlo.and %p, %q : tensor<2x3xi1>
  %3 = stablehlo.not %p : tensor<2x3xi1>
  %4a = stablehlo.xor %n, %1 : tensor<2x3xi32>
  %4 = stablehlo.not %4a : tensor<2x3xi32>
  %5a = stablehlo.abs %x : tensor<2x3xf32>
  %5 = stablehlo.negate %5a : tensor<2x3xf32>
  %6a = stablehlo.add %p, %q : tensor<2x3xi1>
  %6b = stablehlo.compare LT, %x, %5, FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %6 = stablehlo.or %6a, %6b : tensor<2x3xi1>
  %7 = stablehlo.convert %6 : (tensor<2x3xi1>) -> tensor<2x3xi32>
  %8 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %9 = stablehlo.broadcast_in_dim %x, dims = [0, 2] : (tensor<2x3xf32>) -> tensor<2x2x3xf32>
  %10 = stablehlo.slice %x [0:2, 1:3] : (tensor<2x3xf32>) -> tensor<2x2xf32>
  %11 = stablehlo.reverse %x, dims = [1] : tensor<2x3xf32>
  %12 = stablehlo.broadcast %n, sizes = [4] : (tensor<2x3xi32>) -> tensor<4x2x3xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12 : tensor<2x3xf32>, tensor<2x3xi32>, tensor<2x3xi1>,
      tensor<2x3xi1>, tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xi32>, tensor<3x2xf32>,
      tensor<2x2x3xf32>, tensor<2x2xf32>, tensor<2x3xf32>, tensor<4x2x3xi32>
}
"""


def _inputs():
    return [np.array([[0.5, -1.0, 2.0], [-0.25, 3.0, -4.0]], np.float32),
            np.array([[1, -2, 3], [7, -8, 9]], np.int32),
            np.array([[True, False, True], [False, False, True]]),
            np.array([[True, True, False], [False, True, True]])]


def _run(module):
    return Interpreter(module).call("main", _inputs())


def test_each_level_gives_the_hlo_numbers():
    result = parse_and_verify(PROGRAM)
    assert result.ok, [d.message for d in result.diagnostics]
    want = _run(result.module)
    for level in ("tosa", "linalg", "loops"):
        problems = PassManager(parse_pipeline(lowering_pipeline(result.module, level))).run(result.module)
        assert not problems, [d.format() for d in problems]
        text = to_text(result)
        if level == "tosa":
            for op in ("tosa.exp", "tosa.intdiv", "tosa.logical_and", "tosa.logical_not", "tosa.bitwise_xor",
                       "tosa.bitwise_not", "tosa.abs", "tosa.negate", "tosa.logical_or", "tosa.greater",
                       "tosa.cast", "tosa.reshape", "tosa.tile", "tosa.slice", "tosa.reverse"):
                assert op in text, (op, text)
            assert "stablehlo." not in text, text
        again = parse_and_verify(text)
        assert again.ok, (level, [d.message for d in again.diagnostics])
        for i, (w, g) in enumerate(zip(want, _run(again.module), strict=True)):
            w, g = np.asarray(w), np.asarray(g)
            assert w.dtype == g.dtype, (level, i, w.dtype, g.dtype)
            if w.dtype.kind == "f":  # tosa.exp may round its last bit otherwise
                np.testing.assert_allclose(g, w, rtol=1e-6, err_msg=f"{level} result {i}")
            else:
                assert w.tobytes() == g.tobytes(), (level, i, w, g)
