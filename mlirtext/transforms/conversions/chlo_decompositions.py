"""chlo -> stablehlo: the elementwise chlo functions as formulas of stablehlo ops, as
`chlo-legalize-to-stablehlo` writes them (the other hlo patterns then lower those ops):

- `tan`: stablehlo.tan;
- `sinh` / `cosh`: exp(x + log 1/2) -/+ exp(-x + log 1/2) (no overflow before the halving);
  sinh of |x| < 1 from expm1, which keeps the small values exact;
- `asinh`: sign(x) * log1p(|x| + x^2 / (1 + sqrt(x^2 + 1))), or log|x| + log 2 where x^2
  would overflow;
- `acosh`: log1p(y + sqrt(y * (x + 1))) with y = x - 1, log x + log 2 for large x, NaN below -1;
- `atanh`: (log1p(x) - log1p(-x)) / 2, NaN beyond [-1, 1];
- `atan`: atan2(x, 1); `asin`: 2 atan2(x, 1 + sqrt((1 - x)(1 + x))); `acos`: 2 atan2(sqrt((1 - x)
  (1 + x)), 1 + x), pi at -1 (the older mhlo formulas, with 1 - x^2 factored so that it keeps its
  precision near |x| = 1); NaN beyond [-1, 1] from the square root;
- `square`: x * x (integer and float element types; complex ones are not lowered here);
- `is_inf` / `is_pos_inf` / `is_neg_inf`: |x| == inf, x == +inf, x == -inf.
Float element types only unless said (f16/bf16 compute in their own type). `with_upcast` runs a
formula written for f32 on f16/bf16 operands, as the upstream patterns' materializeWithUpcast.
"""
from __future__ import annotations

import math

import numpy as np

from ...ir import types as T
from ...ir.attributes import OpaqueAttr
from ..rewriter import RewritePattern
from .build import all_static, short_name
from .hlo_decompositions import HloBuilder

#: The largest finite value of each float type the formulas handle.
FLOAT_MAX = {T.f16: 65504.0, T.bf16: 3.3895313892515355e38, T.f32: float(np.finfo(np.float32).max),
             T.f64: float(np.finfo(np.float64).max)}


class Formulas:
    """Elementwise stablehlo ops on tensors of one type `t`."""

    def __init__(self, h: HloBuilder, t):
        self.h, self.t = h, t

    def c(self, value):
        return self.h.constant(value, self.t)

    def __getattr__(self, name):
        if name in ("add", "subtract", "multiply", "divide", "atan2", "power", "remainder"):
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


def _one_minus_square(f: Formulas, x):
    return f.multiply(f.subtract(f.c(1.0), x), f.add(f.c(1.0), x))


def _asin(f: Formulas, x):
    return f.multiply(f.c(2.0), f.atan2(x, f.add(f.c(1.0), f.sqrt(_one_minus_square(f, x)))))


def _acos(f: Formulas, x):
    out = f.multiply(f.c(2.0), f.atan2(f.sqrt(_one_minus_square(f, x)), f.add(f.c(1.0), x)))
    return f.select(f.compare("EQ", x, f.c(-1.0)), f.c(math.pi), out)


def _atanh(f: Formulas, x):
    out = f.multiply(f.c(0.5), f.subtract(f.log_plus_one(x), f.log_plus_one(f.negate(x))))
    return f.select(f.compare("GT", f.abs(x), f.c(1.0)), f.c(float("nan")), out)


_FORMULAS = {"tan": lambda f, x: f.tan(x), "sinh": _sinh, "cosh": _cosh, "asinh": _asinh, "acosh": _acosh,
             "atanh": _atanh, "atan": lambda f, x: f.atan2(x, f.c(1.0)), "asin": _asin, "acos": _acos}


class ChloElementwise(RewritePattern):
    ops = tuple(f"chlo.{name}" for name in _FORMULAS)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if len(op.operands) != 1 or not all_static(t, op.operand("operand").type) or t.element not in FLOAT_MAX:
            return False
        rw.replace_op(op, [_FORMULAS[short_name(op)](Formulas(HloBuilder(rw, op), t), op.operand("operand"))])
        return True


def with_upcast(h: HloBuilder, formula, *operands):
    """`formula(Formulas, *operands)`, computed in f32 when the operands are f16 or bf16 (and
    rounded back to their type)."""
    t = operands[0].type
    if t.element not in (T.f16, T.bf16):
        return formula(Formulas(h, t), *operands)
    wide = T.RankedTensorType(t.shape, T.f32)
    return h.op("convert", [formula(Formulas(h, wide), *(h.op("convert", [v], wide) for v in operands))], t)


class Square(RewritePattern):
    ops = ("chlo.square",)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if not all_static(t) or isinstance(t.element, T.ComplexType):
            return False
        x = op.operand("operand")
        rw.replace_op(op, [HloBuilder(rw, op).binary("multiply", x, x)])
        return True


class InfinityChecks(RewritePattern):
    ops = ("chlo.is_inf", "chlo.is_pos_inf", "chlo.is_neg_inf")

    def match_and_rewrite(self, op, rw) -> bool:
        x = op.operand("operand")
        if not all_static(x.type) or x.type.element not in FLOAT_MAX:
            return False
        f = Formulas(HloBuilder(rw, op), x.type)
        name = short_name(op)
        if name == "is_inf":
            x = f.abs(x)
        rw.replace_op(op, [f.compare("EQ", x, f.c(float("-inf") if name == "is_neg_inf" else float("inf")))])
        return True


PATTERNS = [ChloElementwise(), Square(), InfinityChecks()]
