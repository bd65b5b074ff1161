"""Small versions of what real models contain, compiled for llvm-cpu and run on the VM against the
interpreter, with the kernel each dispatch got asserted: a CNN in PyTorch's layout (NCHW input,
OIHW filters, as torch-mlir and the ONNX importer give it) with strided, dilated, 1x1, 3x3, 7x7,
depthwise and grouped convolutions and a classifier matmul."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.module_writer import pack
from mlirtext.dialects.linalg import segments
from mlirtext.interpreter import Interpreter
from mlirtext.runtime import load_module
from mlirtext.transforms.conversions.linalg_to_loops import structured
from mlirtext.transforms.dispatch import is_dispatch_function

NCHW = "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"


def _constant(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f'stablehlo.constant dense<"0x{array.astype("<f4").tobytes().hex().upper()}"> : tensor<{shape}xf32>'


def small_cnn(seed: int = 0) -> str:
    """conv 7x7/2 + bias + relu + 3x3 max pool, conv 3x3 + batch norm, conv 3x3 dilated 2,
    depthwise 3x3/2, grouped 1x1 (2 groups), conv 1x1, a global sum and a 32x16 classifier: NCHW
    throughout, constant weights."""
    rng = np.random.default_rng(seed)
    w = lambda *shape: (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)  # noqa: E731
    layers = [  # (filter OIHW, stride, padding, dilation, groups, output spatial size)
        (w(16, 3, 7, 7), 2, 3, 1, 1, 10), (w(16, 16, 3, 3), 1, 1, 1, 1, 10), (w(16, 16, 3, 3), 1, 2, 2, 1, 10),
        (w(16, 1, 3, 3), 2, 1, 1, 16, 5), (w(16, 8, 1, 1), 1, 0, 1, 2, 5), (w(32, 16, 1, 1), 1, 0, 1, 1, 5)]
    lines = ["func.func @main(%x: tensor<1x3x20x20xf32>) -> tensor<1x16xf32> {",
             "  %zero = stablehlo.constant dense<0.0> : tensor<f32>"]
    value, channels = "%x", 3
    for i, (filt, stride, pad, dil, groups, size) in enumerate(layers):
        oc, in_type = filt.shape[0], f"tensor<1x{channels}x{size * stride}x{size * stride}xf32>"
        if i == 0:
            in_type = "tensor<1x3x20x20xf32>"
        elif i == 3:
            in_type = "tensor<1x16x10x10xf32>"
        out_type = f"tensor<1x{oc}x{size}x{size}xf32>"
        f_type = "tensor<" + "x".join(map(str, filt.shape)) + "xf32>"
        lines += [f"  %w{i} = {_constant(filt)}",
                  f"  %c{i} = stablehlo.convolution({value}, %w{i}) dim_numbers = {NCHW}, window = {{stride = "
                  f"[{stride}, {stride}], pad = [[{pad}, {pad}], [{pad}, {pad}]], rhs_dilate = [{dil}, {dil}]}} "
                  f"{{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : ({in_type}, {f_type}) "
                  f"-> {out_type}"]
        value, channels = f"%c{i}", oc
        if i == 0:   # bias and relu, as a framework's conv + ReLU gives them
            lines += [f"  %b0 = {_constant(w(16, 1))}",
                      "  %b0v = stablehlo.reshape %b0 : (tensor<16x1xf32>) -> tensor<16x1x1xf32>",
                      "  %b0b = stablehlo.broadcast_in_dim %b0v, dims = [1, 2, 3] : (tensor<16x1x1xf32>) -> "
                      f"{out_type}",
                      f"  %a0 = stablehlo.add %c0, %b0b : {out_type}",
                      f"  %z0 = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {out_type}",
                      f"  %r0 = stablehlo.maximum %a0, %z0 : {out_type}",
                      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>",   # a 3x3 max pool
                      '  %p0 = "stablehlo.reduce_window"(%r0, %ninf) ({\n  ^bb0(%l: tensor<f32>, %r: tensor<f32>):',
                      "    %m = stablehlo.maximum %l, %r : tensor<f32>\n    stablehlo.return %m : tensor<f32>",
                      "  }) {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 1, 1>, "
                      "padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : "
                      f"({out_type}, tensor<f32>) -> {out_type}"]
            value = "%p0"
        if i == 1:   # a batch norm, as ONNX's BatchNormalization gives it
            vec = "tensor<16xf32>"
            lines += [f"  %bn{j} = {_constant(v)}" for j, v in enumerate(
                (w(16, 1)[:, 0], w(16, 1)[:, 0], w(16, 1)[:, 0], np.abs(w(16, 1)[:, 0]) + np.float32(0.5)))]
            lines += [f'  %n1 = "stablehlo.batch_norm_inference"(%c1, %bn0, %bn1, %bn2, %bn3) {{epsilon = 1.0e-5 : '
                      f"f32, feature_index = 1 : i64}} : ({out_type}, {vec}, {vec}, {vec}, {vec}) -> {out_type}"]
            value = "%n1"
    lines += ["  %sum = stablehlo.reduce(%c5 init: %zero) applies stablehlo.add across dimensions = [2, 3] : "
              "(tensor<1x32x5x5xf32>, tensor<f32>) -> tensor<1x32xf32>",
              f"  %fc = {_constant(w(32, 16))}",
              "  %y = stablehlo.dot_general %sum, %fc, contracting_dims = [1] x [0] : "
              "(tensor<1x32xf32>, tensor<32x16xf32>) -> tensor<1x16xf32>",
              "  return %y : tensor<1x16xf32>", "}"]
    return "\n".join(lines) + "\n"


def _kernels(compiled) -> dict:
    """Each dispatch's structured ops (a generic convolution as 'conv' with its filter's shape, and
    'grouped conv' when the filter sees fewer channels than the input has)."""
    out = {}
    for op in compiled.dispatched.regions[0].blocks[0].ops:
        if op.name != "func.func" or not is_dispatch_function(op):
            continue
        kinds = []
        for inner in op.regions[0].blocks[0].ops:
            if inner.name == "linalg.generic" and structured(inner).num_dims == 7:
                x, w = (v.type.shape for v in segments(inner)[0])
                kinds.append(("conv" if x[-1] == w[2] else "grouped conv", tuple(w)))
            elif inner.name.startswith("linalg."):
                kinds.append((inner.name, None))
        out[op.sym_name] = kinds
    return out


@pytest.fixture(scope="module")
def cnn():
    text = small_cnn()
    compiled = compile_source(text, "small_cnn.mlir")
    return text, compiled


def test_small_nchw_cnn_matches_the_interpreter(cnn):
    text, compiled = cnn
    x = np.random.default_rng(1).standard_normal((1, 3, 20, 20), dtype=np.float32)
    want = Interpreter(parse_and_verify(text).module).call("main", [x])[0]
    for device in ("local-sync", "local-task"):
        got = load_module(pack(compiled), device).main(x)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * float(np.max(np.abs(want))))


def test_every_convolution_and_the_matmul_get_a_hand_written_kernel(cnn):
    _, compiled = cnn
    kernels = _kernels(compiled)
    dense = {name for name, kinds in kernels.items() if any(k == "conv" for k, _ in kinds)}
    grouped = {name for name, kinds in kernels.items() if any(k == "grouped conv" for k, _ in kinds)}
    matmuls = {name for name, kinds in kernels.items() if any(k.endswith("matmul") for k, _ in kinds)}
    assert len(dense) == 4 and len(matmuls) == 1, kernels
    for name in dense | matmuls:
        assert compiled.kernels[name].get("implementation", "").startswith("micro-kernel"), (name, kernels[name])
    filters = {tuple(s) for name in dense for k, s in kernels[name] if k == "conv"}
    assert filters == {(7, 7, 3, 16), (3, 3, 16, 16), (1, 1, 16, 32)}, filters   # NHWC x HWIO
    dilated = [compiled.kernels[n]["implementation"] for n in dense if "9 filter pixels" in
               compiled.kernels[n].get("implementation", "")]
    assert len(dilated) == 1   # the dilated 3x3: one tap per filter pixel
    # The depthwise 3x3 and the grouped 1x1 run on the direct kernel (grouped_conv.py).
    assert len(grouped) == 2
    assert sorted(compiled.kernels[n]["implementation"].split(" convolution")[0] for n in grouped) == \
        ["direct kernel: depthwise", "direct kernel: grouped (2 groups)"]


def test_transposes_cancel_between_convolutions_and_fold_into_the_filters(cnn):
    """What is left of the layout change: the image into NHWC, the last feature map out of it (a
    filter packed at compile time is unpacked by a transpose in its kernel's IR, which says what its
    layout means: the micro-kernel reads the packed filter in place and moves nothing)."""
    _, compiled = cnn
    transposes = [name for name, kinds in _kernels(compiled).items() if ("linalg.transpose", None) in kinds
                  and "B packed at compile time" not in compiled.kernels[name].get("implementation", "")]
    assert len(transposes) <= 2, transposes
