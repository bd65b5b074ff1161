"""Sum reductions in llvm-cpu kernels get `reassoc` on their add (and only they), so LLVM
vectorises them; the sums stay within the bound of any summation order."""
from __future__ import annotations

import re

import numpy as np

from mlirtext import runtime
from mlirtext.api import parse_and_verify
from mlirtext.compiler.driver import compile_source
from mlirtext.compiler.module_writer import pack
from mlirtext.vm.modfile import read_module_file
from mlirtext.compiler.reductions import mark_reassociable_sums

from .test_vm_programs import ROOT

LOOPS = """func.func @f(%x: memref<4x8xf32>, %acc: memref<4xf32>, %y: memref<4x8xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %a = memref.load %x[%i, %j] : memref<4x8xf32>
      %s = memref.load %acc[%i] : memref<4xf32>
      %sum = arith.addf %a, %s : f32
      memref.store %sum, %acc[%i] : memref<4xf32>
      %twice = arith.addf %a, %a : f32
      memref.store %twice, %y[%i, %j] : memref<4x8xf32>
      %w = memref.load %z[%j] : memref<8xf32>
      %moved = arith.addf %w, %a : f32
      memref.store %moved, %z[%j] : memref<8xf32>
    }
  }
  return
}"""


def test_only_the_add_of_a_sum_over_the_loop_is_flagged():
    result = parse_and_verify(LOOPS, "loops.mlir")
    assert result.ok
    fn = next(op for op in result.module.walk() if op.name == "func.func")
    assert mark_reassociable_sums(fn) == 1
    flagged = [op.results[0].name for op in fn.walk() if op.name == "arith.addf" and "fastmath" in op.attributes]
    # (%twice is no sum; %moved adds into z[j], a new element at every step of the loop)
    assert flagged == ["sum"]


def test_softmax_sums_are_vectorised_and_the_polynomial_keeps_its_order():
    ir = compile_source((ROOT / "benchmarks" / "programs" / "softmax.mlir").read_text(), "softmax.mlir").llvm_ir
    assert re.search(r"fadd reassoc <(8|16) x float>", ir)   # (16 wide on an AVX-512 host)
    # exp's range reduction adds and subtracts 1.5 * 2^23 to round: never reassociated
    assert all("reassoc" not in line for line in ir.splitlines() if "0x4168000000000000" in line)


def test_a_long_sum_with_cancellation_is_within_the_bound_of_any_order():
    text = """func.func @rowsum(%x: tensor<64x1000xf32>) -> tensor<64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.reduce ins(%x : tensor<64x1000xf32>) outs(%f : tensor<64xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %s : tensor<64xf32>
}"""
    compiled = compile_source(text, "sum.mlir")
    assert re.search(r"fadd reassoc <(8|16) x float>", compiled.llvm_ir)
    data = pack(compiled)
    x = np.random.default_rng(4).standard_normal((64, 1000)).astype(np.float32) * 100
    exact = x.astype(np.float64).sum(axis=1)
    bound = 1000 * 2.0 ** -24 * np.abs(x.astype(np.float64)).sum(axis=1)
    outs = {d: runtime.load_module(data, device=d).rowsum(x) for d in ("local-sync", "local-task")}
    assert np.all(np.abs(outs["local-sync"] - exact) <= bound)
    assert np.array_equal(outs["local-sync"], outs["local-task"])
