"""CHLO in the reference interpreter: broadcasting binaries, special functions, mulhi,
next_after, top_k, ragged_dot and scan."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter

from .oracle import iree_compile, iree_run


def run(src: str, *args, fn: str = "main"):
    result = parse_and_verify(src)
    assert result.ok, [str(d) for d in result.diagnostics]
    return Interpreter(result.module).call(fn, list(args))


def unary(op: str, t: str, x):
    src = f"""func.func @main(%a: {t}) -> {t} {{
  %0 = {op} %a : {t} -> {t}
  return %0 : {t}
}}"""
    return run(src, x)[0]


def test_broadcast_add_with_and_without_broadcast_dimensions():
    src = """func.func @main(%a: tensor<3xf32>, %b: tensor<2x3xf32>, %c: tensor<2xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = chlo.broadcast_add %a, %b : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = chlo.broadcast_multiply %c, %b {broadcast_dimensions = array<i64: 0>} : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}"""
    a = np.array([1, 2, 3], np.float32)
    b = np.ones((2, 3), np.float32)
    c = np.array([10, 20], np.float32)
    s, m = run(src, a, b, c)
    assert s.tolist() == [[2, 3, 4], [2, 3, 4]]
    assert m.tolist() == [[10] * 3, [20] * 3]


@pytest.mark.parametrize("op,fn", [("chlo.erf", math.erf), ("chlo.erfc", math.erfc),
                                   ("chlo.lgamma", math.lgamma), ("chlo.acosh", math.acosh),
                                   ("chlo.asinh", math.asinh), ("chlo.atan", math.atan)])
def test_special_functions_are_correctly_rounded_f32(op, fn):
    x = np.array([1.5, 2.25, 3.0, 7.75], np.float32)
    got = unary(op, "tensor<4xf32>", x)
    want = np.array([fn(float(v)) for v in x], np.float64).astype(np.float32)
    assert got.tolist() == want.tolist()


def test_lgamma_digamma_poles_and_negatives():
    x = np.array([-0.5, 0.0, -2.0, 1.0], np.float64)
    lg = unary("chlo.lgamma", "tensor<4xf64>", x)
    assert lg[0] == pytest.approx(math.lgamma(-0.5)) and np.isinf(lg[1]) and np.isinf(lg[2]) and lg[3] == 0
    dg = unary("chlo.digamma", "tensor<4xf64>", np.array([1.0, 0.5, 2.0, 10.0]))
    assert dg[0] == pytest.approx(-0.5772156649015329)
    assert dg[1] == pytest.approx(-1.9635100260214235)


def test_erf_inv_inverts_erf():
    x = np.array([-0.9, -0.1, 0.0, 0.5, 1.0], np.float64)
    y = unary("chlo.erf_inv", "tensor<5xf64>", x)
    assert np.allclose([math.erf(v) for v in y[:4]], x[:4]) and np.isinf(y[4])


def test_next_after_in_each_float_type():
    src = """func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<2xbf16>, %d: tensor<2xbf16>) -> (tensor<3xf32>, tensor<2xbf16>) {
  %0 = chlo.next_after %a, %b : tensor<3xf32>, tensor<3xf32> -> tensor<3xf32>
  %1 = chlo.next_after %c, %d : tensor<2xbf16>, tensor<2xbf16> -> tensor<2xbf16>
  return %0, %1 : tensor<3xf32>, tensor<2xbf16>
}"""
    import ml_dtypes
    bf = ml_dtypes.bfloat16
    f, b = run(src, np.array([1.0, 0.0, 2.0], np.float32), np.array([2.0, -1.0, 2.0], np.float32),
               np.array([1.0, 0.0], bf), np.array([0.0, 1.0], bf))
    assert f[0] == np.nextafter(np.float32(1), np.float32(2)) and f[1] == -np.float32(1.4e-45) and f[2] == 2
    assert float(b[0]) == 1.0 - 2 ** -8 and float(b[1]) > 0 and float(b[1]) < 1e-38


def test_mulhi_signed_and_unsigned_64_bit():
    src = """func.func @main(%a: tensor<3xi64>, %b: tensor<3xi64>, %c: tensor<2xui64>, %d: tensor<2xui64>) -> (tensor<3xi64>, tensor<2xui64>) {
  %0 = "chlo.mulhi"(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %1 = "chlo.mulhi"(%c, %d) : (tensor<2xui64>, tensor<2xui64>) -> tensor<2xui64>
  return %0, %1 : tensor<3xi64>, tensor<2xui64>
}"""
    a = [2 ** 62 + 12345, -(2 ** 63), -7]
    b = [2 ** 40 + 3, 2 ** 63 - 1, 5]
    c = [2 ** 64 - 1, 2 ** 63 + 5]
    d = [2 ** 64 - 1, 3]
    s, u = run(src, np.array(a, np.int64), np.array(b, np.int64), np.array(c, np.uint64), np.array(d, np.uint64))
    assert s.tolist() == [(x * y) >> 64 for x, y in zip(a, b)]
    assert u.tolist() == [(x * y) >> 64 for x, y in zip(c, d)]


def test_top_k_orders_nan_first_and_keeps_ties_stable():
    src = """func.func @main(%a: tensor<6xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %v, %i = chlo.top_k(%a, k = 3) : tensor<6xf32> -> (tensor<3xf32>, tensor<3xi32>)
  return %v, %i : tensor<3xf32>, tensor<3xi32>
}"""
    v, i = run(src, np.array([1, 5, np.nan, 5, -np.inf, 2], np.float32))
    assert np.isnan(v[0]) and v[1:].tolist() == [5, 5] and i.tolist() == [2, 1, 3]


def test_ragged_dot_ragged_rows():
    src = """func.func @main(%l: tensor<5x2xf32>, %r: tensor<2x2x3xf32>, %g: tensor<2xi64>) -> tensor<5x3xf32> {
  %0 = "chlo.ragged_dot"(%l, %r, %g) {
    ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = [], rhs_batching_dimensions = [],
      lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0],
      rhs_group_dimensions = [0]>,
    precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]
  } : (tensor<5x2xf32>, tensor<2x2x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}"""
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal((5, 2)).astype(np.float32)
    rhs = rng.standard_normal((2, 2, 3)).astype(np.float32)
    out = run(src, lhs, rhs, np.array([2, 3], np.int64))[0]
    want = np.concatenate([lhs[:2] @ rhs[0], lhs[2:] @ rhs[1]])
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_scan_runs_the_body_along_the_dimension():
    src = """func.func @main(%x: tensor<2x3xi32>, %init: tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>) {
  %0:2 = "chlo.scan"(%x, %init) <{dimension = 1 : i64, is_reverse = true, operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%a: tensor<2xi32>, %c: tensor<2xi32>):
    %s = stablehlo.add %a, %c : tensor<2xi32>
    stablehlo.return %s, %s : tensor<2xi32>, tensor<2xi32>
  }) : (tensor<2x3xi32>, tensor<2xi32>) -> (tensor<2x3xi32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2x3xi32>, tensor<2xi32>
}"""
    out, carry = run(src, np.array([[1, 2, 3], [4, 5, 6]], np.int32), np.zeros(2, np.int32))
    assert out.tolist() == [[6, 5, 3], [15, 11, 6]] and carry.tolist() == [6, 15]


def test_sinh_cosh_follow_the_chlo_decomposition():
    x = np.array([0.5, -3.0, 20.0], np.float32)
    s = unary("chlo.sinh", "tensor<3xf32>", x)
    c = unary("chlo.cosh", "tensor<3xf32>", x)
    # x + log(1/2) rounds in f32, so large |x| lose a few ulp, as upstream's expected values do.
    np.testing.assert_allclose(s, np.sinh(x.astype(np.float64)), rtol=2e-6)
    np.testing.assert_allclose(c, np.cosh(x.astype(np.float64)), rtol=2e-6)
    assert abs(int(s[0].view(np.int32)) - int(np.float32(np.sinh(0.5)).view(np.int32))) <= 1  # expm1 form


ORACLE_PROGRAM = """
func.func @main(%a: tensor<6xf32>, %b: tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>,
    tensor<3xf32>, tensor<3xi32>) {
  %0 = chlo.broadcast_add %a, %b : (tensor<6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
  %1 = chlo.erf %a : tensor<6xf32> -> tensor<6xf32>
  %2 = chlo.lgamma %a : tensor<6xf32> -> tensor<6xf32>
  %3 = chlo.atan %a : tensor<6xf32> -> tensor<6xf32>
  %v, %i = chlo.top_k(%a, k = 3) : tensor<6xf32> -> (tensor<3xf32>, tensor<3xi32>)
  return %0, %1, %2, %3, %v, %i : tensor<2x6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<3xf32>, tensor<3xi32>
}
"""


@pytest.mark.oracle
def test_matches_iree_run_module(tmp_path):
    inputs = [np.array([0.25, -1.5, 3.0, 0.7, 2.5, -0.2], np.float32),
              np.arange(12, dtype=np.float32).reshape(2, 6)]
    ours = run(ORACLE_PROGRAM, *inputs)
    theirs = iree_run(iree_compile(ORACLE_PROGRAM, tmp_path), "main", inputs, len(ours), tmp_path)
    for k, value in enumerate(ours):
        # IREE evaluates erf / lgamma with polynomial approximations: a few ulp apart.
        np.testing.assert_allclose(value, theirs[k], rtol=1e-5, atol=1e-6,
                                   err_msg=f"result {k}")
