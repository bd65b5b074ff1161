"""Scalar bodies for the hlo -> linalg lowerings: a builder that appends arith/math/index ops
to a block (`Scalar`), the scalar form of an HLO op (`scalar_op`: elementwise ops, compares
with StableHLO's TOTALORDER, conversions) and `scalarize`, which copies an HLO region working
on 0-d tensors (reduce, scatter, sort comparators, ...) into a body op by op.
"""
from __future__ import annotations

from typing import Optional

from ...dialects.hlo_attrs import enum_word
from ...ir import types as T
from ...ir.attributes import FloatAttr, IntegerAttr
from ...ir.core import Block, Operation
from .build import FASTMATH_NONE, common_cast, short_name
from .hlo_unsigned import guarded_shift, is_unsigned, unsigned_scalar_op

NO_FASTMATH = {"fastmath": FASTMATH_NONE}


def is_arith_element(t: T.Type) -> bool:
    """An element type the arith dialect works on: float or signless integer."""
    e = T.element_type(t)
    return T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless


class Scalar:
    """Appends scalar ops (arith/math, index arithmetic, linalg.index) to a block."""

    def __init__(self, block: Block):
        self.block = block
        self._indices: dict[int, object] = {}

    def op(self, name: str, operands, result_type: T.Type, attributes=None, regions=()):
        op = Operation(name, list(operands), [result_type] if result_type is not None else [],
                       attributes or {}, list(regions))
        self.block.append(op)
        return op.results[0] if op.results else op

    def const(self, value, t: T.Type):
        attr = FloatAttr(float(value), t) if T.is_float(t) else IntegerAttr(int(value), t)
        return self.op("arith.constant", [], t, {"value": attr})

    def index(self, d: int):
        if d not in self._indices:
            self._indices[d] = self.op("linalg.index", [], T.index, {"dim": IntegerAttr(d, T.i64)})
        return self._indices[d]

    def c(self, n: int):
        return self.const(n, T.index)

    def add(self, a, b):
        return self.op("arith.addi", [a, b], a.type)

    def sub(self, a, b):
        return self.op("arith.subi", [a, b], a.type)

    def mul(self, a, b):
        return self.op("arith.muli", [a, b], a.type)

    def cmpi(self, pred: int, a, b):
        return self.op("arith.cmpi", [a, b], T.i1, {"predicate": IntegerAttr(pred, T.i64)})

    def and_(self, a, b):
        if a is None:
            return b
        return self.op("arith.andi", [a, b], T.i1)

    def select(self, cond, a, b):
        return self.op("arith.select", [cond, a, b], a.type)

    def clamp(self, x, low: int, high: int):
        """x clamped into [low, high] (index values)."""
        x = self.op("arith.maxsi", [x, self.c(low)], T.index)
        return self.op("arith.minsi", [x, self.c(high)], T.index)

    def to_index(self, x):
        if isinstance(x.type, T.IndexType):
            return x
        return self.op("arith.index_cast", [x], T.index)

    def extract(self, tensor, indices):
        return self.op("tensor.extract", [tensor, *indices], tensor.type.element)


def is_signless_int(t) -> bool:
    return isinstance(t, T.IntegerType) and t.is_signless


_FLOAT_UNARY = {"exponential": "math.exp", "log": "math.log", "sqrt": "math.sqrt", "rsqrt": "math.rsqrt",
                "tanh": "math.tanh", "floor": "math.floor", "ceil": "math.ceil", "abs": "math.absf",
                "negate": "arith.negf", "sine": "math.sin", "cosine": "math.cos",
                "exponential_minus_one": "math.expm1", "log_plus_one": "math.log1p"}
_FLOAT_BINARY = {"add": "arith.addf", "subtract": "arith.subf", "multiply": "arith.mulf",
                 "divide": "arith.divf", "maximum": "arith.maximumf", "minimum": "arith.minimumf",
                 "remainder": "arith.remf", "power": "math.powf", "atan2": "math.atan2"}
_INT_BINARY = {"add": "arith.addi", "subtract": "arith.subi", "multiply": "arith.muli",
               "maximum": "arith.maxsi", "minimum": "arith.minsi", "and": "arith.andi", "or": "arith.ori",
               "xor": "arith.xori"}
#: StableHLO defines every shift amount (>= the width, or negative: 0, or the sign for an arithmetic
#: shift right); arith's shifts are poison there, so each is guarded (see guarded_shift).
_SHIFTS = {"shift_left": "arith.shli", "shift_right_logical": "arith.shrui",
           "shift_right_arithmetic": "arith.shrsi"}
_BOOL_BINARY = {"add": "arith.ori", "multiply": "arith.andi", "maximum": "arith.ori", "minimum": "arith.andi",
                "and": "arith.andi", "or": "arith.ori", "xor": "arith.xori"}
#: comparison direction -> (arith.cmpf predicate, signed arith.cmpi predicate, unsigned arith.cmpi predicate)
_PREDICATES = {"EQ": (1, 0, 0), "NE": (13, 1, 1), "LT": (4, 2, 6), "LE": (5, 3, 7), "GT": (2, 4, 8),
               "GE": (3, 5, 9)}


def compare_scalar(b: Scalar, direction: str, kind: Optional[str], x, y):
    """`x direction y` on scalars as StableHLO compares (TOTALORDER included); None if unsupported."""
    t = x.type
    if direction not in _PREDICATES:
        return None
    fpred, spred, upred = _PREDICATES[direction]
    if T.is_float(t):
        if kind == "TOTALORDER":
            x, y = _total_order_key(b, x), _total_order_key(b, y)
            return b.cmpi(spred, x, y)
        return b.op("arith.cmpf", [x, y], T.i1, {"predicate": IntegerAttr(fpred, T.i64), **NO_FASTMATH})
    if not is_signless_int(t):
        return None
    unsigned = kind == "UNSIGNED" or t == T.i1
    return b.cmpi(upred if unsigned else spred, x, y)


def _total_order_key(b: Scalar, x):
    """An integer that orders as IEEE totalOrder orders x: the bits, with the magnitude bits
    flipped for negative numbers (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN)."""
    width = x.type.width
    it = T.IntegerType(width)
    bits = b.op("arith.bitcast", [x], it)
    sign = b.op("arith.shrsi", [bits, b.const(width - 1, it)], it)  # all ones for negatives
    mask = b.op("arith.shrui", [sign, b.const(1, it)], it)          # magnitude bits of them
    return b.op("arith.xori", [bits, mask], it)


def cast_scalar(b: Scalar, x, dst: T.Type):
    common = common_cast(b, x, dst)
    if common is not None:
        return common
    src = x.type
    if is_signless_int(src) and T.is_float(dst):
        return b.op("arith.sitofp", [x], dst)
    if T.is_float(src) and dst == T.i1:
        return b.op("arith.cmpf", [x, b.const(0.0, src)], T.i1, {"predicate": IntegerAttr(13, T.i64), **NO_FASTMATH})
    if T.is_float(src) and is_signless_int(dst):
        return b.op("arith.fptosi", [x], dst)
    if is_signless_int(src) and dst == T.i1:
        return b.cmpi(1, x, b.const(0, src))
    if src == T.i1 and is_signless_int(dst):
        return b.op("arith.extui", [x], dst)
    if is_signless_int(src) and is_signless_int(dst):
        return b.op("arith.extsi" if src.width < dst.width else "arith.trunci", [x], dst)
    return None


def scalar_op(b: Scalar, op: Operation, args):
    """The scalar form of HLO op `op` (on 0-d tensors) applied to `args`; None if unknown."""
    kind = short_name(op)
    if any(map(is_unsigned, (*(v.type for v in op.operands), *op.result_types))):
        return unsigned_scalar_op(b, op, args)  # the unsigned arith op, on signless values
    rt = T.element_type(op.results[0].type) if op.results else None
    if rt is not None and not is_arith_element(rt):
        return None
    if kind == "constant":
        from ...dialects.common import splat_value
        v = splat_value(op.attr("value"))
        return None if v is None else b.const(v, rt)
    if kind in ("reshape", "broadcast_in_dim", "convert"):
        src = op.operand("operand").type
        if not (isinstance(src, T.RankedTensorType) and src.rank == 0 and is_arith_element(src)):
            return None
        return cast_scalar(b, args[0], rt)
    if kind == "compare":
        return compare_scalar(b, enum_word(op.attr("comparison_direction")),
                              enum_word(op.attr("compare_type")), *args)
    if kind == "select":
        return b.select(*args)
    if kind == "not":
        x = args[0]
        return b.op("arith.xori", [x, b.const(1 if x.type == T.i1 else -1, x.type)], x.type)
    if kind == "clamp":
        lo, x, hi = args
        if T.is_float(rt):
            return b.op("arith.minimumf", [b.op("arith.maximumf", [x, lo], rt, NO_FASTMATH), hi], rt, NO_FASTMATH)
        return b.op("arith.minsi", [b.op("arith.maxsi", [x, lo], rt), hi], rt)
    if T.is_float(rt):
        if kind in _FLOAT_BINARY and len(args) == 2:
            return b.op(_FLOAT_BINARY[kind], args, rt, NO_FASTMATH)
        if kind in _FLOAT_UNARY and len(args) == 1:
            return b.op(_FLOAT_UNARY[kind], args, rt, NO_FASTMATH)
        return None
    if rt == T.i1:
        return b.op(_BOOL_BINARY[kind], args, rt) if kind in _BOOL_BINARY and len(args) == 2 else None
    if kind in _INT_BINARY and len(args) == 2:
        return b.op(_INT_BINARY[kind], args, rt)
    if kind in _SHIFTS and len(args) == 2:
        return guarded_shift(_SHIFTS[kind])(b, *args, rt)
    if kind == "negate":
        return b.sub(b.const(0, rt), args[0])
    return None


_ELEMENTWISE = frozenset(set(_FLOAT_UNARY) | set(_FLOAT_BINARY) | set(_INT_BINARY) | set(_SHIFTS) |
                         {"compare", "select", "not", "constant", "convert"})


def scalarize(b: Scalar, block: Block, args, elementwise: bool = False) -> Optional[list]:
    """Copy HLO region `block` (ops on 0-d tensors) as scalar ops on `args`; its returned values,
    or None when some op has no scalar form here. With `elementwise`, the region may work on
    tensors of any one shape as long as every op is elementwise (then it is the same per element)."""
    if len(block.arguments) != len(args):
        return None
    values = dict(zip(block.arguments, args))
    for op in block.ops:
        if op.name.endswith(".return"):
            try:
                return [values[v] for v in op.operands]
            except KeyError:
                return None
        if op.regions or any(v not in values for v in op.operands) or len(op.results) != 1 or \
                not isinstance(op.results[0].type, T.RankedTensorType) or op.dialect not in ("stablehlo", "mhlo"):
            return None
        if op.results[0].type.rank != 0 and not (elementwise and short_name(op) in _ELEMENTWISE and all(
                v.type.shape == op.results[0].type.shape for v in op.operands)):
            return None
        result = scalar_op(b, op, [values[v] for v in op.operands])
        if result is None:
            return None
        values[op.results[0]] = result
    return None
