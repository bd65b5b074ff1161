"""chlo -> stablehlo: the elementwise chlo functions as formulas of stablehlo ops, as
`chlo-legalize-to-stablehlo` writes them (the other hlo patterns then lower those ops):

- `tan`: stablehlo.tan;
- `sinh` / `cosh`: exp(x + log 1/2) -/+ exp(-x + log 1/2) (no overflow before the halving);
  sinh of |x| < 1 from expm1, which keeps the small values exact;
- `asinh`: sign(x) * log1p(|x| + x^2 / (1 + sqrt(x^2 + 1))), or log|x| + log 2 where x^2
  would overflow;
- `acosh`: log1p(y + sqrt(y * (x + 1))) with y = x - 1, log x + log 2 for large x, NaN below -1;
- `atanh`: (log1p(x) - log1p(-x)) / 2, NaN beyond [-1, 1].
Float element types only (f16/bf16 compute in their own type).
"""
from __future__ import annotations

import math

import numpy as np

from ...ir import types as T
from ...ir.attributes import OpaqueAttr
from ..rewriter import RewritePattern
from .build import all_static, short_name
from .hlo_decompositions import HloBuilder

FLOAT_MAX = {T.f16: 65504.0, T.bf16: 3.3895313892515355e38, T.f32: float(np.finfo(np.float32).max),
        T.f64: float(np.finfo(np.float64).max)}


class Formulas:
    """Elementwise stablehlo ops on tensors of one type `t`."""

    def __init__(self, h: HloBuilder, t):
        self.h, self.t = h, t

    def c(self, value):
        return self.h.constant(value, self.t)

    def __getattr__(self, name):
        if name in ("add", "subtract", "multiply", "divide"):
            return lambda a, b: self.h.binary(name, a, b)
        if name in ("exponential", "exponential_minus_one", "log", "log_plus_one", "sqrt", "abs", "sign",
                    "negate", "tan", "floor", "sine", "cosine"):
            return lambda a: self.h.unary(name, a)
        raise AttributeError(name)

    def compare(self, direction: str, a, b):
        attrs = {"comparison_direction": OpaqueAttr(f"#stablehlo<comparison_direction {direction}>")}
        return self.h.op("compare", [a, b], T.RankedTensorType(self.t.shape, T.i1), attrs)

    def select(self, cond, a, b):
        return self.h.op("select", [cond, a, b], self.t)


def _sinh(f: Formulas, x):
    half_log = f.c(math.log(0.5))
    large = f.subtract(f.exponential(f.add(x, half_log)), f.exponential(f.subtract(half_log, x)))
    em1 = f.exponential_minus_one(x)
    small = f.multiply(f.c(0.5), f.add(em1, f.divide(em1, f.add(em1, f.c(1.0)))))
    return f.select(f.compare("LT", f.abs(x), f.c(1.0)), small, large)


def _cosh(f: Formulas, x):
    half_log = f.c(math.log(0.5))
    return f.add(f.exponential(f.add(x, half_log)), f.exponential(f.subtract(half_log, x)))


def _asinh(f: Formulas, x):
    ax = f.abs(x)
    square = f.multiply(ax, ax)
    small = f.log_plus_one(f.add(ax, f.divide(square, f.add(f.c(1.0), f.sqrt(f.add(square, f.c(1.0)))))))
    large = f.add(f.log(ax), f.c(math.log(2.0)))
    huge = f.compare("GE", ax, f.c(math.sqrt(FLOAT_MAX[f.t.element])))
    return f.multiply(f.sign(x), f.select(huge, large, small))


def _acosh(f: Formulas, x):
    y = f.subtract(x, f.c(1.0))
    normal = f.log_plus_one(f.add(y, f.sqrt(f.multiply(y, f.add(x, f.c(1.0))))))
    large = f.add(f.log(x), f.c(math.log(2.0)))
    out = f.select(f.compare("GE", x, f.c(math.sqrt(FLOAT_MAX[f.t.element]))), large, normal)
    return f.select(f.compare("LT", x, f.c(-1.0)), f.c(float("nan")), out)


def _atanh(f: Formulas, x):
    out = f.multiply(f.c(0.5), f.subtract(f.log_plus_one(x), f.log_plus_one(f.negate(x))))
    return f.select(f.compare("GT", f.abs(x), f.c(1.0)), f.c(float("nan")), out)


_FORMULAS = {"tan": lambda f, x: f.tan(x), "sinh": _sinh, "cosh": _cosh, "asinh": _asinh, "acosh": _acosh,
             "atanh": _atanh}


class ChloElementwise(RewritePattern):
    ops = tuple(f"chlo.{name}" for name in _FORMULAS)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if len(op.operands) != 1 or not all_static(t, op.operands[0].type) or t.element not in FLOAT_MAX:
            return False
        rw.replace_op(op, [_FORMULAS[short_name(op)](Formulas(HloBuilder(rw, op), t), op.operands[0])])
        return True


PATTERNS = [ChloElementwise()]
