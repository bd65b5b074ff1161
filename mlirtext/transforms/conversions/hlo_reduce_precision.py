"""hlo -> linalg for `reduce_precision`: rounding to fewer exponent/mantissa bits on the float's
integer view, as the StableHLO spec (XLA's `ReducePrecision` expander) defines it.

Per element, on the bits `x` of the float (`arith.bitcast` to a signless integer of its width):
- mantissa: round to nearest even at the new last mantissa bit,
  `x = (x + ((x >> shift) & 1) + (half - 1)) & ~(2 * half - 1)`;
- exponent: an exponent above the new range gives a signed infinity, one at or below its
  bottom a signed zero (no denormals in the reduced format);
- NaN stays the input (with no mantissa bits left it would read as infinity: it becomes +inf).
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.attributes import IntegerAttr
from .build import FASTMATH_NONE, Body, elementwise_generic, hlo_names
from .hlo_generic import HloLoweringPattern

#: float type -> (exponent bits, mantissa bits) of its own format
_FORMATS = {T.f16: (5, 10), T.bf16: (8, 7), T.f32: (8, 23), T.f64: (11, 52)}


def _int_attr(op, name: str):
    attr = op.attributes.get(name)
    return attr.value if isinstance(attr, IntegerAttr) else None


def _cmpi(b: Body, pred: int, x, y):
    return b.op("arith.cmpi", [x, y], T.i1, {"predicate": IntegerAttr(pred, T.i64)})


def round_bits(b: Body, x, exponent_bits: int, mantissa_bits: int, src_exp: int, src_mant: int):
    """The bits of float bits `x` rounded to (exponent_bits, mantissa_bits)."""
    it = x.type
    width = it.width
    c = lambda v: b.const(_wrap(v, width), it)  # noqa: E731
    if mantissa_bits < src_mant:
        shift = src_mant - mantissa_bits
        last = 1 << shift
        last_bit = b.op("arith.andi", [b.op("arith.shrui", [x, c(shift)], it), c(1)], it)
        bias = b.op("arith.addi", [last_bit, c((last >> 1) - 1)], it)
        x = b.op("arith.andi", [b.op("arith.addi", [x, bias], it), c(~(last - 1))], it)
    if exponent_bits < src_exp:
        exp_mask = ((1 << src_exp) - 1) << src_mant
        bias = (1 << (src_exp - 1)) - 1
        reduced = (1 << (exponent_bits - 1)) - 1
        exponent = b.op("arith.andi", [x, c(exp_mask)], it)
        signed_zero = b.op("arith.andi", [x, c(1 << (width - 1))], it)
        signed_inf = b.op("arith.ori", [signed_zero, c(exp_mask)], it)
        overflows = _cmpi(b, 8, exponent, c((bias + reduced) << src_mant))   # ugt
        underflows = _cmpi(b, 7, exponent, c((bias - reduced) << src_mant))  # ule
        x = b.op("arith.select", [underflows, signed_zero, x], it)
        x = b.op("arith.select", [overflows, signed_inf, x], it)
    return x


def _wrap(v: int, width: int) -> int:
    """`v` as the signed value of its low `width` bits (how a signless constant prints)."""
    v &= (1 << width) - 1
    return v - (1 << width) if v >> (width - 1) else v


class ReducePrecision(HloLoweringPattern):
    ops = hlo_names("reduce_precision")

    def rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        exponent_bits, mantissa_bits = _int_attr(op, "exponent_bits"), _int_attr(op, "mantissa_bits")
        if t.element not in _FORMATS or exponent_bits is None or mantissa_bits is None or exponent_bits < 1:
            return False
        src_exp, src_mant = _FORMATS[t.element]
        it = T.IntegerType(t.element.width)

        def body(b: Body, args):
            (value,) = args
            bits = round_bits(b, b.op("arith.bitcast", [value], it), exponent_bits, mantissa_bits, src_exp, src_mant)
            out = b.op("arith.bitcast", [bits], t.element)
            nan = b.op("arith.cmpf", [value, value], T.i1, {"predicate": IntegerAttr(14, T.i64),  # uno
                                                            "fastmath": FASTMATH_NONE})
            keep = value if mantissa_bits > 0 else b.const(float("inf"), t.element)
            return b.op("arith.select", [nan, keep, out], t.element)

        generic = elementwise_generic(rw, op, list(op.operands), t, body)
        rw.replace_op(op, generic.results)
        return True


PATTERNS = [ReducePrecision()]
