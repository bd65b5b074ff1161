"""The matmul micro-kernel (packed panels, register tiles, k blocks) and its fused epilogues."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.vm.modfile import read_module_file
from mlirtext.compiler import ukernels
from mlirtext.compiler.ukernels import DESCRIPTION, KC, ROW_TILES, WIDE_ROW_TILES, host_tile_columns, host_tiles

from .test_vm_programs import ROOT


def _kernels(data: bytes) -> dict:
    return read_module_file(data).manifest["kernels"]


def _mm_text(m: int, n: int, k: int, epilogue: str = "", extra_args: str = "") -> str:
    return f"""func.func @mm(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>{extra_args}) -> tensor<{m}x{n}xf32> {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<{m}x{k}xf32>, tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>
{epilogue}}}"""


def _ints(rng, *shape):
    return rng.integers(-3, 4, shape).astype(np.float32)


@pytest.mark.parametrize("m,n,k", [(3, 32, 5), (13, 48, KC + 44), (ROW_TILES[0] + 1, 16, 2 * KC),
                                   (WIDE_ROW_TILES[0] + 1, 32, KC + 8)])
@pytest.mark.parametrize("width", [8, 16])
def test_unpacked_packed_and_blocked_k_are_exact(m, n, k, width, monkeypatch):
    """M up to one row tile reads B in place, more rows pack it; K over KC runs in blocks that
    carry the sums through C. Integer-valued inputs: every order of summation gives the same bits.
    Both kernels, whatever the host: 8-float vectors in 6x16 tiles and 16-float ones in 12x16 (a
    host without AVX-512 runs them as pairs of 8)."""
    monkeypatch.setattr(ukernels, "host_vector_floats", lambda: width)
    data = runtime.compile_text(_mm_text(m, n, k, "  return %0 : tensor<{m}x{n}xf32>\n".format(m=m, n=n)))
    rng = np.random.default_rng(1)
    a, b = _ints(rng, m, k), _ints(rng, k, n)
    for device in ("local-sync", "local-task"):
        assert np.array_equal(runtime.load_module(data, device=device).mm(a, b), a @ b)


def test_random_floats_within_the_bound_of_an_f32_dot():
    """Sums in k order with FMA: each element is within K * 2^-24 * sum |a_ik b_kj| of the exact dot
    (the forward error bound of recursive summation); the reference device agrees as closely."""
    m, n, k = 37, 64, 512
    data = runtime.compile_text(_mm_text(m, n, k, f"  return %0 : tensor<{m}x{n}xf32>\n"))
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = k * 2.0 ** -24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64))
    for device in ("local-sync", "local-task", "reference"):
        got = runtime.load_module(data, device=device).mm(a, b)
        assert (np.abs(got - exact) <= bound).all(), device


def test_mlp_bias_and_relu_run_as_the_matmul_epilogue():
    data = runtime.compile_file(str(ROOT / "benchmarks" / "programs" / "mlp.mlir"))
    kernels = _kernels(data)
    assert len(kernels) == 2   # two matmuls, each with its bias and relu: no elementwise kernels
    for k in kernels.values():
        assert k["implementation"].endswith("addf+maximumf epilogue")
        assert len(k["inputs"]) == 3
    rng = np.random.default_rng(3)
    x, w1, b1, w2, b2 = _ints(rng, 64, 512), _ints(rng, 512, 512), _ints(rng, 512), _ints(rng, 512, 512), \
        _ints(rng, 512)
    w1 /= 8
    w2 /= 64   # (keeps the second layer's integers below 2^24: exact in any order)
    want = np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0)
    for device in ("local-sync", "local-task", "reference"):
        assert np.array_equal(runtime.load_module(data, device=device).main(x, w1, b1, w2, b2), want), device


@pytest.mark.parametrize("width", [8, 16])
def test_epilogue_keeps_nan_and_constants_as_the_reference_does(width, monkeypatch):
    """maximumf propagates NaN (a NaN bias stays NaN after the relu); scale and offset constants;
    on 8- and 16-float vectors."""
    monkeypatch.setattr(ukernels, "host_vector_floats", lambda: width)
    m, n, k = 8, 32, 4
    t = f"tensor<{m}x{n}xf32>"
    epilogue = f"""  %half = stablehlo.constant dense<0.5> : tensor<f32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.broadcast_in_dim %half, dims = [] : (tensor<f32>) -> {t}
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {t}
  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<{n}xf32>) -> {t}
  %1 = stablehlo.add %0, %bb : {t}
  %2 = stablehlo.multiply %1, %s : {t}
  %3 = stablehlo.maximum %2, %z : {t}
  return %3 : {t}
"""
    data = runtime.compile_text(_mm_text(m, n, k, epilogue, f", %bias: tensor<{n}xf32>"))
    assert len(_kernels(data)) == 1
    rng = np.random.default_rng(4)
    a, b, bias = _ints(rng, m, k), _ints(rng, k, n), _ints(rng, n)
    bias[3] = np.nan
    want = np.maximum((a @ b + bias) * np.float32(0.5), 0)
    for device in ("local-sync", "local-task", "reference"):
        got = runtime.load_module(data, device=device).mm(a, b, bias)
        assert np.array_equal(got, want, equal_nan=True), device
        assert np.isnan(got[:, 3]).all()


def test_a_consumer_the_micro_kernel_cannot_take_stays_a_kernel_of_its_own():
    m, n, k = 8, 32, 4
    t = f"tensor<{m}x{n}xf32>"
    # (a sine: the CPU keeps its libm call, which has no vector form in the epilogue)
    data = runtime.compile_text(_mm_text(m, n, k, f"  %1 = stablehlo.sine %0 : {t}\n  return %1 : {t}\n"))
    kernels = _kernels(data)
    assert len(kernels) == 2
    assert sum("micro-kernel" in k.get("implementation", "") for k in kernels.values()) == 1
    rng = np.random.default_rng(5)
    a, b = _ints(rng, m, k), _ints(rng, k, n)
    got = runtime.load_module(data, device="local-sync").mm(a, b)
    assert np.allclose(got, np.sin(a @ b), rtol=1e-6, atol=1e-6)


def test_workgroups_are_panels_shared_by_the_threads():
    data = runtime.compile_file(str(ROOT / "benchmarks" / "programs" / "mlp.mlir"))
    tiles = 512 // host_tile_columns(512)   # (32 or 16 columns each)
    assert {k["workgroups"]["count"] for k in _kernels(data).values()} == {tiles}
    module = runtime.load_module(data, device="local-task").vm_module
    workers = module.device.workers
    if workers < 2:
        pytest.skip("one CPU: nothing to share")
    for grain in module.functions["main"].grains:   # every thread can take some panels
        assert 1 <= grain and -(-tiles // grain) >= workers


def _conv_text(h: int, w: int, ic: int, oc: int, k: int, pad: int, stride: int = 1) -> str:
    oh, ow = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    x, f, o = f"tensor<2x{h}x{w}x{ic}xf32>", f"tensor<{k}x{k}x{ic}x{oc}xf32>", f"tensor<2x{oh}x{ow}x{oc}xf32>"
    return f"""func.func @conv(%x: {x}, %w: {f}, %bias: tensor<{oc}xf32>) -> {o} {{
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{stride = [{stride}, {stride}], pad = [[{pad}, {pad}], [{pad}, {pad}]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({x}, {f}) -> {o}
  %1 = stablehlo.broadcast_in_dim %bias, dims = [3] : (tensor<{oc}xf32>) -> {o}
  %2 = stablehlo.add %0, %1 : {o}
  %z = stablehlo.broadcast_in_dim %zero, dims = [] : (tensor<f32>) -> {o}
  %3 = stablehlo.maximum %2, %z : {o}
  return %3 : {o}
}}"""


@pytest.mark.parametrize("h,w,ic,oc,k,pad", [(9, 11, 5, 32, 3, 1), (6, 13, 70, 16, 2, 0), (5, 5, 3, 16, 1, 0)])
def test_convolution_runs_as_implicit_gemm_with_its_epilogue(h, w, ic, oc, k, pad):
    """Stride 1: the micro-kernel reads the (padded) input in place, one filter row per tap, and
    applies the bias and relu; integer-valued inputs give the reference's bits on every device."""
    data = runtime.compile_text(_conv_text(h, w, ic, oc, k, pad))
    kernels = _kernels(data)
    conv, = [k_ for k_ in kernels.values() if "micro-kernel" in k_.get("implementation", "")]
    assert conv["implementation"].startswith(f"micro-kernel: convolution f32 as implicit GEMM over {k} filter rows")
    assert conv["implementation"].endswith("addf+maximumf epilogue")
    rng = np.random.default_rng(6)
    args = [_ints(rng, 2, h, w, ic), _ints(rng, k, k, ic, oc), _ints(rng, oc)]
    want = runtime.load_module(data, device="reference").conv(*args)
    for device in ("local-sync", "local-task"):
        assert np.array_equal(runtime.load_module(data, device=device).conv(*args), want), device


@pytest.mark.parametrize("h,k,stride", [(9, 3, 2), (12, 1, 2), (15, 7, 3)])
def test_a_strided_convolution_runs_as_implicit_gemm(h, k, stride):
    """A stride steps the rows of A (and the taps' input rows) further: still the micro-kernel,
    with its epilogue, and the reference's bits."""
    data = runtime.compile_text(_conv_text(h, h, 4, 16, k, k // 2, stride=stride))
    conv, = [k_ for k_ in _kernels(data).values() if "micro-kernel" in k_.get("implementation", "")]
    assert conv["implementation"].endswith("addf+maximumf epilogue")
    rng = np.random.default_rng(7)
    args = [_ints(rng, 2, h, h, 4), _ints(rng, k, k, 4, 16), _ints(rng, 16)]
    want = runtime.load_module(data, device="reference").conv(*args)
    for device in ("local-sync", "local-task"):
        assert np.array_equal(runtime.load_module(data, device=device).conv(*args), want), device


@pytest.mark.parametrize("batch,m,n,k", [(2, 3, 32, 16), (3, 13, 48, KC + 56), (1, 40, 16, 8)])
def test_a_transposed_b_is_read_in_place_while_packed(batch, m, n, k):
    """q @ k^T (attention's scores): the transpose is no dispatch of its own; the micro-kernel
    transposes 8 x 8 blocks of B^T as it packs them (M up to one row tile packs too), over blocks
    of k. Integer-valued inputs: exact."""
    q, kt, s = f"tensor<{batch}x{m}x{k}xf32>", f"tensor<{batch}x{n}x{k}xf32>", f"tensor<{batch}x{m}x{n}xf32>"
    text = f"""func.func @scores(%q: {q}, %k: {kt}) -> {s} {{
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : ({q}, {kt}) -> {s}
  return %0 : {s}
}}"""
    data = runtime.compile_text(text)
    kernels = _kernels(data)
    assert [k_.get("implementation", "") for k_ in kernels.values()] == [DESCRIPTION + ", " + host_tiles() + ", B transposed while packed"]
    rng = np.random.default_rng(2)
    a, b = _ints(rng, batch, m, k), _ints(rng, batch, n, k)
    for device in ("local-sync", "local-task"):
        assert np.array_equal(runtime.load_module(data, device=device).scores(a, b), a @ b.transpose(0, 2, 1))


def test_a_transpose_the_micro_kernel_cannot_read_stays_a_dispatch():
    """K not a multiple of 8 (the packing transposes 8 x 8 blocks): the transpose keeps its own
    dispatch, and the result is the same."""
    q, kt, s = "tensor<2x10x12xf32>", "tensor<2x16x12xf32>", "tensor<2x10x16xf32>"
    text = f"""func.func @scores(%q: {q}, %k: {kt}) -> {s} {{
  %0 = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] : ({q}, {kt}) -> {s}
  return %0 : {s}
}}"""
    data = runtime.compile_text(text)
    assert len(_kernels(data)) == 2
    rng = np.random.default_rng(3)
    a, b = _ints(rng, 2, 10, 12), _ints(rng, 2, 16, 12)
    assert np.array_equal(runtime.load_module(data, device="local-sync").scores(a, b), a @ b.transpose(0, 2, 1))
