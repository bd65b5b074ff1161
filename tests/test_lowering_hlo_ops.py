"""Lowering of the hlo ops with no TOSA or data-movement form: batch norm (decomposed into hlo
ops), triangular_solve (substitution in scf/linalg), reduce_precision (bits), rng and
rng_bit_generator (the interpreter's numbers, bit for bit), dynamic ops with static shapes,
chlo functions (formulas of stablehlo ops, as chlo-legalize-to-stablehlo writes them), optimization_barrier/tuples and IREE's
flow.tensor ops; reductions over an empty set, and f16/bf16 contractions summed in f32. Every level runs on the same inputs as the source and gives the same numbers,
and iree-opt accepts every level."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify, to_text
from mlirtext.interpreter import Interpreter
from mlirtext.transforms.conversions.levels import lowering_pipeline
from mlirtext.transforms.pass_manager import PassManager
from mlirtext.transforms.pipeline import parse_pipeline

from .oracle import generic_forms

LEVELS = ("tosa", "linalg", "loops", "llvm")

BATCH_NORM = """
func.func @main(%x: tensor<2x3x4xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>,
                %g: tensor<2x3x4xf32>)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<3xf32>,
        tensor<3xf32>) {
  %a = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %v) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
     : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %b:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
     : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %c:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %g) {epsilon = 1.0e-3 : f32, feature_index = 1 : i64}
     : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4xf32>)
       -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %a, %b#0, %b#1, %b#2, %c#0, %c#1, %c#2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>,
      tensor<3xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}
"""

#: Every side, triangle, transposition and unit_diagonal combination appears once.
SOLVE = """
func.func @main(%a: tensor<2x4x4xf32>, %b: tensor<2x4x3xf32>, %c: tensor<2x3x4xf32>)
    -> (tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false,
       transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %1 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = false, unit_diagonal = true,
       transpose_a = #stablehlo<transpose TRANSPOSE>} : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  %2 = "stablehlo.triangular_solve"(%a, %c) {left_side = false, lower = true, unit_diagonal = false,
       transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<2x4x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %3 = "stablehlo.triangular_solve"(%a, %c) {left_side = false, lower = false, unit_diagonal = false,
       transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<2x4x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3 : tensor<2x4x3xf32>, tensor<2x4x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
"""

REDUCE_PRECISION = """
func.func @main(%x: tensor<10xf32>, %y: tensor<10xf64>)
    -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf64>, tensor<10xf64>) {
  %0 = stablehlo.reduce_precision %x, format = e5m10 : tensor<10xf32>
  %1 = stablehlo.reduce_precision %x, format = e8m0 : tensor<10xf32>
  %2 = stablehlo.reduce_precision %y, format = e5m2 : tensor<10xf64>
  %3 = stablehlo.reduce_precision %y, format = e11m52 : tensor<10xf64>
  return %0, %1, %2, %3 : tensor<10xf32>, tensor<10xf32>, tensor<10xf64>, tensor<10xf64>
}
"""

RNG = """
func.func @main(%lo: tensor<f32>, %hi: tensor<f32>, %s: tensor<4xi32>, %k: tensor<2xui64>)
    -> (tensor<3x5xf32>, tensor<2x3xi32>, tensor<7xf32>, tensor<4xi32>, tensor<3x5xi32>, tensor<2xui64>, tensor<5xui64>,
        tensor<4xi32>, tensor<2x3xf32>) {
  %shape = stablehlo.constant dense<[3, 5]> : tensor<2xi64>
  %u = stablehlo.rng %lo, %hi, %shape, distribution = UNIFORM
     : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<3x5xf32>
  %ilo = stablehlo.constant dense<-5> : tensor<i32>
  %ihi = stablehlo.constant dense<20> : tensor<i32>
  %ishape = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %i = stablehlo.rng %ilo, %ihi, %ishape, distribution = UNIFORM
     : (tensor<i32>, tensor<i32>, tensor<2xi64>) -> tensor<2x3xi32>
  %nshape = stablehlo.constant dense<7> : tensor<1xi64>
  %n = stablehlo.rng %lo, %hi, %nshape, distribution = NORMAL
     : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<7xf32>
  %s1, %t = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<4xi32>) -> (tensor<4xi32>, tensor<3x5xi32>)
  %k1, %p = stablehlo.rng_bit_generator %k, algorithm = PHILOX
     : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5xui64>)
  %s2, %f = stablehlo.rng_bit_generator %s, algorithm = PHILOX : (tensor<4xi32>) -> (tensor<4xi32>, tensor<2x3xf32>)
  return %u, %i, %n, %s1, %t, %k1, %p, %s2, %f : tensor<3x5xf32>, tensor<2x3xi32>, tensor<7xf32>, tensor<4xi32>,
      tensor<3x5xi32>, tensor<2xui64>, tensor<5xui64>, tensor<4xi32>, tensor<2x3xf32>
}
"""

STATIC_SHAPES = """
func.func @main(%x: tensor<2x3xf32>, %v: tensor<3xf32>, %idx: tensor<2x1xi32>)
    -> (tensor<3x4xi64>, tensor<6xf32>, tensor<4x3xf32>, tensor<4x7xf32>, tensor<2x3xf32>, tensor<i32>, tensor<f32>) {
  %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
  %0 = stablehlo.dynamic_iota %shape, dim = 1 : (tensor<2xi64>) -> tensor<3x4xi64>
  %s6 = stablehlo.constant dense<6> : tensor<1xi64>
  %1 = stablehlo.dynamic_reshape %x, %s6 : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<6xf32>
  %s43 = stablehlo.constant dense<[4, 3]> : tensor<2xi64>
  %2 = stablehlo.dynamic_broadcast_in_dim %v, %s43, dims = [1] : (tensor<3xf32>, tensor<2xi64>) -> tensor<4x3xf32>
  %z = stablehlo.constant dense<0.5> : tensor<f32>
  %lo = stablehlo.constant dense<[1, 0]> : tensor<2xi64>
  %hi = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %in = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
  %3 = stablehlo.dynamic_pad %x, %z, %lo, %hi, %in
     : (tensor<2x3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x7xf32>
  %sizes = stablehlo.constant dense<[1, 3]> : tensor<2xi64>
  %4 = "stablehlo.dynamic_gather"(%x, %idx, %sizes) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
       collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false}
     : (tensor<2x3xf32>, tensor<2x1xi32>, tensor<2xi64>) -> tensor<2x3xf32>
  %5 = stablehlo.get_dimension_size %x, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
  %t = stablehlo.tuple %z, %5 : tuple<tensor<f32>, tensor<i32>>
  %6 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<f32>
  %7 = stablehlo.optimization_barrier %6 : tensor<f32>
  return %0, %1, %2, %3, %4, %5, %7 : tensor<3x4xi64>, tensor<6xf32>, tensor<4x3xf32>, tensor<4x7xf32>, tensor<2x3xf32>,
      tensor<i32>, tensor<f32>
}
"""

CHLO = """
func.func @main(%x: tensor<12xf32>) -> (tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>,
                                       tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>) {
  %0 = chlo.sinh %x : tensor<12xf32> -> tensor<12xf32>
  %1 = chlo.cosh %x : tensor<12xf32> -> tensor<12xf32>
  %2 = chlo.tan %x : tensor<12xf32> -> tensor<12xf32>
  %3 = chlo.asinh %x : tensor<12xf32> -> tensor<12xf32>
  %4 = chlo.acosh %x : tensor<12xf32> -> tensor<12xf32>
  %5 = chlo.atanh %x : tensor<12xf32> -> tensor<12xf32>
  %6 = chlo.erf %x : tensor<12xf32> -> tensor<12xf32>
  %7 = chlo.erfc %x : tensor<12xf32> -> tensor<12xf32>
  %8 = chlo.erf_inv %x : tensor<12xf32> -> tensor<12xf32>
  %9 = chlo.next_after %x, %8 : tensor<12xf32>, tensor<12xf32> -> tensor<12xf32>
  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>,
      tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12xf32>
}
"""

GAMMA = """
func.func @main(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = chlo.lgamma %x : tensor<8xf32> -> tensor<8xf32>
  %1 = chlo.digamma %x : tensor<8xf32> -> tensor<8xf32>
  %2 = chlo.bessel_i1e %x : tensor<8xf32> -> tensor<8xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
"""

MAP = """
func.func @main(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %r = "stablehlo.map"(%a, %b) ({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>):
      %m = stablehlo.multiply %x, %y : tensor<i32>
      %s = stablehlo.subtract %m, %x : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %r : tensor<2x3xi32>
}
"""

FLOW = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %c = flow.tensor.dynamic_constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32> -> tensor<?x3xf32>
  %c0 = arith.constant 0 : index
  %d = tensor.dim %c, %c0 : tensor<?x3xf32>
  %t = flow.tensor.tie_shape %c : tensor<?x3xf32>{%d}
  %s = tensor.cast %t : tensor<?x3xf32> to tensor<2x3xf32>
  %r = stablehlo.add %x, %s : tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
"""

#: Reductions whose reduced extent is 0: each result is its init value (ONNX's `*_empty_set` tests);
#: a TOSA-shaped body, a body TOSA has no reduction for, a variadic argmax and unsigned integers.
EMPTY_REDUCE = """
func.func @main(%x: tensor<2x0x4xf32>, %i: tensor<0x3xi32>, %u: tensor<3x0xui8>)
    -> (tensor<2x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xui8>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %seven = stablehlo.constant dense<7> : tensor<i32>
  %nine = stablehlo.constant dense<9> : tensor<ui8>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [1]
     : (tensor<2x0x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %1 = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [0, 1]
     : (tensor<2x0x4xf32>, tensor<f32>) -> tensor<4xf32>
  %fi = stablehlo.convert %i : (tensor<0x3xi32>) -> tensor<0x3xf32>
  %2:2 = stablehlo.reduce(%fi init: %ninf), (%i init: %seven) across dimensions = [0]
     : (tensor<0x3xf32>, tensor<0x3xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
    reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {
      %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %v = stablehlo.select %gt, %a, %b : tensor<i1>, tensor<f32>
      %k = stablehlo.select %gt, %ai, %bi : tensor<i1>, tensor<i32>
      stablehlo.return %v, %k : tensor<f32>, tensor<i32>
    }
  %3 = stablehlo.reduce(%u init: %nine) applies stablehlo.multiply across dimensions = [1]
     : (tensor<3x0xui8>, tensor<ui8>) -> tensor<3xui8>
  return %0, %1, %2#0, %2#1, %3 : tensor<2x4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xui8>
}
"""

#: Contractions on f16/bf16: products summed in f32 and rounded once, at every level (TOSA's
#: fp32-accumulate matmul, linalg generics with f32 accumulators) as in the reference.
NARROW_CONTRACTIONS = """
func.func @main(%a: tensor<2x16xf16>, %b: tensor<16x3xf16>, %x: tensor<1x2x16xf16>, %k: tensor<3x2x4xf16>,
                %c: tensor<2x16xbf16>, %d: tensor<16x3xbf16>)
    -> (tensor<2x3xf16>, tensor<1x3x13xf16>, tensor<2x3xbf16>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x16xf16>, tensor<16x3xf16>) -> tensor<2x3xf16>
  %1 = stablehlo.convolution(%x, %k) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1],
       pad = [[0, 0]], rhs_dilate = [1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}
     : (tensor<1x2x16xf16>, tensor<3x2x4xf16>) -> tensor<1x3x13xf16>
  %2 = stablehlo.dot_general %c, %d, contracting_dims = [1] x [0]
     : (tensor<2x16xbf16>, tensor<16x3xbf16>) -> tensor<2x3xbf16>
  return %0, %1, %2 : tensor<2x3xf16>, tensor<1x3x13xf16>, tensor<2x3xbf16>
}
"""


def _narrow_contraction_inputs():
    """Random values, and in the first row a large leading term followed by ones: summed in the
    narrow type, each +1 is a tie that rounds back to the large term; in f32 they add up."""
    import ml_dtypes
    a, b, x, k = _random((2, 16), (16, 3), (1, 2, 16), (3, 2, 4), dtype=np.float16)()
    c, d = (v.astype(ml_dtypes.bfloat16) for v in _random((2, 16), (16, 3))())
    a[0], b[:, 0], x[0, :, :4], k[0] = 1, 1, 1, 1
    a[0, 0], x[0, 0, 0] = 2048, 2048
    c[0], d[:, 0], c[0, 0] = 1, 1, 256
    return [a, b, x, k, c, d]


def _edge_floats(dtype):
    info = np.finfo(dtype)
    return np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 65505.0, 65520.0, 1e-30, info.max, -1.0009765625], dtype)


def _solve_inputs():
    rng = np.random.default_rng(1)
    a = rng.uniform(-1, 1, (2, 4, 4)).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)  # well conditioned
    return [a, rng.standard_normal((2, 4, 3)).astype(np.float32), rng.standard_normal((2, 3, 4)).astype(np.float32)]


def _random(*shapes, dtype=np.float32):
    """Inputs of `shapes`: the same ones at every call."""
    return lambda: [(np.random.default_rng(3 + i).standard_normal(s) * 4).astype(dtype) for i, s in enumerate(shapes)]


#: name -> (program, its inputs, whether every level must give the same bits)
PROGRAMS = {
    "batch_norm": (BATCH_NORM, lambda: [a if a.ndim > 1 else np.abs(a) for a in _random(
        (2, 3, 4), 3, 3, 3, 3, (2, 3, 4))()], False),
    "solve": (SOLVE, _solve_inputs, False),
    "reduce_precision": (REDUCE_PRECISION, lambda: [_edge_floats(np.float32), _edge_floats(np.float64)], True),
    "rng": (RNG, lambda: [np.float32(-2.0), np.float32(3.0), np.array([1, 2, -3, -1], np.int32),
                          np.array([0x12345678ABCDEF01, 0xFFFFFFFFFFFFFFF0], np.uint64)], True),
    "static_shapes": (STATIC_SHAPES, lambda: [np.arange(6, dtype=np.float32).reshape(2, 3),
                                              np.array([7, 8, 9], np.float32), np.array([[1], [0]], np.int32)], True),
    "chlo": (CHLO, lambda: [np.array([0.0, -0.0, 1e-5, -0.3, 0.9, 1.0, 1.5, -2.5, 9.0, 60.0, 1e20, -1e-20],
                                     np.float32)], False),
    "gamma": (GAMMA, lambda: [np.array([0.3, 1.0, 2.5, 7.0, -0.5, -2.7, 1e-3, 30.0], np.float32)], False),
    "map": (MAP, _random((2, 3), (2, 3), dtype=np.int32), True),
    "flow": (FLOW, lambda: [np.ones((2, 3), np.float32)], True),
    "empty_reduce": (EMPTY_REDUCE, lambda: [np.zeros((2, 0, 4), np.float32), np.zeros((0, 3), np.int32),
                                            np.zeros((3, 0), np.uint8)], True),
    "narrow_contractions": (NARROW_CONTRACTIONS, _narrow_contraction_inputs, True),
}


def _levels(text: str) -> dict:
    """level -> the module printed after lowering `text` one step at a time down to it."""
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    texts = {}
    for level in LEVELS:
        pipeline = lowering_pipeline(result.module, level)  # empty: already there (no tosa ops)
        if pipeline:
            problems = PassManager(parse_pipeline(pipeline)).run(result.module)
            assert not problems, [d.format() for d in problems]
        texts[level] = to_text(result)
    return texts


def _lowered(text: str, level: str) -> str:
    result = parse_and_verify(text)
    problems = PassManager(parse_pipeline(lowering_pipeline(result.module, level))).run(result.module)
    assert not problems, [d.format() for d in problems]
    return to_text(result)


def _run(text: str, args):
    result = parse_and_verify(text)
    assert result.ok, [d.message for d in result.diagnostics]
    return Interpreter(result.module).call("main", [np.array(a, copy=True) for a in args])


def _same(want, got, exact: bool, where: str):
    for i, (w, g) in enumerate(zip(want, got, strict=True)):
        w, g = np.atleast_1d(np.asarray(w)), np.atleast_1d(np.asarray(g))
        assert w.dtype == g.dtype, (where, i, w.dtype, g.dtype)
        if exact:
            assert w.tobytes() == g.tobytes(), (where, i, w, g)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6, atol=1e-6, err_msg=f"{where} result {i}")


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_level_computes_the_same_numbers_and_is_valid_mlir(name):
    program, inputs, exact = PROGRAMS[name]
    want = _run(program, inputs())
    texts = _levels(program)
    for level, text in texts.items():
        _same(want, _run(text, inputs()), exact, f"{name} at {level}")
    assert not any(d in texts["tosa"] for d in ("stablehlo.", "chlo.", "flow."))
    assert generic_forms(list(texts.values())) is not None, "iree-opt rejected a lowered module"


def test_triangular_solve_is_a_substitution_loop():
    text = _lowered(SOLVE, "tosa")
    assert text.count("scf.for") == 8  # the steps, and the sum of each step's row
    assert "scf.if" in text and "arith.divf" in text


def test_batch_norm_becomes_hlo_arithmetic_then_tosa():
    text = _lowered(BATCH_NORM, "tosa")
    assert "batch_norm" not in text
    assert "tosa.reduce_sum" in text and "math.sqrt" in text  # the training statistics, the deviation


def test_rng_normal_draws_are_compile_time_constants():
    text = _lowered(RNG, "tosa")
    assert "rng" not in text.replace("mlirtext.abi", "")
    assert "linalg.index" in text and "arith.uitofp" in text  # the uniform hash of the indices


def test_dynamic_ops_without_constant_shapes_are_reported():
    text = """
func.func @f(%x: tensor<2x3xf32>, %z: tensor<f32>, %p: tensor<2xi64>) -> tensor<4x7xf32> {
  %0 = stablehlo.dynamic_pad %x, %z, %p, %p, %p
     : (tensor<2x3xf32>, tensor<f32>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<4x7xf32>
  return %0 : tensor<4x7xf32>
}"""
    result = parse_and_verify(text)
    problems = PassManager(parse_pipeline("convert-hlo-to-tosa")).run(result.module)
    assert any("stablehlo.dynamic_pad" in d.message for d in problems)
