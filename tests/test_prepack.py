"""Constant weights packed at compile time (compiler/prepack.py, packed_weights.py) and the GEMV
kernel for one row of A (compiler/gemv.py): the same numbers as numpy and the reference device,
with B a constant (packed in the module) and with B an argument (read as it comes), at the edges
(N not a multiple of 16, K odd, one row, batches), and no per-call packing of a constant."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.compiler import ukernels
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.gemv import GROUP
from mlirtext.compiler.module_writer import pack
from mlirtext.compiler.packed_weights import pack_panels
from mlirtext.compiler.ukernels import kernel_ir, plan_kernel
from mlirtext.vm.modfile import read_module_file

DEVICES = ("local-sync", "local-task", "reference")


def _ints(rng, *shape):
    return rng.integers(-3, 4, shape).astype(np.float32)


def _literal(a: np.ndarray) -> str:
    return "dense<" + np.array2string(a, separator=", ", threshold=1 << 30).replace("\n", "") + ">"


def _matmul(a_shape, b_shape, weight=None, transposed=False, epilogue: str = "", extra: str = "") -> str:
    """@mm(a[, b]) = a @ B, B the constant `weight` (given as B^T when `transposed`) or the argument b;
    a leading batch axis when the shapes have three."""
    a_t = f"tensor<{'x'.join(map(str, a_shape))}xf32>"
    b_t = f"tensor<{'x'.join(map(str, b_shape))}xf32>"
    batched = len(a_shape) == 3
    out_shape = (*a_shape[:-1], b_shape[-1])
    o_t = f"tensor<{'x'.join(map(str, out_shape))}xf32>"
    dims = "batching_dims = [0] x [0], contracting_dims = [2] x [1]" if batched else "contracting_dims = [1] x [0]"
    lines = []
    if weight is not None and transposed:
        wt = f"tensor<{'x'.join(map(str, weight.shape))}xf32>"
        perm = "[0, 2, 1]" if batched else "[1, 0]"
        lines += [f"  %wt = stablehlo.constant {_literal(weight)} : {wt}",
                  f"  %b = stablehlo.transpose %wt, dims = {perm} : ({wt}) -> {b_t}"]
    elif weight is not None:
        lines.append(f"  %b = stablehlo.constant {_literal(weight)} : {b_t}")
    args = f"%a: {a_t}" + ("" if weight is not None else f", %b: {b_t}") + extra
    lines.append(f"  %0 = stablehlo.dot_general %a, %b, {dims} : ({a_t}, {b_t}) -> {o_t}")
    body = "\n".join(lines) + "\n" + (epilogue.format(o=o_t, n=b_shape[-1]) or f"  return %0 : {o_t}\n")
    return f"func.func @mm({args}) -> {o_t} {{\n{body}}}"


def _implementations(data: bytes) -> list[str]:
    return [k.get("implementation", "") for k in read_module_file(data).manifest["kernels"].values()]


SIZES = [(1, 7, 33), (1, 64, 16), (1, 33, 2 * GROUP * 16 + 5), (3, 5, 40), (13, 301, 40), (37, 64, 128)]


@pytest.mark.parametrize("m,k,n", SIZES)
@pytest.mark.parametrize("width", [8, 16])
def test_packed_and_unpacked_b_give_numpys_numbers(m, k, n, width, monkeypatch):
    """B a constant (packed at compile time, read in place) and B an argument (read as it comes, or
    copied per call): integer-valued inputs, so every order of summation gives numpy's bits; one row
    of A runs the GEMV kernel either way. Both vector widths, whatever the host."""
    monkeypatch.setattr(ukernels, "host_vector_floats", lambda: width)
    rng = np.random.default_rng(m * 1000 + k + n)
    a, b = _ints(rng, m, k), _ints(rng, k, n)
    packed = runtime.compile_text(_matmul(a.shape, b.shape, weight=b))
    plain = runtime.compile_text(_matmul(a.shape, b.shape))
    (impl_packed,), (impl_plain,) = _implementations(packed), _implementations(plain)
    assert "B packed at compile time" in impl_packed and "B packed at compile time" not in impl_plain
    assert ("GEMV" in impl_packed) == ("GEMV" in impl_plain) == (m == 1)
    for device in DEVICES:
        assert np.array_equal(runtime.load_module(packed, device=device).mm(a), a @ b), device
        assert np.array_equal(runtime.load_module(plain, device=device).mm(a, b), a @ b), device


@pytest.mark.parametrize("batch,m,k,n", [(2, 1, 9, 40), (3, 1, 16, 2 * GROUP * 16), (2, 5, 17, 20), (2, 14, 8, 16),
                                         (2, 25, 8, 96)])   # (32-column tiles on AVX-512: two panels each)
def test_a_batch_of_constant_weights_is_packed_per_batch(batch, m, k, n):
    """batch_matmul with a constant B per batch: each batch's panels packed; GEMV workgroups are
    whole batches when a row is not whole groups of panels."""
    rng = np.random.default_rng(batch + m + n)
    a, b = _ints(rng, batch, m, k), _ints(rng, batch, k, n)
    data = runtime.compile_text(_matmul(a.shape, b.shape, weight=b))
    (impl,) = _implementations(data)
    assert "B packed at compile time" in impl and ("GEMV" in impl) == (m == 1)
    for device in DEVICES:
        assert np.array_equal(runtime.load_module(data, device=device).mm(a), a @ b), device


@pytest.mark.parametrize("m,k,n", [(1, 1024, 1000), (20, 24, 100)])
def test_a_transposed_constant_weight_is_packed_once_with_no_transpose_and_no_copy(m, k, n):
    """A PyTorch Linear (x @ W^T, W constant): one kernel, the weight stored once and packed, and
    the kernel copies nothing per call (no stack buffer for a block of B)."""
    rng = np.random.default_rng(9)
    w = _ints(rng, n, k)
    text = _matmul((m, k), (k, n), weight=w, transposed=True)
    compiled = compile_source(text, "linear.mlir")
    (name, kernel), = [(op.sym_name, op) for op in compiled.reference_kernels.regions[0].blocks[0].ops
                       if op.name == "func.func"]
    plan = plan_kernel(kernel)
    assert plan.b_packed and not plan.b_transposed
    assert "alloca" not in kernel_ir(name, plan)   # (the per-call copy of a block of B lives in an alloca)
    (weight,) = compiled.constants.values()
    assert np.array_equal(weight, pack_panels(w.T[None]))   # (a batch of one: dot_general's batch_matmul)
    data = pack(compiled)
    x = _ints(rng, m, k)
    for device in DEVICES:
        assert np.array_equal(runtime.load_module(data, device=device).mm(x), x @ w.T), device


def test_a_weight_the_host_also_returns_is_packed_beside_it():
    """A constant B that the function returns as well stays as it is for that, and the matmul
    still gets it packed."""
    rng = np.random.default_rng(10)
    a, b = _ints(rng, 1, 12), _ints(rng, 12, 20)
    t = "tensor<12x20xf32>"
    text = f"""func.func @mm(%a: tensor<1x12xf32>) -> (tensor<1x20xf32>, {t}) {{
  %b = stablehlo.constant {_literal(b)} : {t}
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<1x12xf32>, {t}) -> tensor<1x20xf32>
  return %0, %b : tensor<1x20xf32>, {t}
}}"""
    compiled = compile_source(text, "t.mlir")
    assert sorted(c.shape for c in compiled.constants.values()) == [(1, 2, 12, 16), (12, 20)]
    for device in DEVICES:
        got, weight = runtime.load_module(pack(compiled), device=device).mm(a)
        assert np.array_equal(got, a @ b) and np.array_equal(weight, b), device


@pytest.mark.parametrize("m", [1, 6])
@pytest.mark.parametrize("width", [8, 16])
def test_bias_relu_and_residual_epilogues_on_packed_weights(m, width, monkeypatch):
    """The epilogue (a bias by column, a residual at C's place, a relu) runs in the GEMV kernel and
    in the micro-kernel on a packed B, masked past N."""
    monkeypatch.setattr(ukernels, "host_vector_floats", lambda: width)
    k, n = 11, 2 * GROUP * 16 + 3 if m == 1 else 35
    rng = np.random.default_rng(11)
    a, b, bias, res = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, n), _ints(rng, m, n)
    epilogue = """  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {o}
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<{n}xf32>) -> {o}
  %1 = stablehlo.add %0, %bb : {o}
  %2 = stablehlo.add %1, %res : {o}
  %3 = stablehlo.maximum %2, %z : {o}
  return %3 : {o}
"""
    data = runtime.compile_text(_matmul(a.shape, b.shape, weight=b, epilogue=epilogue,
                                        extra=f", %bias: tensor<{n}xf32>, %res: tensor<{m}x{n}xf32>"))
    (impl,) = _implementations(data)
    assert "B packed at compile time" in impl and impl.endswith("epilogue") and ("GEMV" in impl) == (m == 1)
    want = np.maximum(a @ b + bias + res, 0)
    for device in DEVICES:
        assert np.array_equal(runtime.load_module(data, device=device).mm(a, bias, res), want), device


def test_random_floats_within_the_bound_of_an_f32_dot_in_the_gemv_kernel():
    """Sums in k order with FMA: within K * 2^-24 * sum |a_k b_kj| of the exact dot."""
    k, n = 1024, 1000
    rng = np.random.default_rng(12)
    a = rng.standard_normal((1, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    data = runtime.compile_text(_matmul(a.shape, b.shape, weight=b))
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = k * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    for device in DEVICES:
        got = runtime.load_module(data, device=device).mm(a)
        assert (np.abs(got - exact) <= bound).all(), device


def _conv(x_shape, f: np.ndarray, stride: int, dilation: int = 1, as_argument: bool = False) -> str:
    """@conv(x[, w]) = relu(NHWC convolution of x by the HWIO filter: the constant `f`, or the argument w)."""
    n, h, w, ic = x_shape
    kh, kw, _, oc = f.shape
    oh, ow = (h - dilation * (kh - 1) - 1) // stride + 1, (w - dilation * (kw - 1) - 1) // stride + 1
    x_t, f_t = f"tensor<{n}x{h}x{w}x{ic}xf32>", f"tensor<{kh}x{kw}x{ic}x{oc}xf32>"
    o_t = f"tensor<{n}x{oh}x{ow}x{oc}xf32>"
    weight = "" if as_argument else f"  %w = stablehlo.constant {_literal(f)} : {f_t}\n"
    return f"""func.func @conv(%x: {x_t}{f', %w: {f_t}' if as_argument else ''}) -> {o_t} {{
{weight}  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], \
window = {{stride = [{stride}, {stride}], rhs_dilate = [{dilation}, {dilation}]}} \
{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({x_t}, {f_t}) -> {o_t}
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {o_t}
  %1 = stablehlo.maximum %0, %z : {o_t}
  return %1 : {o_t}
}}"""


@pytest.mark.parametrize("h,ic,oc,k,stride,dilation", [(7, 8, 24, 1, 1, 1), (9, 5, 16, 3, 1, 1), (11, 3, 40, 3, 2, 1),
                                                       (10, 4, 16, 2, 1, 2), (9, 5, 64, 3, 1, 1)])
def test_a_constant_filter_is_packed_for_the_implicit_gemm(h, ic, oc, k, stride, dilation):
    """A convolution's constant HWIO filter is packed as its (KH * KW * IC) x OC matrix: filter rows
    (or, dilated, filter pixels) are taps reading their rows of each panel in place; the same bits
    as the filter given as an argument and as the reference."""
    rng = np.random.default_rng(h * 100 + oc)
    x, f = _ints(rng, 2, h, h, ic), _ints(rng, k, k, ic, oc)
    packed = runtime.compile_text(_conv(x.shape, f, stride, dilation))
    plain = runtime.compile_text(_conv(x.shape, f, stride, dilation, as_argument=True))
    impl = [i for i in _implementations(packed) if "convolution" in i]
    assert len(impl) == 1 and "B packed at compile time" in impl[0], _implementations(packed)
    assert not any("B packed at compile time" in i for i in _implementations(plain))
    want = runtime.load_module(plain, device="reference").conv(x, f)
    for device in DEVICES:
        assert np.array_equal(runtime.load_module(packed, device=device).conv(x), want), device
        assert np.array_equal(runtime.load_module(plain, device=device).conv(x, f), want), device


def test_a_splat_weight_stays_one_value():
    """A constant B with one value everywhere is stored as that value (packed, it would be every one):
    the matmul reads it as it comes."""
    data = runtime.compile_text(_matmul((3, 8), (8, 20), weight=np.full((8, 20), 0.5, np.float32)))
    (impl,) = _implementations(data)
    assert "B packed at compile time" not in impl
    constants = read_module_file(data).manifest["constants"]
    assert [c.get("splat", False) for c in constants.values()] == [True]
    a = _ints(np.random.default_rng(13), 3, 8)
    assert np.array_equal(runtime.load_module(data, device="local-sync").mm(a), a @ np.full((8, 20), 0.5, np.float32))


def _stem(n: int, h: int, ic: int, oc: int, k: int, stride: int, pad: int, f: np.ndarray, pool: bool) -> tuple[str, list]:
    """@f(x, b) = relu(conv(x, the constant filter f) + b), then (`pool`) a 3x3 stride-2 max pool
    padded with -inf, as ResNet's stem; the argument shapes."""
    o = (h + 2 * pad - k) // stride + 1
    po = (o + 2 - 3) // 2 + 1
    t = lambda s: "tensor<" + "x".join(map(str, s)) + "xf32>"  # noqa: E731
    xs, ws, ys, ps = (n, h, h, ic), (k, k, ic, oc), (n, o, o, oc), (n, po, po, oc)
    lines = [f"func.func @f(%x: {t(xs)}, %b: {t((oc,))}) -> {t(ps if pool else ys)} {{",
             f'  %w = stablehlo.constant dense<"0x{f.tobytes().hex().upper()}"> : {t(ws)}',
             f"  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], "
             f"window = {{stride = [{stride}, {stride}], pad = [[{pad}, {pad}], [{pad}, {pad}]]}} "
             f"{{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({t(xs)}, {t(ws)}) -> {t(ys)}",
             f"  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : ({t((oc,))}) -> {t(ys)}",
             f"  %a = stablehlo.add %c, %bb : {t(ys)}", "  %zero = stablehlo.constant dense<0.0> : tensor<f32>",
             f"  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t(ys)}",
             f"  %r = stablehlo.maximum %a, %z : {t(ys)}"]
    if pool:
        lines += ["  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>",
                  '  %p = "stablehlo.reduce_window"(%r, %ninf) <{window_dimensions = array<i64: 1, 3, 3, 1>, '
                  "window_strides = array<i64: 1, 2, 2, 1>, padding = dense<[[0, 0], [1, 1], [1, 1], [0, 0]]> : "
                  "tensor<4x2xi64>}> ({", "  ^bb0(%u: tensor<f32>, %v: tensor<f32>):",
                  "    %m = stablehlo.maximum %u, %v : tensor<f32>", "    stablehlo.return %m : tensor<f32>",
                  f"  }}) : ({t(ys)}, tensor<f32>) -> {t(ps)}"]
    lines += [f"  return {'%p' if pool else '%r'} : {t(ps if pool else ys)}", "}"]
    return "\n".join(lines) + "\n", [xs, (oc,)]


@pytest.mark.parametrize("n,h,ic,oc,k,stride,pad,pool,inner", [
    (1, 32, 3, 64, 7, 2, 3, True, True),     # ResNet's stem: 7 filter rows of 21 floats, into the pool's padded buffer
    (2, 13, 3, 24, 3, 2, 1, False, True),    # two images, 24 channels (the last panel masked), a 3x3 stride-2 stem
    (1, 11, 1, 16, 5, 1, 2, False, True),    # one input channel: filter rows of 5 floats
    (1, 9, 64, 64, 3, 1, 1, False, False),   # a filter panel over L1 (3 x 192 rows): the taps stay the outer loop
])
def test_a_small_constant_filter_sums_its_taps_in_registers(n, h, ic, oc, k, stride, pad, pool, inner):
    """A filter of few input channels (a CNN's first convolution) whose packed panel fits in L1
    sums every filter row into the register tile before the tile is stored (`MatmulPlan.inner_taps`),
    with the epilogue and a padded result; the same numbers as the interpreter."""
    from .compiled_checks import compiled_and_checked
    f = np.random.default_rng(h * 10 + ic).standard_normal((k, k, ic, oc), dtype=np.float32)
    text, shapes = _stem(n, h, ic, oc, k, stride, pad, f, pool)
    _, kernels = compiled_and_checked(text, shapes)
    conv = [k["implementation"] for k in kernels.values() if "convolution" in k.get("implementation", "")]
    assert len(conv) == 1 and "B packed at compile time" in conv[0], kernels
    assert ("taps summed in registers" in conv[0]) == inner, conv[0]
    assert ("of -inf" in conv[0]) == pool, conv[0]
