"""An elementwise body's scalar ops as LLVM vector instructions, for the epilogues the hand-written
kernels run on their tiles in registers (epilogues.py): each scalar op of a `linalg.generic`'s body
becomes one instruction on vectors of `width` lanes (f32, and the i32 / i1 values of the bit
tricks below).

Transcendentals (math.exp, tanh, erf, ...) are first expanded into arith polynomials by the same
code as the generated loops' `math-polynomial-approximation` (`expanded_body`), so a fused epilogue
computes exactly what the unfused elementwise dispatch computed: a SiLU (x * 1/(1 + e^-x)) or a
sigmoid after a convolution costs its arithmetic on the tile, not a pass over memory of its own.
"""
from __future__ import annotations

import struct
from typing import Optional

from ..ir import types as T
from ..ir.attributes import FloatAttr, IntegerAttr
from ..ir.core import Block, Operation, Region
from ..transforms.polynomial_approximation import PolynomialApproximation

#: f32 arith ops and their LLVM instruction (exact IEEE operations, as the reference computes).
FLOAT_BINARY = {"arith.addf": "fadd", "arith.subf": "fsub", "arith.mulf": "fmul", "arith.divf": "fdiv"}
#: i32 arith ops and their LLVM instruction (two's complement, as arith defines them).
INT_BINARY = {"arith.addi": "add", "arith.subi": "sub", "arith.muli": "mul", "arith.andi": "and",
              "arith.ori": "or", "arith.xori": "xor", "arith.shli": "shl", "arith.shrsi": "ashr",
              "arith.shrui": "lshr"}
#: ops with an LLVM intrinsic of the same semantics (NaN and signed zeros included): its base name.
INTRINSICS = {"arith.maximumf": "llvm.maximum", "arith.minimumf": "llvm.minimum", "arith.maxnumf": "llvm.maxnum",
              "arith.minnumf": "llvm.minnum", "math.fma": "llvm.fma", "math.absf": "llvm.fabs",
              "math.copysign": "llvm.copysign", "math.floor": "llvm.floor", "math.ceil": "llvm.ceil",
              "math.sqrt": "llvm.sqrt"}
#: arith.cmpf's and arith.cmpi's predicates, in the order of their enums (LLVM's fcmp / icmp names).
FCMP = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno",
        "true")
ICMP = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CASTS = {"arith.bitcast": "bitcast", "arith.sitofp": "sitofp", "arith.fptosi": "fptosi"}
_ELEMENTS = {T.f32: "float", T.IntegerType(32): "i32", T.i1: "i1"}
_OTHERS = {"arith.negf", "arith.cmpf", "arith.cmpi", "arith.select", "arith.constant"}


def expanded_body(block: Block) -> Optional[Block]:
    """A copy of `block` (a generic's body) with its transcendentals expanded into arith
    polynomials, as the generated loops compute them; constants it captures are copied in (None
    when it captures any other value). The original is left as it is (the reference device
    interprets it)."""
    copy = Block([a.type for a in block.arguments])
    mapping = dict(zip(block.arguments, copy.arguments))
    for op in block.ops:
        if any(op.regions):
            return None
        for x in op.operands:
            if x in mapping:
                continue
            outer = getattr(x, "op", None)
            if outer is None or outer.name != "arith.constant" or outer.operands:
                return None
            copy.append(outer.clone(mapping))
        copy.append(op.clone(mapping))
    holder = Operation("builtin.module", (), (), {}, [Region([copy])])
    PolynomialApproximation().run(holder)
    return copy


def vectorizable(op: Operation) -> bool:
    """`op` has a vector instruction here and its operand and result types are ones it takes."""
    known = op.name in FLOAT_BINARY or op.name in INT_BINARY or op.name in INTRINSICS or op.name in CASTS or \
        op.name in _OTHERS
    if not known or len(op.results) != 1 or any(t not in _ELEMENTS for t in (*op.operand_types, *op.result_types)):
        return False
    if op.name == "arith.constant":
        return isinstance(op.attributes.get("value"), (FloatAttr, IntegerAttr)) and op.results[0].type != T.i1
    if op.name in ("arith.cmpf", "arith.cmpi"):
        return isinstance(op.attributes.get("predicate"), IntegerAttr)
    return op.name != "arith.select" or op.operand_types[0] == T.i1


def vector_type(t: T.Type, width: int) -> str:
    return f"<{width} x {_ELEMENTS[t]}>"


def splat(value, t: T.Type, width: int) -> str:
    """A constant vector of `width` lanes of `value` (LLVM writes floats as the hex of the equal double)."""
    if t == T.f32:
        bits, = struct.unpack("<Q", struct.pack("<d", float(value)))
        lane = f"float 0x{bits:016X}"
    else:
        lane = f"{_ELEMENTS[t]} {int(value)}"
    return "<" + ", ".join([lane] * width) + ">"


def intrinsic_name(op: Operation, width: int) -> Optional[str]:
    """The vector intrinsic `op` calls, or None."""
    base = INTRINSICS.get(op.name)
    return f"{base}.v{width}f32" if base else None


def declaration(op: Operation, width: int) -> Optional[str]:
    name = intrinsic_name(op, width)
    if name is None:
        return None
    vec = vector_type(T.f32, width)
    return f"declare {vec} @{name}({', '.join([vec] * len(op.operands))})"


def instruction(op: Operation, out: str, operands: list[str], width: int) -> str:
    """The line computing `op` on vectors (its operands' names given) into `out`; constants are
    not instructions (`splat`)."""
    ty = vector_type(op.operand_types[0], width)
    rty = vector_type(op.result_types[0], width)
    if op.name in FLOAT_BINARY:
        return f"  {out} = {FLOAT_BINARY[op.name]} {ty} {operands[0]}, {operands[1]}"
    if op.name in INT_BINARY:
        return f"  {out} = {INT_BINARY[op.name]} {ty} {operands[0]}, {operands[1]}"
    if op.name == "arith.negf":
        return f"  {out} = fneg {ty} {operands[0]}"
    if op.name in CASTS:
        return f"  {out} = {CASTS[op.name]} {ty} {operands[0]} to {rty}"
    if op.name in ("arith.cmpf", "arith.cmpi"):
        floats = op.name == "arith.cmpf"
        predicate = (FCMP if floats else ICMP)[op.attr("predicate").value]   # (verified in range)
        return f"  {out} = {'fcmp' if floats else 'icmp'} {predicate} {ty} {operands[0]}, {operands[1]}"
    if op.name == "arith.select":
        return f"  {out} = select {ty} {operands[0]}, {rty} {operands[1]}, {rty} {operands[2]}"
    args = ", ".join(f"{ty} {x}" for x in operands)
    return f"  {out} = call {rty} @{intrinsic_name(op, width)}({args})"
