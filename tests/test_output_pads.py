"""Pads merged into the dense convolution that makes their image (compiler/pads.py,
fuse_output_pads; compiler/output_pads.py): ResNet's 3x3 convolutions read a padded copy of the
1x1 or 3x3 convolution before them, and its max pool a -inf padded copy of the stem's result. The
producer's micro-kernel writes its result inside the padded buffer and the border around it, so
the pad is no dispatch of its own; and an NCHW input's layout change is merged into the pad after it.
Compiled for llvm-cpu and run on the VM against the interpreter; the kernels each program gets are
asserted."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.vm.devices import LocalSyncDevice
from mlirtext.vm.modfile import read_module_file

from .compiled_checks import compiled_and_checked

NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"
PADDED = "result written inside a padded buffer"


def t(shape) -> str:
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


def _conv(name: str, x: str, w: str, xs, ws, ys, stride: int = 1, pad: int = 0) -> str:
    return (f"  {name} = stablehlo.convolution({x}, {w}) dim_numbers = {NHWC}, window = {{stride = [{stride}, {stride}], "
            f"pad = [[{pad}, {pad}], [{pad}, {pad}]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} "
            f": ({t(xs)}, {t(ws)}) -> {t(ys)}")


def _relu(name: str, x: str, ys) -> list[str]:
    return ["  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
            f"  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t(ys)}",
            f"  {name} = stablehlo.maximum {x}, %z : {t(ys)}"]


def _out(size: int, k: int, stride: int, pad: int) -> int:
    return (size + 2 * pad - k) // stride + 1


def two_convs(n: int, h: int, w: int, ic: int, mc: int, oc: int, k1: int, s1: int, p1: int, p2: int,
              residual: bool = False) -> tuple[str, list]:
    """`@f(x, w1, b, w2)`: relu(conv_k1(x) + b [+ x]) then a 3x3 convolution with padding p2 (its pad
    the first one's result's only use); the shapes of the arguments."""
    ys1 = (n, _out(h, k1, s1, p1), _out(w, k1, s1, p1), mc)
    ys2 = (n, ys1[1] + 2 * p2 - 2, ys1[2] + 2 * p2 - 2, oc)
    xs, w1s, w2s = (n, h, w, ic), (k1, k1, ic, mc), (3, 3, mc, oc)
    lines = [f"func.func @f(%x: {t(xs)}, %w1: {t(w1s)}, %b: {t((mc,))}, %w2: {t(w2s)}) -> {t(ys2)} {{",
             _conv("%c", "%x", "%w1", xs, w1s, ys1, s1, p1),
             f"  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : ({t((mc,))}) -> {t(ys1)}",
             f"  %a0 = stablehlo.add %c, %bb : {t(ys1)}"]
    lines += [f"  %a = stablehlo.add %a0, %x : {t(ys1)}"] if residual else []
    lines += _relu("%r", "%a" if residual else "%a0", ys1)
    lines += [_conv("%d", "%r", "%w2", ys1, w2s, ys2, 1, p2), f"  return %d : {t(ys2)}", "}"]
    return "\n".join(lines) + "\n", [xs, w1s, (mc,), w2s]

@pytest.mark.parametrize("n,h,w,ic,mc,oc,k1,s1,p1,p2", [
    (1, 9, 9, 8, 16, 16, 3, 1, 1, 1),      # a basic block's two 3x3s: one GEMM of 81 rows
    (1, 12, 10, 4, 24, 32, 3, 2, 1, 1),    # strided, 24 channels (the last panel masked), not square
    (1, 14, 14, 8, 32, 16, 1, 1, 0, 2),    # a bottleneck's 1x1 then a 3x3, two pixels of padding
    (2, 48, 48, 4, 32, 16, 1, 1, 0, 1),    # two images of 12 GEMMs each (4 lines): first, middle, last
    (1, 7, 7, 16, 64, 32, 3, 1, 1, 1),     # 12x32 register tiles where the host has AVX-512
])
def test_a_pad_runs_in_the_convolution_before_it(n, h, w, ic, mc, oc, k1, s1, p1, p2):
    text, shapes = two_convs(n, h, w, ic, mc, oc, k1, s1, p1, p2)
    _, kernels = compiled_and_checked(text, shapes)
    padded = [k for k in kernels.values() if PADDED in k.get("implementation", "")]
    assert len(padded) == 1, kernels
    assert padded[0]["implementation"].startswith("micro-kernel: convolution f32")
    assert f"({p2}+{p2} rows, {p2}+{p2} columns of 0)" in padded[0]["implementation"]
    # the second convolution reads the padded buffer: no pad between them (the first's own pad,
    # of the argument, remains where it has one)
    assert len(kernels) == 2 + (p1 > 0), kernels


def test_a_residual_is_read_at_its_unpadded_place():
    """relu(conv(x) + b + x), padded: the epilogue's residual has the unpadded result's shape."""
    text, shapes = two_convs(1, 10, 10, 16, 16, 16, 3, 1, 1, 1, residual=True)
    _, kernels = compiled_and_checked(text, shapes)
    padded = [k for k in kernels.values() if PADDED in k.get("implementation", "")]
    assert len(padded) == 1 and "addf+addf+maximumf epilogue" in padded[0]["implementation"], kernels


def test_a_max_pool_pad_of_minus_infinity_runs_in_the_stem():
    """ResNet's stem: conv 7x7 stride 2, relu, then a 3x3 stride 2 max pool padded with -inf."""
    xs, ws, ys, ps = (1, 32, 32, 3), (7, 7, 3, 64), (1, 16, 16, 64), (1, 8, 8, 64)
    text = "\n".join([
        f"func.func @f(%x: {t(xs)}, %w: {t(ws)}) -> {t(ps)} {{", _conv("%c", "%x", "%w", xs, ws, ys, 2, 3),
        *_relu("%r", "%c", ys), "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>",
        '  %p = "stablehlo.reduce_window"(%r, %ninf) <{window_dimensions = array<i64: 1, 3, 3, 1>, '
        "window_strides = array<i64: 1, 2, 2, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : tensor<4x2xi64>}> ({",
        "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):", "    %m = stablehlo.maximum %a, %b : tensor<f32>",
        "    stablehlo.return %m : tensor<f32>", f"  }}) : ({t(ys)}, tensor<f32>) -> {t(ps)}",
        f"  return %p : {t(ps)}", "}"]) + "\n"
    _, kernels = compiled_and_checked(text, [xs, ws])
    padded = [k for k in kernels.values() if PADDED in k.get("implementation", "")]
    assert len(padded) == 1 and "(1+1 rows, 1+1 columns of -inf)" in padded[0]["implementation"], kernels
    assert padded[0]["outputs"][0]["shape"] == [1, 18, 18, 64]


def test_a_pad_of_an_image_read_twice_stays_a_dispatch():
    """ResNet's block input: its pad and the residual add both read it, so the producer's result
    is needed as it is, and the pad is not merged."""
    text, shapes = two_convs(1, 9, 9, 16, 16, 16, 3, 1, 1, 1)
    text = text.replace("  return %d : tensor<1x9x9x16xf32>", "  %e = stablehlo.add %d, %r : tensor<1x9x9x16xf32>\n"
                        "  return %e : tensor<1x9x9x16xf32>")
    _, kernels = compiled_and_checked(text, shapes)
    assert not any(PADDED in k.get("implementation", "") for k in kernels.values()), kernels


@pytest.mark.parametrize("n,h,mc,p2", [(2, 48, 32, 1), (1, 12, 24, 2)])
def test_every_element_of_the_padded_buffer_is_written(n, h, mc, p2):
    """Border and interior are written on every call whatever the buffer held (the pool reuses
    buffers): the merged kernel, called on a buffer of NaN, leaves none; each workgroup alone
    writes its share."""
    text, shapes = two_convs(n, h, h, 8, mc, 16, 1, 1, 0, p2)
    data, kernels = compiled_and_checked(text, shapes)
    mf = read_module_file(data)
    device = LocalSyncDevice(mf.entry(mf.manifest["executables"]["llvm-cpu"]["object"]), kernels)
    name = next(name for name, k in kernels.items() if PADDED in k.get("implementation", ""))
    spec = kernels[name]
    rng = np.random.default_rng(1)
    ins = [rng.standard_normal(r["shape"]).astype(r["dtype"]) for r in spec["inputs"]]
    whole = np.full(spec["outputs"][0]["shape"], np.nan, np.float32)
    device.kernel(name)(ins, [whole])
    assert not np.isnan(whole).any()
    border = np.ones(whole.shape, bool)
    border[:, p2:-p2, p2:-p2, :] = False
    assert (whole[border] == 0).all() and (whole[~border] >= 0).all()   # (a relu inside)
    pieces = np.full_like(whole, np.nan)
    for g in range(spec["workgroups"]["count"]):
        device.kernel(name)(ins, [pieces], rows=(g, g + 1))
    np.testing.assert_array_equal(pieces, whole)


def test_the_nchw_input_is_laid_out_and_padded_in_one_pass():
    """A PyTorch stem: the NCHW image goes to NHWC (convert-conv-to-channels-last) and is padded
    for the 7x7 convolution; the transpose is merged into the pad, whose reads take the NCHW
    image at the permuted place: one dispatch moves the image, not two."""
    xs, ws, ys = (1, 3, 20, 20), (16, 3, 7, 7), (1, 16, 10, 10)
    text = (f"func.func @f(%x: {t(xs)}, %w: {t(ws)}) -> {t(ys)} {{\n"
            f"  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], "
            "window = {stride = [2, 2], pad = [[3, 3], [3, 3]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
            f": ({t(xs)}, {t(ws)}) -> {t(ys)}\n  return %c : {t(ys)}\n}}\n")
    _, kernels = compiled_and_checked(text, [xs, ws])
    reading_x = [k for k in kernels.values() if k["inputs"][0]["shape"] == list(xs)]
    assert len(reading_x) == 1 and reading_x[0]["outputs"][0]["shape"] == [1, 26, 26, 3], kernels


@pytest.mark.parametrize("n,c,h,w,k,pad,kernel", [
    (1, 3, 20, 37, 7, 3, "layout pad"),      # a stem: 3 channel rows, two whole vectors of pixels and a tail
    (2, 3, 9, 16, 3, 1, "layout pad"),       # two images, a row of exactly one vector (of 16 pixels)
    (1, 4, 11, 5, 3, 2, "layout pad"),       # four channels, a row shorter than a vector: the tail only
    (1, 2, 8, 33, 5, 2, "layout pad"),       # two channels
    (1, 5, 8, 8, 3, 1, "generated loops"),   # more channels than the kernel interleaves
])
def test_the_nchw_input_moves_a_vector_of_pixels_at_a_time(n, c, h, w, k, pad, kernel):
    """The stem's layout change and pad (one dispatch) as its own kernel: each channel's row read a
    vector at a time and interleaved into NHWC pixels, the border stores of the pad value."""
    oc, out = 16, lambda s: (s + 2 * pad - k) // 2 + 1
    xs, ws, ys = (n, c, h, w), (oc, c, k, k), (n, oc, out(h), out(w))
    text = (f"func.func @f(%x: {t(xs)}, %w: {t(ws)}) -> {t(ys)} {{\n"
            f"  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], "
            f"window = {{stride = [2, 2], pad = [[{pad}, {pad}], [{pad}, {pad}]]}} "
            "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} "
            f": ({t(xs)}, {t(ws)}) -> {t(ys)}\n  return %c : {t(ys)}\n}}\n")
    _, kernels = compiled_and_checked(text, [xs, ws])
    moving = [k for k in kernels.values() if k["inputs"][0]["shape"] == list(xs)]
    assert len(moving) == 1 and moving[0]["outputs"][0]["shape"] == [n, h + 2 * pad, w + 2 * pad, c], kernels
    assert moving[0].get("implementation", "generated loops").startswith(kernel), moving[0]
