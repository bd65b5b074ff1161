"""hlo -> linalg, for the elementwise ops TOSA has no exact form for.

As IREE does, an op that cannot become TOSA goes straight to `linalg.generic`
in the same pass: float `divide`, `remainder`, `atan2`, `sqrt`, `cbrt`,
`log_plus_one`, `exponential_minus_one`, `tan`, rounding, `sign`,
`is_finite`, `popcnt`, `count_leading_zeros`, float -> int `convert`
(StableHLO truncates), `clamp` with bounds that are not constants, integer
`negate` (wrapping; tosa.negate saturates), integer `power`, `chlo.mulhi`,
same-width `bitcast_convert`, and TOTALORDER / UNSIGNED compares. The scalar
body is arith/math on the element type. These patterns run after the TOSA
ones, so an op with a TOSA form always takes it. Ops on unsigned integers are
`hlo_unsigned`'s (their patterns are listed here too).
"""
from __future__ import annotations

from ...dialects.hlo_attrs import enum_word
from ...ir import types as T
from ...ir.attributes import IntegerAttr
from ...ir.core import Block
from ..rewriter import RewritePattern
from .build import FASTMATH_NONE, Body, elementwise_generic, hlo_names
from .hlo_generic import HloLoweringPattern
from .hlo_scalar import Scalar, compare_scalar
from .hlo_unsigned import PATTERNS as UNSIGNED, guarded_shift, integer_power, multiply_high

_FM = {"fastmath": FASTMATH_NONE}


def _float_unary(name: str):
    def build(b: Body, args, t):
        return b.op(name, args, t, _FM) if T.is_float(t) else None
    return build


def _int_unary(name: str):
    def build(b: Body, args, t):
        return b.op(name, args, t) if isinstance(t, T.IntegerType) and t != T.i1 else None
    return build


def _cmpf(b: Body, pred: int, x, y):
    return b.op("arith.cmpf", [x, y], T.i1, {"predicate": IntegerAttr(pred), **_FM})


def _sign(b: Body, args, t):
    """1, -1, or x itself for zeros and NaN (float); 1, -1, 0 (integer)."""
    x = args[0]
    zero, one, minus_one = b.const(0, t), b.const(1, t), b.const(-1, t)
    if T.is_float(t):
        pos, neg = _cmpf(b, 2, x, zero), _cmpf(b, 4, x, zero)  # ogt, olt
        inner = b.op("arith.select", [neg, minus_one, x], t)
    elif isinstance(t, T.IntegerType) and t != T.i1:
        pos = b.op("arith.cmpi", [x, zero], T.i1, {"predicate": IntegerAttr(4)})  # sgt
        neg = b.op("arith.cmpi", [x, zero], T.i1, {"predicate": IntegerAttr(2)})  # slt
        inner = b.op("arith.select", [neg, minus_one, zero], t)
    else:
        return None
    return b.op("arith.select", [pos, one, inner], t)


def _is_finite(b: Body, args, t):
    x = args[0]
    if not T.is_float(x.type):
        return None
    return b.op("math.isfinite", [x], T.i1, _FM)


def _float_binary(name: str):
    def build(b: Body, args, t):
        return b.op(name, args, t, _FM) if T.is_float(t) else None
    return build


def _remainder(b: Body, args, t):
    if T.is_float(t):
        return b.op("arith.remf", args, t, _FM)
    if isinstance(t, T.IntegerType) and t != T.i1:
        return b.op("arith.remsi", args, t)
    return None


def _convert(b: Body, args, t):
    """Float to integer: truncate toward zero (arith.fptosi); float to i1: x != 0."""
    x = args[0]
    if not T.is_float(x.type) or T.is_float(t):
        return None
    if t == T.i1:
        return _cmpf(b, 13, x, b.const(0.0, x.type))  # une: NaN is true, as x != 0
    return b.op("arith.fptosi", [x], t) if isinstance(t, T.IntegerType) else None


def _clamp(b: Body, args, t):
    lo, x, hi = args
    if T.is_float(t):
        low = b.op("arith.maximumf", [x, lo], t, _FM)
        return b.op("arith.minimumf", [low, hi], t, _FM)
    if isinstance(t, T.IntegerType) and t != T.i1:
        low = b.op("arith.maxsi", [x, lo], t)
        return b.op("arith.minsi", [low, hi], t)
    return None


def _integer_binary(build):
    def body(b: Body, args, t):
        return build(b, *args, t, False) if isinstance(t, T.IntegerType) and t != T.i1 else None
    return body


def _shift(name: str):
    """Shifts by any amount, as StableHLO defines them (arith's are poison from the width on)."""
    build = guarded_shift(name)

    def body(b: Body, args, t):
        return build(b, *args, t) if isinstance(t, T.IntegerType) and t != T.i1 else None
    return body


def _negate(b: Body, args, t):
    """0 - x, wrapping (tosa.negate saturates: -(-128) would be 127)."""
    if not isinstance(t, T.IntegerType):
        return None
    return b.op("arith.subi", [b.const(0, t), args[0]], t)


def _bitcast_convert(b: Body, args, t):
    """The same bits as another type of the same width (arith.bitcast)."""
    x = args[0]
    width = lambda e: e.width if isinstance(e, T.IntegerType) else T.FLOAT_WIDTHS.get(getattr(e, "name", ""))
    if width(x.type) is None or width(x.type) != width(t) or T.i1 in (x.type, t):
        return None
    return x if x.type == t else b.op("arith.bitcast", [x], t)


BODIES = {
    "divide": _float_binary("arith.divf"), "atan2": _float_binary("math.atan2"),
    "remainder": _remainder,
    "sqrt": _float_unary("math.sqrt"), "cbrt": _float_unary("math.cbrt"),
    "log_plus_one": _float_unary("math.log1p"), "exponential_minus_one": _float_unary("math.expm1"),
    "tan": _float_unary("math.tan"), "round_nearest_even": _float_unary("math.roundeven"),
    "round_nearest_afz": _float_unary("math.round"),
    "sign": _sign, "is_finite": _is_finite,
    "popcnt": _int_unary("math.ctpop"), "count_leading_zeros": _int_unary("math.ctlz"),
    "convert": _convert, "clamp": _clamp,
    "mulhi": _integer_binary(multiply_high), "power": _integer_binary(integer_power), "negate": _negate,
    "bitcast_convert": _bitcast_convert,
    "shift_left": _shift("arith.shli"), "shift_right_logical": _shift("arith.shrui"),
    "shift_right_arithmetic": _shift("arith.shrsi"),
}


def _signless_or_float(t: T.Type) -> bool:
    e = T.element_type(t)
    return T.is_float(e) or isinstance(e, T.IntegerType) and e.is_signless


class ElementwiseToLinalg(RewritePattern):
    ops = tuple(f"{prefix}.{name}" for name in BODIES for prefix in ("stablehlo", "mhlo")) + ("chlo.mulhi",)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        types = [t, *(v.type for v in op.operands)]
        if not all(isinstance(x, T.RankedTensorType) and x.has_static_shape for x in types):
            return False
        if not all(map(_signless_or_float, types)):
            return False  # signed/unsigned integers need a signless form first
        if any(v.type.rank not in (0, t.rank) for v in op.operands):
            return False
        build = BODIES[op.name.split(".", 1)[1]]
        probe_block = _probe(op)
        if build(Body(probe_block), probe_block.arguments, t.element) is None:
            return False
        generic = elementwise_generic(rw, op, list(op.operands), t,
                                      lambda b, args: build(b, args, t.element))
        rw.replace_op(op, generic.results)
        return True


def _probe(op):
    return Block([T.element_type(v.type) for v in op.operands])


class Compare(HloLoweringPattern):
    """TOTALORDER and UNSIGNED compares (TOSA has neither)."""
    ops = hlo_names("compare")  # (unsigned compares are UnsignedElementwise's)

    def rewrite(self, op, rw) -> bool:
        a, c = op.operands
        t = op.results[0].type
        direction = enum_word(op.attr("comparison_direction"))
        kind = enum_word(op.attr("compare_type"))
        if a.type.rank != t.rank or c.type.rank != t.rank:
            return False
        probe = Scalar(Block([a.type.element, c.type.element]))
        if compare_scalar(probe, direction, kind, *probe.block.arguments) is None:
            return False
        generic = elementwise_generic(rw, op, [a, c], t,
                                      lambda b, args: compare_scalar(Scalar(b.block), direction, kind, *args))
        rw.replace_op(op, generic.results)
        return True


PATTERNS = [ElementwiseToLinalg(), Compare(), *UNSIGNED]
