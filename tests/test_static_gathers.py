"""fold-static-gathers (transforms/static_gathers.py): ONNX's Gathers at constant indices out of a
transposed tensor (PyTorch attention's packed q, k, v, as torch.onnx exports it) become slices of
the untransposed tensor. The rewritten function gives the interpreter's numbers of the original,
compiled too; gathers and transposes it must not touch stay."""
from __future__ import annotations

import numpy as np

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter
from mlirtext.syntax.printer import Printer
from mlirtext.transforms.static_gathers import FoldStaticGathers

from .compiled_checks import compiled_and_checked

GATHER = ('"stablehlo.gather"(%t, %{i}) <{{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2, 3], '
          'collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, '
          'slice_sizes = array<i64: 1, 5, 1, 8>}}> : (tensor<3x5x1x8xf32>, tensor<1xi64>) -> tensor<1x5x1x8xf32>')

# The ViT's q, k, v (sequence 5, width 8, as 197 and 768): a 5x1x24 projection, reshaped, the 3
# moved first, and one Gather (then a Cast to f32) each; index 7 is clamped to 2 as gather clamps.
# (Returned side by side: one result for the compiled check.)
PACKED_QKV = f"""func.func @f(%x: tensor<5x1x24xf32>) -> tensor<5x3x8xf32> {{
  %i0 = stablehlo.constant dense<0> : tensor<1xi64>
  %i1 = stablehlo.constant dense<1> : tensor<1xi64>
  %i7 = stablehlo.constant dense<7> : tensor<1xi64>
  %r = stablehlo.reshape %x : (tensor<5x1x24xf32>) -> tensor<1x5x1x3x8xf32>
  %tr = stablehlo.transpose %r, dims = [3, 1, 2, 0, 4] : (tensor<1x5x1x3x8xf32>) -> tensor<3x5x1x1x8xf32>
  %t = stablehlo.reshape %tr : (tensor<3x5x1x1x8xf32>) -> tensor<3x5x1x8xf32>
  %g0 = {GATHER.format(i="i0")}
  %g1 = {GATHER.format(i="i1")}
  %g2 = {GATHER.format(i="i7")}
  %c0 = stablehlo.convert %g0 : tensor<1x5x1x8xf32>
  %q = stablehlo.reshape %c0 : (tensor<1x5x1x8xf32>) -> tensor<5x1x8xf32>
  %k = stablehlo.reshape %g1 : (tensor<1x5x1x8xf32>) -> tensor<5x1x8xf32>
  %v = stablehlo.reshape %g2 : (tensor<1x5x1x8xf32>) -> tensor<5x1x8xf32>
  %qkv = stablehlo.concatenate %q, %k, %v, dim = 1 : (tensor<5x1x8xf32>, tensor<5x1x8xf32>, tensor<5x1x8xf32>) -> tensor<5x3x8xf32>
  return %qkv : tensor<5x3x8xf32>
}}"""

# Two index vectors (a real gather), and a slice whose transpose moves the non-unit dims: both stay.
KEPT = """func.func @f(%x: tensor<4x6xf32>) -> (tensor<2x6xf32>, tensor<3x2xf32>) {
  %idx = stablehlo.constant dense<[[3], [1]]> : tensor<2x1xi64>
  %g = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>}> : (tensor<4x6xf32>, tensor<2x1xi64>) -> tensor<2x6xf32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %s = stablehlo.slice %t [1:4, 0:4:2] : (tensor<6x4xf32>) -> tensor<3x2xf32>
  return %g, %s : tensor<2x6xf32>, tensor<3x2xf32>
}"""


def _folded(text: str):
    module = parse_and_verify(text).module
    FoldStaticGathers().run(module)
    return module, Printer().print_top(module)


def _same_numbers(text: str, module, shapes: list) -> None:
    rng = np.random.default_rng(0)
    args = [rng.standard_normal(s, dtype=np.float32) for s in shapes]
    want = Interpreter(parse_and_verify(text).module).call("f", args)
    got = Interpreter(module).call("f", args)
    for w, g in zip(want, got):
        assert np.array_equal(w, g)


def test_packed_qkv_gathers_become_slices_of_the_projection():
    module, text = _folded(PACKED_QKV)
    assert "stablehlo.gather" not in text and "stablehlo.transpose" not in text and "stablehlo.convert" not in text
    assert text.count("stablehlo.slice") == 3
    assert "[0:1, 0:5, 0:1, 2:3, 0:8]" in text or "[0:5, 0:1, 2:3, 0:8]" in text   # (index 7, clamped)
    _same_numbers(PACKED_QKV, module, [(5, 1, 24)])
    compiled_and_checked(PACKED_QKV, [(5, 1, 24)])


def test_a_real_gather_and_a_real_transpose_stay():
    module, text = _folded(KEPT)
    assert "stablehlo.gather" in text and "stablehlo.transpose" in text
    _same_numbers(KEPT, module, [(4, 6)])
