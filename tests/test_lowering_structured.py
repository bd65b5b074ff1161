"""Lowering of structured and control-flow ops (gather/scatter, pad, slices, reductions with any
body, reduce_window, convolution, sort, while/if/case, TOSA pooling/pad/gather/while/if): every
level keeps the meaning (--check-semantics on seeded random inputs) and iree-opt accepts it."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter

from .oracle import generic_forms
from .test_lowering import lower

INDEXING = """
func.func @main(%x: tensor<4x8xf32>, %idx: tensor<2x1xi32>, %s: tensor<i32>, %u: tensor<2x3xf32>)
    -> (tensor<2x8xf32>, tensor<2x3xf32>, tensor<4x8xf32>, tensor<9x10xf32>, tensor<2x3xf32>, tensor<3x8xf32>) {
  %z = stablehlo.constant dense<0.5> : tensor<f32>
  %sel = stablehlo.constant dense<[0, 3, 2]> : tensor<3xi32>
  %g = "stablehlo.gather"(%x, %idx) {dimension_numbers = #stablehlo.gather<offset_dims = [1],
       collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
       slice_sizes = array<i64: 1, 8>, indices_are_sorted = false} : (tensor<4x8xf32>, tensor<2x1xi32>) -> tensor<2x8xf32>
  %ds = stablehlo.dynamic_slice %x, %s, %s, sizes = [2, 3] : (tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  %dus = stablehlo.dynamic_update_slice %x, %u, %s, %s
       : (tensor<4x8xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<4x8xf32>
  %p = stablehlo.pad %x, %z, low = [1, -1], high = [1, 0], interior = [1, 2]
       : (tensor<4x8xf32>, tensor<f32>) -> tensor<9x21xf32>
  %p2 = stablehlo.slice %p [0:9, 1:21:2] : (tensor<9x21xf32>) -> tensor<9x10xf32>
  %sl = stablehlo.slice %x [1:4:2, 0:8:3] : (tensor<4x8xf32>) -> tensor<2x3xf32>
  %t = "stablehlo.torch_index_select"(%x, %sel) {dim = 0 : i64, batch_dims = 0 : i64}
       : (tensor<4x8xf32>, tensor<3xi32>) -> tensor<3x8xf32>
  return %g, %ds, %dus, %p2, %sl, %t
       : tensor<2x8xf32>, tensor<2x3xf32>, tensor<4x8xf32>, tensor<9x10xf32>, tensor<2x3xf32>, tensor<3x8xf32>
}
"""

REDUCTIONS = """
func.func @main(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>, %img: tensor<1x5x5x2xf32>, %k: tensor<3x3x1x4xf32>,
                %a: tensor<3x4xi32>, %b: tensor<4x2xi32>)
    -> (tensor<4xf32>, tensor<4xi32>, tensor<2x4xf32>, tensor<1x3x3x4xf32>, tensor<3x2xi32>, tensor<4x8xi1>) {
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.reduce(%x init: %ninf), (%i init: %zi) across dimensions = [1]
       : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
   reducer(%v1: tensor<f32>, %v2: tensor<f32>) (%i1: tensor<i32>, %i2: tensor<i32>) {
    %gt = stablehlo.compare GT, %v1, %v2 : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = stablehlo.select %gt, %v1, %v2 : tensor<i1>, tensor<f32>
    %n = stablehlo.select %gt, %i1, %i2 : tensor<i1>, tensor<i32>
    stablehlo.return %v, %n : tensor<f32>, tensor<i32>
  }
  %w = "stablehlo.reduce_window"(%x, %ninf) ({
    ^bb0(%l: tensor<f32>, %r: tensor<f32>):
      %m = stablehlo.maximum %l, %r : tensor<f32>
      stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>,
      padding = dense<[[0, 0], [1, 1]]> : tensor<2x2xi64>} : (tensor<4x8xf32>, tensor<f32>) -> tensor<2x4xf32>
  %c = stablehlo.convolution(%img, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
       window = {stride = [2, 2], pad = [[1, 1], [1, 1]], rhs_dilate = [1, 1]}
       {batch_group_count = 1 : i64, feature_group_count = 2 : i64}
       : (tensor<1x5x5x2xf32>, tensor<3x3x1x4xf32>) -> tensor<1x3x3x4xf32>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<3x4xi32>, tensor<4x2xi32>) -> tensor<3x2xi32>
  %o = stablehlo.compare LT, %x, %x, TOTALORDER : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  return %0#0, %0#1, %w, %c, %d, %o
       : tensor<4xf32>, tensor<4xi32>, tensor<2x4xf32>, tensor<1x3x3x4xf32>, tensor<3x2xi32>, tensor<4x8xi1>
}
"""

SCATTER_SORT = """
func.func @main(%x: tensor<5x3xi32>, %idx: tensor<2x1xi32>, %u: tensor<2x3xi32>, %y: tensor<4x6xf32>,
                %src: tensor<2x2xf32>, %keys: tensor<2x5xf32>, %vals: tensor<2x5xi32>)
    -> (tensor<5x3xi32>, tensor<4x6xf32>, tensor<2x5xf32>, tensor<2x5xi32>) {
  %s = "stablehlo.scatter"(%x, %idx, %u) ({
    ^bb0(%a: tensor<i32>, %b: tensor<i32>):
      %0 = stablehlo.add %a, %b : tensor<i32>
      stablehlo.return %0 : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0],
      scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false,
      unique_indices = false} : (tensor<5x3xi32>, tensor<2x1xi32>, tensor<2x3xi32>) -> tensor<5x3xi32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %ss = "stablehlo.select_and_scatter"(%y, %src, %zero) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %0 = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %0 : tensor<i1>
  }, {
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %0 = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %0 : tensor<f32>
  }) {window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 3>}
     : (tensor<4x6xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x6xf32>
  %r:2 = "stablehlo.sort"(%keys, %vals) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
      %0 = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %0 : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<2x5xf32>, tensor<2x5xi32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %s, %ss, %r#0, %r#1 : tensor<5x3xi32>, tensor<4x6xf32>, tensor<2x5xf32>, tensor<2x5xi32>
}
"""

CONVOLUTIONS = """
func.func @main(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x3x2xf32>, %dw: tensor<3x3x2x2xf32>, %b: tensor<3xf32>,
                %db: tensor<4xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x3x3x4xf32>) {
  %zp = tosa.const values(dense<0.0> : tensor<1xf32>) : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp pad([1, 1, 1, 1]) stride([2, 2]) dilation([1, 1]) acc_type(f32)
     : (tensor<1x5x5x2xf32>, tensor<3x3x3x2xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x3xf32>
  %d = tosa.depthwise_conv2d %x, %dw, %db, %zp, %zp pad([1, 1, 1, 1]) stride([2, 2]) dilation([1, 1]) acc_type(f32)
     : (tensor<1x5x5x2xf32>, tensor<3x3x2x2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x4xf32>
  return %c, %d : tensor<1x3x3x3xf32>, tensor<1x3x3x4xf32>
}
"""

CONTROL = """
func.func @main(%x: tensor<3xf32>, %p: tensor<i1>, %k: tensor<i32>) -> (tensor<3xf32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %five = stablehlo.constant dense<5> : tensor<i64>
  %w:2 = stablehlo.while(%acc = %x, %i = %zero) : tensor<3xf32>, tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %five : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %d = stablehlo.add %acc, %x : tensor<3xf32>
    %n = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %d, %n : tensor<3xf32>, tensor<i64>
  }
  %f = "stablehlo.if"(%p) ({
    %e = stablehlo.exponential %x : tensor<3xf32>
    stablehlo.return %e : tensor<3xf32>
  }, {
    stablehlo.return %x : tensor<3xf32>
  }) : (tensor<i1>) -> tensor<3xf32>
  %c = "stablehlo.case"(%k) ({
    %n = stablehlo.negate %x : tensor<3xf32>
    stablehlo.return %n : tensor<3xf32>
  }, {
    %m = stablehlo.multiply %x, %x : tensor<3xf32>
    stablehlo.return %m : tensor<3xf32>
  }, {
    stablehlo.return %x : tensor<3xf32>
  }) : (tensor<i32>) -> tensor<3xf32>
  return %w#0, %w#1, %f, %c : tensor<3xf32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>
}
"""

TOSA = """
func.func @main(%x: tensor<1x4x6x2xf32>, %v: tensor<1x4x3xi32>, %i: tensor<1x2xi32>, %n: tensor<i32>, %c: tensor<i1>)
    -> (tensor<1x2x3x2xf32>, tensor<1x6x7x2xf32>, tensor<1x2x3xi32>, tensor<i32>, tensor<i32>) {
  %m = tosa.max_pool2d %x {kernel = array<i64: 2, 2>, stride = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>}
     : (tensor<1x4x6x2xf32>) -> tensor<1x2x3x2xf32>
  %pads = tosa.const_shape {values = dense<[0, 0, 1, 1, 0, 1, 0, 0]> : tensor<8xindex>} : () -> !tosa.shape<8>
  %pv = "tosa.const"() <{values = dense<2.5> : tensor<1xf32>}> : () -> tensor<1xf32>
  %p = tosa.pad %x, %pads, %pv : (tensor<1x4x6x2xf32>, !tosa.shape<8>, tensor<1xf32>) -> tensor<1x6x7x2xf32>
  %cl = tosa.clamp %i {min_val = 0 : i32, max_val = 3 : i32} : (tensor<1x2xi32>) -> tensor<1x2xi32>
  %g = tosa.gather %v, %cl : (tensor<1x4x3xi32>, tensor<1x2xi32>) -> tensor<1x2x3xi32>
  %w = tosa.while_loop (%a = %n) : (tensor<i32>) -> tensor<i32> {
    %lim = "tosa.const"() <{values = dense<7> : tensor<i32>}> : () -> tensor<i32>
    %cond = tosa.greater %lim, %a : (tensor<i32>, tensor<i32>) -> tensor<i1>
    tosa.yield %cond : tensor<i1>
  } do {
  ^bb0(%a: tensor<i32>):
    %two = "tosa.const"() <{values = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %s = tosa.add %a, %two : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tosa.yield %s : tensor<i32>
  }
  %f = tosa.cond_if %c : tensor<i1> -> tensor<i32> {
    tosa.yield %n : tensor<i32>
  } else {
    %s = tosa.add %n, %n : (tensor<i32>, tensor<i32>) -> tensor<i32>
    tosa.yield %s : tensor<i32>
  }
  return %m, %p, %g, %w, %f : tensor<1x2x3x2xf32>, tensor<1x6x7x2xf32>, tensor<1x2x3xi32>, tensor<i32>, tensor<i32>
}
"""

PROGRAMS = {"indexing": INDEXING, "reductions": REDUCTIONS, "scatter_sort": SCATTER_SORT, "control": CONTROL,
            "tosa": TOSA, "convolutions": CONVOLUTIONS}
LEVELS = {"indexing": ("tosa", "linalg", "loops", "llvm"), "reductions": ("tosa", "linalg", "loops", "llvm"),
          "scatter_sort": ("tosa", "linalg", "loops", "llvm"), "control": ("tosa", "linalg", "loops", "llvm"),
          "tosa": ("linalg", "loops", "llvm"), "convolutions": ("linalg", "loops", "llvm")}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_each_level_keeps_meaning(name):
    for level in LEVELS[name]:
        text, _ = lower(PROGRAMS[name], level)
        gone = {"tosa": "stablehlo.", "linalg": "tosa.", "loops": "linalg.", "llvm": "memref."}[level]
        assert gone not in text, f"{gone} ops left at the {level} level"


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_level_is_accepted_by_iree_opt(name):
    texts = [lower(PROGRAMS[name], level)[0] for level in LEVELS[name]]
    assert generic_forms(texts) is not None, "iree-opt rejected a lowered module"


def test_llvm_level_gives_the_source_numbers_on_chosen_inputs():
    """Indices in range and out of it (gather and dynamic_slice clamp, scatter skips)."""
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((4, 8)).astype(np.float32), np.array([[3], [-2]], np.int32),
            np.array(7, np.int32), rng.standard_normal((2, 3)).astype(np.float32)]
    text, _ = lower(INDEXING, "llvm")
    want = Interpreter(parse_and_verify(INDEXING).module).call("main", [a.copy() for a in args])
    got = Interpreter(parse_and_verify(text).module).call("main", [a.copy() for a in args])
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(g, w)


def test_while_loop_and_branches_at_the_loops_level():
    text, _ = lower(CONTROL, "loops")
    assert "scf.while" in text and "scf.if" in text and "tensor<" not in text.split("mlirtext.abi")[0]
    args = [np.array([1, 2, 3], np.float32), np.array(True), np.array(7, np.int32)]
    got = Interpreter(parse_and_verify(text).module).call("main", args)
    np.testing.assert_allclose(got[0], [6, 12, 18])
    assert int(got[1]) == 5
    np.testing.assert_allclose(got[2], np.exp([1, 2, 3]), rtol=1e-6)
    np.testing.assert_allclose(got[3], [1, 2, 3])  # index out of range: the last branch


@pytest.mark.oracle
def test_large_scatters_update_in_place_with_loops_on_tensors(monkeypatch):
    """Past the cost bound a scatter becomes scf.for loops carrying the result tensor
    (tensor.insert per update), bufferized to in-place stores."""
    from mlirtext.transforms.conversions import hlo_generic
    monkeypatch.setattr(hlo_generic, "COST_LIMIT", 0)
    program = SCATTER_SORT.split("  %zero =")[0].replace(
        "-> (tensor<5x3xi32>, tensor<4x6xf32>, tensor<2x5xf32>, tensor<2x5xi32>)", "-> tensor<5x3xi32>") + \
        "  return %s : tensor<5x3xi32>\n}\n"
    texts = []
    for level in ("tosa", "linalg", "loops", "llvm"):
        text, _ = lower(program, level)
        texts.append(text)
    assert "tensor.insert" in texts[1] and "scf.for" in texts[1]
    assert generic_forms(texts) is not None
