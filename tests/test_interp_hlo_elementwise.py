"""StableHLO elementwise and conversion semantics: the spec's edge cases, and the same
program run by iree-run-module."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter, InterpreterError

from .oracle import iree_compile, iree_run


def run(src: str, *args, fn: str = "main"):
    result = parse_and_verify(src)
    assert result.ok, [str(d) for d in result.diagnostics]
    return Interpreter(result.module).call(fn, list(args))


def unary(op: str, t: str, x, rt: str | None = None):
    rt = rt or t
    src = f"""func.func @main(%a: {t}) -> {rt} {{
  %0 = {op} %a : ({t}) -> {rt}
  return %0 : {rt}
}}"""
    return run(src, x)[0]


def binary(op: str, t: str, x, y, rt: str | None = None):
    rt = rt or t
    src = f"""func.func @main(%a: {t}, %b: {t}) -> {rt} {{
  %0 = "{op}"(%a, %b) : ({t}, {t}) -> {rt}
  return %0 : {rt}
}}"""
    return run(src, x, y)[0]


I32_MIN = np.iinfo(np.int32).min


def test_integer_division_by_zero_and_overflow():
    a = np.array([7, -7, 7, I32_MIN, I32_MIN, 5], np.int32)
    b = np.array([0, 0, -2, -1, 1, 3], np.int32)
    q = binary("stablehlo.divide", "tensor<6xi32>", a, b)
    r = binary("stablehlo.remainder", "tensor<6xi32>", a, b)
    assert q.tolist() == [-1, -1, -3, I32_MIN, I32_MIN, 1]       # x/0 = -1, INT_MIN/-1 = INT_MIN
    assert r.tolist() == [7, -7, 1, 0, 0, 2]                     # x%0 = x, sign of the dividend
    u = binary("stablehlo.divide", "tensor<2xui8>", np.array([9, 9], np.uint8), np.array([0, 2], np.uint8))
    assert u.tolist() == [255, 4]


def test_float_remainder_has_sign_of_dividend():
    r = binary("stablehlo.remainder", "tensor<3xf32>", np.array([5.5, -5.5, -0.0], np.float32),
               np.array([2, 2, 1], np.float32))
    assert r.tolist() == [1.5, -1.5, 0.0] and np.signbit(r[2])


def test_shifts_by_width_or_more():
    a = np.array([-8, -8, 1, 64], np.int8)
    b = np.array([8, 100, -1, 1], np.int8)   # -1 reads as 255: >= width
    assert binary("stablehlo.shift_left", "tensor<4xi8>", a, b).tolist() == [0, 0, 0, -128]
    assert binary("stablehlo.shift_right_logical", "tensor<4xi8>", a, b).tolist() == [0, 0, 0, 32]
    assert binary("stablehlo.shift_right_arithmetic", "tensor<4xi8>", a, b).tolist() == [-1, -1, 0, 32]


def test_i4_wraps_and_shifts_at_four_bits():
    a = np.array([7, -8, 3], np.int8)
    b = np.array([1, -1, 4], np.int8)
    assert binary("stablehlo.add", "tensor<3xi4>", a, b).tolist() == [-8, 7, 7]
    assert binary("stablehlo.shift_left", "tensor<3xi4>", a, np.array([1, 1, 4], np.int8)).tolist() == [-2, 0, 0]
    assert binary("stablehlo.shift_right_logical", "tensor<3xi4>", a, np.array([1, 1, 1], np.int8)).tolist() == [3, 4, 1]


def test_max_min_propagate_nan_and_order_zeros():
    nan = np.float32("nan")
    a = np.array([nan, 1, -0.0, 0.0], np.float32)
    b = np.array([1, nan, 0.0, -0.0], np.float32)
    mx = binary("stablehlo.maximum", "tensor<4xf32>", a, b)
    mn = binary("stablehlo.minimum", "tensor<4xf32>", a, b)
    assert np.isnan(mx[:2]).all() and np.isnan(mn[:2]).all()
    assert not np.signbit(mx[2]) and not np.signbit(mx[3])
    assert np.signbit(mn[2]) and np.signbit(mn[3])


def test_compare_types():
    nan = np.float32("nan")
    x = np.array([nan, -0.0, 1.0, -nan], np.float32)
    y = np.array([nan, 0.0, nan, 1.0], np.float32)
    t = "tensor<4xf32>"
    src = f"""func.func @main(%a: {t}, %b: {t}) -> (tensor<4xi1>, tensor<4xi1>, tensor<4xi1>) {{
  %0 = stablehlo.compare EQ, %a, %b, FLOAT : ({t}, {t}) -> tensor<4xi1>
  %1 = stablehlo.compare LT, %a, %b, TOTALORDER : ({t}, {t}) -> tensor<4xi1>
  %2 = stablehlo.compare NE, %a, %b : ({t}, {t}) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi1>, tensor<4xi1>, tensor<4xi1>
}}"""
    eq, lt, ne = run(src, x, y)
    assert eq.tolist() == [False, True, False, False]
    assert lt.tolist() == [False, True, True, True]          # -0 < +0, finite < NaN, -NaN < 1
    assert ne.tolist() == [True, False, True, True]
    src = """func.func @main(%a: tensor<2xi8>, %b: tensor<2xi8>) -> tensor<2xi1> {
  %0 = stablehlo.compare GT, %a, %b, UNSIGNED : (tensor<2xi8>, tensor<2xi8>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}"""
    assert run(src, np.array([-1, 0], np.int8), np.array([1, 1], np.int8))[0].tolist() == [True, False]


def test_rounding_ties():
    x = np.array([0.5, 1.5, 2.5, -2.5, 0.49999999999999994, -0.0], np.float64)
    afz = unary("stablehlo.round_nearest_afz", "tensor<6xf64>", x)
    even = unary("stablehlo.round_nearest_even", "tensor<6xf64>", x)
    assert afz.tolist() == [1.0, 2.0, 3.0, -3.0, 0.0, 0.0] and np.signbit(afz[5])
    assert even.tolist() == [0.0, 2.0, 2.0, -2.0, 0.0, 0.0]


def test_convert_float_to_int_saturates_and_nan_is_zero():
    x = np.array([1e10, -1e10, np.nan, -1.9, 255.9, np.inf], np.float32)
    assert unary("stablehlo.convert", "tensor<6xf32>", x, "tensor<6xi32>").tolist() == \
        [2147483647, -2147483648, 0, -1, 255, 2147483647]
    assert unary("stablehlo.convert", "tensor<6xf32>", x, "tensor<6xui8>").tolist() == [255, 0, 0, 0, 255, 255]
    assert unary("stablehlo.convert", "tensor<6xf32>", x, "tensor<6xi1>").tolist() == [True] * 6
    big = np.array([1e19, -1e19], np.float64)
    assert unary("stablehlo.convert", "tensor<2xf64>", big, "tensor<2xi64>").tolist() == \
        [np.iinfo(np.int64).max, np.iinfo(np.int64).min]


def test_convert_complex_bool_bf16():
    c = np.array([1.5 + 2j, 0 + 1j], np.complex64)
    assert unary("stablehlo.convert", "tensor<2xcomplex<f32>>", c, "tensor<2xf32>").tolist() == [1.5, 0.0]
    assert unary("stablehlo.convert", "tensor<2xcomplex<f32>>", c, "tensor<2xi1>").tolist() == [True, False]
    b = unary("stablehlo.convert", "tensor<2xf32>", np.array([1.00390625, 1.01171875], np.float32),
              "tensor<2xbf16>")
    assert b.astype(np.float32).tolist() == [1.0, 1.015625]   # ties to even at bf16 precision


def test_i4_and_ui4_arguments_take_ml_dtypes_int4_arrays():
    """What onnx hands out for INT4/UINT4 tensors; held here in int8/uint8 storage."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.array([-8, -1, 0, 7], ml_dtypes.int4)
    assert unary("stablehlo.convert", "tensor<4xi4>", x, "tensor<4xf32>").tolist() == [-8, -1, 0, 7]
    u = np.array([0, 1, 9, 15], ml_dtypes.uint4)
    assert unary("stablehlo.convert", "tensor<4xui4>", u, "tensor<4xi32>").tolist() == [0, 1, 9, 15]


def test_bitcast_convert_between_widths():
    x = np.array([1.0, -2.0], np.float32)
    bytes_ = unary("stablehlo.bitcast_convert", "tensor<2xf32>", x, "tensor<2x4xi8>")
    assert bytes_.tolist() == [[0, 0, -128, 63], [0, 0, 0, -64]]
    back = unary("stablehlo.bitcast_convert", "tensor<2x4xi8>", bytes_, "tensor<2xf32>")
    assert back.tolist() == [1.0, -2.0]
    bits = np.zeros(64, bool)
    bits[[0, 2, 63]] = True
    v = unary("stablehlo.bitcast_convert", "tensor<64xi1>", bits, "tensor<i64>")
    assert int(v) == 5 - 2 ** 63


def test_reduce_precision_to_half():
    x = np.array([1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, 70000.0, 1e-8, np.nan], np.float32)
    src = """func.func @main(%a: tensor<5xf32>) -> tensor<5xf32> {
  %0 = stablehlo.reduce_precision %a, format = e5m10 : tensor<5xf32>
  return %0 : tensor<5xf32>
}"""
    r = run(src, x)[0]
    assert r[:4].tolist() == [1.0, 1.0 + 2 ** -9, np.inf, 0.0]   # ties to even, overflow, underflow
    assert np.isnan(r[4])


def test_integer_power_and_bit_counts():
    p = binary("stablehlo.power", "tensor<5xi32>", np.array([2, -1, -1, 3, 2], np.int32),
               np.array([10, -3, -4, -1, 31], np.int32))
    assert p.tolist() == [1024, -1, 1, 0, I32_MIN]
    x = np.array([0, 1, -1, 1 << 40], np.int64)
    assert unary("stablehlo.popcnt", "tensor<4xi64>", x).tolist() == [0, 1, 64, 1]
    assert unary("stablehlo.count_leading_zeros", "tensor<4xi64>", x).tolist() == [64, 63, 0, 23]
    assert unary("stablehlo.count_leading_zeros", "tensor<3xi4>", np.array([0, 1, -1], np.int8)).tolist() == [4, 3, 0]


def test_sign_abs_negate_edge_values():
    x = np.array([np.nan, -0.0, 0.0, -3.0], np.float32)
    s = unary("stablehlo.sign", "tensor<4xf32>", x)
    assert np.isnan(s[0]) and np.signbit(s[1]) and not np.signbit(s[2]) and s[3] == -1
    i = np.array([I32_MIN, -5], np.int32)
    assert unary("stablehlo.abs", "tensor<2xi32>", i).tolist() == [I32_MIN, 5]
    assert unary("stablehlo.negate", "tensor<2xi32>", i).tolist() == [I32_MIN, 5]
    assert unary("stablehlo.abs", "tensor<1xcomplex<f32>>", np.array([3 + 4j], np.complex64),
                 "tensor<1xf32>").tolist() == [5.0]


def test_transcendentals_round_once_from_double():
    x = np.array([0.1, 1.0, 10.0], np.float32)
    got = unary("stablehlo.exponential", "tensor<3xf32>", x)
    assert got.tolist() == np.exp(x.astype(np.float64)).astype(np.float32).tolist()
    lg = unary("stablehlo.logistic", "tensor<3xf32>", np.array([-1000, 0, 1000], np.float32))
    assert lg.tolist() == [0.0, 0.5, 1.0]


def test_quantize_dequantize_per_tensor_and_per_axis():
    src = """func.func @main(%a: tensor<3xf32>) -> (tensor<3xi8>, tensor<3xf32>) {
  %q = stablehlo.uniform_quantize %a : (tensor<3xf32>) -> tensor<3x!quant.uniform<i8:f32, 0.5:-10>>
  %b = stablehlo.bitcast_convert %q : (tensor<3x!quant.uniform<i8:f32, 0.5:-10>>) -> tensor<3xi8>
  %d = stablehlo.uniform_dequantize %q : (tensor<3x!quant.uniform<i8:f32, 0.5:-10>>) -> tensor<3xf32>
  return %b, %d : tensor<3xi8>, tensor<3xf32>
}"""
    raw, back = run(src, np.array([1.25, 100.0, -1.0], np.float32))
    assert raw.tolist() == [-8, 127, -12]          # 2.5 rounds to even (2), 210 clamps to 127
    assert back.tolist() == [1.0, 68.5, -1.0]


def test_select_with_scalar_predicate_and_clamp():
    src = """func.func @main(%p: tensor<i1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = stablehlo.select %p, %a, %b : tensor<i1>, tensor<3xf32>
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %1 = stablehlo.clamp %lo, %a, %hi : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}"""
    a = np.array([-1, 0.5, np.nan], np.float32)
    sel, cl = run(src, np.array(False), a, np.zeros(3, np.float32))
    assert sel.tolist() == [0, 0, 0]
    assert cl[:2].tolist() == [0.0, 0.5] and np.isnan(cl[2])


def test_infeed_without_a_queue_is_an_interpreter_error():
    src = """func.func @main(%t: !stablehlo.token) -> tensor<2xi32> {
  %0:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi32>, !stablehlo.token)
  return %0#0 : tensor<2xi32>
}"""
    module = parse_and_verify(src).module
    from mlirtext.ir.arrays import TOKEN
    with pytest.raises(InterpreterError, match="infeed queue is empty"):
        Interpreter(module).run_region(module.regions[0].blocks[0].ops[0].regions[0], [TOKEN])


ORACLE_PROGRAM = """
func.func @main(%a: tensor<8xf32>, %b: tensor<8xf32>, %i: tensor<8xi32>, %j: tensor<8xi32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xi32>) {
  %0 = stablehlo.add %a, %b : tensor<8xf32>
  %1 = stablehlo.divide %a, %b : tensor<8xf32>
  %2 = stablehlo.tanh %a : tensor<8xf32>
  %3 = stablehlo.compare GE, %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xi1>
  %4 = stablehlo.divide %i, %j : tensor<8xi32>
  %5 = stablehlo.remainder %i, %j : tensor<8xi32>
  %6 = stablehlo.round_nearest_afz %a : tensor<8xf32>
  %7 = stablehlo.convert %b : (tensor<8xf32>) -> tensor<8xi32>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xi1>, tensor<8xi32>, tensor<8xi32>, tensor<8xf32>, tensor<8xi32>
}
"""


@pytest.mark.oracle
def test_matches_iree_run_module(tmp_path):
    inputs = [np.array([0.5, -1.5, 2.5, 3.0, -0.25, 7.0, 100.0, -3.5], np.float32),
              np.array([2.0, 0.5, -4.0, 3.0, 1.0, -7.5, 0.125, 1e3], np.float32),
              np.array([7, -7, 7, -7, 100, 1, 0, 5], np.int32),
              np.array([2, 2, -2, -2, 3, 1, 4, -5], np.int32)]
    ours = run(ORACLE_PROGRAM, *inputs)
    results = iree_run(iree_compile(ORACLE_PROGRAM, tmp_path), "main", inputs, len(ours), tmp_path)
    for k, (value, theirs) in enumerate(zip(ours, results)):
        if value.dtype.kind == "f":
            np.testing.assert_allclose(value, theirs, rtol=2e-7, err_msg=f"result {k}")
        else:
            np.testing.assert_array_equal(value, theirs.astype(value.dtype), err_msg=f"result {k}")
