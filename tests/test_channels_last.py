"""convert-conv-to-channels-last: an NCHW x OIHW convolution becomes NHWC x HWIO between transposes;
the filter's transpose folds into the constant, a transpose sinks through the bias add (whose
broadcast is re-laid out) and the relu, and the two transposes between convolutions cancel.
The numbers are the interpreter's, before and after."""
from __future__ import annotations

import numpy as np

from mlirtext.api import parse_and_verify, to_text
from mlirtext.interpreter import Interpreter
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

CONV = ("stablehlo.convolution({x}, {w}) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], "
        "window = {{stride = [1, 1], pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, "
        "feature_group_count = 1 : i64}} : ({t}, tensor<4x{c}x3x3xf32>) -> tensor<1x4x5x5xf32>")

TWO_CONVS = f"""
func.func @main(%x: tensor<1x3x5x5xf32>, %b: tensor<4xf32>) -> tensor<1x4x5x5xf32> {{
  %w1 = stablehlo.constant dense<{np.linspace(-1, 1, 4 * 3 * 9).reshape(4, 3, 3, 3).tolist()}> : tensor<4x3x3x3xf32>
  %w2 = stablehlo.constant dense<{np.linspace(1, -1, 4 * 4 * 9).reshape(4, 4, 3, 3).tolist()}> : tensor<4x4x3x3xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x4x5x5xf32>
  %0 = {CONV.format(x="%x", w="%w1", t="tensor<1x3x5x5xf32>", c=3)}
  %bias = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<1x4x5x5xf32>
  %1 = stablehlo.add %0, %bias : tensor<1x4x5x5xf32>
  %2 = stablehlo.maximum %1, %zero : tensor<1x4x5x5xf32>
  %3 = {CONV.format(x="%2", w="%w2", t="tensor<1x4x5x5xf32>", c=4)}
  return %3 : tensor<1x4x5x5xf32>
}}
"""


def _run(module, args):
    return Interpreter(module).call("main", [np.array(a, copy=True) for a in args])


def test_two_convolutions_run_channels_last_with_one_transpose_in_and_one_out():
    result = parse_and_verify(TWO_CONVS)
    assert result.ok, [d.message for d in result.diagnostics]
    rng = np.random.default_rng(0)
    args = [rng.standard_normal((1, 3, 5, 5)).astype(np.float32), rng.standard_normal(4).astype(np.float32)]
    before = _run(result.module, args)
    problems = PassManager(parse_pipeline("convert-conv-to-channels-last")).run(result.module)
    assert not problems, [d.format() for d in problems]
    text = to_text(result)
    assert text.count("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]") == 2, text
    # the image goes in once and the last feature map comes out once: the pair between cancelled
    assert text.count("stablehlo.transpose") == 2, text
    # the filters were transposed at compile time, the bias broadcast re-laid out for NHWC
    assert "tensor<3x3x3x4xf32>" in text and "tensor<3x3x4x4xf32>" in text, text
    assert "dims = [3]" in text, text
    again = parse_and_verify(text)
    assert again.ok, [d.message for d in again.diagnostics]
    after = _run(again.module, args)
    np.testing.assert_allclose(after[0], before[0], rtol=1e-5, atol=1e-5)
