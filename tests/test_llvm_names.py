"""The llvm dialect's operand, result and attribute names (MLIR's, from LLVMOps.td), and the
fast path of `Operation.operand` they rely on."""
from __future__ import annotations

import pytest

from mlirtext.api import parse_and_verify
from mlirtext.ir.signatures import OpSignature

PROGRAM = """
llvm.func @f(%a: i32, %b: i32, %p: !llvm.ptr, %s: !llvm.struct<(i32, f32)>) -> i32 {
  %c = llvm.icmp "slt" %a, %b : i32
  %m = llvm.select %c, %a, %b : i1, i32
  %g = llvm.getelementptr %p[%a, 1] : (!llvm.ptr, i32) -> !llvm.ptr, !llvm.struct<(i32, f32)>
  llvm.store %m, %g : i32, !llvm.ptr
  %v = llvm.load %p : !llvm.ptr -> i32
  %i = llvm.insertvalue %v, %s[0] : !llvm.struct<(i32, f32)>
  %r = llvm.call @g(%a, %v) : (i32, i32) -> i32
  %w = llvm.intr.smax(%v, %a) : (i32, i32) -> i32
  llvm.cond_br %c, ^bb1(%r : i32), ^bb1(%a : i32)
^bb1(%x: i32):
  llvm.return %x : i32
}
llvm.func @g(i32, i32) -> i32
"""


def _ops():
    result = parse_and_verify(PROGRAM)
    assert not result.diagnostics, result.diagnostics
    fn = result.module.regions[0].blocks[0].ops[0]
    return fn, {op.name: op for op in fn.walk() if op is not fn}


def test_llvm_ops_read_by_mlir_names():
    fn, ops = _ops()
    a, b, p, s = fn.regions[0].blocks[0].arguments
    assert ops["llvm.icmp"].operand("lhs") is a and ops["llvm.icmp"].operand("rhs") is b
    assert ops["llvm.icmp"].attr("predicate").value == 2
    select = ops["llvm.select"]
    assert select.operand("condition") is ops["llvm.icmp"].results[0]
    assert (select.operand("trueValue"), select.operand("falseValue")) == (a, b)
    gep = ops["llvm.getelementptr"]
    assert gep.operand("base") is p and gep.operands_named("dynamicIndices") == [a]
    assert list(gep.attr("rawConstantIndices").values) == [-2147483648, 1]
    store = ops["llvm.store"]
    assert store.operand("value") is select.results[0] and store.operand("addr") is gep.results[0]
    assert ops["llvm.load"].operand("addr") is p
    insert = ops["llvm.insertvalue"]
    assert insert.operand("container") is s and insert.operand("value") is ops["llvm.load"].results[0]
    call = ops["llvm.call"]
    assert call.operands_named("callee_operands") == [a, ops["llvm.load"].results[0]]
    assert call.operands_named("op_bundle_operands") == [] and call.attr("callee").root == "g"
    assert ops["llvm.intr.smax"].operand("a") is ops["llvm.load"].results[0]
    cond_br = ops["llvm.cond_br"]
    assert cond_br.operand("condition") is ops["llvm.icmp"].results[0]
    assert cond_br.operands_named("trueDestOperands") == [call.results[0]]
    assert cond_br.operands_named("falseDestOperands") == [a]
    assert ops["llvm.return"].operands_named("arg") == [fn.regions[0].blocks[1].arguments[0]]


def test_a_name_the_op_lacks_is_a_key_error():
    _, ops = _ops()
    with pytest.raises(KeyError):
        ops["llvm.load"].operand("value")
    with pytest.raises(KeyError):
        ops["llvm.call"].operand("callee_operands")  # a group of two is no single operand


def test_bounds_need_no_segment_sizes_up_to_one_variadic_group():
    values = list(range(7))
    one = OpSignature.of(("value", "memref", "indices*", "last"), ("res",))
    assert values[one.bounds("operands", "value")] == [0] and values[one.bounds("operands", "memref")] == [1]
    assert values[one.bounds("operands", "indices")] == [2, 3, 4, 5]
    assert values[one.bounds("operands", "last")] == [6]
    assert one.bounds("results", "res") == slice(0, 1) and one.bounds("operands", "res") is None
    two = OpSignature.of(("condition", "trueDestOperands*", "falseDestOperands*"))
    assert values[two.bounds("operands", "condition")] == [0]   # ahead of both groups
    assert two.bounds("operands", "trueDestOperands") is None     # operandSegmentSizes decides
    assert two.bounds("operands", "falseDestOperands") is None
