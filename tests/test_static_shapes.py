"""refine-static-shapes (and canonicalize, which includes its patterns): sizes fixed by constants
and casts reach the tensors that carry them, so a program that only looks dynamic compiles to a
module file with static buffers and computes the same numbers."""
from __future__ import annotations

import numpy as np
import pytest

from mlirtext import runtime
from mlirtext.api import parse_and_verify
from mlirtext.interpreter import Interpreter

from .oracle import generic_forms
from .test_transforms import run_pipeline

# A helper called with constant sizes, its result hidden behind a barrier and tie_shape, as
# IREE's e2e pack tests write it.
HELPER = """
func.func private @iota_2d(%h : index, %w : index) -> tensor<?x?xi32> {
  %init = tensor.empty(%h, %w) : tensor<?x?xi32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]} outs(%init : tensor<?x?xi32>) {
  ^bb0(%b : i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %row = arith.muli %i, %w : index
    %k = arith.addi %row, %j : index
    %v = arith.index_cast %k : index to i32
    linalg.yield %v : i32
  } -> tensor<?x?xi32>
  %b = util.optimization_barrier %s : tensor<?x?xi32>
  %t = flow.tensor.tie_shape %b : tensor<?x?xi32>{%h, %w}
  return %t : tensor<?x?xi32>
}
func.func @main(%x : tensor<6x4xi32>) -> tensor<4x6xi32> {
  %h = arith.constant 6 : index
  %w = arith.constant 4 : index
  %0 = call @iota_2d(%h, %w) : (index, index) -> tensor<?x?xi32>
  %s = tensor.cast %0 : tensor<?x?xi32> to tensor<6x4xi32>
  %e = tensor.empty() : tensor<6x4xi32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                          affine_map<(d0, d1) -> (d0, d1)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%s, %x : tensor<6x4xi32>, tensor<6x4xi32>) outs(%e : tensor<6x4xi32>) {
  ^bb0(%p : i32, %q : i32, %r : i32):
    %a = arith.addi %p, %q : i32
    linalg.yield %a : i32
  } -> tensor<6x4xi32>
  %te = tensor.empty() : tensor<4x6xi32>
  %t = linalg.transpose ins(%sum : tensor<6x4xi32>) outs(%te : tensor<4x6xi32>) permutation = [1, 0]
  return %t : tensor<4x6xi32>
}
"""


def test_constant_sizes_reach_every_tensor_and_the_meaning_stays():
    out = run_pipeline(HELPER, "inline,refine-static-shapes")
    assert "?" not in out.split("func.func @main", 1)[1], out
    assert "tensor.empty() : tensor<6x4xi32>" in out and "util.optimization_barrier" in out
    x = np.arange(24, dtype=np.int32).reshape(6, 4) * 7
    want = Interpreter(parse_and_verify(HELPER).module).call("main", [x])[0]
    got = Interpreter(parse_and_verify(out).module).call("main", [x])[0]
    np.testing.assert_array_equal(got, want)
    assert generic_forms([out]) is not None  # iree-opt accepts it (skipped without IREE)


def test_only_constant_sizes_become_static():
    text = """
func.func @f(%n : index) -> tensor<?x8xf32> {
  %c3 = arith.constant 3 : index
  %e = tensor.empty(%c3, %n) : tensor<?x?xf32>
  %c = tensor.cast %e : tensor<?x?xf32> to tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}"""
    out = run_pipeline(text, "refine-static-shapes")
    assert "tensor.empty(%n) : tensor<3x?xf32>" in out, out
    assert out.count("tensor.cast") == 1 and "tensor<3x?xf32> to tensor<?x8xf32>" in out, out


def test_a_linalg_op_on_a_cast_works_on_the_static_source_and_casts_back_for_its_users():
    text = """
func.func @f(%a : tensor<4x5xf32>) -> tensor<?x?xf32> {
  %d = tensor.cast %a : tensor<4x5xf32> to tensor<?x?xf32>
  %e = tensor.cast %a : tensor<4x5xf32> to tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) {
  ^bb0(%x : f32, %y : f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}"""
    out = run_pipeline(text, "refine-static-shapes")
    assert "ins(%a : tensor<4x5xf32>) outs(%a : tensor<4x5xf32>)" in out, out
    assert "} -> tensor<4x5xf32>" in out and "tensor<4x5xf32> to tensor<?x?xf32>" in out, out
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    got = Interpreter(parse_and_verify(out).module).call("f", [a])[0]
    np.testing.assert_array_equal(got, 2 * a)


@pytest.mark.parametrize("device", ["local-sync", "local-task"])
def test_a_program_that_only_looks_dynamic_compiles_and_runs(device):
    module = runtime.load_module(runtime.compile_text(HELPER), device=device)
    x = np.arange(24, dtype=np.int32).reshape(6, 4) - 5
    want = Interpreter(parse_and_verify(HELPER).module).call("main", [x])[0]
    np.testing.assert_array_equal(module.main(x), want)
