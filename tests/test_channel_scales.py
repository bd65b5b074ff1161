"""Squeeze-and-excitation's channel scale merged into the 1x1 convolution after it
(compiler/channel_scales.py): the image times a scale per channel is no dispatch of its own, the
micro-kernel scales B's rows as it packs them. Compiled for llvm-cpu and run on the VM against the
interpreter (the products rounded in another order: within 1e-5), the kernels asserted."""
from __future__ import annotations

import numpy as np
import pytest

from .compiled_checks import compiled_and_checked


NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
SCALED = "B's rows scaled by A's channel scale while packed"


def t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _constant(array: np.ndarray) -> str:
    return f'stablehlo.constant dense<"0x{array.astype("<f4").tobytes().hex().upper()}"> : {t(array.shape)}'


def scaled_conv(n: int, h: int, c: int, oc: int, k: int = 1, weights: np.ndarray | None = None) -> tuple[str, list]:
    """`@f(x, s[, w])`: conv_k(x * s, w) + 0.5, s a scale per channel (1x1x1xC, broadcast); w a
    constant when `weights` is given."""
    xs, ss, ws, ys = (n, h, h, c), (1, 1, 1, c), (k, k, c, oc), (n, h - k + 1, h - k + 1, oc)
    args = f"%x: {t(xs)}, %s: {t(ss)}" + ("" if weights is not None else f", %w: {t(ws)}")
    lines = [f"func.func @f({args}) -> {t(ys)} {{"]
    if weights is not None:
        lines.append(f"  %w = {_constant(weights)}")
    lines += [f"  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2, 3] : ({t(ss)}) -> {t(xs)}",
              f"  %xs = stablehlo.multiply %x, %sb : {t(xs)}",
              f"  %c = stablehlo.convolution(%xs, %w) dim_numbers = {NHWC}, window = {{stride = [1, 1]}} "
              f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({t(xs)}, {t(ws)}) -> {t(ys)}",
              f"  %half = stablehlo.constant dense<0.5> : {t(ys)}",
              f"  %y = stablehlo.add %c, %half : {t(ys)}", f"  return %y : {t(ys)}", "}"]
    return "\n".join(lines) + "\n", [xs, ss] + ([] if weights is not None else [ws])


def _check(text: str, shapes: list) -> dict:
    return compiled_and_checked(text, shapes)[1]

@pytest.mark.parametrize("h,c,oc,constant", [
    (28, 16, 16, True),      # MobileNetV3-Small's first block: its filter packed at compile time
    (14, 96, 40, True),      # 40 output channels: the last panel masked
    (7, 576, 96, True),      # K over one block of 256 rows: the scale's index runs on across blocks
    (9, 24, 32, False),      # a filter argument: packed on every call, scaled as it is
])
def test_a_channel_scale_runs_in_the_1x1_convolution(h, c, oc, constant):
    rng = np.random.default_rng(1)
    weights = rng.standard_normal((1, 1, c, oc)).astype(np.float32) / np.sqrt(c) if constant else None
    text, shapes = scaled_conv(1, h, c, oc, weights=weights)
    kernels = _check(text, shapes)
    assert len(kernels) == 1, kernels
    (kernel,) = kernels.values()
    assert kernel["implementation"].startswith("micro-kernel: convolution f32") and SCALED in kernel["implementation"]


@pytest.mark.parametrize("n,k", [(2, 1), (1, 3)])
def test_a_scale_before_a_batch_or_a_wider_filter_stays_a_dispatch(n, k):
    """A batch of two has a scale per image; a 3x3 filter's taps each read KW x C of the image, so
    no row of B belongs to one channel: the multiply stays a dispatch of its own."""
    text, shapes = scaled_conv(n, 8, 16, 16, k)
    kernels = _check(text, shapes)
    assert len(kernels) == 2 and not any(SCALED in k_.get("implementation", "") for k_ in kernels.values())
