"""chlo -> linalg for `next_after`: the float after x in the direction of y, one step on the
integer view of x (as `chlo-legalize-to-stablehlo` writes it):

- NaN if either is NaN; y if x == y (so +0 / -0 give y's sign);
- from zero, the smallest denormal with y's sign;
- else x's bits -1 when the step shrinks |x| (|x| > |y| or the signs differ), +1 otherwise.
"""
from __future__ import annotations

from ...ir import types as T
from ...ir.attributes import IntegerAttr
from .build import FASTMATH_NONE, Body, elementwise_generic
from .hlo_generic import HloLoweringPattern

_FM = {"fastmath": FASTMATH_NONE}


def _cmpi(b: Body, pred: int, x, y):
    return b.op("arith.cmpi", [x, y], T.i1, {"predicate": IntegerAttr(pred, T.i64)})


def next_after(b: Body, x, y):
    ft = x.type
    it = T.IntegerType(ft.width)
    xi, yi = b.op("arith.bitcast", [x], it), b.op("arith.bitcast", [y], it)
    sign = b.const(-(1 << (ft.width - 1)), it)
    magnitude = b.const((1 << (ft.width - 1)) - 1, it)
    x_abs, y_abs = b.op("arith.andi", [xi, magnitude], it), b.op("arith.andi", [yi, magnitude], it)
    x_sign, y_sign = b.op("arith.andi", [xi, sign], it), b.op("arith.andi", [yi, sign], it)
    shrinks = b.op("arith.ori", [_cmpi(b, 4, x_abs, y_abs), _cmpi(b, 1, x_sign, y_sign)], T.i1)  # sgt, ne
    step = b.op("arith.select", [shrinks, b.const(-1, it), b.const(1, it)], it)
    out = b.op("arith.addi", [xi, step], it)
    from_zero = b.op("arith.ori", [y_sign, b.const(1, it)], it)
    out = b.op("arith.select", [_cmpi(b, 0, x_abs, b.const(0, it)), from_zero, out], it)
    equal = b.op("arith.cmpf", [x, y], T.i1, {"predicate": IntegerAttr(1, T.i64), **_FM})  # oeq
    out = b.op("arith.select", [equal, yi, out], it)
    nan = b.op("arith.cmpf", [x, y], T.i1, {"predicate": IntegerAttr(14, T.i64), **_FM})  # uno
    result = b.op("arith.bitcast", [out], ft)
    return b.op("arith.select", [nan, b.const(float("nan"), ft), result], ft)


class NextAfter(HloLoweringPattern):
    ops = ("chlo.next_after",)

    def rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if not T.is_float(t.element) or any(v.type.shape != t.shape for v in op.operands):
            return False
        generic = elementwise_generic(rw, op, list(op.operands), t, lambda b, args: next_after(b, *args))
        rw.replace_op(op, generic.results)
        return True


PATTERNS = [NextAfter()]
