"""Reference-interpreter semantics of StableHLO / MHLO control flow: while, if, case, map,
composite, optimization_barrier; regions that capture outer values; the mhlo spellings."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter, InterpreterError


def run(program: str, name: str, *args):
    module = parse_and_verify(program).module
    return Interpreter(module).call(name, list(args))


WHILE = """
func.func @f(%n: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %0:2 = stablehlo.while(%i = %zero, %acc = %zero) : tensor<i64>, tensor<i64>
    cond {
      %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %i2 = stablehlo.add %i, %one : tensor<i64>
      %a2 = stablehlo.add %acc, %i2 : tensor<i64>
      stablehlo.return %i2, %a2 : tensor<i64>, tensor<i64>
    }
  return %0#0, %0#1 : tensor<i64>, tensor<i64>
}"""


def test_while_counts_and_captures_outer_values():
    i, acc = run(WHILE, "f", np.array(10, np.int64))
    assert int(i) == 10 and int(acc) == 55
    i, acc = run(WHILE, "f", np.array(-3, np.int64))  # condition false at once
    assert int(i) == 0 and int(acc) == 0


IF_CASE = """
func.func @f(%p: tensor<i1>, %k: tensor<i32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "stablehlo.if"(%p) ({
    %n = stablehlo.negate %x : tensor<2xf32>
    stablehlo.return %n : tensor<2xf32>
  }, {
    stablehlo.return %x : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  %1 = "stablehlo.case"(%k) ({
    %c = stablehlo.constant dense<10.0> : tensor<2xf32>
    stablehlo.return %c : tensor<2xf32>
  }, {
    %c = stablehlo.constant dense<20.0> : tensor<2xf32>
    stablehlo.return %c : tensor<2xf32>
  }, {
    %c = stablehlo.constant dense<30.0> : tensor<2xf32>
    stablehlo.return %c : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  return %0, %1 : tensor<2xf32>, tensor<2xf32>
}"""


@pytest.mark.parametrize("k, want", [(0, 10.0), (1, 20.0), (2, 30.0), (3, 30.0), (-1, 30.0), (-2147483648, 30.0)])
def test_case_out_of_range_takes_the_last_branch(k, want):
    x = np.array([1.0, -2.0], np.float32)
    _, c = run(IF_CASE, "f", np.array(True), np.array(k, np.int32), x)
    assert c.tolist() == [want, want]


def test_if_takes_the_branch_of_the_predicate():
    x = np.array([1.0, -2.0], np.float32)
    t, _ = run(IF_CASE, "f", np.array(True), np.array(0, np.int32), x)
    f, _ = run(IF_CASE, "f", np.array(False), np.array(0, np.int32), x)
    assert t.tolist() == [-1.0, 2.0] and f.tolist() == [1.0, -2.0]


def test_map_runs_the_body_on_whole_arrays():
    prog = """
func.func @f(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "stablehlo.map"(%a, %b) ({
    ^bb0(%x: tensor<i32>, %y: tensor<i32>):
      %m = stablehlo.multiply %x, %y : tensor<i32>
      %s = stablehlo.add %m, %x : tensor<i32>
      stablehlo.return %s : tensor<i32>
  }) {dimensions = array<i64: 0, 1>} : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}"""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.full((2, 3), 2 ** 31 - 1, np.int32)
    (out,) = run(prog, "f", a, b)
    np.testing.assert_array_equal(out, (a.astype(np.int64) * b + a).astype(np.int32))  # wraps


def test_composite_calls_its_decomposition_and_barrier_is_identity():
    prog = """
func.func @impl(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.subtract %x, %y : tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = stablehlo.composite "my.sub" %x, %y {decomposition = @impl} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1:2 = stablehlo.optimization_barrier %0, %x : tensor<3xf32>, tensor<3xf32>
  return %1#0, %1#1 : tensor<3xf32>, tensor<3xf32>
}"""
    x, y = np.array([1, 2, 3], np.float32), np.array([3, 2, 1], np.float32)
    d, same = run(prog, "f", x, y)
    assert d.tolist() == [-2, 0, 2] and same.tolist() == [1, 2, 3]


def test_while_with_a_non_scalar_predicate_is_an_error():
    prog = """
func.func @f(%x: tensor<2xi1>) -> tensor<2xi1> {
  %0 = "stablehlo.while"(%x) ({
    ^bb0(%a: tensor<2xi1>):
      stablehlo.return %a : tensor<2xi1>
  }, {
    ^bb0(%a: tensor<2xi1>):
      stablehlo.return %a : tensor<2xi1>
  }) : (tensor<2xi1>) -> tensor<2xi1>
  return %0 : tensor<2xi1>
}"""
    module = parse_and_verify(prog).module
    if module is None:
        pytest.skip("the verifier rejects a non-scalar while predicate")
    with pytest.raises(InterpreterError, match="scalar predicate"):
        Interpreter(module).call("f", [np.array([True, False])])


MHLO = """
func.func @f(%x: tensor<3x4xf32>, %n: tensor<i32>) -> (tensor<3xf32>, tensor<3x4xf32>, tensor<i32>, tensor<4xf32>) {
  %init = mhlo.constant dense<0.0> : tensor<f32>
  %0 = "mhlo.reduce"(%x, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "mhlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "mhlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = dense<1> : tensor<1xi64>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  %1 = "mhlo.sort"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %c = "mhlo.compare"(%a, %b) {comparison_direction = #mhlo<comparison_direction GT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "mhlo.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 1 : i64, is_stable = true} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %zero = mhlo.constant dense<0> : tensor<i32>
  %one = mhlo.constant dense<1> : tensor<i32>
  %2 = "mhlo.while"(%zero) ({
    ^bb0(%i: tensor<i32>):
      %c = "mhlo.compare"(%i, %n) {comparison_direction = #mhlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "mhlo.return"(%c) : (tensor<i1>) -> ()
  }, {
    ^bb0(%i: tensor<i32>):
      %j = "mhlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "mhlo.return"(%j) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  %ninf = mhlo.constant dense<0xFF800000> : tensor<f32>
  %3 = "mhlo.reduce_window"(%x, %ninf) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %m = "mhlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "mhlo.return"(%m) : (tensor<f32>) -> ()
  }) {window_dimensions = dense<[3, 1]> : tensor<2xi64>, window_strides = dense<1> : tensor<2xi64>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<1x4xf32>
  %4 = "mhlo.reshape"(%3) : (tensor<1x4xf32>) -> tensor<4xf32>
  return %0, %1, %2, %4 : tensor<3xf32>, tensor<3x4xf32>, tensor<i32>, tensor<4xf32>
}"""


def test_mhlo_spellings():
    x = np.array([[1, 4, 2, 3], [0, -1, 5, 5], [9, 8, 7, 6]], np.float32)
    s, srt, i, mx = run(MHLO, "f", x, np.array(4, np.int32))
    assert s.tolist() == [10, 9, 30]
    np.testing.assert_array_equal(srt, -np.sort(-x, axis=1))
    assert int(i) == 4
    assert mx.tolist() == [9, 8, 7, 6]
