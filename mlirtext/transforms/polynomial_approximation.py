"""math-polynomial-approximation: transcendental math ops on f32 as arith polynomials.

A loop that calls `expf`/`tanhf` through libm does not vectorise; the same
function written as range reduction + polynomial in plain arith ops does (the
approach of MLIR's `PolynomialApproximation.cpp` and of Cephes; the code and
the choices here are our own). Each op becomes straight-line code with
`select`s for the ranges and special values, so a loop body stays one basic
block. f16/bf16 operands are computed in f32 and rounded back; f64 is left
alone (libm is exact enough and vectorising it is not the goal).

Expanded ops and their accuracy on f32 against numpy in float64 rounded to f32
(tests/test_targets_polynomial.py holds each to its bound over 2^20 inputs: random
bit patterns, so every exponent, subnormals, infinities and NaNs, plus dense
sweeps of [-1, 1], [-12, 12], [-110, 110] and the edge cases; "measured" is the
largest error seen over 2 * 2^20 such inputs):

| op           | method                                                          | bound | measured |
|--------------|-----------------------------------------------------------------|-------|----------|
| `math.exp`   | x = n ln2 + r, |r| <= ln2/2 (ln2 in two parts), degree-6 Cephes  | 2 ulp | 1 ulp    |
|              | polynomial for e^r, 2^n applied in two exact halves (subnormal  |       |          |
|              | results round once)                                             |       |          |
| `math.exp2`  | x = n + f, e^(f ln2) by the same polynomial                     | 2 ulp | 1 ulp    |
| `math.log`   | frexp by bit operations (subnormals rescaled by 2^23), mantissa | 2 ulp | 1 ulp    |
|              | folded into [sqrt(1/2), sqrt(2)), degree-9 Cephes polynomial    |       |          |
| `math.log2`, `math.log10` | log(x) times a constant                            | 3 ulp | 2 ulp    |
| `math.log1p` | log(u) x / (u - 1), u = 1 + x rounded (Goldberg)                | 3 ulp | 2 ulp    |
| `math.tanh`  | one path: sign(x) m/(m + 2), m = e^{2|x|} - 1 formed as         | 2 ulp | 2 ulp    |
|              | 2^n (e^r - 1) + (2^n - 1) with exp's polynomial for e^r - 1     |       |          |
| `math.erf`   | odd Taylor polynomial for |x| < 0.75, else 1 - t e^{-x^2+P(t)}, | 3 ulp | 2 ulp    |
|              | t = 1/(1 + |x|/2) (Numerical Recipes' erfc fit)                 |       |          |
| `math.expm1` | degree-9 series for |x| < 0.5, else exp(x) - 1                  | 3 ulp | 2 ulp    |

Special values are exact: exp(+-inf) = inf/0, log(0) = -inf, log(x<0) = NaN,
tanh/erf(+-inf) = +-1, -0 stays -0, NaN stays NaN. `ULP_BOUNDS` is the table's
bound column.

Sigmoid, which the lowerings write as 1/(1 + exp(-x)): an `arith.addf` of 1 and a
`math.exp` whose only use it is becomes `one_plus_exp`, 1 + e^y rounded once, without
exp's handling of subnormal results (1 + e^y is 1 there): 22 operations instead of
exp's 29 and the add. The sigmoid is held to 2 ulp (`ULP_BOUNDS["sigmoid"]`, measured
2) wherever its result is a normal float; below -87.3 it is, as before, 1/(1 + e^{-x})
in f32 (a subnormal, then 0 from -88.73, where e^{-x} overflows).

With `gpu=true` (the GPU targets' loops pipeline, targets/gpu/threads.py) the pass also expands
what a GPU has no library or instruction for (`expand_for_gpu`): sin, cos, tan, atan, atan2
(trig_approximation.py); powf and cbrt (f64_approximation.py), sinh, cosh, asinh, acosh, atanh,
asin, acos (hyperbolic_approximation.py) and erfc (erf_approximation.py), all ten computed in
f64 for every float type and rounded once (`IN_F64_FOR_ALL`); the f64 forms of exp, exp2,
expm1, log, log2, log10, log1p, tanh (f64_approximation.py) and erf (erf_approximation.py); and
ctpop, ctlz, isfinite as integer and compare ops (bit_expansion.py). What is left is what every
GPU has an instruction for (sqrt, rsqrt, floor, ceil, round, roundeven, trunc, abs, copysign,
fma). Without `gpu` the CPU keeps its libm calls for those.

Polynomials (Horner steps) and the range reductions are written with `math.fma`, which
lowers to `llvm.intr.fma` (one instruction on FMA hardware, one rounding everywhere), so
the bounds above hold for the fused form; the interpreter's `math.fma` rounds once too.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..dialects.common import splat_value
from ..ir import types as T
from ..ir.attributes import FloatAttr, IntegerAttr
from ..ir.core import Operation, Value
from ..ir.dense import DenseElementsAttr
from .constants import constant_value
from .passes import Pass

#: The largest error, in units in the last place of the f32 result, that each expansion is held to.
ULP_BOUNDS = {"math.exp": 2, "math.exp2": 2, "math.log": 2, "math.log2": 3, "math.log10": 3, "math.log1p": 3,
              "math.tanh": 2, "math.erf": 3, "math.expm1": 3, "sigmoid": 2}

# arith predicate numbers
_OEQ, _OGT, _OGE, _OLT, _OLE, _ONE, _UNO = 1, 2, 3, 4, 5, 6, 14
_SLT = 2


class _Builder:
    """Emits arith/math ops before `anchor`, on f32 (or, with width 64, f64) scalars or vectors
    shaped like `t`; `i` is the integer type of the same width (for the bit operations)."""

    def __init__(self, anchor: Operation, t: T.Type, width: int = 32):
        self.anchor = anchor
        self.shape = t.shape if isinstance(t, T.VectorType) else None
        self.width = width
        self.f = self._like(T.f64 if width == 64 else T.f32)
        self.i = self._like(T.IntegerType(width))
        self.b = self._like(T.i1)

    def _like(self, element):
        return T.VectorType(self.shape, element) if self.shape is not None else element

    def op(self, name, operands, result_type, attrs=None) -> Value:
        new = Operation(name, list(operands), [result_type], attrs or {}, span=self.anchor.span,
                        location=self.anchor.location)
        new.name_span = self.anchor.name_span
        self.anchor.parent.insert_before(self.anchor, new)
        return new.results[0]

    def like(self, element: T.Type) -> T.Type:
        """`element`, or a vector of it shaped as this builder's values."""
        return self._like(element)

    # constants
    def c(self, value: float) -> Value:
        v = float(value) if self.width == 64 else _f32(float(value))
        return self.constant(v, self.f)

    def ci(self, value: int) -> Value:
        return self.constant(int(value), self.i)

    def constant(self, value, t: T.Type) -> Value:
        """A constant of type `t` (a scalar type, or a vector of one: the value is splat)."""
        if isinstance(t, T.VectorType):
            return self.op("arith.constant", [], t, {"value": DenseElementsAttr(t, (value,), True)})
        attr = FloatAttr(value, t) if isinstance(t, T.FloatType) else IntegerAttr(value, t)
        return self.op("arith.constant", [], t, {"value": attr})

    # float arithmetic
    def add(self, a, b): return self.op("arith.addf", [a, b], self.f)
    def sub(self, a, b): return self.op("arith.subf", [a, b], self.f)
    def mul(self, a, b): return self.op("arith.mulf", [a, b], self.f)
    def div(self, a, b): return self.op("arith.divf", [a, b], self.f)
    def fma(self, a, b, c): return self.op("math.fma", [a, b, c], self.f)   # a*b + c, rounded once
    def abs(self, a): return self.op("math.absf", [a], self.f)
    def copysign(self, a, b): return self.op("math.copysign", [a, b], self.f)
    def fcmp(self, pred, a, b): return self.op("arith.cmpf", [a, b], self.b, {"predicate": IntegerAttr(pred)})
    def select(self, c, a, b): return self.op("arith.select", [c, a, b], self.f)
    def selecti(self, c, a, b): return self.op("arith.select", [c, a, b], self.i)

    def horner(self, x, coefficients) -> Value:
        """c0 x^n + c1 x^(n-1) + ... + cn, highest degree first (one fma a step: half the
        instructions of mul + add and one rounding instead of two)."""
        acc = self.c(coefficients[0])
        for k in coefficients[1:]:
            acc = self.fma(acc, x, self.c(k))
        return acc

    # integers and bits
    def addi(self, a, b): return self.op("arith.addi", [a, b], self.i)
    def subi(self, a, b): return self.op("arith.subi", [a, b], self.i)
    def andi(self, a, b): return self.op("arith.andi", [a, b], self.i)
    def ori(self, a, b): return self.op("arith.ori", [a, b], self.i)
    def shli(self, a, b): return self.op("arith.shli", [a, b], self.i)
    def shrsi(self, a, b): return self.op("arith.shrsi", [a, b], self.i)
    def shrui(self, a, b): return self.op("arith.shrui", [a, b], self.i)
    def bits(self, a): return self.op("arith.bitcast", [a], self.i)
    def from_bits(self, a): return self.op("arith.bitcast", [a], self.f)
    def to_float(self, a): return self.op("arith.sitofp", [a], self.f)

    def clamp_below(self, x, low):
        """max(x, low) with NaN kept (a plain compare and select: cheap once vectorised)."""
        return self.select(self.fcmp(_OLT, x, self.c(low)), self.c(low), x)

    def clamp_above(self, x, high):
        return self.select(self.fcmp(_OGT, x, self.c(high)), self.c(high), x)

    def cmpi(self, pred, a, b): return self.op("arith.cmpi", [a, b], self.b, {"predicate": IntegerAttr(pred)})
    def floor(self, a): return self.op("math.floor", [a], self.f)

    def pow2(self, n_int) -> Value:
        """2^n as a float for integer n in the normal exponent range ([-126, 127] for f32,
        [-1022, 1023] for f64), from the exponent bits."""
        bias, mantissa = (1023, 52) if self.width == 64 else (127, 23)
        return self.from_bits(self.shli(self.addi(n_int, self.ci(bias)), self.ci(mantissa)))


def _f32(v: float) -> float:
    import numpy as np
    with np.errstate(over="ignore"):
        return float(np.float32(v))


# ---- the expansions -------------------------------------------------------------------------------
LN2_HI, LN2_LO = 0.693359375, -2.12194440e-4       # ln 2 = LN2_HI + LN2_LO, LN2_HI exact in 9 bits
LOG2E = 1.44269504088896341
ROUND_MAGIC, ROUND_MAGIC_BITS = 12582912.0, 0x4B400000   # 1.5 * 2^23 and its bit pattern
_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1,
             5.0000001201e-1)


def _reduce(b: _Builder, y: Value) -> tuple[Value, Value]:
    """(r, k) with y = n ln2 + r, n = round(y log2(e)), |r| <= ln2/2 (give or take the rounding of
    y log2(e)), for |y| < 2^21. n comes from the magic-number trick: y log2(e) + 1.5 * 2^23 lies
    where the f32 ulp is 1, so the fma that forms it (k) rounds to an integer, and n sits in k's
    low mantissa bits (`_pow2_at` reads it there). No roundeven and no float -> int conversion,
    which is poison on NaN: a NaN y only makes r, and so the result, NaN."""
    k = b.fma(y, b.c(LOG2E), b.c(ROUND_MAGIC))
    n = b.sub(k, b.c(ROUND_MAGIC))                             # exact
    # (n * LN2_HI is exact: the callers' n fit in 8 bits, LN2_HI in 9)
    return b.fma(n, b.c(-LN2_LO), b.fma(n, b.c(-LN2_HI), y)), k


def _pow2_at(b: _Builder, k: Value, m: int) -> Value:
    """2^(n + m) for the n of `_reduce`'s k, n + m in [-126, 127]: bits(k) - bits(1.5 * 2^23) is n."""
    return b.from_bits(b.shli(b.addi(b.bits(k), b.ci(127 + m - ROUND_MAGIC_BITS)), b.ci(23)))


def _expm1_reduced(b: _Builder, r: Value) -> Value:
    """e^r - 1 for |r| <= ln2/2: r + r^2 P(r), no cancellation for small r."""
    return b.fma(b.mul(b.horner(r, _EXP_POLY), r), r, r)


def exp(b: _Builder, x: Value) -> Value:
    # e^x is 0 below -104: those lanes compute e^0 and select 0, since scaling down to 0 would pass
    # through subnormals, and a CPU without flush-to-zero takes a microcode assist for each (a
    # softmax over masked scores, -inf or -3.4e38, ran 13x slower). Inf above 89; NaN passes.
    zero = b.fcmp(_OLT, x, b.c(-104.0))
    x = b.clamp_above(b.select(zero, b.c(0.0), x), 89.0)
    r, k = _reduce(b, x)
    return b.select(zero, b.c(0.0), scale_exp(b, _exp_reduced(b, r), k))


def _exp_reduced(b: _Builder, r: Value) -> Value:
    """e^r for |r| <= ln2/2: 1 + r + r^2 P(r)."""
    return b.add(_expm1_reduced(b, r), b.c(1.0))


def scale_exp(b: _Builder, y: Value, k: Value) -> Value:
    """y * 2^n for the n that k holds (k = n + 1.5 * 2^23, `_reduce`), n in [-150, 128] (both
    callers clamp their input so that it is), in two exact halves: y * 2^n1 is exact, one
    rounding at the second step, so subnormal results are right."""
    n = b.subi(b.bits(k), b.ci(ROUND_MAGIC_BITS))
    n1 = b.shrsi(n, b.ci(1))
    return b.mul(b.mul(y, b.pow2(n1)), b.pow2(b.subi(n, n1)))


def exp2(b: _Builder, x: Value) -> Value:
    x = b.clamp_above(b.clamp_below(x, -150.0), 128.0)       # 2^x rounds to 0 below, is inf above
    k = b.add(x, b.c(ROUND_MAGIC))                             # x rounded to an integer n, as in _reduce
    f = b.sub(x, b.sub(k, b.c(ROUND_MAGIC)))                   # exact, |f| <= 1/2
    r = b.mul(f, b.c(math.log(2)))
    # e^r with |r| <= ln2/2: same polynomial as exp
    return scale_exp(b, _exp_reduced(b, r), k)


SQRT_HALF = 0.707106781186547524
_LOG_POLY = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1,
             -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
FLT_MIN = 1.17549435e-38


def log(b: _Builder, x: Value) -> Value:
    tiny = b.fcmp(_OLT, x, b.c(FLT_MIN))
    xs = b.select(tiny, b.mul(x, b.c(8388608.0)), x)          # subnormals: scale by 2^23 first
    bits = b.bits(xs)
    e = b.to_float(b.subi(b.shrui(bits, b.ci(23)), b.ci(126)))
    e = b.select(tiny, b.sub(e, b.c(23.0)), e)
    m = b.from_bits(b.ori(b.andi(bits, b.ci(0x007FFFFF)), b.ci(0x3F000000)))   # [0.5, 1)
    low = b.fcmp(_OLT, m, b.c(SQRT_HALF))
    e = b.select(low, b.sub(e, b.c(1.0)), e)
    m = b.select(low, b.sub(b.add(m, m), b.c(1.0)), b.sub(m, b.c(1.0)))   # m - 1 in [sqrt(.5)-1, sqrt(2)-1)
    z = b.mul(m, m)
    y = b.mul(b.mul(m, z), b.horner(m, _LOG_POLY))
    y = b.fma(e, b.c(LN2_LO), y)
    y = b.fma(z, b.c(-0.5), y)
    r = b.fma(e, b.c(LN2_HI), b.add(m, y))
    inf = b.c(math.inf)
    r = b.select(b.fcmp(_OEQ, x, inf), inf, r)
    r = b.select(b.fcmp(_OEQ, x, b.c(0.0)), b.c(-math.inf), r)   # +-0
    r = b.select(b.fcmp(_OLT, x, b.c(0.0)), b.c(math.nan), r)
    return b.select(b.fcmp(_UNO, x, x), x, r)


def log2(b: _Builder, x: Value) -> Value:
    return b.mul(log(b, x), b.c(1.0 / math.log(2)))


def log10(b: _Builder, x: Value) -> Value:
    return b.mul(log(b, x), b.c(1.0 / math.log(10)))


def log1p(b: _Builder, x: Value) -> Value:
    """log(u) * x / (u - 1) with u = 1 + x rounded: exact to first order in u's rounding
    (Goldberg's formula); u == 1 gives x itself."""
    one = b.c(1.0)
    u = b.add(x, one)
    um1 = b.sub(u, one)
    lu = log(b, u)
    corrected = b.mul(lu, b.div(x, um1))
    r = b.select(b.fcmp(_OEQ, um1, b.c(0.0)), x, corrected)
    r = b.select(b.fcmp(_OEQ, u, b.c(math.inf)), lu, r)         # x = inf, or huge: log(u) is right
    return r


def tanh(b: _Builder, x: Value) -> Value:
    """One path for every x: tanh|x| = m / (m + 2) with m = e^{2|x|} - 1, the sign from x.
    With 2|x| = n ln2 + r, m = 2^n (e^r - 1) + (2^n - 1), rounded once (an fma; 2^n - 1 is exact
    for n <= 24, and beyond, where it is not, tanh is 1 anyway). Small x: n = 0 and m is the
    polynomial itself, so m / (m + 2) is |x| to within the ulps of m; large x: the ratio is
    1 - 2/(m + 2), whose error is m's scaled down. 2|x| is clamped to 20 (inf included): tanh
    rounds to 1 from |x| = 9.01."""
    ax = b.abs(x)
    r, k = _reduce(b, b.clamp_above(b.add(ax, ax), 20.0))   # n in [0, 29]; NaN passes
    p = _pow2_at(b, k, 0)
    m = b.fma(p, _expm1_reduced(b, r), b.sub(p, b.c(1.0)))
    # copysign: tanh(-0) = -0 (m is +0 there) and the sign of negative x
    return b.copysign(b.div(m, b.add(m, b.c(2.0))), x)


def one_plus_exp(b: _Builder, y: Value) -> Value:
    """1 + e^y, as a sigmoid's 1/(1 + e^{-x}) needs it, rounded once (an fma). Where e^y would be
    subnormal, 1 + e^y is 1, so exp's clamps and two-step scaling are not needed: y is clamped to
    [-20, 89] (1 + e^y rounds to 1 below -17.4 and is inf above 88.73; NaN passes), n to
    [-29, 128], and e^y / 2 = e^r 2^(n-1) is exact."""
    y = b.clamp_above(b.clamp_below(y, -20.0), 89.0)
    r, k = _reduce(b, y)
    half = b.mul(b.add(_expm1_reduced(b, r), b.c(1.0)), _pow2_at(b, k, -1))
    return b.fma(half, b.c(2.0), b.c(1.0))


# erf(x) = 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1)): coefficients of x^(2k+1), highest first
_ERF_TAYLOR = tuple(2 / math.sqrt(math.pi) * (-1) ** k / (math.factorial(k) * (2 * k + 1)) for k in range(12))[::-1]
# Numerical Recipes' erfc(z) = t exp(-z^2 + P(t)), t = 1/(1 + z/2): relative error < 1.2e-7
_ERFC_POLY = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418,
              0.37409196, 1.00002368, -1.26551223)


def erf(b: _Builder, x: Value) -> Value:
    ax = b.abs(x)
    z = b.mul(x, x)
    small = b.mul(b.horner(z, _ERF_TAYLOR), x)
    axc = b.clamp_above(ax, 10.0)                              # erf is 1 in f32 well before 10
    t = b.div(b.c(1.0), b.add(b.c(1.0), b.mul(axc, b.c(0.5))))
    arg = b.sub(b.horner(t, _ERFC_POLY), b.mul(axc, axc))
    erfc = b.mul(t, exp(b, arg))
    large = b.copysign(b.sub(b.c(1.0), erfc), x)
    return b.select(b.fcmp(_OLT, ax, b.c(0.75)), small, large)


# expm1(x) = sum x^k / k!, k >= 1: coefficients of x^k (k = 9..1), highest first
_EXPM1_TAYLOR = tuple(1 / math.factorial(k) for k in range(1, 10))[::-1]


def expm1(b: _Builder, x: Value) -> Value:
    small = b.mul(b.horner(x, _EXPM1_TAYLOR), x)
    large = b.sub(exp(b, x), b.c(1.0))
    return b.select(b.fcmp(_OLT, b.abs(x), b.c(0.5)), small, large)


EXPANSIONS = {"math.exp": exp, "math.exp2": exp2, "math.log": log, "math.log2": log2, "math.log10": log10,
              "math.log1p": log1p, "math.tanh": tanh, "math.erf": erf, "math.expm1": expm1}


def _approximable(t: T.Type, names=("f32", "f16", "bf16")):
    """The float element type when `t` is a scalar or 1-D vector of one of `names`, else None."""
    e = _element(t)
    return e if isinstance(e, T.FloatType) and e.name in names else None


def _element(t: T.Type):
    """The element type of a scalar or fixed 1-D vector type; None for other vectors."""
    if isinstance(t, T.VectorType):
        return t.element if len(t.shape) == 1 and not any(t.scalable or ()) else None
    return t


def expand(op: Operation) -> bool:
    """Replace one math op by its polynomial form; False when it is not one we expand."""
    fn = EXPANSIONS.get(op.name)
    if fn is None or len(op.operands) != 1 or len(op.results) != 1:
        return False
    return _replace(op, fn, [op.operand("operand")])


def expand_for_gpu(op: Operation) -> bool:
    """What a target without a math library also needs (after `expand`): sin, cos, tan, atan,
    atan2 and `IN_F64_FOR_ALL` on f32/f16/bf16, these and exp, exp2, expm1, log, log2, log10,
    log1p, tanh, erf on f64, and ctpop, ctlz and isfinite as integer and compare ops. False when
    `op` is none of these."""
    from . import bit_expansion, erf_approximation, f64_approximation, hyperbolic_approximation, trig_approximation
    if len(op.results) != 1:
        return False
    t = op.results[0].type
    element = _element(t)
    if op.name in ("math.ctpop", "math.ctlz"):
        if not isinstance(element, T.IntegerType) or element.width not in (8, 16, 32, 64):
            return False
        return _replace(op, getattr(bit_expansion, op.name[5:]), [op.operand("operand")], element.width)
    if op.name == "math.isfinite":
        operand = op.operand("operand")
        if not isinstance(_element(operand.type), T.FloatType):
            return False
        b = _Builder(op, operand.type)
        return _use_instead(op, bit_expansion.isfinite(b, operand, operand.type))
    if _approximable(t, ("f64", "f32", "f16", "bf16")) is None:
        return False
    trig = {"math.sin": trig_approximation.sin, "math.cos": trig_approximation.cos,
            "math.tan": trig_approximation.tan, "math.atan": trig_approximation.atan,
            "math.atan2": trig_approximation.atan2}
    if op.name in trig:
        return _replace(op, trig[op.name], list(op.operands), 64 if element.name == "f64" else 32)
    in_f64 = {**f64_approximation.EXPANSIONS, **hyperbolic_approximation.EXPANSIONS,
              **erf_approximation.EXPANSIONS}
    if op.name in in_f64 and (element.name == "f64" or op.name in IN_F64_FOR_ALL):
        return _replace(op, in_f64[op.name], list(op.operands), 64)
    return False                                  # (f32's exp, log, ...: EXPANSIONS, done by `expand`)


#: ops that f32, f16 and bf16 operands also get the f64 expansion of (rounded once): those with no
#: f32 one (GPU targets: NVPTX and AMDGPU have no libcalls; GLSL.std.450's Asin, Sinh, ... are kept
#: out of the Vulkan shaders too, so every target computes the same numbers).
IN_F64_FOR_ALL = ("math.cbrt", "math.powf", "math.sinh", "math.cosh", "math.asinh", "math.acosh", "math.atanh",
                  "math.asin", "math.acos", "math.erfc")


def _replace(op: Operation, fn, operands, width: int = 32) -> bool:
    """Replace `op`'s one result by fn(*operands), computed in f32 (or f64 with `width` 64):
    other float types are extended (or truncated) to it and the result rounded back once."""
    t = op.results[0].type
    element = _element(t)
    if element is None or (isinstance(element, T.FloatType) and width == 32 and _approximable(t) is None):
        return False                                            # (f64 is not computed in f32)
    b = _Builder(op, t, width)
    if isinstance(element, T.IntegerType):
        return _use_instead(op, fn(b, *operands))
    args = [x if _element(x.type) == _element(b.f) else b.op("arith.extf", [x], b.f) for x in operands]
    y = fn(b, *args)
    if element != _element(b.f):
        y = b.op("arith.truncf", [y], t)
    return _use_instead(op, y)


def _use_instead(op: Operation, y: Value) -> bool:
    """`y` replaces `op`'s one result (and keeps its name); `op` is erased."""
    result = op.results[0]
    if y.name is None:
        y.name = result.name
    result.replace_all_uses_with(y)
    op.erase()
    return True


def _one_plus(exp_op: Operation):
    """The `arith.addf` of 1 and the result of `exp_op` (a math.exp), when that add is the result's
    only use (a sigmoid's denominator, as the lowerings write 1/(1 + exp(-x))); else None."""
    uses = list(exp_op.results[0].uses)
    if len(uses) != 1 or uses[0].op.name != "arith.addf" or len(exp_op.operands) != 1:
        return None
    add = uses[0].op
    other = add.operands[1 - uses[0].index]
    return add if splat_value(constant_value(other)) == 1.0 else None


#: powf by a constant small integer exponent: the products of the base that give it (GPT-2's GELU
#: cubes x): a few multiplies that vectorise instead of a call to pow per element. x*x is pow's
#: result exactly; x*x*x and (x*x)*(x*x) round twice (within 1.5 ulp, inside the lowering's 8).
_POW_PRODUCTS = {2.0: ((0, 0),), 3.0: ((0, 0), (1, 0)), 4.0: ((0, 0), (1, 1))}


def _pow_by_products(op: Operation) -> bool:
    """Replace `math.powf %x, c` (c a splat constant in _POW_PRODUCTS) by multiplications of x."""
    steps = _POW_PRODUCTS.get(splat_value(constant_value(op.operand("rhs"))))
    if steps is None or len(op.results) != 1:
        return False
    t = op.results[0].type
    powers = [op.operand("lhs")]   # x, then each product: powers[i] * powers[j]
    for i, j in steps:
        mul = Operation("arith.mulf", [powers[i], powers[j]], (t,), {}, span=op.span, location=op.location)
        op.parent.insert_before(op, mul)
        powers.append(mul.results[0])
    return _use_instead(op, powers[-1])


@dataclass(frozen=True)
class PolynomialApproximation(Pass):
    """With `gpu` (for targets without a math library): also `expand_for_gpu`'s ops."""
    name = "math-polynomial-approximation"
    summary = ("Expand math.exp/exp2/expm1/log/log2/log10/log1p/tanh/erf on f32 (and f16/bf16) into arith "
               "polynomials, so loops that use them vectorise; gpu=true: also sin/cos/tan/atan/atan2/powf/"
               "cbrt, f64 math and ctpop/ctlz/isfinite, for targets without a math library")
    gpu: bool = False

    def run(self, op: Operation) -> None:
        for inner in list(op.walk()):
            if inner.parent is None:
                continue
            if inner.name == "math.powf" and _pow_by_products(inner):
                continue
            if inner.name in EXPANSIONS:
                add = _one_plus(inner) if inner.name == "math.exp" else None
                if add is not None and _replace(add, one_plus_exp, [inner.operand("operand")]):
                    inner.erase()
                    continue
                if expand(inner):
                    continue
            if self.gpu:
                expand_for_gpu(inner)
