"""Reference-interpreter semantics of the structured StableHLO ops (dot_general, convolution,
reduce, reduce_window, select_and_scatter, gather, scatter, sort, fft, linear algebra),
checked against naive per-element implementations written from the spec's formulas,
and (marked `oracle`) against iree-compile + iree-run-module on the same inputs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter

from .oracle import iree_compile, iree_run

RNG = np.random.default_rng(7)


def run(program: str, name: str, *args):
    module = parse_and_verify(program).module
    return Interpreter(module).call(name, list(args))


def ttype(a: np.ndarray, elem: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in a.shape) + elem + ">"


def ttype_shape(shape, elem: str) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


# ---- dot_general ---------------------------------------------------------------------
def test_dot_general_batch_and_contracting_dims_in_any_position():
    a = RNG.standard_normal((3, 4, 2, 5)).astype(np.float32)   # contract 1 & 3, batch 2
    b = RNG.standard_normal((5, 2, 6, 4)).astype(np.float32)   # contract 3 & 0, batch 1
    prog = f"""
func.func @f(%a: {ttype(a, 'f32')}, %b: {ttype(b, 'f32')}) -> tensor<2x3x6xf32> {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = [2] x [1], contracting_dims = [1, 3] x [3, 0] : ({ttype(a, 'f32')}, {ttype(b, 'f32')}) -> tensor<2x3x6xf32>
  return %0 : tensor<2x3x6xf32>
}}"""
    (out,) = run(prog, "f", a, b)
    np.testing.assert_allclose(out, np.einsum("ikbl,lbjk->bij", a, b), rtol=1e-5)


def test_dot_general_int8_accumulates_wide_into_i32():
    a = np.full((2, 64), 100, np.int8)
    b = np.full((64, 3), 100, np.int8)
    prog = """
func.func @f(%a: tensor<2x64xi8>, %b: tensor<64x3xi8>) -> tensor<2x3xi32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x64xi8>, tensor<64x3xi8>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}"""
    (out,) = run(prog, "f", a, b)
    assert out.dtype == np.int32 and (out == 640000).all()


def test_dot_i32_wraps_on_overflow():
    a = np.array([[2 ** 30, 2 ** 30]], np.int32)
    b = np.array([[2], [2]], np.int32)
    prog = """
func.func @f(%a: tensor<1x2xi32>, %b: tensor<2x1xi32>) -> tensor<1x1xi32> {
  %0 = "stablehlo.dot"(%a, %b) : (tensor<1x2xi32>, tensor<2x1xi32>) -> tensor<1x1xi32>
  return %0 : tensor<1x1xi32>
}"""
    (out,) = run(prog, "f", a, b)
    assert out.tolist() == [[0]]  # 2^32 wraps to 0


# ---- convolution ---------------------------------------------------------------------
def naive_conv(x, w, strides, pads, lhs_dil, rhs_dil, reverse, fgc, bgc):
    """x: N C H W, w: O I KH KW; straight from the spec's definition, one output at a time."""
    N, C, H, W = x.shape
    O, I, KH, KW = w.shape
    w = w.copy()
    for ax, r in enumerate(reverse):
        if r:
            w = np.flip(w, axis=2 + ax)
    xd = np.zeros((N, C, (H - 1) * lhs_dil[0] + 1, (W - 1) * lhs_dil[1] + 1), x.dtype)
    xd[:, :, ::lhs_dil[0], ::lhs_dil[1]] = x
    (pl0, ph0), (pl1, ph1) = pads
    xp = np.pad(xd, ((0, 0), (0, 0), (max(pl0, 0), max(ph0, 0)), (max(pl1, 0), max(ph1, 0))))
    xp = xp[:, :, max(-pl0, 0):xp.shape[2] - max(-ph0, 0), max(-pl1, 0):xp.shape[3] - max(-ph1, 0)]
    ekh, ekw = (KH - 1) * rhs_dil[0] + 1, (KW - 1) * rhs_dil[1] + 1
    OH = (xp.shape[2] - ekh) // strides[0] + 1
    OW = (xp.shape[3] - ekw) // strides[1] + 1
    out = np.zeros((N // bgc, O, OH, OW), np.float64)
    for n, o, i, j in itertools.product(range(N // bgc), range(O), range(OH), range(OW)):
        if bgc > 1:
            g = o // (O // bgc)
            nn, chans = g * (N // bgc) + n, range(C)
        else:
            g = o // (O // fgc)
            nn, chans = n, range(g * (C // fgc), (g + 1) * (C // fgc))
        acc = 0.0
        for ci, c in enumerate(chans):
            patch = xp[nn, c, i * strides[0]:i * strides[0] + ekh:rhs_dil[0], j * strides[1]:j * strides[1] + ekw:rhs_dil[1]]
            acc += float((patch * w[o, ci]).sum())
        out[n, o, i, j] = acc
    return out


CONV_CASES = [
    # (N, C, H, W, O, KH, KW, strides, pads, lhs_dil, rhs_dil, reverse, fgc, bgc)
    (1, 3, 6, 5, 4, 3, 2, [1, 1], [(0, 0), (0, 0)], [1, 1], [1, 1], [False, False], 1, 1),
    (2, 4, 7, 6, 4, 3, 3, [2, 1], [(1, 2), (2, 0)], [1, 2], [2, 1], [True, False], 2, 1),
    (4, 2, 5, 5, 6, 2, 2, [1, 2], [(-1, 1), (1, -1)], [2, 1], [1, 2], [False, True], 1, 2),
    (1, 4, 5, 4, 4, 3, 1, [1, 1], [(1, 1), (0, 0)], [1, 1], [1, 1], [False, False], 4, 1),
]


@pytest.mark.parametrize("case", CONV_CASES)
@pytest.mark.parametrize("layout", ["nchw", "nhwc", "odd"])
def test_convolution_matches_the_spec_formula(case, layout):
    N, C, H, W, O, KH, KW, strides, pads, ld, rd, rev, fgc, bgc = case
    x = RNG.integers(-3, 4, (N, C, H, W)).astype(np.float32)
    w = RNG.integers(-3, 4, (O, C // fgc, KH, KW)).astype(np.float32)
    want = naive_conv(x, w, strides, pads, ld, rd, rev, fgc, bgc)   # N O OH OW
    # each layout: (dim_numbers text, lhs perm from NCHW, rhs perm from OIHW, out perm from NOHW)
    layouts = {
        "nchw": ("[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", (0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3)),
        "nhwc": ("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]", (0, 2, 3, 1), (2, 3, 1, 0), (0, 2, 3, 1)),
        "odd": ("[f, 1, b, 0]x[1, o, 0, i]->[1, b, f, 0]", (1, 3, 0, 2), (3, 0, 2, 1), (3, 0, 1, 2)),
    }
    dims, lp, rp, op_ = layouts[layout]
    xl, wl, wantl = x.transpose(lp), w.transpose(rp), want.transpose(op_)
    pad_text = "[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in pads) + "]"
    rev_text = "[" + ", ".join("true" if r else "false" for r in rev) + "]"
    prog = f"""
func.func @f(%x: {ttype(xl, 'f32')}, %w: {ttype(wl, 'f32')}) -> {ttype(wantl, 'f32')} {{
  %0 = stablehlo.convolution(%x, %w) dim_numbers = {dims}, window = {{stride = {strides}, pad = {pad_text}, lhs_dilate = {ld}, rhs_dilate = {rd}, reverse = {rev_text}}} {{batch_group_count = {bgc} : i64, feature_group_count = {fgc} : i64}} : ({ttype(xl, 'f32')}, {ttype(wl, 'f32')}) -> {ttype(wantl, 'f32')}
  return %0 : {ttype(wantl, 'f32')}
}}"""
    (out,) = run(prog, "f", xl, wl)
    np.testing.assert_array_equal(out, wantl.astype(np.float32))


def test_convolution_int8_accumulates_into_i32():
    x = np.full((1, 4, 4, 8), 127, np.int8)
    w = np.full((3, 3, 8, 2), 127, np.int8)
    prog = """
func.func @f(%x: tensor<1x4x4x8xi8>, %w: tensor<3x3x8x2xi8>) -> tensor<1x2x2x2xi32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x4x4x8xi8>, tensor<3x3x8x2xi8>) -> tensor<1x2x2x2xi32>
  return %0 : tensor<1x2x2x2xi32>
}"""
    (out,) = run(prog, "f", x, w)
    assert (out == 127 * 127 * 72).all()


# ---- reduce ------------------------------------------------------------------------------
def test_reduce_max_propagates_nan_and_empty_reduce_gives_init():
    x = np.array([[1.0, np.nan, 3.0], [-1.0, -2.0, -3.0]], np.float32)
    prog = """
func.func @f(%x: tensor<2x3xf32>, %e: tensor<0x3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %five = stablehlo.constant dense<5.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = stablehlo.reduce(%e init: %five) applies stablehlo.add across dimensions = [0] : (tensor<0x3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<2xf32>, tensor<3xf32>
}"""
    m, e = run(prog, "f", x, np.zeros((0, 3), np.float32))
    assert np.isnan(m[0]) and m[1] == -1.0
    assert e.tolist() == [5.0, 5.0, 5.0]


def test_reduce_i8_add_wraps_and_init_counts_once():
    x = np.full((4, 100), 1, np.int8)
    prog = """
func.func @f(%x: tensor<4x100xi8>) -> tensor<4xi8> {
  %c = stablehlo.constant dense<100> : tensor<i8>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<4x100xi8>, tensor<i8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}"""
    (out,) = run(prog, "f", x)
    assert out.tolist() == [-56] * 4   # 200 wraps in i8


ARGMAX = """
func.func @f(%x: tensor<3x5xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %iota = stablehlo.iota dim = 1 : tensor<3x5xi32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%x init: %ninf), (%iota init: %zero) across dimensions = [1] : (tensor<3x5xf32>, tensor<3x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
    reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %eq = stablehlo.compare EQ, %a, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %lt = stablehlo.compare LT, %b, %d : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %tie = stablehlo.and %eq, %lt : tensor<i1>
      %pick = stablehlo.or %gt, %tie : tensor<i1>
      %v = stablehlo.select %pick, %a, %c : tensor<i1>, tensor<f32>
      %i = stablehlo.select %pick, %b, %d : tensor<i1>, tensor<i32>
      stablehlo.return %v, %i : tensor<f32>, tensor<i32>
    }
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xi32>
}"""


def test_variadic_reduce_runs_the_body_on_arrays_argmax_first_of_ties():
    x = np.array([[1, 5, 2, 5, 0], [7, 1, 1, 1, 1], [0, 0, 0, 0, 9]], np.float32)
    v, i = run(ARGMAX, "f", x)
    assert v.tolist() == [5, 7, 9] and i.tolist() == [1, 0, 4]


def test_reduce_window_with_dilations_and_padding_matches_naive():
    x = RNG.integers(-9, 9, (5, 6)).astype(np.float32)
    # window 2x3, strides 2x1, base dilations 2x1, window dilations 1x2, padding (1, 0), (2, 1)
    pads = [(1, 0), (2, 1)]
    xd = np.full(((5 - 1) * 2 + 1, 6), -np.inf, np.float32)
    xd[::2] = x
    xp = np.pad(xd, pads, constant_values=-np.inf)
    oh = (xp.shape[0] - 2) // 2 + 1
    ow = (xp.shape[1] - 5) // 1 + 1
    want = np.array([[xp[i * 2:i * 2 + 2, j:j + 5:2].max() for j in range(ow)] for i in range(oh)], np.float32)
    prog = f"""
func.func @f(%x: tensor<5x6xf32>) -> {ttype(want, 'f32')} {{
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %ninf) ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = stablehlo.maximum %a, %b : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }}) {{window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>, base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 1, 2>, padding = dense<[[1, 0], [2, 1]]> : tensor<2x2xi64>}} : (tensor<5x6xf32>, tensor<f32>) -> {ttype(want, 'f32')}
  return %0 : {ttype(want, 'f32')}
}}"""
    (out,) = run(prog, "f", x)
    np.testing.assert_array_equal(out, want)


def test_select_and_scatter_picks_first_max_and_adds():
    x = np.array([[1, 5, 5, 2], [3, 0, 5, 1]], np.float32)
    src = np.array([[10, 20]], np.float32)
    prog = """
func.func @f(%x: tensor<2x4xf32>, %s: tensor<1x2xf32>) -> tensor<2x4xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.select_and_scatter"(%x, %s, %zero) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
  }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %c : tensor<f32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 1, 1>} : (tensor<2x4xf32>, tensor<1x2xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}"""
    (out,) = run(prog, "f", x, src)
    want = np.zeros((2, 4), np.float32)
    want[0, 1] = 30   # both windows (cols 0..2 and 1..3) pick the first 5, at (0, 1)
    np.testing.assert_array_equal(out, want)


# ---- gather / scatter ----------------------------------------------------------------
def naive_gather(operand, indices, offset_dims, collapsed, op_batch, idx_batch, start_map, ivd, sizes):
    batch_rank = indices.ndim - (1 if ivd < indices.ndim else 0)
    kept = [d for d in range(operand.ndim) if d not in collapsed and d not in op_batch]
    out_rank = batch_rank + len(kept)
    batch_dims = [d for d in range(out_rank) if d not in offset_dims]
    bshape = [s for d, s in enumerate(indices.shape) if d != ivd]
    out_shape = [0] * out_rank
    for d, s in zip(batch_dims, bshape):
        out_shape[d] = s
    for d, k in zip(offset_dims, kept):
        out_shape[d] = sizes[k]
    out = np.zeros(out_shape, operand.dtype)
    for r in itertools.product(*[range(s) for s in out_shape]):
        bi = [r[d] for d in batch_dims]
        sl = list(bi)
        if ivd < indices.ndim:
            sl.insert(ivd, slice(None))
        start = np.atleast_1d(indices[tuple(sl)])
        full = [0] * operand.ndim
        for k, d in enumerate(start_map):
            full[d] = int(np.clip(start[k], 0, operand.shape[d] - sizes[d]))
        for do, di in zip(op_batch, idx_batch):
            full[do] = bi[di - (1 if di > ivd else 0)]
        for d, k in zip(offset_dims, kept):
            full[k] += r[d]
        out[r] = operand[tuple(full)]
    return out


def test_gather_with_batching_dims_and_clamping_matches_naive():
    operand = RNG.integers(0, 100, (2, 5, 4)).astype(np.int32)
    indices = RNG.integers(-2, 7, (3, 2, 2)).astype(np.int64)   # batch over 3 x (index vec) x 2? see ivd
    # index_vector_dim = 1 (size 2 vectors), indices batch dims are 0 and 2; dim 2 is the batching dim
    cfg = dict(offset_dims=[2], collapsed=[1], op_batch=[0], idx_batch=[2], start_map=[1, 2], ivd=1, sizes=[1, 1, 3])
    want = naive_gather(operand, indices, **cfg)
    prog = f"""
func.func @f(%x: tensor<2x5x4xi32>, %i: tensor<3x2x2xi64>) -> {ttype(want, 'i32')} {{
  %0 = "stablehlo.gather"(%x, %i) {{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [2], start_index_map = [1, 2], index_vector_dim = 1>, slice_sizes = array<i64: 1, 1, 3>}} : (tensor<2x5x4xi32>, tensor<3x2x2xi64>) -> {ttype(want, 'i32')}
  return %0 : {ttype(want, 'i32')}
}}"""
    (out,) = run(prog, "f", operand, indices)
    np.testing.assert_array_equal(out, want)


def test_gather_index_vector_dim_last_implicit():
    operand = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array([2, 0, 5, -1], np.int32)
    prog = """
func.func @f(%x: tensor<3x4xf32>, %i: tensor<4xi32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<3x4xf32>, tensor<4xi32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}"""
    (out,) = run(prog, "f", operand, indices)
    np.testing.assert_array_equal(out, operand[[2, 0, 2, 0]])  # clamped into range


def scatter_prog(body: str, elem: str = "f32") -> str:
    return f"""
func.func @f(%x: tensor<5x3x{elem}>, %i: tensor<4x1xi32>, %u: tensor<4x3x{elem}>) -> tensor<5x3x{elem}> {{
  %0 = "stablehlo.scatter"(%x, %i, %u) ({{
    ^bb0(%a: tensor<{elem}>, %b: tensor<{elem}>):
      {body}
  }}) {{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}} : (tensor<5x3x{elem}>, tensor<4x1xi32>, tensor<4x3x{elem}>) -> tensor<5x3x{elem}>
  return %0 : tensor<5x3x{elem}>
}}"""


def test_scatter_add_accumulates_duplicates_and_skips_out_of_bounds():
    x = np.ones((5, 3), np.float32)
    idx = np.array([[1], [1], [7], [-1]], np.int32)
    u = np.arange(12, dtype=np.float32).reshape(4, 3)
    prog = scatter_prog("%s = stablehlo.add %a, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>")
    (out,) = run(prog, "f", x, idx, u)
    want = np.ones((5, 3), np.float32)
    want[1] += u[0] + u[1]
    np.testing.assert_array_equal(out, want)


def test_scatter_general_body_applies_updates_in_order():
    # body a*2 + b is not commutative: duplicates must apply in update order
    x = np.zeros((5, 3), np.float32)
    idx = np.array([[2], [2], [0], [2]], np.int32)
    u = np.array([[1] * 3, [2] * 3, [3] * 3, [4] * 3], np.float32)
    prog = scatter_prog("%two = stablehlo.constant dense<2.0> : tensor<f32>\n"
                        "      %m = stablehlo.multiply %a, %two : tensor<f32>\n"
                        "      %s = stablehlo.add %m, %b : tensor<f32>\n      stablehlo.return %s : tensor<f32>")
    (out,) = run(prog, "f", x, idx, u)
    assert out[2].tolist() == [((0 * 2 + 1) * 2 + 2) * 2 + 4] * 3 and out[0].tolist() == [3] * 3


# ---- sort ------------------------------------------------------------------------------
def sort_prog(n: int, body: str, stable: bool = True, elem: str = "f32", two: bool = False) -> str:
    args = f"%a: tensor<{elem}>, %b: tensor<{elem}>" + (", %c: tensor<i32>, %d: tensor<i32>" if two else "")
    ops = "(%x, %y)" if two else "(%x)"
    types = f"(tensor<{n}x{elem}>, tensor<{n}xi32>)"
    res = f"(tensor<{n}x{elem}>, tensor<{n}xi32>)" if two else f"tensor<{n}x{elem}>"
    ins = f"%x: tensor<{n}x{elem}>" + (f", %y: tensor<{n}xi32>" if two else "")
    nres = "%0:2" if two else "%0"
    ret = f"%0#0, %0#1 : tensor<{n}x{elem}>, tensor<{n}xi32>" if two else f"%0 : tensor<{n}x{elem}>"
    return f"""
func.func @f({ins}) -> {res} {{
  {nres} = "stablehlo.sort"{ops} ({{
    ^bb0({args}):
      {body}
  }}) {{dimension = 0 : i64, is_stable = {str(stable).lower()}}} : {types if two else f'(tensor<{n}x{elem}>)'} -> {res}
  return {ret}
}}"""


def test_sort_descending_is_stable():
    x = np.array([1, 3, 1, 3, 2], np.float32)
    y = np.arange(5, dtype=np.int32)
    prog = sort_prog(5, "%r = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                        "      stablehlo.return %r : tensor<i1>", two=True)
    xs, ys = run(prog, "f", x, y)
    assert xs.tolist() == [3, 3, 2, 1, 1] and ys.tolist() == [1, 3, 4, 0, 2]


def test_sort_totalorder_orders_nan_and_signed_zero():
    x = np.array([np.nan, 0.0, -np.nan, -0.0, -np.inf, 1.0], np.float32)
    prog = sort_prog(6, "%r = stablehlo.compare LT, %a, %b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
                        "      stablehlo.return %r : tensor<i1>")
    (out,) = run(prog, "f", x)
    bits = out.view(np.uint32)
    assert np.isnan(out[0]) and bits[0] >> 31 == 1      # -NaN first
    assert out[1] == -np.inf
    assert out[2] == 0 and np.signbit(out[2]) and out[3] == 0 and not np.signbit(out[3])
    assert out[4] == 1.0 and np.isnan(out[5]) and bits[5] >> 31 == 0


JNP_SORT_BODY = """%z = stablehlo.constant dense<0.0> : tensor<f32>
      %nan = stablehlo.constant dense<0x7FC00000> : tensor<f32>
      %az = stablehlo.compare EQ, %a, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %a0 = stablehlo.select %az, %z, %a : tensor<i1>, tensor<f32>
      %an = stablehlo.compare NE, %a, %a, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %a1 = stablehlo.select %an, %nan, %a0 : tensor<i1>, tensor<f32>
      %bz = stablehlo.compare EQ, %b, %z, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %b0 = stablehlo.select %bz, %z, %b : tensor<i1>, tensor<f32>
      %bn = stablehlo.compare NE, %b, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %b1 = stablehlo.select %bn, %nan, %b0 : tensor<i1>, tensor<f32>
      %r = stablehlo.compare LT, %a1, %b1, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %r : tensor<i1>"""


def test_sort_jnp_style_comparator_canonicalises_zero_and_nan_stably():
    x = np.array([np.inf, np.nan, -np.nan, -np.inf, 2.0, -0.0, 0.0], np.float32)
    (out,) = run(sort_prog(7, JNP_SORT_BODY), "f", x)
    bits = out.view(np.uint32)
    assert out[0] == -np.inf and out[3] == 2.0 and out[4] == np.inf
    assert np.signbit(out[1]) and out[1] == 0 and not np.signbit(out[2])   # -0 and 0 keep their order
    assert np.isnan(out[5]) and bits[5] >> 31 == 0 and np.isnan(out[6]) and bits[6] >> 31 == 1


def test_sort_merge_sort_path_is_stable_on_many_sizes():
    # `or` of two compares: no single-key form, so the comparator itself drives a merge sort
    body = ("%lt = stablehlo.compare LT, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "      %r = stablehlo.or %lt, %lt : tensor<i1>\n      stablehlo.return %r : tensor<i1>")
    for n in (2, 3, 7, 16, 33):
        x = RNG.integers(0, 4, n).astype(np.int32)
        y = np.arange(n, dtype=np.int32)
        prog = sort_prog(n, body, elem="i32", two=True)
        xs, ys = run(prog, "f", x, y)
        order = np.argsort(x, kind="stable")
        assert xs.tolist() == x[order].tolist() and ys.tolist() == order.tolist()


def test_sort_general_comparator_two_keys_matches_lexsort():
    x = RNG.integers(0, 4, 37).astype(np.float32)
    y = RNG.integers(0, 50, 37).astype(np.int32)
    body = ("%lt = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "      %eq = stablehlo.compare EQ, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "      %gt2 = stablehlo.compare GT, %c, %d : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "      %t = stablehlo.and %eq, %gt2 : tensor<i1>\n"
            "      %r = stablehlo.or %lt, %t : tensor<i1>\n"
            "      stablehlo.return %r : tensor<i1>")
    xs, ys = run(sort_prog(37, body, two=True), "f", x, y)
    order = np.lexsort((-y.astype(np.int64), x))
    assert xs.tolist() == x[order].tolist() and ys.tolist() == y[order].tolist()


# ---- fft and linear algebra ----------------------------------------------------------
def test_fft_kinds():
    x = RNG.standard_normal((2, 8)).astype(np.float32)
    prog = """
func.func @f(%x: tensor<2x8xf32>) -> (tensor<2x5xcomplex<f32>>, tensor<2x8xf32>) {
  %0 = stablehlo.fft %x, type = RFFT, length = [8] : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
  %1 = stablehlo.fft %0, type = IRFFT, length = [8] : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
  return %0, %1 : tensor<2x5xcomplex<f32>>, tensor<2x8xf32>
}"""
    r, back = run(prog, "f", x)
    assert r.dtype == np.complex64
    np.testing.assert_allclose(r, np.fft.rfft(x), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(back, x, rtol=1e-5, atol=1e-5)


def test_triangular_solve_right_side_transposed_unit_diagonal():
    a = np.tril(RNG.standard_normal((3, 3))).astype(np.float32) + 3 * np.eye(3, dtype=np.float32)
    a[0, 2] = 99.0  # the other triangle is ignored
    b = RNG.standard_normal((4, 3)).astype(np.float32)
    prog = """
func.func @f(%a: tensor<3x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = false, lower = true, unit_diagonal = true, transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<3x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}"""
    (x,) = run(prog, "f", a, b)
    L = np.tril(a, -1) + np.eye(3)
    np.testing.assert_allclose(x @ L.T, b, rtol=1e-4, atol=1e-4)


def test_cholesky_lower_and_upper():
    m = RNG.standard_normal((2, 3, 3))
    spd = (m @ np.swapaxes(m, -1, -2) + 3 * np.eye(3)).astype(np.float32)
    prog = """
func.func @f(%a: tensor<2x3x3xf32>) -> (tensor<2x3x3xf32>, tensor<2x3x3xf32>) {
  %0 = stablehlo.cholesky %a, lower = true : tensor<2x3x3xf32>
  %1 = stablehlo.cholesky %a : tensor<2x3x3xf32>
  return %0, %1 : tensor<2x3x3xf32>, tensor<2x3x3xf32>
}"""
    lo, up = run(prog, "f", spd)
    np.testing.assert_allclose(np.tril(lo) @ np.swapaxes(np.tril(lo), -1, -2), spd, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.swapaxes(np.triu(up), -1, -2) @ np.triu(up), spd, rtol=1e-4, atol=1e-4)


def test_batch_norm_training_and_inference_agree():
    x = RNG.standard_normal((4, 3, 2)).astype(np.float32)
    scale, offset = np.array([1, 2, 3], np.float32), np.array([0, 1, -1], np.float32)
    prog = """
func.func @f(%x: tensor<4x3x2xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> (tensor<4x3x2xf32>, tensor<4x3x2xf32>) {
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>)
  %1 = "stablehlo.batch_norm_inference"(%x, %s, %o, %0#1, %0#2) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64} : (tensor<4x3x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<4x3x2xf32>
  return %0#0, %1 : tensor<4x3x2xf32>, tensor<4x3x2xf32>
}"""
    t, i = run(prog, "f", x, scale, offset)
    np.testing.assert_allclose(t, i, rtol=1e-5, atol=1e-5)
    mean = x.mean(axis=(0, 2), keepdims=True)
    var = x.var(axis=(0, 2), keepdims=True)
    want = scale[None, :, None] * (x - mean) / np.sqrt(var + 1e-3) + offset[None, :, None]
    np.testing.assert_allclose(t, want, rtol=1e-4, atol=1e-5)


# ---- against IREE ----------------------------------------------------------------------
ORACLE = """
func.func @dot(%a: tensor<4x8x5xf32>, %b: tensor<4x5x3xf32>) -> tensor<4x8x3xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x8x5xf32>, tensor<4x5x3xf32>) -> tensor<4x8x3xf32>
  return %0 : tensor<4x8x3xf32>
}
func.func @conv(%x: tensor<1x9x9x4xf32>, %w: tensor<3x3x4x6xf32>) -> tensor<1x5x5x6xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x9x9x4xf32>, tensor<3x3x4x6xf32>) -> tensor<1x5x5x6xf32>
  return %0 : tensor<1x5x5x6xf32>
}
func.func @reduce(%x: tensor<6x7xi32>) -> tensor<7xi32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<6x7xi32>, tensor<i32>) -> tensor<7xi32>
  return %0 : tensor<7xi32>
}
func.func @gather(%x: tensor<5x4xf32>, %i: tensor<3x1xi32>) -> tensor<3x4xf32> {
  %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>} : (tensor<5x4xf32>, tensor<3x1xi32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
func.func @sort(%x: tensor<3x9xf32>) -> tensor<3x9xf32> {
  %0 = "stablehlo.sort"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %r = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %r : tensor<i1>
  }) {dimension = 1 : i64} : (tensor<3x9xf32>) -> tensor<3x9xf32>
  return %0 : tensor<3x9xf32>
}
"""

ORACLE_INPUTS = {
    "dot": [RNG.standard_normal((4, 8, 5)).astype(np.float32), RNG.standard_normal((4, 5, 3)).astype(np.float32)],
    "conv": [RNG.standard_normal((1, 9, 9, 4)).astype(np.float32), RNG.standard_normal((3, 3, 4, 6)).astype(np.float32)],
    "reduce": [RNG.integers(-1000, 1000, (6, 7)).astype(np.int32)],
    "gather": [RNG.standard_normal((5, 4)).astype(np.float32), np.array([[4], [0], [2]], np.int32)],
    "sort": [RNG.standard_normal((3, 9)).astype(np.float32)],
}


@pytest.mark.oracle
def test_structured_ops_match_iree_run_module(tmp_path):
    vmfb = iree_compile(ORACLE, tmp_path)
    for name, args in ORACLE_INPUTS.items():
        (ours,) = run(ORACLE, name, *args)
        (theirs,) = iree_run(vmfb, name, args, 1, tmp_path)
        if ours.dtype.kind == "f":
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5, err_msg=name)
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=name)


def naive_scatter_add(operand, indices, updates, window_dims, inserted, in_batch, idx_batch, to_operand, ivd):
    out = operand.copy()
    scatter_dims = [d for d in range(updates.ndim) if d not in window_dims]
    window_operand_dims = [d for d in range(operand.ndim) if d not in inserted and d not in in_batch]
    for u in itertools.product(*[range(s) for s in updates.shape]):
        bi = [u[d] for d in scatter_dims]
        sl = list(bi)
        if ivd < indices.ndim:
            sl.insert(ivd, slice(None))
        start = np.atleast_1d(indices[tuple(sl)])
        full = [0] * operand.ndim
        for k, d in enumerate(to_operand):
            full[d] = int(start[k])
        for do, di in zip(in_batch, idx_batch):
            full[do] = bi[di - (1 if di > ivd else 0)]
        for wd, od in zip(window_dims, window_operand_dims):
            full[od] += u[wd]
        if all(0 <= f < s for f, s in zip(full, operand.shape)):
            out[tuple(full)] += updates[u]
    return out


def test_scatter_with_batching_dims_matches_naive():
    operand = np.zeros((2, 6, 3), np.int32)
    indices = RNG.integers(-1, 6, (4, 2, 1)).astype(np.int32)   # dims: 4 (scatter), 2 (batching), 1 (vector)
    updates = RNG.integers(1, 9, (4, 2, 2)).astype(np.int32)    # scatter dims 0,1; window dim 2 -> operand dim 2
    cfg = dict(window_dims=[2], inserted=[1], in_batch=[0], idx_batch=[1], to_operand=[1], ivd=2)
    want = naive_scatter_add(operand, indices, updates, **cfg)
    prog = """
func.func @f(%x: tensor<2x6x3xi32>, %i: tensor<4x2x1xi32>, %u: tensor<4x2x2xi32>) -> tensor<2x6x3xi32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %s = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [1], input_batching_dims = [0], scatter_indices_batching_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 2>} : (tensor<2x6x3xi32>, tensor<4x2x1xi32>, tensor<4x2x2xi32>) -> tensor<2x6x3xi32>
  return %0 : tensor<2x6x3xi32>
}"""
    (out,) = run(prog, "f", operand, indices, updates)
    np.testing.assert_array_equal(out, want)


def test_einsum_and_unary_einsum():
    a = RNG.standard_normal((3, 4, 5)).astype(np.float32)
    b = RNG.standard_normal((3, 5, 6)).astype(np.float32)
    prog = """
func.func @f(%a: tensor<3x4x5xf32>, %b: tensor<3x5x6xf32>) -> (tensor<3x4x6xf32>, tensor<3x5xf32>) {
  %0 = "stablehlo.einsum"(%a, %b) {einsum_config = "ijk,ikm->ijm"} : (tensor<3x4x5xf32>, tensor<3x5x6xf32>) -> tensor<3x4x6xf32>
  %1 = "stablehlo.unary_einsum"(%a) {einsum_config = "ijk->ik"} : (tensor<3x4x5xf32>) -> tensor<3x5xf32>
  return %0, %1 : tensor<3x4x6xf32>, tensor<3x5xf32>
}"""
    e, u = run(prog, "f", a, b)
    np.testing.assert_allclose(e, a @ b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(u, a.sum(axis=1), rtol=1e-5, atol=1e-6)


def test_torch_index_select_with_batch_dims():
    x = RNG.integers(0, 100, (2, 3, 4, 5)).astype(np.int32)
    idx = RNG.integers(0, 4, (2, 6)).astype(np.int32)
    want = np.zeros((2, 3, 6, 5), np.int32)
    for b, m, i, t in itertools.product(range(2), range(3), range(6), range(5)):
        want[b, m, i, t] = x[b, m, idx[b, i], t]
    prog = """
func.func @f(%x: tensor<2x3x4x5xi32>, %i: tensor<2x6xi32>) -> tensor<2x3x6x5xi32> {
  %0 = "stablehlo.torch_index_select"(%x, %i) {dim = 2 : i64, batch_dims = 1 : i64} : (tensor<2x3x4x5xi32>, tensor<2x6xi32>) -> tensor<2x3x6x5xi32>
  return %0 : tensor<2x3x6x5xi32>
}"""
    (out,) = run(prog, "f", x, idx)
    np.testing.assert_array_equal(out, want)


def test_dynamic_conv_takes_padding_as_an_operand():
    x = RNG.integers(-3, 4, (1, 2, 5, 5)).astype(np.float32)
    w = RNG.integers(-3, 4, (3, 2, 3, 3)).astype(np.float32)
    want = naive_conv(x, w, [1, 1], [(1, 1), (2, 0)], [1, 1], [1, 1], [False, False], 1, 1)
    prog = f"""
func.func @f(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %p: tensor<2x2xi64>) -> {ttype(want, 'f32')} {{
  %0 = "stablehlo.dynamic_conv"(%x, %w, %p) {{dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64}} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>, tensor<2x2xi64>) -> {ttype(want, 'f32')}
  return %0 : {ttype(want, 'f32')}
}}"""
    (out,) = run(prog, "f", x, w, np.array([[1, 1], [2, 0]], np.int64))
    np.testing.assert_array_equal(out, want.astype(np.float32))


@pytest.mark.parametrize("init", [0, 100])
@pytest.mark.parametrize("pad, reverse", [("[[5, 0], [0, 0]]", False), ("[[0, 5], [0, 0]]", True)])
def test_reduce_window_prefix_scan_is_cumsum(pad, reverse, init):
    x = RNG.integers(-50, 50, (6, 3)).astype(np.int8)
    prog = f"""
func.func @f(%x: tensor<6x3xi8>) -> tensor<6x3xi8> {{
  %c = stablehlo.constant dense<{init}> : tensor<i8>
  %0 = "stablehlo.reduce_window"(%x, %c) ({{
    ^bb0(%a: tensor<i8>, %b: tensor<i8>):
      %s = stablehlo.add %a, %b : tensor<i8>
      stablehlo.return %s : tensor<i8>
  }}) {{window_dimensions = array<i64: 6, 1>, padding = dense<{pad}> : tensor<2x2xi64>}} : (tensor<6x3xi8>, tensor<i8>) -> tensor<6x3xi8>
  return %0 : tensor<6x3xi8>
}}"""
    (out,) = run(prog, "f", x)
    xs = x[::-1] if reverse else x
    # each window holds 5 - i padding values (init) and init is added once more by the reduce
    want = np.cumsum(xs.astype(np.int64), axis=0) + init * (6 - np.arange(6))[:, None]
    want = want[::-1] if reverse else want
    np.testing.assert_array_equal(out, want.astype(np.int8))   # wraps like i8 adds
