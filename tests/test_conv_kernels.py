"""Convolutions of every shape real CNNs have, compiled for llvm-cpu and run on the VM against the
interpreter, with the kernel each convolution dispatch got asserted (never the generated loops):
depthwise and grouped ones (grouped_conv.py) with strides, dilations, padding, channel multipliers
and channel counts that are not a multiple of 8, and their fused bias + activation epilogues."""
from __future__ import annotations

import pytest

from mlirtext.compiler.ukernels import host_tile_columns
from mlirtext.targets.llvm_cpu import host_vector_floats

from .compiled_checks import compiled_and_checked

NHWC = "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"


def conv_text(h: int, ic: int, oc: int, k: int, stride: int = 1, pad: int = 0, dilation: int = 1,
              groups: int = 1, epilogue: bool = False) -> tuple[str, tuple, tuple, tuple]:
    """`@f(x, w[, bias])`: one NHWC convolution (a bias and a relu after it when `epilogue`), and
    the shapes of x, w and the result."""
    out = (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    xs, ws, ys = (1, h, h, ic), (k, k, ic // groups, oc), (1, out, out, oc)
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"  # noqa: E731
    args = f"%x: {t(xs)}, %w: {t(ws)}" + (f", %b: {t((oc,))}" if epilogue else "")
    lines = [f"func.func @f({args}) -> {t(ys)} {{",
             f"  %c = stablehlo.convolution(%x, %w) dim_numbers = {NHWC}, window = {{stride = [{stride}, {stride}], "
             f"pad = [[{pad}, {pad}], [{pad}, {pad}]], rhs_dilate = [{dilation}, {dilation}]}} "
             f"{{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : ({t(xs)}, {t(ws)}) -> {t(ys)}"]
    result = "%c"
    if epilogue:
        lines += [f"  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : ({t((oc,))}) -> {t(ys)}",
                  f"  %a = stablehlo.add %c, %bb : {t(ys)}",
                  "  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
                  f"  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t(ys)}",
                  f"  %r = stablehlo.maximum %a, %z : {t(ys)}"]
        result = "%r"
    lines += [f"  return {result} : {t(ys)}", "}"]
    return "\n".join(lines) + "\n", xs, ws, ys


def _check(text: str, shapes: list, seed: int = 0) -> dict:
    """Compile `text`, run it on local-sync and local-task against the interpreter; its kernels."""
    return compiled_and_checked(text, shapes, seed)[1]

def _conv_kernel(kernels: dict) -> dict:
    """The one kernel that is not a pad (its input is the padded image)."""
    convs = [k for k in kernels.values() if len(k["inputs"]) >= 2]
    assert len(convs) == 1, kernels
    return convs[0]


@pytest.mark.parametrize("h,c,k,stride,pad,dilation", [
    (9, 16, 3, 1, 1, 1),     # mobilenet's 3x3, stride 1
    (12, 24, 3, 2, 1, 1),    # 3x3, stride 2
    (11, 40, 5, 1, 2, 1),    # efficientnet's 5x5
    (14, 72, 5, 2, 2, 1),    # 5x5, stride 2
    (10, 16, 3, 1, 2, 2),    # dilated
    (13, 20, 3, 1, 1, 1),    # channels not a multiple of 8 (or 16): the last vector masked
    (8, 48, 3, 2, 1, 1),     # three 16-channel vectors (six of 8)
    (6, 3, 3, 2, 0, 1),      # fewer channels than one vector
])
def test_depthwise_convolutions_run_on_the_direct_kernel(h, c, k, stride, pad, dilation):
    text, xs, ws, _ = conv_text(h, c, c, k, stride, pad, dilation, groups=c)
    kernels = _check(text, [xs, ws])
    kernel = _conv_kernel(kernels)
    assert kernel["implementation"].startswith("direct kernel: depthwise convolution"), kernel
    lanes = host_vector_floats()   # (channels per vector: 16 with AVX-512)
    assert f"x {lanes} channels per register tile" in kernel["implementation"]
    assert ("masked" in kernel["implementation"]) == (c % lanes != 0)
    # The pad is no dispatch of its own: the kernel reads the image and skips the taps in the padding.
    assert ("zero padding read in place" in kernel["implementation"]) == (pad > 0) and len(kernels) == 1


@pytest.mark.parametrize("ic,oc,groups,inputs", [
    (16, 16, 2, "broadcast"),   # 8 output channels per group: one input per vector
    (16, 32, 4, "broadcast"),
    (32, 64, 2, "broadcast"),   # 32 per group: 16-channel vectors with AVX-512
    (8, 16, 8, "gather"),       # a channel multiplier of 2
    (12, 18, 6, "gather"),      # 3 output channels per group, 18 of them: masked too
])
def test_grouped_convolutions_run_on_the_direct_kernel(ic, oc, groups, inputs):
    text, xs, ws, _ = conv_text(7, ic, oc, 3, stride=1, pad=1, groups=groups)
    kernels = _check(text, [xs, ws])
    kernel = _conv_kernel(kernels)
    assert kernel["implementation"].startswith(f"direct kernel: grouped ({groups} groups) convolution"), kernel
    assert len(kernels) == 1   # (the pad merged)
    assert f"inputs {inputs}" in kernel["implementation"]


@pytest.mark.parametrize("c", [32, 24, 13])
def test_bias_and_relu_run_as_the_depthwise_epilogue(c):
    text, xs, ws, ys = conv_text(8, c, c, 3, stride=1, pad=1, groups=c, epilogue=True)
    kernels = _check(text, [xs, ws, (c,)])
    kernel = _conv_kernel(kernels)
    assert kernel["implementation"].endswith("addf+maximumf epilogue"), kernel
    assert len(kernels) == 1   # the convolution with its pad and epilogue


def _mm_text(m: int, k: int, n: int) -> str:
    return f"""func.func @f(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>, %bias: tensor<{n}xf32>) -> tensor<{m}x{n}xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
  %1 = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<{n}xf32>) -> tensor<{m}x{n}xf32>
  %2 = stablehlo.add %0, %1 : tensor<{m}x{n}xf32>
  return %2 : tensor<{m}x{n}xf32>
}}
"""


@pytest.mark.parametrize("m,k,n", [(1, 64, 1000), (1, 16, 8), (7, 300, 24), (13, 40, 72), (3, 5, 3)])
def test_matmuls_with_a_narrower_last_panel_run_on_the_micro_kernel(m, k, n):
    """N not a multiple of 16: the last panel is packed with zeros past N and C is written under a
    lane mask (K over the k block: sums carried through C, read back under the mask); one row of A
    runs the GEMV kernel, its last panel under the masks too."""
    kernels = _check(_mm_text(m, k, n), [(m, k), (k, n), (n,)])
    assert len(kernels) == 1, kernels
    kernel = next(iter(kernels.values()))
    assert kernel["implementation"].startswith("micro-kernel: " + ("GEMV f32" if m == 1 else "matmul f32")), kernel
    assert f"last panel {n % 16} columns (masked)" in kernel["implementation"]
    assert kernel["implementation"].endswith("addf epilogue")


@pytest.mark.parametrize("oc,k,stride", [(3, 3, 1), (24, 1, 1), (40, 3, 2), (72, 1, 1)])
def test_convolutions_with_odd_output_channels_run_on_the_micro_kernel(oc, k, stride):
    """Output channels not a multiple of 16; with several GEMMs each workgroup writes a whole one
    (here a small image's output lines are all one GEMM)."""
    text, xs, ws, ys = conv_text(9, 8, oc, k, stride, pad=k // 2, epilogue=True)
    kernels = _check(text, [xs, ws, (oc,)])
    kernel = _conv_kernel(kernels)
    assert kernel["implementation"].startswith("micro-kernel: convolution f32"), kernel
    assert kernel["implementation"].endswith("addf+maximumf epilogue")
    count, block = kernel["workgroups"]["count"], kernel["workgroups"]["block"]
    assert count == -(-(ys[1] * ys[2] * oc) // block)
    if k > 1:   # one GEMM of every output line (81 or 25 rows: fewer than 48 per line), a workgroup per panel
        assert (count, block) == _gemm_workgroups(1, ys[1] * ys[2], oc)


def _residual_text(c: int, groups: int) -> tuple[str, list]:
    """conv 3x3 (pad 1) + bias + a residual input + relu, as a ResNet or MobileNet block ends."""
    t = f"tensor<1x6x6x{c}xf32>"
    text = f"""func.func @f(%x: {t}, %w: tensor<3x3x{c // groups}x{c}xf32>, %b: tensor<{c}xf32>, %r: {t}) -> {t} {{
  %c = stablehlo.convolution(%x, %w) dim_numbers = {NHWC}, window = {{stride = [1, 1], pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : ({t}, tensor<3x3x{c // groups}x{c}xf32>) -> {t}
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<{c}xf32>) -> {t}
  %a = stablehlo.add %c, %bb : {t}
  %s = stablehlo.add %a, %r : {t}
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t}
  %y = stablehlo.maximum %s, %z : {t}
  return %y : {t}
}}
"""
    return text, [(1, 6, 6, c), (3, 3, c // groups, c), (c,), (1, 6, 6, c)]


@pytest.mark.parametrize("c,groups,kind", [(16, 1, "micro-kernel"), (24, 1, "micro-kernel"),
                                           (16, 16, "direct kernel"), (20, 20, "direct kernel")])
def test_a_residual_add_runs_in_the_epilogue(c, groups, kind):
    text, shapes = _residual_text(c, groups)
    kernels = _check(text, shapes)
    # the convolution with its whole epilogue (and its pad, in the direct kernel; the micro-kernel's
    # image is padded by a dispatch of its own)
    assert len(kernels) == (1 if kind == "direct kernel" else 2), kernels
    kernel = _conv_kernel(kernels)
    assert kernel["implementation"].startswith(kind) and kernel["implementation"].endswith(
        "addf+addf+maximumf epilogue"), kernel
    assert len(kernel["inputs"]) == 4


def _gemm_workgroups(gemms: int, rows: int, oc: int) -> tuple[int, int]:
    """(count, block) of a convolution run as `gemms` GEMMs of `rows` rows: a workgroup per GEMM and
    column tile (32 columns with 16-float vectors where oc is a multiple of 32, else 16), or per
    GEMM (every panel) when the last panel is narrower and there are several GEMMs."""
    cols = host_tile_columns(oc)
    if oc % 16 and gemms > 1:
        return gemms, rows * oc
    return gemms * -(-oc // cols), rows * min(cols, oc)


@pytest.mark.parametrize("h,ic,oc,gemms,rows", [(7, 32, 96, 1, 49), (14, 16, 24, 2, 98), (9, 8, 16, 1, 81)])
def test_a_1x1_convolution_on_a_small_image_is_one_gemm_of_many_rows(h, ic, oc, gemms, rows):
    """Output rows that continue each other in the input merge into GEMMs of 48 rows or more:
    7x7 is one GEMM of 49 rows (a workgroup per column tile); 14x14 two of 98."""
    text, xs, ws, ys = conv_text(h, ic, oc, 1, epilogue=True)
    kernel = _conv_kernel(_check(text, [xs, ws, (oc,)]))
    assert kernel["implementation"].startswith("micro-kernel: convolution f32"), kernel
    assert (kernel["workgroups"]["count"], kernel["workgroups"]["block"]) == _gemm_workgroups(gemms, rows, oc)


@pytest.mark.parametrize("h,ic,oc,k,stride,gemms,rows", [
    (14, 16, 32, 3, 1, 2, 98),    # 7 lines of 14 per GEMM (98 rows: 8 tiles of 12, one of 2)
    (13, 8, 24, 3, 2, 1, 49),     # strided: 7 lines of 7 (the last panel 8 columns, masked)
    (9, 16, 48, 5, 2, 1, 25),     # 5x5 stride 2: 5 lines of 5 (25 rows: two tiles of 12, one of 1)
    (7, 192, 160, 3, 1, 1, 49),   # a filter over FILTER_IN_L2: the whole image, read once per panel
    (48, 4, 32, 3, 1, 12, 192),   # a big image: 4 lines of 48 per GEMM (192 rows), 12 GEMMs
])
def test_output_lines_of_a_convolution_merge_into_one_gemm(h, ic, oc, k, stride, gemms, rows):
    """A convolution's output lines are rows of one GEMM: row r of A starts at line r // OW, pixel
    r % OW of the padded image (rows wrap across lines, row tiles straddle them). Fewest lines that
    make 192 rows in 8 GEMMs or more, else 48 rows, or every line when the filter is too big for L2
    to hold between GEMMs."""
    text, xs, ws, ys = conv_text(h, ic, oc, k, stride, pad=k // 2, epilogue=True)
    kernel = _conv_kernel(_check(text, [xs, ws, (oc,)]))
    assert kernel["implementation"].startswith("micro-kernel: convolution f32"), kernel
    assert (kernel["workgroups"]["count"], kernel["workgroups"]["block"]) == _gemm_workgroups(gemms, rows, oc)


@pytest.mark.parametrize("h,w,k,stride,pad,dilation", [
    (5, 23, 3, 1, 1, 1),    # a row wider than one 8-pixel tile: border tiles at both ends, interior between
    (4, 4, 5, 2, 2, 1),     # every tile a border tile, rows in the padding above and below
    (9, 17, 3, 2, 2, 2),    # dilated, padding wider than the window's reach at the edge
])
def test_padding_is_read_in_place_at_every_edge(h, w, k, stride, pad, dilation):
    c = 16
    oh = (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    ow = (w + 2 * pad - dilation * (k - 1) - 1) // stride + 1
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"  # noqa: E731
    xs, ws, ys = (1, h, w, c), (k, k, 1, c), (1, oh, ow, c)
    text = (f"func.func @f(%x: {t(xs)}, %w: {t(ws)}) -> {t(ys)} {{\n"
            f"  %c = stablehlo.convolution(%x, %w) dim_numbers = {NHWC}, window = {{stride = [{stride}, {stride}], "
            f"pad = [[{pad}, {pad}], [{pad}, {pad}]], rhs_dilate = [{dilation}, {dilation}]}} "
            f"{{batch_group_count = 1 : i64, feature_group_count = {c} : i64}} : ({t(xs)}, {t(ws)}) -> {t(ys)}\n"
            f"  return %c : {t(ys)}\n}}\n")
    kernels = _check(text, [xs, ws])
    assert len(kernels) == 1 and "zero padding read in place" in _conv_kernel(kernels)["implementation"]


def test_a_shortcut_convolution_feeding_another_kernels_epilogue():
    """ResNet's downsampling block: relu(conv3x3(x) + b + (conv1x1(x) + bd)). One convolution's
    epilogue takes the other's result as its residual; whichever merges first, the other's result
    then goes to the merged kernel (found as it now is, not as it was before the merge)."""
    t, tw = "tensor<1x6x6x16xf32>", "tensor<1x6x6x8xf32>"
    text = f"""func.func @f(%x: {tw}, %w: tensor<3x3x8x16xf32>, %b: tensor<16xf32>, %wd: tensor<1x1x8x16xf32>, %bd: tensor<16xf32>) -> {t} {{
  %c = stablehlo.convolution(%x, %w) dim_numbers = {NHWC}, window = {{stride = [1, 1], pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({tw}, tensor<3x3x8x16xf32>) -> {t}
  %d = stablehlo.convolution(%x, %wd) dim_numbers = {NHWC}, window = {{stride = [1, 1]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({tw}, tensor<1x1x8x16xf32>) -> {t}
  %bdb = stablehlo.broadcast_in_dim %bd, dims = [3] : (tensor<16xf32>) -> {t}
  %ds = stablehlo.add %d, %bdb : {t}
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<16xf32>) -> {t}
  %a = stablehlo.add %c, %bb : {t}
  %s = stablehlo.add %a, %ds : {t}
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t}
  %y = stablehlo.maximum %s, %z : {t}
  return %y : {t}
}}
"""
    kernels = _check(text, [(1, 6, 6, 8), (3, 3, 8, 16), (16,), (1, 1, 8, 16), (16,)])
    convs = [k for k in kernels.values() if len(k["inputs"]) >= 2]
    assert all(k["implementation"].startswith("micro-kernel") for k in convs), kernels
    assert any("epilogue" in k["implementation"] for k in convs)


_ACTIVATIONS = {   # (the body after the bias add %a; its result %y)
    "silu": "%l = stablehlo.logistic %a : {t}\n  %y = stablehlo.multiply %a, %l : {t}",
    "sigmoid": "%y = stablehlo.logistic %a : {t}",
    "tanh": "%y = stablehlo.tanh %a : {t}",
}


@pytest.mark.parametrize("c,groups,act,stride,pad,kind", [
    (16, 1, "silu", 1, 1, "micro-kernel"), (24, 1, "sigmoid", 2, 1, "micro-kernel"),
    (32, 1, "tanh", 1, 0, "micro-kernel"), (32, 32, "silu", 1, 1, "direct kernel"),
    (20, 20, "silu", 2, 2, "direct kernel"), (24, 24, "sigmoid", 1, 1, "direct kernel")])
def test_transcendental_activations_run_in_the_epilogue(c, groups, act, stride, pad, kind):
    """EfficientNet's SiLU (x * sigmoid(x)), a sigmoid, a tanh: their exp is expanded into the same
    polynomial the generated loops use, and the whole activation runs on the tile in registers."""
    h = 9
    out = (h + 2 * pad - 3) // stride + 1
    t, to = f"tensor<1x{h}x{h}x{c}xf32>", f"tensor<1x{out}x{out}x{c}xf32>"
    wt = f"tensor<3x3x{c // groups}x{c}xf32>"
    text = f"""func.func @f(%x: {t}, %w: {wt}, %b: tensor<{c}xf32>) -> {to} {{
  %c = stablehlo.convolution(%x, %w) dim_numbers = {NHWC}, window = {{stride = [{stride}, {stride}], pad = [[{pad}, {pad}], [{pad}, {pad}]]}} {{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : ({t}, {wt}) -> {to}
  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<{c}xf32>) -> {to}
  %a = stablehlo.add %c, %bb : {to}
  {_ACTIVATIONS[act].format(t=to)}
  return %y : {to}
}}
"""
    kernels = _check(text, [(1, h, h, c), (3, 3, c // groups, c), (c,)])
    kernel = _conv_kernel(kernels)
    want = {"silu": "addf+negf+exp+addf+divf+mulf", "sigmoid": "addf+negf+exp+addf+divf", "tanh": "addf+tanh"}[act]
    assert kernel["implementation"].startswith(kind) and kernel["implementation"].endswith(f"{want} epilogue"), kernel
    # nothing but the convolution (and, for the micro-kernel with padding, its pad) is left
    assert len(kernels) == (2 if kind == "micro-kernel" and pad else 1), kernels
