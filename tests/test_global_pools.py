"""Global pooling (a window sum the size of the image: squeeze-and-excitation's and the
classifier's average pool) compiled as a sum with the channels innermost (compiler/global_pools.py),
run on the VM against the interpreter: the same sums in the same order, so the same floats."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter
from mlirtext.vm.modfile import read_module_file


def _pool_text(shape: tuple, window: tuple) -> str:
    out = tuple(1 if w > 1 else n for n, w in zip(shape, window))
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"  # noqa: E731
    return f"""func.func @f(%x: {t(shape)}) -> {t(out)} {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.reduce_window"(%x, %z) <{{window_dimensions = array<i64: {', '.join(map(str, window))}>}}> ({{
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }}) : ({t(shape)}, tensor<f32>) -> {t(out)}
  return %r : {t(out)}
}}
"""


def _generics(data: bytes) -> list:
    return [op for op in read_module_file(data).reference_kernels().walk() if op.name == "linalg.generic"]


@pytest.mark.parametrize("shape", [(1, 7, 9, 20), (2, 5, 5, 33), (1, 14, 14, 144), (3, 1, 6, 8)])
def test_a_whole_image_window_sum_runs_channels_innermost(shape):
    n, h, w, c = shape
    text = _pool_text(shape, (1, h, w, 1))
    data = runtime.compile_text(text)
    x = np.random.default_rng(1).standard_normal(shape, dtype=np.float32)
    want = Interpreter(parse_and_verify(text).module).call("f", [x])[0]
    for device in ("local-sync", "local-task"):
        np.testing.assert_array_equal(runtime.load_module(data, device=device).f(x), want, err_msg=device)
    # the sum is over the input's own dims (no window tensor), the pooled ones reductions
    pool = _generics(data)[-1]
    assert len(pool.operands) == 2 and "d0, d1, d2, d3" in str(pool.attributes["indexing_maps"])
    kinds = ["reduction" in str(k) for k in pool.attributes["iterator_types"].items]
    assert kinds == [False, h > 1, w > 1, False]


def test_a_window_smaller_than_the_image_is_left_as_it_is():
    text = _pool_text((1, 6, 6, 8), (1, 3, 3, 1)).replace("1x1x1x8", "1x4x4x8")
    data = runtime.compile_text(text)
    assert any(len(g.regions[0].blocks[0].arguments) == 3 for g in _generics(data))   # (the window tensor kept)
    x = np.random.default_rng(2).standard_normal((1, 6, 6, 8), dtype=np.float32)
    want = Interpreter(parse_and_verify(text).module).call("f", [x])[0]
    np.testing.assert_array_equal(runtime.load_module(data, device="local-sync").f(x), want)


@pytest.mark.parametrize("shape", [(1, 7, 7, 96), (1, 14, 14, 576)])
def test_an_average_pools_divide_runs_in_the_pools_dispatch(shape):
    """A global average pool as squeeze-and-excitation has it: the window sum, a reshape on the
    host, the divide by the window's size. The divide is no dispatch of its own: it joins the sum's
    kernel (compiler/reduction_tails.py), which gives the same floats."""
    n, h, w, c = shape
    text = _pool_text(shape, (1, h, w, 1)).replace("  return %r : tensor<1x1x1x{c}xf32>".format(c=c), "\n".join([
        f"  %v = stablehlo.reshape %r : (tensor<1x1x1x{c}xf32>) -> tensor<1x{c}xf32>",
        f"  %d = stablehlo.constant dense<{float(h * w)}> : tensor<1x{c}xf32>",
        f"  %m = stablehlo.divide %v, %d : tensor<1x{c}xf32>",
        f"  return %m : tensor<1x{c}xf32>"])).replace(f"-> tensor<1x1x1x{c}xf32> {{", f"-> tensor<1x{c}xf32> {{")
    data = runtime.compile_text(text)
    assert len(read_module_file(data).manifest["kernels"]) == 1
    x = np.random.default_rng(3).standard_normal(shape, dtype=np.float32)
    want = Interpreter(parse_and_verify(text).module).call("f", [x])[0]
    for device in ("local-sync", "local-task"):
        np.testing.assert_array_equal(runtime.load_module(data, device=device).f(x), want, err_msg=device)
